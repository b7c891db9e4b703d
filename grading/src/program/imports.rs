//! What a week's program may not do, read from what nvcc made of it (issue 60, item 4). The program
//! runs under our recorder in its own process, so what the recorder sees could be changed from
//! inside by code that goes looking for it: CUPTI switched off, the recorder's pipe written to, the
//! work done in a process the recorder never sees. Each of those needs a call that no program of
//! these weeks makes, or code that runs before the recorder's. Both are read from the student's code
//! alone (`student.o`, compiled before the CUDA runtime is linked in beside it) and from the linked
//! program, never from its text:
//!
//! - its imports, the functions it calls from outside, are an allow-list ([`allowed`]): the CUDA
//!   runtime, the C++ standard library, and the C library's files, strings, memory, numbers, time,
//!   math and threads. Refused with a reason of their own: loading code or symbols at run time
//!   (`dlopen`, `dlsym`), CUPTI or driver entry points, new processes or programs (`fork`, `exec*`,
//!   `system`), raw system calls, tracing or signals to other processes; everything else off the
//!   list (`open`, `write`, `mmap`, `opendir`, sockets, ...) as "not among the weeks' functions";
//! - no system-call instruction in the student's host code (`syscall`, `sysenter`, `int 0x80` on
//!   x86-64, `svc` on Arm), which would reach the kernel without an import;
//! - no `.preinit_array`, the one kind of constructor that runs before a preloaded library's (ours).
//!
//! What a program could still do unseen: reach the standard library's files (`std::ofstream` on
//! `/proc/self/fd/N`) and its own memory (where the recorder keeps its word) with plain pointers.
//! [`super::trace::Trace::within`] and the rules' measurements are what stand against a trace made
//! that way; assignments/README.md says so.

use std::path::Path;

use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

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

/// Why an import off the allow-list is refused.
const NOT_LISTED: &str = "not among the functions a program of these weeks may call";

/// Prefixes of the allowed imports: the CUDA runtime (its API and what nvcc's launch code calls),
/// the C++ standard library and ABI by their mangled names (`std::`, `__gnu_cxx::`, `operator
/// new`/`delete`, type information, exceptions), and POSIX threads.
#[rustfmt::skip]
const ALLOWED_PREFIXES: [&str; 24] = [
    "cuda", "__cuda", "_ZSt", "_ZNSt", "_ZNKSt", "_ZNSa", "_ZNSi", "_ZNSo", "_ZNSs", "_ZNKSs", "_ZNSd",
    "_ZNKSo", "_ZNKSi", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_ZN10__cxxabiv1", "_ZTV", "_ZTI", "_ZTS", "_Znw",
    "_Zna", "_Zdl", "_Zda", "__cxa_",
];

/// The C library's functions a program of the weeks may call: files through `FILE*`, strings,
/// memory, numbers, time. Their fortified (`__NAME_chk`) and `__isoc99_`/`__isoc23_` forms too.
#[rustfmt::skip]
const ALLOWED: &[&str] = &[
    // stdio
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf", "vsnprintf", "puts",
    "fputs", "putchar", "fputc", "putc", "fwrite", "fread", "fopen", "fclose", "fflush", "fgets", "fgetc",
    "getc", "getchar", "fscanf", "scanf", "sscanf", "vsscanf", "fseek", "ftell", "fseeko", "ftello", "rewind",
    "feof", "ferror", "clearerr", "perror", "setvbuf", "setbuf", "ungetc", "remove", "stdin", "stdout",
    "stderr",
    // stdlib
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign", "atoi", "atol",
    "atoll", "atof", "strtol", "strtoul", "strtoll", "strtoull", "strtod", "strtof", "strtold", "exit",
    "abort", "atexit", "rand", "srand", "rand_r", "random", "srandom", "drand48", "srand48", "lrand48",
    "qsort", "bsearch", "abs", "labs", "llabs", "div", "ldiv", "getenv",
    // strings and characters
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp", "strcpy",
    "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr", "strdup", "strndup", "strerror", "strtok",
    "strtok_r", "strspn", "strcspn", "strpbrk", "strcasecmp", "strncasecmp", "__ctype_b_loc",
    "__ctype_tolower_loc", "__ctype_toupper_loc", "tolower", "toupper", "isspace", "isdigit", "isalpha",
    "isalnum",
    // time
    "clock", "time", "clock_gettime", "gettimeofday", "nanosleep", "usleep", "sleep", "difftime", "localtime",
    "localtime_r", "gmtime", "gmtime_r", "strftime",
];

