//! Issue 65, item 3: the measured children of checks that share a GPU, measured by one Nsight
//! Compute process in turn. ncu prepares its first measured launch in every process it starts: 0.6 s
//! alone on an H200, 1.9 s beside 16 jobs (runs 54 and 56), and works about 2 s more under its
//! per-GPU lock, so one ncu process a check measured at most about 20 checks a minute. In one
//! process, each submission in a CUDA context of its own, a week-3 submission took 0.30 s, and its
//! counters were those of a process of its own (`results/h200/issue65/ncu-batch.sh`, run 57).
//!
//! The checks' side ([`measured`]), in the order it runs: a check whose measured child may be
//! batched ([`crate::measure::Measure::child`]: the student's kernels alone, the week's usual
//! metrics, a GPU whose kernels cannot reach the host's pageable memory) writes its request into the
//! bus of its GPU, lab and metrics ([`Bus`], beside the GPU's lock file) and takes the bus's lock (a
//! wait of its, which is no time of its own). Its answer may be there already; else it leads: one ncu
//! process runs this lab with [`FLAG`] over every request waiting ([`Bus::lead`], [`serve`]), each
//! request as the measured child would have run it, in a context of its own made and destroyed as
//! the child's, the batch holding its turn with ncu throughout; ncu's file is split at each
//! request's first launch, whose blocks are its place in the batch ([`split`]), and each request's
//! part is its answer, with its own run's time, which counts against its check's `--time-limit` as
//! it would alone. Nothing of a request leaves the batch where ncu did not measure it as its own
//! child would have:
//! - the first request whose run did not end well (its kernel faulted or hung, or the machine
//!   failed) ends what the batch gives: it is measured alone, as before, and the requests after it
//!   go to the next batch;
//! - where ncu's file has no part in its place for a request that ran well (a batch stopped at its
//!   limits has no file: ncu writes it when the lab ends), those requests go to the next batch too;
//!   where every run ended well and there is still none, all are measured alone.
//!
//! Measured alone, a request gets the verdict it always had; a submission can only cost the others
//! of its batch a second ncu start, or, where its kernel hangs, the measured child's silence limit,
//! which their waits do not count against their `--time-limit` (the hung request then meets the
//! same limit again alone). No two requests' CUDA contexts are alive at once: each is destroyed
//! before the next is made, and ncu's file shows each part in a context of its own ([`split`]).
//! Nothing of a request runs on the host but our lab.
//!
//! On an H200 with 16 jobs (run 60, this design before a review's fixes), 44 week-3 checks were
//! measured in 8 batches of up to 15, and the class went from 14.4 checks a minute (run 56) to 18.4,
//! with the verdicts of one job at a time.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};

use crate::case_process::{self, Batch, Limits, Slot};
use crate::gpu_lock;
use crate::measure::{FIRST_LAUNCH_KERNEL, LIMITS};
use crate::row::NoResult;

/// The hidden flag of a lab run as a batch: `lab --measure-batch LIST`, LIST naming the requests'
/// files ([`joined`], [`serve`]).
pub const FLAG: &str = "--measure-batch";

/// The most requests one ncu process measures: a batch's file stays small, and a request that ends
/// a batch leaves few for the next one.
const MOST: usize = 64;

/// The metric ncu gives every launch with the CUDA context it ran in.
const CONTEXT: &str = "launch__context_id";

/// The metric ncu gives every launch with its blocks: a first launch's is its request's place in
/// the batch ([`crate::measure::PLACE`]).
const PLACE: &str = "launch__grid_size";

/// A measured child as a batch runs it: ncu with its options and metrics, and the lab with the
/// measuring flags, whose row goes to `result`.
#[derive(Debug, Clone)]
pub struct Request {
    pub ncu: PathBuf,
    pub options: Vec<String>,
    pub metrics: String,
    /// This lab.
    pub program: OsString,
    /// Its measuring flags (`--check-case`, `--measure-technique`, ...).
    pub args: Vec<OsString>,
    pub result: PathBuf,
}

impl Request {
    /// ncu around the lab with `args`, its counters written to `csv`.
    fn command(&self, csv: &Path, args: &[OsString]) -> Command {
        let options: Vec<&str> = self.options.iter().map(String::as_str).collect();
        let mut command = profiler::counters::under_ncu(&self.ncu, &options, &self.metrics, csv);
        command.arg(&self.program).args(args);
        command
    }

