//! CUPTI's activity records, read field by field at the offsets of the pinned `cupti_activity.h`
//! (CUPTI 13.0: `CUpti_ActivityKernel10`, `CUpti_ActivityMemcpy6`, `CUpti_ActivityMemset4`,
//! `CUpti_ActivityExternalCorrelation`). Reading bytes at known offsets, rather than casting to a
//! `#[repr(C)]` copy of the structs, keeps this safe and testable without a GPU;
//! `profiler/tests/cupti_layout.rs` compares every offset here with the header, compiled by gcc.

/// `CUpti_ActivityKind` values the labs enable.
pub mod kind {
    pub const MEMCPY: u32 = 1;
    pub const MEMSET: u32 = 2;
    /// Driver and runtime API calls: needed for the external correlation records that tie work to a
    /// timed window (libraries such as cuBLAS launch through the runtime they carry).
    pub const DRIVER: u32 = 4;
    pub const RUNTIME: u32 = 5;
    pub const CONCURRENT_KERNEL: u32 = 10;
    pub const EXTERNAL_CORRELATION: u32 = 39;
}

/// Byte offsets of the fields read, and each record's size, from the pinned header.
pub mod layout {
    /// `CUpti_ActivityKernel10`.
    pub mod kernel {
        pub const START: usize = 16;
        pub const END: usize = 24;
        pub const DEVICE_ID: usize = 40;
        pub const STREAM_ID: usize = 48;
        pub const GRID_X: usize = 52;
        pub const BLOCK_X: usize = 64;
        pub const CORRELATION_ID: usize = 92;
        pub const NAME: usize = 104;
        pub const CHANNEL_ID: usize = 168;
        pub const SIZE: usize = 216;
    }
    /// `CUpti_ActivityMemcpy6`.
    pub mod memcpy {
        pub const COPY_KIND: usize = 4;
        pub const SRC_KIND: usize = 5;
        pub const DST_KIND: usize = 6;
        pub const BYTES: usize = 8;
        pub const START: usize = 16;
        pub const END: usize = 24;
        pub const DEVICE_ID: usize = 32;
        pub const STREAM_ID: usize = 40;
        pub const CORRELATION_ID: usize = 44;
        pub const CHANNEL_ID: usize = 76;
        pub const SIZE: usize = 96;
    }
    /// `CUpti_ActivityMemset4`.
    pub mod memset {
        pub const BYTES: usize = 8;
        pub const START: usize = 16;
        pub const END: usize = 24;
        pub const DEVICE_ID: usize = 32;
        pub const STREAM_ID: usize = 40;
        pub const CORRELATION_ID: usize = 44;
        pub const SIZE: usize = 88;
    }
    /// `CUpti_ActivityAPI`: a driver or runtime API call.
    pub mod api {
        pub const CBID: usize = 4;
        pub const START: usize = 8;
        pub const END: usize = 16;
        pub const CORRELATION_ID: usize = 32;
        pub const SIZE: usize = 40;
    }
    /// `CUpti_ActivityExternalCorrelation`.
    pub mod external_correlation {
        pub const EXTERNAL_ID: usize = 8;
        pub const CORRELATION_ID: usize = 16;
        pub const SIZE: usize = 24;
    }
}

/// One piece of work the GPU did, with CUPTI's GPU timestamps (nanoseconds on CUPTI's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub what: What,
    /// nvprof's name: the kernel's (demangled) or `[CUDA memcpy HtoD]` and the like.
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    /// CUPTI's id of the stream (not cust's handle).
    pub stream: u32,
    /// Ties the work to the API call that enqueued it.
    pub correlation: u32,
    /// The hardware channel it ran on: for copies, which copy engine's queue.
    pub channel: u32,
}

impl Activity {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// What kind of work an [`Activity`] is.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    Kernel {
        grid: [i32; 3],
        block: [i32; 3],
    },
    Copy {
        direction: Direction,
        bytes: u64,
        pageable: bool,
    },
    Memset {
        bytes: u64,
    },
}

/// `CUpti_ActivityMemcpyKind`, as nvprof named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HtoD,
    DtoH,
    DtoD,
    HtoH,
    PtoP,
    /// The array kinds (HtoA, AtoD, ...), which the labs do not use, under their CUPTI number.
    Other(u8),
}

impl Direction {
    pub fn from_cupti(copy_kind: u8) -> Direction {
        match copy_kind {
            1 => Direction::HtoD,
            2 => Direction::DtoH,
            8 => Direction::DtoD,
            9 => Direction::HtoH,
            10 => Direction::PtoP,
            other => Direction::Other(other),
        }
    }