/// The math library's functions a program of the weeks may call, also in their `f` and `l` forms.
#[rustfmt::skip]
const MATH: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "fabs", "floor", "ceil", "round", "trunc", "fmod",
    "fmin", "fmax", "fma", "hypot", "ldexp", "frexp", "modf", "erf", "erfc", "lround", "llround", "lrint",
    "rint", "nearbyint", "copysign", "sincos",
];

/// The C and C++ runtimes' own symbols that compiled code names.
#[rustfmt::skip]
const RUNTIME: &[&str] = &[
    "__errno_location", "__libc_single_threaded", "__assert_fail", "__stack_chk_fail", "__dso_handle",
    "_GLOBAL_OFFSET_TABLE_", "__tls_get_addr", "__gxx_personality_v0", "_Unwind_Resume", "__once_proxy",
    "__popcountdi2", "__udivti3", "__divti3", "__umodti3", "__modti3", "__muldc3", "__mulsc3",
];

/// POSIX threads' functions that are not allowed with the rest: signals.
const THREADS_REFUSED: [&str; 2] = ["pthread_kill", "pthread_sigqueue"];

/// Whether a program of the weeks may import `name` (see [`ALLOWED`], [`MATH`], [`RUNTIME`] and
/// [`ALLOWED_PREFIXES`]). Not on the list, on purpose: `_exit`, `_Exit` and `quick_exit`, which
/// leave without the exit handlers, so that a trace a program wrote into the recorder's pipe is
/// always followed by the recorder's own (and refused for it).
fn allowed(name: &str) -> bool {
    let plain = name
        .strip_prefix("__isoc99_")
        .or_else(|| name.strip_prefix("__isoc23_"))
        .or_else(|| name.strip_prefix("__").and_then(|rest| rest.strip_suffix("_chk")))
        .unwrap_or(name);
    let math = [plain, plain.strip_suffix(['f', 'l']).unwrap_or(plain)];
    name == MARK
        || ALLOWED.contains(&plain)
        || RUNTIME.contains(&name)
        || math.iter().any(|name| MATH.contains(name))
        || (plain.starts_with("pthread_") && !THREADS_REFUSED.contains(&plain))
        || ALLOWED_PREFIXES.iter().any(|prefix| plain.starts_with(prefix))
}

/// What the student's `object` and the linked `program` do that no program of the weeks may, each as
/// "calls NAME (why)"; empty where nothing. An error is the machine's (a file nvcc made is not ELF).
pub fn refused(object: &Path, program: &Path) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let (student, linked) = (read(object)?, read(program)?);
    let student = file_of(object, &student)?;
    for symbol in student.symbols().filter(|symbol| symbol.is_undefined()) {
        let Ok(name) = symbol.name() else { continue };
        let name = name.split('@').next().unwrap_or(name);
        if let Some(why) = why_refused(name) {
            let line = format!("calls {name} ({why})");
            if !found.contains(&line) {
                found.push(line);
            }
        }
    }
    found.extend(system_calls(&student));
    if student.section_by_name(".preinit_array").is_some()
        || file_of(program, &linked)?.section_by_name(".preinit_array").is_some()
    {
        found.push("has a .preinit_array (code that runs before the recorder is set up)".to_string());
    }
    Ok(found)
}

/// Why calling `name` is refused, if it is: a reason of its own where one is known (checked first:
/// `cudaGetDriverEntryPoint` begins like the CUDA runtime), else whether it is on the list.
fn why_refused(name: &str) -> Option<&'static str> {
    if name == MARK {
        return None;
    }
    let known = REFUSED
        .iter()
        .find(|(refused, _)| *refused == name)
        .or_else(|| REFUSED_PREFIXES.iter().find(|(prefix, _)| name.starts_with(prefix)))
        .map(|(_, why)| *why);
    known.or((!allowed(name)).then_some(NOT_LISTED))
}

