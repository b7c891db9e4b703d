//! Which lab a student's file belongs to (issue 45): week 3's mmm.cu given to lab-simpson failed with
//! an `#error` from inside the kernel, which says nothing about the mistake. The kernels a file
//! defines, read from its text, are compared with each week's names before the compiler runs; a file
//! that defines none of this lab's kernels and some of another week's gets one line naming its lab.
//!
//! The text is only read for this question. A file that defines one of the lab's kernels, or whose
//! kernels the reading cannot name (macros of its own), is compiled and judged as always: the reading
//! can send a file to the right lab, never let one pass. The weeks and their kernels are the
//! grader's one list (`grader::weeks`).

use grader::weeks::{Handed, Week, WEEKS};

/// A lab that checks students' kernels, with its weeks (lab-mmm has two: `--kernel` tells them apart,
/// or the file itself, lab-mmm's `week_of`), read from the grader's list of weeks.
struct KernelLab {
    lab: &'static str,
    weeks: Vec<&'static Week>,
}

impl KernelLab {
    /// Every lab with a kernel week, in the course's order.
    fn all() -> Vec<KernelLab> {
        let mut labs: Vec<KernelLab> = Vec::new();
        for week in WEEKS.iter().filter(|week| !week.is_program()) {
            match labs.iter_mut().find(|known| known.lab == week.lab) {
                Some(known) => known.weeks.push(week),
                None => labs.push(KernelLab {
                    lab: week.lab,
                    weeks: vec![week],
                }),
            }
        }
        labs
    }

    /// The names of the kernels a file of one of the lab's weeks defines.
    fn kernels(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.weeks
            .iter()
            .flat_map(|week| match week.handed {
                Handed::Kernel { kernels, .. } => kernels,
                Handed::Program { .. } => &[],
            })
            .copied()
    }

    /// The lab's week folders: `02-mmm-ab or 03-mmm-tiled`.
    fn folders(&self) -> String {
        self.weeks
            .iter()
            .map(|week| week.folder)
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// How each week is checked: `lab-mmm --kernel naive or --kernel tiled`.
    fn command(&self) -> String {
        let args = self.weeks.iter().map(|week| week.args.join(" ")).collect::<Vec<_>>();
        [self.lab.to_string(), args.join(" or ")]
            .join(" ")
            .trim_end()
            .to_string()
    }
}

/// The kernels `source` defines, as written: the identifier before the parameters of each
/// `__global__` declaration, comments left out, a macro's `name_##ARG` read as `name_`.
pub fn kernels_in(source: &str) -> Vec<String> {
    let code = without_comments(source);
    let mut names = Vec::new();
    for (at, _) in code.match_indices("__global__") {
        let rest = &code[at + "__global__".len()..];
        let Some(head) = rest.split(['(', ';', '{']).next() else {
            continue;
        };
        let last = head
            .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
            .rfind(|word| !word.is_empty())
            .unwrap_or("");
        let name = last.split("##").next().unwrap_or("");
        if name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            names.push(name.to_string());
        }
    }
    names
}

/// Whether the kernel `defined` (from [`kernels_in`]) is `wanted`, or a macro's prefix of it.
fn names(defined: &str, wanted: &str) -> bool {
    defined == wanted
        || (defined.ends_with('_') && wanted.starts_with(defined))
        || (wanted.ends_with('_') && defined.starts_with(wanted))
}

/// One line where `source` (named `file`) is another week's file: it defines none of `wanted` (the
/// C names of the kernels this lab calls, which say the lab's week) and some of another lab's. `None`
/// where it defines one of `wanted`, or nothing any week knows.
pub fn belongs_elsewhere(file: &str, source: &str, wanted: &[&str]) -> Option<String> {
    let defined = kernels_in(source);
    if defined.iter().any(|d| wanted.iter().any(|w| names(d, w))) {
        return None;
    }
    let labs = KernelLab::all();
    let this = labs
        .iter()
        .find(|lab| wanted.iter().any(|w| lab.kernels().any(|k| names(k, w))))?;
    let defines = |lab: &KernelLab| {
        defined
            .iter()
            .map(String::as_str)
            .filter(|d| lab.kernels().any(|k| names(d, k)))
            .collect::<Vec<_>>()
    };
    let other = labs
        .iter()
        .filter(|lab| lab.lab != this.lab)
        .find(|lab| !defines(lab).is_empty())?;
    Some(format!(
        "{file} is week {}'s file (it defines {}): check it with {}, not {} ({} checks week {}'s kernels: {})",
        other.folders(),
        defines(other).join(", "),
        other.command(),
        this.lab,
        this.lab,
        this.folders(),
        wanted.join(", ")
    ))
}

/// `source` with `//` and `/* */` comments replaced by spaces (string literals are not told apart:
/// a kernel's declaration holds none).
fn without_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> String {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
    }

    #[test]
    fn the_kernels_of_each_weeks_file_are_read_from_its_text() {
        assert_eq!(
            kernels_in(&read("assignments/01-simpson/simpson.cu")),
            ["simpson", "simpson_sin", "simpson_exp", "simpson_peak"]
        );
        assert_eq!(
            kernels_in(&read("assignments/03-mmm-tiled/mmm.cu"))[..4],
            ["mmm_ab_f32", "mmm_ab_f64", "mmm_f32", "mmm_f64"]
        );
        assert_eq!(
            kernels_in(&read("assignments/07-dynamic-parallelism/adaptive_simpson.cu"))[1..],
            ["adaptive_master_", "adaptive_level_"]
        );
        assert_eq!(kernels_in("// __global__ void mmm_f64(\n/* __global__ void x( */ extern \"C\" __global__ void\n  simpson (double a)"), ["simpson"]);
    }

    /// Issue 45: week 3's mmm.cu given to lab-simpson.
    #[test]
    fn another_weeks_file_is_named_with_its_lab() {
        let mmm = read("assignments/03-mmm-tiled/mmm.cu");
        let simpson = ["simpson", "simpson_sin", "simpson_exp", "simpson_peak"];
        assert_eq!(
            belongs_elsewhere("mmm.cu", &mmm, &simpson).unwrap(),
            "mmm.cu is week 02-mmm-ab or 03-mmm-tiled's file (it defines mmm_ab_f32, mmm_ab_f64, mmm_f32, mmm_f64): check it with lab-mmm --kernel naive or --kernel tiled, not lab-simpson (lab-simpson checks week 01-simpson's kernels: simpson, simpson_sin, simpson_exp, simpson_peak)"
        );
        let tree = read("assignments/07-dynamic-parallelism/adaptive_simpson.cu");
        assert!(belongs_elsewhere("a.cu", &tree, &["mmm_f64"])
            .unwrap()
            .contains("check it with lab-dynamic-parallel, not lab-mmm"));
        // This lab's kernel, or no week's, and the compiler decides as always.
        assert_eq!(belongs_elsewhere("mmm.cu", &mmm, &["mmm_f64", "mmm_f32"]), None);
        assert_eq!(
            belongs_elsewhere("x.cu", "__global__ void mine(int* x) {}", &simpson),
            None
        );
        assert_eq!(
            belongs_elsewhere(
                "x.cu",
                &format!("{mmm}\n__global__ void simpson(double a, double b, double* s) {{}}"),
                &simpson
            ),
            None
        );
    }
}
