//! `--program mmm-streamed` (week 5, lab-streams) and `--program mmm-streamed-and-pinned` (week 6,
//! lab-mapped): the German slides' COUNT products as a graded whole program (issue 43):
//!
//! ```text
//! mmm_streamed COUNT N INPUT OUTPUT
//! ```
//!
//! It reads A_0, B_0, A_1, B_1, ... (N x N row-major doubles) from INPUT, computes every
//! C_i = A_i * B_i on its own stream, and writes C_0, C_1, ... to OUTPUT. The check compares every
//! C_i with the CPU's product ([`Batch::check`]), and reads the week's rules from the program's trace: every matrix
//! copied once, COUNT streams each carrying a whole product, and kernels that take at least a
//! quarter as long as ours (the labs' own tiled kernel); week 6's version adds pinned host memory,
//! kernels beside copies, and a GPU time near ours (the labs' `mmm-streamed` from pinned memory,
//! [`Batch::time_streamed`], on the same case). The two weeks differ only in their host memory, the
//! [`Flavour`].

use std::path::Path;

use anyhow::{Context as _, Result};
use common::context::new_streams;
use common::gpu::Gpu;
use common::timing::Runs;
use common::verify::Random;
use cust::stream::{Stream, StreamFlags};
use matrix::batch::Batch;
use matrix::mmm::{load_mmm, MmmKernel};
use matrix::{HostStorage, Pinned};
use profiler::records::Direction;
use profiler::timeline::{write_svg, Kernel};

use super::trace::Trace;
use super::{rules, PerCase, Prepared, ProgramArgs, Rule, Week};
use crate::cases_file::field;
use crate::exit::on_the_machine;

/// The BLOCK_SIZE of our own run (and of the week's program).
pub const BLOCK_SIZE: u32 = 16;

/// One case: COUNT products of N x N doubles, inputs from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub count: usize,
    pub n: usize,
    pub seed: u64,
}

/// The week's cases: the slides' ten products of 1024 x 1024, sizes that are no multiple of
/// BLOCK_SIZE (1000, 333), one product alone (nothing to overlap), and sixteen small ones.
pub const CASES: [Case; 5] = [
    Case {
        count: 10,
        n: 1024,
        seed: 71,
    },
    Case {
        count: 4,
        n: 1000,
        seed: 72,
    },
    Case {
        count: 7,
        n: 333,
        seed: 73,
    },
    Case {
        count: 1,
        n: 512,
        seed: 74,
    },
    Case {
        count: 16,
        n: 256,
        seed: 75,
    },
];

/// The most products and the largest N a case may have.
pub const MAX_COUNT: usize = 64;
pub const MAX_N: usize = 8192;
/// The most elements COUNT x N x N a case may have: its A, B and C of them (3 GiB) must fit on the
/// GPU beside the program's own, and in the host's memory with the input file's bytes.
pub const MAX_ELEMENTS: usize = 1 << 27;

/// What makes week 5's program and week 6's differ: the host memory the week asks for.
pub trait Flavour {
    /// The host memory of our own run, the one the week teaches.
    type Host: HostStorage<f64>;
    /// The program's name on the slides, said above the table.
    const PROGRAM: &'static str;
    /// The week's folder in `assignments/`.
    const NAME: &'static str;
    /// Our solution's file in `reference/weeks/`.
    const SOLUTION: &'static str;
    /// Whether the week asks for pinned memory, and so for kernels beside copies and a GPU time near
    /// ours. From pageable memory the time is the host's more than the program's: each copy is staged
    /// by the CPU, and into freshly allocated memory it first faults every page in (our solution's GPU
    /// busy time was 1.8x and 2.6x our run's in the two largest cases on an H100, whose buffers had
    /// been touched long before, and a fifth of it in the smallest).
    const PINNED: bool;
    const RULES: &'static [&'static str];
}

/// Week 5: from pageable memory, as the slides' mmm-streamed.
pub struct Streamed;