    /// The request run in an ncu process of its own, its counters written to `csv`.
    pub fn under_ncu(&self, csv: &Path) -> Command {
        self.command(csv, &self.args)
    }
}

/// The checks' side: `request` measured in a batch, or measured by a batch already; its part of
/// ncu's file, its own run's time taken back out of the check's waits ([`gpu_lock::not_a_wait`]).
/// ncu's start, paid once a batch, is in no request's time: near its `--time-limit` a check measured
/// in a batch may end in time where alone it would not (by 0.6 to 2 s on an H200, runs 54 and 56).
/// None where no lock file is named, or where the batch could not measure it: the check then
/// measures it alone. Where the bus's lock cannot be taken after a batch has taken the request, the
/// machine's error: the batch may still be running it, into the same row's file.
pub fn measured(request: &Request) -> Result<Option<String>, NoResult> {
    let Some(bus) = Bus::of(request) else {
        return Ok(None);
    };
    let Ok(id) = bus.enqueue(request) else {
        return Ok(None);
    };
    let answer = match gpu_lock::one_at_a_time(&bus.dir.join("lock")) {
        // The bus's lock, waited for as for the GPU: the batches of others are no time of this
        // check's.
        Ok(_bus) => {
            if bus.answer(&id).is_none() && bus.queued(&id) {
                gpu_lock::waiting(|| bus.lead(request));
            }
            Ok(bus.answer(&id).and_then(Result::ok))
        }
        Err(_) if bus.unqueue(&id) => Ok(None),
        Err(err) => match bus.answer(&id) {
            Some(answer) => Ok(answer.ok()),
            None => Err(NoResult::Machine(format!("{err:#}"))),
        },
    };
    if let Ok(Some(_)) = &answer {
        // Its line of phases says it was measured in a batch, and how long its own run took there.
        let took = bus.took(&id);
        gpu_lock::not_a_wait(took);
        crate::phases::note("ncu's batch", took);
    }
    bus.forget(&id);
    answer
}

/// The requests of one GPU, lab and set of metrics: a folder beside the GPU's lock file, with the
/// requests, the queue of those not yet taken, and the answers.
struct Bus {
    dir: PathBuf,
    /// Each request's limits in a batch: the measured child's ([`LIMITS`]).
    limits: Limits,
}

impl Bus {
    /// The bus of `request`'s GPU, lab, ncu and metrics; none where no lock file is named or its
    /// folder cannot be made.
    fn of(request: &Request) -> Option<Bus> {
        let key = (&request.ncu, &request.options, &request.metrics, &request.program);
        let dir = gpu_lock::beside_keyed("ncu-batch", key, "")?;
        std::fs::create_dir_all(dir.join("queue")).ok()?;
        Some(Bus { dir, limits: LIMITS })
    }

    /// Writes `request` (its row's file, then its flags: [`fields`]) and queues it: its id, in the
    /// order of the requests.
    fn enqueue(&self, request: &Request) -> Result<String> {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let id = format!("{:020}-{}", since.as_nanos(), std::process::id());
        let fields = std::iter::once(request.result.as_os_str()).chain(request.args.iter().map(OsString::as_os_str));
        std::fs::write(self.file(&id, "request"), joined(fields))?;
        std::fs::write(self.dir.join("queue").join(&id), b"")?;
        Ok(id)
    }

    /// The file of request `id` with `suffix`: `request`, its answer (`csv` or `alone`), its own
    /// run's time (`took`); a batch's `list` and ncu's `batch.csv` are named after its first request.
    fn file(&self, id: &str, suffix: &str) -> PathBuf {
        self.dir.join(format!("{id}.{suffix}"))
    }

    /// Whether request `id` waits for a batch.
    fn queued(&self, id: &str) -> bool {
        self.dir.join("queue").join(id).exists()
    }

    /// Takes request `id` off the queue: whether it was still there (no batch took it).
    fn unqueue(&self, id: &str) -> bool {
        std::fs::remove_file(self.dir.join("queue").join(id)).is_ok()
    }

    /// How long request `id`'s own run in its batch took, its waits for the GPU left out ([`serve`]
    /// writes it); nothing where it did not.
    fn took(&self, id: &str) -> Duration {
        let nanos = std::fs::read_to_string(self.file(id, "took")).ok();
        Duration::from_nanos(nanos.and_then(|nanos| nanos.trim().parse().ok()).unwrap_or(0))
    }

