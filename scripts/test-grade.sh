#!/usr/bin/env bash
# Checks assignments/grade.sh without a GPU (run by scripts/test.sh): a stand-in lab answers --check
# as a lab would, as each submission's first line says, and the real lab-mmm lists the cases. What is
# checked: the CSV (every row as long as the header, names with commas and quotes as RFC 4180 says, a
# name that a spreadsheet would take for a formula kept as text,
# the rows for a compile error, a run without a result and a folder without a .cu file), that
# --jobs 3 gives the same CSV as one job, that no two jobs share a GPU (and only CUDA_VISIBLE_DEVICES's
# are used where it is set), that --cases and the time limit reach the lab, the progress lines on stderr,
# the one-line errors for bad arguments, a row graded on another case set (a --cases file edited
# during grading) caught, a folder with several .cu files not graded, .CU files graded, and that
# --help names every option.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$PWD/$target
real_lab=$target/debug/lab-mmm
[[ -x $real_lab ]] || { echo "test-grade.sh: build the workspace first ($real_lab is missing)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 checks=0
expect() {  # expect WHAT GOT WANTED
    checks=$((checks + 1))
    if [[ $2 != "$3" ]]; then echo "FAIL: $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}

# The stand-in lab: --list-cases goes to the real one; --check answers from the submission's first
# line ("// pass", "// compile error", anything else: no result) after a random pause, so that jobs
# finish out of order, and notes the GPU it was given. "// other case set" passes with another case
# set's hash; "// edits the cases" adds a case to the --cases file, then passes on the file as it is now.
mkdir -p "$work/bin" "$work/gpus" "$work/no-gpu"
cat >"$work/bin/lab-mmm" <<'STUB'
#!/usr/bin/env bash
set -u
file= args=() plain=() cases_file=
while (($#)); do
    case $1 in
        --kernel-source) file=$2; shift 2 ;;
        --cases) cases_file=$2; args+=("$1" "$2"); plain+=("$1" "$2"); shift 2 ;;
        --check | --sanitize) shift ;;
        --time-limit) echo "$2" >>"$STUB_LOG.limits"; shift 2 ;;
        --csv) args+=("$1"); shift ;;
        *) args+=("$1"); plain+=("$1"); shift ;;
    esac
done
[[ -n $file ]] || exec "$REAL_LAB" "${args[@]}"
echo "begin $(basename "$file") ${CUDA_VISIBLE_DEVICES:-unset}" >>"$STUB_LOG"
trap 'echo "end $(basename "$file") ${CUDA_VISIBLE_DEVICES:-unset}" >>"$STUB_LOG"' EXIT
sleep "0.$((RANDOM % 4))"
first=$(head -n 1 "$file")
[[ $first == "// edits the cases" ]] && echo "3 5 7 f64 1" >>"$cases_file"
case $first in
    "// pass" | "// other case set" | "// edits the cases")
        listing=$("$REAL_LAB" "${plain[@]}" --list-cases)
        read -r cases _ _ _ hash <<<"$(head -n 1 <<<"$listing" | tr -d '():')"
        [[ $first == "// other case set" ]] && hash=ffffffffffffffff
        header=$("$REAL_LAB" "${args[@]}" --list-cases)
        echo "$header"
        # The columns after "passed" as the lab names them: the time ratio, the case set, others empty.
        IFS=, read -r -a after <<<"${header##*,passed,}"
        rest=
        for column in "${after[@]}"; do
            case $column in "time ratio") rest+=",1.000" ;; "case set") rest+=",$hash" ;; *) rest+="," ;; esac
        done
        verdicts=$(printf 'PASS,%.0s' $(seq "$cases"))
        printf '"%s",%s%s/%s%s\n' "${file//\"/\"\"}" "$verdicts" "$cases" "$cases" "$rest" ;;
    "// compile error")
        echo "$file(3): error: identifier \"x\" is undefined" >&2
        exit 1 ;;
    "// warns, then fails")
        echo "$file(5): warning #177-D: variable \"error_count\" was declared but never referenced" >&2
        echo "$file compiled (for GPU 0, sm_90): mmm_f64 40 registers, 4096 bytes shared" >&2
        echo "lab-mmm: error: the cases need a GPU: no usable CUDA GPU" >&2
        exit 1 ;;
    *) exit 1 ;;
