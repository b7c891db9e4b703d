//! The box that student code runs in (issue 60): every compile of a student's file (nvcc, cicc,
//! ptxas, the host compiler and assembler) and every run of a student's whole program (weeks 5 and
//! 6). Nothing a submission does may reach the grader, the teacher's files, another student or its
//! own grade, and nothing it starts may outlive it.
//!
//! A [`Sandbox`] is prepared once in the parent from a [`Policy`] (what may be read, executed and
//! written, and whether the code may start processes) and then applied to each
//! [`std::process::Command`] it should hold. The layers, each applied where the kernel offers it and
//! reported in one line ([`Layers`]):
//!
//! | layer | what it stops |
//! |---|---|
//! | namespaces (user, PID, mount, network, IPC, UTS) with a `/proc` of their own | seeing or signalling any process outside the box (`/proc/<parent>/fd` included), the network, System V IPC; every process of the box ends with its first one |
//! | Landlock (files, and on newer kernels TCP and signals) | reading or writing any file outside the allow-list: hidden cases, the gradebook, solutions, other students, scratch folders; for a program, other processes' files in `/proc` and its own `mem` files ([`procfs`]) |
//! | seccomp | ptrace and reading other processes' memory, leaving the process group (`setsid`), new namespaces, mounts, kernel modules, io_uring, sockets other than Unix ones; for programs also new processes |
//! | rlimits | core dumps, files larger than the case needs |
//! | no capabilities, no new privileges | what root or a setuid program could do |
//! | parent-death signal | surviving the lab that started it |
//! | an empty environment plus an allow-list | learning the grader's paths and settings from variables |
//!
//! Everything the child does between `fork` and `exec` lives in [`child`] and makes system calls
//! only: no allocation, no lock (the parent may have held one when it forked).
//!
//! This crate depends on nothing of the workspace; `kernels` (the compiles) and `grading` (the
//! programs) depend on it.

// The measurement build applies no layer, so the code that applies them goes unused there.
#![cfg_attr(feature = "unboxed-for-measurement", allow(dead_code))]

mod child;
mod filter;
mod procfs;
mod rules;

use std::ffi::OsString;
use std::fmt;
use std::io::Read as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// What the code in the box may touch, besides the system's libraries, headers and device nodes
/// ([`rules`] lists those).
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Folders (or files) it may read.
    pub read: Vec<PathBuf>,
    /// Folders whose programs it may run (read too).
    pub execute: Vec<PathBuf>,
    /// Folders it may read and write (create, remove, truncate).
    pub write: Vec<PathBuf>,
    /// Whether it may start processes of its own: a compiler runs its stages as processes; a
    /// student's program is one process (threads are fine), so that nothing it starts escapes the
    /// recorder.
    pub processes: bool,
    /// The environment: nothing of the parent's but these.
    pub env: Vec<(OsString, OsString)>,
    /// The largest file it may write, in bytes.
    pub max_file_bytes: u64,
}

impl Policy {
    /// Variables passed through from the parent where set: which GPUs the box may use (grade.sh
    /// `--jobs` hands each lab its own).
    const PASSED: [&'static str; 2] = ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"];

    /// A policy whose environment is `PATH`, `HOME` and `TMPDIR` (`home`, a folder it may write),
    /// `LANG=C` and the variables of [`Policy::PASSED`] that are set.
    pub fn new(home: &Path, path: &str) -> Policy {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), path.into()),
            ("HOME".into(), home.into()),
            ("TMPDIR".into(), home.into()),
            ("LANG".into(), "C".into()),
        ];
        env.extend(
            Self::PASSED
                .iter()
                .filter_map(|name| Some((OsString::from(name), std::env::var_os(name)?))),
        );
        Policy {
            read: Vec::new(),
            execute: Vec::new(),
            write: vec![home.to_path_buf()],
            processes: false,
            env,
            max_file_bytes: 4 << 30,
        }
    }
}

/// The layers a run was put in, as the child reported them (or the probe found them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layers {
    bits: u32,
    /// The Landlock ABI the kernel offers (0: none).
    pub landlock_abi: u32,
}

impl Layers {
    const NAMESPACES: u32 = 1;
    const OWN_PROC: u32 = 2;
    const LANDLOCK: u32 = 4;
    const SECCOMP: u32 = 8;
    const RLIMITS: u32 = 16;
    const NO_CAPABILITIES: u32 = 32;
    const PARENT_DEATH: u32 = 64;
    const PRIVATE_SHM: u32 = 128;

