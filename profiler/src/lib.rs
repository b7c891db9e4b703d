//! The slides' profiler views, today (issue 23): `--profile` prints nvprof's summary of every kernel,
//! copy and memset the lab ran, recorded by CUPTI (the library under NVIDIA's profilers; nvprof is
//! gone), with the slide's own table beside it where the slides profiled the same program; and it
//! sets every timed window's CUDA-event time against CUPTI's record of the same work (issue 30).
//! `--trace FILE.json` writes the records for ui.perfetto.dev.
//!
//! How work is tied to a window: `common::timing` opens a window per timed loop through
//! `common::timing::observer`, whose observer here pushes an external correlation id around each timed run;
//! CUPTI then tags the driver calls made inside, and their correlation ids lead to the kernels and
//! copies they enqueued. The chronograms of `--timeline` ([`timeline`]) live here too: with a profile,
//! their bars come from the same records.
//!
//! This crate depends on `common` and `kernels`, never on a lab, the matrix or the grading engine;
//! `common` does not know it (the observer is how it watches).

pub mod counters;
pub mod cupti;
pub mod records;
pub mod slides;
pub mod summary;
pub mod timeline;
pub mod trace;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{ensure, Context as _, Result};
use clap::Args;

use common::timing::{Clock, Timing};
use records::{Activity, Record};

/// `--profile` and `--trace`, flattened into every lab's flags.
#[derive(Args, Debug, Clone, Default)]
pub struct ProfileArgs {
    /// Record every kernel, copy and memset with CUPTI and print nvprof's summary (Time(%), Time,
    /// Calls, Avg, Min, Max, Name), the slide's nvprof table beside it where the slides have one, and
    /// each timed window's event time against CUPTI's record of the same work.
    #[arg(long)]
    pub profile: bool,
    /// Write CUPTI's records as a Chrome / Perfetto trace to FILE.json (open it in ui.perfetto.dev):
    /// a track per stream and per copy channel, and the lab's timed windows. Never overwrites a file.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Also read hardware counters with Nsight Compute (ncu): the lab first runs under ncu with the
    /// same flags (slow: ncu replays every kernel), then as usual with --profile, whose report gains
    /// a table of each window's sectors per request, shared-memory wavefronts per load, bank
    /// conflicts, achieved occupancy, local-memory (spill) bytes, DRAM bytes, FP64 pipe use and
    /// threads per warp instruction (32 when no branch splits a warp).
    #[arg(long)]
    pub counters: bool,
}

impl ProfileArgs {
    /// Runs the lab's `work` under the profile the flags ask for, and reports after it succeeded:
    ///
    /// ```ignore
    /// fn main() -> ExitCode { common::cli::run_lab(|args: Args| args.profile.clone().around(|| run(args))) }
    /// ```
    pub fn around(self, work: impl FnOnce() -> Result<()>) -> Result<()> {
        // ncu's run comes first and alone: two profilers in one process do not mix.
        let counters = if self.counters {
            common::gpu::count()?;
            Some(counters::collect()?)
        } else {
            None
        };
        let session = self.start()?;
        let result = work();
        match session {
            Some(session) if result.is_ok() => session.finish(counters),
            Some(session) => {
                // The lab's error is what the user needs to see; the records are dropped.
                let _ = session.cupti.stop();
                STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
                result
            }
            None => result,
        }
    }

    /// Starts recording if either flag was given, before the lab touches the GPU, so every GPU call
    /// is seen.
    fn start(&self) -> Result<Option<Session>> {
        if !self.profile && !self.counters && self.trace.is_none() {
            return Ok(None);
        }
        if let Some(path) = &self.trace {
            check_new_file(path)?;
        }
        // No GPU or no driver is the error to show, not what CUPTI makes of it.
        common::gpu::count()?;
        let cupti = cupti::open()?;
        cupti.start()?;
        *STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(State::default());
        common::timing::observer::install(&Profiler);
        let title = std::env::args_os()
            .map(|arg| arg.to_string_lossy().rsplit('/').next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Some(Session {
            args: self.clone(),
            cupti,
            title,
        }))
    }
}