esac
STUB
printf '#!/usr/bin/env bash\necho "GPU 0: Stand-in (UUID: GPU-0)"\necho "GPU 1: Stand-in (UUID: GPU-1)"\n' >"$work/gpus/nvidia-smi"
printf '#!/usr/bin/env bash\nexit 9\n' >"$work/no-gpu/nvidia-smi"
chmod +x "$work/bin/lab-mmm" "$work/gpus/nvidia-smi" "$work/no-gpu/nvidia-smi"

subs=$work/submissions
mkdir -p "$subs/in a folder" "$subs/empty folder"
echo "// pass" >"$subs/alice.cu"
echo "// pass" >"$subs/=1+2.cu"
echo "// pass" >"$subs/Doe, Jane \"JD\".cu"
echo "// compile error" >"$subs/bob.cu"
echo "// crashes" >"$subs/carol.cu"
echo "// warns, then fails" >"$subs/dave errors.cu"
echo "// pass" >"$subs/in a folder/mmm.cu"

export REAL_LAB=$real_lab LAB_BIN_DIR=$work/bin STUB_LOG=$work/stub.log
grade() {  # grade NAME ARGS...: stdout to NAME.csv, stderr to NAME.err, the exit code echoed
    local name=$1
    shift
    LC_ALL=C PATH="$work/gpus:$PATH" bash assignments/grade.sh "$@" >"$work/$name.csv" 2>"$work/$name.err" && echo 0 || echo $?
}

# One job, then three: the same CSV, row by row.
expect "one job exits" "$(grade one 03-mmm-tiled "$subs")" 0
rm -f "$STUB_LOG"
expect "three jobs exit" "$(grade three --jobs 3 03-mmm-tiled "$subs")" 0
expect "three jobs give one job's CSV" "$(cmp -s "$work/one.csv" "$work/three.csv" && echo same || echo different)" same

# The CSV, as a spreadsheet reads it: one row per submission in name order, each as long as the header.
summary=$(python3 - "$work/one.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
header, body = rows[0], rows[1:]
print("lengths", "same" if all(len(row) == len(header) for row in rows) else [len(row) for row in rows])
print("columns", header[0], header[1], header[-5], header[-4], header[-3], header[-2], header[-1], len(header))
for row in body:
    print("row", row[0], "|", row[header.index("passed")], "|", row[-1])
PY
)
expect "every row as long as the header" "$(grep '^lengths' <<<"$summary")" "lengths same"
expect "header" "$(grep '^columns' <<<"$summary")" "columns student file passed time ratio flags case set note 25"
expect "rows" "$(grep '^row' <<<"$summary")" "$(cat <<ROWS
row '=1+2 | 18/18 | 
row Doe, Jane "JD" | 18/18 | 
row alice | 18/18 | 
row bob | 0/18 | compile error or no result: $subs/bob.cu(3): error: identifier "x" is undefined
row carol | 0/18 | compile error or no result: no message
row dave errors | 0/18 | compile error or no result: lab-mmm: error: the cases need a GPU: no usable CUDA GPU
row empty folder | 0/18 | no .cu file
row in a folder | 18/18 | 
ROWS
)"

# Which GPUs the jobs ran on, from the stand-in's log: "same GPU at once" if two overlapped on one.
gpus_used() {
    python3 - "$STUB_LOG" <<'PY'
import sys
running, used, clash = {}, set(), False
for line in open(sys.argv[1]):
    event, rest = line.split(" ", 1)
    gpu = rest.rsplit(" ", 1)[1].strip()
    used.add(gpu)
    running[gpu] = running.get(gpu, 0) + (1 if event == "begin" else -1)
    clash = clash or running[gpu] > 1
print("same GPU at once" if clash else "one at a time on " + ",".join(sorted(used)))
PY
}
# Two jobs on two GPUs: never two submissions on one GPU, whatever order they finish in (five runs,
# random pauses); with CUDA_VISIBLE_DEVICES set, only the GPUs it names.
for run in 1 2 3 4 5; do
    rm -f "$STUB_LOG"
    grade two --jobs 2 03-mmm-tiled "$subs" >/dev/null
    expect "two jobs on two GPUs, run $run" "$(gpus_used)" "one at a time on 0,1"
done
rm -f "$STUB_LOG"
expect "a scheduler's GPUs exit" "$(CUDA_VISIBLE_DEVICES=5,7 grade share --jobs 2 03-mmm-tiled "$subs")" 0
expect "a scheduler's GPUs" "$(gpus_used)" "one at a time on 5,7"
expect "a scheduler's GPUs, same CSV" "$(cmp -s "$work/one.csv" "$work/share.csv" && echo same || echo different)" same

