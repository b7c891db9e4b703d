//! nvcc on a student's file (issue 60): in the sandbox of its scratch folder, bounded in time and
//! output, and saying nothing of any file but the student's own until the includes are known.
//!
//! Three guards, each for what the one before cannot promise:
//! - the sandbox ([`sandbox`]): nvcc, the host compiler and the assembler read only the toolkit, the
//!   system and the scratch folder (which holds the student's file under our name and our headers),
//!   so an `#include`, an `.incbin` or an `#embed` of a hidden case, a solution or another student's
//!   file finds nothing;
//! - a preprocessing pass first (`-M`), whose list of every file read is checked against the allowed
//!   folders ([`super::runtime::foreign_include`]) before any message is shown: a file that includes
//!   anything else is refused in one line naming the include, nothing of its text; where that pass
//!   itself fails, only its messages about the student's own file are shown;
//! - messages that name the student's file by its name, our headers by theirs and the toolkit as
//!   `$CUDA`, never the grading machine's folders.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::runtime::{foreign_include, make_dependencies, run_bounded, Bounded, CompileError, NVCC_LIMIT};

/// nvcc, ready to compile one student's file.
pub(crate) struct Compiler {
    nvcc: PathBuf,
    boxed: Option<sandbox::Sandbox>,
    /// The scratch folder: our copy of the file, our headers, nvcc's outputs.
    scratch: PathBuf,
    /// Our copy of the student's file, in `scratch`.
    copy: PathBuf,
    /// The student's file, as the caller named it (for errors), and its name (for messages).
    source: PathBuf,
    shown: String,
    toolkit: PathBuf,
    /// How long one nvcc run may take.
    limit: Duration,
}

impl Compiler {
    /// nvcc for `copy` (our copy of `source` in `scratch`), in a sandbox where this machine has one.
    pub(crate) fn new(
        nvcc: &Path,
        scratch: &Path,
        copy: &Path,
        source: &Path,
        limit: Duration,
    ) -> Result<Compiler, CompileError> {
        let toolkit = toolkit_root(nvcc);
        let sandbox = sandbox::Sandbox::prepare(&policy(nvcc, &toolkit, scratch)).map_err(CompileError::Io)?;
        Ok(Compiler {
            boxed: Some(sandbox),
            limit,
            ..Compiler::ours(nvcc, scratch, copy, source)
        })
    }

    /// nvcc for a file of ours (the recorder): no sandbox, the same bounds.
    pub(crate) fn ours(nvcc: &Path, scratch: &Path, copy: &Path, source: &Path) -> Compiler {
        Compiler {
            nvcc: nvcc.to_path_buf(),
            boxed: None,
            scratch: scratch.to_path_buf(),
            copy: copy.to_path_buf(),
            source: source.to_path_buf(),
            shown: source.file_name().map_or_else(
                || source.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            ),
            toolkit: toolkit_root(nvcc),
            limit: NVCC_LIMIT,
        }
    }

    /// Runs nvcc with `args`: what it printed (the ptxas report, warnings), paths cleaned, or its
    /// failure with those messages.
    pub(crate) fn run(&self, args: &[String]) -> Result<String, CompileError> {
        let (success, messages) = self.output(args)?;
        if success {
            Ok(messages)
        } else {
            Err(CompileError::Nvcc {
                path: self.source.clone(),
                messages,
            })
        }
    }

    /// The preprocessing pass: nvcc with `args` and `-M`, and every file it read checked before a
    /// word of it is shown. A file of `refused` (CUPTI's headers for a program) is refused too.
    pub(crate) fn check_includes(&self, args: &[String], refused: &dyn Fn(&Path) -> bool) -> Result<(), CompileError> {
        let deps = self.scratch.join("student.deps");
        let mut args = args.to_vec();
        args.extend([
            "-M".to_string(),
            self.copy.display().to_string(),
            "-MF".to_string(),
            deps.display().to_string(),
        ]);
        let (success, messages) = self.output(&args)?;
        if let Some(include) = denied_include(&messages) {
            return Err(CompileError::ForeignInclude {
                path: self.source.clone(),
                include,
            });
        }
        let dependencies = std::fs::read_to_string(&deps).unwrap_or_default();
        let refused_file = make_dependencies(&dependencies)
            .into_iter()
            .find(|file| refused(Path::new(file)));
        let foreign =
            refused_file.or_else(|| foreign_include(&dependencies, &[&self.scratch, &self.toolkit], &self.copy));
        if let Some(include) = foreign {
            return Err(CompileError::ForeignInclude {
                path: self.source.clone(),
                include: self.clean(&include),
            });
        }
        if !success {
            return Err(CompileError::Nvcc {
                path: self.source.clone(),
                messages: own_lines(&messages, &self.shown),
            });
        }
        Ok(())
    }

    /// nvcc's exit and its messages (stdout, then stderr), cleaned.
    fn output(&self, args: &[String]) -> Result<(bool, String), CompileError> {
        let mut command = Command::new(&self.nvcc);
        command.args(args);
        // Kept until nvcc has started: the child writes its layers into this pipe. Boxed or not, a
        // lab stopped mid-compile stops nvcc too.
        let _pending = match &self.boxed {
            Some(sandbox) => Some(sandbox.apply(&mut command).map_err(CompileError::Io)?),
            None => {
                sandbox::end_with_parent(&mut command);
                None
            }
        };
        let output = run_bounded(&mut command, self.limit).map_err(|err| match err {
            Bounded::TooLong => CompileError::TooLong {
                path: self.source.clone(),
                seconds: self.limit.as_secs(),
            },
            Bounded::Io(err) => CompileError::Io(format!("could not run {}: {err}", self.nvcc.display())),
        })?;
        let messages = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok((output.status.success(), self.clean(&messages)))
    }