fn check_new_file(path: &std::path::Path) -> Result<()> {
    ensure!(
        !path.exists(),
        "{} exists; not overwriting it (name another --trace file)",
        path.display()
    );
    if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
        ensure!(
            folder.is_dir(),
            "cannot write {}: the folder {} does not exist",
            path.display(),
            folder.display()
        );
    }
    Ok(())
}

/// A window timed in this run, as far as the timing code knows it.
#[derive(Debug, Default)]
struct Opened {
    label: String,
    timing: Option<Timing>,
}

#[derive(Debug, Default)]
struct State {
    windows: Vec<Opened>,
    /// Chronogram recorders started so far.
    recorders: u64,
    /// The slide program being run, named by [`common::timing::observer::program`].
    programs: Vec<String>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> Option<T> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_mut()
        .map(f)
}

/// What the profiler sees of `common`'s timed loops and named programs (the windows of the report
/// and the trace); installed when a profile starts, it records nothing while none is taken.
struct Profiler;

impl common::timing::observer::Observer for Profiler {
    fn open_window(&self) -> Option<usize> {
        with_state(|state| {
            let number = state.windows.len() + 1;
            let label = state
                .programs
                .last()
                .cloned()
                .unwrap_or_else(|| format!("window {number}"));
            state.windows.push(Opened { label, timing: None });
            number - 1
        })
    }

    fn enter_run(&self, window: usize, run: usize) -> Result<()> {
        push_tag(external_id(window, run))
    }

    fn leave_run(&self) {
        pop_tag();
    }

    fn close_window(&self, window: usize, timing: &Timing) {
        with_state(|state| state.windows[window].timing = Some(timing.clone()));
    }

    fn enter_program(&self, name: &str) -> bool {
        with_state(|state| state.programs.push(name.to_string())).is_some()
    }

    fn leave_program(&self) {
        with_state(|state| state.programs.pop());
    }
}

/// Tags the driver and runtime calls made while the guard lives with external id `id` (nothing for
/// `None`: no profile).
fn tag_calls(id: Option<u64>) -> Result<Option<RunGuard>> {
    let Some(id) = id else { return Ok(None) };
    push_tag(id)?;
    Ok(Some(RunGuard(())))
}

/// Ends its tag when dropped.
pub struct RunGuard(());

impl Drop for RunGuard {
    fn drop(&mut self) {
        pop_tag();
    }
}

/// The driver and runtime calls from now on are tagged with external id `id`.
fn push_tag(id: u64) -> Result<()> {
    cupti::open()?.push_window(id)
}

/// Ends the tag [`push_tag`] began.
fn pop_tag() {
    // A failed pop leaves later calls tagged with this run; the report would show it as a window with
    // more work than it timed, so there is nothing better to do here than go on.
    if let Ok(cupti) = cupti::open() {
        let _ = cupti.pop_window();
    }
}

/// External ids of the chronograms' operations, above every window's: recorder number from bit 24,
/// operation below.
const TAG_BASE: u64 = 1 << 62;
const TAG_BITS: u32 = 24;

/// With a profile, the first external id of a new chronogram's operations ([`crate::timeline`]).
pub fn chronogram_tags() -> Option<u64> {
    with_state(|state| {
        state.recorders += 1;
        TAG_BASE + (state.recorders << TAG_BITS)
    })
}

/// Tags the driver calls made while the guard lives as operation `operation` of the chronogram
/// whose ids start at `first` (nothing without a profile).
pub fn tag(first: Option<u64>, operation: usize) -> Result<Option<RunGuard>> {
    tag_calls(first.map(|first| first + operation as u64))
}

/// For each of the first `operations` operations of the chronogram starting at `first`: CUPTI's
/// first start and last end of its work in ns, or `None` where CUPTI recorded none.
pub fn tagged(first: u64, operations: usize) -> Result<Vec<Option<(u64, u64)>>> {
    cupti::open()?.flush_and_read(|records| spans_of_tags(records, first, operations))
}

