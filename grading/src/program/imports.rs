//! What a week's program may not do, read from what nvcc made of it (issue 60, item 4). The program
//! runs under our recorder in its own process, so what the recorder sees could be changed from
//! inside by code that goes looking for it: CUPTI switched off, the recorder's pipe written to, the
//! work done in a process the recorder never sees. Each of those needs a call that no program of
//! these weeks makes, or code that runs before the recorder's. Both are read from the student's code
//! alone (`student.o`, compiled before the CUDA runtime is linked in beside it) and from the linked
//! program, never from its text:
//!
//! - its imports, the functions it calls from outside: no loading of code or symbols at run time
//!   (`dlopen`, `dlsym`), no CUPTI or driver entry points, no new processes or programs (`fork`,
//!   `exec*`, `system`, `posix_spawn`), no raw system calls, tracing or signals to other processes;
//! - no `.preinit_array`, the one kind of constructor that runs before a preloaded library's (ours).
//!
//! A raw `syscall` instruction written in `asm` passes these checks; the sandbox's filter and its
//! namespaces stop what it could reach ([`sandbox`]: no new process, no tracing, nothing outside).

use std::path::Path;

use object::{Object as _, ObjectSymbol as _};

/// Imports refused by name, each with why.
const REFUSED: [(&str, &str); 33] = [
    ("dlopen", "loads code at run time"),
    ("dlmopen", "loads code at run time"),
    ("dlsym", "looks up functions at run time"),
    ("dlvsym", "looks up functions at run time"),
    ("dladdr", "reads the loaded libraries"),
    ("dladdr1", "reads the loaded libraries"),
    ("dlinfo", "reads the loaded libraries"),
    ("dl_iterate_phdr", "reads the loaded libraries"),
    ("syscall", "makes raw system calls"),
    ("ptrace", "traces processes"),
    ("process_vm_readv", "reads other processes' memory"),
    ("process_vm_writev", "writes other processes' memory"),
    ("prctl", "changes how the process is run"),
    ("personality", "changes how the process is run"),
    ("fork", "starts a process the recorder does not see"),
    ("vfork", "starts a process the recorder does not see"),
    ("clone", "starts a process the recorder does not see"),
    ("daemon", "starts a process the recorder does not see"),
    ("posix_spawn", "starts a program the recorder does not see"),
    ("posix_spawnp", "starts a program the recorder does not see"),
    ("system", "starts a program the recorder does not see"),
    ("popen", "starts a program the recorder does not see"),
    ("execl", "replaces itself with another program"),
    ("execle", "replaces itself with another program"),
    ("execlp", "replaces itself with another program"),
    ("execv", "replaces itself with another program"),
    ("execve", "replaces itself with another program"),
    ("execvp", "replaces itself with another program"),
    ("execvpe", "replaces itself with another program"),
    ("fexecve", "replaces itself with another program"),
    ("setsid", "leaves its process group"),
    ("kill", "signals other processes"),
    ("killpg", "signals other processes"),
];

/// Imports refused by their first letters: CUPTI's API, the CUDA driver's entry points (which reach
/// CUPTI's callbacks too), and our recorder's own functions (all but the one course_program.h calls).
const REFUSED_PREFIXES: [(&str, &str); 6] = [
    ("cupti", "talks to CUPTI, which records the program"),
    ("cuGetProcAddress", "looks up CUDA driver functions at run time"),
    ("cudaGetDriverEntryPoint", "looks up CUDA driver functions at run time"),
    ("cuGetExportTable", "reads the CUDA driver's private tables"),
    ("cudaGetExportTable", "reads the CUDA driver's private tables"),
    ("lab_recorder_", "calls the recorder"),
];

/// The one function of the recorder a program calls: course_program.h's write_floats marks when the
/// results are read.
const MARK: &str = "lab_recorder_mark";

