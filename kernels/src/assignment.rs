//! The weekly assignments' templates, made from our own kernels so they never drift from them. In a
//! source of `cuda/`, the students' part sits between two marker lines, its hint first:
//!
//! ```text
//!     // BEGIN ASSIGNMENT
//!     // TODO: what to write, in a line or more
//!     ...our solution...
//!     // END ASSIGNMENT
//! ```
//!
//! nvcc sees comments and our solution; [`template`] keeps the `TODO` lines and drops the rest of the
//! block. A `// STARTER: code` line among the hints becomes `code` in the template: something that
//! compiles but is not yet the answer (a `__device__` where `__constant__` belongs), for blocks the rest
//! of the file needs in order to compile. `cargo run -p kernels --bin templates` writes every week's template into `assignments/`; a test
//! checks that the committed ones are what it makes.

use crate::KernelImage;

pub const BEGIN: &str = "// BEGIN ASSIGNMENT";
pub const END: &str = "// END ASSIGNMENT";
pub const HINT: &str = "// TODO";
pub const STARTER: &str = "// STARTER: ";

/// A week whose students write a kernel: its folder in `assignments/`, the source in `cuda/` its
/// template comes from, and the image of ours the lab runs (a student's file is compiled like it).
#[derive(Debug, Clone, Copy)]
pub struct Week {
    pub folder: &'static str,
    pub source: &'static str,
    pub like: &'static KernelImage,
}

/// The kernel weeks, in course order.
pub const WEEKS: [Week; 5] = [
    Week { folder: "01-simpson", source: "simpson.cu", like: &crate::SIMPSON },
    Week { folder: "02-mmm-ab", source: "mmm.cu", like: &crate::MMM_BS16 },
    Week { folder: "03-mmm-tiled", source: "mmm.cu", like: &crate::MMM_BS16 },
    Week { folder: "04-constant-tracer", source: "tracer.cu", like: &crate::TRACER },
    Week { folder: "07-dynamic-parallelism", source: "adaptive_simpson.cu", like: &crate::ADAPTIVE_SIMPSON },
];

/// The week's template from the text of its source: a header saying where it comes from, then the
/// source with every assignment block cut down to its hint. Errors name the line of a malformed block.
pub fn template(source: &str, text: &str) -> Result<String, String> {
    let mut out = format!(
        "// Template made from kernels/cuda/{source} by `cargo run -p kernels --bin templates`.\n\
         // Write the parts marked TODO; the lab compiles this file with --kernel-source and checks it with --check.\n\n"
    );
    let mut block: Option<(usize, bool, bool)> = None; // (line of BEGIN, hint seen, solution seen)
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let marker = line.trim();
        match (&mut block, marker) {
            (None, BEGIN) => block = Some((number, false, false)),
            (None, END) => return Err(format!("{source}:{number}: {END} without {BEGIN}")),
            (None, _) => {
                out.push_str(line);
                out.push('\n');
            }
            (Some((begin, _, _)), BEGIN) => return Err(format!("{source}:{number}: {BEGIN} inside the block opened at line {begin}")),
            (Some((begin, hint, solution)), END) => {
                if !*hint || !*solution {
                    return Err(format!("{source}:{begin}: an assignment block needs {HINT} lines first, then the solution"));
                }
                block = None;
            }
            (Some((begin, hint, solution)), _) if marker.starts_with(HINT) || marker.starts_with(STARTER) => {
                if *solution {
                    return Err(format!("{source}:{number}: a {HINT} or {STARTER}line after the solution began (block at line {begin})"));
                }
                *hint |= marker.starts_with(HINT);
                out.push_str(&line.replacen(STARTER, "", 1));
                out.push('\n');
            }
            (Some((_, _, solution)), _) => *solution |= !marker.is_empty(),
        }
    }
    match block {
        Some((begin, _, _)) => Err(format!("{source}:{begin}: {BEGIN} is never closed")),
        None => Ok(out),
    }
}