    /// Whether files outside the policy are out of reach (Landlock applied): without it a program
    /// could read the hidden cases and the other submissions, so a program week refuses to run
    /// unless the teacher asks for it (`--unsandboxed`).
    pub fn confines_files(&self) -> bool {
        self.bits & Self::LANDLOCK != 0
    }

    /// Whether the box has a PID namespace with a `/proc` of its own: no process outside it can be
    /// seen, and all of its processes end with its first.
    pub fn hides_processes(&self) -> bool {
        self.bits & (Self::NAMESPACES | Self::OWN_PROC) == Self::NAMESPACES | Self::OWN_PROC
    }

    /// Whether the system-call filter was installed.
    pub fn filters_calls(&self) -> bool {
        self.bits & Self::SECCOMP != 0
    }

    fn has(&self, bit: u32) -> bool {
        self.bits & bit != 0
    }
}

impl fmt::Display for Layers {
    /// One line: each layer applied, then each missing one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let landlock = match self.landlock_abi {
            0 => "Landlock (files)".to_string(),
            abi if abi >= 6 => format!("Landlock v{abi} (files, TCP, signals)"),
            abi if abi >= 4 => format!("Landlock v{abi} (files, TCP)"),
            abi => format!("Landlock v{abi} (files)"),
        };
        let all = [
            (
                Self::NAMESPACES,
                "namespaces (user, PID, mount, network, IPC)".to_string(),
            ),
            (Self::OWN_PROC, "its own /proc".to_string()),
            (Self::PRIVATE_SHM, "a private /dev/shm".to_string()),
            (Self::LANDLOCK, landlock),
            (Self::SECCOMP, "seccomp".to_string()),
            (Self::RLIMITS, "rlimits".to_string()),
            (Self::NO_CAPABILITIES, "no capabilities".to_string()),
            (Self::PARENT_DEATH, "parent-death signal".to_string()),
        ];
        let applied: Vec<&str> = all
            .iter()
            .filter(|(bit, _)| self.has(*bit))
            .map(|(_, name)| name.as_str())
            .chain(["an empty environment"])
            .collect();
        let missing: Vec<&str> = all
            .iter()
            .filter(|(bit, _)| !self.has(*bit))
            .map(|(_, name)| name.as_str())
            .collect();
        write!(f, "sandbox: {}", applied.join(", "))?;
        if !missing.is_empty() {
            write!(f, "; not on this machine: {}", missing.join(", "))?;
        }
        Ok(())
    }
}

/// A policy made ready for `fork`: the Landlock ruleset and the BPF filters built, the paths
/// opened. Apply it to any number of commands.
pub struct Sandbox {
    plan: Arc<child::Plan>,
    /// Keeps the ruleset's descriptor open while commands that use it are spawned.
    _ruleset: Option<OwnedFd>,
    env: Vec<(OsString, OsString)>,
}

impl Sandbox {
    /// Builds what `policy` asks for with what this kernel offers. An error is the machine's (a
    /// ruleset the kernel refused, a filter that did not compile).
    pub fn prepare(policy: &Policy) -> Result<Sandbox, String> {
        #[cfg(feature = "unboxed-for-measurement")]
        {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!("sandbox: this build applies no layer (unboxed-for-measurement): never grade with it")
            });
        }
        let (ruleset, landlock_abi) = rules::ruleset(policy)?;
        let filters = filter::filters(policy.processes)?;
        let plan = child::Plan {
            ruleset: ruleset.as_ref().map(|fd| fd.as_raw_fd()),
            landlock_abi,
            processes: policy.processes,
            filters,
            max_file_bytes: policy.max_file_bytes,
            parent: std::process::id() as libc::pid_t,
            wiped: arguments_and_environment(),
        };
        Ok(Sandbox {
            plan: Arc::new(plan),
            _ruleset: ruleset,
            env: policy.env.clone(),
        })
    }

    /// Puts `command` in the box: its environment replaced by the policy's, the layers applied
    /// between `fork` and `exec`. Add variables of the run's own after this. Spawn it, then ask the
    /// returned [`Pending`] which layers it got.
    pub fn apply(&self, command: &mut Command) -> Result<Pending, String> {
        let (reader, writer) = status_pipe().map_err(|err| format!("cannot make the sandbox's pipe: {err}"))?;
        command.env_clear().envs(self.env.iter().map(|(k, v)| (k, v)));
        let plan = Arc::clone(&self.plan);
        let status = writer.as_raw_fd();
        // SAFETY: `enter` makes system calls only (no allocation, no lock, nothing that could
        // deadlock in a child forked from a threaded parent), on memory the child owns (its copy
        // of `plan`); `status` is the write end of a pipe that `Pending` keeps open until the
        // spawn has returned.
        #[cfg(not(feature = "unboxed-for-measurement"))]
        unsafe {
            command.pre_exec(move || child::enter(&plan, status));
        }
        #[cfg(feature = "unboxed-for-measurement")]
        let _ = (plan, status);
        Ok(Pending {
            reader,
            writer: Some(writer),
            landlock_abi: self.plan.landlock_abi,
        })
    }
}

