#!/usr/bin/env python3
"""Issue 65: who holds and who waits for which file lock while a class is graded, from /proc/locks.

  locks.py watch OUT.tsv [MS]     every MS ms (10) until killed: each lock held or waited for, as
                                  time (s since start), state (held, waits), pid, the process's
                                  name, the locked file (found through the holder's open files),
                                  and its kind (READ: shared, WRITE: exclusive)
  locks.py spans OUT.tsv[.gz]     from such a file: each process's spans of holding each file
                                  (start, end, length), then per file the sum and the median span
  locks.py use OUT.tsv[.gz] FILE  (files from run 52 on, with the kind) the share of the samples
                                  in which FILE (a name: gpu-0.lock) was
                                  free, held exclusive (any WRITE) or only shared (READ); the
                                  grading run holds a lock throughout, so every sample is there
  locks.py states OUT.tsv[.gz] [FROM]
                                  (run 65 on) for the samples from FROM s on (60): in each state of
                                  gpu-0.lock, how many on average waited for it and at its
                                  turnstile, waited for ncu's batch (the bus, ncu_batch.rs) or held
                                  it, held ncu's turn, Nsight Compute's own lock, the metric set;
                                  then the same every 10 s: where the class waits while the GPU's
                                  lock is free

Made to tell whether Nsight Compute's own lock across processes (nvidia/nsight_compute/lock in its
temporary folder, run 51) is held past the grader's GPU lock (gpu-N.lock), and for how long.
"""
import gzip
import os
import statistics
import sys
import time
from collections import defaultdict


def path_of(pid, inode, cache):
    if inode in cache:
        return cache[inode]
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            link = f"/proc/{pid}/fd/{fd}"
            try:
                if os.stat(link).st_ino == inode:
                    cache[inode] = os.readlink(link)
                    return cache[inode]
            except OSError:
                pass
    except OSError:
        pass
    return f"inode {inode}"


def name_of(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return "?"


def watch(out, ms="10"):
    cache, start = {}, time.monotonic()
    with open(out, "w") as file:
        while True:
            now = time.monotonic() - start
            for line in open("/proc/locks"):
                words = line.split()
                waits = words[1] == "->"
                if waits:
                    words = words[:1] + words[2:]
                pid, inode = int(words[4]), int(words[5].split(":")[2])
                state = "waits" if waits else "held"
                locked = path_of(pid, inode, cache)
                file.write(f"{now:.3f}\t{state}\t{pid}\t{name_of(pid)}\t{locked}\t{words[3]}\n")
            time.sleep(float(ms) / 1000)


def lines(path):
    """The lines of a file that watch wrote, gzipped (.gz) or not."""
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def spans(path):
    seen = defaultdict(list)  # (pid, name, file) -> times held
    for line in lines(path):
        at, state, pid, name, locked = line.rstrip("\n").split("\t")[:5]
        if state == "held":
            seen[(pid, name, os.path.basename(locked))].append(float(at))
    per_file = defaultdict(list)
    for (pid, name, locked), times in sorted(seen.items(), key=lambda item: item[1][0]):
        start = previous = times[0]
        for at in times[1:] + [None]:
            if at is None or at - previous > 0.05:
                print(f"{locked}\t{pid}\t{name}\t{start:.3f}\t{previous:.3f}\t{previous - start:.3f}")
                per_file[locked].append(previous - start)
                start = at
            previous = at if at is not None else previous
    for locked, lengths in per_file.items():
        print(f"# {locked}: {len(lengths)} spans, {sum(lengths):.2f} s in all, median {statistics.median(lengths):.3f} s")


def use(path, name):
    holds = {}  # time -> kinds of the holds of `name`; every sample counts, held or not
    for line in lines(path):
        at, state, _, _, locked, kind = line.rstrip("\n").split("\t")
        kinds = holds.setdefault(at, [])
        if state == "held" and os.path.basename(locked) == name:
            kinds.append(kind)
    counts = defaultdict(int)
    for kinds in holds.values():
        counts["free" if not kinds else "exclusive" if "WRITE" in kinds else "shared"] += 1
    total = sum(counts.values())
    shares = ", ".join(f"{state} {100 * counts[state] / total:.1f}%" for state in ("exclusive", "shared", "free"))
    print(f"{name} in {total} samples: {shares}")


def states(path, since="60"):
    samples = defaultdict(list)  # time -> (state, file's name, kind, path)
    for line in lines(path):
        at, state, _, _, locked, kind = line.rstrip("\n").split("\t")
        samples[float(at)].append((state, os.path.basename(locked), kind, locked))
    counters = [
        ("gpu waits", lambda r: r[1] == "gpu-0.lock" and r[0] == "waits"),
        ("turnstile waits", lambda r: r[1] == "gpu-0.lock.turnstile" and r[0] == "waits"),
        ("bus waits", lambda r: "ncu-batch" in r[3] and r[0] == "waits"),
        ("bus held", lambda r: "ncu-batch" in r[3] and r[0] == "held"),
        ("ncu turn held", lambda r: r[1] == "gpu-0.lock.ncu" and r[0] == "held"),
        ("nsight held", lambda r: r[3].endswith("nsight_compute/lock") and r[0] == "held"),
        ("metric set held", lambda r: r[1] == "metric-set.lock" and r[0] == "held"),
    ]
    by_state, by_ten = defaultdict(lambda: defaultdict(float)), defaultdict(lambda: defaultdict(float))
    for at, rows in samples.items():
        kinds = [r[2] for r in rows if r[1] == "gpu-0.lock" and r[0] == "held"]
        state = "free" if not kinds else "exclusive" if "WRITE" in kinds else "shared"
        for totals in ([by_state[state]] if at >= float(since) else []) + [by_ten[int(at // 10) * 10]]:
            totals["samples"] += 1
            totals[state] += 1
            for name, counts in counters:
                totals[name] += sum(1 for r in rows if counts(r))
    total = int(sum(totals["samples"] for totals in by_state.values()))
    print(f"from {since} s on, {total} samples; on average, in each state of gpu-0.lock:")
    for state, totals in sorted(by_state.items()):
        n = totals["samples"]
        means = ", ".join(f"{name} {totals[name] / n:.2f}" for name, _ in counters)
        print(f"{state} {100 * n / total:.1f}%: {means}")
    print("every 10 s: gpu-0.lock free, exclusive, shared; on average, the others")
    for ten, totals in sorted(by_ten.items()):
        n = totals["samples"]
        shares = " ".join(f"{state} {100 * totals[state] / n:5.1f}%" for state in ("free", "exclusive", "shared"))
        means = ", ".join(f"{name} {totals[name] / n:.2f}" for name, _ in counters[2:])
        print(f"{ten:4d} s: {shares}; {means}")


{"watch": watch, "spans": spans, "use": use, "states": states}[sys.argv[1]](*sys.argv[2:])