/// The system-call instructions in `file`'s executable sections, each as "makes a system call
/// itself (INSTRUCTION in SECTION)", once per section. x86-64 is decoded instruction by instruction
/// from each section's start (how a compiler lays code out); Arm's instructions are words. Bytes of a
/// `syscall` hidden inside another instruction and reached by a jump are not seen: the sandbox's
/// filter is what limits those.
fn system_calls(file: &object::File) -> Vec<String> {
    let mut found = Vec::new();
    for section in file.sections().filter(|s| s.kind() == object::SectionKind::Text) {
        let Ok(code) = section.data() else { continue };
        let name = section.name().unwrap_or("?");
        let instruction = match file.architecture() {
            object::Architecture::X86_64 => x86_64_system_call(code),
            object::Architecture::Aarch64 => code
                .chunks_exact(4)
                .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
                .any(|word| word & 0xffe0_001f == 0xd400_0001)
                .then_some("svc"),
            _ => None,
        };
        if let Some(instruction) = instruction {
            found.push(format!("makes a system call itself ({instruction} in {name})"));
        }
    }
    found
}

/// The first system-call instruction in x86-64 `code`, by its mnemonic.
fn x86_64_system_call(code: &[u8]) -> Option<&'static str> {
    use iced_x86::{Decoder, DecoderOptions, Mnemonic};
    Decoder::new(64, code, DecoderOptions::NONE)
        .into_iter()
        .find_map(|instruction| match instruction.mnemonic() {
            Mnemonic::Syscall => Some("syscall"),
            Mnemonic::Sysenter => Some("sysenter"),
            Mnemonic::Int if instruction.immediate8() == 0x80 => Some("int 0x80"),
            _ => None,
        })
}

fn file_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<object::File<'a>, String> {
    object::File::parse(bytes).map_err(|err| format!("{}: {err}", path.display()))
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

    /// Our solutions, the starters, the broken programs, the honest corpus and the near-limit programs
    /// of weeks 5 and 6 call nothing refused: the checks cost an honest program nothing (nvcc, no GPU).
    #[test]
    fn every_honest_program_of_the_weeks_passes() {
        let mut files = vec![
            "reference/weeks/pipeline.cu".to_string(),
            "reference/weeks/mmm_streamed.cu".into(),
            "reference/weeks/mmm_streamed_and_pinned.cu".into(),
            "reference/weeks/zero_copy.cu".into(),
        ];
        for week in ["05-streams", "06-pinned-mapped"] {
            for folder in ["", "/broken", "/honest", "/near-limit"].map(|sub| format!("assignments/{week}{sub}")) {
                let path = common::testing::repository_file(&folder, env!("CARGO_MANIFEST_DIR"));
                for entry in std::fs::read_dir(path).unwrap() {
                    let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                    if name.ends_with(".cu") {
                        files.push(format!("{folder}/{name}"));
                    }
                }
            }
        }
        assert!(files.len() > 30, "{files:?}");
        for file in files {
            assert_eq!(refused_in(&file), Vec::<String>::new(), "{file}");
        }
    }

    /// Each red-team program whose header promises a refusal, in weeks 5 and 6, is refused for that
    /// reason; the others pass these checks, so that the box is what they meet.
    #[test]
    fn the_red_team_programs_are_refused_for_what_they_call() {
        let mut refusals = 0;
        for week in ["05-streams", "06-pinned-mapped"] {
            for adversary in common::testing::adversaries(week, env!("CARGO_MANIFEST_DIR")) {
                let (name, found) = (&adversary.file, refused_in(&adversary.file));
                match adversary.expect.strip_prefix("refused: ") {
                    Some(reason) => {
                        assert!(found.iter().any(|line| line.starts_with(reason)), "{name}: {found:?}");
                        refusals += 1;
                    }
                    None => assert_eq!(found, Vec::<String>::new(), "{name}"),
                }
            }
        }
        assert_eq!(refusals, 5);
    }

    /// A system call written in `asm` is found in the machine code (x86-64 here, where the tests
    /// run), whatever the source calls it; the same two bytes inside a constant are not.
    #[test]
    fn a_system_call_instruction_in_the_host_code_is_refused() {
        let dir = kernels::private_dir::PrivateDir::new("syscall-test").unwrap();
        let write = |name: &str, body: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("#include \"course_program.h\"\n{body}\n")).unwrap();
            let program = kernels::runtime::compile_program(&path, &[crate::program::HEADER], 90).unwrap();
            refused(&program.object, &program.executable).unwrap()
        };
        let raw = write(
            "raw.cu",
            "static long quiet(long n) { long r; asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(n) : \"rcx\", \"r11\", \"memory\"); return r; }\n\
             int main() { return (int)quiet(39); }",
        );
        assert_eq!(raw.len(), 1, "{raw:?}");
        assert!(
            raw[0].starts_with("makes a system call itself (syscall in .text"),
            "{raw:?}"
        );
        let constant = write(
            "constant.cu",
            "volatile unsigned x;\nint main() { x = 0x050f050fu; return (int)(x & 1u); }",
        );
        assert_eq!(constant, Vec::<String>::new());
    }

    /// A program written with the C++ standard library's everyday parts (containers, streams, files,
    /// threads, clocks, random numbers, math) imports nothing off the list.
    #[test]
    fn the_standard_librarys_everyday_parts_are_allowed() {
        let dir = kernels::private_dir::PrivateDir::new("std-test").unwrap();
        let path = dir.path().join("std.cu");
        std::fs::write(&path, STANDARD_LIBRARY).unwrap();
        let program = kernels::runtime::compile_program(&path, &[crate::program::HEADER], 90).unwrap();
        assert_eq!(
            refused(&program.object, &program.executable).unwrap(),
            Vec::<String>::new()
        );
    }

    const STANDARD_LIBRARY: &str = r#"#include "course_program.h"
