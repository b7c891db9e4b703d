//! The streams lectures' COUNT products under `--profile` and `--trace` (issue 23), on a GPU: the
//! profiler's records tied to the products' timed windows; and the staged copies of large matrices
//! (issue 41). Needs a GPU: `bash gpu-bundle/run.sh`.

use common::gpu::Gpu;
use common::timing::Runs;
use common::verify::Random;
use matrix::staging::{Staging, PIECE_BYTES};
use matrix::{Element, Matrix};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

/// `--profile` and `--trace` on the German slides' streamed program (issue 23): CUPTI's records tie
/// every copy and kernel of each timed run to its window, and the trace holds them all.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn cupti_records_every_copy_and_kernel_of_each_timed_run_and_the_trace_reads_back() {
    use cust::stream::{Stream, StreamFlags};
    use matrix::batch::Batch;
    use matrix::mmm::{load_mmm, MmmKernel};
    use matrix::Pinned;
    use profiler::timeline::Kernel;
    use profiler::{trace, ProfileArgs};

    let folder = common::private_dir::PrivateDir::new("profile-test").unwrap();
    let path = folder.path().join("trace.json");
    let (count, n, runs) = (3, 100, 2);
    let args = ProfileArgs {
        profile: true,
        trace: Some(path.clone()),
        counters: false,
    };
    let mut passed = false;
    args.around(|| {
        let gpu = Gpu::open(0).expect(NEEDS_GPU);
        let module = load_mmm(&gpu, 16)?;
        let mmm = Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>())?;
        let main = Stream::new(StreamFlags::DEFAULT, None)?;
        let streams = common::context::new_streams(count)?;
        let mut batch = Batch::<Pinned<f64>>::random(count, n, 16, 5)?;
        let _named = common::timing::observer::program("mmm-streamed-and-pinned");
        let measured = batch.time_streamed(&mmm, &main, &streams, Runs::warm(runs), &mut Random::new(6))?;
        passed = measured.check.passed();
        // The chronogram of the same program: every bar from CUPTI's records.
        let spans = batch.record_streamed(&mmm, &main, &streams)?;
        assert_eq!(spans.len(), 3 * count);
        assert!(
            profiler::timeline::disagreement_us(&spans).is_some(),
            "bars not all from CUPTI: {spans:?}"
        );
        Ok(())
    })
    .unwrap();
    assert!(passed, "the profiled products are right");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let windows: Vec<&serde_json::Value> = written["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "window")
        .collect();
    assert_eq!(windows.len(), 1, "{windows:?}");
    let window = windows[0];
    assert_eq!(window["name"], "mmm-streamed-and-pinned");
    // Per product: A and B in, the kernel, C out.
    assert_eq!(
        (window["args"]["runs"].as_u64(), window["args"]["work_per_run"].as_f64()),
        (Some(runs as u64), Some(4.0 * count as f64)),
        "{window}"
    );
    assert!(
        window["args"]["cupti_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{window}"
    );
    let activities = trace::read(&written).unwrap();
    // The upload, the warm-up, the timed runs and the chronogram's run each copy every A and B in
    // (the chronogram's own buffers go in too, at other sizes).
    let matrix = (n * n * 8) as u64;
    let copies_in = activities.iter().filter(|a| matches!(a.what, profiler::records::What::Copy { direction: profiler::records::Direction::HtoD, bytes, .. } if bytes == matrix)).count();
    assert_eq!(copies_in, 2 * count * (1 + 1 + runs + 1), "copies in of {matrix} bytes");
    let kernels = activities.iter().filter(|a| a.name.starts_with("mmm")).count();
    assert!(kernels >= count * (1 + runs + 1), "{kernels} kernels");
}

/// Staged copies (lab-mmm's run) give what the driver's copies give, for lengths of one piece or less,
/// of exactly two full pieces and of four pieces with a short last one, in f32 and f64, each through
/// pieces made for its size and through one staging that carries both precisions (as the lab's run
/// does): the device copy is poisoned first and read back with the driver's own copy, then the host
/// copy is poisoned and the staged copy back must restore it.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn staged_copies_carry_every_element_both_ways() {
    let _gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut shared = Staging::for_copies_of([u64::MAX]).unwrap();
    staged_round_trips::<f64>(&mut shared);
    staged_round_trips::<f32>(&mut shared);
}

fn staged_round_trips<T: Element>(shared: &mut Staging) {
    let piece = PIECE_BYTES / std::mem::size_of::<T>();
    let mut random = Random::new(17);
    for (rows, cols) in [(1, 1), (33, 17), (2, piece), (3, piece + 7), (1001, 20011)] {
        let mut m: Matrix<T> = Matrix::<f64>::random(rows, cols, &mut random)
            .unwrap()
            .convert()
            .unwrap();
        let original = m.data().to_vec();
        let mut own = Staging::for_copies_of([m.bytes()]).unwrap();
        for (staging, which) in [(&mut own, "its own pieces"), (&mut *shared, "the shared pieces")] {
            m.poison_on_gpu().unwrap();
            m.copy_to_gpu_staged(staging).unwrap();
            let what = format!("{rows} x {cols} {} through {which}", T::NAME);
            assert_eq!(m.read_gpu_copy().unwrap(), original, "{what}, to the GPU");
            m.data_mut().fill(T::POISON);
            m.copy_from_gpu_staged(staging).unwrap();
            assert!(m.data() == original.as_slice(), "{what}, back");
        }
    }
}
