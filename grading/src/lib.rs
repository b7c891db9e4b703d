//! A student's kernel inside a lab (`assignments/`): `--kernel-source FILE.cu` compiles the file when
//! the lab starts, before the GPU is opened, and runs the lab's experiment with it; `--check` runs the
//! week's cases and prints one table: each case's verdict, the first wrong element with the block and
//! thread that computed it, and the time against our kernel.
//!
//! The cases of `--check` run in child processes of the lab (the same program with the hidden flags
//! `--kernel-image` and `--check-case`), one after another in each: a kernel that faults or traps
//! ruins its CUDA context for good, so it takes only its own case with it, and the cases after it run
//! in a new child ([`case_process`]).
//!
//! This crate is the grading engine, whole: the kernel weeks' side of a lab ([`kernel_week`], as
//! [`program`] is the program weeks'), the flags and the student's file ([`student_args`],
//! [`entries`]), the week's cases ([`weeks`], [`cases_file`], [`parameters`]), the check runner and
//! its times ([`check`], [`times`]), the lock that keeps a shared GPU's timed work apart
//! ([`gpu_lock`]), where a check's time goes ([`phases`]), the case processes and their output ([`case_process`],
//! [`output`], [`progress`]), the rules read from the PTX ([`ptx`]) and from hardware counters
//! ([`measure`], several checks' in one ncu process: [`ncu_batch`]), the guard zones ([`guard`]), compute-sanitizer ([`sanitizer`]), the rows, the table
//! and the CSV ([`row`], [`report`], [`csv`](mod@csv)), whose an error is and the exit codes
//! ([`exit`]) and the CSV's closing mark for the grader ([`mark`]); and, as a binary, the generator
//! of the weeks' templates and broken kernels (`cargo run -p grading --bin templates`).
//! The grader (`grader/`, which `assignments/grade.sh` launches) grades a class with the labs'
//! `--check`. It depends on `common`, `kernels`, the profiler (for ncu's counters), `sandbox` (the
//! program weeks' box) and `grader` (no CUDA: the one CSV module, and the one list of weeks, which
//! [`weeks`] and the templates generator read), never on a lab; the four labs with assignments
//! depend on it.

pub mod case_process;
pub mod cases_file;
pub mod check;
pub mod csv;
pub mod entries;
pub mod exit;
pub mod gpu_lock;
pub mod guard;
pub mod kernel_week;
pub mod mark;
pub mod measure;
pub mod ncu_batch;
pub mod output;
pub mod parameters;
pub mod phases;
pub mod program;
pub mod progress;
pub mod ptx;
pub mod report;
pub mod row;
pub mod sanitizer;
pub mod student_args;
pub mod times;
pub mod weeks;

pub use csv::{csv, csv_field};
pub use entries::{require_entries, require_same_parameters, Entry};
pub use exit::{exit_code, on_the_machine, run_lab, Machine, Usage};
pub use row::{first_mismatch, shown, table, written, written_once, FirstWrong, NoResult, Outcome, Row};
pub use student_args::StudentArgs;
pub use times::{checked_runs, each_launch, fresh_inputs, CaseContext, Checked, Timed, Times, SUSPICIOUS_RATIO};
