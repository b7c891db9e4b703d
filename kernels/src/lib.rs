//! The labs' CUDA C kernels, compiled by `build.rs` with nvcc, and the `ptxas -v` reports of that build.
//!
//! Each source in `cuda/` becomes one [`KernelImage`] constant (`SIMPSON`, `MMM_BS16`, ...) holding one
//! [`ArchImage`] per architecture built ([`BUILT_ARCHS`]): the loadable image and the report ptxas
//! printed while making it, so what a lab shows with `--ptxas` is the report of the code it runs.
//! [`KernelImage::code_for`] picks the build a GPU runs, as the driver would; [`NEEDS`] lists the
//! kernels that exist only from some architecture on. [`ptxas`] turns a report into numbers.
//! [`runtime`] compiles a student's file when a lab runs, each nvcc in the `sandbox` crate's box (its
//! only dependency in the workspace).

mod compiler;
pub mod fatbin;
#[cfg(test)]
mod libcuda;
pub mod nvcc;
pub mod pragma;
pub mod private_dir;
pub mod ptxas;
pub mod runtime;

pub use nvcc::arch_name;

/// One compiled CUDA source, embedded in the binary: a build for each architecture.
#[derive(Debug, Clone, Copy)]
pub struct KernelImage {
    /// File in `kernels/cuda/`, as on the slide.
    pub source: &'static str,
    /// nvcc flags it was compiled with beyond the usual ones, e.g. `-DBLOCK_SIZE=16`.
    pub flags: &'static [&'static str],
    /// One build per architecture, ascending.
    pub builds: &'static [ArchImage],
    /// Built with `-rdc=true` and linked against `libcudadevrt` (kernels that launch kernels).
    pub linked_with_device_runtime: bool,
    /// Whether the machine code comes with PTX that the driver can compile for a GPU newer than every
    /// build (inside the fatbin, or a linked image's relocatable PTX). False in a student pack, whose
    /// kernels are machine code only (`KERNELS_MACHINE_CODE_ONLY` in build.rs).
    pub ptx_inside: bool,
}

/// A source compiled for one architecture.
#[derive(Debug, Clone, Copy)]
pub struct ArchImage {
    /// 86 for sm_86 (compute capability 8.6).
    pub arch: u32,
    /// A fatbin (machine code for `arch` plus its PTX), or a cubin when linked with the device runtime.
    pub image: &'static [u8],
    /// For a linked image: its relocatable PTX, which the lab links with the device runtime on a GPU
    /// this machine code does not run on (a fatbin carries its PTX inside).
    pub relocatable_ptx: Option<&'static str>,
    /// Everything nvcc wrote to stderr while compiling: the `ptxas info` lines for `arch`.
    pub ptxas: &'static str,
    /// The PTX nvcc made on the way, kept for a student's build: the rules of `--check` read its code
    /// (the grading crate's `ptx`). None for ours.
    pub ptx: Option<&'static str>,
}

impl ArchImage {
    /// The parsed ptxas report. The tests parse every build's, so an error here means a broken build.
    pub fn report(&self) -> Result<ptxas::Report, ptxas::ParseError> {
        ptxas::Report::parse(self.ptxas)
    }
}

/// How a GPU runs a build: its machine code, or its PTX compiled by the driver when loading.
#[derive(Debug, Clone, Copy)]
pub enum Code {
    /// Machine code of the GPU's major version, for its minor version or an older one (sm_80 runs on
    /// an sm_86 GPU).
    Machine(&'static ArchImage),
    /// PTX of an older architecture, compiled for this GPU by the driver (an sm_90 GPU runs a build
    /// made only for sm_75 this way, without what needs sm_80 or later).
    Ptx(&'static ArchImage),
}

impl Code {
    /// The build that runs.
    pub fn build(self) -> &'static ArchImage {
        match self {
            Code::Machine(build) | Code::Ptx(build) => build,
        }
    }

    /// "sm_80 machine code" or "compute_75 PTX, compiled by the driver".
    pub fn describe(self) -> String {
        match self {
            Code::Machine(build) => format!("{} machine code", arch_name(build.arch)),
            Code::Ptx(build) => format!("compute_{} PTX, compiled by the driver for this GPU", build.arch),
        }
    }
}

impl KernelImage {
    /// The build a GPU of architecture `gpu` (86 for compute capability 8.6) runs: see [`choose`].
    pub fn code_for(&self, gpu: u32) -> Option<Code> {
        let has_ptx = |build: &&ArchImage| {
            self.ptx_inside && (!self.linked_with_device_runtime || build.relocatable_ptx.is_some())
        };
        let (arch, machine) = choose(
            self.builds.iter().map(|build| build.arch),
            self.builds.iter().filter(has_ptx).map(|build| build.arch),
            gpu,
        )?;
        let build = self.builds.iter().find(|build| build.arch == arch)?;
        Some(if machine {
            Code::Machine(build)
        } else {
            Code::Ptx(build)
        })
    }

