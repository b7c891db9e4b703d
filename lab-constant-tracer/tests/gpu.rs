//! GPU images against the CPU render for every variant, at awkward sizes and sphere counts, with the
//! image poisoned before each render. Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use lab_constant_tracer::gpu::{copy_from_constant, copy_to_constant, DeviceScene, Variant};
use lab_constant_tracer::render::{compare, render_on_cpu};
use lab_constant_tracer::scene::{random_scene, View};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_variant_matches_the_cpu_at_awkward_sizes_and_counts() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    let sizes = [(1, 1), (17, 13), (640, 480), (333, 1001)];
    let counts = [1, 7, 8, 16, 32, 64, 300];
    for (seed, &(width, height)) in sizes.iter().enumerate() {
        for &count in &counts {
            let spheres = random_scene(count, 10 * seed as u64 + count as u64).unwrap();
            let view = View::new(width, height).unwrap();
            let reference = render_on_cpu(&spheres, &view);
            let mut scene = DeviceScene::new(&module, &spheres, view).unwrap();
            for variant in Variant::all_for(count) {
                let (image, _) = scene.render(&module, variant, 1).unwrap();
                let comparison = compare(&image, &reference);
                assert!(comparison.passed(), "{} at {width} x {height}, {count} spheres: {comparison:?}", variant.name());
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_full_constant_memory_of_spheres_renders_like_the_cpu() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    let spheres = random_scene(kernels::MAX_SPHERES, 99).unwrap();
    let view = View::new(160, 90).unwrap();
    let reference = render_on_cpu(&spheres, &view);
    let mut scene = DeviceScene::new(&module, &spheres, view).unwrap();
    for variant in [Variant::Constant, Variant::Global] {
        let (image, _) = scene.render(&module, variant, 1).unwrap();
        assert!(compare(&image, &reference).passed(), "{}", variant.name());
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn spheres_read_back_from_the_constant_symbol_are_the_ones_written() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::TRACER).unwrap();
    for count in [1, 100, kernels::MAX_SPHERES] {
        let spheres = random_scene(count, count as u64).unwrap();
        copy_to_constant(&module, &spheres).unwrap();
        assert_eq!(copy_from_constant(&module, count).unwrap(), spheres);
    }
    let too_many = vec![Default::default(); kernels::MAX_SPHERES + 1];
    assert!(copy_to_constant(&module, &too_many).unwrap_err().to_string().contains("do not fit in constant memory"));
}
