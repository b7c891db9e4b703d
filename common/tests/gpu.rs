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