/// What the student's `object` and the linked `program` do that no program of the weeks may, each as
/// "calls NAME (why)"; empty where nothing. An error is the machine's (a file nvcc made is not ELF).
pub fn refused(object: &Path, program: &Path) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let bytes = read(object)?;
    let file = object::File::parse(&*bytes).map_err(|err| format!("{}: {err}", object.display()))?;
    for symbol in file.symbols().filter(|symbol| symbol.is_undefined()) {
        let Ok(name) = symbol.name() else { continue };
        let name = name.split('@').next().unwrap_or(name);
        if let Some(why) = why_refused(name) {
            let line = format!("calls {name} ({why})");
            if !found.contains(&line) {
                found.push(line);
            }
        }
    }
    for path in [object, program] {
        let bytes = read(path)?;
        let file = object::File::parse(&*bytes).map_err(|err| format!("{}: {err}", path.display()))?;
        if file.section_by_name(".preinit_array").is_some() {
            found.push("has a .preinit_array (code that runs before the recorder is set up)".to_string());
            break;
        }
    }
    Ok(found)
}

/// Why calling `name` is refused, if it is.
fn why_refused(name: &str) -> Option<&'static str> {
    if name == MARK {
        return None;
    }
    REFUSED
        .iter()
        .find(|(refused, _)| *refused == name)
        .or_else(|| REFUSED_PREFIXES.iter().find(|(prefix, _)| name.starts_with(prefix)))
        .map(|(_, why)| *why)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|err| format!("cannot read {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What nvcc makes of `file` (from the repository root), refused or not.
    fn refused_in(file: &str) -> Vec<String> {
        let path = common::testing::repository_file(file, env!("CARGO_MANIFEST_DIR"));
        let program = kernels::runtime::compile_program(Path::new(&path), &[crate::program::HEADER], 90)
            .unwrap_or_else(|err| panic!("{file}: {err}"));
        refused(&program.object, &program.executable).unwrap()
    }

    /// Our solutions, the starters and the broken programs of weeks 5 and 6 call nothing refused:
    /// the checks cost an honest program nothing (nvcc, no GPU).
    #[test]
    fn every_honest_program_of_the_weeks_passes() {
        let mut files = vec![
            "reference/weeks/pipeline.cu".to_string(),
            "reference/weeks/mmm_streamed.cu".into(),
            "reference/weeks/mmm_streamed_and_pinned.cu".into(),
            "reference/weeks/zero_copy.cu".into(),
        ];
        for week in ["05-streams", "06-pinned-mapped"] {
            for folder in [format!("assignments/{week}"), format!("assignments/{week}/broken")] {
                let path = common::testing::repository_file(&folder, env!("CARGO_MANIFEST_DIR"));
                for entry in std::fs::read_dir(path).unwrap() {
                    let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                    if name.ends_with(".cu") {
                        files.push(format!("{folder}/{name}"));
                    }
                }
            }
        }
        assert!(files.len() > 10, "{files:?}");
        for file in files {
            assert_eq!(refused_in(&file), Vec::<String>::new(), "{file}");
        }
    }

    /// Each red-team program whose header promises a refusal is refused for that reason.
    #[test]
    fn the_red_team_programs_are_refused_for_what_they_call() {
        let folder = "assignments/05-streams/adversarial";
        let path = common::testing::repository_file(folder, env!("CARGO_MANIFEST_DIR"));
        let mut refusals = 0;
        for entry in std::fs::read_dir(path).unwrap() {
            let file = entry.unwrap().path();
            let text = std::fs::read_to_string(&file).unwrap();
            let Some(reason) = text.lines().find_map(|line| line.strip_prefix("// expect: refused: ")) else {
                continue;
            };
            let name = format!("{folder}/{}", file.file_name().unwrap().to_string_lossy());
            let found = refused_in(&name);
            assert!(found.iter().any(|line| line.starts_with(reason)), "{name}: {found:?}");
            refusals += 1;
        }
        assert_eq!(refusals, 2);
    }

    #[test]
    fn the_recorders_mark_is_the_one_import_of_ours_a_program_may_have() {
        assert_eq!(why_refused("lab_recorder_mark"), None);
        assert_eq!(why_refused("lab_recorder_flush"), Some("calls the recorder"));
        assert_eq!(
            why_refused("cuptiActivityDisable"),
            Some("talks to CUPTI, which records the program")
        );
        assert_eq!(
            why_refused("cuGetProcAddress_v2"),
            Some("looks up CUDA driver functions at run time")
        );
        assert_eq!(why_refused("dlsym"), Some("looks up functions at run time"));
        for allowed in [
            "cudaMemcpyAsync",
            "cudaHostAlloc",
            "fopen",
            "fwrite",
            "pthread_create",
            "_Znwm",
            "exit",
        ] {
            assert_eq!(why_refused(allowed), None, "{allowed}");
        }
    }
}