impl Flavour for Streamed {
    type Host = Vec<f64>;
    const PROGRAM: &'static str = "mmm-streamed";
    const NAME: &'static str = "05-streams";
    const SOLUTION: &'static str = "mmm_streamed.cu";
    const PINNED: bool = false;
    const RULES: &'static [&'static str] = &[
        "waits: results read after the GPU's last work",
        "copies: every matrix once",
        "streams: COUNT streams carry a product each",
        "kernel time: at least 0.25x ours",
    ];
}

/// Week 6: from pinned memory, as the slides' mmm-streamed-and-pinned.
pub struct StreamedAndPinned;

impl Flavour for StreamedAndPinned {
    type Host = Pinned<f64>;
    const PROGRAM: &'static str = "mmm-streamed-and-pinned";
    const NAME: &'static str = "06-pinned-mapped";
    const SOLUTION: &'static str = "mmm_streamed_and_pinned.cu";
    const PINNED: bool = true;
    const RULES: &'static [&'static str] = &[
        "waits: results read after the GPU's last work",
        "copies: every matrix once",
        "host memory: no copy from pageable memory",
        "streams: COUNT streams carry a product each",
        "overlap: kernels beside copies, at least 30%",
        "GPU time: at most 1.5x ours",
        "kernel time: at least 0.25x ours",
    ];
}

/// The week, with what it needs of the GPU for our own runs.
pub struct MmmWeek<'m, F: Flavour> {
    mmm: Kernel<'m>,
    main: Stream,
    /// The case being judged, made at its first [`Week::prepare`]: its A_i and B_i go into each of
    /// its runs' input files, and our own runs use its buffers on both sides.
    batch: PerCase<Case, Batch<F::Host>>,
    /// Our kernels' time on the case being judged and, in week 6, our streamed program's
    /// ([`our_times`]), measured at its first run.
    ours: PerCase<Case, (f64, Option<f64>)>,
}

/// `--program mmm-streamed` (or `mmm-streamed-and-pinned`) `--program-source FILE.cu --check`, and
/// its `--list-cases` and `--dry-run`: the student's program, case by case.
pub fn check<F: Flavour>(args: &ProgramArgs) -> Result<()> {
    let Some(built) = super::before_gpu::<MmmWeek<F>>(args)? else {
        return Ok(());
    };
    let gpu = on_the_machine(Gpu::open(0))?;
    let module = on_the_machine(load_mmm(&gpu, BLOCK_SIZE))?;
    let mmm = on_the_machine(Kernel::get(&module, &MmmKernel::Tiled.c_name::<f64>()))?;
    let mut week = on_the_machine(MmmWeek::<F>::new(mmm))?;
    super::check(args, &built, &mut week)
}

impl<'m, F: Flavour> MmmWeek<'m, F> {
    /// `mmm`: the labs' tiled f64 kernel with [`BLOCK_SIZE`] (`load_mmm(gpu, BLOCK_SIZE)`'s module).
    pub fn new(mmm: Kernel<'m>) -> Result<Self> {
        Ok(MmmWeek {
            mmm,
            main: common::check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?,
            batch: PerCase::default(),
            ours: PerCase::default(),
        })
    }
}

/// The rules read from the trace for a case; `pinned` adds host memory and overlap, `ours_ms` (our
/// GPU time on the case, week 6 only: [`Flavour::PINNED`]) the GPU time.
pub fn trace_rules(trace: &Trace, case: &Case, pinned: bool, ours_ms: Option<f64>) -> Vec<Rule> {
    let work = &trace.activities;
    let matrix = 8 * (case.n * case.n) as u64;
    let count = case.count as u64;
    let (to_gpu, to_host) = (
        rules::copied_bytes(work, Direction::HtoD),
        rules::copied_bytes(work, Direction::DtoH),
    );
    let used = rules::streams_with_whole_jobs(work, 2 * matrix, matrix);
    let mut rows = vec![Rule::judged(
        "copies",
        format!("{to_gpu} bytes to the GPU, {to_host} back"),
        format!(
            "{} to the GPU, {} back (each A, B and C once)",
            2 * count * matrix,
            count * matrix
        ),
        to_gpu == 2 * count * matrix && to_host == count * matrix,
    )];
    if pinned {
        rows.push(super::host_memory(trace));
    }
    rows.push(Rule::judged(
        "streams",
        format!("{used} streams carried a whole product (A and B in, a kernel, C back)"),
        format!("at least {} (COUNT)", case.count),
        used >= case.count,
    ));
    if pinned {
        rows.push(if case.count < 2 {
            Rule::not_applicable("overlap", "one product: nothing to overlap")
        } else {
            super::overlap(trace)
        });
    }
    rows.extend(ours_ms.map(|ours_ms| super::gpu_time(trace, ours_ms)));
    rows
}

