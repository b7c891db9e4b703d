//! `--counters`: hardware counters from Nsight Compute (ncu) beside the timed windows (issue 23). The
//! Greek and Chinese notes reason with nvprof's metrics (transactions per request, bank conflicts,
//! occupancy); ncu has them under new names. ncu replays every kernel several times to read its
//! counters, which serializes and slows the run, so counters and times come from separate runs: the
//! lab first runs its own command line under ncu, then runs as usual under CUPTI, and the n-th launch
//! of each kernel in one run is the n-th launch of it in the other.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, ensure, Context as _, Result};

use super::records::{demangle, Activity, What};
use super::Window;

/// The metrics read (Nsight Compute 2025 names), and what the notes called them with nvprof.
pub const METRICS: [(&str, &str); 22] = [
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "gld_transactions (32-byte sectors)",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "global load requests (warp instructions)",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        "global_hit_rate's numerator (load sectors found in L1)",
    ),
    (
        "lts__t_sectors_srcunit_tex_op_read.sum",
        "l2_tex_read_transactions (32-byte sectors L2 served to L1 for reads)",
    ),
    (
        "lts__t_requests_srcunit_tex_op_read.sum",
        "read requests L1 sent to L2 (one request carries up to the 4 sectors of a line)",
    ),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "gst_transactions"),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "global store requests",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "shared_load_transactions",
    ),
    ("smsp__inst_executed_op_shared_ld.sum", "shared load requests"),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "shared_ld_bank_conflict",
    ),
    (
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "achieved_occupancy",
    ),
    (
        "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "local_load bytes (spills read back)",
    ),
    (
        "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
        "local_store bytes (spills)",
    ),
    ("dram__bytes_read.sum", "dram_read_bytes"),
    ("dram__bytes_write.sum", "dram_write_bytes"),
    ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "flop_count_dp_fma"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "flop_count_sp_fma"),
    (
        "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
        "FP64 pipe utilization",
    ),
    (
        "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active",
        "FP64 tensor core (DMMA) utilization",
    ),
    ("smsp__thread_inst_executed.sum", "thread instructions"),
    (
        "smsp__inst_executed.sum",
        "warp instructions (thread / warp instructions: warp_execution_efficiency x 32)",
    ),
    ("gpu__time_duration.sum", "kernel time under ncu (replayed, serialized)"),
];

/// One kernel launch as ncu measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// Demangled, as CUPTI's records are named here.
    pub kernel: String,
    pub values: BTreeMap<String, f64>,
}

impl Launch {
    pub fn value(&self, metric: &str) -> f64 {
        self.values.get(metric).copied().unwrap_or(f64::NAN)
    }
}

/// ncu itself: `$NCU`, then `ncu` on the path, then the CUDA install's.
pub fn ncu() -> Result<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("NCU").map(PathBuf::from).into_iter().collect();
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|folder| folder.join("ncu")));
    }
    let roots = std::env::var_os("CUDA_PATH")
        .into_iter()
        .chain([OsString::from("/usr/local/cuda")]);
    candidates.extend(roots.map(|root| PathBuf::from(root).join("bin/ncu")));
    candidates
        .into_iter()
        .find(|path| path.is_file())
        .ok_or_else(|| anyhow!("--counters needs Nsight Compute (ncu): not in $NCU, on the PATH, or in $CUDA_PATH/bin or /usr/local/cuda/bin"))
}

/// This lab's own command line without the profile's flags: what runs under ncu.
pub fn child_arguments(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "--counters" | "--profile" => {}
            "--trace" => skip_value = true,
            _ if text.starts_with("--trace=") => {}
            _ => kept.push(arg),
        }
    }
    kept
}

/// ncu around a program (which the caller adds: `.arg(program).args(its arguments)`): its raw page
/// as CSV in base units, as [`parse_csv`] reads it, into `csv`, with `metrics` (comma-separated) for
/// every launch it profiles; `options` (clock and cache control, a kernel filter) before them. The one
/// command line of `--counters`, lab-mmm's `--reads` and the grader's measured rules.
pub fn under_ncu(ncu: &Path, options: &[&str], metrics: &str, csv: &Path) -> Command {
    let mut command = Command::new(ncu);
    command
        .args(["--csv", "--page", "raw", "--print-units", "base"])
        .args(options)
        .arg("--metrics")
        .arg(metrics)
        .arg("--log-file")
        .arg(csv);
    command
}

/// The last line a run under ncu wrote, to say why it failed: its `log` (ncu's and the program's
/// stdout and stderr), then the `csv` it wrote.
pub fn last_said(log: &Path, csv: &str) -> String {
    let said = std::fs::read_to_string(log).unwrap_or_default();
    said.lines()
        .chain(csv.lines())
        .rfind(|line| !line.trim().is_empty())
        .unwrap_or("no output")
        .to_string()
}

