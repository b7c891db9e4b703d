//! The labs' CUDA C kernels, compiled by `build.rs` with nvcc, and the `ptxas -v` report of that build.
//!
//! Each source in `cuda/` becomes one [`KernelImage`] constant (`SIMPSON`, `MMM_BS16`, ...) holding the
//! loadable image and the report ptxas printed while making it, so what a lab shows with `--ptxas` is
//! the report of the code it runs. [`ptxas`] turns a report into numbers.

pub mod assignment;
pub mod nvcc;
pub mod ptxas;
pub mod runtime;

/// One compiled CUDA source, embedded in the binary.
#[derive(Debug, Clone, Copy)]
pub struct KernelImage {
    /// File in `kernels/cuda/`, as on the slide.
    pub source: &'static str,
    /// nvcc flags it was compiled with beyond the usual ones, e.g. `-DBLOCK_SIZE=16`.
    pub flags: &'static [&'static str],
    /// A fatbin (machine code plus PTX), or a cubin when linked with the device runtime.
    pub image: &'static [u8],
    /// Everything nvcc wrote to stderr while compiling: the `ptxas info` lines.
    pub ptxas: &'static str,
    /// Built with `-rdc=true` and linked against `libcudadevrt` (kernels that launch kernels).
    pub linked_with_device_runtime: bool,
}

