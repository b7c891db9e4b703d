//! Criterion benchmark of the two mmm kernels, both block sizes, f32 and f64, and of every step of
//! `--ladder`, on a GPU:
//!
//!     cargo bench -p lab-mmm                      # sizes 1024 and 4096
//!     MMM_BENCH_SIZES=256,512 cargo bench -p lab-mmm
//!
//! Each iteration is one launch plus a stream synchronize, so it includes the launch latency; the lab's
//! own table (CUDA events, median) is the kernel time alone.
//!
//! Criterion can only count "elements" (it prints elem/s); the elements here are multiply-adds, n^3
//! per product, and the group's name says so. FLOP/s are twice the elem/s criterion prints.

use std::time::Duration;

use common::gpu::Gpu;
use common::verify::Random;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_mmm::ladder::{Ladder, Step};
use matrix::mmm::{launch_mmm, load_mmm, MmmKernel};
use matrix::{Element, Matrix};

fn sizes() -> Vec<usize> {
    std::env::var("MMM_BENCH_SIZES")
        .unwrap_or_else(|_| "1024,4096".to_string())
        .split(',')
        .map(|size| size.trim().parse().expect("MMM_BENCH_SIZES: comma-separated sizes"))
        .collect()
}

fn bench_mmm(c: &mut Criterion) {
    let gpu = Gpu::open(0).expect("the mmm benchmark needs a GPU");
    let modules: Vec<(u32, Module)> = kernels::MMM_BLOCK_SIZES
        .iter()
        .map(|&bs| (bs, load_mmm(&gpu, bs).expect("load mmm")))
        .collect();
    for n in sizes() {
        let mut group = c.benchmark_group(format!("mmm/{n}x{n} (elem = multiply-add = 2 FLOP)"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        group.throughput(Throughput::Elements((n * n * n) as u64)); // multiply-adds per iteration
        bench_precision::<f64>(&mut group, &modules, n);
        bench_precision::<f32>(&mut group, &modules, n);
        group.finish();
    }
    let ladder = Ladder::load(&gpu).expect("load the ladder");
    for n in sizes() {
        let mut group = c.benchmark_group(format!("mmm-ladder/{n}x{n} (elem = multiply-add = 2 FLOP)"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        group.throughput(Throughput::Elements((n * n * n) as u64));
        bench_ladder::<f64>(&mut group, &ladder, n);
        bench_ladder::<f32>(&mut group, &ladder, n);
        group.finish();
    }
}

/// A, B and C of n x n on the GPU, as the kernels' views.
fn operands<T: Element>(n: usize) -> (Matrix<T>, Matrix<T>, Matrix<T>) {
    let mut random = Random::new(1);
    let mut a = Matrix::<T>::random(n, n, &mut random).expect("A");
    let mut b = Matrix::<T>::random(n, n, &mut random).expect("B");
    let mut c = Matrix::<T>::new(n, n).expect("C");
    a.copy_to_gpu().expect("copy A");
    b.copy_to_gpu().expect("copy B");
    c.allocate_on_gpu().expect("allocate C");
    (a, b, c)
}

fn bench_ladder<T: Element>(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    ladder: &Ladder,
    n: usize,
) {
    let (a, b, c) = operands::<T>(n);
    let views = (a.view().expect("A"), b.view().expect("B"), c.view().expect("C"));
    let stream = Stream::new(StreamFlags::DEFAULT, None).expect("stream");
    for step in Step::ALL {
        let Some(prepared) = ladder.prepare::<T>(step, (n, n, n)).expect("kernel") else {
            continue;
        };
        // Steps 14 to 16 multiply copies made once, before their timed launches, as run_step does.
        // SAFETY: as for the launches below; synchronized before the first of them.
        unsafe { prepared.convert((views.0, views.1), &stream) }.expect("convert");
        stream.synchronize().expect("synchronize");
        group.bench_function(BenchmarkId::new(step.precision::<T>().name(), step.name()), |bencher| {
            bencher.iter(|| {
                // SAFETY: the views are of a's, b's and c's device copies, which live through the
                // benchmark, and each launch is synchronized before the next.
                unsafe { prepared.launch(views, &stream) }.expect("launch");
                stream.synchronize().expect("synchronize");
            })
        });
    }
}

fn bench_precision<T: Element>(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    modules: &[(u32, Module)],
    n: usize,
) {
    let (a, b, c) = operands::<T>(n);
    let stream = Stream::new(StreamFlags::DEFAULT, None).expect("stream");
    let (a, b, c) = (a.view().expect("A"), b.view().expect("B"), c.view().expect("C"));
    for (block_size, module) in modules {
        for kernel in [MmmKernel::Naive, MmmKernel::Tiled] {
            let mmm = module.get_function(kernel.c_name::<T>()).expect("kernel");
            let id = BenchmarkId::new(
                format!("{}-{}", kernel.slide_name(), T::NAME),
                format!("BLOCK_SIZE {block_size}"),
            );
            group.bench_function(id, |bencher| {
                bencher.iter(|| {
                    launch_mmm(&mmm, a, b, c, *block_size, &stream).expect("launch");
                    stream.synchronize().expect("synchronize");
                })
            });
        }
    }
}

criterion_group!(benches, bench_mmm);
criterion_main!(benches);
