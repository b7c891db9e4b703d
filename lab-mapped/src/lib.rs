//! lab-mapped's programs: the slides' `mmm-mapped`, and the zero-copy vector jobs next to their
//! explicit-copy versions; [`coalescing`], strided reads of mapped memory against device memory and a
//! copy. `main.rs` calls them in order; the GPU tests one by one.

pub mod coalescing;
pub mod too_small;

use anyhow::Result;
use common::check_cuda;
use common::context::{fork, join, new_streams};
use common::host_memory::{read_rate, try_filled_vec, Mapped, Registered};
use common::raw;
use common::timing::{time_on_stream, Runs, Timing};
use common::verify::{poisoned_device_buffer, Poison, Random};
use cust::function::Function;
use cust::launch;
use cust::memory::{AsyncCopyDestination, DeviceBuffer, DevicePointer, LockedBuffer};
use cust::stream::Stream;
use matrix::batch::{Batch, Measured};
use matrix::mmm::launch_mmm;

/// Threads per block of the vector kernels.
pub const BLOCK_SIZE: u32 = 256;

/// Where `mmm-mapped` launches its products.
#[derive(Clone, Copy)]
pub enum Launch {
    /// One stream per product, created in the timed loop as the slide's program creates them, forked
    /// from and joined into the main stream: the slide's program, which is mmm-streamed with
    /// mapped-matrix.hpp (its copies do nothing).
    PerProduct,
    /// Every product on the main stream, one after the other: the contrast row.
    OneStream,
}

impl Launch {
    /// The program's name in the table.
    pub fn name(&self) -> &'static str {
        match self {
            Launch::PerProduct => "mmm-mapped",
            Launch::OneStream => "mmm-mapped (one stream)",
        }
    }
}

/// `mmm-mapped`: every product's kernel reads A and B and writes C in mapped host memory, through
/// the device pointers of `cudaHostGetDevicePointer`, asked once per matrix before the timing as
/// mapped-matrix.hpp's `allocate_cuda_data` keeps them; no copies. Launched as `launch` says, timed
/// with events on `main` as `runs` says, and checked.
pub fn time_mapped(
    batch: &mut Batch<Mapped<f64>>,
    mmm: &Function,
    main: &Stream,
    launch: Launch,
    runs: Runs,
    random: &mut Random,
) -> Result<Measured> {
    batch.poison_results()?;
    let views = (0..batch.count())
        .map(|i| {
            Ok([
                batch.a[i].mapped_view()?,
                batch.b[i].mapped_view()?,
                batch.c[i].mapped_view()?,
            ])
        })
        .collect::<Result<Vec<_>>>()?;
    let block_size = batch.block_size;
    let timing = time_on_stream(main, runs.warmup, runs.repetitions, || match launch {
        Launch::PerProduct => {
            // cudaStreamCreate in the timed loop, as on the slide (here all before the first launch,
            // with the events of the fork and the join); destroyed at the end of the run, which CUDA
            // defers until their work is done.
            let streams = new_streams(views.len())?;
            fork(main, &streams)?;
            for ([a, b, c], stream) in views.iter().zip(streams.iter()) {
                launch_mmm(mmm, *a, *b, *c, block_size, stream)?;
            }
            join(main, &streams)
        }
        Launch::OneStream => views
            .iter()
            .try_for_each(|[a, b, c]| launch_mmm(mmm, *a, *b, *c, block_size, main)),
    })?;
    check_cuda!(main.synchronize())?;
    Ok(Measured {
        timing,
        check: batch.check(random),
    })
}

/// Where the vector jobs keep their data: pinned host buffers copied to device buffers and back, or
/// mapped host buffers the kernel reads and writes directly: from `cudaHostAlloc(...,
/// cudaHostAllocMapped)`, or (vectorAdd) `malloc`'d and then registered with `cudaHostRegister(...,
/// cudaHostRegisterMapped)`, the German slides' way to map memory a program already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    Explicit,
    ZeroCopy,
    RegisteredZeroCopy,
}