impl KernelImage {
    /// The parsed ptxas report. It parsed at build time too, so an error here means a broken build.
    pub fn report(&self) -> Result<ptxas::Report, ptxas::ParseError> {
        ptxas::Report::parse(self.ptxas)
    }
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The tiled `mmm` image compiled for `block_size`, if it is one of [`MMM_BLOCK_SIZES`].
pub fn mmm_for_block_size(block_size: u32) -> Option<&'static KernelImage> {
    MMM_BY_BLOCK_SIZE.iter().find(|(size, _)| *size == block_size).map(|(_, image)| image)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvcc -fatbin` output starts with the fatbin magic 0xBA55ED50 (little endian).
    const FATBIN_MAGIC: [u8; 4] = [0x50, 0xED, 0x55, 0xBA];

    /// A linked cubin is an ELF file.
    const ELF_MAGIC: [u8; 4] = [0x7F, b'E', b'L', b'F'];

    fn all_images() -> Vec<(&'static str, KernelImage)> {
        vec![
            ("SIMPSON", SIMPSON),
            ("MMM_BS16", MMM_BS16),
            ("MMM_BS32", MMM_BS32),
            ("ADAPTIVE_SIMPSON", ADAPTIVE_SIMPSON),
            ("TRACER", TRACER),
            ("STREAMS", STREAMS),
            ("MAPPED", MAPPED),
            ("TIMELINE", TIMELINE),
            ("MMM_LADDER", MMM_LADDER),
            ("MEMORY", MEMORY),
            ("REGISTERS", REGISTERS),
            ("REGISTERS_CAP16", REGISTERS_CAP16),
            ("REGISTERS_CAP24", REGISTERS_CAP24),
            ("REGISTERS_CAP32", REGISTERS_CAP32),
            ("REGISTERS_CAP64", REGISTERS_CAP64),
        ]
    }

    #[test]
    fn every_kernel_is_built_with_a_parsable_report() {
        for (name, kernel) in all_images() {
            let magic = if kernel.linked_with_device_runtime { ELF_MAGIC } else { FATBIN_MAGIC };
            assert_eq!(kernel.image[..4], magic, "{name} has the wrong container");
            let report = kernel.report().unwrap_or_else(|err| panic!("{name}: {err}"));
            assert!(!report.functions.is_empty(), "{name}: no entry function in\n{}", kernel.ptxas);
            for function in report.functions.iter().filter(|function| function.is_entry()) {
                assert_eq!(function.arch.as_deref(), Some(TARGET_ARCH), "{name}: {}", function.name);
                assert!(function.registers > 0, "{name}: {} uses no registers?", function.name);
            }
        }
    }

    #[test]
    fn every_kernel_a_chronogram_draws_has_its_stamped_twin_and_the_clock_is_there() {
        let streams = STREAMS.report().unwrap();
        for name in ["vector_work", "add_five_times", "lcg_work"] {
            for twin in [name.to_string(), format!("{name}_stamped")] {
                assert!(streams.function(&twin).is_some_and(|f| f.is_entry()), "{twin} missing:\n{}", STREAMS.ptxas);
            }
        }
        for &block_size in &MMM_BLOCK_SIZES {
            let report = mmm_for_block_size(block_size).unwrap().report().unwrap();
            assert!(report.function("mmm_f64_stamped").is_some_and(|f| f.is_entry()), "BLOCK_SIZE {block_size}");
        }
        assert!(TIMELINE.report().unwrap().function("read_global_timer").is_some());
    }

    #[test]
    fn simpson_keeps_the_slides_mangled_name_and_resources() {
        let report = SIMPSON.report().unwrap();
        let simpson = report.function("_Z7simpsonddPd").expect("the slide's kernel name");
        // As on the slide: no local memory at all for 4/(1+x^2).
        assert_eq!((simpson.stack_frame_bytes, simpson.spill_stores, simpson.spill_loads), (0, 0, 0));
        for name in ["_Z11simpson_sinddPd", "_Z11simpson_expddPd", "_Z12simpson_peakddPd"] {
            assert!(report.function(name).is_some_and(|f| f.is_entry()), "{name} missing:\n{}", SIMPSON.ptxas);
        }
    }

    #[test]
    fn adaptive_simpson_is_linked_with_the_device_runtime_and_has_every_kernel() {
        assert_eq!(ADAPTIVE_SIMPSON.image[..4], ELF_MAGIC, "a linked cubin");
        let report = ADAPTIVE_SIMPSON.report().unwrap();
        for integrand in ["pi", "sin", "exp", "peak"] {
            for kernel in ["adaptive_master", "adaptive_level"] {
                let name = format!("{kernel}_{integrand}");
                assert!(report.function(&name).is_some(), "{name} missing");
            }
        }
        for functor in ["23FourOverOnePlusXSquared", "4Sine", "11Exponential", "4Peak"] {
            let workers = format!("_Z7workersI{functor}EvdddddiiP5Tally");
            assert!(report.function(&workers).is_some_and(|f| f.is_entry()), "{workers} missing");
        }
    }

    #[test]
    fn register_caps_bound_the_registers_and_the_tight_ones_spill() {
        let uncapped = REGISTERS.report().unwrap().function("register_pressure").unwrap().clone();
        assert_eq!((uncapped.spill_stores, uncapped.spill_loads), (0, 0), "{}", REGISTERS.ptxas);
        for (cap, image) in REGISTER_CAPS {
            let report = image.report().unwrap();
            let kernel = report.function("register_pressure").unwrap_or_else(|| panic!("{cap:?}:\n{}", image.ptxas));
            if let Some(cap) = cap {
                assert_eq!(image.flags, [format!("-maxrregcount={cap}")]);
                // ptxas does not go below its floor (24 on sm_90), whatever the cap says.
                assert!(kernel.registers <= cap.max(24), "cap {cap}: {} registers", kernel.registers);
                if cap < uncapped.registers {
                    assert!(kernel.spill_stores > 0 && kernel.spill_loads > 0, "cap {cap} below {} must spill", uncapped.registers);
                }
            }
        }
    }

    #[test]
    fn memory_has_every_kernel_of_lab_memory() {
        let report = MEMORY.report().unwrap();
        let modes = [
            "index_3d_3d", "scale_symbols", "kernel_1", "kernel_2", "fill_pattern", "strided_copy", "bank_walk_32", "bank_walk_64",
            "transpose_naive", "transpose_shared", "transpose_padded", "copy_tiles", "cached_gather", "gather_plain", "gather_readonly", "gather_texture",
        ];
        for name in modes {
            assert!(report.function(name).is_some_and(|f| f.is_entry()), "{name} missing:\n{}", MEMORY.ptxas);
        }
        // One padding column: 32 x 33 floats instead of 32 x 32.
        assert_eq!(report.function("transpose_shared").unwrap().shared_bytes, 32 * 32 * 4);
        assert_eq!(report.function("transpose_padded").unwrap().shared_bytes, 32 * 33 * 4);
    }

    #[test]
    fn tiled_mmm_reports_its_shared_tiles_for_each_block_size_and_precision() {
        for &block_size in &MMM_BLOCK_SIZES {
            let kernel = mmm_for_block_size(block_size).unwrap();
            assert_eq!(kernel.flags, [format!("-DBLOCK_SIZE={block_size}")]);
            let report = kernel.report().unwrap();
            for (name, element_bytes) in [("mmm_f32", 4), ("mmm_f64", 8)] {
                let tiles = 2 * block_size * block_size * element_bytes;
                let function = report.function(name).unwrap_or_else(|| panic!("{name} missing"));
                assert_eq!(function.shared_bytes, tiles, "{name} with BLOCK_SIZE {block_size}");
                assert_eq!(function.barriers, Some(1), "{name} uses __syncthreads");
            }
            for name in ["mmm_ab_f32", "mmm_ab_f64"] {
                assert_eq!(report.function(name).unwrap().shared_bytes, 0, "{name} reads global memory only");
            }
        }
        assert!(mmm_for_block_size(8).is_none());
    }
}