    /// The build for the newest architecture: a student's image has only this one, made for the GPU it
    /// runs on.
    pub fn newest(&self) -> Option<&'static ArchImage> {
        self.builds.last()
    }

    /// [`KernelImage::code_for`], or an error that lists the builds and says how to build for `gpu`.
    pub fn code_or_error(&self, gpu: u32) -> Result<Code, String> {
        self.code_for(gpu).ok_or_else(|| {
            let built: Vec<String> = self.builds.iter().map(|build| arch_name(build.arch)).collect();
            format!(
                "{} was built for {} only ({ARCHS_CHOSEN_BY}), and none of it runs on this {} GPU; {}",
                self.source,
                built.join(", "),
                arch_name(gpu),
                rebuild_hint(self.ptx_inside)
            )
        })
    }

    /// The ptxas report of the build a GPU of architecture `gpu` runs, with how it runs it.
    pub fn report_for(&self, gpu: u32) -> Result<(Code, ptxas::Report), String> {
        let code = self.code_or_error(gpu)?;
        let report = code.build().report().map_err(|err| {
            format!(
                "the ptxas report of {} for {}: {err}",
                self.source,
                arch_name(code.build().arch)
            )
        })?;
        Ok((code, report))
    }

    /// Whether every build has `kernel` as an entry: what the labs' tests ask of a kernel that needs
    /// nothing newer than the oldest architecture.
    pub fn in_every_build(&self, kernel: &str) -> bool {
        self.builds.iter().all(|build| {
            build
                .report()
                .is_ok_and(|report| report.function(kernel).is_some_and(|f| f.is_entry()))
        })
    }

    /// Why `kernel` cannot run on a GPU of architecture `gpu` from this image, or `Ok` where it can:
    /// the GPU is too old for what the kernel needs ([`NEEDS`]), or the code the GPU runs was built for
    /// an architecture without it.
    pub fn can_run(&self, kernel: &str, gpu: u32) -> Result<(), String> {
        let code = self.code_or_error(gpu)?;
        let Some(needs) = needs(kernel) else { return Ok(()) };
        if !needs.met_by(gpu) {
            return Err(format!(
                "needs {} ({}), this GPU is {}",
                needs.arch_name(),
                needs.feature,
                arch_name(gpu)
            ));
        }
        // Architecture-specific code is machine code: no PTX of it runs.
        if !needs.met_by(code.build().arch) || (needs.arch_specific && matches!(code, Code::Ptx(_))) {
            return Err(format!(
                "needs {} ({}); this GPU runs {} ({ARCHS_CHOSEN_BY}): {}",
                needs.arch_name(),
                needs.feature,
                code.describe(),
                rebuild_hint(self.ptx_inside)
            ));
        }
        Ok(())
    }
}

/// Which build a GPU of architecture `gpu` runs, chosen as the driver chooses: machine code of the same
/// major version and the newest minor version not above the GPU's (`machine`); else the PTX of the
/// newest build not newer than the GPU (`with_ptx`), compiled when loading; none where every build is
/// newer.
/// Returns the build's architecture and whether it runs as machine code.
pub fn choose(
    mut machine: impl DoubleEndedIterator<Item = u32>,
    mut with_ptx: impl DoubleEndedIterator<Item = u32>,
    gpu: u32,
) -> Option<(u32, bool)> {
    if let Some(arch) = machine.rfind(|arch| arch / 10 == gpu / 10 && *arch <= gpu) {
        return Some((arch, true));
    }
    with_ptx.rfind(|arch| *arch <= gpu).map(|arch| (arch, false))
}

/// One line on what this build gives a GPU of architecture `gpu`, for the header every lab prints:
/// "kernels built for sm_75, sm_80 (CUDA_ARCH=75;80); this GPU runs their compute_80 PTX, compiled by
/// the driver".
pub fn build_summary(gpu: u32) -> String {
    let built: Vec<String> = BUILT_ARCHS.iter().map(|&arch| arch_name(arch)).collect();
    let runs = match choose(
        BUILT_ARCHS.into_iter(),
        BUILT_ARCHS.into_iter().filter(|_| WITH_PTX),
        gpu,
    ) {
        Some((arch, true)) => format!("this GPU runs their {} machine code", arch_name(arch)),
        Some((arch, false)) => format!("this GPU runs their compute_{arch} PTX, compiled by the driver"),
        None => format!("none of them runs on this GPU: {}", rebuild_hint(WITH_PTX)),
    };
    format!("kernels built for {} ({ARCHS_CHOSEN_BY}); {runs}", built.join(", "))
}