impl Memory {
    pub const ALL: [Memory; 3] = [Memory::Explicit, Memory::ZeroCopy, Memory::RegisteredZeroCopy];
}

impl Memory {
    /// How `--profile` names a job's timed windows: `vectorAdd (zero-copy)` is the Korean notes'
    /// program, whose nvprof table it is set beside.
    fn program(&self, job: &str) -> common::timing::observer::ProgramGuard {
        let way = match self {
            Memory::Explicit => "explicit copies",
            Memory::ZeroCopy => "zero-copy",
            Memory::RegisteredZeroCopy => "zero-copy, registered",
        };
        common::timing::observer::program(&format!("{job} ({way})"))
    }
}

/// The zero-copy `vectorAdd` of the Korean notes, c = a + b, both ways.
pub struct VectorAdd {
    a: Vec<f32>,
    b: Vec<f32>,
    pinned: [LockedBuffer<f32>; 3],
    device: [DeviceBuffer<f32>; 3],
    mapped: [Mapped<f32>; 3],
    /// a, b and c in memory `malloc` gave, registered with cudaHostRegisterMapped.
    registered: [Registered<f32>; 3],
    /// The last run's c, as the host sees it.
    pub c: Vec<f32>,
}

impl VectorAdd {
    /// Random a and b; a and b in mapped memory are write-combined if asked (fast for the GPU to read
    /// over the bus, slow for the CPU to read).
    pub fn random(n: usize, write_combined: bool, seed: u64) -> Result<VectorAdd> {
        let (a, b) = random_inputs(n, seed);
        let pinned = [
            check_cuda!(LockedBuffer::from_slice(&a))?,
            check_cuda!(LockedBuffer::from_slice(&b))?,
            check_cuda!(LockedBuffer::new(&0.0, n))?,
        ];
        let device = [
            poisoned_device_buffer(n)?,
            poisoned_device_buffer(n)?,
            poisoned_device_buffer(n)?,
        ];
        let mut mapped = [
            Mapped::new(n, 0.0, write_combined)?,
            Mapped::new(n, 0.0, write_combined)?,
            Mapped::new(n, 0.0, false)?,
        ];
        mapped[0].copy_from_slice(&a);
        mapped[1].copy_from_slice(&b);
        let register = |data: Vec<f32>| Registered::register(data, raw::CU_MEMHOSTREGISTER_DEVICEMAP);
        let registered = [
            register(a.clone())?,
            register(b.clone())?,
            register(try_filled_vec(n, f32::POISON, "vectorAdd's registered c")?)?,
        ];
        Ok(VectorAdd {
            a,
            b,
            pinned,
            device,
            mapped,
            registered,
            c: try_filled_vec(n, f32::POISON, "vectorAdd's c")?,
        })
    }