/// A_0, B_0, A_1, B_1, ... into `path` as little-endian doubles, a matrix at a time.
fn write_inputs<H: HostStorage<f64>>(path: &Path, batch: &Batch<H>) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (a, b) in batch.a.iter().zip(&batch.b) {
        for x in a.data().iter().chain(b.data()) {
            file.write_all(&x.to_le_bytes())?;
        }
    }
    file.flush()
}

/// The results row: every C_i of the file against the CPU's A_i * B_i ([`Batch::check`]: exact up
/// to 1024 x 1024, else Freivalds' test and samples), the worst product named.
fn results<H: HostStorage<f64>>(batch: &mut Batch<H>, output: Result<Vec<u8>, String>, random: &mut Random) -> Rule {
    let wants = "every C_i equal to the CPU's A_i * B_i within the product's error bound";
    let matrix = batch.c[0].data().len();
    let bytes = match output {
        Ok(bytes) if bytes.len() == 8 * matrix * batch.count() => bytes,
        Ok(bytes) => {
            let measured = format!("{} bytes, not {}", bytes.len(), 8 * matrix * batch.count());
            return Rule::judged("results", measured, wants, false);
        }
        Err(why) => return Rule::judged("results", why, wants, false),
    };
    for (c, chunk) in batch.c.iter_mut().zip(bytes.chunks_exact(8 * matrix)) {
        for (x, value) in c.data_mut().iter_mut().zip(chunk.chunks_exact(8)) {
            *x = f64::from_le_bytes(value.try_into().expect("chunks of 8 bytes"));
        }
    }
    let check = batch.check(random);
    Rule::judged(
        "results",
        format!(
            "worst error {:.1e} at ({}, {}) ({}; bound {:.1e}, both of C's largest element)",
            check.error, check.worst.0, check.worst.1, check.method, check.tolerance
        ),
        wants,
        check.passed(),
    )
}

