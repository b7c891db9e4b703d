//! The child's side, between `fork` and `exec`: system calls only. The parent may have had any lock
//! when it forked (another thread's allocator, say), so nothing here allocates, locks or formats.
//!
//! The order matters: the parent-death signal first (so nothing runs on without the lab); rlimits;
//! the namespaces, where the box's first process forks twice more ([`namespaces`] says why) and
//! mounts a `/proc` of its own and a private `/dev/shm` while it still has the namespace's
//! capabilities; then the capabilities
//! dropped, Landlock (which forbids mounting, so after the mounts), and the system-call filter last
//! (it forbids some of the calls above).

use std::os::fd::RawFd;

use seccompiler::BpfProgram;

use crate::{procfs, Layers};

/// What the child needs, made by the parent before the fork.
pub(crate) struct Plan {
    /// The Landlock ruleset's descriptor (the parent keeps it open), if the kernel has Landlock.
    pub ruleset: Option<RawFd>,
    pub landlock_abi: u32,
    /// Whether the code may start processes (a compile); a program may not, and gets the stricter
    /// `/proc` of [`crate::procfs`].
    pub processes: bool,
    /// The seccomp filters, installed in this order.
    pub filters: Vec<BpfProgram>,
    pub max_file_bytes: u64,
    /// The lab's process id: a child whose parent is already another has lost the lab.
    pub parent: libc::pid_t,
    /// Where the lab's command line and environment lie in its memory (from `/proc/self/stat`):
    /// process 1 of the box is a copy of the lab, and wipes its copy of both, so that the box's
    /// `/proc/1/cmdline` names none of the grader's paths.
    pub wiped: [(usize, usize); 2],
}

/// The result of a system call that returns -1 on failure, as `io::Result` (no allocation: an OS
/// error is a number).
fn check(result: libc::c_long) -> std::io::Result<libc::c_long> {
    if result == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Applies `plan` to the calling process (a child between `fork` and `exec`) and writes the layers
/// it got into `status`. An error ends the spawn: nothing runs half-boxed.
pub(crate) fn enter(plan: &Plan, status: RawFd) -> std::io::Result<()> {
    let mut bits = 0;
    die_with(plan.parent)?;
    bits |= Layers::PARENT_DEATH;
    limit(libc::RLIMIT_CORE, 0)?;
    limit(libc::RLIMIT_FSIZE, plan.max_file_bytes)?;
    bits |= Layers::RLIMITS;
    bits |= namespaces(&plan.wiped)?;
    drop_capabilities(&mut bits);
    if let Some(ruleset) = plan.ruleset {
        // SAFETY: see above.
        unsafe {
            // Truncation is a right of its own from ABI 3 on (a ruleset of an older kernel does not
            // know it, and refuses it).
            let truncate = if plan.landlock_abi >= 3 { TRUNCATE } else { 0 };
            procfs::allow(ruleset, !plan.processes, truncate)?;
            if bits & Layers::PRIVATE_SHM != 0 {
                // The CUDA runtime sizes its files there.
                allow_beneath(ruleset, libc::AT_FDCWD, c"/dev/shm", WRITE_DIR | truncate)?;
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) as libc::c_long)?;
            check(libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0))?;
        }
        bits |= Layers::LANDLOCK;
    }
    for filter in &plan.filters {
        seccompiler::apply_filter(filter).map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
        bits |= Layers::SECCOMP;
    }
    let bytes = u32::to_ne_bytes(bits);
    // SAFETY: see above; `status` is the write end the parent made for this child.
    unsafe {
        libc::write(status, bytes.as_ptr().cast(), bytes.len());
        libc::close(status);
    }
    Ok(())
}