    /// The answer to request `id`, where a batch gave one: its part of ncu's file, or `Err` where it
    /// is to be measured alone.
    fn answer(&self, id: &str) -> Option<Result<String, ()>> {
        if self.file(id, "alone").exists() {
            return Some(Err(()));
        }
        std::fs::read_to_string(self.file(id, "csv")).ok().map(Ok)
    }

    /// Gives request `id` its answer: its `part` of ncu's file, or none: measured alone (also where
    /// the part cannot be written).
    fn give(&self, id: &str, part: Option<&str>) {
        let written = part.is_some_and(|text| std::fs::write(self.file(id, "csv"), text).is_ok());
        if !written {
            let _ = std::fs::write(self.file(id, "alone"), b"");
        }
    }

    /// Removes request `id`'s files once its check has its answer.
    fn forget(&self, id: &str) {
        for suffix in ["request", "csv", "alone", "took"] {
            let _ = std::fs::remove_file(self.file(id, suffix));
        }
    }

    /// With the bus's lock held: every request queued, in batches of at most [`MOST`] until each has
    /// its answer, with ncu and the lab as `template` runs them.
    fn lead(&self, template: &Request) {
        let mut waiting = self.take_queue();
        while !waiting.is_empty() {
            let batch: Vec<String> = waiting.drain(..waiting.len().min(MOST)).collect();
            let again = self.run(batch, template);
            waiting.splice(0..0, again);
        }
    }

    /// The ids of the requests queued, oldest first, taken off the queue.
    fn take_queue(&self) -> Vec<String> {
        let queue = self.dir.join("queue");
        let mut ids: Vec<String> = std::fs::read_dir(&queue)
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids.retain(|id| self.unqueue(id));
        ids
    }

    /// One ncu process over the requests `ids`, in order: each one measured gets its part of ncu's
    /// file; the first whose run did not end well is measured alone; the ids of those after it, to
    /// run again. A request whose file cannot be read is measured alone. Where ncu's file cannot be
    /// split into a part for each request measured ([`split`]: ncu writes it only when the lab
    /// exits, so a batch stopped at a limit has none), the one that did not end well is measured
    /// alone and all the others run again; where every run ended well, all are measured alone.
    fn run(&self, ids: Vec<String>, template: &Request) -> Vec<String> {
        let mut batch: Vec<(String, PathBuf)> = Vec::new();
        for id in ids {
            match fields(&self.file(&id, "request")).map(|mut fields| fields.swap_remove(0)) {
                Ok(result) => batch.push((id, result.into())),
                Err(_) => self.give(&id, None),
            }
        }
        let Some((first, _)) = batch.first() else {
            return Vec::new();
        };
        let (list, csv) = (self.file(first, "list"), self.file(first, "batch.csv"));
        let requests: Vec<OsString> = batch
            .iter()
            .map(|(id, _)| self.file(id, "request").into_os_string())
            .collect();
        let runs = match std::fs::write(&list, joined(requests.iter().map(OsString::as_os_str))) {
            Ok(()) => self.measure(&batch, template, &list, &csv),
            Err(_) => Vec::new(),
        };
        let text = std::fs::read_to_string(&csv).unwrap_or_default();
        let _ = (std::fs::remove_file(&list), std::fs::remove_file(&csv));
        // The first whose run did not end well; those before it ran well.
        let failed = runs
            .iter()
            .position(|run| run.row.result.is_err())
            .unwrap_or(runs.len());
        let parts = match failed {
            0 => Some(Vec::new()),
            _ => split(&text).ok().filter(|parts| parts.len() >= failed),
        };
        match parts.filter(|_| !text.contains("ERR_NVGPUCTRPERM")) {
            Some(parts) if !runs.is_empty() => self.answer_all(&batch, &parts, failed),
            // Nothing to read: the one that did not end well alone, the others again.
            _ if failed < batch.len() && !runs.is_empty() => self.answer_all(&batch, &[], failed),
            _ => {
                batch.iter().for_each(|(id, _)| self.give(id, None));
                Vec::new()
            }
        }
    }

