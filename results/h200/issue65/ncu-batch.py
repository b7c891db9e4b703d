"""Issue 65, ncu-batch.sh: splits each ncu file of DIR at the rows of the separator kernel
(ncu_first_launch, one per submission, in the order of the program's `batch` lines) and compares
each submission's counters: solo (a process each) against batch, all against busy, batch against
all. Prints each file's submissions and launches, then every difference.

    python3 ncu-batch.py DIR
"""
import csv
import glob
import os
import re
import sys

SEPARATOR = "ncu_first_launch"
# What the check reads (week 3's usual metrics); ncu adds its own columns (the time, the context's
# and stream's numbers), which differ from run to run and are not compared.
ASKED = [
    "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "launch__shared_mem_per_block_static",
    "smsp__inst_executed_op_ldgsts.sum",
]


def rows(path):
    """ncu's rows (kernel, {metric: value}) in launch order, or None without the file or a header."""
    if not os.path.exists(path):
        return None
    lines = [line for line in open(path, errors="replace") if not line.startswith("==")]
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return None
    reader = csv.reader(lines[start:])
    header = next(reader)
    next(reader, None)  # the units
    kernel = header.index("Kernel Name")
    metrics = [(at, name) for at, name in enumerate(header) if "__" in name]
    out = []
    for fields in reader:
        if len(fields) == len(header):
            values = {name: fields[at].replace(",", "") for at, name in metrics}
            out.append((fields[kernel].split("(")[0], values))
    return out


def submissions(directory, name):
    """{cubin: [launches]} from run `name`: its file split at the separators, named by its log's
    `batch` lines (a submission with no line is named by its position)."""
    found = rows(os.path.join(directory, name + ".csv"))
    if found is None:
        return None
    names = [m.group(1) for m in re.finditer(r"^batch \d+ (\S+):", open(os.path.join(directory, name + ".log")).read(), re.M)]
    out, current = {}, None
    for kernel, values in found:
        if kernel == SEPARATOR:
            current = os.path.basename(names[len(out)]) if len(out) < len(names) else f"#{len(out) + 1}"
            out[current] = []
        elif current is None:
            out.setdefault("(before any separator)", []).append((kernel, values))
        else:
            out[current].append((kernel, values))
    return out


def asked(launches):
    """`launches` with only the metrics the check reads."""
    return [(kernel, [values.get(name) for name in ASKED]) for kernel, values in launches]


def compare(label, left, right):
    same = differ = 0
    for cubin in sorted(set(left) & set(right)):
        if asked(left[cubin]) == asked(right[cubin]):
            same += 1
        else:
            differ += 1
            print(f"  {label}: {cubin} differs: {len(left[cubin])} launches against {len(right[cubin])}")
    print(f"{label}: {same} submissions the same, {differ} different, {len(set(left) ^ set(right))} in one only")


def main():
    directory = sys.argv[1]
    solo = {}
    for path in sorted(glob.glob(os.path.join(directory, "solo-*.csv"))):
        name = os.path.basename(path)[:-4]
        got = submissions(directory, name)
        if got:
            solo.update(got)
    runs = {"solo": solo}
    for name in ["batch", "all", "busy"]:
        runs[name] = submissions(directory, name) or {}
    for name, subs in runs.items():
        counts = {}
        for launches in subs.values():
            counts[len(launches)] = counts.get(len(launches), 0) + 1
        contexts = {values.get("launch__context_id") for launches in subs.values() for _, values in launches}
        print(f"{name}: {len(subs)} submissions; launches each: {dict(sorted(counts.items()))}; {len(contexts)} contexts")
    compare("solo vs batch", runs["solo"], runs["batch"])
    compare("batch vs all", runs["batch"], runs["all"])
    compare("all vs busy", runs["all"], runs["busy"])


main()
