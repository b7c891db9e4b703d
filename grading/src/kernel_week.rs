//! Weeks 1 to 4 and 7: a student's kernel inside a lab. A lab offers its week by implementing
//! [`KernelWeek`] (our kernels, the kernels the cases call, the cases, the rules and the measured
//! technique, one case's run), as the program weeks implement [`crate::program::Week`]; [`run`] does
//! the rest: the student's file compiled, then `--list-cases`, `--check` or a case's child, as asked.

use std::path::Path;

use anyhow::Result;
use kernels::KernelImage;

use crate::cases_file::CaseSet;
use crate::check::Check;
use crate::entries::Entry;
use crate::measure::Measure;
use crate::row::{Outcome, Row};
use crate::student_args::StudentArgs;
use crate::times::CaseContext;

/// A week whose students hand in a kernel file, checked inside the lab that runs ours.
pub trait KernelWeek {
    /// One case of the check (sizes, inputs' seed, launch shape).
    type Case: 'static;
    /// The lab's name, which names the check's private folder.
    const LAB: &'static str;
    /// Our kernels as the build made them: a student's file is compiled with the same flags, and
    /// each of [`KernelWeek::entries`] must take what ours takes.
    fn ours(&self) -> &'static KernelImage;
    /// The kernels this run calls (every kernel of the week when it checks).
    fn entries(&self) -> &[Entry];
    /// The cases: the week's own, or those of a `--cases` file (`file`); a bad file is a usage error.
    fn case_set(&self, file: Option<&Path>) -> Result<CaseSet<Self::Case>>;
    /// Rules read from the compiled image before any case runs (where a variable lives, whether a
    /// kernel launches others); they count like cases, and show without a GPU.
    fn rules(&self, _image: &KernelImage) -> Result<Vec<Row>> {
        Ok(Vec::new())
    }
    /// The week's technique measured with hardware counters while the kernel runs, on some of
    /// `cases`, where the week teaches one.
    fn measure(&self, _cases: &[Self::Case]) -> Option<Measure<'static, Self::Case>> {
        None
    }
    /// Flags each case's child gets beyond the lab's own command line: what the lab chose that the
    /// command line does not say (lab-mmm's week, read from the file).
    fn child_flags(&self) -> &[&'static str] {
        &[]
    }
    /// Whether [`KernelWeek::run_case`] holds the GPU around each of its launches itself: its timed
    /// loops through `common::timing`, its untimed launches of the student's kernels through
    /// `common::timing::alone::beside` (lab-mmm). Under compute-sanitizer, where checks share the
    /// GPU, such a case holds it only around those launches ([`crate::gpu_lock::launches_beside`]);
    /// any other case holds it for its whole run.
    fn holds_its_launches(&self) -> bool {
        false
    }
    /// Runs one case with `image` (the student's kernels) and judges it against the CPU and ours.
    fn run_case(&self, image: &KernelImage, case: &Self::Case, context: CaseContext) -> Result<Outcome>;
}

/// The lab's start with a student's file: the cases read (a bad `--cases` file first), the file
/// compiled like ours ([`StudentArgs::image`]), then whatever check was asked for. `Ok(None)` when
/// one ran and passed (the lab ends there), `Ok(Some(image))` when none was asked for: the image the
/// lab's experiment runs, ours or the student's.
pub fn run<W: KernelWeek>(student: &StudentArgs, week: &W) -> Result<Option<&'static KernelImage>> {
    let cases = week.case_set(student.cases.as_deref())?;
    let compiled = student.image(week.ours(), week.entries());
    run_compiled(student, week, cases, compiled)
}

/// [`run`] where the lab compiled the file itself, before it knew its week (lab-mmm: the file
/// chooses between weeks 2 and 3), with `cases` the week's case set.
pub fn run_compiled<W: KernelWeek>(
    student: &StudentArgs,
    week: &W,
    cases: CaseSet<W::Case>,
    compiled: Result<&'static KernelImage>,
) -> Result<Option<&'static KernelImage>> {
    let check = Check {
        lab: W::LAB,
        entries: week.entries(),
        measure: week.measure(&cases.cases),
        cases,
        child_flags: week.child_flags(),
        holds_its_launches: week.holds_its_launches(),
    };
    let rules = |image: &KernelImage| week.rules(image);
    let run_case = |image: &KernelImage, case: &W::Case, context| week.run_case(image, case, context);
    match student.run_check_if_asked(&compiled, week.ours(), &check, rules, run_case) {
        Some(done) => done.map(|()| None),
        None => compiled.map(Some),
    }
}
