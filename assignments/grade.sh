#!/usr/bin/env bash
# Grades a folder of submissions for one week into CSV on stdout:
#
#   bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS > grades.csv
#
# or, on a Slurm cluster, as one job array (one task and one GPU per submission), then its CSV:
#
#   bash assignments/grade.sh --slurm [--partition P] [--account A] [--time MINUTES] [--cpus N] [--mem SIZE] [--collect-job] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS OUT
#   bash assignments/grade.sh --collect OUT > grades.csv
#
# WEEK: 01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism.
# A submission is SUBMISSIONS/<student>.cu or SUBMISSIONS/<student>/<any name>.cu (.CU too); a folder
# with several .cu files is not graded ("several .cu files: a.cu, b.cu (hand in one)"). Each runs
# through the week's lab with --kernel-source FILE --check --csv: one row per student with every
# case's PASS / FAIL / FAULT, how many passed, the geometric mean of the student's time over ours
# (cases that passed), the hash of the case set, and a note (a compile error's first line, or why
# there is no result). Fields are quoted as RFC 4180 says; every row is as long as the header, which
# is always printed. Every row's case set must be the one grading started with (a --cases file edited
# meanwhile): a row graded on another has no verdicts, 0 passed and the note "case set changed during
# grading: HASH, expected HASH", and grade.sh ends with exit code 1 and one line naming those students.
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
#                 lines), the settings (KEY=VALUE lines, read as data), the collect script
#                 (OUT/collect.sh), a row per task in OUT/rows and Slurm's logs in
#                 OUT/logs/<array job id>_<task>.log; prints the job id. A task that Slurm gave no
#                 GPU writes the row "no GPU was given to this task (...)" and fails.
#   --partition P, --account A  for sbatch (else SBATCH_PARTITION, SBATCH_ACCOUNT as sbatch reads them)
#   --time MINUTES  each task's time limit (default: the --limit and 10 minutes more)
#   --cpus N, --mem SIZE  each task's --cpus-per-task and --mem (SIZE as sbatch takes it: 8G, 500M);
#                 by default 2 CPUs and 8G, with --sanitize 2 and 12G, week 03 with --sanitize 4 and 16G
#   --collect-job with --slurm: also submit OUT/collect.sh as a job that waits for the array
#                 (--dependency=afterany:<array job id>) and writes the CSV into OUT/grades.csv
#   --collect OUT the CSV of an array, the same as a local run's; a task without a row gets one with
#                 Slurm's state and reason, and stderr says how to run those tasks again
#   --task OUT    what one array task runs (OUT/task.sh calls it; not for use by hand)
#   -h, --help    this text
#
# Folders and files are taken from where this is called. Grading needs a GPU (on the cluster: the
# nodes do). The labs come from LAB_BIN_DIR (a folder with the lab binaries, e.g. gpu-bundle/bin) or
# else from `cargo build --release`.
set -uo pipefail