#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
__global__ void add_one(float* x) { x[threadIdx.x] += 1; }
int main(int argc, char** argv) {
    std::vector<float> v(argc * 100);
    std::mt19937 generator(42);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (auto& x : v) x = uniform(generator);
    std::sort(v.begin(), v.end());
    std::map<std::string, int> names{{"a", 1}};
    std::unordered_map<int, int> counts{{3, 4}};
    const auto start = std::chrono::steady_clock::now();
    std::thread worker([&] { v[0] += 1; });
    worker.join();
    std::mutex lock;
    { std::lock_guard<std::mutex> held(lock); }
    std::atomic<int> done{0};
    ++done;
    std::ostringstream text;
    text << std::setprecision(3) << std::fixed << v[0] << std::sqrt(v[1]) << std::exp(v[2]);
    std::cout << text.str() << std::endl;
    const double sum = std::accumulate(v.begin(), v.end(), 0.0);
    std::printf("%f %s\n", sum, std::to_string(sum).c_str());
    float y = std::stof(std::string("1.5"));
    auto buffer = std::make_unique<float[]>(10);
    auto shared = std::make_shared<int>(3);
    std::ofstream("notes.txt") << y;
    std::ifstream("notes.txt") >> y;
    std::function<void()> count = [&] { ++done; };
    count();
    assert(done > 0);
    float* device;
    CHECK_CUDA(cudaMalloc(&device, 400));
    add_one<<<1, 32>>>(device);
    CHECK_LAUNCH();
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    CHECK_CUDA(cudaFree(device));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    return (int)(powf(y, 2.0f) + std::floor(y) + std::log2(8.0) + ms.count() + *shared + buffer[0] +
                 names.size() + counts.size()) & 1;
}
"#;

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
        assert_eq!(
            why_refused("cudaGetDriverEntryPoint"),
            Some("looks up CUDA driver functions at run time")
        );
        assert_eq!(why_refused("dlsym"), Some("looks up functions at run time"));
    }

    /// The allow-list: what honest programs call passes (the CUDA runtime, std::, stdio, math in
    /// its three widths, fortified and C23 forms), and what no program of the weeks needs does not.
    #[test]
    fn imports_off_the_list_are_refused() {
        for allowed in [
            "cudaMemcpyAsync",
            "__cudaRegisterFatBinary",
            "fopen",
            "fwrite",
            "__printf_chk",
            "__isoc23_strtol",
            "sqrtf",
            "expl",
            "pthread_create",
            "_Znwm",
            "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
            "_ZNSt6chrono3_V212steady_clock3nowEv",
            "__cxa_atexit",
            "exit",
            "stderr",
        ] {
            assert_eq!(why_refused(allowed), None, "{allowed}");
        }
        for refused in [
            "open",
            "write",
            "mmap",
            "mprotect",
            "opendir",
            "socket",
            "ioctl",
            "_exit",
            "_Exit",
            "quick_exit",
            "pthread_kill",
            "signal",
            "__open_2",
            "sinhq",
        ] {
            assert_eq!(why_refused(refused), Some(NOT_LISTED), "{refused}");
        }
    }
}