fn spans_of_tags(records: &[Record], first: u64, operations: usize) -> Vec<Option<(u64, u64)>> {
    let mut operation_of: BTreeMap<u32, usize> = BTreeMap::new();
    for record in records {
        if let Record::Correlation { correlation, external } = record {
            if (first..first + operations as u64).contains(external) {
                operation_of.insert(*correlation, (external - first) as usize);
            }
        }
    }
    let mut spans: Vec<Option<(u64, u64)>> = vec![None; operations];
    for record in records {
        if let Record::Activity(activity) = record {
            if let Some(&operation) = operation_of.get(&activity.correlation) {
                let span = spans[operation].get_or_insert((activity.start_ns, activity.end_ns));
                *span = (span.0.min(activity.start_ns), span.1.max(activity.end_ns));
            }
        }
    }
    spans
}

/// Runs per window in the external id: a window's runs are counted up to 2^20.
const RUN_BITS: u32 = 20;

fn external_id(window: usize, run: usize) -> u64 {
    ((window as u64) << RUN_BITS) | (run as u64 & ((1 << RUN_BITS) - 1))
}

fn split_external_id(id: u64) -> (usize, usize) {
    ((id >> RUN_BITS) as usize, (id & ((1 << RUN_BITS) - 1)) as usize)
}

/// A timed window, set against CUPTI's records of the work it enqueued.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub label: String,
    pub clock: Option<Clock>,
    pub device: u32,
    pub runs: usize,
    /// The median of what the lab's clock measured (events, or the host clock).
    pub event_ms: f64,
    /// The median over runs of CUPTI's first start to last end of the run's work.
    pub cupti_ms: Option<f64>,
    /// Kernels, copies and memsets per run.
    pub activities_per_run: f64,
    /// CUPTI's first start and last end over all runs (for the trace).
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// The kernels and copies in it, by name, most time first.
    pub names: Vec<String>,
    /// Its kernels, copies and memsets, every run.
    pub work: Vec<Activity>,
}

impl Window {
    /// Event time minus CUPTI's span, in microseconds: what the events count that is not GPU work
    /// (launch latency, gaps where the GPU waited for the host).
    pub fn difference_us(&self) -> Option<f64> {
        self.cupti_ms.map(|cupti| (self.event_ms - cupti) * 1e3)
    }
}

/// Ties activities to windows through the external correlation records.
pub fn windows(opened_labels: &[(String, Option<Timing>)], records: &[Record]) -> (Vec<Window>, Vec<Activity>) {
    let mut run_of_correlation: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let mut activities = Vec::new();
    for record in records {
        match record {
            Record::Correlation { correlation, external } => {
                run_of_correlation.insert(*correlation, split_external_id(*external));
            }
            Record::Activity(activity) => activities.push(activity.clone()),
            Record::Api(_) | Record::Other { .. } => {}
        }
    }
    activities.sort_by_key(|activity| (activity.start_ns, activity.correlation));
    let mut runs: BTreeMap<(usize, usize), Vec<&Activity>> = BTreeMap::new();
    for activity in &activities {
        if let Some(run) = run_of_correlation.get(&activity.correlation) {
            runs.entry(*run).or_default().push(activity);
        }
    }
    let windows = opened_labels
        .iter()
        .enumerate()
        .map(|(index, (label, timing))| {
            let spans: Vec<(u64, u64, usize)> = runs
                .range((index, 0)..(index + 1, 0))
                .map(|(_, work)| {
                    let start = work.iter().map(|a| a.start_ns).min().unwrap_or(0);
                    let end = work.iter().map(|a| a.end_ns).max().unwrap_or(0);
                    (start, end, work.len())
                })
                .collect();
            let work: Vec<Activity> = runs
                .range((index, 0)..(index + 1, 0))
                .flat_map(|(_, work)| work.iter().map(|a| (*a).clone()))
                .collect();
            let cupti_ms = (!spans.is_empty()).then(|| {
                Timing::gpu(spans.iter().map(|(start, end, _)| (end - start) as f64 / 1e6).collect()).median_ms()
            });
            Window {
                label: label.clone(),
                clock: timing.as_ref().map(|t| t.clock),
                device: work.first().map_or(0, |a| a.device),
                runs: timing.as_ref().map_or(0, |t| t.samples_ms.len()),
                event_ms: timing.as_ref().map_or(f64::NAN, Timing::median_ms),
                cupti_ms,
                activities_per_run: if spans.is_empty() {
                    0.0
                } else {
                    spans.iter().map(|s| s.2).sum::<usize>() as f64 / spans.len() as f64
                },
                start_ns: spans.iter().map(|s| s.0).min(),
                end_ns: spans.iter().map(|s| s.1).max(),
                names: summary::lines(&work).into_iter().map(|line| line.name).collect(),
                work,
            }
        })
        .collect();
    (windows, activities)
}

