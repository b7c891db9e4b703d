//! Every mode of lab-memory against the CPU, outputs poisoned first, at awkward sizes.
//! Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use common::verify::Random;
use lab_memory::device_query::measure_copy;
use lab_memory::indexing::{self, Helper};
use lab_memory::symbols::{round_trip, Symbols, SYMBOL_LENGTH};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_helper_numbers_the_threads_0_to_n_minus_1_each_once() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (grid, block) in [((1, 1, 1), (1, 1, 1)), ((3, 2, 2), (4, 3, 2)), ((70, 3, 2), (7, 5, 3)), ((1000, 1, 1), (1024, 1, 1)), ((2, 65, 3), (32, 32, 1))] {
        for helper in Helper::all() {
            let mapping = indexing::run(&module, helper, grid, block).unwrap();
            assert_eq!(mapping.wrong(), (0, 0), "{} on grid {grid:?}, block {block:?}", helper.name());
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn symbols_go_to_the_gpu_change_there_and_come_back() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    let mut random = Random::new(5);
    for factor in [2.0f32, -0.75, 1e-3] {
        let input = Symbols { data: random.uniform(-10.0, 10.0) as f32, array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect() };
        let output = round_trip(&module, &input, factor).unwrap();
        assert_eq!(output.differences(&input.scaled(factor)), 0, "factor {factor}: {output:?}");
        // A second round trip starts from what the host writes, not from what the kernel left.
        let again = round_trip(&module, &input, factor).unwrap();
        assert_eq!(again, output);
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_bandwidth_copy_copies_every_word() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    for bytes in [4, 4 * 1001, 1 << 24] {
        let (timing, wrong) = measure_copy(bytes, 2, bytes as u64).unwrap();
        assert_eq!(wrong, 0, "{bytes} bytes");
        assert_eq!(timing.samples_ms.len(), 2);
    }
}
