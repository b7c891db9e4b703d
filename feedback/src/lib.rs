//! What a teacher hands back after `assignments/grade.sh --feedback DIR` (issue 44): a feedback page
//! per student (Markdown and HTML) made from the lab's `--check --details` file, a class page
//! (`DIR/index.html`, static, no script) with each case's pass rate, the time ratios and the
//! submissions to look at, and the groups of submissions that are too alike, each beside the one
//! most like it on a page of its own (the lines that match marked).

pub mod alike;
pub mod class;
pub mod document;
pub mod grades;
pub mod normalise;
pub mod plot;
pub mod runs;
pub mod similarity;
pub mod student;