    /// The answers of a batch's requests (`batch`): those before the one at `failed` (whose run did
    /// not end well, and which is measured alone) get their `parts`, as far as there are parts; the
    /// ids of the others, to run again.
    fn answer_all(&self, batch: &[(String, PathBuf)], parts: &[String], failed: usize) -> Vec<String> {
        let measured = parts.len().min(failed);
        for ((id, _), part) in batch.iter().zip(parts).take(measured) {
            self.give(id, Some(part));
        }
        if let Some((id, _)) = batch.get(failed) {
            self.give(id, None);
        }
        batch
            .iter()
            .enumerate()
            .filter(|&(at, _)| at >= measured && at != failed)
            .map(|(_, (id, _))| id.clone())
            .collect()
    }

    /// The lab over the requests of `batch` (their ids and rows' files) listed in `list`, under ncu
    /// as `template` runs it, its counters written to `csv`: each request's run, up to the first
    /// whose run did not end well ([`case_process::run`]), each within the bus's limits.
    fn measure(
        &self,
        batch: &[(String, PathBuf)],
        template: &Request,
        list: &Path,
        csv: &Path,
    ) -> Vec<case_process::CaseRun> {
        let slots: Vec<Slot> = batch
            .iter()
            .map(|(_, result)| {
                // A row left from an earlier batch is not this one's.
                let _ = std::fs::remove_file(result);
                Slot {
                    case: "measured".to_string(),
                    result: result.clone(),
                }
            })
            .collect();
        let command = template.command(csv, &[FLAG.into(), list.into()]);
        let runs = Batch {
            cases: &slots,
            limits: self.limits,
            deadline: None,
            finished: None,
            boundary: "",
            others: true,
        };
        let runs = case_process::run(command, &runs, |_| {});
        // The batch's waits are reported beside the first request's row: not that check's own, were
        // it to measure alone after.
        if let Some(first) = slots.first() {
            let _ = std::fs::remove_file(case_process::waits_file(&first.result));
        }
        runs
    }
}

/// `fields`, each ended by a NUL: what a request's file and a batch's list hold (paths and flags,
/// any bytes but NUL).
fn joined<'a>(fields: impl IntoIterator<Item = &'a OsStr>) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut bytes = Vec::new();
    for field in fields {
        bytes.extend_from_slice(field.as_bytes());
        bytes.push(0);
    }
    bytes
}

/// The fields of a file [`joined`] wrote; an error where it cannot be read or holds none.
fn fields(file: &Path) -> Result<Vec<OsString>> {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let fields: Vec<OsString> = bytes
        .split(|&byte| byte == 0)
        .map(|field| OsStr::from_bytes(field).to_owned())
        .collect();
    // The last NUL ends the last field: what follows it is no field.
    match fields.split_last() {
        Some((last, rest)) if last.is_empty() && !rest.is_empty() => Ok(rest.to_vec()),
        _ => anyhow::bail!("{} holds no fields, each ended by a NUL", file.display()),
    }
}

/// ncu's file `text` split at the rows of [`FIRST_LAUNCH_KERNEL`], which each request launches once
/// in a new CUDA context before its own, with as many blocks as its place in the batch
/// ([`crate::measure::PLACE`]): one part a request, in the order they ran, each a file of ncu's own
/// form (its header, its units, the request's rows). An error where the rows cannot be read, where
/// a launch comes before the first request's, where a first launch is not the next request's, or
/// where ncu says a part's launches ran in two CUDA contexts, or in the context of the part before:
/// nothing of one request is read as another's.
pub(crate) fn split(text: &str) -> Result<Vec<String>> {
    let launches = profiler::counters::parse_csv(text)?;
    let mut lines = text.lines().skip_while(|line| !line.starts_with("\"ID\""));
    let head: String = lines.by_ref().take(2).map(|line| format!("{line}\n")).collect();
    let rows: Vec<&str> = lines.filter(|line| !line.trim().is_empty()).collect();
    anyhow::ensure!(
        rows.len() == launches.len(),
        "ncu's file has {} rows and {} launches",
        rows.len(),
        launches.len()
    );
    let mut parts: Vec<(String, f64)> = Vec::new();
    for (row, launch) in rows.iter().zip(&launches) {
        let value = |metric: &str| {
            launch
                .values
                .get(metric)
                .copied()
                .with_context(|| format!("ncu gave a launch without {metric}"))
        };
        let context = value(CONTEXT)?;
        if launch.kernel == FIRST_LAUNCH_KERNEL {
            let place = value(PLACE)?;
            anyhow::ensure!(
                place == (parts.len() + 1) as f64,
                "request {}'s first launch is that of request {place}",
                parts.len() + 1
            );
            anyhow::ensure!(
                parts.last().is_none_or(|(_, before)| *before != context),
                "two requests ran in one CUDA context"
            );
            parts.push((head.clone(), context));
        }
        let (part, part_context) = parts
            .last_mut()
            .context("a launch before the first request's first launch")?;
        anyhow::ensure!(
            *part_context == context,
            "one request's launches ran in two CUDA contexts"
        );
        part.push_str(row);
        part.push('\n');
    }
    Ok(parts.into_iter().map(|(part, _)| part).collect())
}

