#!/usr/bin/env bash
# Grades a folder of submissions for one week into CSV on stdout:
#
#   bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS > grades.csv
#
# or, on a Slurm cluster, as one job array (one task and one GPU per submission), then its CSV:
#
#   bash assignments/grade.sh --slurm [--partition P] [--account A] [--time MINUTES] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS OUT
#   bash assignments/grade.sh --collect OUT > grades.csv
#
# A submission is SUBMISSIONS/<student>.cu or SUBMISSIONS/<student>/<any name>.cu (the first .cu in
# the folder). Each runs through the week's lab with --kernel-source FILE --check --csv: one row per
# student with every case's PASS / FAIL / FAULT, how many passed, the geometric mean of the student's
# time over ours (cases that passed), the hash of the case set, and a note (a compile error's first
# line, or why there is no result). Fields are quoted as RFC 4180 says; every row is as long as the
# header, which is always printed.
#
#   --jobs N      grade N submissions at once, each on its own GPU where there are several
#                 (those CUDA_VISIBLE_DEVICES names, else all nvidia-smi lists; more jobs than GPUs
#                 share them in turn); the CSV is the same, in the same order, as with one job
#   --sanitize    run every case under compute-sanitizer (lab --check --sanitize; slow)
#   --cases FILE  the cases in FILE instead of the week's (hidden cases; see the week's README)
#   --limit SECONDS  a submission's --check stops after this (the lab's --time-limit; default 600,
#                 3600 with --sanitize): the case running then and those after it are FAULTs
#   --slurm       submit (sbatch) one array task per submission, each with one GPU (--gres=gpu:1),
#                 into the folder OUT (new or empty): the task script (OUT/task.sh, with its #SBATCH
#                 lines), the settings, and a row per task in OUT/rows; prints the job id
#   --partition, --account, --time MINUTES  for sbatch (else SBATCH_PARTITION, SBATCH_ACCOUNT as
#                 sbatch reads them; the time defaults to the limit and 10 minutes more)
#   --collect OUT the CSV of an array, the same as a local run's; a task without a row gets one with
#                 Slurm's state and reason, and stderr says how to run those tasks again
#
# Folders and files are taken from where this is called. Grading needs a GPU (on the cluster: the
# nodes do). The labs come from LAB_BIN_DIR (a folder with the lab binaries, e.g. gpu-bundle/bin) or
# else from `cargo build --release`.
set -uo pipefail

