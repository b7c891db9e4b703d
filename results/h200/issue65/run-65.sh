#!/usr/bin/env bash
# Issue 65, run 65 (one H200): the GPU's lock with writers in phases (each writer holds the
# turnstile shared until it lets go, a reader takes it alone to pass: no reader gets in while any
# writer waits or holds) against main's (d57a80f: one writer let through per turn). The class of 300
# with --jobs 16 for 150 s with bundle A (.gpu268/a: d57a80f), then with bundle B (.gpu268/b: the
# phases, run-65/writer-phases.patch on d57a80f, not kept: slower), then B with --jobs 24;
# /proc/locks every 20 ms beside each (locks.py).
# (.gpu268z/c.tgz carried.)
set -u
tar xzf .gpu268z/c.tgz
class() {
    python3 results/h200/issue65/locks.py watch "$OUT/locks-$4.tsv" 20 &
    local watcher=$!
    bash results/h200/issue65/class-run.sh "$@"
    kill "$watcher"
    gzip "$OUT/locks-$4.tsv"
    python3 results/h200/issue65/locks.py use "$OUT/locks-$4.tsv.gz" gpu-0.lock
}
class .gpu268/a 16 150 run-65-a
class .gpu268/b 16 150 run-65-b
class .gpu268/b 24 150 run-65-b24