/// The child of an unboxed command that must end with the lab, and everything it starts with it
/// ([`crate::end_with_parent`]): this process forks; its child returns to `exec` the program, and it
/// stays as the group's guardian, waiting for that program while it watches the lab. When the
/// program ends, the guardian leaves as it did; when the lab is gone first (killed, crashed, Ctrl-C),
/// it kills the whole process group, itself included: compute-sanitizer's or ncu's target too, which
/// a parent-death signal to the direct child alone would leave running.
pub(crate) fn guard_group(parent: libc::pid_t) -> std::io::Result<()> {
    // No parent-death signal here: the guardian must outlive the lab to end the group.
    // SAFETY: getppid(2).
    if unsafe { libc::getppid() } != parent {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    // The group that ends is this process's own, never its caller's (grade.sh's, say): it leads a
    // new one, as `process_group(0)` asks.
    // SAFETY: setpgid(2) of this process.
    check(unsafe { libc::setpgid(0, 0) } as libc::c_long)?;
    // SAFETY: fork(2) in a child that has no other thread.
    let program = check(unsafe { libc::fork() } as libc::c_long)? as libc::pid_t;
    if program == 0 {
        return Ok(());
    }
    close_all_but(-1);
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child without blocking, getppid(2), kill(2) of our own
        // process group, nanosleep(2) with a value of this frame.
        unsafe {
            if libc::waitpid(program, &mut status, libc::WNOHANG) == program {
                leave_as(status);
            }
            if libc::getppid() != parent {
                libc::kill(0, libc::SIGKILL);
                libc::_exit(128 + libc::SIGKILL);
            }
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// SIGKILL when the thread that spawned this child ends (the lab's, which waits for it), and an error
/// where `parent` is gone already.
pub(crate) fn die_with(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl(2) and getppid(2) with plain values. This block and the ones below make system
    // calls on values of their function's frame or the child's copy of `plan`, and none keeps a
    // pointer past the call.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) as libc::c_long)?;
        if libc::getppid() != parent {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

fn limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit(2) reads `limit`, a value of this frame.
    check(unsafe { libc::setrlimit(resource, &limit) } as libc::c_long).map(|_| ())
}

/// New user, PID, mount, network, IPC and UTS namespaces where the kernel lets this user make them
/// (else none, and the box goes on with the other layers). Three processes then: this one stays
/// outside and waits (the lab's `Child` is this process); its child is the namespace's process 1,
/// which mounts the box's `/proc` and `/dev/shm` and waits too (process 1 of a namespace ignores
/// signals it sends itself, and its end ends every process of the box); and its child, process 2,
/// returns to `exec` the program. Process 1 sends the program's wait status out through a pipe, so
/// that this process leaves exactly as the program did.
fn namespaces(wiped: &[(usize, usize); 2]) -> std::io::Result<u32> {
    let flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    // SAFETY: unshare(2) with flags only.
    if unsafe { libc::unshare(flags) } != 0 {
        return Ok(0); // no unprivileged user namespaces here (a sysctl, AppArmor): the other layers
    }
    let mut report: [RawFd; 2] = [0; 2];
    // SAFETY: pipe2(2) writes two descriptors into `report`; both close on exec.
    check(unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } as libc::c_long)?;
    let [reader, writer] = report;
    // SAFETY: fork(2) in a child that has no other thread (fork copies only the calling thread).
    let first = check(unsafe { libc::fork() } as libc::c_long)? as libc::pid_t;
    if first != 0 {
        wait_outside(first, reader);
    }
    let mut bits = Layers::NAMESPACES;
    // SAFETY: prctl(2), mount(2) and close(2) with constant C strings and our own descriptors.
    unsafe {
        // Process 1's parent is outside the namespace: if that waiter dies, so does the box.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) as libc::c_long)?;
        libc::close(reader);
        let none = std::ptr::null::<libc::c_char>();
        // Mounts made in here stay in here.
        check(libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) as libc::c_long)?;
        let hardened = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            hardened,
            std::ptr::null(),
        ) == 0
        {
            bits |= Layers::OWN_PROC;
        }
        let size = c"size=268435456,mode=1777";
        if libc::mount(
            c"tmpfs".as_ptr(),
            c"/dev/shm".as_ptr(),
            c"tmpfs".as_ptr(),
            hardened,
            size.as_ptr().cast(),
        ) == 0
        {
            bits |= Layers::PRIVATE_SHM;
        }
    }
    // SAFETY: fork(2), as above; process 1 has one thread.
    let program = check(unsafe { libc::fork() } as libc::c_long)? as libc::pid_t;
    if program != 0 {
        for &(start, end) in wiped {
            // SAFETY: [start, end) is this process's own copy of the lab's argument or environment
            // strings (the kernel's own record of them), writable stack memory nothing reads again.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, end.saturating_sub(start)) };
        }
        wait_inside(program, writer);
    }
    // SAFETY: prctl(2) and close(2) of our own descriptor.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) as libc::c_long)?;
        libc::close(writer);
    }
    Ok(bits)
}

