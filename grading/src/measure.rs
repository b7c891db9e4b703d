//! The week's technique measured while the kernel runs (issue 39). What nvcc made says what the code
//! could do; a tile touched only in a branch that never runs, or filled and never read, passes any
//! rule read from it. Hardware counters say what the kernel did: a child runs under Nsight Compute
//! (`ncu`) and launches the student's kernels and then ours on each measured case (week 3: every case
//! of the check whose size tells the technique apart, issue 61), and the lab turns the counters into
//! rule rows with the measured value beside the bound and ours ("global loads per element: 128.0;
//! at most 20.0; ours 8.0"), each rule's row from the first case that breaks it.
//!
//! Where a lock file is named (grade.sh on its machine's GPUs), ours are measured once per grading
//! run and GPU ([`Ours`]) and each check's child launches the student's kernels alone ([`Whose`]),
//! in one ncu process with the children of the other checks that wait for ncu at the same time
//! ([`ncu_batch`]).
//!
//! The counters come from ncu's own file, which the child's output cannot reach. Without ncu, or
//! without permission to read the GPU's counters, every measured rule is MACHINE (issue 45): a rule
//! that was not measured is never passed, and the machine, not the student, kept it from running.
//! Any other measurement that gives no counters is a FAULT.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::case_process::{self, Batch, Deadline, Limits, Slot};
use crate::gpu_lock;
use crate::ncu_batch;
use crate::ptx;
use crate::row::{NoResult, Outcome, Row};
use common::gpu::Gpu;
use cust::module::Module;
use kernels::KernelImage;
use profiler::counters::{self, Launch};

/// What launches a week's kernels in the measured child ([`Measure::run`]).
pub type MeasuredRun<C> = dyn Fn(&KernelImage, &[C], Whose) -> anyhow::Result<()>;

/// A week's measured rules: the cases measured, what ncu reads, and how the launches become rows.
pub struct Measure<'a, C> {
    /// The cases measured, one after another in one run (week 3: every case of the check whose size
    /// tells the technique from the naive body, issue 61), at least one.
    pub cases: Vec<C>,
    /// The rows' names, for `--list-cases` and for rows that could not be measured.
    pub rules: &'a [&'a str],
    /// The metrics ncu reads (Nsight Compute names).
    pub metrics: &'a [&'a str],
    /// Metrics read only where they can count something ([`OptionalMetric`]): a launch holds none
    /// of them where they were not asked for ([`optional`]).
    pub optional_metrics: &'a [OptionalMetric<'a>],
    /// ncu's `--kernel-name` filter (`regex:^mmm_f(32|64)$`): the kernels whose launches count.
    pub kernels: &'a str,
    /// The launches `run` makes per case with [`Whose::Both`]: the student's, then as many of ours
    /// (each once or twice).
    pub launches_per_case: usize,
    /// In the child: on each case, the student's kernels (of the image given) and then ours, or only
    /// the side [`Whose`] names (the whole run holding the GPU alone: [`alone`]).
    pub run: &'a MeasuredRun<C>,
    /// One case's launches ([`Measure::launches_per_case`] of them, in the order `run` made them) into
    /// one row per rule, in the order of `rules`.
    pub judge: &'a dyn Fn(&C, &[Launch]) -> Vec<Row>,
}