/// A profile being taken; [`Session::finish`] prints the report and writes the trace.
pub struct Session {
    args: ProfileArgs,
    cupti: &'static cupti::Cupti,
    title: String,
}

impl Session {
    /// Stops recording, prints the summary, the slides' tables, the windows and (with `--counters`)
    /// ncu's counters, and writes the trace.
    fn finish(self, counters: Option<(Vec<counters::Launch>, String)>) -> Result<()> {
        let (records, lost) = self.cupti.stop()?;
        let state = STATE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
            .unwrap_or_default();
        let opened: Vec<(String, Option<Timing>)> = state.windows.into_iter().map(|w| (w.label, w.timing)).collect();
        let (windows, activities) = windows(&opened, &records);
        if self.args.profile || self.args.counters {
            println!(
                "\n{}",
                report(
                    &self.title,
                    &activities,
                    &windows,
                    &self.cupti.path.display().to_string(),
                    lost
                )
            );
            println!("{}", api_report(&api_calls(&records, self.cupti)));
        }
        if let Some((launches, version)) = counters {
            println!(
                "{}",
                counters::table(
                    &windows,
                    &counters::per_window(&windows, &activities, &launches),
                    &version
                )
            );
        }
        if let Some(path) = &self.args.trace {
            let trace = trace::trace(&activities, &windows, &self.title);
            let file = common::output::create_output_file(path, false)?;
            serde_json::to_writer(std::io::BufWriter::new(file), &trace)
                .with_context(|| format!("writing {}", path.display()))?;
            println!(
                "Trace of {} kernels, copies and memsets written to {} (open it in ui.perfetto.dev)",
                activities.len(),
                path.display()
            );
        }
        Ok(())
    }
}

/// Name column width in the printed tables.
const NAME_WIDTH: usize = 60;

/// The `--profile` report: the whole run's summary, each slide program's beside the slide's, and the
/// windows against their events.
pub fn report(title: &str, activities: &[Activity], windows: &[Window], source: &str, lost: u64) -> String {
    let mut out = format!(
        "== Profile of `{title}` (CUPTI activity records, {source}) ==\n\nThe whole run, setup and checks included:\n"
    );
    out.push_str(&summary::table(activities, NAME_WIDTH));
    if lost > 0 {
        out.push_str(&format!("CUPTI lost {lost} records: the tables miss some work.\n"));
    }
    let mut shown = Vec::new();
    for window in windows {
        let Some(slide) = slides::table(&window.label) else {
            continue;
        };
        if shown.contains(&window.label) {
            continue;
        }
        shown.push(window.label.clone());
        let work: Vec<Activity> = windows_work(windows, &window.label);
        let runs: usize = windows.iter().filter(|w| w.label == window.label).map(|w| w.runs).sum();
        out.push_str(&format!(
            "\n{}: its timed runs ({runs}) here:\n{}",
            window.label,
            summary::table(&work, NAME_WIDTH)
        ));
        out.push_str(&format!(
            "{} on the slide ({}):\n{}",
            window.label,
            slide.source,
            slide.text()
        ));
    }
    out.push_str(&format!("\n{}", window_table(windows)));
    out
}

/// Every driver and runtime call in `records`, named by CUPTI, with its duration.
fn api_calls(records: &[Record], cupti: &cupti::Cupti) -> Vec<(String, u64)> {
    let mut names: BTreeMap<(u32, u32), String> = BTreeMap::new();
    records
        .iter()
        .filter_map(|record| match record {
            Record::Api(call) => {
                let name = names
                    .entry((call.domain, call.cbid))
                    .or_insert_with(|| cupti.callback_name(call.domain, call.cbid));
                Some((name.clone(), call.end_ns.saturating_sub(call.start_ns)))
            }
            _ => None,
        })
        .collect()
}

