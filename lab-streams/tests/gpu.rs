//! The streams programs against the CPU, with poisoned outputs, at awkward sizes and stream counts.
//! Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::batch::Batch;
use common::gpu::Gpu;
use common::matrix::{HostStorage, Pinned};
use common::mmm::{load_mmm, MmmKernel};
use common::timeline::{fork, Kind, Recorder};
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};
use lab_streams::vector::{AddFiveTimes, Synchronize, VectorJob};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

fn streams(count: usize) -> Vec<Stream> {
    common::context::new_streams(count).unwrap()
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_three_matrix_programs_compute_every_product() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let mut random = Random::new(1);
    for (count, n, block_size) in [(1, 1, 16), (3, 33, 16), (5, 100, 32), (2, 257, 32)] {
        let module = load_mmm(&gpu, block_size).unwrap();
        let mmm = module.get_function(MmmKernel::Tiled.c_name::<f64>()).unwrap();
        let main = Stream::new(StreamFlags::DEFAULT, None).unwrap();
        let streams = streams(count);
        let mut batch = Batch::<Vec<f64>>::random(count, n, block_size, n as u64).unwrap();
        // Kernels first, on a fresh batch: A and B must already be on the GPU (lab-mapped's first
        // GPU run found them uninitialized when only the serial program had copied them before).
        let kernels = batch.time_kernels_only(&mmm, &main, 1, &mut random).unwrap();
        let serial = batch.time_serial(&mmm, &main, 1, &mut random).unwrap();
        let streamed = batch.time_streamed(&mmm, &main, &streams, 1, &mut random).unwrap();
        for (name, measured) in [("serial", serial), ("kernels only", kernels), ("streamed", streamed)] {
            assert!(measured.check.passed(), "{name}, {count} x {n}: {:?}", measured.check);
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_timeline_has_copy_in_kernel_copy_out_in_order_on_every_stream() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = load_mmm(&gpu, 16).unwrap();
    let mmm = module.get_function(MmmKernel::Tiled.c_name::<f64>()).unwrap();
    let main = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    let streams = streams(4);
    let mut batch = Batch::<Vec<f64>>::random(4, 300, 16, 2).unwrap();
    let spans = batch.record_streamed(&mmm, &main, &streams).unwrap();
    assert_eq!(spans.len(), 12);
    for lane in 0..4 {
        let mine: Vec<_> = spans.iter().filter(|s| s.lane == lane).collect();
        assert_eq!(mine.iter().map(|s| s.kind).collect::<Vec<_>>(), vec![Kind::CopyIn, Kind::Kernel, Kind::CopyOut]);
        assert!(mine.windows(2).all(|w| w[0].end_ms <= w[1].start_ms + 1e-3), "lane {lane}: {mine:?}");
        assert!(mine.iter().all(|s| s.start_ms >= 0.0 && s.end_ms > s.start_ms), "lane {lane}: {mine:?}");
    }
    assert!(batch.check(&mut Random::new(3)).passed());
}

/// The pipeline, from `H` host memory, right at every element for awkward sizes and stream counts.
fn check_chunked_pipeline<H: HostStorage<f32>>() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::STREAMS).unwrap();
    let work = module.get_function("vector_work").unwrap();
    for n in [1, 1000, (1 << 20) + 3] {
        let mut job = VectorJob::<H>::random(n, 37, n as u64).unwrap();
        for count in [1, 3, 16] {
            for how in [Synchronize::PerStream, Synchronize::Device] {
                job.poison().unwrap();
                job.pipeline(&work, &streams(count), how, None).unwrap();
                let wrong = (0..n).filter(|&i| job.output[i].to_bits() != job.expected(i).to_bits()).count();
                assert_eq!(wrong, 0, "{n} elements on {count} streams, {how:?}, {}", H::KIND);
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_chunked_pipeline_writes_every_element_right_from_pinned_and_pageable_memory() {
    check_chunked_pipeline::<Pinned<f32>>();
    check_chunked_pipeline::<Vec<f32>>();
}

/// The 15-stream sample from `H` host memory, every element checked, Out poisoned before each run.
fn check_fifteen<H: HostStorage<i32>>() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::STREAMS).unwrap();
    let add = module.get_function("add_five_times").unwrap();
    let main = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    for n in [7, 1000, 512 * 65535] {
        let mut job = AddFiveTimes::<H>::random(n, 4).unwrap();
        for count in [1, 15] {
            job.poison();
            job.run(&add, &main, &streams(count), None).unwrap();
            main.synchronize().unwrap();
            assert_eq!(job.wrong_elements(), 0, "{n} ints on {count} streams, {}", H::KIND);
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_fifteen_stream_sample_adds_five_times_everywhere_from_pinned_and_pageable_memory() {
    check_fifteen::<Pinned<i32>>();
    check_fifteen::<Vec<i32>>();
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_pipeline_chronogram_has_a_copy_in_kernel_and_copy_out_per_stream_in_order() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::STREAMS).unwrap();
    let work = module.get_function("vector_work").unwrap();
    let main = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    let streams = streams(5);
    let mut job = VectorJob::<Pinned<f32>>::random(100_003, 50, 9).unwrap();
    job.poison().unwrap();
    let mut recorder = Recorder::start(&main).unwrap();
    fork(&main, &streams).unwrap();
    job.pipeline(&work, &streams, Synchronize::Device, Some(&mut recorder)).unwrap();
    let spans = recorder.spans().unwrap();
    assert_eq!(spans.len(), 15);
    for lane in 0..5 {
        let mine: Vec<_> = spans.iter().filter(|s| s.lane == lane).collect();
        assert_eq!(mine.iter().map(|s| s.kind).collect::<Vec<_>>(), vec![Kind::CopyIn, Kind::Kernel, Kind::CopyOut]);
        assert!(mine.windows(2).all(|w| w[0].end_ms <= w[1].start_ms + 1e-3), "lane {lane}: {mine:?}");
    }
    assert_eq!(job.wrong_elements(100_003, &mut Random::new(1)), 0);
}