/// What to do when the build has nothing a GPU runs: rebuild, or, in a student pack (machine code
/// only, no sources to rebuild from), ask for a pack built for that GPU.
fn rebuild_hint(with_ptx: bool) -> &'static str {
    if with_ptx {
        "rebuild with CUDA_ARCH=native"
    } else {
        "this build has machine code only (a student pack): ask for one built for this GPU (scripts/student-pack.sh --archs)"
    }
}

/// A kernel that exists only in builds for `arch` and later: its source is guarded with
/// `#if __CUDA_ARCH__ >= <arch>0`, so older builds have no such kernel rather than an empty one. An
/// `arch_specific` one exists only in the `sm_<arch>a` build (guarded with `__CUDA_ARCH_FEAT_SM90_ALL`),
/// whose machine code runs on that architecture alone: Hopper's wgmma is not on Blackwell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Needs {
    pub kernel: &'static str,
    pub arch: u32,
    /// What it uses that older GPUs lack.
    pub feature: &'static str,
    pub arch_specific: bool,
}

impl Needs {
    /// Whether a GPU, or a build, of architecture `arch` has what the kernel needs.
    pub fn met_by(&self, arch: u32) -> bool {
        if self.arch_specific {
            arch == self.arch
        } else {
            arch >= self.arch
        }
    }

    /// "sm_90", or "sm_90a" for architecture-specific code.
    pub fn arch_name(&self) -> String {
        let suffix = if self.arch_specific { "a" } else { "" };
        format!("{}{suffix}", arch_name(self.arch))
    }
}