weeks="01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism"
usage="usage: bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] WEEK SUBMISSIONS | --slurm [--partition P] [--account A] [--time MINUTES] [--cpus N] [--mem SIZE] [--collect-job] [...] WEEK SUBMISSIONS OUT | --collect OUT  (WEEK: $weeks; --help for more)"
caller=$(pwd)
repository=$(cd "$(dirname "$0")/.." && pwd)
absolute() { [[ $1 == /* ]] && printf '%s' "$1" || printf '%s/%s' "$caller" "$1"; }
fail() { echo "grade.sh: $1" >&2; exit "${2:-1}"; }
# --help: the comment at the top of this file.
help() { sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

jobs=1 sanitize=() case_args=() positional=() limit= mode=local sbatch_args=() minutes= cpus= memory= collect_job= slurm_only=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--jobs needs a whole number of at least 1, not '${2:-}'" 2; jobs=$2; shift 2 ;;
        --sanitize) sanitize=(--sanitize); shift ;;
        --limit) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--limit needs a whole number of seconds, not '${2:-}'" 2; limit=$2; shift 2 ;;
        --cases) [[ -f ${2:-} ]] || fail "--cases: '${2:-}' is not a file" 2; case_args=(--cases "$(absolute "$2")"); shift 2 ;;
        --slurm) mode=slurm; shift ;;
        --partition|--account) [[ -n ${2:-} && ${2:-} != *[[:space:]]* ]] || fail "$1 needs a value (without spaces)" 2; sbatch_args+=("$1=$2"); slurm_only+=("$1"); shift 2 ;;
        --time) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--time needs a whole number of minutes, not '${2:-}'" 2; minutes=$2; slurm_only+=("$1"); shift 2 ;;
        --cpus) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--cpus needs a whole number of at least 1, not '${2:-}'" 2; cpus=$2; slurm_only+=("$1"); shift 2 ;;
        --mem) [[ ${2:-} =~ ^[1-9][0-9]*[KMGT]?$ ]] || fail "--mem needs a size as sbatch takes it (8G, 500M), not '${2:-}'" 2; memory=$2; slurm_only+=("$1"); shift 2 ;;
        --collect-job) collect_job=yes; slurm_only+=("$1"); shift ;;
        --collect) [[ -n ${2:-} ]] || fail "--collect needs the folder --slurm wrote" 2; mode=collect; out=$(absolute "$2"); shift 2 ;;
        --task) [[ -n ${2:-} ]] || fail "--task needs the folder --slurm wrote" 2; mode=task; out=$2; shift 2 ;; # what an array task runs (OUT/task.sh)
        -h|--help) help; exit 0 ;;
        -*) fail "unknown option $1; $usage" 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[[ $mode == slurm || ${#slurm_only[@]} -eq 0 ]] || fail "${slurm_only[0]} goes with --slurm" 2

# A CSV field: quoted, quotes doubled (RFC 4180), and a leading ' where a spreadsheet would read a
# formula (a name that begins with =, +, -, @, a tab or a carriage return), as the labs' CSV does.
csv_field() {
    local text=${1//\"/\"\"}
    [[ $text == [=+@-]* || $text == $'\t'* || $text == $'\r'* ]] && text="'$text"
    printf '"%s"' "$text"
}

# A row for a submission without results: a dash per case, nothing passed, the case set ($4, else the
# one grading started with), the note; the lab's other columns after "passed" (time ratio, ...) empty,
# so that the row is as long as the header.
row_without_results() {
    local dashes after=() column rest=
    dashes=$(printf ',-%.0s' $(seq "$cases"))
    IFS=, read -r -a after <<<"${header##*,passed,}"
    [[ $header == *,passed,* ]] || after=("time ratio" "case set")
    for column in "${after[@]}"; do
        [[ $column == "case set" ]] && rest+=",${4:-$hash}" || rest+=","
    done
    printf '%s,%s%s,0/%s%s,%s\n' "$(csv_field "$1")" "$(csv_field "$2")" "$dashes" "$cases" "$rest" "$(csv_field "$3")"
}

# The student a submission is: its name without .cu (or .CU).
student_of() {
    local name
    name=$(basename "$1")
    printf '%s' "${name%.[cC][uU]}"
}

# Grades submission number $1 ($2) into $scratch/$1.row, on GPU $3 (a CUDA_VISIBLE_DEVICES value).
# A row graded on a case set other than $hash also leaves $scratch/$1.changed, the student's name
# (and sets changed to the row's note).
grade_one() {
    local index=$1 entry=$2 device=$3 student file output files=()
    student=$(student_of "$entry")
    if [[ -d $entry ]]; then
        mapfile -d '' files < <(find "$entry" -mindepth 1 -maxdepth 1 -iname '*.cu' ! -type d -print0 | LC_ALL=C sort -z)
        if [[ ${#files[@]} -gt 1 ]]; then
            local names=() each
            for each in "${files[@]}"; do names+=("$(basename "$each")"); done
            row_without_results "$student" "$entry" "several .cu files: $(printf '%s, ' "${names[@]}" | sed 's/, $//') (hand in one)" >"$scratch/$index.row"
            return
        fi
        file=${files[0]:-}
    else
        file=$entry
    fi
    if [[ $file != *.[cC][uU] || ! -f $file ]]; then
        row_without_results "$student" "$entry" "no .cu file" >"$scratch/$index.row"
        return
    fi
    output=$(CUDA_VISIBLE_DEVICES=$device "$lab_bin" --kernel-source "$file" "${week_args[@]}" "${case_args[@]}" "${sanitize[@]}" --check --time-limit "$limit" --csv 2>"$scratch/$index.err")
    local row got
    row=$(sed -n 2p <<<"$output")
    got=${row##*,}
    if [[ $(wc -l <<<"$output") -eq 2 && $output == file,* && $got =~ ^[0-9A-Za-z]+$ && $got != "$hash" ]]; then
        # The lab checked another case set than the one grading began with (a --cases file edited
        # meanwhile): its verdicts answer other columns, so none is kept.
        changed="case set changed during grading: $got, expected $hash"
        row_without_results "$student" "$file" "$changed" "$got" >"$scratch/$index.row"
        printf '%s' "$student" >"$scratch/$index.changed"
    elif [[ $(head -n 1 <<<"$output") == "$header" && $(wc -l <<<"$output") -eq 2 ]]; then
        printf '%s,%s,""\n' "$(csv_field "$student")" "$row" >"$scratch/$index.row"
    else
        local reason
        reason=$(grep -m 1 -E '(\): error|^lab-[a-z-]+: error: )' "$scratch/$index.err" || tail -n 1 "$scratch/$index.err")
        row_without_results "$student" "$file" "compile error or no result: ${reason:-no message}" >"$scratch/$index.row"
    fi
}

# The students (named in files $2... with the student's name) graded on another case set than
# $1's: one line on stderr, and the exit code 1.
case_set_changed() {
    local expected=$1 names=() marker
    shift
    for marker in "$@"; do
        [[ -f $marker ]] && names+=("$(cat "$marker")")
    done
    [[ ${#names[@]} -gt 0 ]] || return 0
    fail "the case set changed during grading (expected $expected) for ${#names[@]} of ${#entries[@]} students, not graded: $(printf '%s, ' "${names[@]}" | sed 's/, $//')"
}

# The lab of week $1 and its arguments: sets lab and week_args; fails (status 1) for no such week.
week_lab() {
    case $1 in
        01-simpson) lab=lab-simpson; week_args=() ;;
        02-mmm-ab) lab=lab-mmm; week_args=(--kernel naive) ;;
        03-mmm-tiled) lab=lab-mmm; week_args=(--kernel tiled) ;;
        04-constant-tracer) lab=lab-constant-tracer; week_args=() ;;
        07-dynamic-parallelism) lab=lab-dynamic-parallel; week_args=() ;;
        *) return 1 ;;
    esac
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
    week_lab "$week" || fail "no kernel week $week ($weeks)" 2
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
    [[ $cases =~ ^[0-9]+$ && $hash =~ ^[0-9A-Za-z]+$ ]] || fail "$lab_bin listed no cases: $listing"
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
    local total=${#entries[@]} index=0 entry i markers=()
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
            echo "grade.sh: graded $((index + 1)) of $total: $(student_of "$entry") ($((SECONDS - started)) s)" >&2
        } &
        slot_pids[slot]=$!
        index=$((index + 1))
    done
    wait
    for ((i = 0; i < index; i++)); do
        cat "$scratch/$i.row"
        markers+=("$scratch/$i.changed")
    done
    case_set_changed "$hash" "${markers[@]}"
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

# What a task asks of a node besides its GPU: CPUs and memory (--cpus and --mem win). A check runs
# nvcc once, then the lab and one case process at a time; compute-sanitizer adds its own bookkeeping
# on the host, the most with racecheck on week 3's largest cases. Estimates with room, not measured
# peaks.
task_needs() {
    local default_cpus=2 default_memory=8G
    if [[ ${#sanitize[@]} -gt 0 ]]; then
        default_memory=12G
        [[ $week == 03-mmm-tiled ]] && default_cpus=4 default_memory=16G
    fi
    cpus=${cpus:-$default_cpus} memory=${memory:-$default_memory}
}

# --slurm: OUT gets the settings every task reads (KEY=VALUE lines, read as data), the submissions
# (NUL-separated: names may hold any character), task.sh, an sbatch script whose array task N grades
# submission N into OUT/rows/N.row, and collect.sh, the job that makes OUT/grades.csv; then the array
# is submitted (and, with --collect-job, collect.sh after it).
submit_array() {
    out=$(absolute "${positional[2]}")
    if [[ -e $out && -n $(ls -A "$out" 2>/dev/null) ]]; then
        fail "${positional[2]} is not empty; --slurm writes a new folder (nothing is overwritten)" 2
    fi
    [[ ${#entries[@]} -gt 0 ]] || fail "${positional[1]} has no submissions" 2
    command -v sbatch >/dev/null || fail "--slurm needs Slurm's sbatch, and there is none here"
    local value
    for value in "$out" "$lab_bin" "${case_args[@]}" "$header"; do
        [[ $value != *$'\n'* ]] || fail "a path or the lab's header holds a line break; --slurm's settings cannot" 2
    done
    mkdir -p "$out/rows" "$out/logs" || fail "cannot make $out"
    [[ -n $minutes ]] || minutes=$((limit / 60 + 10))
    task_needs
    {
        echo "# grade.sh --slurm: what every task and --collect read, as data (KEY=VALUE, one a line; keys:"
        echo "# week, lab_bin, cases_file, sanitize, limit, header, cases, hash); never run."
        echo "week=$week"
        echo "lab_bin=$lab_bin"
        [[ ${#case_args[@]} -gt 0 ]] && echo "cases_file=${case_args[1]}"
        echo "sanitize=$([[ ${#sanitize[@]} -gt 0 ]] && echo yes || echo no)"
        echo "limit=$limit"
        echo "header=$header"
        echo "cases=$cases"
        echo "hash=$hash"
    } >"$out/settings"
    printf '%s\0' "${entries[@]}" >"$out/submissions"
    local option
    {
        echo '#!/usr/bin/env bash'
        echo "# One task of a grading array (grade.sh --slurm); run again for chosen tasks: sbatch --array=3,5 $(printf '%q' "$out/task.sh")"
        echo "# A task that Slurm gives no GPU (no --gres=gpu:1, a partition without GPUs) writes a row that says so and fails."
        echo "#SBATCH --job-name=grade-$week"
        echo "#SBATCH --gres=gpu:1"
        echo "#SBATCH --cpus-per-task=$cpus"
        echo "#SBATCH --mem=$memory"
        echo "#SBATCH --time=$minutes"
        echo "#SBATCH --output=$out/logs/%A_%a.log"
        for option in "${sbatch_args[@]}"; do echo "#SBATCH $option"; done
        printf 'exec bash %q --task %q\n' "$repository/assignments/grade.sh" "$out"
    } >"$out/task.sh"
    {
        echo '#!/usr/bin/env bash'
        echo "# The array's CSV into $out/grades.csv once its tasks have ended (grade.sh --slurm --collect-job"
        echo "# submits it with --dependency=afterany:<array job id>); after tasks are run again: sbatch $(printf '%q' "$out/collect.sh")"
        echo "#SBATCH --job-name=grade-$week-collect"
        echo "#SBATCH --cpus-per-task=1"
        echo "#SBATCH --mem=1G"
        echo "#SBATCH --time=10"
        echo "#SBATCH --output=$out/logs/collect-%j.log"
        for option in "${sbatch_args[@]}"; do echo "#SBATCH $option"; done
        printf 'bash %q --collect %q >%q\n' "$repository/assignments/grade.sh" "$out" "$out/grades.csv.tmp"
        echo 'status=$?'
        printf 'mv %q %q\n' "$out/grades.csv.tmp" "$out/grades.csv"
        echo 'exit "$status"'
    } >"$out/collect.sh"
    local job collector
    job=$(sbatch --parsable --array="0-$((${#entries[@]} - 1))" "$out/task.sh") || fail "sbatch refused the array (see above)"
    job=${job%%;*}
    echo "$job" >"$out/job"
    echo "grade.sh: submitted job array $job: ${#entries[@]} tasks, one GPU, $cpus CPUs and $memory each (week $week)"
    echo "follow it with: squeue -j $job"
    if [[ -n $collect_job ]]; then
        collector=$(sbatch --parsable --dependency="afterany:$job" "$out/collect.sh") || fail "sbatch refused the collect job (the array $job runs; collect by hand: bash assignments/grade.sh --collect $(printf '%q' "${positional[2]}") > grades.csv)"
        collector=${collector%%;*}
        echo "$collector" >"$out/collect-job"
        echo "then the collect job $collector writes $(printf '%q' "$out/grades.csv") (its log: $(printf '%q' "$out/logs/collect-$collector.log"))"
    else
        echo "then: bash assignments/grade.sh --collect $(printf '%q' "${positional[2]}") > grades.csv"
    fi
}

# Reads what --slurm wrote into OUT: the settings, as data (a line that is not KEY=VALUE with a key
# of the list and a value of its kind is an error), the submissions, and the array's job id.
read_array() {
    [[ -f $out/settings && -f $out/submissions ]] || fail "$out was not written by grade.sh --slurm" 2
    local line number=0 key value seen=" "
    week= lab_bin= case_args=() sanitize=() limit= header= cases= hash=
    while IFS= read -r line || [[ -n $line ]]; do
        number=$((number + 1))
        [[ -z $line || $line == '#'* ]] && continue
        key=${line%%=*} value=${line#*=}
        [[ $line == *=* && $seen != *" $key "* ]] || fail "$out/settings, line $number: not KEY=VALUE with a key of its own: $line"
        seen+="$key "
        case $key in
            week) week_lab "$value" && week=$value ;;
            lab_bin) [[ $value == /* ]] && lab_bin=$value ;;
            cases_file) [[ $value == /* ]] && case_args=(--cases "$value") ;;
            sanitize) [[ $value == yes ]] && sanitize=(--sanitize); [[ $value == yes || $value == no ]] ;;
            limit) [[ $value =~ ^[1-9][0-9]*$ ]] && limit=$value ;;
            header) [[ -n $value ]] && header=$value ;;
            cases) [[ $value =~ ^[0-9]+$ ]] && cases=$value ;;
            hash) [[ $value =~ ^[0-9A-Za-z]+$ ]] && hash=$value ;;
            *) fail "$out/settings, line $number: unknown key '$key' (week, lab_bin, cases_file, sanitize, limit, header, cases, hash)" ;;
        esac || fail "$out/settings, line $number: '$value' is no value for $key"
    done <"$out/settings"
    for key in week lab_bin sanitize limit header cases hash; do
        [[ $seen == *" $key "* ]] || fail "$out/settings has no $key"
    done
    mapfile -d '' entries <"$out/submissions"
    job=$(cat "$out/job" 2>/dev/null)
    [[ $job =~ ^[0-9]*$ ]] || fail "$out/job is not a job id: $job"
}

# Whether $1 names a GPU: GPU numbers or UUIDs, not empty, NoDevFiles or -1 (Slurm and CUDA's "none").
names_gpu() {
    [[ $1 =~ ^([0-9]+|GPU-[0-9A-Za-z-]+|MIG-[^,]+)(,.*)?$ ]]
}

# --task: one array task, on the GPU Slurm gave it, its row written whole or not at all. Without a
# GPU (no --gres=gpu:1 in the script, or a partition without GPUs) the row says so and the task fails:
# it never grades on whatever GPU 0 is.
run_task() {
    read_array
    local index=${SLURM_ARRAY_TASK_ID:-} device= changed=
    [[ $index =~ ^[0-9]+$ && $index -lt ${#entries[@]} ]] || fail "grade.sh --task runs as a task of the array --slurm submitted (SLURM_ARRAY_TASK_ID ${index:-unset}, ${#entries[@]} submissions)"
    rm -f "$out/rows/$index.no-gpu" "$out/rows/$index.changed"
    if names_gpu "${CUDA_VISIBLE_DEVICES:-}"; then
        device=$CUDA_VISIBLE_DEVICES
    elif names_gpu "${SLURM_STEP_GPUS:-}"; then
        device=$SLURM_STEP_GPUS
    elif names_gpu "${SLURM_JOB_GPUS:-}"; then
        device=$SLURM_JOB_GPUS
    fi
    if [[ -z $device ]]; then
        local why="no GPU was given to this task (check --gres=gpu:1 and the partition)"
        row_without_results "$(student_of "${entries[index]}")" "${entries[index]}" "$why" >"$scratch/$index.row"
        echo "grade.sh: $why" >"$scratch/$index.err"
        cp "$scratch/$index.err" "$out/rows/$index.no-gpu"
    else
        grade_one "$index" "${entries[index]}" "$device"
        [[ -f $scratch/$index.changed ]] && cp "$scratch/$index.changed" "$out/rows/$index.changed"
    fi
    cp "$scratch/$index.err" "$out/rows/$index.err" 2>/dev/null
    mv "$scratch/$index.row" "$out/rows/$index.tmp" && mv "$out/rows/$index.tmp" "$out/rows/$index.row"
    [[ -z $device ]] && fail "$why"
    [[ -z $changed ]] || fail "$changed"
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
# word on them, and stderr lists those and the tasks that got no GPU, with the command that runs them
# again; rows graded on another case set end it with one line naming the students, and exit code 1.
collect() {
    read_array
    local missing=() no_gpu=() markers=() index student
    echo "student,$header,note"
    for index in "${!entries[@]}"; do
        if [[ -f $out/rows/$index.row ]]; then
            cat "$out/rows/$index.row"
            [[ -f $out/rows/$index.no-gpu ]] && no_gpu+=("$index")
        else
            student=$(student_of "${entries[index]}")
            row_without_results "$student" "${entries[index]}" "no result from array task $index: $(task_state "$index" "$job")"
            missing+=("$index")
        fi
        markers+=("$out/rows/$index.changed")
    done
    if [[ $((${#missing[@]} + ${#no_gpu[@]})) -gt 0 ]]; then
        local list what=()
        list=$(printf '%s\n' "${missing[@]}" "${no_gpu[@]}" | grep . | sort -n | paste -s -d ,)
        [[ ${#missing[@]} -gt 0 ]] && what+=("no row: $(IFS=,; echo "${missing[*]}")")
        [[ ${#no_gpu[@]} -gt 0 ]] && what+=("no GPU: $(IFS=,; echo "${no_gpu[*]}")")
        echo "grade.sh: $((${#missing[@]} + ${#no_gpu[@]})) of ${#entries[@]} tasks have no grades ($(printf '%s; ' "${what[@]}")their logs: $out/logs/${job:-JOB}_N.log); to run only those again: sbatch --array=$list $(printf '%q' "$out/task.sh")" >&2
    fi
    case_set_changed "$hash" "${markers[@]}"
}

scratch=$(mktemp -d) || fail "cannot make a private folder"
trap 'rm -rf "$scratch"' EXIT
case $mode in
    local) set_up_week 2 && grade_here ;;
    slurm) set_up_week 3 && submit_array ;;
    task) run_task ;;
    collect) [[ ${#positional[@]} -eq 0 ]] || fail "$usage" 2; collect ;;
esac