/// A metric ncu reads only where it can count something. A GPU has some only from an architecture on
/// (issue 61: `cp.async` from sm_80, TMA from sm_90), and ncu refuses a metric the GPU lacks; some
/// cost ncu many passes, and count instructions a kernel can only run where its PTX has them (issue
/// 65: on an H200 ncu took 120 ms a week-3 kernel with texture, surface and TMA requests among the
/// metrics and 10 ms without them, `results/h200/issue65/run-43/run-43.log`). A kernel whose GPU or
/// PTX rules a metric out cannot do what it counts: 0 ([`optional`]). A measured run whose metrics
/// differ from the week's usual ones runs with no other of the grading run alive
/// ([`gpu_lock::metric_set`]). Where no lock file is named (a student's own `--check`, a Slurm task,
/// the course server) the child launches ours too, whose PTX is unknown, and reads them all.
#[derive(Debug, Clone, Copy, Hash)]
pub struct OptionalMetric<'a> {
    /// The Nsight Compute name.
    pub metric: &'a str,
    /// The architecture the GPU has it from (75: every GPU of the course's).
    pub from_arch: u32,
    /// The PTX instructions it counts (`tex`, `cp.async.bulk`: [`ptx::mentions`]): read only where the
    /// kernels' module names one of them, or where the module's PTX is unknown (ours). None: wherever
    /// the GPU has it.
    pub opcodes: &'a [&'a str],
}

impl OptionalMetric<'_> {
    /// Whether ncu reads it on a GPU of architecture `arch` (none: unknown) for kernels of the module
    /// whose PTX is `ptx` (none: unknown).
    fn asked(&self, arch: Option<u32>, ptx: Option<&str>) -> bool {
        let on_the_gpu = arch.is_some_and(|arch| arch >= self.from_arch);
        let in_the_code = self.opcodes.is_empty() || ptx.is_none_or(|ptx| ptx::mentions(ptx, self.opcodes));
        on_the_gpu && in_the_code
    }
}

/// Whose kernels a measured child launches (`--measure-whose`). Where a lock file is named (grade.sh
/// on its machine's GPUs, whatever its jobs), ours are measured once per grading run ([`Ours`]) and
/// each check's child launches the student's alone:
/// on an H200, ncu read a week-3 check's twelve kernels in six passes each, and ours were half of
/// them (issue 65, run 25).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Whose {
    /// The student's kernels, then ours, on each case: where no lock file is named (a student's own
    /// `--check`, a Slurm task, the course server's workers).
    #[default]
    Both,
    /// The student's alone.
    Theirs,
    /// Ours alone: the student's module is never loaded.
    Ours,
}

impl Whose {
    /// Whether the student's kernels run.
    pub fn theirs(self) -> bool {
        self != Whose::Ours
    }

    /// Whether ours run.
    pub fn ours(self) -> bool {
        self != Whose::Theirs
    }

    /// The modules a measured child launches, in order: the student's (`student`, loaded only where
    /// it runs: a load that fails is the student's), then `ours`.
    pub fn modules(self, gpu: &Gpu, student: &KernelImage, ours: Module) -> anyhow::Result<Vec<Module>> {
        let mut modules = Vec::with_capacity(2);
        if self.theirs() {
            modules.push(gpu.load(student)?);
        }
        if self.ours() {
            modules.push(ours);
        }
        Ok(modules)
    }

    /// The value of `--measure-whose`.
    pub fn flag(self) -> &'static str {
        match self {
            Whose::Both => "both",
            Whose::Theirs => "theirs",
            Whose::Ours => "ours",
        }
    }
}

/// In the measured child: its run (`run`: its modules loaded, its inputs copied and its kernels
/// launched, ncu replaying each launch), holding the GPU alone where checks share it, for
/// [`ALONE_AT_MOST`] at most; past that, beside the others. A lock that cannot be taken is the
/// machine's error. The child makes its CUDA context and ncu's first launch ([`first_launch`]) before,
/// and destroys the context after, beside other checks' work, as a case's child does; ncu's own start
/// and its report run beside them too.
///
/// Why from before the first launch of the week's kernels to after the last, and not around each
/// launch (issue 65): ncu keeps the GPU's counters for one process at a time, with a lock of its own
/// (`nsight_compute/lock.<the GPU's UUID>` in its temporary folder), which a process holds from a
/// measured launch to its end, or gives up between launches where another process waits for it
/// (`/proc/locks`, runs 51 and 55). With the GPU held around each launch, a process that had launched
/// once kept ncu while it waited for the GPU, and the holder of the GPU waited for ncu until its
/// lease ran out: 32 jobs on one H200 (runs 46 to 48) held the GPU 60 s a check, one after another.
/// In its turn ([`gpu_lock::ncu_turn`]), with ncu's first launch made before the GPU is taken, the
/// child always has ncu first, and no holder of the GPU waits for it.
pub fn alone<R>(run: impl FnOnce() -> anyhow::Result<R>) -> anyhow::Result<R> {
    if !gpu_lock::named() {
        return run();
    }
    let lease = gpu_lock::Lease::take(gpu_lock::Mode::Exclusive, ALONE_AT_MOST);
    let _alone = crate::exit::on_the_machine(lease)?;
    run()
}