/// Closes every descriptor but `keep` (-1: all): a waiter holds nothing of the parent's, so the
/// spawn's own pipe and the program's output end when the program's do.
fn close_all_but(keep: RawFd) {
    // SAFETY: close_range(2) on this process's own descriptor table.
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
    }
}

/// `waitpid(2)` for `pid`, again after a signal: its wait status, or `None` where it is lost.
fn wait_for(pid: libc::pid_t) -> Option<i32> {
    let mut status = 0;
    // SAFETY: waitpid(2) on our own child, writing into `status`, a value of this frame.
    while unsafe { libc::waitpid(pid, &mut status, 0) } == -1 {
        // SAFETY: reading errno, this thread's own.
        if unsafe { *libc::__errno_location() } != libc::EINTR {
            return None;
        }
    }
    Some(status)
}

/// Process 1: waits for the program, sends its wait status out, and leaves (taking every process
/// still in the box with it).
fn wait_inside(program: libc::pid_t, writer: RawFd) -> ! {
    close_all_but(writer);
    let status = wait_for(program).unwrap_or(126 << 8);
    let bytes = status.to_ne_bytes();
    // SAFETY: write(2) of a value of this frame into our pipe, then _exit(2).
    unsafe {
        libc::write(writer, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// The waiter outside the namespaces: waits for process 1, and leaves as the program did (its exit
/// code, or its signal), or as process 1 did where it sent nothing (it was killed).
fn wait_outside(first: libc::pid_t, reader: RawFd) -> ! {
    close_all_but(reader);
    let first_status = wait_for(first).unwrap_or(126 << 8);
    let mut bytes = [0u8; 4];
    // SAFETY: read(2) into a value of this frame from our own pipe.
    let sent = unsafe { libc::read(reader, bytes.as_mut_ptr().cast(), bytes.len()) } == 4;
    leave_as(if sent { i32::from_ne_bytes(bytes) } else { first_status })
}

/// Ends this process as a process with wait status `status` ended: the same exit code, or the same
/// signal (no core: RLIMIT_CORE is 0).
fn leave_as(status: i32) -> ! {
    // SAFETY: signal(2), kill(2) and _exit(2) on this process itself.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Every capability out of every set, the bounding set included (root's powers, or those the user
/// namespace gave). Where this process may not change its bounding set (no capabilities to begin
/// with), there is nothing to drop.
fn drop_capabilities(bits: &mut u32) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: prctl(2) and capset(2) with values of this frame, in the layout capset(2) documents.
    unsafe {
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) == 0 {
            *bits |= Layers::NO_CAPABILITIES;
        }
    }
}

/// Landlock's rights for a folder that may be read and written (rights of Landlock ABI 1, which
/// every kernel with Landlock has), and truncation (ABI 3).
const WRITE_DIR: u64 = procfs::READ_TREE | (1 << 1) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 10); // WRITE_FILE, REMOVE_*, MAKE_REG, MAKE_DIR
const TRUNCATE: u64 = 1 << 14;

/// One rule made in the child, for what the parent could not open: a file system the child mounted
/// itself, or its own `/proc/self`. `rights` on `path` (relative to the folder `dir`, or
/// `AT_FDCWD`) and everything under it.
///
/// # Safety
/// `ruleset` must be a Landlock ruleset descriptor; `dir` an open folder or `AT_FDCWD`.
pub(crate) unsafe fn allow_beneath(
    ruleset: RawFd,
    dir: RawFd,
    path: &std::ffi::CStr,
    rights: u64,
) -> std::io::Result<()> {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    const RULE_PATH_BENEATH: libc::c_long = 1;
    // SAFETY: openat(2) with a C string; the descriptor is closed below.
    let fd = check(unsafe { libc::openat(dir, path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) } as libc::c_long)? as i32;
    let rule = PathBeneath {
        allowed_access: rights,
        parent_fd: fd,
    };
    // SAFETY: landlock_add_rule(2) reads `rule`, a value of this frame, in the layout its header
    // gives; the caller vouches for `ruleset`.
    let added = check(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0,
        )
    });
    // SAFETY: close(2) of the descriptor opened above.
    unsafe { libc::close(fd) };
    added.map(|_| ())
}