# Progress: a line per submission on stderr, none in the CSV.
expect "progress lines" "$(grep -c '^grade.sh: graded [1-8] of 8: ' "$work/three.err")" 8
expect "no progress in the CSV" "$(grep -c 'grade.sh' "$work/three.csv" || true)" 0

# Every --check has a time limit: 10 minutes, an hour with --sanitize, or --limit's.
limits() { sort -u "$STUB_LOG.limits" | tr '\n' ' '; rm -f "$STUB_LOG.limits"; }
rm -f "$STUB_LOG.limits"
grade limited 03-mmm-tiled "$subs" >/dev/null
expect "a time limit by default" "$(limits)" "600 "
grade limited --sanitize 03-mmm-tiled "$subs" >/dev/null
expect "a longer one under the sanitizer" "$(limits)" "3600 "
grade limited --limit 42 --sanitize 03-mmm-tiled "$subs" >/dev/null
expect "--limit reaches the lab" "$(limits)" "42 "

# --cases reaches the lab: the header has the file's cases and another case set.
printf '1 1 1 f64 1\n17 33 5 f32 2\n' >"$work/cases.txt"
expect "--cases exits" "$(grade hidden --cases "$work/cases.txt" 03-mmm-tiled "$subs")" 0
# Week 3's three rules read from the code come first (issues 29 and 39), then its three measured ones.
rules='"tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)","barrier: mmm_f64 and mmm_f32 wait at __syncthreads() inside the loop over the tiles (PTX)","loads: mmm_f64 and mmm_f32 load through global or shared pointers, none generic (PTX)"'
measured='"tiling, measured: global loads per element of C (ncu)","tiling, measured: shared-memory loads per element of C (ncu)","tiling, measured: shared memory per block of the kernel that ran (ncu)"'
expect "--cases header" "$(head -n 1 "$work/hidden.csv")" "student,file,$rules,$measured,\"mmm f64, 1 x 1 times 1 x 1\",\"mmm f32, 17 x 33 times 33 x 5\",passed,time ratio,flags,case set,note"
expect "--cases rows" "$(grep -c ',8/8,' "$work/hidden.csv")" 4
case_set() { python3 -c 'import csv, sys; print(list(csv.reader(open(sys.argv[1], newline="")))[2][-2])' "$1"; }
expect "another case set" "$([[ $(case_set "$work/hidden.csv") != "$(case_set "$work/one.csv")" ]] && echo yes)" yes

# A row graded on another case set than the one grading began with: no verdicts, nothing passed, the
# note says which, and grade.sh ends with exit code 1 and one line naming the students. A folder with
# several .cu files is not graded; .CU is a .cu file (issue 39).
week_hash=$(case_set "$work/one.csv")
listing=$("$real_lab" --kernel tiled --list-cases)
n=$(head -n 1 <<<"$listing" | cut -d ' ' -f 1)  # the week's cases, as the lab counts them
more=$work/more
mkdir -p "$more/several" "$more/Upper folder" "$more/one and a folder/old.cu"
echo "// pass" >"$more/a.cu"
echo "// other case set" >"$more/b.cu"
echo "// pass" >"$more/several/x.cu"
echo "// pass" >"$more/several/y.CU"
echo "// pass" >"$more/upper.CU"
echo "// pass" >"$more/Upper folder/k.CU"
echo "// pass" >"$more/one and a folder/mmm.cu"
expect "another case set exits 1" "$(grade more --jobs 2 03-mmm-tiled "$more")" 1
expect "another case set: one line names the student" "$(grep -v '^grade.sh: graded ' "$work/more.err")" \
    "grade.sh: the case set changed during grading (expected $week_hash) for 1 of 6 students, not graded: b"
# columns CSV NAME...: "lengths same" (or each row's length), then a line per row: "row" and the
# columns named (#N: the Nth), " | " between.
columns() {
    python3 - "$@" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
header = rows[0]
print("lengths", "same" if all(len(row) == len(header) for row in rows) else [len(row) for row in rows])
for row in rows[1:]:
    print("row", " | ".join(row[int(name[1:])] if name.startswith("#") else row[header.index(name)] for name in sys.argv[2:]))
PY
}
summary=$(columns "$work/more.csv" student "#2" passed "case set" note)
expect "another case set: every row as long as the header" "$(grep '^lengths' <<<"$summary")" "lengths same"
expect "another case set, several .cu files, .CU" "$(grep '^row' <<<"$summary")" "$(cat <<ROWS
row Upper folder | PASS | $n/$n | $week_hash | 
row a | PASS | $n/$n | $week_hash | 
row b | - | 0/$n | ffffffffffffffff | case set changed during grading: ffffffffffffffff, expected $week_hash
row one and a folder | PASS | $n/$n | $week_hash | 
row several | - | 0/$n | $week_hash | several .cu files: x.cu, y.CU (hand in one)
row upper | PASS | $n/$n | $week_hash | 
ROWS
)"