/// nvprof's "API calls" section for the whole run (the Korean notes print it under "GPU
/// activities"): the labs call the Driver API (cust binds it), so the names are `cu...`, where a
/// program on the runtime API shows `cuda...`.
pub fn api_report(calls: &[(String, u64)]) -> String {
    format!(
        "The host's API calls, the whole run (CUPTI's driver and runtime API records; the labs call the Driver API, as cust does):\n{}",
        summary::api_table(calls, NAME_WIDTH)
    )
}

/// The activities of every window named `label`.
fn windows_work(windows: &[Window], label: &str) -> Vec<Activity> {
    windows
        .iter()
        .filter(|w| w.label == label)
        .flat_map(|w| w.work.iter().cloned())
        .collect()
}

/// Each window's clock against CUPTI: the median event time, the median span of its work from the
/// first start to the last end, and the difference.
pub fn window_table(windows: &[Window]) -> String {
    let mut out = String::from(
        "Timed windows: the lab's clock against CUPTI's record of the same work (medians over the timed runs)\n\
         | window | clock | runs | work per run | lab ms | CUPTI ms (first start to last end) | difference us | most time in |\n\
         |--------|-------|-----:|-------------:|-------:|-----------------------------------:|--------------:|--------------|\n",
    );
    for window in windows {
        let clock = match window.clock {
            Some(Clock::Gpu) => "events",
            Some(Clock::Host) => "host",
            None => "-",
        };
        let cupti = window
            .cupti_ms
            .map_or("no work recorded".to_string(), |ms| format!("{ms:.4}"));
        let difference = window.difference_us().map_or("-".to_string(), |us| format!("{us:.1}"));
        let names = window
            .names
            .iter()
            .take(2)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!(
            "| {} | {clock} | {} | {:.1} | {:.4} | {cupti} | {difference} | {} |\n",
            window.label,
            window.runs,
            window.activities_per_run,
            window.event_ms,
            summary::cut(&names, 50)
        ));
    }
    let mostly_idle: Vec<&str> = windows
        .iter()
        .filter(|w| w.cupti_ms.is_some_and(|ms| ms < 0.5 * w.event_ms))
        .map(|w| w.label.as_str())
        .collect();
    if !mostly_idle.is_empty() {
        out.push_str(&format!(
            "In {} ({}), CUPTI's records cover less than half of the lab's time: the rest is time the GPU waited \
             (launch latency, the host) or work CUPTI does not record (grids launched from the device).\n",
            if mostly_idle.len() == 1 {
                "one window".to_string()
            } else {
                format!("{} windows", mostly_idle.len())
            },
            summary::cut(&mostly_idle.join(", "), 120)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use records::What;

    fn kernel(start_ns: u64, end_ns: u64, correlation: u32) -> Activity {
        Activity {
            what: What::Kernel {
                grid: [1; 3],
                block: [1; 3],
            },
            name: "k".into(),
            start_ns,
            end_ns,
            device: 0,
            stream: 1,
            correlation,
            channel: 0,
        }
    }

    #[test]
    fn external_ids_carry_the_window_and_the_run() {
        assert_eq!(split_external_id(external_id(7, 3)), (7, 3));
        assert_eq!(split_external_id(external_id(0, 0)), (0, 0));
    }

    #[test]
    fn work_is_tied_to_its_window_and_run_and_spans_are_medians() {
        let records = vec![
            Record::Correlation {
                correlation: 10,
                external: external_id(0, 0),
            },
            Record::Correlation {
                correlation: 11,
                external: external_id(0, 0),
            },
            Record::Correlation {
                correlation: 12,
                external: external_id(0, 1),
            },
            Record::Correlation {
                correlation: 20,
                external: external_id(1, 0),
            },
            Record::Activity(kernel(1_000, 2_000, 10)),
            Record::Activity(kernel(2_500, 3_000, 11)),
            Record::Activity(kernel(5_000, 6_000, 12)),
            Record::Activity(kernel(9_000, 9_400, 20)),
            Record::Activity(kernel(100, 200, 99)), // setup: in no window
            Record::Other { kind: 4 },
        ];
        let opened = vec![
            ("mmm".to_string(), Some(Timing::gpu(vec![2.0e-3, 1.2e-3]))),
            ("window 2".to_string(), Some(Timing::gpu(vec![0.5e-3]))),
        ];
        let (windows, activities) = windows(&opened, &records);
        assert_eq!(activities.len(), 5);
        assert_eq!(activities[0].start_ns, 100, "sorted by start");
        assert_eq!(windows[0].cupti_ms, Some((2.0e-3 + 1.0e-3) / 2.0));
        assert_eq!((windows[0].runs, windows[0].activities_per_run), (2, 1.5));
        assert_eq!((windows[0].start_ns, windows[0].end_ns), (Some(1_000), Some(6_000)));
        assert!((windows[1].difference_us().unwrap() - 0.1).abs() < 1e-9);
        let table = window_table(&windows);
        assert!(
            table.contains("| mmm | events | 2 | 1.5 | 0.0016 | 0.0015 | 0.1 | k |"),
            "{table}"
        );
        assert!(!table.contains("less than half"), "{table}");
    }

    #[test]
    fn a_window_whose_work_was_not_recorded_says_so() {
        let (windows, _) = windows(&[("empty".into(), Some(Timing::gpu(vec![1.0])))], &[]);
        assert_eq!(windows[0].cupti_ms, None);
        assert!(window_table(&windows).contains("| empty | events | 1 | 0.0 | 1.0000 | no work recorded | - |"));
    }

    #[test]
    fn says_where_cupti_saw_less_than_half_of_a_window() {
        let records = vec![
            Record::Correlation {
                correlation: 1,
                external: external_id(0, 0),
            },
            Record::Activity(kernel(0, 10_000, 1)),
        ];
        let (windows, _) = windows(&[("master".into(), Some(Timing::gpu(vec![1.0])))], &records);
        let table = window_table(&windows);
        assert!(table.ends_with("In one window (master), CUPTI's records cover less than half of the lab's time: the rest is time the GPU waited (launch latency, the host) or work CUPTI does not record (grids launched from the device).\n"), "{table}");
    }

    #[test]
    fn chronogram_operations_get_the_span_of_all_their_work() {
        let first = TAG_BASE + (1 << TAG_BITS);
        let records = vec![
            Record::Correlation {
                correlation: 5,
                external: first,
            },
            Record::Correlation {
                correlation: 6,
                external: first,
            },
            Record::Correlation {
                correlation: 7,
                external: first + 2,
            },
            Record::Correlation {
                correlation: 8,
                external: external_id(0, 0),
            },
            Record::Activity(kernel(100, 200, 5)),
            Record::Activity(kernel(150, 400, 6)),
            Record::Activity(kernel(500, 600, 7)),
            Record::Activity(kernel(700, 800, 8)),
        ];
        assert_eq!(
            spans_of_tags(&records, first, 3),
            [Some((100, 400)), None, Some((500, 600))]
        );
    }

    #[test]
    fn without_a_profile_the_hooks_do_nothing() {
        assert!(chronogram_tags().is_none());
        assert!(tag(None, 3).unwrap().is_none());
        use common::timing::observer::Observer as _;
        assert!(Profiler.open_window().is_none());
        assert!(!Profiler.enter_program("mmm"));
        let _program = common::timing::observer::program("mmm");
        let window = common::timing::observer::open_window();
        let run = window.enter_run(0).unwrap();
        drop(run);
        window.close(&Timing::gpu(vec![1.0]));
    }

    #[test]
    fn refuses_to_overwrite_a_trace_file_or_to_write_into_a_missing_folder() {
        let file = std::env::temp_dir().join(format!("profile-test-{}.json", std::process::id()));
        std::fs::write(&file, "{}").unwrap();
        let err = check_new_file(&file).unwrap_err().to_string();
        std::fs::remove_file(&file).unwrap();
        assert!(
            err.ends_with("exists; not overwriting it (name another --trace file)"),
            "{err}"
        );
        let err = check_new_file(std::path::Path::new("/no/such/folder/t.json"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "cannot write /no/such/folder/t.json: the folder /no/such/folder does not exist"
        );
    }
}