/// The place of this process's measured run in its batch, from 1 (`crate::ncu_batch::serve`; 1 for
/// a measured child alone): the blocks of its [`first_launch`], which ncu's file gives as the
/// launch's grid size, so that each run's part of the file says whose it is
/// ([`ncu_batch::split`]).
pub(crate) static PLACE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// The kernel that bears ncu's preparation of a process's first measured launch
/// (`kernels/cuda/first_launch.cu`): measured with the week's kernels, its launch is not theirs
/// ([`read_launches`] leaves it out).
pub const FIRST_LAUNCH_KERNEL: &str = "ncu_first_launch";

/// `name` as a regular expression that matches it as written: its metacharacters behind a backslash.
fn escaped(name: &str) -> String {
    let mut pattern = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// In the measured child, in its turn with ncu ([`gpu_lock::ncu_turn`]) and before it takes the GPU
/// ([`alone`]): ncu's first measured launch in this process, of a kernel of ours that does nothing
/// ([`FIRST_LAUNCH_KERNEL`]). ncu prepares it for 0.6 to 1.0 s on an H200, where later launches take
/// 0.01 s (issue 65, run 54, `ncu-first-launch.sh`). Made here, that time is no longer a hold of the
/// GPU, and no holder of the GPU waits for ncu. It counts against the measured child's limits, as
/// it did inside the GPU's hold: a launch that never ends (ncu's lock kept by a process outside the
/// grading run) ends the child at its silence limit, and with it its turn. The student's module is
/// not loaded yet: a failure is the machine's.
pub fn first_launch(gpu: &Gpu) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use cust::launch;
    use cust::stream::{Stream, StreamFlags};
    let launched = (|| {
        let module = gpu.load(&kernels::FIRST_LAUNCH)?;
        let kernel = common::check_cuda!(module.get_function(FIRST_LAUNCH_KERNEL))?;
        let stream = common::check_cuda!(Stream::new(StreamFlags::NON_BLOCKING, None))?;
        let blocks = PLACE.load(std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the kernel takes no parameters and touches no memory; the stream is waited for
        // before the module it came from is dropped.
        common::check_cuda!(unsafe { launch!(kernel<<<blocks, 1, 0, stream>>>()) })?;
        anyhow::Ok(common::check_cuda!(stream.synchronize())?)
    })();
    crate::exit::on_the_machine(launched.context("ncu's first launch, of a kernel of ours"))
}

/// How long the measured run may take once it may start: ncu replays each kernel a few times
/// (seconds in all). Before that it waits for the cases ([`wait_for_the_cases`]), saying so every few
/// seconds, so silence still means a hang; its total limit then adds the longest the cases may take.
pub const LIMITS: Limits = Limits {
    silence: Duration::from_secs(120),
    total: Duration::from_secs(300),
};

/// How long the measured child holds the GPU alone at most where checks share it ([`alone`]): ncu
/// replays each kernel a few times, and a kernel that prints from each of a million threads takes
/// seconds a launch; past this, the rest is measured beside others' work (ncu profiles this process's
/// launches only).
pub const ALONE_AT_MOST: Duration = Duration::from_secs(60);

/// While the cases run, the measured child waits: a fresh ncu and the lab under it take about 2 s to
/// start (an H100 machine), which then overlap the cases (issue 39: a check within 5 s).
const HEARTBEAT: Duration = Duration::from_secs(10);

impl<C> Measure<'_, C> {
    /// The measured child: ncu around `program` (this lab, with the measuring flags) with this
    /// week's kernels and the metrics for kernels of the module whose PTX is `ptx` (none: unknown),
    /// its counters written to `csv` and its row to `result`. Where `batched` (the student's kernels
    /// alone, where checks share the GPU) and the metrics are the week's usual ones, it may be
    /// measured in one ncu process with other checks' ([`ncu_batch`]).
    pub fn child(
        &self,
        program: &Command,
        csv: PathBuf,
        result: PathBuf,
        ptx: Option<&str>,
        batched: bool,
    ) -> Result<MeasuredChild, NoResult> {
        let arch = common::gpu::first_gpu_arch();
        let metrics = self.metrics_for(arch, ptx);
        // `metrics_for` puts the optional ones after the week's own.
        let optional = metrics[self.metrics.len()..]
            .iter()
            .map(|metric| metric.to_string())
            .collect();
        let usual = self.usual(arch, &metrics);
        // In a batch, a kernel that reached the host's pageable memory would reach the process that
        // runs the next submissions; alone, only its own.
        let batched = batched && usual && !common::gpu::reaches_pageable_memory();
        let request = ncu_batch::Request {
            ncu: self.ncu()?,
            options: self.ncu_options(),
            metrics: metrics.join(","),
            program: program.get_program().to_owned(),
            args: program.get_args().map(OsStr::to_owned).collect(),
            result: result.clone(),
        };
        Ok(MeasuredChild {
            under_ncu: request.under_ncu(&csv),
            batch: batched.then_some(request),
            usual,
            csv,
            result,
            optional,
        })
    }

    /// Whether `metrics` (from [`Measure::metrics_for`]) are the week's usual ones on a GPU of
    /// architecture `arch`: those of a kernel whose PTX has none of the optional metrics'
    /// instructions ([`MeasuredChild::usual`]). Given the metrics, not the PTX, which is read once.
    pub fn usual(&self, arch: Option<u32>, metrics: &[&str]) -> bool {
        metrics == self.metrics_for(arch, Some(""))
    }

    /// Nsight Compute, where it is; none is the machine's.
    fn ncu(&self) -> Result<PathBuf, NoResult> {
        counters::ncu().map_err(|_| NoResult::Machine("these rules need Nsight Compute (ncu) to read the GPU's counters, and none was found ($NCU, PATH, $CUDA_PATH/bin, /usr/local/cuda/bin)".to_string()))
    }

    /// ncu's options for this week's kernels. Counts of instructions and requests need neither
    /// locked clocks nor flushed caches: ncu leaves the GPU's clocks alone and saves the time of the
    /// flushes.
    fn ncu_options(&self) -> Vec<String> {
        ["--clock-control", "none", "--cache-control", "none", "--kernel-name"]
            .into_iter()
            .map(str::to_string)
            .chain([self.kernels_with_first_launch()])
            .collect()
    }

    /// ncu's `--kernel-name` filter: the week's kernels ([`Measure::kernels`], a name or a `regex:`)
    /// and [`FIRST_LAUNCH_KERNEL`].
    fn kernels_with_first_launch(&self) -> String {
        let week = match self.kernels.strip_prefix("regex:") {
            Some(pattern) => pattern.to_string(),
            None => format!("^{}$", escaped(self.kernels)),
        };
        format!("regex:^{FIRST_LAUNCH_KERNEL}$|{week}")
    }

    /// Where checks share a GPU: the file in which our kernels' launches on the measured cases (ncu's
    /// own file) are kept for every check of the grading run on that GPU ([`Ours`]), beside its lock
    /// file ([`gpu_lock::path`]), named by what they depend on: the lab, its case set (`case_set`,
    /// its hash), the kernels and metrics measured. None where no lock is named.
    pub fn ours_file(&self, lab: &str, case_set: &str) -> Option<PathBuf> {
        let key = (lab, case_set, self.kernels, self.metrics, self.optional_metrics);
        gpu_lock::beside_keyed("ours", (key, self.cases.len(), self.launches_per_case), ".csv")
    }

    /// The metrics ncu reads on a GPU of architecture `arch` (86 for compute capability 8.6) for
    /// kernels of the module whose PTX is `ptx`: every one of [`Measure::metrics`], and those of
    /// [`Measure::optional_metrics`] that can count something there. None of the optional ones where
    /// the architecture is unknown.
    pub fn metrics_for(&self, arch: Option<u32>, ptx: Option<&str>) -> Vec<&str> {
        let optional = self
            .optional_metrics
            .iter()
            .filter(|metric| metric.asked(arch, ptx))
            .map(|metric| metric.metric);
        self.metrics.iter().copied().chain(optional).collect()
    }

    /// The rule rows from what [`launches`] measured; where nothing was, rows that say why: MACHINE
    /// where the machine kept ncu from measuring, else FAULT. Each rule's row is that of the first
    /// case that breaks it, else that of the last case (the largest, where the week orders them).
    pub fn rows(&self, measured: Result<Vec<Launch>, NoResult>) -> Vec<Row> {
        let expected = self.launches_per_case * self.cases.len();
        let all = measured.and_then(|launches| {
            if launches.len() == expected && expected > 0 {
                Ok(launches)
            } else {
                Err(NoResult::Fault(format!(
                    "ncu measured {} launches of {}, not the {expected} the check made",
                    launches.len(),
                    self.kernels
                )))
            }
        });
        let not_measured = |why: &NoResult| match why {
            NoResult::Machine(why) => NoResult::Machine(format!("not measured: {why}")),
            other => NoResult::Fault(format!("not measured: {}", other.why())),
        };
        match all {
            Ok(launches) => {
                let judged: Vec<Vec<Row>> = self
                    .cases
                    .iter()
                    .zip(launches.chunks(self.launches_per_case))
                    .map(|(case, launches)| (self.judge)(case, launches))
                    .collect();
                (0..self.rules.len())
                    .filter_map(|rule| {
                        let mut rows = judged.iter().filter_map(|rows| rows.get(rule));
                        rows.clone().find(|row| !row.passed()).or(rows.next_back()).cloned()
                    })
                    .collect()
            }
            Err(why) => self
                .rules
                .iter()
                .map(|rule| Row {
                    case: rule.to_string(),
                    result: Err(not_measured(&why)),
                })
                .collect(),
        }
    }
}

