//! The host-memory flags of the German slides, the French notes and the Korean notes, each where it
//! matters: memory made page-locked in the lab's context and used from a second context (on a second
//! GPU when there is one, else on the same GPU). As the slides teach it, memory pinned by
//! `cudaHostAlloc` or `cudaHostRegister` is pinned only for the context that pinned it, unless made
//! portable (`cudaHostAllocPortable`, `cudaHostRegisterPortable`), and mapped memory
//! (`cudaHostAllocMapped`, `cudaHostRegisterMapped`) has a device address only there, unless portable
//! too (`cudaHostAllocMapped | cudaHostAllocPortable`). The CUDA programming guide adds that with
//! unified addressing, memory from `cudaMallocHost` and `cudaHostAlloc` is directly accessible from
//! every device that supports it. The second context works on a host thread of its own, as in the
//! Korean notes, where each of two GPUs has its host thread and memory pinned by one thread was of no
//! use to the other. Each row measures what this driver does: the copy bandwidth from each context,
//! whether each context gets a device pointer, and whether the second context's GPU writes the memory
//! through it.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::host_memory::{
    device_pointer_of, try_filled_vec, HostStorage, Mapped, MappedPortable, Portable, Registered,
};
use common::raw;
use common::timing::time_on_stream;
use common::verify::Random;
use cust::context::legacy::{Context, ContextFlags, ContextStack, CurrentContext};
use cust::device::Device;
use cust::memory::{CopyDestination, DeviceBuffer, LockedBuffer};
use cust::stream::{Stream, StreamFlags};

/// Bytes of each buffer: pinned copies reach their full speed by 16 MiB (the sweep).
pub const BYTES: usize = 16 << 20;
/// The word the second context's memset writes.
pub const PATTERN: u32 = 0x5eed_f1a6;

/// How the host memory of a row was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flags {
    Pageable,
    MallocHost,
    AllocPortable,
    Register,
    RegisterPortable,
    AllocMapped,
    AllocMappedPortable,
    RegisterMapped,
    RegisterMappedPortable,
}

impl Flags {
    pub const ALL: [Flags; 9] = [
        Flags::Pageable,
        Flags::MallocHost,
        Flags::AllocPortable,
        Flags::Register,
        Flags::RegisterPortable,
        Flags::AllocMapped,
        Flags::AllocMappedPortable,
        Flags::RegisterMapped,
        Flags::RegisterMappedPortable,
    ];

    /// The call that made it, as the slides write it.
    pub fn call(self) -> &'static str {
        match self {
            Flags::Pageable => "malloc",
            Flags::MallocHost => "cudaMallocHost",
            Flags::AllocPortable => "cudaHostAlloc(cudaHostAllocPortable)",
            Flags::Register => "malloc + cudaHostRegister(0)",
            Flags::RegisterPortable => "malloc + cudaHostRegister(cudaHostRegisterPortable)",
            Flags::AllocMapped => "cudaHostAlloc(cudaHostAllocMapped)",
            Flags::AllocMappedPortable => "cudaHostAlloc(cudaHostAllocMapped | cudaHostAllocPortable)",
            Flags::RegisterMapped => "malloc + cudaHostRegister(cudaHostRegisterMapped)",
            Flags::RegisterMappedPortable => {
                "malloc + cudaHostRegister(cudaHostRegisterMapped | cudaHostRegisterPortable)"
            }
        }
    }

    /// Whether the slides' model gives the second context a pinned copy and a device pointer.
    pub fn portable(self) -> bool {
        matches!(
            self,
            Flags::AllocPortable | Flags::RegisterPortable | Flags::AllocMappedPortable | Flags::RegisterMappedPortable
        )
    }
}

/// A buffer of [`BYTES`] made as its [`Flags`] say.
enum HostBytes {
    Pageable(Vec<u8>),
    MallocHost(LockedBuffer<u8>),
    Portable(Portable<u8>),
    Mapped(Mapped<u8>),
    MappedPortable(MappedPortable<u8>),
    Registered(Registered<u8>),
}

