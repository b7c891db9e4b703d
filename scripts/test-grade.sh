#!/usr/bin/env bash
# Checks assignments/grade.sh without a GPU (run by scripts/test.sh): a stand-in lab answers --check
# as a lab would, as each submission's first line says, and the real lab-mmm lists the cases. What is
# checked: the CSV (every row as long as the header, names with commas and quotes as RFC 4180 says, a
# name that a spreadsheet would take for a formula kept as text, names with line breaks, tabs and
# bytes that are not UTF-8 escaped as \xNN so that Python's csv module reads the file as UTF-8),
# the rows for a compile error, a run without a result and a folder without a .cu file, a folder
# whose only .cu file is in a subfolder, that --jobs 3 gives the same CSV as one job, that no two
# jobs share a GPU (and only CUDA_VISIBLE_DEVICES's are used where it is set), that --cases and the
# time limit reach the lab, the progress lines on stderr, the one-line errors for bad arguments, a
# row graded on another case set (a --cases file edited during grading) caught, a folder with several
# .cu files not graded, .CU files graded; the labs' MACHINE contract (verdict MACHINE, "machine: ",
# exit code 3: never a compile error, no score, the students named, exit code 3), a lab with a note
# column of its own, a lab that refuses the arguments; the score and --weights (and its errors:
# a typo, a bad weight, a column weighted twice), --ids (students without an id, lines naming
# nobody), the kept --check outputs; --dry-run without a GPU and without building; no GPU found
# before anything is built; an empty submissions folder, a LAB_BIN_DIR without labs and an sbatch
# that refuses the array (nothing left behind); that --help names every option; a program week
# (05-streams) in a dry run with the real lab-streams; and scripts/make-class.sh's class.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$PWD/$target
real_lab=$target/debug/lab-mmm
[[ -x $real_lab ]] || { echo "test-grade.sh: build the workspace first ($real_lab is missing)"; exit 1; }
work=$(mktemp -d)
trap '[[ -n ${KEEP_WORK:-} ]] || rm -rf "$work"' EXIT
source scripts/test-lib.sh

# The stand-in lab: --list-cases goes to the real one; --check answers from the submission's first
# line ("// pass", "// half": every other case and rule passes, "// compile error", anything else: no
# result) after a random pause, so that jobs finish out of order, and notes the GPU it was given.
# "// other case set" passes with another case set's hash; "// edits the cases" adds a case to the
# --cases file, then passes on the file as it is now. The labs' contract for a machine that fails
# them: "// machine" gives the verdict MACHINE in every case (the rules pass), "machine: ..." on stderr
# (and in the note column, where STUB_NOTE_COLUMN gives the lab one) and exit code 3; "// machine, no
# row" only the line and the exit code. --check --dry-run: the rules read from the code PASS ("//
# static fail": FAIL, exit code 1), every case and measured rule "-"; STUB_OLD_LAB: no --dry-run.
# Our solution (kernels/cuda/mmm.cu) answers as "// pass", or as STUB_OURS says.
mkdir -p "$work/bin" "$work/gpus" "$work/no-gpu" "$work/cargo"
cat >"$work/lab-mmm-body" <<'STUB'
#!/usr/bin/env bash
set -u
file= args=() plain=() cases_file= dry= csv= details=
while (($#)); do
    case $1 in
        --kernel-source) file=$2; shift 2 ;;
        --details) details=$2; shift 2 ;;
        --cases) cases_file=$2; args+=("$1" "$2"); plain+=("$1" "$2"); shift 2 ;;
        --check | --sanitize) shift ;;
        --dry-run) dry=yes; shift ;;
        --time-limit) echo "$2" >>"$STUB_LOG.limits"; shift 2 ;;
        --csv) csv=yes; args+=("$1"); shift ;;
        --help) echo "Usage: lab-mmm [OPTIONS]"; [[ -n ${STUB_OLD_LAB:-} ]] || echo "      --dry-run"; exit 0 ;;
        *) args+=("$1"); plain+=("$1"); shift ;;
    esac
done
# A note column of the stand-in's own only where the lab it lists for has none.
note_column() { [[ -n ${STUB_NOTE_COLUMN:-} && $("$REAL_LAB" --kernel tiled --list-cases --csv) != *,note,* ]]; }
if [[ -z $file ]]; then
    listed=$("$REAL_LAB" "${args[@]}") || exit
    note_column && [[ -n $csv ]] && listed+=",note"
    printf '%s\n' "$listed"
    exit 0
