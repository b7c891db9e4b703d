#!/usr/bin/env bash
# Issue 62, run 1 (bundle in .gpu95/: the dev-profile labs, grader and feedback of 004dfd7, and
# grade.sh of 7ebf987, the bash one, as .gpu95/grade-old.sh): weeks 1 and 3 graded the old way and the
# new way, one job, --jobs 2 (one job per GPU), and the new way again, on two GPUs of one host. Each
# folder: the week's honest, broken and adversarial files (week 3: the first four of each), our
# solution and the starter as handed out. compare.py says where verdicts or scores differ.
# Into $OUT/issue62-1.tgz.
set -u
mkdir -p .gpu95/b && tar -C .gpu95/b -xzf .gpu95/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu95/b/bin GRADER=$PWD/.gpu95/b/bin/grader
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/issue62-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
# folder WEEK OURS STARTER COUNT: the submissions folder of a week.
folder() {
    local dir=$logs/subs-$1 kind
    mkdir -p "$dir"
    for kind in honest broken adversarial; do
        ls assignments/$1/$kind/*.cu | head -n "$4" | while read -r f; do cp "$f" "$dir/$kind-$(basename "$f")"; done
    done
    cp "$2" "$dir/ours.cu"
    cp "$3" "$dir/starter.cu"
}
folder 01-simpson kernels/cuda/simpson.cu assignments/01-simpson/simpson.cu 99
folder 03-mmm-tiled kernels/cuda/mmm.cu assignments/03-mmm-tiled/mmm.cu 4
for week in 01-simpson 03-mmm-tiled; do
    subs=$logs/subs-$week
    t $week-old 280 bash -c "bash .gpu95/grade-old.sh $week $subs > $logs/$week-old.csv"
    t $week-new 280 bash assignments/grade.sh $week $subs --out $logs/$week-new.csv
    t $week-jobs2 280 bash assignments/grade.sh --jobs 2 $week $subs --out $logs/$week-jobs2.csv
    [[ $week == 01-simpson ]] && t $week-again 280 bash assignments/grade.sh $week $subs --out $logs/$week-again.csv
done
cat > "$logs/compare.py" <<'PY'
import csv, sys
def load(path):
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    return rows[0], {row[0]: row for row in rows[1:]}
base_header, base = load(sys.argv[1])
verdicts = base_header[2:base_header.index("passed") + 1]
for other in sys.argv[2:]:
    header, rows = load(other)
    same = 0
    for student, row in sorted(base.items()):
        theirs = rows.get(student)
        if theirs is None:
            print(f"{other}: {student} missing"); continue
        a = [row[base_header.index(c)] for c in verdicts]; b = [theirs[header.index(c)] for c in verdicts]
        sa, sb = row[base_header.index("score")], theirs[header.index("score")]
        if a != b or sa != sb:
            diff = [f"{c}: {x} -> {y}" for c, x, y in zip(verdicts, a, b) if x != y]
            print(f"{other}: {student}: score {sa} -> {sb}; " + "; ".join(diff))
        else:
            same += 1
    print(f"{other}: {same} of {len(base)} rows with the same verdicts and score as {sys.argv[1]}")
PY
for week in 01-simpson 03-mmm-tiled; do
    ( cd "$logs" && python3 compare.py $week-old.csv $week-new.csv $week-jobs2.csv $( [[ $week == 01-simpson ]] && echo $week-again.csv ) ) > "$logs/$week-compare.log" 2>&1
done
tar -C "$logs" -czf "$OUT/issue62-1.tgz" .
cat "$logs"/*-compare.log; tail -qn 1 "$logs"/*-old.log "$logs"/*-new.log "$logs"/*-jobs2.log "$logs"/*-again.log
