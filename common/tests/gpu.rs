//! Every kernel image on this GPU (issue 28): each loads, the driver runs the build that
//! `KernelImage::code_for` says it runs, and a kernel the host may launch is there while one the
//! build left out is not. Run on a newer GPU with a bundle built for older architectures
//! (`CUDA_ARCH=sm_75 bash scripts/gpu-bundle.sh --no-dev gpu-bundle-sm75`), this covers PTX compiled
//! by the driver and the device runtime linked at run time. Needs a GPU: `bash gpu-bundle/run.sh`.

use common::gpu::Gpu;
use cust::function::FunctionAttribute;
use kernels::Code;

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_image_loads_as_the_build_the_host_expects_with_the_kernels_it_expects() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let arch = gpu.info.arch();
    eprintln!("{}", kernels::build_summary(arch));
    for (name, image) in kernels::ALL {
        let code = image
            .code_for(arch)
            .unwrap_or_else(|| panic!("{name}: no build runs on sm_{arch}"));
        let module = gpu.load(&image).unwrap_or_else(|err| panic!("{name}: {err:#}"));
        // Every entry of the newest build: the kernels the host knows of.
        let report = image.newest().unwrap().report().unwrap();
        let mut checked = 0;
        for entry in report.functions.iter().filter(|f| f.is_entry()) {
            let found = module.get_function(&entry.name);
            match image.can_run(&entry.name, arch) {
                Ok(()) => {
                    let function =
                        found.unwrap_or_else(|err| panic!("{name}: {} should run on sm_{arch}: {err}", entry.name));
                    let binary = function.get_attribute(FunctionAttribute::BinaryVersion).unwrap() as u32;
                    let ptx = function.get_attribute(FunctionAttribute::PtxVersion).unwrap() as u32;
                    match code {
                        Code::Machine(build) => assert_eq!(
                            binary, build.arch,
                            "{name}: {} is not the sm_{} machine code",
                            entry.name, build.arch
                        ),
                        Code::Ptx(build) => {
                            assert_eq!(
                                (binary, ptx),
                                (arch, build.arch),
                                "{name}: {} is not compute_{} PTX compiled for sm_{arch}",
                                entry.name,
                                build.arch
                            )
                        }
                    }
                    checked += 1;
                }
                Err(why) => {
                    let needs = kernels::needs(&entry.name)
                        .unwrap_or_else(|| panic!("{name}: {} cannot run ({why}) but needs nothing", entry.name));
                    assert!(
                        found.is_err() || arch < needs.arch,
                        "{name}: {} cannot run ({why}), yet the module has it",
                        entry.name
                    );
                    eprintln!("{name}: {}: {why}", entry.name);
                }
            }
        }
        assert!(checked > 0, "{name}: no kernel checked");
        eprintln!("{name}: {checked} kernels, {}", code.describe());
    }
}

/// `--profile` and `--trace` on the German slides' streamed program (issue 23): CUPTI's records tie
/// every copy and kernel of each timed run to its window, and the trace holds them all.
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn cupti_records_every_copy_and_kernel_of_each_timed_run_and_the_trace_reads_back() {
    use common::matrix::batch::Batch;
    use common::matrix::Pinned;
    use common::mmm::{load_mmm, MmmKernel};
    use common::profile::{trace, ProfileArgs};
    use common::timeline::Kernel;
    use common::verify::Random;
    use cust::stream::{Stream, StreamFlags};

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
        let _named = common::profile::program("mmm-streamed-and-pinned");
        let measured = batch.time_streamed(&mmm, &main, &streams, runs, &mut Random::new(6))?;
        passed = measured.check.passed();
        // The chronogram of the same program: every bar from CUPTI's records.
        let spans = batch.record_streamed(&mmm, &main, &streams)?;
        assert_eq!(spans.len(), 3 * count);
        assert!(
            common::timeline::disagreement_us(&spans).is_some(),
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
    let copies_in = activities.iter().filter(|a| matches!(a.what, common::profile::records::What::Copy { direction: common::profile::records::Direction::HtoD, bytes, .. } if bytes == matrix)).count();
    assert_eq!(copies_in, 2 * count * (1 + 1 + runs + 1), "copies in of {matrix} bytes");
    let kernels = activities.iter().filter(|a| a.name.starts_with("mmm")).count();
    assert!(kernels >= count * (1 + runs + 1), "{kernels} kernels");
}

/// A cust call that fails with a code cust's `CudaError` does not name: PTX newer than any driver
/// (222, `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`) is named by `check_cuda!`, not called unknown (issue 30).
#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_failing_cust_call_is_named_with_the_drivers_own_code() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    let ptx = ".version 9.9\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
    let err = common::check_cuda!(cust::module::Module::from_ptx(ptx, &[])).unwrap_err();
    assert_eq!(
        (err.code, err.name().as_str()),
        (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
        "{err}"
    );
}
