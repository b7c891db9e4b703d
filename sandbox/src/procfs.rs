//! The Landlock rules for `/proc`, made in the child (system calls only, like [`crate::child`]): the
//! box's own `/proc` is mounted there (where the machine lets it have one), and `/proc/self` is the
//! child's folder, which its `exec` keeps.
//!
//! A compile (nvcc and its stages: processes of their own, and no student code runs) may read all of
//! `/proc` and write its own folder. A student's program may
//! not reach its own memory: `/proc/self/mem`, and each thread's `task/<tid>/mem`, read and write
//! every page of the process whatever its protection, so through them a program would read the
//! recorder's sealed settings and silence it (`assignments/05-streams/adversarial/forges-trace.cu`).
//! Landlock grants a right on a folder and everything beneath it, and a program's threads appear
//! after the rules are made, so a program's rules go entry by entry instead:
//!
//! - every folder of `/proc` may be listed, and each entry of `/proc` read but the processes' folders
//!   (the box's process 1 is a copy of the lab);
//! - of its own folder, and of its one thread's (`task/<tid>`), every entry but `mem` may be read,
//!   and `comm` written too;
//! - the threads started later have no entry the program may open (the CUDA driver names each thread
//!   it starts through its `comm`, and fails where it cannot: the recorder a program runs under,
//!   `grading/programs/recorder.cpp`, sends those names to `/dev/null`).
//!
//! Landlock ties a rule to an inode, and procfs may make a new inode for an entry whose cached name
//! the kernel dropped (memory pressure): such an entry is then refused, the safe side.

use std::ffi::CStr;
use std::os::fd::RawFd;

use crate::child::allow_beneath as add;

/// Landlock's rights, as ABI 1 numbers them.
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
/// Reading a folder and everything beneath it.
pub(crate) const READ_TREE: u64 = READ_FILE | READ_DIR;

/// The rules for `/proc`: a program's (`strict`) entry by entry, a compile's by folder.
/// `truncate` is Landlock's truncation right where the kernel has it, else 0.
///
/// # Safety
/// `ruleset` must be a Landlock ruleset descriptor; to be called in the child only.
pub(crate) unsafe fn allow(ruleset: RawFd, strict: bool, truncate: u64) -> std::io::Result<()> {
    let write = WRITE_FILE | truncate;
    if !strict {
        // The CUDA driver opens files of its own process in /proc for writing, truncating them:
        // this process's folder alone.
        // SAFETY: the caller vouches for `ruleset`.
        return unsafe {
            add(ruleset, libc::AT_FDCWD, c"/proc", READ_TREE)?;
            add(ruleset, libc::AT_FDCWD, c"/proc/self", READ_TREE | write)
        };
    }
    // SAFETY: as above, for each call; the descriptors are this function's own, closed here.
    unsafe {
        add(ruleset, libc::AT_FDCWD, c"/proc", READ_DIR)?;
        let proc = open_dir(libc::AT_FDCWD, c"/proc")?;
        each_entry(proc, |name, kind| {
            let process = name.to_bytes().iter().all(u8::is_ascii_digit);
            if !process {
                add_entry(ruleset, proc, name, kind, READ_TREE, READ_FILE);
            }
        });
        libc::close(proc);
        let own = open_dir(libc::AT_FDCWD, c"/proc/self")?;
        process_files(ruleset, own, write);
        libc::close(own);
        // thread-self, not task/<getpid()>: without a /proc of the box's own (a container that
        // refuses the mount) the numbers in /proc are the machine's, not the namespace's.
        let thread = open_dir(libc::AT_FDCWD, c"/proc/thread-self")?;
        process_files(ruleset, thread, write);
        libc::close(thread);
    }
    Ok(())
}

/// Rules for the entries of a process's or thread's folder `dir`: each but `mem` and `task` may be
/// read, `comm` written (a thread's later threads, under `task`, get none).
///
/// # Safety
/// As [`allow`]'s; `dir` an open folder.
unsafe fn process_files(ruleset: RawFd, dir: RawFd, write: u64) {
    // SAFETY: as the caller's.
    unsafe {
        each_entry(dir, |name, kind| match name.to_bytes() {
            b"mem" | b"task" => {}
            b"comm" => add_entry(ruleset, dir, name, kind, READ_TREE, READ_FILE | write),
            _ => add_entry(ruleset, dir, name, kind, READ_TREE, READ_FILE),
        });
    }
}

/// A rule for the entry `name` of `dir`: `folder` rights if it is a folder, `file` rights if a
/// file, none for a link (what it leads to has rules of its own). An entry that cannot be opened (a
/// process's that just ended) gets no rule: refused, the safe side.
///
/// # Safety
/// As [`allow`]'s; `dir` an open folder.
unsafe fn add_entry(ruleset: RawFd, dir: RawFd, name: &CStr, kind: u8, folder: u64, file: u64) {
    let rights = match kind {
        libc::DT_DIR => folder,
        libc::DT_REG => file,
        _ => return,
    };
    // SAFETY: as the caller's.
    let _ = unsafe { add(ruleset, dir, name, rights) };
}

/// Calls `visit` with the name and type of each entry of the open folder `dir` but `.` and `..`,
/// reading them with getdents64(2) into a buffer of this frame.
///
/// # Safety
/// `dir` must be an open folder.
unsafe fn each_entry(dir: RawFd, mut visit: impl FnMut(&CStr, u8)) {
    let mut buffer = [0u64; 1024]; // 8 KiB, aligned for the records' 64-bit fields
    loop {
        // SAFETY: getdents64(2) writes at most the buffer's length into it.
        let read = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir,
                buffer.as_mut_ptr(),
                std::mem::size_of_val(&buffer),
            )
        };
        if read <= 0 {
            return;
        }
        // SAFETY: the first `read` bytes of the buffer, which the kernel filled.
        let bytes = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), read as usize) };
        let mut at = 0;
        // Each record: inode (8 bytes), offset (8), its length (2), type (1), then the name and a NUL.
        while at + 19 < bytes.len() {
            let length = u16::from_ne_bytes([bytes[at + 16], bytes[at + 17]]) as usize;
            let kind = bytes[at + 18];
            let end = (at + length).min(bytes.len());
            if let Ok(name) = CStr::from_bytes_until_nul(&bytes[at + 19..end]) {
                if name != c"." && name != c".." {
                    visit(name, kind);
                }
            }
            if length == 0 {
                return;
            }
            at += length;
        }
    }
}

/// Opens the folder `path` (relative to `dir`) to list it.
///
/// # Safety
/// `dir` must be an open folder or `AT_FDCWD`.
unsafe fn open_dir(dir: RawFd, path: &CStr) -> std::io::Result<RawFd> {
    // SAFETY: openat(2) with a C string.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}