/// Words that begin the reason of a measured rule not run on a student's own machine ([`at_grading`]).
pub const AT_GRADING: &str = "measured when the course grades it";

/// A student's own `--check` (not grade.sh's, which asks for the closing mark): the measured rules the
/// machine kept from running (no ncu, or no permission for the GPU's counters on a laptop) are not run
/// (`-`) rather than MACHINE, so the rest of the check stands and passes where it passes; grading
/// runs them where the counters can be read. Every other row stays as it is.
pub fn at_grading(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .map(|row| match row.result {
            Err(NoResult::Machine(why)) => Row {
                result: Err(NoResult::NotRun(format!("{AT_GRADING}; here: {why}"))),
                ..row
            },
            _ => row,
        })
        .collect()
}

/// Runs the measured `child` (ncu around it, from [`Measure::child`]) within `limits` and before
/// `deadline`, apart from measured runs of other metrics ([`gpu_lock::metric_set`]), and reads the
/// counters ncu wrote to its file. No permission for the counters (ncu's own file says so, which the
/// child's output cannot reach), a MACHINE row from the child (a SIGKILL the check did not send among
/// them) and a report missing or unreadable after a run that ended well are the machine's; a run that
/// failed or ran past its time is a fault (the same kernel runs in the cases, so a kernel that hangs
/// or crashes fails there too, and cannot hide behind MACHINE here).
fn launches(child: MeasuredChild, limits: Limits, deadline: Option<Deadline>) -> Result<Vec<Launch>, NoResult> {
    let MeasuredChild {
        under_ncu,
        batch,
        csv,
        result,
        optional,
        usual,
    } = child;
    let mode = match usual {
        true => gpu_lock::Mode::Shared,
        false => gpu_lock::Mode::Exclusive,
    };
    let _set = gpu_lock::metric_set(mode).map_err(|err| NoResult::Machine(format!("{err:#}")))?;
    // Measured in a batch where it may be and its time is not up (else the run alone would stop at
    // once, as the check's --time-limit says); where the batch could not measure it, alone. Its own
    // run in the batch counts against the --time-limit, as it would alone.
    let in_time = deadline.is_none_or(|deadline| !deadline.passed());
    let batched = batch
        .as_ref()
        .filter(|_| in_time)
        .map(ncu_batch::measured)
        .transpose()?;
    let (row, text) = match batched.flatten() {
        Some(text) => match deadline.filter(Deadline::passed) {
            Some(deadline) => (Err(NoResult::Fault(case_process::out_of_time(deadline.seconds))), text),
            None => (Ok(()), text),
        },
        None => alone_under_ncu(under_ncu, &result, &csv, limits, deadline),
    };
    if let Some(line) = text.lines().find(|line| line.contains("ERR_NVGPUCTRPERM")) {
        return Err(NoResult::Machine(format!(
            "ncu may not read this GPU's counters here ({}); an administrator can allow it",
            line.trim()
        )));
    }
    match row {
        Err(NoResult::Machine(why)) => return Err(NoResult::Machine(format!("the measured run: {why}"))),
        Err(why) => {
            return Err(NoResult::Fault(format!(
                "the measured run under ncu failed: {}",
                why.why()
            )))
        }
        Ok(_) => {}
    }
    // The run ended well and ncu's report is missing or unreadable: ncu's own failure (issue 60).
    read_launches(&text, &optional).map_err(|err| NoResult::Machine(format!("ncu's counters could not be read: {err}")))
}