/// The lab's side, run by [`crate::exit::run_lab`] for `lab --measure-batch LIST`: each request of
/// LIST in turn, parsed as the lab's flags and run by `run` as the measured child would run (which
/// writes its row where the request says), in this process under ncu, with its place in the batch
/// ([`crate::measure::PLACE`]) and, beside its file, how long its own run took ([`Bus::took`]). The
/// turn with ncu is held for the whole batch ([`gpu_lock::hold_ncu_turn`]). The first request that
/// fails ends the batch with its exit code; [`Bus::run`] measures it alone. One line of phases for
/// the batch.
pub fn serve<A: clap::Parser>(run: &impl Fn(A) -> Result<()>) -> ExitCode {
    crate::phases::in_a_batch();
    let mut args = std::env::args_os();
    let lab = args.next().unwrap_or_default();
    let requests = match args
        .nth(1)
        .context("no list of requests")
        .and_then(|list| fields(Path::new(&list)))
    {
        Ok(requests) => requests,
        Err(err) => {
            eprintln!("{FLAG}: {err:#}");
            return ExitCode::from(2);
        }
    };
    let _turn = match gpu_lock::hold_ncu_turn() {
        Ok(turn) => turn,
        Err(err) => {
            eprintln!("{FLAG}: {err:#}");
            return ExitCode::from(3);
        }
    };
    let mut ran = 0;
    let code = requests
        .iter()
        .enumerate()
        .find_map(|(at, request)| {
            ran = at + 1;
            crate::measure::PLACE.store(ran as u32, std::sync::atomic::Ordering::Relaxed);
            serve_one(Path::new(request), &lab, run).err()
        })
        .unwrap_or(ExitCode::SUCCESS);
    crate::phases::write_batch(&format!("batch of {ran} (measured)"));
    code
}