    /// Runs as `runs` says, between events on `stream`; `c` holds the result.
    pub fn time(&mut self, add: &Function, memory: Memory, stream: &Stream, runs: Runs) -> Result<Timing> {
        let _named = memory.program("vectorAdd");
        let n = self.a.len();
        let blocks = (n as u32).div_ceil(BLOCK_SIZE);
        self.pinned[2].fill(f32::POISON);
        self.mapped[2].fill(f32::POISON);
        self.registered[2].fill(f32::POISON);
        common::verify::poison(&mut self.device[2])?;
        let timing = match memory {
            Memory::Explicit => {
                let (pinned, device) = (&mut self.pinned, &mut self.device);
                time_on_stream(stream, runs.warmup, runs.repetitions, || {
                    // SAFETY: pinned buffers outlive the copies; the stream is synchronized below.
                    unsafe {
                        check_cuda!(device[0].async_copy_from(&pinned[0], stream))?;
                        check_cuda!(device[1].async_copy_from(&pinned[1], stream))?;
                    }
                    launch_add(add, device_pointers(device), n, blocks, stream)?;
                    // SAFETY: the pinned buffer outlives the copy, and the host reads it only after
                    // time_on_stream has waited (on every path).
                    check_cuda!(unsafe { device[2].async_copy_to(&mut pinned[2], stream) })?;
                    Ok(())
                })?
            }
            Memory::ZeroCopy | Memory::RegisteredZeroCopy => {
                // a, b and c where the kernel reaches them in host memory (cudaHostGetDevicePointer).
                let [a, b, c] = if memory == Memory::ZeroCopy {
                    self.mapped.each_ref().map(|buffer| buffer.device_pointer())
                } else {
                    self.registered.each_ref().map(|buffer| buffer.device_pointer())
                };
                let pointers = [a?, b?, c?];
                time_on_stream(stream, runs.warmup, runs.repetitions, || {
                    launch_add(add, pointers, n, blocks, stream)
                })?
            }
        };
        check_cuda!(stream.synchronize())?;
        self.c = match memory {
            Memory::Explicit => self.pinned[2].to_vec(),
            Memory::ZeroCopy => self.mapped[2].to_vec(),
            Memory::RegisteredZeroCopy => self.registered[2].to_vec(),
        };
        Ok(timing)
    }

    /// The kernel alone on device memory (a and b copied there first, untimed): what a program that
    /// copies its inputs to the GPU should take for its kernel, where the zero-copy one reads them
    /// across the bus. Runs once to warm up and `repetitions` times between events on `stream`.
    pub fn time_kernel_on_device(&mut self, add: &Function, stream: &Stream, repetitions: usize) -> Result<Timing> {
        let n = self.a.len();
        let blocks = (n as u32).div_ceil(BLOCK_SIZE);
        use cust::memory::CopyDestination as _;
        check_cuda!(self.device[0].copy_from(&self.a[..]))?;
        check_cuda!(self.device[1].copy_from(&self.b[..]))?;
        let device = &self.device;
        let timing = time_on_stream(stream, 1, repetitions, || {
            launch_add(add, device_pointers(device), n, blocks, stream)
        })?;
        check_cuda!(stream.synchronize())?;
        Ok(timing)
    }

    /// Elements of `c` that are not a + b (every element checked).
    pub fn wrong_elements(&self) -> usize {
        wrong_sums(&self.a, &self.b, &self.c)
    }
}

/// vectorAdd's inputs a and b, uniform in [-1, 1).
fn random_inputs(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut random = Random::new(seed);
    let a = (0..n).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
    let b = (0..n).map(|_| random.uniform(-1.0, 1.0) as f32).collect();
    (a, b)
}

/// Elements of `c` that are not bit for bit a + b as the CPU adds them.
fn wrong_sums(a: &[f32], b: &[f32], c: &[f32]) -> usize {
    (0..a.len())
        .filter(|&i| c[i].to_bits() != (a[i] + b[i]).to_bits())
        .count()
}

/// a, b and c where the kernel finds them in device memory.
fn device_pointers(device: &[DeviceBuffer<f32>; 3]) -> [DevicePointer<f32>; 3] {
    [
        device[0].as_device_ptr(),
        device[1].as_device_ptr(),
        device[2].as_device_ptr(),
    ]
}

fn launch_add(
    add: &Function,
    [a, b, c]: [DevicePointer<f32>; 3],
    n: usize,
    blocks: u32,
    stream: &Stream,
) -> Result<()> {
    // __global__ void vector_add(const float* a, const float* b, float* c, int n)
    // SAFETY: the arguments match the kernel above; a, b and c hold n floats each, in device or mapped
    // memory, and callers touch mapped memory only after time_on_stream has waited.
    check_cuda!(unsafe { launch!(add<<<blocks, BLOCK_SIZE, 0, stream>>>(a, b, c, n as i32)) })?;
    Ok(())
}