/// Runs this lab again under ncu with the same flags and reads every launch's counters.
pub fn collect() -> Result<(Vec<Launch>, String)> {
    let ncu = ncu()?;
    let exe = std::env::current_exe().context("finding this lab's executable")?;
    let folder = common::private_dir::PrivateDir::new("lab-counters")?;
    let csv = folder.path().join("counters.csv");
    let log = folder.path().join("lab-under-ncu.log");
    let metrics: Vec<&str> = METRICS.iter().map(|(name, _)| *name).collect();
    eprintln!(
        "--counters: running the lab under {} first (every kernel is replayed for its counters: this takes a while)",
        ncu.display()
    );
    let output = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let status = under_ncu(&ncu, &["--print-kernel-base", "mangled"], &metrics.join(","), &csv)
        .arg(&exe)
        .args(child_arguments(std::env::args_os().skip(1)))
        .stdout(output.try_clone()?)
        .stderr(output)
        .status()
        .with_context(|| format!("running {}", ncu.display()))?;
    let text = std::fs::read_to_string(&csv).unwrap_or_default();
    if !status.success() {
        bail!("the lab under ncu failed ({status}): {}", last_said(&log, &text));
    }
    let version = Command::new(&ncu)
        .arg("--version")
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .last()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default();
    Ok((parse_csv(&text)?, version))
}

/// ncu's `--csv --page raw` output: `==PROF==` lines, a header of column names, a line of units,
/// then one line per launch. Numbers carry thousands separators (`1,980,000`).
pub fn parse_csv(text: &str) -> Result<Vec<Launch>> {
    let mut lines = text.lines().skip_while(|line| !line.starts_with("\"ID\""));
    let header = split(
        lines
            .next()
            .ok_or_else(|| anyhow!("ncu's output has no header line (\"ID\",...)"))?,
    )?;
    let column = |name: &str| header.iter().position(|h| h == name);
    let kernel_column = column("Kernel Name").ok_or_else(|| anyhow!("ncu's output has no Kernel Name column"))?;
    // Every metric ncu printed (their names have a `__`), not only [`METRICS`]: `--check` asks for its own.
    let metric_columns: Vec<(String, usize)> = header
        .iter()
        .enumerate()
        .filter(|(_, name)| name.contains("__"))
        .map(|(at, name)| (name.clone(), at))
        .collect();
    lines.next(); // the units
    let mut launches = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        let fields = split(line).with_context(|| format!("ncu launch line {}", i + 1))?;
        ensure!(
            fields.len() == header.len(),
            "ncu launch line {} has {} fields, the header {}",
            i + 1,
            fields.len(),
            header.len()
        );
        let values = metric_columns
            .iter()
            .filter_map(|(name, at)| Some((name.clone(), fields[*at].replace(',', "").parse::<f64>().ok()?)))
            .collect();
        launches.push(Launch {
            kernel: demangle(&fields[kernel_column]),
            values,
        });
    }
    Ok(launches)
}

/// A CSV line of quoted fields (`""` inside is a quote).
fn split(line: &str) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        ensure!(chars.next() == Some('"'), "a field that does not start with a quote");
        let mut field = String::new();
        loop {
            match chars.next() {
                Some('"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                Some('"') => break,
                Some(c) => field.push(c),
                None => bail!("a quote that does not close"),
            }
        }
        fields.push(field);
        match chars.next() {
            Some(',') => continue,
            None => return Ok(fields),
            Some(c) => bail!("{c:?} after a closing quote"),
        }
    }
}

/// The counters of each window's kernels: the n-th launch of a kernel in CUPTI's records (launch
/// order: correlation ids) is ncu's n-th launch of it.
pub fn per_window(windows: &[Window], all: &[Activity], launches: &[Launch]) -> Vec<(usize, Vec<Launch>)> {
    let mut by_kernel: BTreeMap<&str, Vec<&Launch>> = BTreeMap::new();
    for launch in launches {
        by_kernel.entry(&launch.kernel).or_default().push(launch);
    }
    let mut kernels: Vec<&Activity> = all.iter().filter(|a| matches!(a.what, What::Kernel { .. })).collect();
    kernels.sort_by_key(|a| a.correlation);
    let mut nth: BTreeMap<u32, usize> = BTreeMap::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for kernel in kernels {
        let count = seen.entry(&kernel.name).or_default();
        nth.insert(kernel.correlation, *count);
        *count += 1;
    }
    windows
        .iter()
        .map(|window| {
            let kernels: Vec<&Activity> = window
                .work
                .iter()
                .filter(|a| matches!(a.what, What::Kernel { .. }))
                .collect();
            let matched = kernels
                .iter()
                .filter_map(|a| {
                    by_kernel
                        .get(a.name.as_str())?
                        .get(*nth.get(&a.correlation)?)
                        .map(|launch| (*launch).clone())
                })
                .collect();
            (kernels.len(), matched)
        })
        .collect()
}