/// One request of a batch ([`serve`]): its flags (after its row's file) parsed with `lab`'s name
/// and run by `run`, and its own time, its waits for the GPU left out, written beside its file. The
/// exit code that ends the batch where it fails.
fn serve_one<A: clap::Parser>(request: &Path, lab: &OsStr, run: &impl Fn(A) -> Result<()>) -> Result<(), ExitCode> {
    let flags = fields(request).map_err(|err| {
        eprintln!("{FLAG}: {err:#}");
        ExitCode::from(2)
    })?;
    let parsed =
        A::try_parse_from(std::iter::once(lab.to_owned()).chain(flags.into_iter().skip(1))).map_err(|err| {
            eprintln!("{FLAG}: {}: {}", request.display(), err.kind());
            ExitCode::from(2)
        })?;
    let (started, waited) = (Instant::now(), gpu_lock::waited());
    run(parsed).map_err(|err| {
        eprintln!("{FLAG}: {}: {err:#}", request.display());
        ExitCode::from(crate::exit::exit_code(&err))
    })?;
    let own = started
        .elapsed()
        .saturating_sub(gpu_lock::waited().saturating_sub(waited));
    let _ = std::fs::write(request.with_extension("took"), own.as_nanos().to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::private_dir::PrivateDir;

    /// ncu's file of a batch: each launch as (kernel, context, blocks, value), after the header and
    /// units.
    fn ncu_file(launches: &[(&str, u32, u32, u32)]) -> String {
        let mut text = "==PROF== Connected\n\"ID\",\"Kernel Name\",\"launch__context_id\",\"launch__grid_size\",\"m__x.sum\"\n\"\",\"\",\"\",\"\",\"\"\n".to_string();
        for (id, (kernel, context, blocks, value)) in launches.iter().enumerate() {
            text.push_str(&format!(
                "\"{id}\",\"{kernel}\",\"{context}\",\"{blocks}\",\"{value}\"\n"
            ));
        }
        text
    }

    /// Each request's part is ncu's header, its units and the request's rows from its first launch
    /// on, in the order they ran; a part read back holds that request's launches alone.
    #[test]
    fn ncu_s_file_splits_at_each_requests_first_launch() {
        let text = ncu_file(&[
            (FIRST_LAUNCH_KERNEL, 7, 1, 0),
            ("mmm_f64", 7, 4096, 10),
            ("mmm_f32", 7, 4096, 11),
            (FIRST_LAUNCH_KERNEL, 8, 2, 0),
            ("mmm_f64", 8, 4096, 20),
            (FIRST_LAUNCH_KERNEL, 9, 3, 0),
        ]);
        let parts = split(&text).unwrap();
        assert_eq!(parts.len(), 3);
        let values = |part: &str| {
            profiler::counters::parse_csv(part)
                .unwrap()
                .iter()
                .map(|launch| (launch.kernel.clone(), launch.value("m__x.sum")))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            values(&parts[0]),
            [
                (FIRST_LAUNCH_KERNEL.to_string(), 0.0),
                ("mmm_f64".to_string(), 10.0),
                ("mmm_f32".to_string(), 11.0)
            ]
        );
        assert_eq!(
            values(&parts[1]),
            [(FIRST_LAUNCH_KERNEL.to_string(), 0.0), ("mmm_f64".to_string(), 20.0)]
        );
        assert_eq!(values(&parts[2]), [(FIRST_LAUNCH_KERNEL.to_string(), 0.0)]);
    }

    /// Nothing of one request is read as another's: two requests in one CUDA context, one request's
    /// launches in two, a launch before the first request's, a first launch out of its place (a
    /// request whose first launch ncu did not measure), and a file without rows are errors.
    #[test]
    fn a_file_whose_parts_share_a_context_or_are_out_of_place_is_refused() {
        let first = (FIRST_LAUNCH_KERNEL, 1, 1, 0);
        let refused = [
            ncu_file(&[
                first,
                ("mmm_f64", 1, 1, 10),
                (FIRST_LAUNCH_KERNEL, 1, 2, 0),
                ("mmm_f64", 1, 1, 20),
            ]),
            ncu_file(&[first, ("mmm_f64", 2, 1, 10)]),
            ncu_file(&[("mmm_f64", 1, 1, 10), first]),
            ncu_file(&[first, ("mmm_f64", 1, 1, 10), (FIRST_LAUNCH_KERNEL, 3, 3, 0)]),
            ncu_file(&[(FIRST_LAUNCH_KERNEL, 1, 2, 0)]),
            "==ERROR== ERR_NVGPUCTRPERM\n".to_string(),
        ];
        for text in refused {
            assert!(split(&text).is_err(), "{text}");
        }
        let without_contexts =
            "\"ID\",\"Kernel Name\",\"launch__grid_size\"\n\"\",\"\",\"\"\n\"0\",\"ncu_first_launch\",\"1\"\n";
        assert!(split(without_contexts).is_err());
        assert!(split(&ncu_file(&[first, (FIRST_LAUNCH_KERNEL, 2, 2, 0)])).is_ok());
    }

    /// A request's file holds any bytes but NUL in its fields, and reads back as written.
    #[test]
    fn fields_read_back_as_written() {
        let dir = PrivateDir::new("ncu-batch-test").unwrap();
        let file = dir.path().join("fields");
        let written = [
            OsString::from("/tmp/a b\nc"),
            OsString::from("--flag"),
            OsString::from(""),
        ];
        std::fs::write(&file, joined(written.iter().map(OsString::as_os_str))).unwrap();
        assert_eq!(fields(&file).unwrap(), written);
        std::fs::write(&file, b"no NUL at the end").unwrap();
        assert!(fields(&file).is_err());
        std::fs::write(&file, b"").unwrap();
        assert!(fields(&file).is_err());
        assert!(fields(&dir.path().join("none")).is_err());
    }

    /// A stand-in for ncu around a batch, which writes its file when the lab ends, as ncu does, and
    /// not where it is killed: each request's first flag says what its run does. `ok` launches the
    /// first launch (its blocks its place) and one kernel (its value the request's place) in a
    /// context of its own and writes the request's row; `fault` launches the first launch and ends
    /// the batch without a row; `machine` writes a MACHINE row and goes on without a first launch;
    /// `hang` launches the first launch and never ends.
    fn stand_in_ncu(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let ran = crate::measure::ran("measured").to_line();
        let machine = crate::row::Row {
            case: "measured".to_string(),
            result: Err(NoResult::Machine("no GPU".to_string())),
        }
        .to_line();
        let script = format!(
            r#"#!/bin/sh
while [ "$1" != --log-file ]; do shift; done
csv=$2; list=$5
printf '"ID","Kernel Name","launch__context_id","launch__grid_size","m__x.sum"\n"","","","",""\n' >"$csv.part"
trap 'mv "$csv.part" "$csv"' EXIT
n=0
for request in $(tr '\0' ' ' <"$list"); do
  n=$((n + 1))
  result=$(tr '\0' '\n' <"$request" | sed -n 1p)
  what=$(tr '\0' '\n' <"$request" | sed -n 2p)
  if [ "$what" = machine ]; then printf '%s\n' '{machine}' >"$result"; continue; fi
  printf '"%s","ncu_first_launch","%s","%s","0"\n' "$n" "$n" "$n" >>"$csv.part"
  [ "$what" = fault ] && exit 1
  [ "$what" = hang ] && exec sleep 1000
  printf '"%s","mmm_f64","%s","4096","%s"\n' "$n" "$n" "$n" >>"$csv.part"
  printf '%s\n' '{ran}' >"$result"
done
"#
        );
        let path = dir.join("ncu");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        path
    }

    /// A batch measures every request that runs well; the first that does not is measured alone, and
    /// the requests after it run in the next batch, where their parts are their own again. A batch
    /// stopped at its limits leaves no file: the one stopped is measured alone, and all the others
    /// run again. A request that failed before its first launch leaves the next ones' parts out of
    /// place: the batch after it is not read as theirs.
    #[test]
    fn a_request_that_fails_is_measured_alone_and_the_rest_run_again() {
        let dir = PrivateDir::new("ncu-batch-test").unwrap();
        let bus = Bus {
            dir: dir.path().join("bus"),
            limits: Limits {
                silence: Duration::from_millis(500),
                total: Duration::from_secs(20),
            },
        };
        std::fs::create_dir_all(bus.dir.join("queue")).unwrap();
        let template = Request {
            ncu: stand_in_ncu(dir.path()),
            options: Vec::new(),
            metrics: "m__x.sum".to_string(),
            program: "lab".into(),
            args: Vec::new(),
            result: PathBuf::new(),
        };
        let whats = ["ok", "fault", "ok", "machine", "ok", "hang", "ok"];
        let ids: Vec<String> = whats
            .iter()
            .enumerate()
            .map(|(at, what)| {
                let request = Request {
                    args: vec![what.into()],
                    result: dir.path().join(format!("row-{at}")),
                    ..template.clone()
                };
                let id = bus.enqueue(&request).unwrap();
                assert!(bus.queued(&id));
                id
            })
            .collect();
        bus.lead(&template);
        let value = |id: &str| match bus.answer(id) {
            Some(Ok(part)) => {
                let launches = profiler::counters::parse_csv(&part).unwrap();
                assert_eq!(launches[0].kernel, FIRST_LAUNCH_KERNEL);
                Some(
                    launches
                        .iter()
                        .map(|launch| launch.value("m__x.sum"))
                        .collect::<Vec<_>>(),
                )
            }
            Some(Err(())) => None,
            None => panic!("request {id} has no answer"),
        };
        // 1: ok (1), fault (alone). 2: ok, machine (alone), ok, hang: stopped, no file. 3: ok, ok,
        // hang (alone): stopped. 4: ok (1), ok (2), ok (3).
        let answers: Vec<_> = ids.iter().map(|id| value(id)).collect();
        assert_eq!(
            answers,
            [
                Some(vec![0.0, 1.0]),
                None,
                Some(vec![0.0, 1.0]),
                None,
                Some(vec![0.0, 2.0]),
                None,
                Some(vec![0.0, 3.0])
            ]
        );
        assert!(ids.iter().all(|id| !bus.queued(id)));
        for id in &ids {
            bus.forget(id);
        }
        assert_eq!(
            std::fs::read_dir(&bus.dir).unwrap().count(),
            1,
            "only the queue is left"
        );
    }
}