usage="usage: bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS | --slurm [--partition P] [--account A] [--time MINUTES] [...] WEEK SUBMISSIONS OUT | --collect OUT  (WEEK: 01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism)"
caller=$(pwd)
repository=$(cd "$(dirname "$0")/.." && pwd)
absolute() { [[ $1 == /* ]] && printf '%s' "$1" || printf '%s/%s' "$caller" "$1"; }
fail() { echo "grade.sh: $1" >&2; exit "${2:-1}"; }

jobs=1 sanitize=() case_args=() positional=() limit= mode=local sbatch_args=() minutes=
while [[ $# -gt 0 ]]; do
    case $1 in
        --jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--jobs needs a whole number of at least 1, not '${2:-}'" 2; jobs=$2; shift 2 ;;
        --sanitize) sanitize=(--sanitize); shift ;;
        --limit) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--limit needs a whole number of seconds, not '${2:-}'" 2; limit=$2; shift 2 ;;
        --cases) [[ -f ${2:-} ]] || fail "--cases: '${2:-}' is not a file" 2; case_args=(--cases "$(absolute "$2")"); shift 2 ;;
        --slurm) mode=slurm; shift ;;
        --partition|--account) [[ -n ${2:-} ]] || fail "$1 needs a value" 2; sbatch_args+=("$1=$2"); shift 2 ;;
        --time) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--time needs a whole number of minutes, not '${2:-}'" 2; minutes=$2; shift 2 ;;
        --collect) [[ -n ${2:-} ]] || fail "--collect needs the folder --slurm wrote" 2; mode=collect; out=$(absolute "$2"); shift 2 ;;
        --task) mode=task; out=$2; shift 2 ;; # what an array task runs (OUT/task.sh)
        -h|--help) echo "$usage"; exit 0 ;;
        -*) fail "unknown option $1; $usage" 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done

# A CSV field: quoted, quotes doubled (RFC 4180), and a leading ' where a spreadsheet would read a
# formula (a name that begins with =, +, -, @, a tab or a carriage return), as the labs' CSV does.
csv_field() {
    local text=${1//\"/\"\"}
    [[ $text == [=+@-]* || $text == $'\t'* || $text == $'\r'* ]] && text="'$text"
    printf '"%s"' "$text"
}

# A row for a submission without results: a dash per case, nothing passed, the note.
row_without_results() {
    local dashes
    dashes=$(printf ',-%.0s' $(seq "$cases"))
    printf '%s,%s%s,0/%s,,%s,%s\n' "$(csv_field "$1")" "$(csv_field "$2")" "$dashes" "$cases" "$hash" "$(csv_field "$3")"
}

# Grades submission number $1 ($2) into $scratch/$1.row, on GPU $3 (a CUDA_VISIBLE_DEVICES value).
grade_one() {
    local index=$1 entry=$2 device=$3 student file output
    student=$(basename "$entry" .cu)
    if [[ -d $entry ]]; then
        file=$(find "$entry" -maxdepth 1 -name '*.cu' | sort | head -n 1)
    else
        file=$entry
    fi
    if [[ $file != *.cu || ! -f $file ]]; then
        row_without_results "$student" "$entry" "no .cu file" >"$scratch/$index.row"
        return
    fi
    output=$(CUDA_VISIBLE_DEVICES=$device "$lab_bin" --kernel-source "$file" "${week_args[@]}" "${case_args[@]}" "${sanitize[@]}" --check --time-limit "$limit" --csv 2>"$scratch/$index.err")
    if [[ $(head -n 1 <<<"$output") == "$header" && $(wc -l <<<"$output") -eq 2 ]]; then
        printf '%s,%s,""\n' "$(csv_field "$student")" "$(sed -n 2p <<<"$output")" >"$scratch/$index.row"
    else
        local reason
        reason=$(grep -m 1 -E '(\): error|^lab-[a-z-]+: error: )' "$scratch/$index.err" || tail -n 1 "$scratch/$index.err")
        row_without_results "$student" "$file" "compile error or no result: ${reason:-no message}" >"$scratch/$index.row"
    fi
}

# The week, its lab and what the lab says it checks, and the submissions, from the command line
# (WEEK SUBMISSIONS, and OUT for --slurm): sets lab_bin, week_args, header, cases, hash and entries.
set_up_week() {
    local expected=$1
    [[ ${#positional[@]} -eq $expected ]] || fail "$usage" 2
    # Each submission's --check ends within the limit, whatever its kernel does (the lab's --time-limit):
    # 10 minutes, an hour under compute-sanitizer (week 3's solution takes about 3 minutes there).
    [[ -n $limit ]] || limit=$([[ ${#sanitize[@]} -gt 0 ]] && echo 3600 || echo 600)
    week=${positional[0]} submissions=$(absolute "${positional[1]}")
    local lab
    case $week in
        01-simpson) lab=lab-simpson; week_args=() ;;
        02-mmm-ab) lab=lab-mmm; week_args=(--kernel naive) ;;
        03-mmm-tiled) lab=lab-mmm; week_args=(--kernel tiled) ;;
        04-constant-tracer) lab=lab-constant-tracer; week_args=() ;;
        07-dynamic-parallelism) lab=lab-dynamic-parallel; week_args=() ;;
        *) fail "no kernel week $week (01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism)" 2 ;;
    esac
    [[ -d $submissions ]] || fail "${positional[1]} is not a folder" 2
    if [[ -n ${LAB_BIN_DIR:-} ]]; then
        lab_bin=$(absolute "$LAB_BIN_DIR")/$lab
    else
        (cd "$repository" && cargo build --release -q -p "$lab") || fail "cargo build --release -p $lab failed"
        lab_bin=$repository/target/release/$lab
    fi
    [[ -x $lab_bin ]] || fail "$lab_bin is not an executable lab (LAB_BIN_DIR=${LAB_BIN_DIR:-unset})"
    # The lab runs, and says which cases it checks: the CSV header and the case set's hash (what it
    # prints on stderr stays out of both, and is quoted if it fails).
    header=$("$lab_bin" "${week_args[@]}" "${case_args[@]}" --list-cases --csv 2>"$scratch/list.err") || fail "$lab_bin does not run: $(head -n 1 "$scratch/list.err")"
    local listing
    listing=$("$lab_bin" "${week_args[@]}" "${case_args[@]}" --list-cases 2>"$scratch/list.err") || fail "$lab_bin does not run: $(head -n 1 "$scratch/list.err")"
    read -r cases _ _ _ hash <<<"$(head -n 1 <<<"$listing" | tr -d '():')"
    [[ $cases =~ ^[0-9]+$ ]] || fail "$lab_bin listed no cases: $listing"
    entries=()
    local entry
    for entry in "$submissions"/*; do
        [[ -e $entry ]] && entries+=("$entry")
    done
}

# Grades every submission here, --jobs at a time, and prints the CSV.
grade_here() {
    # The GPUs to grade on: those CUDA_VISIBLE_DEVICES names (a scheduler's share of the machine),
    # else every GPU nvidia-smi lists.
    local gpus devices
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    [[ $gpus -gt 0 ]] || fail "no GPU here (nvidia-smi lists none); grading runs every case on one"
    if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
        IFS=, read -r -a devices <<<"$CUDA_VISIBLE_DEVICES"
    else
        read -r -a devices <<<"$(seq -s ' ' 0 $((gpus - 1)))"
    fi
    echo "student,$header,note"
    local total=${#entries[@]} index=0 entry i
    # Job slot s grades on GPU devices[s mod the GPU count]; a submission takes a free slot, so that
    # with no more jobs than GPUs no two submissions share a GPU, whatever order they finish in.
    slot_pids=()
    for entry in "${entries[@]}"; do
        find_free_slot
        while [[ -z $slot ]]; do
            wait -n
            find_free_slot
        done
        # A line on stderr as each submission is done, for whoever waits (a sanitized week 3 takes
        # minutes per submission); stdout is only the CSV.
        {
            started=$SECONDS
            grade_one "$index" "$entry" "${devices[slot % ${#devices[@]}]}"
            echo "grade.sh: graded $((index + 1)) of $total: $(basename "$entry" .cu) ($((SECONDS - started)) s)" >&2
        } &
        slot_pids[slot]=$!
        index=$((index + 1))
    done
    wait
    for ((i = 0; i < index; i++)); do
        cat "$scratch/$i.row"
    done
}

# Sets the variable slot to a slot whose job has ended (or never started), or to nothing if all are
# busy; a variable rather than output, so that the slot table is read and kept in this shell.
find_free_slot() {
    local candidate running
    running=" $(jobs -rp | tr '\n' ' ') "
    slot=
    for ((candidate = 0; candidate < jobs; candidate++)); do
        if [[ -z ${slot_pids[candidate]:-} || $running != *" ${slot_pids[candidate]} "* ]]; then
            slot=$candidate
            return
        fi
    done
}

# --slurm: OUT gets the settings every task reads, the submissions (NUL-separated: names may hold
# any character), and task.sh, an sbatch script whose array task N grades submission N into
# OUT/rows/N.row; then the array is submitted.
submit_array() {
    out=$(absolute "${positional[2]}")
    if [[ -e $out && -n $(ls -A "$out" 2>/dev/null) ]]; then
        fail "${positional[2]} is not empty; --slurm writes a new folder (nothing is overwritten)" 2
    fi
    [[ ${#entries[@]} -gt 0 ]] || fail "${positional[1]} has no submissions" 2
    command -v sbatch >/dev/null || fail "--slurm needs Slurm's sbatch, and there is none here"
    mkdir -p "$out/rows" "$out/logs" || fail "cannot make $out"
    [[ -n $minutes ]] || minutes=$((limit / 60 + 10))
    # declare -g: read_array sources this inside a function, and the variables must be global.
    declare -p week lab_bin week_args case_args sanitize limit header cases hash | sed 's/^declare -/declare -g -/' >"$out/settings"
    printf '%s\0' "${entries[@]}" >"$out/submissions"
    {
        echo '#!/usr/bin/env bash'
        echo "# One task of a grading array (grade.sh --slurm); run again for chosen tasks: sbatch --array=3,5 $(printf '%q' "$out/task.sh")"
        echo "#SBATCH --job-name=grade-$week"
        echo "#SBATCH --gres=gpu:1"
        echo "#SBATCH --time=$minutes"
        echo "#SBATCH --output=$out/logs/%a.log"
        local option
        for option in "${sbatch_args[@]}"; do echo "#SBATCH $option"; done
        printf 'exec bash %q --task %q\n' "$repository/assignments/grade.sh" "$out"
    } >"$out/task.sh"
    local job
    job=$(sbatch --parsable --array="0-$((${#entries[@]} - 1))" "$out/task.sh") || fail "sbatch refused the array (see above)"
    job=${job%%;*}
    echo "$job" >"$out/job"
    echo "grade.sh: submitted job array $job: ${#entries[@]} tasks, one GPU each (week $week)"
    echo "follow it with: squeue -j $job"
    echo "then: bash assignments/grade.sh --collect $(printf '%q' "${positional[2]}") > grades.csv"
}

# Reads what --slurm wrote into OUT: the settings and the submissions.
read_array() {
    [[ -f $out/settings && -f $out/submissions ]] || fail "$out was not written by grade.sh --slurm" 2
    # shellcheck disable=SC1091 # written by submit_array
    source "$out/settings"
    mapfile -d '' entries <"$out/submissions"
}

# --task: one array task, on the GPU Slurm gave it, its row written whole or not at all.
run_task() {
    read_array
    local index=${SLURM_ARRAY_TASK_ID:?grade.sh --task runs as a Slurm array task}
    grade_one "$index" "${entries[index]}" "${CUDA_VISIBLE_DEVICES:-0}"
    cp "$scratch/$index.err" "$out/rows/$index.err" 2>/dev/null
    mv "$scratch/$index.row" "$out/rows/$index.tmp" && mv "$out/rows/$index.tmp" "$out/rows/$index.row"
}

# Slurm's word on array task $1 of job $2: "STATE, exit CODE, REASON" from sacct, else from
# scontrol (while the job is in the controller's memory), else that it is not known.
task_state() {
    local task=$1 job=$2 line
    line=$(sacct -j "${job}_$task" -n -P -X -o State,ExitCode,Reason 2>/dev/null | head -n 1)
    if [[ -n $line ]]; then
        IFS='|' read -r state code reason <<<"$line"
        echo "$state, exit $code, $reason"
        return
    fi
    line=$(scontrol -o show job "${job}_$task" 2>/dev/null | head -n 1)
    if [[ -n $line ]]; then
        local field state= code= reason=
        for field in $line; do
            case $field in
                JobState=*) state=${field#*=} ;;
                ExitCode=*) code=${field#*=} ;;
                Reason=*) reason=${field#*=} ;;
            esac
        done
        echo "$state, exit $code, $reason"
        return
    fi
    echo "state unknown to Slurm now (no accounting, and no longer in the controller's memory)"
}

# --collect: the array's CSV, in the submissions' order; tasks without a row get one with Slurm's
# word on them, and stderr lists them with the command that runs them again.
collect() {
    read_array
    local job missing=() index student
    job=$(cat "$out/job" 2>/dev/null)
    echo "student,$header,note"
    for index in "${!entries[@]}"; do
        if [[ -f $out/rows/$index.row ]]; then
            cat "$out/rows/$index.row"
        else
            student=$(basename "${entries[index]}" .cu)
            row_without_results "$student" "${entries[index]}" "no result from array task $index: $(task_state "$index" "$job")"
            missing+=("$index")
        fi
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        local list
        list=$(IFS=,; echo "${missing[*]}")
        echo "grade.sh: ${#missing[@]} of ${#entries[@]} tasks left no row (tasks $list; their logs: $out/logs/N.log); to run only those again: sbatch --array=$list $(printf '%q' "$out/task.sh")" >&2
    fi
}

scratch=$(mktemp -d) || fail "cannot make a private folder"
trap 'rm -rf "$scratch"' EXIT
case $mode in
    local) set_up_week 2 && grade_here ;;
    slurm) set_up_week 3 && submit_array ;;
    task) run_task ;;
    collect) [[ ${#positional[@]} -eq 0 ]] || fail "$usage" 2; collect ;;
esac