impl<F: Flavour> Week for MmmWeek<'_, F> {
    type Case = Case;
    const NAME: &'static str = F::NAME;
    const SOLUTION: &'static str = F::SOLUTION;
    const FIELDS: &'static str = "COUNT N SEED";
    const RULES: &'static [&'static str] = F::RULES;

    fn builtin() -> Vec<Case> {
        CASES.to_vec()
    }

    fn parse(fields: &[&str]) -> Result<Case, String> {
        let case = Case {
            count: field(fields[0], "COUNT", 1..=MAX_COUNT)?,
            n: field(fields[1], "N", 1..=MAX_N)?,
            seed: field(fields[2], "SEED", 0..=u64::MAX)?,
        };
        let elements = case.count * case.n * case.n;
        if elements > MAX_ELEMENTS {
            return Err(format!(
                "COUNT {} products of N {} x {} are {elements} elements in each of A, B and C, more than the {MAX_ELEMENTS} a case may have",
                case.count, case.n, case.n
            ));
        }
        Ok(case)
    }

    fn line(case: &Case) -> String {
        format!("{} {} {}", case.count, case.n, case.seed)
    }

    fn name(case: &Case) -> String {
        format!("COUNT {}, N {}", case.count, case.n)
    }

    fn about(&self) -> String {
        format!(
            "{}: every product on its own stream, from {} host memory",
            F::PROGRAM,
            F::Host::KIND
        )
    }

    /// The labs' own run of the case (lab-streams' and lab-pinned's mmm-streamed), drawn as their
    /// `--timeline` draws it. It overwrites the batch's C, which [`Week::judge`] fills again from the
    /// program's output.
    fn our_chronogram(&mut self, case: &Case, path: &Path) -> Result<()> {
        let batch = self.batch.get_mut(case).context("our chronogram before prepare")?;
        let streams = new_streams(case.count)?;
        let spans = batch.record_streamed(&self.mmm, &self.main, &streams)?;
        let title = format!(
            "ours: {} products of {} x {} doubles, {} host memory",
            case.count,
            case.n,
            case.n,
            F::Host::KIND
        );
        write_svg(path, false, &title, &batch.lanes(), &spans)?;
        Ok(())
    }

    /// The case's A_i and B_i (made on the GPU's side too, for our own run) into `dir/input.bin`.
    fn prepare(&mut self, case: &Case, dir: &Path) -> Result<Prepared> {
        let batch = self.batch.get_or_try_insert(case, || {
            Batch::<F::Host>::random(case.count, case.n, BLOCK_SIZE, case.seed)
        })?;
        let input = dir.join("input.bin");
        write_inputs(&input, batch).with_context(|| format!("writing {}", input.display()))?;
        let output = dir.join("output.bin");
        let arguments = vec![
            case.count.to_string().into(),
            case.n.to_string().into(),
            input.into_os_string(),
            output.clone().into_os_string(),
        ];
        Ok(Prepared {
            arguments,
            output,
            output_bytes: 8 * (case.count * case.n * case.n) as u64,
        })
    }

    fn judge(&mut self, case: &Case, output: Result<Vec<u8>, String>, trace: &Trace) -> Result<Vec<Rule>> {
        let MmmWeek { mmm, main, batch, ours } = self;
        let batch = batch.get_mut(case).context("judge before prepare")?;
        // For N over 1024, the samples from a seed no program can know, drawn at each run; Freivalds'
        // vectors likewise, at the case's first run (ours's), kept with the batch for its other runs.
        let mut random = Random::new(super::run::unpredictable());
        let mut rows = super::results_and_waits(results(batch, output, &mut random), trace);
        // Ours on the same case, after the program's results were checked (ours overwrites C).
        let (kernels_ms, ours_ms) = *ours.get_or_try_insert(case, || our_times::<F>(mmm, main, batch, &mut random))?;
        rows.extend(trace_rules(trace, case, F::PINNED, ours_ms));
        rows.push(super::kernel_time(trace, kernels_ms));
        Ok(rows)
    }
}