fi
echo "begin $(basename "$file") ${CUDA_VISIBLE_DEVICES:-unset}" >>"$STUB_LOG"
echo "${CUDA_VISIBLE_DEVICES:-unset} ${LAB_GPU_LOCK:-unset} ${CUDA_DEVICE_MAX_CONNECTIONS:-unset}" >>"$STUB_LOG.locks"
trap 'echo "end $(basename "$file") ${CUDA_VISIBLE_DEVICES:-unset}" >>"$STUB_LOG"' EXIT
sleep "0.$((RANDOM % 4))"
first=$(head -n 1 "$file")
# Our own solution, which grade.sh checks the cases with before any submission (issue 66).
[[ $file == */kernels/cuda/* ]] && first=${STUB_OURS:-// pass}
[[ $first == "// edits the cases" ]] && echo "3 5 7 f64 1" >>"$cases_file"
# --details: what the feedback pages read (their content is tested with real labs' files in
# feedback/tests); here only that grade.sh asks for them and passes them on.
[[ -z $details ]] || printf '{"lab": "lab-mmm", "rows": [], "verdict": "%s"}\n' "${first#// }" >"$details"
machine="machine: no usable CUDA GPU (cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version)"
case $first in
    "// compile error")
        echo "$file(3): error: identifier \"x\" is undefined" >&2
        exit 1 ;;
    "// refused")
        echo "error: unexpected argument '--time-limit' found" >&2
        exit 2 ;;
    "// quotes machine")
        # nvcc quoting the student's `#warning machine: ...`, then the lab's own error: the student's.
        echo "$file(2): warning #1105-D: #warning directive: machine: no usable CUDA GPU" >&2
        echo "lab-mmm: error: nvcc could not compile $file" >&2
        exit 1 ;;
    "// warns, then fails")
        echo "$file(5): warning #177-D: variable \"error_count\" was declared but never referenced" >&2
        echo "$file compiled (for GPU 0, sm_90): mmm_f64 40 registers, 4096 bytes shared" >&2
        echo "lab-mmm: error: machine: the cases need a GPU: no usable CUDA GPU" >&2
        exit 3 ;;
    "// machine, no row")
        echo "lab-mmm: error: $machine" >&2
        exit 3 ;;
    "// sleeps")
        sleep 20
        exit 0 ;;
    "// pass" | "// half" | "// no tiles" | "// rules only" | "// other case set" | "// edits the cases" | "// machine" | "// static fail" | "// compile error, with a row")
        listing=$("$REAL_LAB" "${plain[@]}" --list-cases)
        read -r cases _ _ _ hash <<<"$(head -n 1 <<<"$listing" | tr -d '():')"
        mapfile -t names < <(tail -n +2 <<<"$listing")
        [[ $first == "// other case set" ]] && hash=ffffffffffffffff
        header=$("$REAL_LAB" "${args[@]}" --list-cases)
        note_column && header+=",note"
        echo "$header"
        verdicts= passed=0 code=0 note= counted=0
        [[ -n $dry ]] && note="dry run: no GPU used"
        for i in "${!names[@]}"; do
            verdict=PASS
            if [[ $first == "// compile error, with a row" ]]; then
                # A lab that keeps a row for a compile error: FAIL in every column ("-" where a dry
                # run does not run it), the note "compile error: ...", exit code 1.
                verdict=FAIL code=1 note="compile error: $file(3): error: identifier \"x\" is undefined"
                [[ -n $dry && ! ${names[i]} =~ ^[a-z]+:\  ]] && verdict=-
            elif [[ -n $dry ]]; then
                [[ ${names[i]} =~ ^[a-z]+:\  ]] || verdict=-
                [[ $verdict == PASS && $first == "// static fail" ]] && verdict=FAIL code=1
            elif [[ $first == "// half" && $((i % 2)) == 1 ]]; then
                verdict=FAIL code=1
            elif [[ $first == "// no tiles" && ${names[i]} == tiles:* ]]; then
                verdict=FAIL code=1
            elif [[ $first == "// rules only" && ${names[i]} != *": "* ]]; then
                verdict=FAIL code=1
            elif [[ $first == "// machine" && ! ${names[i]} =~ ^[a-z]+:\  ]]; then
                verdict=MACHINE code=3 note=$machine
            fi
            [[ $verdict == PASS ]] && passed=$((passed + 1))
            [[ $verdict == - ]] || counted=$((counted + 1))
            verdicts+="$verdict,"
        done
        [[ $note == machine:* ]] && echo "lab-mmm: error: $note" >&2
        # The columns after "passed" as the lab names them: the time ratio, the case set, others empty.
        IFS=, read -r -a after <<<"${header##*,passed,}"
        rest=
        for column in "${after[@]}"; do
            case $column in "time ratio") if [[ -n $dry ]]; then rest+=","; else rest+=",1.000"; fi ;; "case set") rest+=",$hash" ;; note) rest+=",\"${note//\"/\"\"}\"" ;; *) rest+="," ;; esac
        done
        printf '"%s",%s%s/%s%s\n' "${file//\"/\"\"}" "$verdicts" "$passed" "$counted" "$rest"
        exit "$code" ;;
    "// panics")
        # A lab that ends without a row and without a word of its own: not the student's (issue 62).
        echo "thread 'main' panicked at lab-mmm/src/main.rs:1:1: index out of bounds" >&2
        exit 101 ;;
    *)
        echo "lab-mmm: error: the kernel crashed" >&2
        exit 1 ;;
esac
STUB
printf '#!/usr/bin/env bash\necho "GPU 0: Stand-in (UUID: GPU-0)"\necho "GPU 1: Stand-in (UUID: GPU-1)"\n' >"$work/gpus/nvidia-smi"
printf '#!/usr/bin/env bash\nexit 9\n' >"$work/no-gpu/nvidia-smi"
# cargo, for the runs without LAB_BIN_DIR: it notes that it was called, and fails.
printf '#!/usr/bin/env bash\necho "cargo $*" >>%q\nexit 101\n' "$work/cargo.log" >"$work/cargo/cargo"
chmod +x "$work/lab-mmm-body" "$work/gpus/nvidia-smi" "$work/no-gpu/nvidia-smi" "$work/cargo/cargo"
marking_stub "$work/lab-mmm-body" "$work/bin/lab-mmm" "$real_lab"

subs=$work/submissions
mkdir -p "$subs/in a folder" "$subs/empty folder" "$subs/eve/src" "$subs/eve/__MACOSX/src" "$subs/eve/.git"
echo "// pass" >"$subs/alice.cu"
echo "// pass" >"$subs/=1+2.cu"
echo "// pass" >"$subs/Doe, Jane \"JD\".cu"
echo "// compile error" >"$subs/bob.cu"
echo "// crashes" >"$subs/carol.cu"
echo "// half" >"$subs/half.cu"
echo "// pass" >"$subs/in a folder/mmm.cu"
# eve's only .cu file is in a subfolder; macOS's copies and hidden files are not hers.
echo "// pass" >"$subs/eve/src/mmm.cu"
echo "// crashes" >"$subs/eve/__MACOSX/src/._mmm.cu"
echo "// crashes" >"$subs/eve/.git/old.cu"
echo "// crashes" >"$subs/eve/src/.#mmm.cu"

export REAL_LAB=$real_lab LAB_BIN_DIR=$work/bin STUB_LOG=$work/stub.log GRADER=$target/debug/grader
grade() {  # grade NAME ARGS...: stdout to NAME.csv, stderr to NAME.err, the exit code echoed
    local name=$1
    shift
    LC_ALL=C PATH="$work/gpus:$PATH" bash assignments/grade.sh "$@" >"$work/$name.csv" 2>"$work/$name.err" && echo 0 || echo $?
}

# One job, then three: the same CSV, row by row.
expect "one job exits" "$(grade one --jobs 1 03-mmm-tiled "$subs")" 0
rm -f "$STUB_LOG"
expect "three jobs exit" "$(grade three --jobs 3 03-mmm-tiled "$subs")" 0
expect "three jobs give one job's CSV" "$(cmp -s "$work/one.csv" "$work/three.csv" && echo same || echo different)" same

# The CSV, as a spreadsheet reads it: one row per submission in name order, each as long as the header.
summary=$(python3 - "$work/one.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
header, body = rows[0], rows[1:]
print("lengths", "same" if all(len(row) == len(header) for row in rows) else [len(row) for row in rows])
print("columns", header[0], header[1], header[-6], header[-5], header[-4], header[-3], header[-2], header[-1], len(header))
for row in body:
    print("row", row[0], "|", row[header.index("passed")], "|", row[header.index("note")], "|", row[header.index("score")])
PY
)
expect "every row as long as the header" "$(grep '^lengths' <<<"$summary")" "lengths same"
expect "header: the lab's columns, then note and score" "$(grep '^columns' <<<"$summary")" "columns student file passed time ratio flags case set note score 26"
expect "rows" "$(grep '^row' <<<"$summary")" "$(cat <<ROWS
row '=1+2 | 18 of 18 |  | 100.0
row Doe, Jane "JD" | 18 of 18 |  | 100.0
row alice | 18 of 18 |  | 100.0
row bob | 0 of 18 | compile error or no result: bob.cu(3): error: identifier "x" is undefined | 0.0
row carol | 0 of 18 | compile error or no result: lab-mmm: error: the kernel crashed | 0.0
row empty folder | 0 of 18 | no .cu file | 0.0
row eve | 18 of 18 | graded src/mmm.cu, the folder's only .cu file | 100.0
row half | 9 of 18 |  | 41.7
row in a folder | 18 of 18 |  | 100.0
ROWS
)"
expect "eve's file is the one in src/" "$(grep -c "^\"eve\",\"$subs/eve/src/mmm.cu\"," "$work/one.csv")" 1

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
rm -f "$STUB_LOG" "$STUB_LOG.locks"
expect "a scheduler's GPUs exit" "$(CUDA_VISIBLE_DEVICES=5,7 grade share --jobs 2 03-mmm-tiled "$subs")" 0
expect "a scheduler's GPUs" "$(gpus_used)" "one at a time on 5,7"
expect "a scheduler's GPUs, same CSV" "$(cmp -s "$work/one.csv" "$work/share.csv" && echo same || echo different)" same
# The GPUs' locks (issue 65): every lab, our solution's check too, names its GPU's lock file in one
# private folder of the run, gone when the run is, and (a kernel week) runs with one hardware queue per
# CUDA context.
locks=$(sort -u "$STUB_LOG.locks")
lock_folder=$(dirname "$(head -n 1 <<<"$locks" | cut -d ' ' -f 2)")
expect "a lock file per GPU" "$(sed "s|$lock_folder/||" <<<"$locks")" "5 gpu-5.lock 1
7 gpu-7.lock 1"
expect "in a private folder of the run, gone after it" "$(basename "$lock_folder" | sed 's/-[0-9]*-[0-9a-f]\{16\}$//') $([[ -e $lock_folder ]] && echo kept || echo gone)" "grade-gpu-locks gone"
expect "every check has it, our solution's too" "$(grep -c " $lock_folder/gpu-[57].lock 1$" "$STUB_LOG.locks")" "$(grep -c '^begin' "$STUB_LOG")"

# Progress: a line per submission on stderr, none in the CSV.
expect "progress lines" "$(grep -c '^grade.sh: graded [1-9] of 9: ' "$work/three.err")" 9
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

# Issue 66: our solution runs the cases before any submission. A case it fails stops grading in one
# line naming the case (exit code 2, no CSV row); our solution failing without --cases, or not
# running at all, is the machine's (exit code 3).
printf '1 1 1 f64 1\n17 33 5 f32 2\n' >"$work/ours-cases.txt"
expect "a case our solution fails exits 2" "$(STUB_OURS='// half' grade ours-fail --cases "$work/ours-cases.txt" 03-mmm-tiled "$subs")" 2
expect "a case our solution fails, in one line" "$(sed "s|$work|WORK|g; s|$PWD|REPO|g" "$work/ours-fail.err")" \
    "grade.sh: --cases WORK/ours-cases.txt: our own solution gets FAIL for 'barrier: mmm_f64 and mmm_f32 wait at __syncthreads() inside the loop over the tiles (PTX)' there: a case the week cannot grade; drop it from the file (what it printed: WORK/bin/lab-mmm --kernel-source REPO/kernels/cuda/mmm.cu --kernel tiled --cases WORK/ours-cases.txt --check)"
expect "no row for a refused case file" "$(wc -c <"$work/ours-fail.csv")" 0
expect "our solution failing the week's own cases exits 3" "$(STUB_OURS='// half' grade ours-machine 03-mmm-tiled "$subs")" 3
expect "our solution not running exits 3" "$(STUB_OURS='// machine, no row' grade ours-machine 03-mmm-tiled "$subs"; grep -c 'the machine.s fault, nothing graded' "$work/ours-machine.err")" "3
1"

# --cases reaches the lab: the header has the file's cases and another case set.
printf '1 1 1 f64 1\n17 33 5 f32 2\n' >"$work/cases.txt"
expect "--cases exits" "$(grade hidden --cases "$work/cases.txt" 03-mmm-tiled "$subs")" 0
# Week 3's three rules read from the code come first (issues 29 and 39), then its three measured ones.
rules='"tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)","barrier: mmm_f64 and mmm_f32 wait at __syncthreads() inside the loop over the tiles (PTX)","loads: where mmm_f64 or mmm_f32 prints, both load through global or shared pointers, none generic (PTX)"'
measured='"tiling, measured: global loads per element of C (ncu)","tiling, measured: shared-memory loads per element of C (ncu)","tiling, measured: shared memory per block of the kernel that ran (ncu)"'
expect "--cases header" "$(head -n 1 "$work/hidden.csv")" "student,file,$rules,$measured,\"mmm f64, 1 x 1 times 1 x 1\",\"mmm f32, 17 x 33 times 33 x 5\",passed,time ratio,flags,case set,note,score"
expect "--cases rows" "$(grep -c ',"8 of 8",' "$work/hidden.csv")" 5
# A bad --cases file is the file's fault, said with its line, not "the lab does not run".
printf '31 47 19 f64 5\n12 x 3 f32 1\n' >"$work/bad-cases.txt"
expect "a bad --cases file exits 2" "$(grade bad-cases --cases "$work/bad-cases.txt" 03-mmm-tiled "$subs")" 2
expect "a bad --cases file: one line" "$(cat "$work/bad-cases.err")" "grade.sh: $work/bad-cases.txt:2: K \"x\" is not a number from 1 to 8192"
case_set() { python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1], newline=""))); print(rows[2][rows[0].index("case set")])' "$1"; }
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
expect "another case set: one line names the student" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/more.err")" \
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
row Upper folder | PASS | $n of $n | $week_hash | 
row a | PASS | $n of $n | $week_hash | 
row b | - | 0 of $n | ffffffffffffffff | case set changed during grading: ffffffffffffffff, expected $week_hash
row one and a folder | PASS | $n of $n | $week_hash | 
row several | - | 0 of $n | $week_hash | several .cu files: x.cu, y.CU (hand in one)
row upper | PASS | $n of $n | $week_hash | 
ROWS
)"

# A link is graded as nothing, whatever it points at (our solution, on the machine that grades); a
# student's words that look like the machine's are hers.
links=$work/links
mkdir -p "$links/eve" "$work/elsewhere"
echo "// pass" >"$work/elsewhere/mmm.cu"
ln -s "$work/elsewhere/mmm.cu" "$links/ours.cu"
ln -s "$work/elsewhere/mmm.cu" "$links/eve/mmm.cu"
ln -s "$work/elsewhere" "$links/folder"
echo "// quotes machine" >"$links/mallory.cu"
# A file named like an old lab's no-GPU error is named in the lab's message: still the student's.
echo "// quotes machine" >"$links/the cases need a GPU.cu"
expect "links: graded" "$(grade links 03-mmm-tiled "$links")" 0
expect "links: the rows" "$(columns "$work/links.csv" student passed note score | grep '^row' | cut -c1-80)" "$(cat <<ROWS
row eve | 0 of $n | a link, not a file (hand in the .cu file itself) | 0.0
row folder | 0 of $n | a link, not a file (hand in the .cu file itself) | 0.0
row mallory | 0 of $n | compile error or no result: lab-mmm: error: nvcc could n
row ours | 0 of $n | a link, not a file (hand in the .cu file itself) | 0.0
row the cases need a GPU | 0 of $n | compile error or no result: lab-mmm: error:
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
expect "an edited --cases file exits 1" "$(grade edited --jobs 1 --cases "$work/edited-cases.txt" 03-mmm-tiled "$edited")" 1
listing=$("$real_lab" --kernel tiled --cases "$work/cases.txt" --list-cases)
n=$(head -n 1 <<<"$listing" | cut -d ' ' -f 1)
listing=$("$real_lab" --kernel tiled --cases "$work/edited-cases.txt" --list-cases)
new_hash=$(head -n 1 <<<"$listing" | tr -d '():' | cut -d ' ' -f 5)
expect "an edited --cases file has another hash" "$([[ -n $new_hash && $new_hash != "$hidden_hash" ]] && echo yes)" yes
expect "an edited --cases file: one line names the students" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/edited.err")" \
    "grade.sh: the case set changed during grading (expected $hidden_hash) for 2 of 3 students, not graded: 2, 3"
expect "an edited --cases file: the rows" "$(columns "$work/edited.csv" student passed "time ratio" "case set" note)" "$(cat <<ROWS
lengths same
row 1 | $n of $n | 1.000 | $hidden_hash | 
row 2 | 0 of $n |  | $new_hash | case set changed during grading: $new_hash, expected $hidden_hash
row 3 | 0 of $n |  | $new_hash | case set changed during grading: $new_hash, expected $hidden_hash
ROWS
)"

# --help names every option the grader reads.
bash assignments/grade.sh --help >"$work/help.txt"
options="--jobs --sanitize --cases --limit --weights --ids --out --keep --feedback --feedback-hide-cases --earlier --dry-run --slurm --partition --account --sbatch --time --cpus --mem --throttle --collect-job --collect --help"
for option in $options; do
    expect "--help names $option" "$(grep -q -E -- "(^|[ [,])$option([] ,=]|$)" "$work/help.txt" && echo yes)" yes
done
expect "--help names every week" "$(grep -c '01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism' "$work/help.txt")" 1

# Bad arguments: one line on stderr, exit 2; no GPU: exit 1.
for bad in "--jobs 0 03-mmm-tiled $subs" "09-nothing $subs" "03-mmm-tiled $work/missing" "--cases $work/missing 03-mmm-tiled $subs" "--fast 03-mmm-tiled $subs" "--limit 0 03-mmm-tiled $subs" "--limit 1.5 03-mmm-tiled $subs" \
    "--mem 8GB --slurm 03-mmm-tiled $subs $work/out" "--cpus 0 --slurm 03-mmm-tiled $subs $work/out" "--collect-job 03-mmm-tiled $subs" "--partition grading 03-mmm-tiled $subs"; do
    # shellcheck disable=SC2086 # the words of the bad command line
    expect "grade.sh $bad exits" "$(grade bad $bad)" 2
    expect "grade.sh $bad says why in one line" "$(wc -l <"$work/bad.err") $(grep -c '^grade.sh: ' "$work/bad.err")" "1 1"
done
# No GPU: one line and exit code 1, before anything is built (here cargo only notes that it ran);
# with a GPU and no LAB_BIN_DIR the labs are built. CUDA_VISIBLE_DEVICES naming a GPU is a GPU
# (a scheduler's node without nvidia-smi on the PATH); naming none is no GPU.
nogpu() {  # nogpu NAME ARGS...: as grade, on a machine without a GPU, LAB_BIN_DIR and cargo's stand-in
    local name=$1
    shift
    env -u CUDA_VISIBLE_DEVICES LC_ALL=C PATH="$work/cargo:$work/no-gpu:$PATH" bash assignments/grade.sh "$@" >"$work/$name.csv" 2>"$work/$name.err" && echo 0 || echo $?
}
rm -f "$work/cargo.log"
expect "no GPU exits" "$(LAB_BIN_DIR='' nogpu no-gpu 03-mmm-tiled "$subs")" 1
expect "no GPU says so" "$(cat "$work/no-gpu.err")" "grade.sh: no GPU here (nvidia-smi lists none, CUDA_VISIBLE_DEVICES is unset); grading runs every case on one: grade on a GPU node, or use --dry-run (compiles and checks the static rules only)"
expect "no GPU: nothing built" "$(cat "$work/cargo.log" 2>/dev/null)" ""
expect "a GPU: the lab is built" "$(LAB_BIN_DIR='' LC_ALL=C PATH="$work/cargo:$work/gpus:$PATH" bash assignments/grade.sh 03-mmm-tiled "$subs" 2>&1 >/dev/null; cat "$work/cargo.log")" \
    "grade.sh: building: cargo build --release -p lab-mmm (minutes the first time)
grade.sh: cargo build --release -p lab-mmm failed
cargo build --release -q -p lab-mmm"
expect "CUDA_VISIBLE_DEVICES=-1 is no GPU" "$(CUDA_VISIBLE_DEVICES=-1 grade hidden-gpus 03-mmm-tiled "$subs")" 1
expect "CUDA_VISIBLE_DEVICES=-1: one line" "$(cat "$work/hidden-gpus.err")" "grade.sh: no GPU here: CUDA_VISIBLE_DEVICES='-1' names none; grade on a GPU node, or use --dry-run (compiles and checks the static rules only)"
expect "CUDA_VISIBLE_DEVICES names a GPU, no nvidia-smi" "$(CUDA_VISIBLE_DEVICES=3 LC_ALL=C PATH="$work/no-gpu:$PATH" bash assignments/grade.sh 03-mmm-tiled "$subs" >"$work/scheduler.csv" 2>/dev/null && echo 0 || echo $?)" 0
expect "CUDA_VISIBLE_DEVICES names a GPU: the same CSV" "$(cmp -s "$work/one.csv" "$work/scheduler.csv" && echo same || echo different)" same

# An empty submissions folder, locally and for --slurm: one line, exit code 2.
mkdir -p "$work/none"
expect "no submissions exits" "$(grade none 03-mmm-tiled "$work/none")" 2
expect "no submissions says so" "$(cat "$work/none.err")" "grade.sh: $work/none has no submissions (no <student>.cu files or <student>/ folders in it)"
expect "no submissions, --slurm" "$(grade none --slurm 03-mmm-tiled "$work/none" "$work/none-out")" 2
expect "no submissions, --slurm says so" "$(cat "$work/none.err")" "grade.sh: $work/none has no submissions (no <student>.cu files or <student>/ folders in it)"

# LAB_BIN_DIR without the labs (gpu-bundle/bin before scripts/gpu-bundle.sh ran): one line that says
# how to build them, locally and for --slurm; a folder with other labs only names them.
mkdir -p "$work/empty-bin" "$work/other-bin"
printf '#!/usr/bin/env bash\n' >"$work/other-bin/lab-simpson"
chmod +x "$work/other-bin/lab-simpson"
expect "LAB_BIN_DIR without labs exits" "$(LAB_BIN_DIR=$work/empty-bin grade no-labs 03-mmm-tiled "$subs")" 1
expect "LAB_BIN_DIR without labs says how to build them" "$(cat "$work/no-labs.err")" \
    "grade.sh: LAB_BIN_DIR=$work/empty-bin has no lab binaries yet: build them with bash scripts/gpu-bundle.sh (they go to gpu-bundle/bin), or unset LAB_BIN_DIR to build with cargo here"
expect "LAB_BIN_DIR without labs, --slurm" "$(LAB_BIN_DIR=$work/missing-bin grade no-labs --slurm 03-mmm-tiled "$subs" "$work/no-labs-out")" 1
expect "LAB_BIN_DIR without labs, --slurm says how to build them" "$(cat "$work/no-labs.err")" \
    "grade.sh: LAB_BIN_DIR=$work/missing-bin has no lab binaries yet: build them with bash scripts/gpu-bundle.sh (they go to gpu-bundle/bin), or unset LAB_BIN_DIR to build with cargo here"
expect "LAB_BIN_DIR with other labs" "$(LAB_BIN_DIR=$work/other-bin grade no-labs 03-mmm-tiled "$subs"; cat "$work/no-labs.err")" \
    "1
grade.sh: LAB_BIN_DIR=$work/other-bin has no executable lab-mmm (only lab-simpson): build them again with bash scripts/gpu-bundle.sh"

# A failed sbatch leaves nothing behind: the folder it made is gone, a folder that was empty is empty.
mkdir -p "$work/refusing" "$work/empty-out"
printf '#!/usr/bin/env bash\necho "sbatch: error: invalid partition specified: gpu" >&2\nexit 1\n' >"$work/refusing/sbatch"
chmod +x "$work/refusing/sbatch"
refused() { { LC_ALL=C PATH="$work/refusing:$PATH" bash assignments/grade.sh --slurm 03-mmm-tiled "$subs" "$1" >/dev/null; } 2>&1 && echo 0 || echo $?; }
expect "sbatch refuses: exit 1, its words and one line" "$(refused "$work/new-out")" \
    "sbatch: error: invalid partition specified: gpu
grade.sh: sbatch refused the array or the check of our solution it waits for (its words are above); nothing was submitted and $work/new-out is as it was: the same command can run again
1"
expect "sbatch refuses: the folder it made is gone" "$([[ -e $work/new-out ]] && echo there || echo gone)" gone
refused "$work/empty-out" >/dev/null
expect "sbatch refuses: an empty folder stays empty" "$(find "$work/empty-out" -mindepth 1 | wc -l)" 0

# Names no CSV reader chokes on: bytes that are not UTF-8 and control characters as \xNN (a line
# break, a tab; a UTF-16 surrogate's bytes), UTF-8 as it is, commas and quotes as RFC 4180 says.
odd=$work/odd
mkdir -p "$odd" "$odd/dir"$'\xe9'
echo "// pass" >"$odd/"$'\xff\xfe bad.cu'
echo "// pass" >"$odd/new"$'\n'"line.cu"
echo "// pass" >"$odd/tab"$'\t'"here.cu"
echo "// compile error" >"$odd/comma, and \"quote\".cu"
echo "// pass" >"$odd/caf"$'\xc3\xa9'".cu"
echo "// pass" >"$odd/"$'\xed\xa0\x80'"sur.cu"
echo "// pass" >"$odd/dir"$'\xe9'"/k"$'\xff'".cu"
printf '%s\n' "caf"$'\xc3\xa9'".cu,s11" '\xff\xfe bad.cu,s10' "dir"$'\xe9'",s12" >"$work/odd-ids.txt"
expect "odd names exit" "$(grade odd --ids "$work/odd-ids.txt" 03-mmm-tiled "$odd")" 0
expect "odd names: a CSV that Python reads as UTF-8" "$(python3 - "$work/odd.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8", errors="strict")))
header = rows[0]
assert all(len(row) == len(header) for row in rows), [len(row) for row in rows]
for row in rows[1:]:
    print(row[0], "|", row[1].rsplit("/", 2)[-2:] if "dir" in row[0] else row[1].rsplit("/", 1)[-1], "|", row[header.index("passed")], "|", row[header.index("student id")])
PY
)" "$(cat <<'ROWS'
café | café.cu | 18 of 18 | s11
comma, and "quote" | comma, and "quote".cu | 0 of 18 | 
dir\xe9 | ['dir\\xe9', 'k\\xff.cu'] | 18 of 18 | s12
new\x0aline | new\x0aline.cu | 18 of 18 | 
tab\x09here | tab\x09here.cu | 18 of 18 | 
\xed\xa0\x80sur | \xed\xa0\x80sur.cu | 18 of 18 | 
\xff\xfe bad | \xff\xfe bad.cu | 18 of 18 | s10
ROWS
)"
expect "odd names: one line per row" "$(wc -l <"$work/odd.csv")" 8
expect "odd names: the students without an id, escaped" "$(grep 'no id' "$work/odd.err")" \
    "grade.sh: --ids $work/odd-ids.txt has no id for 4 of 7 submissions (their student id is empty): comma, and \"quote\".cu, new\\x0aline.cu, tab\\x09here.cu, \\xed\\xa0\\x80sur.cu"
expect "odd names: every output kept" "$(find "$work/odd-checks" -mindepth 1 -printf . | wc -c)" 7

# A grade comes only from the lab (issue 60): a row without the lab's closing mark (a lab killed by a
# signal), a line printed after it, are not graded ("machine: ", exit code 3); a "machine: " line on
# stderr after the lab's own is only output, and the row is graded.
forged=$work/forged
mkdir -p "$forged"
echo "// pass" >"$forged/alice.cu"
expect "no mark: exit 3" "$(STUB_UNMARKED=1 grade unmarked 03-mmm-tiled "$forged")" 3
expect "no mark: the row" "$(columns "$work/unmarked.csv" student passed note score)" "lengths same
row alice | 0 of 18 | machine: the lab's output carries no valid mark: no mark line at the end of stdout (exit code 0: a lab killed by a signal, or a line that is not the lab's; not graded, grade again where it works) | "
expect "a row after the mark: exit 3" "$(STUB_AFTER_MARK="$(tail -n 1 "$work/one.csv")" grade after-mark 03-mmm-tiled "$forged")" 3
expect "a row after the mark: not graded" "$(columns "$work/after-mark.csv" student passed score)" "lengths same
row alice | 0 of 18 | "
echo "// half" >"$forged/alice.cu"
expect "a machine line after the lab's: exit 0" "$(STUB_STDERR_AFTER="lab-mmm: error: machine: out of GPU memory" grade machine-line 03-mmm-tiled "$forged")" 0
expect "a machine line after the lab's: graded" "$(columns "$work/machine-line.csv" student passed note)" "lengths same
row alice | 9 of 18 | "

# The machine, not the student: MACHINE verdicts (or the lab's exit code 3 with its "machine: " line,
# after nvcc's warnings too) are never a compile error: the note begins "machine: ", there is no score, stderr names
# the students and grade.sh exits with 3. A lab with a note column of its own gives the same CSV.
machine=$work/machine
mkdir -p "$machine"
echo "// pass" >"$machine/ok.cu"
echo "// machine" >"$machine/oom.cu"
echo "// machine, no row" >"$machine/gone.cu"
echo "// warns, then fails" >"$machine/old lab.cu"
expect "the machine fails some: exit 3" "$(grade machine 03-mmm-tiled "$machine")" 3
why="machine: no usable CUDA GPU (cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version)"
expect "the machine fails some: the rows" "$(columns "$work/machine.csv" student "#8" passed note score)" "$(cat <<ROWS
lengths same
row gone | - | 0 of 18 | $why (not graded, grade again where it works) | 
row ok | PASS | 18 of 18 |  | 100.0
row old lab | - | 0 of 18 | machine: the cases need a GPU: no usable CUDA GPU (not graded, grade again where it works) | 
row oom | MACHINE | 3 of 18 | $why (15 of 18 cases could not run on this machine: not graded, grade again where it works) | 
ROWS
)"
expect "the machine fails some: never a compile error" "$(grep -c 'compile error' "$work/machine.csv")" 0
expect "the machine fails some: one line names them" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/machine.err")" \
    "grade.sh: the machine (not the students) failed, no grades for 3 of 4 submissions: gone, old lab, oom; their notes begin 'machine: ' and say why: grade them again where the GPU works"
expect "a lab with a note column: exit 3" "$(STUB_NOTE_COLUMN=1 grade machine-noted 03-mmm-tiled "$machine")" 3
expect "a lab with a note column: the same CSV" "$(diff "$work/machine.csv" "$work/machine-noted.csv" && echo same)" same
expect "a lab with a note column: its notes kept" "$(echo "// half" >"$machine/ok.cu"; STUB_NOTE_COLUMN=1 grade machine-noted 03-mmm-tiled "$machine" >/dev/null; columns "$work/machine-noted.csv" student note | grep ok)" "row ok | "
rm "$machine/ok.cu" "$machine/old lab.cu"
expect "the machine fails all: exit 3" "$(grade machine 03-mmm-tiled "$machine")" 3
expect "the machine fails all: every submission" "$(grep 'machine (not' "$work/machine.err")" \
    "grade.sh: the machine (not the students) failed, no grades for every submission; their notes begin 'machine: ' and say why: grade them again where the GPU works"

# A lab that keeps a row for a compile error: its note, score 0. A lab that refuses grade.sh's
# arguments (exit code 2: a lab and grade.sh of other commits) is not the student's failure either.
says=$work/says
mkdir -p "$says"
echo "// compile error, with a row" >"$says/row.cu"
echo "// refused" >"$says/refused.cu"
expect "the lab refuses: exit 1" "$(grade says 03-mmm-tiled "$says")" 1
expect "the lab refuses, a compile error's row: the rows" "$(columns "$work/says.csv" student "#2" passed note score)" "$(cat <<ROWS
lengths same
row refused | - | 0 of 18 | not graded: the lab refused grade.sh's arguments (exit code 2; a lab older or newer than grade.sh?): error: unexpected argument '--time-limit' found | 
row row | FAIL | 0 of 18 | compile error: row.cu(3): error: identifier "x" is undefined | 0.0
ROWS
)"
expect "the lab refuses: one line" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/says.err")" \
    "grade.sh: the lab refused its arguments (exit code 2) for 1 of 2 submissions, not graded: refused; their notes quote it (build the labs and grade.sh from one commit)"

# --weights: lines NAME WEIGHT (a whole column name, a rule's name, *); a column not named weighs 1.
printf '# week 3\n\ntiles 2\r\ntiling, measured 0\nmmm f64, 1 x 1 times 1 x 1  3\n' >"$work/weights.txt"
expect "--weights exits" "$(grade weighted --rule-cap 100 --weights "$work/weights.txt" 03-mmm-tiled "$subs")" 0
expect "--weights: the scores" "$(columns "$work/weighted.csv" student score | grep -E '^row (alice|half|bob)')" "row alice | 100.0
row bob | 0.0
row half | 54.0"
printf '* 0\nmmm f32, 1 x 1 times 1 x 1 1\nbarrier 1\n' >"$work/weights-star.txt"
expect "--weights *: the scores" "$(grade weighted --weights "$work/weights-star.txt" 03-mmm-tiled "$subs"; columns "$work/weighted.csv" student score | grep -E '^row half')" "0
row half | 50.0"
# Rules count as far as the cases are right: an empty starter passes some of them and no case (0),
# half the cases right earns half the rules passed.
mkdir -p "$work/rules-only"
echo "// rules only" >"$work/rules-only/starter.cu"
echo "// half" >"$work/rules-only/half.cu"
expect "rules only: graded" "$(grade rules-only 03-mmm-tiled "$work/rules-only")" 0
expect "rules only: the scores" "$(columns "$work/rules-only.csv" student passed score | grep '^row')" "row half | 9 of 18 | 41.7
row starter | 6 of 18 | 0.0"
bad_weights() {  # bad_weights TEXT: the exit code and stderr of grading with a weights file of TEXT
    printf '%s\n' "$1" >"$work/bad-weights.txt"
    grade bad-weights --weights "$work/bad-weights.txt" 03-mmm-tiled "$subs"
    cat "$work/bad-weights.err"
}
rules_named="(names: a column of the CSV header as it is, a rule's name before its ': ' (tiles, barrier, loads, tiling, measured), or *)"
expect "--weights with a typo" "$(bad_weights $'tiles 2\n# fine\ntilse 3')" "2
grade.sh: --weights $work/bad-weights.txt, line 3: week 03-mmm-tiled has no case or rule named 'tilse' $rules_named"
expect "--weights with a case's name cut short" "$(bad_weights 'mmm f64, 1 x 1 2')" "2
grade.sh: --weights $work/bad-weights.txt, line 1: week 03-mmm-tiled has no case or rule named 'mmm f64, 1 x 1' $rules_named"
expect "--weights without a weight" "$(bad_weights 'tiles')" "2
grade.sh: --weights $work/bad-weights.txt, line 1: not NAME WEIGHT: tiles"
expect "--weights with a word for a weight" "$(bad_weights 'tiles two')" "2
grade.sh: --weights $work/bad-weights.txt, line 1: 'two' is no weight (a number, 0 or more)"
expect "--weights with a negative weight" "$(bad_weights 'tiles -1')" "2
grade.sh: --weights $work/bad-weights.txt, line 1: '-1' is no weight (a number, 0 or more)"
expect "--weights naming a column twice" "$(bad_weights $'tiles 1\ntiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report) 2')" "2
grade.sh: --weights $work/bad-weights.txt, line 2: 'tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)' has a weight already (line 1)"
expect "--weights all 0" "$(bad_weights '* 0')" "2
grade.sh: --weights $work/bad-weights.txt weighs every case and rule 0: no score could be given"
expect "--weights not a file" "$(grade bad-weights --weights "$work/missing" 03-mmm-tiled "$subs"; cat "$work/bad-weights.err")" "2
grade.sh: --weights: '$work/missing' is not a file"

# --ids: a "student id" column; stderr names the submissions without one and the lines naming none.
cat >"$work/ids.txt" <<'IDS'
alice.cu,s1
"Doe, Jane ""JD"".cu", s2
bob,s3
eve,s5
zed.cu,s9
IDS
expect "--ids exits" "$(grade ids --ids "$work/ids.txt" 03-mmm-tiled "$subs")" 0
expect "--ids: the column" "$(columns "$work/ids.csv" student "student id")" "$(cat <<ROWS
lengths same
row '=1+2 | 
row Doe, Jane "JD" | s2
row alice | s1
row bob | s3
row carol | 
row empty folder | 
row eve | s5
row half | 
row in a folder | 
ROWS
)"
expect "--ids: the header ends with it" "$(head -n 1 "$work/ids.csv" | grep -o ',note,score,student id$')" ",note,score,student id"
expect "--ids: who has none, which lines name none" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/ids.err")" \
    "grade.sh: --ids $work/ids.txt has no id for 5 of 9 submissions (their student id is empty): =1+2.cu, carol.cu, empty folder, half.cu, in a folder
grade.sh: --ids $work/ids.txt names 1 submissions that are not in $subs: line 5: zed.cu"
printf 'alice.cu,s1\nbob.cu,s3\nalice,s1\nalice.cu,s4\n' >"$work/ids-twice.txt"
expect "--ids: two ids for one name" "$(grade ids-twice --ids "$work/ids-twice.txt" 03-mmm-tiled "$subs"; cat "$work/ids-twice.err")" "2
grade.sh: --ids $work/ids-twice.txt, line 4: alice.cu has the id s1 already (line 1)"
printf 'alice.cu s1\n' >"$work/ids-bad.txt"
expect "--ids: a line without a comma" "$(grade ids-bad --ids "$work/ids-bad.txt" 03-mmm-tiled "$subs"; cat "$work/ids-bad.err")" "2
grade.sh: --ids $work/ids-bad.txt, line 1: not FILE_OR_FOLDER_NAME,STUDENT_ID: alice.cu s1"

# Each --check's output kept: beside the CSV by default (a new folder, never one with files), in
# --keep's folder (new or empty); nowhere, and said so, where stdout is no file.
expect "kept beside the CSV" "$(find "$work/one-checks" -mindepth 1 -printf '%f\n' | LC_ALL=C sort | tr '\n' '|')" "=1+2.cu.txt|Doe, Jane \"JD\".cu.txt|alice.cu.txt|bob.cu.txt|carol.cu.txt|empty folder.txt|eve.txt|half.cu.txt|in a folder.txt|"
expect "kept: the compiler's words" "$(grep -c 'bob.cu(3): error: identifier "x" is undefined' "$work/one-checks/bob.cu.txt")" 1
expect "kept: why nothing ran" "$(grep -c 'not run: no .cu file' "$work/one-checks/empty folder.txt")" 1
expect "kept: a second run beside the same CSV" "$(find "$work" -maxdepth 1 -name 'two-checks*' | wc -l) $(grep -c 'kept in' "$work/two.err")" "5 1"
expect "kept: where, on stderr" "$(grep 'kept in' "$work/two.err")" "grade.sh: each submission's --check output is kept in $work/two-checks-5/"
expect "--keep DIR" "$(grade kept --keep "$work/kept/here" 03-mmm-tiled "$subs"; find "$work/kept/here" -mindepth 1 | wc -l)" "0
9"
expect "--keep DIR with files in it" "$(grade kept --keep "$work/kept/here" 03-mmm-tiled "$subs"; cat "$work/kept.err")" "2
grade.sh: --keep: $work/kept/here is not a new or empty folder (nothing is overwritten)"
expect "stdout no file: not kept, and said so" "$(LC_ALL=C PATH="$work/gpus:$PATH" bash assignments/grade.sh 03-mmm-tiled "$subs" 2>&1 >/dev/null | grep -v '^grade.sh: graded ')" \
    "grade.sh: the --check outputs are not kept (stdout is not a file; --keep DIR keeps them)"
expect "--keep goes with a local run" "$(grade bad --keep "$work/x" --slurm 03-mmm-tiled "$subs" "$work/out"; cat "$work/bad.err")" "2
grade.sh: --keep goes with a local run, not --slurm"

# --dry-run: no GPU, nothing built (LAB_BIN_DIR's labs), each submission compiled and its static rules
# judged; cases and measured rules "-", no score; a lab without --dry-run is one line.
dry=$work/dry
mkdir -p "$dry"
echo "// pass" >"$dry/alice.cu"
echo "// static fail" >"$dry/static.cu"
echo "// compile error" >"$dry/bob.cu"
echo "// compile error, with a row" >"$dry/carol.cu"
rm -f "$work/cargo.log" "$STUB_LOG.limits"
expect "--dry-run exits" "$(nogpu dry --dry-run --jobs 2 03-mmm-tiled "$dry")" 0
expect "--dry-run: the rows" "$(columns "$work/dry.csv" student "#2" "#3" "#4" "#5" "#8" passed note score)" "$(cat <<ROWS
lengths same
row alice | PASS | PASS | PASS | - | - | 3 of 3 | dry run: no GPU used | 
row bob | - | - | - | - | - | 0 of 18 | compile error or no result: bob.cu(3): error: identifier "x" is undefined | 
row carol | FAIL | FAIL | FAIL | - | - | 0 of 3 | compile error: carol.cu(3): error: identifier "x" is undefined | 
row static | FAIL | FAIL | FAIL | - | - | 0 of 3 | dry run: no GPU used | 
ROWS
)"
expect "--dry-run: what stderr says" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/dry.err")" \
    "grade.sh: dry run: 1 of 4 submissions compile and pass the static rules (no case ran; no scores)"
expect "--dry-run: nothing built, no time limit" "$(cat "$work/cargo.log" "$STUB_LOG.limits" 2>/dev/null)" ""
expect "--dry-run with a lab without it" "$(STUB_OLD_LAB=1 nogpu dry --dry-run 03-mmm-tiled "$dry"; cat "$work/dry.err")" "1
grade.sh: $work/bin/lab-mmm has no --check --dry-run yet (an older lab): build the labs again (cargo, or bash scripts/gpu-bundle.sh)"
for bad in "--dry-run --sanitize 03-mmm-tiled $dry" "--dry-run --slurm 03-mmm-tiled $dry $work/out"; do
    # shellcheck disable=SC2086 # the words of the bad command line
    expect "grade.sh $bad exits 2 with one line" "$(nogpu bad $bad; wc -l <"$work/bad.err")" "2
1"
done

# --feedback DIR: the runs kept in DIR/runs, a page per student, the class page and a page for a pair
# too alike side by side, the CSV's "most like" (a copy of our solution and a renamed copy of it are
# too like it; an independent solution is like nothing); its refusals.
cp "$target/debug/feedback" "$work/bin/"
fb=$work/fb-subs fixtures=feedback/tests/fixtures/03-mmm-tiled
mkdir -p "$fb/no file"
{ echo "// pass"; cat kernels/cuda/mmm.cu; } >"$fb/ann.cu"
{ echo "// pass"; cat "$fixtures/renamed-copy.cu"; } >"$fb/ben.cu"
{ echo "// half"; cat "$fixtures/independent-1.cu"; } >"$fb/cat.cu"
echo "// compile error" >"$fb/dan.cu"
expect "--feedback exits" "$(grade fb --feedback "$work/fb" 03-mmm-tiled "$fb")" 0
expect "--feedback: the CSV's last column" "$(head -n 1 "$work/fb.csv" | grep -o ',[a-z ]*$')" ",most like"
expect "--feedback: most like" "$(columns "$work/fb.csv" student "most like")" "$(cat <<ROWS
lengths same
row ann | our kernels/cuda/mmm.cu, 100%
row ben | ann, 99%
row cat | 
row dan | 
row no file | 
ROWS
)"
expect "--feedback: the pages" "$(find "$work/fb" -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')" \
    "001-ann.html 001-ann.md 002-ben.html 002-ben.md 003-cat.html 003-cat.md 004-dan.html 004-dan.md 005-no_file.html 005-no_file.md alike-001-002.html alike-001-002.md index.html "
expect "--feedback: ann beside ben, over 20 lines that match marked" "$(( $(grep -c '<mark>' "$work/fb/alike-001-002.html") > 20 ))" 1
expect "--feedback: the runs kept" "$(ls "$work/fb/runs" | grep -c -e '^[0-9]*\.json$' -e '^[0-9]*\.cu$')" 8
expect "--feedback: the class page links every student" "$(grep -o 'href="00[1-5]-[a-z_]*\.html"' "$work/fb/index.html" | sort -u | wc -l)" 5
expect "--feedback: stderr says where" "$(grep -c "^grade.sh: feedback for each student in $work/fb/" "$work/fb.err")" 1
# --earlier DIR: cat's file handed in again (as an earlier year's, in a subfolder) is named.
mkdir -p "$work/earlier/2025"
cp "$fb/cat.cu" "$work/earlier/2025/lee.cu"
expect "--feedback --earlier exits" "$(grade fbe --feedback "$work/fbe" --earlier "$work/earlier" 03-mmm-tiled "$fb")" 0
expect "--earlier: most like" "$(columns "$work/fbe.csv" student "most like" | grep '^row cat')" "row cat | earlier $work/earlier/2025/lee.cu, 100%"
expect "--earlier: the class page" "$(grep -c 'like the earlier' "$work/fbe/index.html")" 1
expect "--earlier without --feedback" "$(grade bad --earlier "$work/earlier" 03-mmm-tiled "$fb"; cat "$work/bad.err")" "2
grade.sh: --earlier goes with --feedback DIR"
expect "--feedback into a folder with files" "$(grade bad --feedback "$work/fb" 03-mmm-tiled "$fb"; cat "$work/bad.err")" "2
grade.sh: --feedback: $work/fb is not a new or empty folder (nothing is overwritten)"
for bad in "--feedback-hide-cases 03-mmm-tiled $fb" "--dry-run --feedback $work/fb2 03-mmm-tiled $fb" "--feedback $work/fb2 --slurm 03-mmm-tiled $fb $work/out"; do
    # shellcheck disable=SC2086 # the words of the bad command line
    expect "grade.sh $bad exits 2 with one line" "$(nogpu bad $bad; wc -l <"$work/bad.err")" "2
1"
done

# A program week (issue 43) with the real lab-streams, in a dry run (no GPU): the starter compiles,
# a file that does not compile is a row with its error, naming the file without the grading
# machine's folders (issue 60); the CSV has a column per case and per rule of the trace; --sanitize
# and --feedback are refused for these weeks, in one line.
programs=$work/programs
mkdir -p "$programs" "$work/real-bin"
ln -s "$target/debug/lab-streams" "$work/real-bin/lab-streams"
cp assignments/05-streams/pipeline.cu "$programs/starter.cu"
printf 'int main( {\n' >"$programs/broken.cu"
expect "a program week: --dry-run exits" "$(LAB_BIN_DIR=$work/real-bin nogpu programs --dry-run 05-streams "$programs")" 0
expect "a program week: the rows" "$(columns "$work/programs.csv" student "#2" "#8" passed note)" "$(cat <<ROWS
lengths same
row broken | - | - | 0 of 13 | compile error or no result: broken.cu(1): error: "main" cannot be used as a global variable name or given C language linkage
row starter | - | - | 0 of 0 | dry run: no GPU used
ROWS
)"
expect "a program week: its rules are columns" "$(head -n 1 "$work/programs.csv" | grep -o '"overlap: kernels beside copies, at least 30%"')" \
    '"overlap: kernels beside copies, at least 30%"'
# The week's German program: its own week name passes --program to the lab, whose columns are its own.
mmm_programs=$work/mmm-programs
mkdir -p "$mmm_programs"
cp assignments/05-streams/mmm_streamed.cu "$mmm_programs/starter.cu"
mkdir -p "$mmm_programs/both/src"
cp assignments/05-streams/pipeline.cu "$mmm_programs/both/"
cp assignments/05-streams/mmm_streamed.cu "$mmm_programs/both/src/"
expect "the German program of week 5: --dry-run exits" "$(LAB_BIN_DIR=$work/real-bin nogpu mmm-programs --dry-run 05-mmm-streamed "$mmm_programs")" 0
expect "the German program of week 5: its cases and rules are columns" \
    "$(head -n 1 "$work/mmm-programs.csv" | grep -o '"COUNT 10, N 1024"\|"streams: COUNT streams carry a product each"' | tr '\n' ' ')" \
    '"COUNT 10, N 1024" "streams: COUNT streams carry a product each" '
expect "the German program of week 5: a folder with both programs is graded by its mmm_streamed.cu" \
    "$(columns "$work/mmm-programs.csv" student note)" "$(cat <<ROWS
lengths same
row both | graded src/mmm_streamed.cu, the folder's mmm_streamed.cu; dry run: no GPU used
row starter | dry run: no GPU used
ROWS
)"
for bad in "--sanitize 05-streams" "--feedback $work/fb3 06-pinned-mapped" "--sanitize 05-mmm-streamed"; do
    # shellcheck disable=SC2086 # the words of the bad command line
    expect "grade.sh $bad exits 2 with one line" "$(LAB_BIN_DIR=$work/real-bin grade bad $bad "$programs"; wc -l <"$work/bad.err")" "2
1"
done

# Issue 62: no grade lost, none silently zero. A lab that ends without a row and without a word of
# its own is not graded (never 0); --out is written in one rename, the previous CSV kept as .bak, and
# a mistyped week leaves it as it was; what is written is private; a write error is an exit code; only
# .cu files and folders are submissions, the rest named once; one student twice is refused.
safe=$work/safe
mkdir -p "$safe"
echo "// pass" >"$safe/alice.cu"
echo "// panics" >"$safe/pan.cu"
echo "notes" >"$safe/notes.txt"
expect "a lab without a row or a word: exit 1" "$(grade safe --out "$work/safe-grades.csv" 03-mmm-tiled "$safe")" 1
expect "a lab without a row or a word: not graded, no score" "$(columns "$work/safe-grades.csv" student passed note score)" "lengths same
row alice | 18 of 18 |  | 100.0
row pan | 0 of 18 | not graded: the lab ended without a row and without saying why (exit code 101: a panic or a crash of the lab, not the student's; its output is in the kept --check output) | "
expect "a lab without a row: stderr names it, and what was skipped" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' "$work/safe.err")" \
    "grade.sh: $safe: 1 not graded, neither a .cu file nor a folder: notes.txt
grade.sh: the lab gave no row for 1 of 2 submissions, not graded (never 0): pan; their notes say what the lab did: grade them again"
expect "--out: nothing on stdout" "$(wc -c <"$work/safe.csv")" 0
expect "--out: private" "$(stat -c %a "$work/safe-grades.csv") $(stat -c %a "$work/safe-grades-checks")" "600 700"
cp "$work/safe-grades.csv" "$work/safe-first.csv"
rm "$safe/pan.cu"
expect "--out again: exit 0" "$(grade safe-again --out "$work/safe-grades.csv" 03-mmm-tiled "$safe")" 0
expect "--out again: the previous CSV kept as .bak" "$(cmp -s "$work/safe-first.csv" "$work/safe-grades.csv.bak" && echo kept)" kept
cp "$work/safe-grades.csv" "$work/safe-second.csv"
expect "a mistyped week: exit 2" "$(grade safe-typo --out "$work/safe-grades.csv" 03-mmm-tield "$safe")" 2
expect "a mistyped week: the CSV as it was" "$(cmp -s "$work/safe-second.csv" "$work/safe-grades.csv" && echo same)" same
expect "--out in a folder that is not there: exit 2 before grading" "$(grade no-folder --out "$work/missing/grades.csv" 03-mmm-tiled "$safe"; cat "$work/no-folder.err")" "2
grade.sh: --out: '$work/missing/grades.csv' is no file in an existing folder"
expect "stdout that cannot be written: exit 1" "$(LC_ALL=C PATH="$work/gpus:$PATH" bash assignments/grade.sh --keep "$work/full-checks" 03-mmm-tiled "$safe" >/dev/full 2>"$work/full.err" && echo 0 || echo $?)" 1
expect "stdout that cannot be written: one line" "$(grep -v -e '^grade.sh: graded ' -e '^grade.sh: each submission' -e 'neither a .cu file' "$work/full.err")" \
    "grade.sh: cannot write the CSV to stdout: No space left on device (os error 28)"
mkdir -p "$safe/alice"
expect "one student twice: exit 2" "$(grade twice 03-mmm-tiled "$safe")" 2
expect "one student twice: one line" "$(cat "$work/twice.err")" "grade.sh: $safe: alice and alice.cu are one student's (alice): keep one of them, nothing graded"
rmdir "$safe/alice"

# The grader killed in the middle of a run (the issue's "a grading subshell killed", which left a
# row of 2 fields): rows are made in the grader's own process and the CSV written once at the end, so
# a kill leaves the previous --out file and its .bak as they were, and no part of a CSV.
echo "// sleeps" >"$safe/zed.cu"
cp "$work/safe-grades.csv" "$work/safe-before-kill.csv"
setsid bash -c 'LC_ALL=C PATH="$1:$PATH" exec bash assignments/grade.sh --out "$2" 03-mmm-tiled "$3"' \
    _ "$work/gpus" "$work/safe-grades.csv" "$safe" >"$work/killed.err" 2>&1 &
killed=$!
for _ in $(seq 300); do grep -q "^begin zed.cu" "$STUB_LOG" 2>/dev/null && break; sleep 0.1; done
expect "the grader to kill: it reached the sleeping lab" "$(grep -c "^begin zed.cu" "$STUB_LOG")" 1
kill -KILL -- "-$killed"
wait "$killed" 2>/dev/null || true
expect "the grader killed mid-run: the CSV and its .bak as they were, no part of a CSV" \
    "$(cmp -s "$work/safe-before-kill.csv" "$work/safe-grades.csv" && cmp -s "$work/safe-first.csv" "$work/safe-grades.csv.bak" && echo same) $(find "$work" -maxdepth 1 -name 'safe-grades.csv.tmp*' | wc -l)" "same 0"
rm "$safe/zed.cu"

# A folder another run holds (its lock) is refused, never shared; a dry run checks our solution first,
# so a node without nvcc is one line and exit code 3, not a class of MACHINE rows; no passed count
# reads as a date; gpu-bundle.sh deletes nothing that is not an earlier bundle, and has a --help.
mkdir -p "$work/held"
flock -n "$work/held" sleep 3 &
sleep 0.5
expect "a folder another run holds: exit 2" "$(grade held --keep "$work/held" 03-mmm-tiled "$safe")" 2
expect "a folder another run holds: one line" "$(grep -v 'neither a .cu file' "$work/held.err")" "grade.sh: --keep: $work/held is in use by another grading run"
wait
expect "no nvcc here: a dry run stops at our solution, exit 3" "$(STUB_OURS='// machine, no row' nogpu no-nvcc --dry-run 03-mmm-tiled "$safe")" 3
expect "no nvcc here: one line" "$(grep -vc 'neither a .cu file' "$work/no-nvcc.err") $(grep -c "^grade.sh: our own solution fails on this machine (machine: no usable CUDA GPU" "$work/no-nvcc.err")" "1 1"
expect "no passed count is a date" "$(cat "$work"/*.csv | grep -cE ',"?[0-9]+/[0-9]+"?,' || true)" 0
mkdir -p "$work/not-a-bundle"
touch "$work/not-a-bundle/thesis.tex"
expect "gpu-bundle.sh into a folder with files: exit 2" "$(bash scripts/gpu-bundle.sh "$work/not-a-bundle" 2>"$work/bundle.err" && echo 0 || echo $?) $(ls "$work/not-a-bundle")" "2 thesis.tex"
expect "gpu-bundle.sh into a folder with files: one line" "$(cat "$work/bundle.err")" \
    "gpu-bundle.sh: $work/not-a-bundle holds files and is no earlier bundle (no $work/not-a-bundle/.gpu-bundle): nothing is deleted; name a new or empty folder"
expect "gpu-bundle.sh --help" "$(bash scripts/gpu-bundle.sh --help | grep -c 'FOLDER (default gpu-bundle)')" 1

# Scores that mean the week: the starter handed in unchanged (other comments and layout) scores 0
# unrun; every case right but a rule of the week's technique failed scores at most --rule-cap (50).
week_scores=$work/week-scores
mkdir -p "$week_scores"
{ echo "// my comment"; sed 's/^    //' assignments/03-mmm-tiled/mmm.cu; } >"$week_scores/starter.cu"
echo "// no tiles" >"$week_scores/untiled.cu"
expect "scores: exit 0" "$(grade week-scores 03-mmm-tiled "$week_scores")" 0
expect "scores: the starter 0, a skipped technique 50" "$(columns "$work/week-scores.csv" student passed note score | grep '^row')" \
    "row starter | 0 of 18 | the week's starter, unchanged (only comments or layout differ): nothing handed in | 0.0
row untiled | 17 of 18 |  | 50.0"
expect "scores: --rule-cap 100" "$(grade week-scores --rule-cap 100 03-mmm-tiled "$week_scores"; columns "$work/week-scores.csv" student score | grep '^row untiled')" "0
row untiled | 94.4"

# scripts/make-class.sh, the class of issue 65's timing (graded on a GPU machine): COUNT copies of the
# week's kernels in turn, no two alike, each named in originals.txt; an OUT that exists is refused.
class=$work/class
expect "make-class.sh exits" "$(bash scripts/make-class.sh 03-mmm-tiled 40 "$class" >/dev/null && echo 0 || echo $?)" 0
expect "a class of 40" "$(find "$class" -name 's*.cu' | wc -l) $(for f in "$class"/s*.cu; do sha256sum <"$f"; done | sort -u | wc -l)" "40 40"
expect "originals.txt: a line per copy, each of a file of the week" "$(wc -l <"$class/originals.txt") $(while IFS=$'\t' read -r copy original; do [[ -f $class/$copy && -f assignments/03-mmm-tiled/$original && $copy == s[0-9][0-9][0-9][0-9]-"${original#*/}" ]] && echo ok; done <"$class/originals.txt" | wc -l)" "40 40"
expect "each copy says what it copies" "$(head -n 1 "$class/s0001-"*.cu) | $(tail -n +2 "$class/s0001-"*.cu | cmp -s - "assignments/03-mmm-tiled/$(cut -f 2 <<<"$(head -n 1 "$class/originals.txt")")" && echo same)" \
    "// class copy 1 of 03-mmm-tiled/$(cut -f 2 <<<"$(head -n 1 "$class/originals.txt")") | same"
expect "make-class.sh refuses an OUT that exists" "$(bash scripts/make-class.sh 03-mmm-tiled 3 "$class" 2>"$work/class.err" && echo 0 || echo $?) $(cat "$work/class.err") $(ls "$class" | wc -l)" \
    "2 make-class.sh: $class exists already: name a new folder 41"

echo "test-grade.sh: $checks checks, $failures failed"
[[ $failures == 0 ]]