/// A command in the box, before or after its spawn.
pub struct Pending {
    reader: OwnedFd,
    writer: Option<OwnedFd>,
    landlock_abi: u32,
}

impl Pending {
    /// After the command was spawned: the layers its child reported just before `exec`.
    pub fn layers(mut self) -> Layers {
        drop(self.writer.take()); // the child's copy is the only one left: EOF once it has exec'd
        let mut file = std::fs::File::from(self.reader);
        let mut bytes = [0u8; 4];
        let bits = match file.read_exact(&mut bytes) {
            Ok(()) => u32::from_ne_bytes(bytes),
            Err(_) => 0,
        };
        Layers {
            bits,
            landlock_abi: self.landlock_abi,
        }
    }
}

/// Where this process's command line and environment strings lie (`/proc/self/stat`'s fields 48 to
/// 51); nothing to wipe where they cannot be read.
fn arguments_and_environment() -> [(usize, usize); 2] {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's name, which may hold spaces and ends at the last ')': field 3 first.
    let fields: Vec<usize> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .map(|field| field.parse().unwrap_or(0))
                .collect()
        })
        .unwrap_or_default();
    let field = |number: usize| fields.get(number - 3).copied().unwrap_or(0);
    [(field(48), field(49)), (field(50), field(51))]
}

/// Makes the child of `command`, and every process it starts in its process group, end with the lab
/// (Ctrl-C, a crash, a kill): the lab's case children (compute-sanitizer's and ncu's targets among
/// them) and its unboxed compiles, instead of staying on the GPU or the CPU with no time limit. The
/// child leads a process group of its own (what ends), as `process_group(0)` makes it, and is a
/// guardian that waits
/// for the program; its exit code or signal is the program's. The thread that spawns the command must
/// be the one that waits for it (the guardian also dies with that thread). The box
/// ([`Sandbox::apply`]) needs none of this: its namespace ends with its first process.
pub fn end_with_parent(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: `guard_group` makes system calls only (prctl, getppid, fork, close_range, waitpid,
    // kill, nanosleep, _exit).
    unsafe {
        command.pre_exec(move || child::guard_group(parent));
    }
}

/// A pipe whose two ends close on `exec`: the child writes its layers into it, and its program
/// never sees it.
fn status_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut ends: [RawFd; 2] = [0; 2];
    // SAFETY: pipe2(2) writes two new descriptors into `ends`, owned from here on.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are open descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) })
}

/// The layers this machine gives a program of the weeks, found by running `/bin/true` in a box
/// with `policy` (no GPU): what a lab prints above its table and what decides whether a program week
/// may run at all.
pub fn probe(policy: &Policy) -> Result<Layers, String> {
    let true_program = Path::new("/bin/true")
        .canonicalize()
        .map_err(|err| format!("the sandbox's probe needs /bin/true: {err}"))?;
    let mut policy = policy.clone();
    policy.execute.push(true_program.clone());
    let sandbox = Sandbox::prepare(&policy)?;
    let mut command = Command::new(true_program);
    let pending = sandbox.apply(&mut command)?;
    let mut child = command
        .spawn()
        .map_err(|err| format!("the sandbox's probe (/bin/true) did not start: {err}"))?;
    let layers = pending.layers();
    let status = child.wait().map_err(|err| format!("the sandbox's probe: {err}"))?;
    if !status.success() {
        return Err(format!("the sandbox's probe (/bin/true) failed ({status})"));
    }
    Ok(layers)
}

#[cfg(test)]
mod tests;
