//! The CUPTI record offsets `profiler::records` reads at, against the pinned toolkit's
//! `cupti_activity.h` compiled by the C compiler: a toolchain bump that moves a field fails here, not
//! as wrong numbers on a GPU. Runs without a GPU; fails where no header or no `cc` is found.

use std::path::{Path, PathBuf};
use std::process::Command;

use profiler::cupti;
use profiler::records::{domain, kind, layout};

/// The folder with `cupti_activity.h` of the toolkit whose nvcc builds the kernels.
fn cupti_include() -> PathBuf {
    let kernels_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let nvcc = kernels::nvcc::find(&kernels_dir).expect("no nvcc found (bash scripts/cuda-toolchain.sh installs one)");
    let root = nvcc
        .canonicalize()
        .expect("nvcc's path")
        .parent()
        .and_then(Path::parent)
        .expect("nvcc in <toolkit>/bin")
        .to_path_buf();
    // The wheels put CUPTI's headers beside cuda.h; a toolkit install under extras/CUPTI.
    let candidates = [root.join("include"), root.join("extras/CUPTI/include")];
    candidates
        .into_iter()
        .find(|folder| folder.join("cupti_activity.h").is_file())
        .unwrap_or_else(|| {
            panic!(
                "no cupti_activity.h beside {} (bash scripts/cuda-toolchain.sh installs the CUPTI wheel)",
                nvcc.display()
            )
        })
}