impl HostBytes {
    /// Makes the buffer in the current context.
    fn new(flags: Flags, bytes: usize) -> Result<HostBytes> {
        let register = |flags| -> Result<HostBytes> {
            Ok(HostBytes::Registered(Registered::register(
                try_filled_vec(bytes, 0u8, "a registered buffer")?,
                flags,
            )?))
        };
        use raw::{CU_MEMHOSTREGISTER_DEVICEMAP as MAPPED, CU_MEMHOSTREGISTER_PORTABLE as PORTABLE};
        Ok(match flags {
            Flags::Pageable => HostBytes::Pageable(try_filled_vec(bytes, 0, "a pageable buffer")?),
            Flags::MallocHost => HostBytes::MallocHost(check_cuda!(LockedBuffer::new(&0u8, bytes))?),
            Flags::AllocPortable => HostBytes::Portable(<Portable<u8> as HostStorage<u8>>::filled(bytes, 0)?),
            Flags::AllocMapped => HostBytes::Mapped(Mapped::new(bytes, 0, false)?),
            Flags::AllocMappedPortable => HostBytes::MappedPortable(MappedPortable::new(bytes, 0)?),
            Flags::Register => register(0)?,
            Flags::RegisterPortable => register(PORTABLE)?,
            Flags::RegisterMapped => register(MAPPED)?,
            Flags::RegisterMappedPortable => register(MAPPED | PORTABLE)?,
        })
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            HostBytes::Pageable(data) => data,
            HostBytes::MallocHost(data) => data,
            HostBytes::Portable(data) => data,
            HostBytes::Mapped(data) => data,
            HostBytes::MappedPortable(data) => data,
            HostBytes::Registered(data) => data,
        }
    }

    /// `cudaHostGetDevicePointer` in the current context, or the driver's error; pageable memory has
    /// none to ask for.
    fn device_pointer(&mut self) -> Option<Result<u64>> {
        if matches!(self, HostBytes::Pageable(_)) {
            return None;
        }
        Some(device_pointer_of(self.bytes().as_ptr()).map(|pointer| pointer.as_raw()))
    }
}

/// What one context saw of a buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Host-to-device bandwidth, GB/s (median of 5 after a warm-up).
    pub host_to_device: f64,
    /// The device pointer, or the driver's error name; `None` for pageable memory.
    pub device_pointer: Option<std::result::Result<u64, String>>,
    /// Whether a memset on the GPU through that pointer reached the host (only where there is one).
    pub gpu_writes: Option<bool>,
    /// Bytes that changed on a round trip host, device, host (must be 0).
    pub wrong: usize,
}

/// The driver's error name in `error`'s message (`CUDA_ERROR_INVALID_VALUE`), or the whole message.
fn error_name(error: &anyhow::Error) -> String {
    let message = error.to_string();
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|word| word.starts_with("CUDA_ERROR_"))
        .map_or(message.clone(), str::to_string)
}

/// Copies `original` (as long as `host`) to the GPU and back, times the copy, asks for a device
/// pointer and writes through it, all in the current context.
fn see(host: &mut HostBytes, original: &[u8]) -> Result<Seen> {
    let bytes = host.bytes().len();
    // SAFETY: every byte read back is first written by the copy from `host`.
    let mut device: DeviceBuffer<u8> = check_cuda!(unsafe { DeviceBuffer::uninitialized(bytes) })?;
    host.bytes().copy_from_slice(original);
    check_cuda!(device.copy_from(host.bytes()))?;
    host.bytes().fill(0xA5);
    check_cuda!(device.copy_to(host.bytes()))?;
    let wrong = host.bytes().iter().zip(original).filter(|(a, b)| a != b).count();
    let stream = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let timing = time_on_stream(&stream, 1, 5, || Ok(check_cuda!(device.copy_from(host.bytes()))?))?;
    let device_pointer = host.device_pointer();
    let gpu_writes = match &device_pointer {
        Some(Ok(address)) => {
            host.bytes().fill(0);
            let words = bytes / 4;
            // SAFETY: `address` is the current context's device address of the `bytes` page-locked
            // bytes of `host`, which outlives the memset: the context is synchronized below before the
            // host reads them (a memset into host memory need not be done when the call returns).
            check_cuda!(unsafe { raw::cuMemsetD32(*address, PATTERN, words) })?;
            check_cuda!(CurrentContext::synchronize())?;
            let expected = PATTERN.to_le_bytes();
            Some(host.bytes().chunks_exact(4).all(|word| word == expected))
        }
        _ => None,
    };
    Ok(Seen {
        host_to_device: bytes as f64 / (timing.median_ms() * 1e6),
        device_pointer: device_pointer.map(|result| result.map_err(|error| error_name(&error))),
        gpu_writes,
        wrong,
    })
}