/// A measured child (`under_ncu`) run in an ncu process of its own, within `limits` and before
/// `deadline`: whether it wrote its row to `result`, and the file ncu wrote (`csv`; empty where there
/// is none). A row left by a batch that could not measure it ([`ncu_batch`]) is removed first, so
/// that only this run's row is read.
fn alone_under_ncu(
    under_ncu: Command,
    result: &Path,
    csv: &Path,
    limits: Limits,
    deadline: Option<Deadline>,
) -> (Result<(), NoResult>, String) {
    let _ = std::fs::remove_file(result);
    let slot = [Slot {
        case: "measured".to_string(),
        result: result.to_path_buf(),
    }];
    let batch = Batch {
        cases: &slot,
        limits,
        deadline,
        finished: None,
        boundary: "",
        others: false,
    };
    let run = case_process::run(under_ncu, &batch, |_| {}).remove(0);
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    (run.row.result.map(|_| ()), text)
}

/// The launches of the week's kernels in ncu's file `text` (not [`FIRST_LAUNCH_KERNEL`]'s); an
/// `optional` metric (one asked for: [`OptionalMetric`]) that ncu did not give is NaN, which fails
/// its rule, never 0 ([`optional`] reads 0 only for those not asked for).
fn read_launches(text: &str, optional: &[String]) -> anyhow::Result<Vec<Launch>> {
    let mut launches = counters::parse_csv(text)?;
    launches.retain(|launch| launch.kernel != FIRST_LAUNCH_KERNEL);
    for launch in &mut launches {
        for metric in optional {
            launch.values.entry(metric.clone()).or_insert(f64::NAN);
        }
    }
    Ok(launches)
}