/// (C expression, the value the Rust side uses).
fn expected() -> Vec<(&'static str, usize)> {
    vec![
        ("offsetof(CUpti_ActivityKernel10, start)", layout::kernel::START),
        ("offsetof(CUpti_ActivityKernel10, end)", layout::kernel::END),
        ("offsetof(CUpti_ActivityKernel10, deviceId)", layout::kernel::DEVICE_ID),
        ("offsetof(CUpti_ActivityKernel10, streamId)", layout::kernel::STREAM_ID),
        ("offsetof(CUpti_ActivityKernel10, gridX)", layout::kernel::GRID_X),
        ("offsetof(CUpti_ActivityKernel10, gridY)", layout::kernel::GRID_X + 4),
        ("offsetof(CUpti_ActivityKernel10, gridZ)", layout::kernel::GRID_X + 8),
        ("offsetof(CUpti_ActivityKernel10, blockX)", layout::kernel::BLOCK_X),
        ("offsetof(CUpti_ActivityKernel10, blockZ)", layout::kernel::BLOCK_X + 8),
        (
            "offsetof(CUpti_ActivityKernel10, correlationId)",
            layout::kernel::CORRELATION_ID,
        ),
        ("offsetof(CUpti_ActivityKernel10, name)", layout::kernel::NAME),
        (
            "offsetof(CUpti_ActivityKernel10, channelID)",
            layout::kernel::CHANNEL_ID,
        ),
        ("sizeof(CUpti_ActivityKernel10)", layout::kernel::SIZE),
        ("offsetof(CUpti_ActivityMemcpy6, copyKind)", layout::memcpy::COPY_KIND),
        ("offsetof(CUpti_ActivityMemcpy6, srcKind)", layout::memcpy::SRC_KIND),
        ("offsetof(CUpti_ActivityMemcpy6, dstKind)", layout::memcpy::DST_KIND),
        ("offsetof(CUpti_ActivityMemcpy6, bytes)", layout::memcpy::BYTES),
        ("offsetof(CUpti_ActivityMemcpy6, start)", layout::memcpy::START),
        ("offsetof(CUpti_ActivityMemcpy6, end)", layout::memcpy::END),
        ("offsetof(CUpti_ActivityMemcpy6, deviceId)", layout::memcpy::DEVICE_ID),
        ("offsetof(CUpti_ActivityMemcpy6, streamId)", layout::memcpy::STREAM_ID),
        (
            "offsetof(CUpti_ActivityMemcpy6, correlationId)",
            layout::memcpy::CORRELATION_ID,
        ),
        ("offsetof(CUpti_ActivityMemcpy6, channelID)", layout::memcpy::CHANNEL_ID),
        ("sizeof(CUpti_ActivityMemcpy6)", layout::memcpy::SIZE),
        ("offsetof(CUpti_ActivityMemset4, bytes)", layout::memset::BYTES),
        ("offsetof(CUpti_ActivityMemset4, start)", layout::memset::START),
        ("offsetof(CUpti_ActivityMemset4, end)", layout::memset::END),
        ("offsetof(CUpti_ActivityMemset4, deviceId)", layout::memset::DEVICE_ID),
        ("offsetof(CUpti_ActivityMemset4, streamId)", layout::memset::STREAM_ID),
        (
            "offsetof(CUpti_ActivityMemset4, correlationId)",
            layout::memset::CORRELATION_ID,
        ),
        ("sizeof(CUpti_ActivityMemset4)", layout::memset::SIZE),
        ("offsetof(CUpti_ActivityAPI, cbid)", layout::api::CBID),
        ("offsetof(CUpti_ActivityAPI, start)", layout::api::START),
        ("offsetof(CUpti_ActivityAPI, end)", layout::api::END),
        (
            "offsetof(CUpti_ActivityAPI, correlationId)",
            layout::api::CORRELATION_ID,
        ),
        ("sizeof(CUpti_ActivityAPI)", layout::api::SIZE),
        ("CUPTI_CB_DOMAIN_DRIVER_API", domain::DRIVER as usize),
        ("CUPTI_CB_DOMAIN_RUNTIME_API", domain::RUNTIME as usize),
        (
            "offsetof(CUpti_ActivityExternalCorrelation, externalId)",
            layout::external_correlation::EXTERNAL_ID,
        ),
        (
            "offsetof(CUpti_ActivityExternalCorrelation, correlationId)",
            layout::external_correlation::CORRELATION_ID,
        ),
        (
            "sizeof(CUpti_ActivityExternalCorrelation)",
            layout::external_correlation::SIZE,
        ),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", kind::MEMCPY as usize),
        ("CUPTI_ACTIVITY_KIND_MEMSET", kind::MEMSET as usize),
        ("CUPTI_ACTIVITY_KIND_DRIVER", kind::DRIVER as usize),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", kind::RUNTIME as usize),
        (
            "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
            kind::CONCURRENT_KERNEL as usize,
        ),
        (
            "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION",
            kind::EXTERNAL_CORRELATION as usize,
        ),
        (
            "CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0",
            cupti::EXTERNAL_KIND_CUSTOM0 as usize,
        ),
        ("CUPTI_ACTIVITY_FLAG_FLUSH_FORCED", cupti::FLUSH_FORCED as usize),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_HTOD", 1),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_DTOH", 2),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_DTOD", 8),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_HTOH", 9),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_PTOP", 10),
        ("CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE", 1),
    ]
}

#[test]
fn record_offsets_and_constants_match_the_pinned_cupti_header() {
    let include = cupti_include();
    let folder = common::private_dir::PrivateDir::new("cupti-layout").expect("a private temporary folder");
    let source = folder.path().join("layout.c");
    let mut program =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include <cupti_activity.h>\nint main(void) {\n");
    for (expression, _) in expected() {
        program.push_str(&format!("    printf(\"%lu\\n\", (unsigned long)({expression}));\n"));
    }
    program.push_str("    return 0;\n}\n");
    std::fs::write(&source, program).unwrap();
    let binary = folder.path().join("layout");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let compiled = Command::new(&compiler)
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .expect("run the C compiler");
    assert!(
        compiled.status.success(),
        "{compiler} failed: {}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let output = Command::new(&binary).output().expect("run the layout program");
    let values: Vec<usize> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect();
    let wrong: Vec<String> = expected()
        .iter()
        .zip(&values)
        .filter(|((_, ours), theirs)| ours != *theirs)
        .map(|((expression, ours), theirs)| format!("{expression}: header {theirs}, records.rs {ours}"))
        .collect();
    assert_eq!(values.len(), expected().len());
    assert!(
        wrong.is_empty(),
        "profiler/src/records.rs disagrees with {}/cupti_activity.h:\n{}",
        include.display(),
        wrong.join("\n")
    );
}