    /// `HtoD`, as in nvprof's `[CUDA memcpy HtoD]`.
    pub fn label(self) -> String {
        match self {
            Direction::HtoD => "HtoD".into(),
            Direction::DtoH => "DtoH".into(),
            Direction::DtoD => "DtoD".into(),
            Direction::HtoH => "HtoH".into(),
            Direction::PtoP => "PtoP".into(),
            Direction::Other(kind) => format!("kind {kind}"),
        }
    }

    pub fn from_label(label: &str) -> Option<Direction> {
        Some(match label {
            "HtoD" => Direction::HtoD,
            "DtoH" => Direction::DtoH,
            "DtoD" => Direction::DtoD,
            "HtoH" => Direction::HtoH,
            "PtoP" => Direction::PtoP,
            other => Direction::Other(other.strip_prefix("kind ")?.parse().ok()?),
        })
    }
}

/// A driver or runtime API call as CUPTI recorded it (nvprof's "API calls"), on the host's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCall {
    /// `CUPTI_CB_DOMAIN_DRIVER_API` (1) or `CUPTI_CB_DOMAIN_RUNTIME_API` (2).
    pub domain: u32,
    /// The function's callback id in its domain; `cuptiGetCallbackName` names it.
    pub cbid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub correlation: u32,
}

/// `CUPTI_CB_DOMAIN_DRIVER_API` and `CUPTI_CB_DOMAIN_RUNTIME_API`.
pub mod domain {
    pub const DRIVER: u32 = 1;
    pub const RUNTIME: u32 = 2;
}

/// A record as read: work, an API call, the link from an API call to a timed window, or a kind not
/// used here.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Activity(Activity),
    Api(ApiCall),
    /// `correlation` (an API call, and so the work it enqueued) happened inside window `external`.
    Correlation {
        correlation: u32,
        external: u64,
    },
    Other {
        kind: u32,
    },
}

/// `CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE`.
const MEMORY_PAGEABLE: u8 = 1;

/// Reads one record. `bytes` starts at the record and holds at least its kind's size (shorter is
/// read as [`Record::Other`]); `kernel_name` turns the kernel record's name pointer into its name.
pub fn parse(bytes: &[u8], kernel_name: impl FnOnce(u64) -> String) -> Record {
    let kind = u32_at(bytes, 0);
    match kind {
        kind::CONCURRENT_KERNEL if bytes.len() >= layout::kernel::SIZE => parse_kernel(bytes, kernel_name),
        kind::MEMCPY if bytes.len() >= layout::memcpy::SIZE => parse_copy(bytes),
        kind::MEMSET if bytes.len() >= layout::memset::SIZE => parse_memset(bytes),
        kind::DRIVER | kind::RUNTIME if bytes.len() >= layout::api::SIZE => {
            use layout::api as at;
            Record::Api(ApiCall {
                domain: if kind == kind::DRIVER {
                    domain::DRIVER
                } else {
                    domain::RUNTIME
                },
                cbid: u32_at(bytes, at::CBID),
                start_ns: u64_at(bytes, at::START),
                end_ns: u64_at(bytes, at::END),
                correlation: u32_at(bytes, at::CORRELATION_ID),
            })
        }
        kind::EXTERNAL_CORRELATION if bytes.len() >= layout::external_correlation::SIZE => {
            use layout::external_correlation as at;
            Record::Correlation {
                correlation: u32_at(bytes, at::CORRELATION_ID),
                external: u64_at(bytes, at::EXTERNAL_ID),
            }
        }
        kind => Record::Other { kind },
    }
}

/// The size of a record of `kind` that [`parse`] reads, if it reads that kind.
pub fn record_size(kind: u32) -> Option<usize> {
    match kind {
        kind::CONCURRENT_KERNEL => Some(layout::kernel::SIZE),
        kind::MEMCPY => Some(layout::memcpy::SIZE),
        kind::MEMSET => Some(layout::memset::SIZE),
        kind::DRIVER | kind::RUNTIME => Some(layout::api::SIZE),
        kind::EXTERNAL_CORRELATION => Some(layout::external_correlation::SIZE),
        _ => None,
    }
}

fn parse_kernel(bytes: &[u8], kernel_name: impl FnOnce(u64) -> String) -> Record {
    use layout::kernel as at;
    let three = |offset: usize| [0, 1, 2].map(|i| u32_at(bytes, offset + 4 * i) as i32);
    Record::Activity(Activity {
        what: What::Kernel {
            grid: three(at::GRID_X),
            block: three(at::BLOCK_X),
        },
        name: demangle(&kernel_name(u64_at(bytes, at::NAME))),
        start_ns: u64_at(bytes, at::START),
        end_ns: u64_at(bytes, at::END),
        device: u32_at(bytes, at::DEVICE_ID),
        stream: u32_at(bytes, at::STREAM_ID),
        correlation: u32_at(bytes, at::CORRELATION_ID),
        channel: u32_at(bytes, at::CHANNEL_ID),
    })
}