/// The student's launches and ours, measured apart, in the order one child launching both makes
/// them: on each case, its `per_side` of the student's, then its `per_side` of ours. A count that is
/// not the same on both sides is a fault.
pub fn interleave(theirs: Vec<Launch>, ours: Vec<Launch>, per_side: usize) -> Result<Vec<Launch>, NoResult> {
    if theirs.len() != ours.len() || per_side == 0 {
        return Err(NoResult::Fault(format!(
            "ncu measured {} launches of the student's kernels and {} of ours, not as many",
            theirs.len(),
            ours.len()
        )));
    }
    let cases = theirs.chunks(per_side).zip(ours.chunks(per_side));
    Ok(cases
        .flat_map(|(theirs, ours)| theirs.iter().chain(ours))
        .cloned()
        .collect())
}

/// A measured child ready to start: ncu around this lab with the measuring flags, the file ncu
/// writes its counters to, and the file the child's row goes to.
pub struct MeasuredChild {
    pub under_ncu: Command,
    /// What a batch of measured children needs of it, where it may be measured in one
    /// ([`Measure::child`], [`ncu_batch`]).
    pub batch: Option<ncu_batch::Request>,
    pub csv: PathBuf,
    pub result: PathBuf,
    /// The optional metrics ncu was asked for ([`OptionalMetric`]).
    pub optional: Vec<String>,
    /// Whether it reads the week's usual metrics, those of a kernel whose PTX names none of the
    /// optional ones' instructions: it runs beside other such runs, and one that reads others runs
    /// with no other alive ([`gpu_lock::metric_set`]).
    pub usual: bool,
}

