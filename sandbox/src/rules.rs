//! The Landlock ruleset, built in the parent (it opens every path of the allow-list, which the child
//! between `fork` and `exec` may not). What the box may touch besides the policy's own folders:
//! the system's programs, libraries and headers (read, and run where a compiler needs them), `/etc`
//! and `/sys` to read, and the device nodes a CUDA program opens. Not `/tmp` (other
//! students' and the grader's scratch folders), not `/home`, not the repository.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};

use crate::Policy;

/// The newest ABI whose rights this crate hands out. ABI 9's `ResolveUnix` (connecting to a Unix
/// socket by its path) stays unhandled: the driver talks to nvidia-persistenced through one.
const NEWEST: ABI = ABI::V8;

/// Folders of the system a compiler and a CUDA program read. `/proc` has rules of its own, made in
/// the child ([`crate::procfs`]).
const SYSTEM_READ: [&str; 7] = ["/usr", "/lib", "/lib64", "/lib32", "/etc", "/sys", "/opt"];

/// Folders whose programs the box runs: the dynamic loader (a policy adds its own programs).
const SYSTEM_EXECUTE: [&str; 4] = ["/usr/lib", "/usr/lib64", "/lib", "/lib64"];

/// Device files every CUDA program may use: the GPU's nodes are added as they exist
/// (`/dev/nvidia*`, `/dev/nvidia-caps/`, `/dev/dri/`).
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The kernel's Landlock ABI (0 where it has none, or it is off).
pub(crate) fn kernel_abi() -> u32 {
    const VERSION: libc::c_uint = 1; // LANDLOCK_CREATE_RULESET_VERSION
                                     // SAFETY: landlock_create_ruleset(2) with no attributes and the VERSION flag only answers a
                                     // number; it creates nothing.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            VERSION,
        )
    };
    u32::try_from(abi).unwrap_or(0)
}

/// The ruleset for `policy` and the kernel's ABI; `None` where the kernel has no Landlock.
pub(crate) fn ruleset(policy: &Policy) -> Result<(Option<OwnedFd>, u32), String> {
    let abi = kernel_abi();
    if abi == 0 {
        return Ok((None, 0));
    }
    let fail = |err: landlock::RulesetError| format!("the sandbox's Landlock rules: {err}");
    let read = AccessFs::from_read(NEWEST) & !AccessFs::Execute;
    let execute = AccessFs::from_read(NEWEST);
    let write = AccessFs::from_all(NEWEST) & !(AccessFs::Execute | AccessFs::MakeChar | AccessFs::MakeBlock);
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    rules.extend(SYSTEM_READ.iter().map(|path| (PathBuf::from(path), read)));
    rules.extend(SYSTEM_EXECUTE.iter().map(|path| (PathBuf::from(path), execute)));
    rules.extend(DEVICES.iter().map(|path| (PathBuf::from(path), device)));
    // The CUDA runtime keeps files in /dev/shm; where the box has no private one (no namespaces),
    // the machine's.
    rules.push((PathBuf::from("/dev/shm"), write));
    rules.extend(gpu_nodes().into_iter().map(|path| (path, device)));
    rules.extend(policy.read.iter().map(|path| (path.clone(), read)));
    rules.extend(policy.execute.iter().map(|path| (path.clone(), execute)));
    rules.extend(policy.write.iter().map(|path| (path.clone(), write)));
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(NEWEST))
        .map_err(fail)?
        .handle_access(AccessNet::from_all(NEWEST))
        .map_err(fail)?
        .scope(Scope::from_all(NEWEST))
        .map_err(fail)?
        .create()
        .map_err(fail)?;
    for (path, access) in rules {
        // A system folder this machine lacks (/lib32) is no error; a folder of the policy is.
        let Ok(fd) = PathFd::new(&path) else {
            if is_policy_path(policy, &path) {
                return Err(format!("the sandbox cannot open {}", path.display()));
            }
            continue;
        };
        // Rights that do not apply to a file (ReadDir on /dev/null) are dropped by the crate's
        // best-effort mode, as are rights this kernel's ABI lacks.
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(fail)?;
    }
    let fd: Option<OwnedFd> = created.into();
    Ok((fd, abi))
}

fn is_policy_path(policy: &Policy, path: &Path) -> bool {
    [&policy.read, &policy.execute, &policy.write]
        .iter()
        .any(|list| list.iter().any(|allowed| allowed == path))
}

/// The GPU's device nodes on this machine: `/dev/nvidia0`, `/dev/nvidiactl`, `/dev/nvidia-uvm`,
/// the folder `/dev/nvidia-caps`, and `/dev/dri` where there is one.
fn gpu_nodes() -> Vec<PathBuf> {
    let mut nodes: Vec<PathBuf> = std::fs::read_dir("/dev")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| {
                    path.file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with("nvidia"))
                })
                .collect()
        })
        .unwrap_or_default();
    nodes.push(PathBuf::from("/dev/dri"));
    nodes.retain(|path| path.exists());
    nodes
}