    /// `text` with our copy's path as the student's file name, the scratch folder gone (our headers
    /// by their names) and the toolkit as `$CUDA`.
    fn clean(&self, text: &str) -> String {
        let scratch = format!("{}/", self.scratch.display());
        text.replace(&self.copy.display().to_string(), &self.shown)
            .replace(&scratch, "")
            .replace(&self.toolkit.display().to_string(), "$CUDA")
    }
}

/// What a compile may touch: the toolkit (read and run), the system's compilers (gcc, as, ld in
/// `/usr/bin`, or `/opt` on a cluster), and the scratch folder (read and write). It may start
/// processes: nvcc runs its stages as processes.
fn policy(nvcc: &Path, toolkit: &Path, scratch: &Path) -> sandbox::Policy {
    let bin = nvcc.parent().unwrap_or(Path::new("/usr/local/cuda/bin"));
    let mut policy = sandbox::Policy::new(scratch, &format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
    let given_root = bin.parent().unwrap_or(toolkit).to_path_buf();
    policy.execute = vec![
        toolkit.to_path_buf(),
        given_root,
        "/usr/bin".into(),
        "/bin".into(),
        "/usr/local/bin".into(),
        "/usr/libexec".into(),
        "/opt".into(),
    ];
    policy.processes = true;
    policy
}

/// The CUDA toolkit's folder: nvcc's `bin/..`, with every link resolved.
pub(crate) fn toolkit_root(nvcc: &Path) -> PathBuf {
    let root = nvcc
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr/local/cuda"));
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// Of nvcc's `messages`, the lines about the file `shown` (and nvcc's own): a diagnostic whose
/// location is another file is dropped with the lines that quote it, so a file the preprocessor
/// read is never shown.
fn own_lines(messages: &str, shown: &str) -> String {
    let mut keep = false;
    let mut kept = String::new();
    for line in messages.lines() {
        if let Some(file) = location(line) {
            keep = file == shown;
        } else if line.starts_with("nvcc ") {
            keep = true;
        }
        if keep {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The include the sandbox refused to the preprocessor (`file:1:10: fatal error: PATH: Permission
/// denied`): the file lies outside what a compile may read, so it is a foreign include, named as
/// such; the preprocessor stopped there and listed nothing.
fn denied_include(messages: &str) -> Option<String> {
    messages.lines().find_map(|line| {
        let (_, rest) = line.split_once(": fatal error: ")?;
        Some(rest.strip_suffix(": Permission denied")?.to_string())
    })
}

/// The file a diagnostic line names: `file(12): error` (nvcc's front end), `file:12:5: error` (gcc),
/// `In file included from file:3:`. A line that starts with a blank is a quote of code, never one.
fn location(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let line = line.strip_prefix("In file included from ").unwrap_or(line);
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if let Some(open) = line.find('(') {
        if let Some((number, _)) = line[open + 1..].split_once("):") {
            if digits(number) {
                return Some(&line[..open]);
            }
        }
    }
    let mut parts = line.splitn(3, ':');
    let (file, number) = (parts.next()?, parts.next()?);
    digits(number).then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_students_own_lines_are_shown_from_a_failed_preprocessing() {
        let messages = "In file included from mmm.cu:3:\n\
            hidden.txt:1:1: error: stray '#' in program\n\
            \x20   1 | # the hidden case 4096 4\n\
            \x20     | ^\n\
            mmm.cu(7): error: identifier \"x\" is undefined\n\
            \x20   int y = x;\n\
            \x20           ^\n\
            hidden.txt(2): error: expected a declaration\n\
            \x20   the second hidden line\n\
            nvcc error   : 'cudafe++' died\n";
        assert_eq!(
            own_lines(messages, "mmm.cu"),
            "In file included from mmm.cu:3:\nmmm.cu(7): error: identifier \"x\" is undefined\n\
             \x20   int y = x;\n\x20           ^\nnvcc error   : 'cudafe++' died\n"
        );
    }

    #[test]
    fn an_include_the_sandbox_refused_is_named_and_nothing_else() {
        let messages = "mine.cu:1:10: fatal error: /work/kernels/cuda/mmm.cu: Permission denied\n\
            \x20   1 | #include \"/work/kernels/cuda/mmm.cu\"\n\
            compilation terminated.\n";
        assert_eq!(denied_include(messages).as_deref(), Some("/work/kernels/cuda/mmm.cu"));
        assert_eq!(
            denied_include("mine.cu:1:10: fatal error: x.h: No such file or directory\n"),
            None
        );
    }

    #[test]
    fn a_location_is_read_in_both_compilers_formats() {
        assert_eq!(location("mmm.cu(12): error: x"), Some("mmm.cu"));
        assert_eq!(location("a b.cu:3:4: warning: y"), Some("a b.cu"));
        assert_eq!(location("In file included from mmm.cu:3:"), Some("mmm.cu"));
        assert_eq!(location("    int y = f(2):"), None);
        assert_eq!(location("1 error detected"), None);
    }
}