# A --cases file edited during grading: the submission graded while it was edited, and those after
# it, are rows of another case set.
edited=$work/edited
mkdir -p "$edited"
echo "// pass" >"$edited/1.cu"
echo "// edits the cases" >"$edited/2.cu"
echo "// pass" >"$edited/3.cu"
cp "$work/cases.txt" "$work/edited-cases.txt"
hidden_hash=$(case_set "$work/hidden.csv")
expect "an edited --cases file exits 1" "$(grade edited --cases "$work/edited-cases.txt" 03-mmm-tiled "$edited")" 1
listing=$("$real_lab" --kernel tiled --cases "$work/cases.txt" --list-cases)
n=$(head -n 1 <<<"$listing" | cut -d ' ' -f 1)
listing=$("$real_lab" --kernel tiled --cases "$work/edited-cases.txt" --list-cases)
new_hash=$(head -n 1 <<<"$listing" | tr -d '():' | cut -d ' ' -f 5)
expect "an edited --cases file has another hash" "$([[ -n $new_hash && $new_hash != "$hidden_hash" ]] && echo yes)" yes
expect "an edited --cases file: one line names the students" "$(grep -v '^grade.sh: graded ' "$work/edited.err")" \
    "grade.sh: the case set changed during grading (expected $hidden_hash) for 2 of 3 students, not graded: 2, 3"
expect "an edited --cases file: the rows" "$(columns "$work/edited.csv" student passed "time ratio" "case set" note)" "$(cat <<ROWS
lengths same
row 1 | $n/$n | 1.000 | $hidden_hash | 
row 2 | 0/$n |  | $new_hash | case set changed during grading: $new_hash, expected $hidden_hash
row 3 | 0/$n |  | $new_hash | case set changed during grading: $new_hash, expected $hidden_hash
ROWS
)"

# --help names every option grade.sh reads.
bash assignments/grade.sh --help >"$work/help.txt"
options=$(grep -o -E '^ +(-h\|)?--[a-z-]+(\|--[a-z-]+)*\)' assignments/grade.sh | tr -d ' )' | tr '|' ' ')
expect "options found" "$(wc -w <<<"$options")" 15
for option in $options; do
    expect "--help names $option" "$(grep -q -E -- "(^|[ [,])$option([] ,]|$)" "$work/help.txt" && echo yes)" yes
done

# Bad arguments: one line on stderr, exit 2; no GPU: exit 1.
for bad in "--jobs 0 03-mmm-tiled $subs" "09-nothing $subs" "03-mmm-tiled $work/missing" "--cases $work/missing 03-mmm-tiled $subs" "--fast 03-mmm-tiled $subs" "--limit 0 03-mmm-tiled $subs" "--limit 1.5 03-mmm-tiled $subs" \
    "--mem 8GB --slurm 03-mmm-tiled $subs $work/out" "--cpus 0 --slurm 03-mmm-tiled $subs $work/out" "--collect-job 03-mmm-tiled $subs" "--partition grading 03-mmm-tiled $subs"; do
    # shellcheck disable=SC2086 # the words of the bad command line
    expect "grade.sh $bad exits" "$(grade bad $bad)" 2
    expect "grade.sh $bad says why in one line" "$(wc -l <"$work/bad.err") $(grep -c '^grade.sh: ' "$work/bad.err")" "1 1"
done
expect "no GPU exits" "$(LC_ALL=C PATH="$work/no-gpu:$PATH" bash assignments/grade.sh 03-mmm-tiled "$subs" >/dev/null 2>"$work/no-gpu.err" && echo 0 || echo $?)" 1
expect "no GPU says so" "$(cat "$work/no-gpu.err")" "grade.sh: no GPU here (nvidia-smi lists none); grading runs every case on one"

echo "test-grade.sh: $checks checks, $failures failed"
[[ $failures == 0 ]]
