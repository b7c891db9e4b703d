//! Pinned and registered memory on the GPU: products from pinned matrices, round trips and the sweep.
//! Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use common::host_memory::Registered;
use common::progress::Progress;
use common::timing::Runs;
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};
use lab_pinned::flags::{self, Flags};
use lab_pinned::sweep::{measure, sizes, Kind};
use matrix::batch::Batch;
use matrix::mmm::{load_mmm, MmmKernel};
use matrix::{Matrix, Pinned};
use profiler::timeline::Kernel;

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn streamed_products_from_pinned_matrices_are_right() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let mut random = Random::new(1);
    for (count, n, block_size) in [(1, 1, 16), (3, 47, 16), (4, 129, 32)] {
        let module = load_mmm(&gpu, block_size).unwrap();
        let mmm = Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>()).unwrap();
        let main = Stream::new(StreamFlags::DEFAULT, None).unwrap();
        let streams = common::context::new_streams(count).unwrap();
        let mut batch = Batch::<Pinned<f64>>::random(count, n, block_size, 7).unwrap();
        assert!(batch
            .time_serial(&mmm.plain, &main, Runs::AS_PRINTED, &mut random)
            .unwrap()
            .check
            .passed());
        assert!(batch
            .time_streamed(&mmm, &main, &streams, Runs::AS_PRINTED, &mut random)
            .unwrap()
            .check
            .passed());
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn registered_and_pinned_matrices_copy_both_ways_unchanged() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    let original = Matrix::<f64>::random(31, 17, &mut Random::new(2)).unwrap();
    let mut registered = original.convert::<f64, Registered<f64>>().unwrap();
    let mut pinned = original.convert::<f64, Pinned<f64>>().unwrap();
    registered.copy_to_gpu().unwrap();
    pinned.copy_to_gpu().unwrap();
    registered.data_mut().fill(f64::NAN);
    pinned.data_mut().fill(f64::NAN);
    registered.copy_from_gpu().unwrap();
    pinned.copy_from_gpu().unwrap();
    assert_eq!(registered.data(), original.data());
    assert_eq!(pinned.data(), original.data());
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_sweep_round_trips_every_size_and_measures_positive_bandwidth() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    let stream = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    let mut random = Random::new(3);
    for kind in Kind::ALL {
        let points = measure(kind, &sizes(4 << 20), &stream, &mut random, &Progress::new(0, "test")).unwrap();
        assert_eq!(points.len(), 6);
        assert!(
            points.iter().all(|p| p.host_to_device > 0.0 && p.device_to_host > 0.0),
            "{points:?}"
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_flag_round_trips_in_both_contexts_and_mapped_memory_takes_the_gpus_writes() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    let (second, _) = flags::second_context().unwrap();
    let mut random = Random::new(3);
    for bytes in [4, 4100, (1 << 20) + 12] {
        for kind in Flags::ALL {
            let (here, there) = flags::row(kind, bytes, &second, &mut random).unwrap();
            let what = format!("{kind:?}, {bytes} bytes: {here:?} / {there:?}");
            assert_eq!((here.wrong, there.wrong), (0, 0), "{what}");
            assert!(here.host_to_device > 0.0 && there.host_to_device > 0.0, "{what}");
            // Wherever a context got a device pointer, the GPU's memset through it reached the host.
            assert_ne!(here.gpu_writes, Some(false), "{what}");
            assert_ne!(there.gpu_writes, Some(false), "{what}");
            let mapped = kind.call().contains("Mapped");
            if mapped {
                assert_eq!(
                    here.gpu_writes,
                    Some(true),
                    "mapped memory has a device address where it was made: {what}"
                );
            }
            if mapped && kind.portable() {
                assert_eq!(
                    there.gpu_writes,
                    Some(true),
                    "mapped and portable: every context: {what}"
                );
            }
            assert_eq!(here.device_pointer.is_none(), kind == Flags::Pageable, "{what}");
        }
    }
}
