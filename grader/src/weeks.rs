//! The weeks a submission can be graded for: each week's lab, the flags that choose its check, and how
//! the lab takes a submission (a kernel file or a whole program). The one list of weeks of the
//! teacher's side: the command line, `--help` and the Slurm settings read it.

use std::path::{Path, PathBuf};

/// What a student hands in for a week.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Handed {
    /// A kernel file (`--kernel-source`), checked beside our solution `ours` (a path in the repository).
    /// `kernels` are the kernels a student's file defines for the week, as written (a name ending in
    /// `_` is a prefix, for kernels a macro names: `adaptive_master_##NAME`): how a file given to the
    /// wrong lab is told (grading's `weeks`).
    Kernel {
        ours: &'static str,
        kernels: &'static [&'static str],
    },
    /// A whole program (`--program-source`) named like the week's starter `program` (pipeline.cu);
    /// our solution is `reference/weeks/<program>`. Its trace is judged too.
    Program { program: &'static str },
}

/// One week: its name, its folder in assignments/ (two program weeks share one), its lab and the lab's
/// flags.
#[derive(Debug, Clone, Copy)]
pub struct Week {
    pub name: &'static str,
    pub folder: &'static str,
    pub lab: &'static str,
    pub args: &'static [&'static str],
    pub handed: Handed,
}

/// Every week, in the course's order.
pub const WEEKS: [Week; 9] = [
    kernel(
        "01-simpson",
        "lab-simpson",
        &[],
        (
            "kernels/cuda/simpson.cu",
            &["simpson", "simpson_sin", "simpson_exp", "simpson_peak"],
        ),
    ),
    kernel(
        "02-mmm-ab",
        "lab-mmm",
        &["--kernel", "naive"],
        ("kernels/cuda/mmm.cu", &["mmm_ab_f64", "mmm_ab_f32"]),
    ),
    kernel(
        "03-mmm-tiled",
        "lab-mmm",
        &["--kernel", "tiled"],
        ("kernels/cuda/mmm.cu", &["mmm_f64", "mmm_f32"]),
    ),
    kernel(
        "04-constant-tracer",
        "lab-constant-tracer",
        &[],
        ("kernels/cuda/tracer.cu", &["trace_constant", "trace_global"]),
    ),
    program("05-streams", "05-streams", "lab-streams", &[], "pipeline.cu"),
    program(
        "05-mmm-streamed",
        "05-streams",
        "lab-streams",
        &["--program", "mmm-streamed"],
        "mmm_streamed.cu",
    ),
    program(
        "06-pinned-mapped",
        "06-pinned-mapped",
        "lab-mapped",
        &[],
        "zero_copy.cu",
    ),
    program(
        "06-mmm-streamed-and-pinned",
        "06-pinned-mapped",
        "lab-mapped",
        &["--program", "mmm-streamed-and-pinned"],
        "mmm_streamed_and_pinned.cu",
    ),
    kernel(
        "07-dynamic-parallelism",
        "lab-dynamic-parallel",
        &[],
        (
            "kernels/cuda/adaptive_simpson.cu",
            &["adaptive_master_", "adaptive_level_"],
        ),
    ),
];

/// A kernel week: `(ours, kernels)` as [`Handed::Kernel`] has them.
const fn kernel(
    name: &'static str,
    lab: &'static str,
    args: &'static [&'static str],
    (ours, kernels): (&'static str, &'static [&'static str]),
) -> Week {
    Week {
        name,
        folder: name,
        lab,
        args,
        handed: Handed::Kernel { ours, kernels },
    }
}

const fn program(
    name: &'static str,
    folder: &'static str,
    lab: &'static str,
    args: &'static [&'static str],
    program: &'static str,
) -> Week {
    Week {
        name,
        folder,
        lab,
        args,
        handed: Handed::Program { program },
    }
}

/// The week named `name`.
pub fn week(name: &str) -> Option<&'static Week> {
    WEEKS.iter().find(|week| week.name == name)
}

/// The names of the weeks that hand in a whole program (`program`), or of those that hand in a
/// kernel, in the course's order.
pub fn names_of(program: bool) -> Vec<&'static str> {
    WEEKS
        .iter()
        .filter(|week| week.is_program() == program)
        .map(|week| week.name)
        .collect()
}

/// Every week's name, for messages and `--help`.
pub fn names() -> String {
    WEEKS.map(|week| week.name).join(", ")
}

impl Week {
    /// The lab's flag that takes a submission's file.
    pub fn source_flag(&self) -> &'static str {
        match self.handed {
            Handed::Kernel { .. } => "--kernel-source",
            Handed::Program { .. } => "--program-source",
        }
    }

    /// The starter's file name of a program week (a folder may hold both programs of week 5).
    pub fn program_file(&self) -> Option<&'static str> {
        match self.handed {
            Handed::Kernel { .. } => None,
            Handed::Program { program } => Some(program),
        }
    }

    /// Whether the lab runs a whole program (no compute-sanitizer, no feedback details yet).
    pub fn is_program(&self) -> bool {
        self.program_file().is_some()
    }

    /// The starter a student is handed, in the repository at `repository` (`assignments/<folder>/` and
    /// our solution's file name).
    pub fn starter(&self, repository: &Path) -> PathBuf {
        let ours = self.ours(repository);
        let name = ours.file_name().unwrap_or_default();
        repository.join("assignments").join(self.folder).join(name)
    }

    /// The folder of our solution in the repository (`kernels/cuda` or `reference/weeks`) and its file
    /// name: what the week's starter and its broken and red-team files are made from.
    pub fn solution(&self) -> (&'static str, &'static str) {
        match self.handed {
            Handed::Kernel { ours, .. } => ours.rsplit_once('/').unwrap_or(("", ours)),
            Handed::Program { program } => ("reference/weeks", program),
        }
    }

    /// Our solution of the week, in the repository at `repository`.
    pub fn ours(&self, repository: &Path) -> PathBuf {
        let (folder, file) = self.solution();
        repository.join(folder).join(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_week_is_found_by_its_name_and_has_its_folder() {
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for each in &WEEKS {
            assert_eq!(week(each.name).unwrap().name, each.name);
            assert!(each.starter(repository).is_file(), "{}", each.name);
            assert!(each.ours(repository).is_file(), "{}", each.name);
        }
        assert!(week("09-nothing").is_none());
        assert!(names().starts_with("01-simpson, 02-mmm-ab, "));
    }
}