fn parse_copy(bytes: &[u8]) -> Record {
    use layout::memcpy as at;
    let direction = Direction::from_cupti(bytes[at::COPY_KIND]);
    let pageable = bytes[at::SRC_KIND] == MEMORY_PAGEABLE || bytes[at::DST_KIND] == MEMORY_PAGEABLE;
    Record::Activity(Activity {
        what: What::Copy {
            direction,
            bytes: u64_at(bytes, at::BYTES),
            pageable,
        },
        name: format!("[CUDA memcpy {}]", direction.label()),
        start_ns: u64_at(bytes, at::START),
        end_ns: u64_at(bytes, at::END),
        device: u32_at(bytes, at::DEVICE_ID),
        stream: u32_at(bytes, at::STREAM_ID),
        correlation: u32_at(bytes, at::CORRELATION_ID),
        channel: u32_at(bytes, at::CHANNEL_ID),
    })
}

fn parse_memset(bytes: &[u8]) -> Record {
    use layout::memset as at;
    Record::Activity(Activity {
        what: What::Memset {
            bytes: u64_at(bytes, at::BYTES),
        },
        name: "[CUDA memset]".into(),
        start_ns: u64_at(bytes, at::START),
        end_ns: u64_at(bytes, at::END),
        device: u32_at(bytes, at::DEVICE_ID),
        stream: u32_at(bytes, at::STREAM_ID),
        correlation: u32_at(bytes, at::CORRELATION_ID),
        channel: 0,
    })
}

/// `mmm(double const*, ...)` for `_Z3mmmPKd...`, as nvprof showed names; `extern "C"` names as they are.
pub fn demangle(name: &str) -> String {
    // `demangle`, not `to_string`: a name the crate parses but cannot print (`RC4`, an `extern "C"`
    // kernel of a student's) is an error there, where `to_string` would panic.
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|symbol| symbol.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_ne_bytes(bytes[offset..offset + 4].try_into().expect("four bytes"))
}

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    u64::from_ne_bytes(bytes[offset..offset + 8].try_into().expect("eight bytes"))
}

/// Builds records as CUPTI lays them out, for tests here and in the summary and trace modules.
#[cfg(test)]
pub mod fake {
    use super::*;

    fn put(bytes: &mut [u8], offset: usize, value: &[u8]) {
        bytes[offset..offset + value.len()].copy_from_slice(value);
    }

    pub fn kernel(name_pointer: u64, start: u64, end: u64, stream: u32, correlation: u32) -> Vec<u8> {
        use layout::kernel as at;
        let mut bytes = vec![0xAB; at::SIZE];
        put(&mut bytes, 0, &kind::CONCURRENT_KERNEL.to_ne_bytes());
        put(&mut bytes, at::START, &start.to_ne_bytes());
        put(&mut bytes, at::END, &end.to_ne_bytes());
        put(&mut bytes, at::DEVICE_ID, &0u32.to_ne_bytes());
        put(&mut bytes, at::STREAM_ID, &stream.to_ne_bytes());
        for (i, value) in [64u32, 32, 1, 16, 16, 1].iter().enumerate() {
            put(&mut bytes, at::GRID_X + 4 * i, &value.to_ne_bytes());
        }
        put(&mut bytes, at::CORRELATION_ID, &correlation.to_ne_bytes());
        put(&mut bytes, at::NAME, &name_pointer.to_ne_bytes());
        put(&mut bytes, at::CHANNEL_ID, &3u32.to_ne_bytes());
        bytes
    }