/// The counter table: one row per window with kernels.
pub fn table(windows: &[Window], counters: &[(usize, Vec<Launch>)], version: &str) -> String {
    let mut out = format!(
        "Hardware counters ({version}; a separate run of the same command under ncu, which replays every kernel: its times are not these)\n\
         | window | kernels read | global ld sectors / request | L1 hit % of ld sectors | L2 sectors / L2 read request | global st sectors / request | shared wavefronts / load | shared bank conflicts / load | achieved occupancy % | local memory bytes / launch | DRAM MB / launch | FP64 pipe % | DMMA pipe % | FMA GFLOP/s under ncu | threads per warp instruction |\n\
         |--------|-------------:|----------------------------:|-----------------------:|-----------------------------:|----------------------------:|-------------------------:|-----------------------------:|---------------------:|----------------------------:|-----------------:|------------:|------------:|----------------------:|-----------------------------:|\n"
    );
    for (window, (kernels, launches)) in windows.iter().zip(counters) {
        if *kernels == 0 {
            continue;
        }
        let sum = |metric: &str| launches.iter().map(|l| l.value(metric)).sum::<f64>();
        let mean = |metric: &str| sum(metric) / launches.len() as f64;
        let ratio = |a: &str, b: &str| {
            if sum(b) > 0.0 {
                format!("{:.2}", sum(a) / sum(b))
            } else {
                "-".into()
            }
        };
        // A share of a sum that saved output without the numerator (older fixtures) leaves blank.
        let percent = |a: &str, b: &str| {
            let share = 100.0 * sum(a) / sum(b);
            if sum(b) > 0.0 && share.is_finite() {
                format!("{share:.1}")
            } else {
                "-".into()
            }
        };
        let cell = |value: f64, decimals: usize| {
            if value.is_finite() {
                format!("{value:.decimals$}")
            } else {
                "-".into()
            }
        };
        let fma = sum("sm__sass_thread_inst_executed_op_dfma_pred_on.sum")
            + sum("sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
        let seconds = sum("gpu__time_duration.sum") * 1e-9;
        out.push_str(&format!(
            "| {} | {} of {kernels} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            window.label,
            launches.len(),
            ratio(
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
            ),
            percent(
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
            ),
            ratio(
                "lts__t_sectors_srcunit_tex_op_read.sum",
                "lts__t_requests_srcunit_tex_op_read.sum"
            ),
            ratio(
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
            ),
            ratio(
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "smsp__inst_executed_op_shared_ld.sum"
            ),
            ratio(
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "smsp__inst_executed_op_shared_ld.sum"
            ),
            cell(mean("sm__warps_active.avg.pct_of_peak_sustained_active"), 1),
            cell(
                mean("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum")
                    + mean("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"),
                0
            ),
            cell((mean("dram__bytes_read.sum") + mean("dram__bytes_write.sum")) / 1e6, 2),
            cell(mean("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"), 1),
            cell(
                mean("sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active"),
                1
            ),
            if seconds > 0.0 {
                format!("{:.0}", 2.0 * fma / seconds / 1e9)
            } else {
                "-".into()
            },
            ratio("smsp__thread_inst_executed.sum", "smsp__inst_executed.sum"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_fields_with_commas_and_quotes_inside() {
        assert_eq!(
            split(r#""a","1,980,000","(1024, 1, 1)","say ""hi""","""#).unwrap(),
            ["a", "1,980,000", "(1024, 1, 1)", "say \"hi\"", ""]
        );
        assert!(split(r#""open"#).is_err());
        assert!(split(r#"bare,"x""#).is_err());
    }

    fn kernel(name: &str, correlation: u32) -> Activity {
        Activity {
            what: What::Kernel {
                grid: [1; 3],
                block: [1; 3],
            },
            name: name.into(),
            start_ns: 0,
            end_ns: 1,
            device: 0,
            stream: 1,
            correlation,
            channel: 0,
        }
    }

    fn launch(kernel: &str, wavefronts: f64) -> Launch {
        let values = [
            ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", wavefronts),
            ("smsp__inst_executed_op_shared_ld.sum", 1.0),
        ];
        Launch {
            kernel: kernel.into(),
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn the_nth_launch_of_a_kernel_under_cupti_is_ncus_nth_launch_of_it() {
        // Launch order (correlation ids): a, b, a, a; the windows hold the second and third a.
        let all = vec![kernel("a", 1), kernel("b", 2), kernel("a", 3), kernel("a", 5)];
        let first = Window {
            label: "first".into(),
            work: vec![all[2].clone()],
            ..Window::default()
        };
        let second = Window {
            label: "second".into(),
            work: vec![all[3].clone(), all[1].clone()],
            ..Window::default()
        };
        let idle = Window {
            label: "copies only".into(),
            ..Window::default()
        };
        let launches = vec![launch("a", 1.0), launch("b", 7.0), launch("a", 2.0), launch("a", 4.0)];
        let windows = [first, second, idle];
        let matched = per_window(&windows, &all, &launches);
        assert_eq!(matched[0], (1, vec![launch("a", 2.0)]));
        assert_eq!(matched[1], (2, vec![launch("a", 4.0), launch("b", 7.0)]));
        let table = table(&windows, &matched, "ncu 2025");
        assert!(table.contains("| first | 1 of 1 | - | - | - | - | 2.00 |"), "{table}");
        assert!(table.contains("| second | 2 of 2 | - | - | - | - | 5.50 |"), "{table}");
        assert!(!table.contains("copies only"), "{table}");
    }

    #[test]
    fn l1_hits_and_the_sectors_l2_sends_per_request_have_their_columns() {
        // Two launches reading whole lines: one found 300 of its 400 sectors in L1, L2 sent the other
        // 100 in 25 requests; the other found all 400 in L1.
        let read = |hits: f64, l2_sectors: f64, l2_requests: f64| Launch {
            kernel: "read_lines_l1".into(),
            values: [
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 400.0),
                ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100.0),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", hits),
                ("lts__t_sectors_srcunit_tex_op_read.sum", l2_sectors),
                ("lts__t_requests_srcunit_tex_op_read.sum", l2_requests),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        };
        let window = Window {
            label: "lines".into(),
            work: vec![kernel("read_lines_l1", 1), kernel("read_lines_l1", 2)],
            ..Window::default()
        };
        let matched = vec![(2, vec![read(300.0, 100.0, 25.0), read(400.0, 0.0, 0.0)])];
        let table = table(&[window], &matched, "ncu 2025");
        assert!(table.contains("| lines | 2 of 2 | 4.00 | 87.5 | 4.00 | - |"), "{table}");
        assert!(table.contains("| L1 hit % of ld sectors | L2 sectors / L2 read request |"));
        for metric in [
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum",
            "lts__t_requests_srcunit_tex_op_read.sum",
        ] {
            assert!(METRICS.iter().any(|(name, _)| *name == metric), "{metric} is not read");
        }
    }

    /// ncu's command line: the CSV form parse_csv reads, the caller's options, the metrics, the file.
    #[test]
    fn ncus_command_line_has_its_csv_form_then_the_options_metrics_and_file() {
        let command = under_ncu(
            Path::new("/opt/ncu"),
            &["--kernel-name", "mmm"],
            "a.sum,b.max",
            Path::new("/tmp/c.csv"),
        );
        let args: Vec<&std::ffi::OsStr> = command.get_args().collect();
        assert_eq!(command.get_program(), "/opt/ncu");
        assert_eq!(
            args,
            [
                "--csv",
                "--page",
                "raw",
                "--print-units",
                "base",
                "--kernel-name",
                "mmm",
                "--metrics",
                "a.sum,b.max",
                "--log-file",
                "/tmp/c.csv"
            ]
        );
    }

    /// What a failed run under ncu said last: its log's last line, else its CSV's, else "no output".
    #[test]
    fn the_last_line_said_comes_from_the_log_then_the_csv() {
        let dir = common::private_dir::PrivateDir::new("counters-test").unwrap();
        let log = dir.path().join("log");
        std::fs::write(&log, "first\nlast words\n\n").unwrap();
        assert_eq!(last_said(&log, ""), "last words");
        assert_eq!(last_said(&dir.path().join("none"), "a\nb\n"), "b");
        assert_eq!(last_said(&dir.path().join("none"), " \n"), "no output");
    }

    #[test]
    fn drops_only_the_profile_flags_from_the_childs_command_line() {
        let args = [
            "--mode",
            "banks",
            "--counters",
            "--trace",
            "t.json",
            "--profile",
            "--trace=u.json",
            "--steps",
            "9",
        ]
        .map(OsString::from);
        assert_eq!(
            child_arguments(args),
            ["--mode", "banks", "--steps", "9"].map(OsString::from)
        );
    }
}