/// Every kernel that needs more than sm_75, the oldest architecture CUDA 13 builds for. A test checks
/// each build against this list: a kernel is in a build exactly when the build's architecture has what
/// it needs ([`Needs::met_by`]).
pub const NEEDS: [Needs; 17] = [
    Needs {
        kernel: "async_copies_f32",
        arch: 80,
        feature: "cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "async_copies_f64",
        arch: 80,
        feature: "cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "warp_tiled_f32",
        arch: 80,
        feature: "cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "dmma_m8n8k4_f64",
        arch: 80,
        feature: "FP64 tensor cores, mma m8n8k4, and cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "dmma_m16n8k4_f64",
        arch: 90,
        feature: "FP64 mma m16n8k4, new with Hopper",
        arch_specific: false,
    },
    Needs {
        kernel: "mma_tiled_f64",
        arch: 90,
        feature: "FP64 mma m16n8k8, new with Hopper",
        arch_specific: false,
    },
    Needs {
        kernel: "mma_tiled_tf32",
        arch: 80,
        feature: "TF32 tensor cores, mma m16n8k8, and cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "warp_tiled_split_f32",
        arch: 80,
        feature: "cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "mma_tiled_split_f64",
        arch: 90,
        feature: "FP64 mma m16n8k8, new with Hopper",
        arch_specific: false,
    },
    Needs {
        kernel: "mma_tiled_split_tf32",
        arch: 80,
        feature: "TF32 tensor cores, mma m16n8k8, and cp.async",
        arch_specific: false,
    },
    Needs {
        kernel: "wgmma_tma_tf32",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_bf16",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_bf16_once",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_bf16_pair",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_bf16_stored",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_tf32_wide",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
    Needs {
        kernel: "wgmma_tma_bf16_streamk",
        arch: 90,
        feature: "wgmma, TMA and setmaxnreg, Hopper's own",
        arch_specific: true,
    },
];

/// What `kernel` needs beyond sm_75, if anything.
pub fn needs(kernel: &str) -> Option<&'static Needs> {
    NEEDS.iter().find(|needs| needs.kernel == kernel)
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The tiled `mmm` image compiled for `block_size`, if it is one of [`MMM_BLOCK_SIZES`].
pub fn mmm_for_block_size(block_size: u32) -> Option<&'static KernelImage> {
    MMM_BY_BLOCK_SIZE
        .iter()
        .find(|(size, _)| *size == block_size)
        .map(|(_, image)| image)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptxas::Report;

    /// `nvcc -fatbin` output starts with the fatbin magic 0xBA55ED50 (little endian).
    const FATBIN_MAGIC: [u8; 4] = [0x50, 0xED, 0x55, 0xBA];

    /// A linked cubin is an ELF file.
    const ELF_MAGIC: [u8; 4] = [0x7F, b'E', b'L', b'F'];

    /// Every build's parsed report, with its architecture: each test holds on every architecture.
    fn reports(image: &KernelImage) -> Vec<(u32, Report)> {
        image
            .builds
            .iter()
            .map(|build| {
                (
                    build.arch,
                    build
                        .report()
                        .unwrap_or_else(|err| panic!("{} for sm_{}: {err}", image.source, build.arch)),
                )
            })
            .collect()
    }

    fn entry_names(report: &Report) -> Vec<&str> {
        report
            .functions
            .iter()
            .filter(|f| f.is_entry())
            .map(|f| f.name.as_str())
            .collect()
    }

    #[test]
    fn every_kernel_is_built_for_every_architecture_with_a_parsable_report() {
        for (name, kernel) in ALL {
            let archs: Vec<u32> = kernel.builds.iter().map(|build| build.arch).collect();
            if kernel.linked_with_device_runtime {
                // The device runtime of an x86-64 toolkit has no Jetson code (sm_87, sm_88): such a
                // GPU runs the build of its major version below it.
                for &arch in BUILT_ARCHS.iter().filter(|arch| !archs.contains(arch)) {
                    assert!([87, 88].contains(&arch), "{name} has no build for sm_{arch}");
                    assert!(
                        matches!(kernel.code_for(arch), Some(Code::Machine(_))),
                        "{name}: nothing runs on sm_{arch}"
                    );
                }
            } else {
                assert_eq!(archs, BUILT_ARCHS, "{name}");
            }
            for build in kernel.builds {
                let magic = if kernel.linked_with_device_runtime {
                    ELF_MAGIC
                } else {
                    FATBIN_MAGIC
                };
                assert_eq!(
                    build.image[..4],
                    magic,
                    "{name} for sm_{} has the wrong container",
                    build.arch
                );
                assert_eq!(
                    build.relocatable_ptx.is_some(),
                    kernel.linked_with_device_runtime && WITH_PTX,
                    "{name}"
                );
                if !kernel.linked_with_device_runtime {
                    // Machine code for its architecture, and PTX exactly where the build keeps it (read
                    // from the fatbin itself: a student pack's must hold none).
                    let entries = fatbin::entries(build.image)
                        .unwrap_or_else(|err| panic!("{name} for sm_{}: {err}", build.arch));
                    let has = |kind| {
                        entries
                            .iter()
                            .any(|entry| entry.kind == kind && entry.arch == build.arch)
                    };
                    assert!(has(fatbin::Kind::Elf), "{name} for sm_{}: {entries:?}", build.arch);
                    assert_eq!(
                        has(fatbin::Kind::Ptx),
                        WITH_PTX,
                        "{name} for sm_{}: {entries:?}",
                        build.arch
                    );
                }
                let report = build.report().unwrap_or_else(|err| panic!("{name}: {err}"));
                assert!(
                    !entry_names(&report).is_empty(),
                    "{name}: no entry function in\n{}",
                    build.ptxas
                );
                // An sm_90a build (Hopper's own kernels, kernels::NEEDS) says so in every function.
                let arch_specific = report
                    .functions
                    .iter()
                    .any(|function| needs(&function.name).is_some_and(|needs| needs.arch_specific));
                let suffix = if arch_specific { "a" } else { "" };
                for function in report.functions.iter().filter(|function| function.is_entry()) {
                    assert_eq!(
                        function.arch,
                        Some(format!("{}{suffix}", arch_name(build.arch))),
                        "{name}: {}",
                        function.name
                    );
                    assert!(function.registers > 0, "{name}: {} uses no registers?", function.name);
                }
            }
        }
    }

    /// Issue 28: nothing the host may launch on an architecture is missing there, and nothing that
    /// needs a newer one is there (as an empty body, say). Meaningful with several architectures built,
    /// as CI builds them (all-major).
    #[test]
    fn a_kernel_is_in_a_build_exactly_when_the_architecture_has_what_it_needs() {
        let mut needed_seen = Vec::new();
        for (name, kernel) in ALL {
            let reports = reports(&kernel);
            let mut every_entry: Vec<&str> = reports.iter().flat_map(|(_, report)| entry_names(report)).collect();
            every_entry.sort_unstable();
            every_entry.dedup();
            for (arch, report) in &reports {
                for entry in &every_entry {
                    let new_enough = needs(entry).is_none_or(|needs| needs.met_by(*arch));
                    let present = report.function(entry).is_some_and(|f| f.is_entry());
                    assert_eq!(
                        present,
                        new_enough,
                        "{name}: {entry} for sm_{arch} (NEEDS says {:?})",
                        needs(entry)
                    );
                }
            }
            needed_seen.extend(
                every_entry
                    .into_iter()
                    .filter(|entry| needs(entry).is_some())
                    .map(String::from),
            );
        }
        // Every entry of NEEDS names a kernel that exists somewhere, where the build has such a GPU.
        for needs in NEEDS
            .iter()
            .filter(|needs| BUILT_ARCHS.iter().any(|&arch| needs.met_by(arch)))
        {
            assert!(
                needed_seen.iter().any(|seen| seen == needs.kernel),
                "NEEDS lists {}, which no build has",
                needs.kernel
            );
        }
    }

    /// Builds of a made-up image, for the choice of code: `archs` with PTX each.
    fn image_with(archs: &[u32], linked: bool) -> KernelImage {
        let builds: Vec<ArchImage> = archs
            .iter()
            .map(|&arch| ArchImage {
                arch,
                image: &[],
                relocatable_ptx: linked.then_some(""),
                ptxas: "",
                ptx: None,
            })
            .collect();
        KernelImage {
            source: "x.cu",
            flags: &[],
            builds: Box::leak(builds.into_boxed_slice()),
            linked_with_device_runtime: linked,
            ptx_inside: true,
        }
    }

    #[test]
    fn a_gpu_runs_machine_code_of_its_major_version_else_older_ptx() {
        let image = image_with(&[75, 80, 90, 100, 120], false);
        let chosen = |gpu| {
            image
                .code_for(gpu)
                .map(|code| (matches!(code, Code::Machine(_)), code.build().arch))
        };
        assert_eq!(chosen(75), Some((true, 75)));
        assert_eq!(chosen(86), Some((true, 80)), "sm_80 machine code runs on an RTX 30");
        assert_eq!(chosen(89), Some((true, 80)), "and on an L4");
        assert_eq!(chosen(90), Some((true, 90)));
        assert_eq!(chosen(103), Some((true, 100)));
        assert_eq!(chosen(121), Some((true, 120)));
        assert_eq!(
            chosen(130),
            Some((false, 120)),
            "a GPU newer than every build compiles the newest PTX"
        );
        assert_eq!(chosen(70), None, "older than every build");
        let old_only = image_with(&[75], false);
        assert_eq!(
            old_only.code_for(90).map(|code| code.describe()),
            Some("compute_75 PTX, compiled by the driver for this GPU".to_string())
        );
        assert!(
            image_with(&[86], false).code_for(80).is_none(),
            "sm_86 code does not run on an A100"
        );
    }

    #[test]
    fn what_a_kernel_needs_is_said_against_the_gpu_and_against_the_build() {
        let all = image_with(&[75, 80, 90], false);
        assert_eq!(all.can_run("dmma_m16n8k4_f64", 90), Ok(()));
        assert_eq!(all.can_run("async_copies_f32", 80), Ok(()));
        assert_eq!(all.can_run("register_blocked_f64", 75), Ok(()), "needs nothing");
        assert_eq!(
            all.can_run("dmma_m16n8k4_f64", 86),
            Err("needs sm_90 (FP64 mma m16n8k4, new with Hopper), this GPU is sm_86".to_string())
        );
        let turing = image_with(&[75], false);
        let error = turing.can_run("async_copies_f64", 90).unwrap_err();
        assert!(
            error.starts_with(
                "needs sm_80 (cp.async); this GPU runs compute_75 PTX, compiled by the driver for this GPU ("
            ),
            "{error}"
        );
        assert!(error.ends_with("): rebuild with CUDA_ARCH=native"), "{error}");
        let error = image_with(&[90], false)
            .can_run("register_blocked_f32", 75)
            .unwrap_err();
        assert!(error.starts_with("x.cu was built for sm_90 only ("), "{error}");
    }

    /// Hopper's wgmma kernels run on sm_90 alone, and only as the sm_90a machine code: not on
    /// Blackwell, not from an older build's PTX.
    #[test]
    fn hopper_kernels_run_as_sm_90a_machine_code_on_sm_90_only() {
        let all = image_with(&[75, 80, 90, 100, 120], false);
        assert_eq!(all.can_run("wgmma_tma_tf32", 90), Ok(()));
        assert_eq!(
            all.can_run("wgmma_tma_bf16", 100),
            Err("needs sm_90a (wgmma, TMA and setmaxnreg, Hopper's own), this GPU is sm_100".to_string())
        );
        assert!(all.can_run("wgmma_tma_tf32", 86).is_err());
        let error = image_with(&[75], false).can_run("wgmma_tma_tf32", 90).unwrap_err();
        assert!(
            error.starts_with("needs sm_90a (wgmma, TMA and setmaxnreg, Hopper's own); this GPU runs compute_75 PTX"),
            "{error}"
        );
        for build in MMM_WGMMA.builds {
            let report = build.report().unwrap();
            for kernel in [
                "wgmma_tma_tf32",
                "wgmma_tma_bf16",
                "wgmma_tma_bf16_once",
                "wgmma_tma_bf16_pair",
                "wgmma_tma_bf16_stored",
                "wgmma_tma_tf32_wide",
                "wgmma_tma_bf16_streamk",
            ] {
                let function = report.function(kernel);
                assert_eq!(function.is_some(), build.arch == 90, "{kernel} on sm_{}", build.arch);
                if let Some(function) = function {
                    // 384 threads, one block a multiprocessor: __launch_bounds__(384, 1) gives 168.
                    assert_eq!(
                        (function.registers, function.spill_stores, function.spill_loads),
                        (168, 0, 0),
                        "{kernel}"
                    );
                }
            }
        }
    }

    #[test]
    fn machine_code_only_has_no_fallback_and_says_what_to_ask_for() {
        let pack = KernelImage {
            ptx_inside: false,
            ..image_with(&[75, 80, 90, 120], false)
        };
        assert!(matches!(pack.code_for(90), Some(Code::Machine(build)) if build.arch == 90));
        assert!(
            pack.code_for(130).is_none(),
            "no PTX to compile for a GPU newer than every build"
        );
        let error = pack.code_or_error(130).unwrap_err();
        assert!(
            error.ends_with("ask for one built for this GPU (scripts/student-pack.sh --archs)"),
            "{error}"
        );
    }

    #[test]
    fn linked_code_without_ptx_runs_only_as_machine_code() {
        let mut image = image_with(&[75, 90], true);
        assert!(matches!(image.code_for(120), Some(Code::Ptx(build)) if build.arch == 90));
        let builds: Vec<ArchImage> = image
            .builds
            .iter()
            .map(|build| ArchImage {
                relocatable_ptx: None,
                ..*build
            })
            .collect();
        image.builds = Box::leak(builds.into_boxed_slice());
        assert!(image.code_for(120).is_none());
        assert!(matches!(image.code_for(90), Some(Code::Machine(_))));
    }

    #[test]
    fn every_kernel_a_chronogram_draws_has_its_stamped_twin_and_the_clock_is_there() {
        for (arch, streams) in reports(&STREAMS) {
            for name in ["vector_work", "add_five_times", "lcg_work"] {
                for twin in [name.to_string(), format!("{name}_stamped")] {
                    assert!(
                        streams.function(&twin).is_some_and(|f| f.is_entry()),
                        "{twin} missing for sm_{arch}"
                    );
                }
            }
        }
        for &block_size in &MMM_BLOCK_SIZES {
            for (arch, report) in reports(mmm_for_block_size(block_size).unwrap()) {
                assert!(
                    report.function("mmm_f64_stamped").is_some_and(|f| f.is_entry()),
                    "BLOCK_SIZE {block_size}, sm_{arch}"
                );
            }
        }
        assert!(reports(&TIMELINE)
            .iter()
            .all(|(_, report)| report.function("read_global_timer").is_some()));
        assert!(reports(&FIRST_LAUNCH)
            .iter()
            .all(|(_, report)| report.function("ncu_first_launch").is_some_and(|f| f.is_entry())));
    }

    #[test]
    fn simpson_keeps_the_slides_mangled_name_and_resources() {
        for (arch, report) in reports(&SIMPSON) {
            let simpson = report.function("_Z7simpsonddPd").expect("the slide's kernel name");
            // As on the slide: no local memory at all for 4/(1+x^2).
            assert_eq!(
                (simpson.stack_frame_bytes, simpson.spill_stores, simpson.spill_loads),
                (0, 0, 0),
                "sm_{arch}"
            );
            for name in ["_Z11simpson_sinddPd", "_Z11simpson_expddPd", "_Z12simpson_peakddPd"] {
                assert!(
                    report.function(name).is_some_and(|f| f.is_entry()),
                    "{name} missing for sm_{arch}"
                );
            }
        }
    }

    #[test]
    fn adaptive_simpson_is_linked_with_the_device_runtime_and_has_every_kernel() {
        for (arch, report) in reports(&ADAPTIVE_SIMPSON) {
            for integrand in ["pi", "sin", "exp", "peak"] {
                for kernel in ["adaptive_master", "adaptive_level"] {
                    let name = format!("{kernel}_{integrand}");
                    assert!(report.function(&name).is_some(), "{name} missing for sm_{arch}");
                }
            }
            for functor in ["23FourOverOnePlusXSquared", "4Sine", "11Exponential", "4Peak"] {
                let workers = format!("_Z7workersI{functor}EvdddddiiP5Tally");
                assert!(
                    report.function(&workers).is_some_and(|f| f.is_entry()),
                    "{workers} missing for sm_{arch}"
                );
            }
        }
        // Where the build keeps it (every_kernel_is_built_... checks it is there exactly then).
        for build in ADAPTIVE_SIMPSON.builds.iter().filter(|_| WITH_PTX) {
            let ptx = build.relocatable_ptx.unwrap();
            assert!(
                ptx.contains(&format!(".target sm_{}", build.arch))
                    && ptx.contains(".extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2"),
                "sm_{}",
                build.arch
            );
        }
    }

    #[test]
    fn register_caps_bound_the_registers_and_the_tight_ones_spill() {
        for (index, (arch, uncapped)) in reports(&REGISTERS).into_iter().enumerate() {
            let uncapped = uncapped.function("register_pressure").unwrap().clone();
            assert_eq!((uncapped.spill_stores, uncapped.spill_loads), (0, 0), "sm_{arch}");
            for (cap, image) in REGISTER_CAPS {
                let build = image.builds[index];
                let report = build.report().unwrap();
                let kernel = report
                    .function("register_pressure")
                    .unwrap_or_else(|| panic!("{cap:?}:\n{}", build.ptxas));
                if let Some(cap) = cap {
                    assert_eq!(image.flags, [format!("-maxrregcount={cap}")]);
                    // ptxas does not go below its floor (24 on sm_90), whatever the cap says.
                    assert!(
                        kernel.registers <= cap.max(24),
                        "cap {cap} on sm_{arch}: {} registers",
                        kernel.registers
                    );
                    if cap < uncapped.registers {
                        assert!(
                            kernel.spill_stores > 0 && kernel.spill_loads > 0,
                            "cap {cap} below {} must spill on sm_{arch}",
                            uncapped.registers
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn memory_has_every_kernel_of_lab_memory() {
        let modes = [
            "index_3d_3d",
            "scale_symbols",
            "through_pointer",
            "locked_sum",
            "local_array_fixed",
            "local_array_indexed",
            "branch_by_lane",
            "branch_by_warp",
            "walk_float",
            "walk_float3",
            "walk_float2",
            "walk_float2_shifted",
            "walk_float2_aligned",
            "walk_char",
            "walk_char_spread",
            "walk_double",
            "kernel_1",
            "kernel_2",
            "fill_pattern",
            "strided_copy",
            "word_copy_64",
            "word_copy_128",
            "bank_walk_32",
            "bank_walk_64",
            "transpose_naive",
            "transpose_shared",
            "transpose_padded",
            "copy_tiles",
            "cached_gather",
            "gather_plain",
            "gather_readonly",
            "gather_texture",
        ];
        for (arch, report) in reports(&MEMORY) {
            for name in modes {
                assert!(
                    report.function(name).is_some_and(|f| f.is_entry()),
                    "{name} missing for sm_{arch}"
                );
            }
            // One padding column: 32 x 33 floats instead of 32 x 32.
            assert_eq!(report.function("transpose_shared").unwrap().shared_bytes, 32 * 32 * 4);
            assert_eq!(report.function("transpose_padded").unwrap().shared_bytes, 32 * 33 * 4);
            // float a[3] indexed at run time lives in local memory; with constant indices, in registers.
            assert_eq!(report.function("local_array_fixed").unwrap().stack_frame_bytes, 0);
            assert!(report.function("local_array_indexed").unwrap().stack_frame_bytes >= 12);
        }
    }

    #[test]
    fn tiled_mmm_reports_its_shared_tiles_for_each_block_size_and_precision() {
        for &block_size in &MMM_BLOCK_SIZES {
            let kernel = mmm_for_block_size(block_size).unwrap();
            assert_eq!(kernel.flags, [format!("-DBLOCK_SIZE={block_size}")]);
            for (arch, report) in reports(kernel) {
                for (name, element_bytes) in [("mmm_f32", 4), ("mmm_f64", 8)] {
                    let tiles = 2 * block_size * block_size * element_bytes;
                    let function = report.function(name).unwrap_or_else(|| panic!("{name} missing"));
                    assert_eq!(
                        function.shared_bytes, tiles,
                        "{name} with BLOCK_SIZE {block_size} on sm_{arch}"
                    );
                    assert_eq!(function.barriers, Some(1), "{name} uses __syncthreads");
                }
                for name in ["mmm_ab_f32", "mmm_ab_f64"] {
                    assert_eq!(
                        report.function(name).unwrap().shared_bytes,
                        0,
                        "{name} reads global memory only"
                    );
                }
            }
        }
        assert!(mmm_for_block_size(8).is_none());
    }

    /// Issue 64: the slides' TILE_WIDTH = 2 example is mmm.cu's tiled kernel compiled with that
    /// BLOCK_SIZE, on traced elements (lab-mmm checks their size against mmm_traced's tiles); mmm_f64 of
    /// the same build shows the tiles' size in doubles.
    #[test]
    fn the_tile_example_is_the_tiled_mmm_with_the_slides_tile_width() {
        assert_eq!(TILE_EXAMPLE.flags, [format!("-DBLOCK_SIZE={TILE_EXAMPLE_WIDTH}")]);
        for (arch, report) in reports(&TILE_EXAMPLE) {
            let traced = report
                .function("mmm_traced")
                .unwrap_or_else(|| panic!("mmm_traced missing for sm_{arch}"));
            assert!(traced.is_entry() && traced.barriers == Some(1), "sm_{arch}: {traced:?}");
            assert_eq!(
                report.function("mmm_f64").unwrap().shared_bytes,
                2 * TILE_EXAMPLE_WIDTH * TILE_EXAMPLE_WIDTH * 8,
                "sm_{arch}"
            );
        }
    }

    /// lab-mmm's `--unroll`: each variant is mmm.cu with its one `#pragma unroll` line replaced and
    /// nothing else (read from the source build.rs wrote, where this build compiled one), built for
    /// every architecture with the same tiles. Without the pragma nvcc unrolls the constant trip count
    /// anyway: the same registers as mmm.cu as printed on every architecture. `#pragma unroll 1` keeps
    /// the loop, which holds fewer values at once: fewer registers.
    #[test]
    fn the_unroll_variants_differ_from_mmm_cu_in_the_pragma_line_alone() {
        let printed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/cuda/mmm.cu"));
        assert_eq!(MMM_UNROLL_VARIANTS.len(), 2 * MMM_BLOCK_SIZES.len());
        for (block_size, line, variant) in MMM_UNROLL_VARIANTS {
            let as_printed = mmm_for_block_size(block_size).unwrap();
            assert_eq!(variant.flags, as_printed.flags, "{}", variant.source);
            let derived = std::path::Path::new(env!("OUT_DIR")).join(variant.source);
            // A student pack builds from prebuilt images: neither mmm.cu nor the derived source is there.
            if let (Ok(printed), Ok(derived)) = (&printed, std::fs::read_to_string(&derived)) {
                let changed: Vec<(&str, &str)> = printed
                    .lines()
                    .zip(derived.lines())
                    .filter(|(a, b)| a != b)
                    .map(|(a, b)| (a.trim(), b.trim()))
                    .collect();
                assert_eq!(changed, [(pragma::UNROLL_PRAGMA, line)], "{}", variant.source);
                assert_eq!(printed.lines().count(), derived.lines().count());
            }
            let theirs = reports(as_printed);
            let ours = reports(&variant);
            assert_eq!(ours.len(), BUILT_ARCHS.len(), "{}", variant.source);
            for ((arch, printed), (_, report)) in theirs.iter().zip(&ours) {
                for name in ["mmm_f32", "mmm_f64"] {
                    let (printed, variant_fn) = (printed.function(name).unwrap(), report.function(name).unwrap());
                    let at = format!("{name} of {} (BLOCK_SIZE {block_size}) on sm_{arch}", variant.source);
                    assert!(variant_fn.is_entry(), "{at}");
                    assert_eq!(variant_fn.shared_bytes, printed.shared_bytes, "{at}");
                    if line.starts_with("#pragma unroll 1") {
                        assert!(
                            variant_fn.registers < printed.registers,
                            "{at}: {} registers against {}",
                            variant_fn.registers,
                            printed.registers
                        );
                    } else {
                        assert_eq!(variant_fn.registers, printed.registers, "{at}");
                    }
                }
            }
        }
    }
}