/// Our kernels alone on `batch`, and in week 6 ([`Flavour::PINNED`]) our streamed program, a stream
/// per product: their median times of three runs after a warm-up, in ms, each checked.
fn our_times<F: Flavour>(
    mmm: &Kernel,
    main: &Stream,
    batch: &mut Batch<F::Host>,
    random: &mut Random,
) -> Result<(f64, Option<f64>)> {
    let kernels = batch.time_kernels_only(&mmm.plain, main, Runs::warm(3), random)?;
    anyhow::ensure!(
        kernels.check.passed(),
        "our own kernels failed their check on this case"
    );
    let streamed_ms = if F::PINNED {
        let streams = new_streams(batch.count())?;
        let streamed = batch.time_streamed(mmm, main, &streams, Runs::warm(3), random)?;
        anyhow::ensure!(
            streamed.check.passed(),
            "our own {} failed its check on this case",
            F::PROGRAM
        );
        Some(streamed.timing.median_ms())
    } else {
        None
    };
    Ok((kernels.timing.median_ms(), streamed_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Verdict;

    /// The rules judged again, without a GPU, on traces an H100 recorded (case 1, ten products of
    /// 1024 x 1024, of `--check --chronograms`; results/h100/issue43/final/ has the whole runs) of our
    /// solutions and of week 6's program in pageable memory: every row read from the trace is the row
    /// the check printed there, and the rows that fail are the ones that failed there. Week 5's run
    /// had the GPU time rule still; from pageable memory it is no longer judged.
    #[test]
    fn saved_traces_give_the_rows_their_gpu_run_printed() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
        for (name, pinned, failing) in [
            ("mmm-streamed", false, &[][..]),
            ("mmm-streamed-and-pinned", true, &[]),
            ("mmm-pageable-memory", true, &["host memory", "overlap", "GPU time"]),
        ] {
            let (trace, printed) = crate::program::trace::load_saved(&dir, name).unwrap();
            let ours_ms = Rule::printed_ours_ms(&printed).filter(|_| pinned);
            let mut rows = vec![super::super::waited(&trace)];
            rows.extend(trace_rules(&trace, &CASES[0], pinned, ours_ms));
            let missing = Rule::unprinted(&rows, &printed);
            assert!(missing.is_empty(), "{name}: {missing:?} not in\n{printed}");
            for row in &rows {
                let fails = row.verdict == Verdict::Fail;
                assert_eq!(fails, failing.contains(&row.name), "{name}: {}", row.cells());
            }
            let names: Vec<&str> = rows.iter().map(|row| row.name).collect();
            assert_eq!(names.contains(&"GPU time"), pinned, "{name}: {names:?}");
            assert_eq!(names.contains(&"overlap"), pinned, "{name}: {names:?}");
        }
    }

    /// The results row on outputs made on the CPU: the right products pass; a short file, two
    /// products swapped, one NaN and no file fail, each with what was found.
    #[test]
    fn results_pass_only_the_right_products_in_their_order() {
        let mut batch = Batch::<Vec<f64>>::random_on_host(2, 37, BLOCK_SIZE, 5).unwrap();
        let products: Vec<Vec<f64>> = (0..2)
            .map(|i| matrix::mmm::multiply_on_cpu(&batch.a[i], &batch.b[i]))
            .collect();
        let bytes =
            |c: &[&Vec<f64>]| -> Vec<u8> { c.iter().flat_map(|m| m.iter()).flat_map(|x| x.to_le_bytes()).collect() };
        let mut random = Random::new(1);
        let mut judge = |output: Result<Vec<u8>, String>| results(&mut batch, output, &mut random);
        let right = judge(Ok(bytes(&[&products[0], &products[1]])));
        assert_eq!(right.verdict, Verdict::Pass, "{}", right.cells());
        let mut short = bytes(&[&products[0], &products[1]]);
        short.pop();
        assert!(judge(Ok(short)).cells().contains("21903 bytes, not 21904 | "));
        assert_eq!(judge(Ok(bytes(&[&products[1], &products[0]]))).verdict, Verdict::Fail);
        let mut nan = products[1].clone();
        nan[100] = f64::NAN;
        assert_eq!(judge(Ok(bytes(&[&products[0], &nan]))).verdict, Verdict::Fail);
        let missing = judge(Err("the program wrote no output.bin".into()));
        assert!(missing.cells().contains("wrote no output.bin") && missing.verdict == Verdict::Fail);
    }

    #[test]
    fn a_case_too_large_for_the_gpu_is_refused_with_its_sizes() {
        type W = MmmWeek<'static, StreamedAndPinned>;
        assert!(W::parse(&["64", "1448", "1"]).is_ok());
        let error = W::parse(&["64", "8192", "1"]).unwrap_err();
        assert!(
            error.contains("COUNT 64 products of N 8192 x 8192 are 4294967296 elements"),
            "{error}"
        );
        assert!(W::parse(&["65", "10", "1"]).unwrap_err().contains("COUNT \"65\""));
    }

    /// The same trace judged for a case it does not fit: other sizes move the copies rule, more
    /// products than streams the streams rule.
    #[test]
    fn a_trace_of_other_sizes_fails_the_copies_and_the_streams() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
        let (trace, _) = crate::program::trace::load_saved(&dir, "mmm-streamed-and-pinned").unwrap();
        let case = Case {
            count: 11,
            n: 1024,
            seed: 1,
        };
        let failed: Vec<&str> = trace_rules(&trace, &case, true, Some(5.0))
            .into_iter()
            .filter(|row| row.verdict == Verdict::Fail)
            .map(|row| row.name)
            .collect();
        assert_eq!(failed, ["copies", "streams"]);
    }
}