/// The write-only job: `out[i] = (i mod 1000) / 4`, into device memory and copied back, or straight
/// into mapped memory.
pub struct WriteOnly {
    pinned: LockedBuffer<f32>,
    device: DeviceBuffer<f32>,
    mapped: Mapped<f32>,
    /// The last run's output, as the host sees it.
    pub out: Vec<f32>,
}

impl WriteOnly {
    pub fn new(n: usize) -> Result<WriteOnly> {
        Ok(WriteOnly {
            pinned: check_cuda!(LockedBuffer::new(&f32::POISON, n))?,
            device: poisoned_device_buffer(n)?,
            mapped: Mapped::new(n, f32::POISON, false)?,
            out: try_filled_vec(n, f32::POISON, "the write-only job's output")?,
        })
    }

    /// The memories this job runs from: registered memory is vectorAdd's alone (pinning another
    /// 64 MiB costs the default run more than its row teaches).
    pub const MEMORIES: [Memory; 2] = [Memory::Explicit, Memory::ZeroCopy];

    /// Runs as `runs` says, between events on `stream`; `out` holds the result.
    pub fn time(&mut self, write: &Function, memory: Memory, stream: &Stream, runs: Runs) -> Result<Timing> {
        anyhow::ensure!(
            Self::MEMORIES.contains(&memory),
            "the write-only job has no {memory:?} buffer"
        );
        let _named = memory.program("write only");
        let n = self.out.len();
        let blocks = (n as u32).div_ceil(BLOCK_SIZE);
        self.pinned.fill(f32::POISON);
        self.mapped.fill(f32::POISON);
        common::verify::poison(&mut self.device)?;
        let copy_back = memory == Memory::Explicit;
        let target = if copy_back {
            self.device.as_device_ptr()
        } else {
            self.mapped.device_pointer()?
        };
        let (device, pinned) = (&self.device, &mut self.pinned);
        let timing = time_on_stream(stream, runs.warmup, runs.repetitions, || {
            // __global__ void write_only(float* out, int n)
            // SAFETY: the arguments match the kernel above; `target` holds n floats (device or mapped
            // memory), untouched by the host until time_on_stream has waited.
            check_cuda!(unsafe { launch!(write<<<blocks, BLOCK_SIZE, 0, stream>>>(target, n as i32)) })?;
            if copy_back {
                // SAFETY: the pinned buffer outlives the copy; the stream is synchronized below.
                check_cuda!(unsafe { device.async_copy_to(pinned, stream) })?;
            }
            Ok(())
        })?;
        check_cuda!(stream.synchronize())?;
        self.out = if copy_back {
            self.pinned.to_vec()
        } else {
            self.mapped.to_vec()
        };
        Ok(timing)
    }

    /// Elements that are not (i mod 1000) / 4 (every element checked).
    pub fn wrong_elements(&self) -> usize {
        self.out
            .iter()
            .enumerate()
            .filter(|(i, x)| x.to_bits() != ((i % 1000) as f32 * 0.25).to_bits())
            .count()
    }
}

/// Words [`cpu_reads`] reads: 16 MiB, enough that no CPU cache holds them.
pub const CPU_READ_WORDS: usize = 2 << 20;

/// The German slides: `cudaHostAllocWriteCombined` may make the GPU's reads of mapped memory faster,
/// at the cost of the CPU's. The CPU reads `words` words (0, 1, 2, ...) on one thread from mapped
/// memory and from mapped write-combined memory, the fastest of `repetitions` reads each, every sum
/// checked: (bytes/s plain, bytes/s write-combined).
pub fn cpu_reads(words: usize, repetitions: usize) -> Result<(f64, f64)> {
    let mut rates = [0.0; 2];
    for (rate, write_combined) in rates.iter_mut().zip([false, true]) {
        let mut buffer = Mapped::new(words, 0u64, write_combined)?;
        for (i, word) in buffer.iter_mut().enumerate() {
            *word = i as u64;
        }
        *rate = read_rate(&buffer, 1, repetitions)?;
    }
    Ok((rates[0], rates[1]))
}
