#!/usr/bin/env python3
"""Issue 65: what a class's checks held the GPU alone, from LAB_PHASES lines (grading/src/phases.rs).

  held-summary.py PHASES.txt SECONDS    the checks that ended within SECONDS of the class's start:
                                        how many, per minute, the sum of their holds and of each
                                        phase's part of them, their CPU time (where the lines have
                                        them), and each original's holds
                                        (make-class.sh copies, sNNNN-NAME.cu), and the median of
                                        each phase of the checks' lines; then the measured
                                        children's own lines ("(measured)", after issue 65's run 50;
                                        from run 60 a batch of them has one, "batch of N"): the
                                        median of each of their phases, their sums, and the sums
                                        per request (from run 67 on)
"""
import re
import statistics
import sys
from collections import defaultdict


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    held = defaultdict(list)
    cpu = []
    phases = defaultdict(float)
    measured = defaultdict(list)
    checks = defaultdict(list)
    batched = []
    for line in open(path):
        if "(measured):" in line:
            batch = re.match(r"batch of (\d+) ", line)
            if batch:
                batched.append(int(batch.group(1)))
            for part in line.split(":", 1)[1].split(","):
                phase, took = re.match(r"\s*(.+?) ([\d.]+) s", part).groups()
                measured[phase].append(float(took))
            continue
        for phase, alone in re.findall(r"(\w+) [\d.]+ s alone ([\d.]+) s", line):  # after issue 65's run 49
            phases[phase] += float(alone)
        for part in line.split(":", 1)[1].split(","):
            phase, took = re.match(r"\s*(.+?) ([\d.]+) s", part).groups()
            checks[phase].append(float(took))
        name = re.sub(r"^s\d+-", "", line.split(":")[0])
        held[name].append(float(re.search(r"held it alone ([\d.]+) s", line).group(1)))
        used = re.search(r"cpu ([\d.]+) s", line)  # from issue 65's run 47 on
        if used:
            cpu.append(float(used.group(1)))
    count = sum(len(h) for h in held.values())
    total = sum(sum(h) for h in held.values())
    print(f"{count} checks in {seconds:.0f} s: {60 * count / seconds:.1f} a minute; held the GPU alone {total:.0f} s in all")
    if phases:
        print("of it: " + ", ".join(f"{phase} {alone:.0f} s" for phase, alone in phases.items()))
    if cpu:
        print(f"cpu {sum(cpu):.0f} s in all, {sum(cpu) / len(cpu):.1f} s a check ({min(cpu):.1f} to {max(cpu):.1f})")
    for name, h in sorted(held.items(), key=lambda item: -sum(item[1])):
        print(f"{name}: {len(h)} checks, held {min(h):.2f} to {max(h):.2f} s, {sum(h):.2f} s in all")
    if checks:
        print("checks, medians: " + ", ".join(f"{phase} {statistics.median(took):.2f} s" for phase, took in checks.items()))
    if measured:
        medians = ", ".join(f"{phase} {statistics.median(took):.2f} s" for phase, took in measured.items())
        batches = f" ({len(batched)} of them batches, of {sum(batched)} requests in all)" if batched else ""
        print(f"measured children: {len(measured['all'])}{batches}, medians: {medians}")
        # From run 67 on: what all of them took together, and per request (a child alone is one).
        requests = sum(batched) + len(measured["all"]) - len(batched)
        sums = ", ".join(f"{phase} {sum(took):.2f} s" for phase, took in measured.items())
        print(f"measured children, in all, {requests} requests: {sums}")
        means = ", ".join(f"{phase} {sum(took) / requests:.2f} s" for phase, took in measured.items())
        print(f"measured children, a request: {means}")


main()
