//! The system-call filters, compiled to BPF in the parent. Two filters: the first answers `EPERM`
//! to the calls no student code needs; the second answers `ENOSYS` to `clone3` in a program (its
//! flags lie in memory a filter cannot read), so that the C library falls back to `clone`, whose
//! flags the first filter can read: a thread (`CLONE_THREAD`) is allowed, a new process is not.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Calls refused to everything in the box: other processes' memory and tracing, leaving the process
/// group (so a stop of the group ends everything), new namespaces and mounts, the kernel's keyring,
/// modules and BPF, io_uring (its operations pass by this filter), and `userfaultfd`.
const DENIED: [i64; 25] = [
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_setsid,
    libc::SYS_setpgid,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_userfaultfd,
    libc::SYS_reboot,
];

/// Both filters, for this machine's architecture; `processes`: whether new processes are allowed.
pub(crate) fn filters(processes: bool) -> Result<Vec<BpfProgram>, String> {
    let fail = |err: seccompiler::BackendError| format!("the sandbox's system-call filter: {err}");
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| format!("the sandbox has no system-call filter for {}", std::env::consts::ARCH))?;
    let condition = |index, op, value| SeccompCondition::new(index, SeccompCmpArgLen::Qword, op, value).map_err(fail);
    let rule = |conditions| SeccompRule::new(conditions).map_err(fail);
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|&call| (call, Vec::new())).collect();
    // Sockets: Unix ones only (no network, whatever the namespaces).
    denied.insert(
        libc::SYS_socket,
        vec![rule(vec![condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])?],
    );
    let mut fallback = BTreeMap::new();
    if !processes {
        // clone(2)'s flags are its first argument on both architectures: a new process lacks
        // CLONE_THREAD.
        let thread = libc::CLONE_THREAD as u64;
        denied.insert(
            libc::SYS_clone,
            vec![rule(vec![condition(0, SeccompCmpOp::MaskedEq(thread), 0)?])?],
        );
        #[cfg(target_arch = "x86_64")]
        for call in [libc::SYS_fork, libc::SYS_vfork] {
            denied.insert(call, Vec::new());
        }
        fallback.insert(libc::SYS_clone3, Vec::new());
    }
    let mut programs = vec![compile(denied, libc::EPERM, arch)?];
    if !fallback.is_empty() {
        programs.push(compile(fallback, libc::ENOSYS, arch)?);
    }
    Ok(programs)
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32, arch: TargetArch) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
        .map_err(|err| format!("the sandbox's system-call filter: {err}"))?;
    filter
        .try_into()
        .map_err(|err: seccompiler::BackendError| format!("the sandbox's system-call filter: {err}"))
}
