#!/usr/bin/env bash
# Issue 65, run 69 (one H200): in ncu's batch, each request holds the GPU alone from before its CUDA
# context is made to after it is destroyed (ncu's first launch inside the hold), where main holds it
# only from before the week's first launch to after its last. Why: in run 67 a request took 2.03 s
# of its batch, 0.39 s its context and 0.75 s ncu's first launch, beside the others' work, where
# alone on the GPU a batch took about 0.30 s a request (run 57). The class of 300 with --jobs 16 for
# 360 s, as run 67, with /proc/locks every 20 ms. (.gpu271z/c.tgz carried: run-69/whole-request.patch
# on 2de97cc.)
set -u
tar xzf .gpu271z/c.tgz
bash results/h200/issue65/class-run.sh .gpu271 16 360 run-69