/// The lines of the solution in `text`: what no template may contain.
pub fn solution_lines(text: &str) -> Vec<&str> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        match line.trim() {
            BEGIN => inside = true,
            END => inside = false,
            marker if inside && !marker.starts_with(HINT) && !marker.starts_with(STARTER) && !marker.is_empty() => lines.push(marker),
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    const SOURCE: &str = "a\n  // BEGIN ASSIGNMENT\n  // TODO: add\n  x = y + z;\n  // END ASSIGNMENT\nb\n";

    fn repository() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn a_template_keeps_the_hint_and_drops_the_solution() {
        let made = template("t.cu", SOURCE).unwrap();
        assert!(made.ends_with("a\n  // TODO: add\nb\n"), "{made}");
        assert!(made.starts_with("// Template made from kernels/cuda/t.cu"));
        assert_eq!(solution_lines(SOURCE), ["x = y + z;"]);
        let starter = "  // BEGIN ASSIGNMENT\n  // TODO: constant\n  // STARTER: __device__ int v;\n  __constant__ int v;\n  // END ASSIGNMENT\n";
        assert!(template("t.cu", starter).unwrap().ends_with("  // TODO: constant\n  __device__ int v;\n"));
        assert_eq!(solution_lines(starter), ["__constant__ int v;"]);
    }

    #[test]
    fn malformed_blocks_are_errors_with_their_line() {
        for (text, error) in [
            ("// BEGIN ASSIGNMENT\nx;\n", "t.cu:1: // BEGIN ASSIGNMENT is never closed"),
            ("// END ASSIGNMENT\n", "t.cu:1: // END ASSIGNMENT without // BEGIN ASSIGNMENT"),
            ("// BEGIN ASSIGNMENT\nx;\n// END ASSIGNMENT\n", "t.cu:1: an assignment block needs // TODO lines first, then the solution"),
            ("// BEGIN ASSIGNMENT\n// TODO\n// END ASSIGNMENT\n", "t.cu:1: an assignment block needs // TODO lines first, then the solution"),
            ("// BEGIN ASSIGNMENT\n// TODO a\nx;\n// TODO b\n// END ASSIGNMENT\n", "t.cu:4: a // TODO or // STARTER: line after the solution began (block at line 1)"),
            ("// BEGIN ASSIGNMENT\n// BEGIN ASSIGNMENT\n", "t.cu:2: // BEGIN ASSIGNMENT inside the block opened at line 1"),
        ] {
            assert_eq!(template("t.cu", text).unwrap_err(), error);
        }
    }

    #[test]
    fn the_committed_templates_are_what_the_generator_makes_and_hold_no_solution() {
        for week in WEEKS {
            let source = std::fs::read_to_string(repository().join("kernels/cuda").join(week.source)).unwrap();
            let made = template(week.source, &source).unwrap();
            let path = repository().join("assignments").join(week.folder).join(week.source);
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(committed == made, "{} is not what the generator makes: run `cargo run -p kernels --bin templates`", path.display());
            let solution = solution_lines(&source);
            assert!(!solution.is_empty(), "{} marks no assignment", week.source);
            // A solution line may also stand outside the blocks (an atomicAdd the master shares): the
            // template must not have it more often than the rest of the source does.
            let count = |text: &str, line: &str| text.lines().filter(|l| l.trim() == line).count();
            for line in solution.iter().filter(|line| line.len() > 12) {
                let outside = count(&source, line) - solution.iter().filter(|l| *l == line).count();
                assert!(count(&made, line) <= outside, "{}'s template contains the solution line {line:?}", week.folder);
            }
        }
    }

    #[test]
    fn every_template_and_every_broken_kernel_compiles() {
        for week in WEEKS {
            let folder = repository().join("assignments").join(week.folder);
            let mut files = vec![folder.join(week.source)];
            if let Ok(entries) = std::fs::read_dir(folder.join("broken")) {
                files.extend(entries.map(|entry| entry.unwrap().path()));
            }
            for file in files {
                crate::runtime::compile(&file, week.like).unwrap_or_else(|err| match err {
                    crate::runtime::CompileError::Nvcc { messages, .. } => panic!("{}:\n{messages}", file.display()),
                    other => panic!("{}: {other}", file.display()),
                });
            }
        }
    }
}
