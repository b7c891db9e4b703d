//! `grader`: the teacher's side of grading (issue 62), in one program that `assignments/grade.sh`
//! launches. It owns finding submissions ([`submissions`]), running a week's lab on each ([`lab`],
//! locally [`local`], or as a Slurm array [`slurm`]), the rows and the one CSV module ([`rows`],
//! [`csv`]), what a lab lists and the rows it implies ([`listing`]), weights, ids and scores
//! ([`weights`], [`ids`]), the list of weeks ([`weeks`]), where it writes ([`output`]: `--out`, claimed
//! folders), how it ends ([`stop`]: one line and an exit code), and the feedback program's part in a
//! run ([`feedback`]).
//!
//! It depends on no CUDA crate: it runs the labs as programs, so a cluster's login node can submit and
//! collect without a GPU driver. The labs' own check (`--check`, its cases and rules) is `grading`'s.

pub mod csv;
pub mod feedback;
pub mod ids;
pub mod lab;
pub mod listing;
pub mod local;
pub mod output;
pub mod rows;
pub mod slurm;
pub mod stop;
pub mod submissions;
pub mod weeks;
pub mod weights;

/// Says on stderr that a long step begins (a build takes minutes the first time).
pub fn say_building(what: &str) {
    stop::say(&format!("building: {what} (minutes the first time)"));
}