/// Our kernels' launches kept for the checks that share a GPU ([`ours_once`]).
pub struct Ours {
    /// Where they are kept ([`Measure::ours_file`]).
    pub file: PathBuf,
    /// The child that measures them where they are not kept yet, writing ncu's file to
    /// [`Ours::partial`].
    pub child: MeasuredChild,
    /// Our launches per case, as many as the student's: half of [`Measure::launches_per_case`].
    pub per_case: usize,
    /// The cases measured.
    pub cases: usize,
}

impl Ours {
    /// The file the child measuring ours writes before it is kept as `file`.
    pub fn partial(file: &Path) -> PathBuf {
        gpu_lock::beside(file, ".partial")
    }
}

/// What a check measures: the measured child ([`Whose::Both`] where no lock file is named, else
/// [`Whose::Theirs`] with [`Ours`]) within `limits`, before `deadline`.
pub struct Measuring {
    pub child: MeasuredChild,
    pub ours: Option<Ours>,
    pub limits: Limits,
    pub deadline: Option<Deadline>,
}

impl Measuring {
    /// Every launch measured, in the order one child launching both sides makes them
    /// ([`interleave`]). Needs no borrow of the week's [`Measure`], so it runs on a thread of its own
    /// beside the cases.
    pub fn run(self) -> Result<Vec<Launch>, NoResult> {
        let Some(ours) = self.ours else {
            return launches(self.child, self.limits, self.deadline);
        };
        let per_case = ours.per_case;
        let ours = ours_once(ours)?;
        interleave(launches(self.child, self.limits, self.deadline)?, ours, per_case)
    }
}

/// Our kernels' launches on the measured cases from [`Ours::file`], where an earlier check of the
/// grading run measured them (our solution's, before the class: the grader checks it on every GPU
/// first); else measured now by [`Ours::child`] (which launches ours alone, [`Whose::Ours`]) within
/// [`LIMITS`], whatever the check's `--time-limit`, and kept there for the checks after this one.
/// One check at a time reads or measures; the others wait, and their wait is no time of theirs
/// ([`gpu_lock::one_at_a_time`]). Counts of instructions and requests are the same on every launch
/// of the same kernel on the same case; ours run in a child that loads no student's code, so nothing
/// a submission does reaches another's measured rules. Ours not measured is the machine's, never
/// the student's.
fn ours_once(ours: Ours) -> Result<Vec<Launch>, NoResult> {
    let expected = ours.per_case * ours.cases;
    let lock = gpu_lock::beside(&ours.file, ".lock");
    let _one = gpu_lock::one_at_a_time(&lock).map_err(|err| NoResult::Machine(format!("{err:#}")))?;
    let kept = std::fs::read_to_string(&ours.file)
        .ok()
        .and_then(|text| read_launches(&text, &ours.child.optional).ok());
    if let Some(launches) = kept.filter(|launches| launches.len() == expected) {
        return Ok(launches);
    }
    let partial = ours.child.csv.clone();
    let launches = launches(ours.child, LIMITS, None)
        .map_err(|why| NoResult::Machine(format!("measuring our kernels: {}", why.why())))?;
    if launches.len() != expected {
        return Err(NoResult::Machine(format!(
            "ncu measured {} launches of our kernels, not {expected}",
            launches.len()
        )));
    }
    // Where it cannot be kept, the next check measures ours again.
    let _ = std::fs::rename(&partial, &ours.file);
    Ok(launches)
}