    pub fn copy(
        copy_kind: u8,
        source_memory: u8,
        bytes_copied: u64,
        start: u64,
        end: u64,
        correlation: u32,
    ) -> Vec<u8> {
        use layout::memcpy as at;
        let mut bytes = vec![0xAB; at::SIZE];
        put(&mut bytes, 0, &kind::MEMCPY.to_ne_bytes());
        bytes[at::COPY_KIND] = copy_kind;
        bytes[at::SRC_KIND] = source_memory;
        bytes[at::DST_KIND] = 3;
        put(&mut bytes, at::BYTES, &bytes_copied.to_ne_bytes());
        put(&mut bytes, at::START, &start.to_ne_bytes());
        put(&mut bytes, at::END, &end.to_ne_bytes());
        put(&mut bytes, at::DEVICE_ID, &1u32.to_ne_bytes());
        put(&mut bytes, at::STREAM_ID, &7u32.to_ne_bytes());
        put(&mut bytes, at::CORRELATION_ID, &correlation.to_ne_bytes());
        put(&mut bytes, at::CHANNEL_ID, &9u32.to_ne_bytes());
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_kernel_record_and_demangles_its_name() {
        let bytes = fake::kernel(0x1234, 1_000, 4_000, 13, 77);
        let record = parse(&bytes, |pointer| {
            assert_eq!(pointer, 0x1234);
            "_Z3mmmPKdS0_Pdi".to_string()
        });
        let Record::Activity(activity) = record else {
            panic!("{record:?}")
        };
        assert_eq!(activity.name, "mmm(double const*, double const*, double*, int)");
        assert_eq!(
            (
                activity.start_ns,
                activity.duration_ns(),
                activity.stream,
                activity.correlation
            ),
            (1_000, 3_000, 13, 77)
        );
        assert_eq!(
            activity.what,
            What::Kernel {
                grid: [64, 32, 1],
                block: [16, 16, 1]
            }
        );
        assert_eq!(activity.channel, 3);
    }

    #[test]
    fn reads_copies_with_nvprofs_names_and_whether_host_memory_was_pageable() {
        let Record::Activity(copy) = parse(&fake::copy(1, 1, 4096, 10, 30, 5), |_| unreachable!()) else {
            panic!()
        };
        assert_eq!(copy.name, "[CUDA memcpy HtoD]");
        assert_eq!(
            copy.what,
            What::Copy {
                direction: Direction::HtoD,
                bytes: 4096,
                pageable: true
            }
        );
        assert_eq!((copy.device, copy.stream, copy.channel), (1, 7, 9));
        let Record::Activity(back) = parse(&fake::copy(2, 2, 8, 0, 1, 6), |_| unreachable!()) else {
            panic!()
        };
        assert_eq!(back.name, "[CUDA memcpy DtoH]");
        assert_eq!(
            back.what,
            What::Copy {
                direction: Direction::DtoH,
                bytes: 8,
                pageable: false
            }
        );
    }

    #[test]
    fn reads_driver_and_runtime_calls_with_their_callback_ids() {
        let mut bytes = vec![0xCD; layout::api::SIZE];
        bytes[..4].copy_from_slice(&kind::DRIVER.to_ne_bytes());
        bytes[layout::api::CBID..layout::api::CBID + 4].copy_from_slice(&307u32.to_ne_bytes());
        bytes[layout::api::START..layout::api::START + 8].copy_from_slice(&1000u64.to_ne_bytes());
        bytes[layout::api::END..layout::api::END + 8].copy_from_slice(&1500u64.to_ne_bytes());
        bytes[layout::api::CORRELATION_ID..layout::api::CORRELATION_ID + 4].copy_from_slice(&42u32.to_ne_bytes());
        let expected = ApiCall {
            domain: domain::DRIVER,
            cbid: 307,
            start_ns: 1000,
            end_ns: 1500,
            correlation: 42,
        };
        assert_eq!(parse(&bytes, |_| unreachable!()), Record::Api(expected.clone()));
        bytes[..4].copy_from_slice(&kind::RUNTIME.to_ne_bytes());
        assert_eq!(
            parse(&bytes, |_| unreachable!()),
            Record::Api(ApiCall {
                domain: domain::RUNTIME,
                ..expected
            })
        );
        assert_eq!(record_size(kind::DRIVER), Some(layout::api::SIZE));
    }

    #[test]
    fn keeps_extern_c_names_and_reads_unknown_or_short_records_as_other() {
        assert_eq!(demangle("simpson"), "simpson");
        // Parsed as a mangled name that cpp_demangle cannot print (gimli-rs/cpp_demangle#233): as it is.
        assert_eq!(demangle("RC4"), "RC4");
        assert_eq!(
            parse(&[5, 0, 0, 0, 0, 0, 0, 0], |_| unreachable!()),
            Record::Other { kind: 5 }
        );
        let short = &fake::kernel(0, 0, 0, 0, 0)[..100];
        assert_eq!(
            parse(short, |_| unreachable!()),
            Record::Other {
                kind: kind::CONCURRENT_KERNEL
            }
        );
    }

    #[test]
    fn direction_labels_round_trip() {
        for direction in [
            Direction::HtoD,
            Direction::DtoH,
            Direction::DtoD,
            Direction::HtoH,
            Direction::PtoP,
            Direction::Other(3),
        ] {
            assert_eq!(Direction::from_label(&direction.label()), Some(direction));
        }
    }
}