/// The second context: on GPU 1 where there is one, else a second context on GPU 0. Made and
/// popped, so that the lab's context stays current; push it to use it.
pub fn second_context() -> Result<(Context, u32)> {
    let ordinal = u32::from(common::gpu::count()? > 1);
    let device = check_cuda!(Device::get_device(ordinal))?;
    let context = check_cuda!(Context::create_and_push(
        ContextFlags::MAP_HOST | ContextFlags::SCHED_AUTO,
        device
    ))?;
    check_cuda!(ContextStack::pop())?;
    Ok((context, ordinal))
}

/// One row: the buffer made in the lab's (current) context on this host thread, seen there, then from
/// `second` on another host thread.
pub fn row(flags: Flags, bytes: usize, second: &Context, random: &mut Random) -> Result<(Seen, Seen)> {
    ensure!(
        bytes >= 4 && bytes.is_multiple_of(4),
        "the buffers hold whole 32-bit words"
    );
    let mut host = HostBytes::new(flags, bytes)?;
    // Random bytes, eight from each draw.
    let original: Vec<u8> = (0..bytes.div_ceil(8))
        .flat_map(|_| random.next_u64().to_le_bytes())
        .take(bytes)
        .collect();
    let here = see(&mut host, &original)?;
    let second = second.get_unowned();
    let there = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<Seen> {
                check_cuda!(ContextStack::push(&second))?;
                let seen = see(&mut host, &original);
                check_cuda!(ContextStack::pop())?;
                seen
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    Ok((here, there))
}

/// `--flags`: the table, a row per kind of host memory. Returns whether every round trip and every
/// write arrived.
pub fn report(random: &mut Random) -> Result<bool> {
    let (second, ordinal) = second_context()?;
    println!(
        "\nHost-memory flags: {} buffers made in the lab's context (GPU 0) on the main host thread, used there and from a second context on a second host thread ({}); H2D = cudaMemcpy host to device, median of 5:\n",
        common::format_bytes(BYTES as u64),
        if ordinal == 1 { "on GPU 1" } else { "on the same GPU: this machine has one" }
    );
    println!("| host memory | portable | H2D GB/s here | H2D GB/s, second context | device pointer here | device pointer, second context | the second context's GPU writes it | check |");
    println!("|-------------|----------|---------------|--------------------------|---------------------|--------------------------------|------------------------------------|-------|");
    let pointer = |seen: &Seen| match &seen.device_pointer {
        None => "-".to_string(),
        Some(Ok(address)) => format!("{address:#x}"),
        Some(Err(name)) => name.clone(),
    };
    let mut passed = true;
    for flags in Flags::ALL {
        let (here, there) = row(flags, BYTES, &second, random)?;
        let right =
            here.wrong == 0 && there.wrong == 0 && here.gpu_writes != Some(false) && there.gpu_writes != Some(false);
        passed &= right;
        println!(
            "| {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            flags.call(),
            if flags.portable() { "yes" } else { "no" },
            here.host_to_device,
            there.host_to_device,
            pointer(&here),
            pointer(&there),
            match there.gpu_writes {
                None => "-",
                Some(true) => "yes",
                Some(false) => "no",
            },
            if right { "PASS" } else { "FAIL" }
        );
    }
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_name_is_the_drivers_code() {
        let error =
            anyhow::anyhow!("cuMemHostGetDevicePointer(...) failed: CUDA_ERROR_INVALID_VALUE (1) at flags.rs:12");
        assert_eq!(error_name(&error), "CUDA_ERROR_INVALID_VALUE");
        assert_eq!(error_name(&anyhow::anyhow!("no code")), "no code");
    }

    #[test]
    fn four_rows_are_portable_and_every_flag_has_its_call() {
        assert_eq!(Flags::ALL.iter().filter(|f| f.portable()).count(), 4);
        for flags in Flags::ALL {
            assert_eq!(flags.portable(), flags.call().contains("Portable"), "{flags:?}");
        }
    }
}