/// In the measured child, before it touches the GPU: waits until `go` exists (the parent's cases are
/// done), saying so on stderr every [`HEARTBEAT`]; gives up when the parent `lab` is gone.
pub fn wait_for_the_cases(go: &Path, lab: u32) -> anyhow::Result<()> {
    let mut said = std::time::Instant::now();
    while !go.exists() {
        // SAFETY: kill(2) with signal 0 only asks whether the process exists; no memory is involved.
        if unsafe { libc::kill(lab as libc::pid_t, 0) } != 0 {
            anyhow::bail!("the check that started this measurement (process {lab}) is gone");
        }
        if said.elapsed() >= HEARTBEAT {
            eprintln!("measured run: waiting for the cases to finish");
            said = std::time::Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Creates `go` when dropped: the measured child starts on every way out of the cases.
pub struct Go<'a>(pub &'a Path);

impl Drop for Go<'_> {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, b"");
    }
}

/// The child's row after a measured run: that it ran to the end (the counters are in ncu's file).
pub fn ran(case: &str) -> Row {
    Row {
        case: case.to_string(),
        result: Ok(Outcome {
            wrong: 0,
            elements: 0,
            first: None,
            times: None,
            finding: None,
        }),
    }
}

/// `metrics` of `launch` summed, per warp, in a thread's units over `count` (elements of C, pixels):
/// x 32 / count, so that a kernel whose every thread loads once per element measures 1.
pub fn per_thread(launch: &Launch, metrics: &[&str], count: f64) -> f64 {
    metrics.iter().map(|metric| launch.value(metric)).sum::<f64>() * 32.0 / count
}

/// The value of a metric of [`Measure::optional_metrics`]: 0 where ncu was not asked for it because
/// the GPU or the kernels' PTX rules it out (the kernel cannot do what it counts); NaN where it was
/// asked for and ncu gave none ([`read_launches`]).
pub fn optional(launch: &Launch, metric: &str) -> f64 {
    launch.values.get(metric).copied().unwrap_or(0.0)
}

/// A bound on a measured value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

/// A measured rule's row for one kernel: `value` against `bound`, shown whether it holds or not,
/// with `why` (what the technique needs) and ours beside it. A value that is no number fails.
pub fn rule_row(case: &str, kernel: &str, value: f64, bound: Bound, why: &str, ours: f64) -> Row {
    let (holds, expected) = match bound {
        Bound::AtMost(limit) => (value <= limit, format!("at most {limit:.1}")),
        Bound::AtLeast(limit) => (value >= limit, format!("at least {limit:.1}")),
    };
    let first = crate::row::FirstWrong {
        position: kernel.to_string(),
        value: format!("{value:.1}"),
        expected: format!("{expected} ({why}; ours {ours:.1})"),
        computed_by: "hardware counters (ncu)".to_string(),
    };
    Row {
        case: case.to_string(),
        result: Ok(Outcome {
            wrong: usize::from(!holds),
            elements: 1,
            first: Some(first),
            times: None,
            finding: None,
        }),
    }
}

#[cfg(test)]
mod tests;
