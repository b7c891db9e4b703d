#!/usr/bin/env bash
# Grades a folder of submissions for one week into CSV on stdout:
#
#   bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] [--weights FILE] [--ids FILE] [--keep DIR] [--feedback DIR [--feedback-hide-cases] [--earlier DIR]] WEEK SUBMISSIONS > grades.csv
#   bash assignments/grade.sh --dry-run [...] WEEK SUBMISSIONS > compiles.csv    (no GPU needed: compile, static rules)
#
# or, on a Slurm cluster, as one job array (one task and one GPU per submission), then its CSV:
#
#   bash assignments/grade.sh --slurm [--partition P] [--account A] [--time MINUTES] [--cpus N] [--mem SIZE] [--collect-job] [--sanitize] [--cases FILE] [--limit SECONDS] [--weights FILE] [--ids FILE] WEEK SUBMISSIONS OUT
#   bash assignments/grade.sh --collect OUT [--weights FILE] [--ids FILE] > grades.csv
#
# WEEK: 01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism (a kernel is
# handed in: the lab runs it with --kernel-source), or 05-streams (pipeline.cu), 05-mmm-streamed,
# 06-pinned-mapped (zero_copy.cu), 06-mmm-streamed-and-pinned (a whole program: --program-source; its
# trace is judged too; no --sanitize and no --feedback for these yet).
# A submission is SUBMISSIONS/<student>.cu or a folder SUBMISSIONS/<student>/ with one .cu file
# (.CU too) anywhere in it (src/mmm.cu: the note says which file was graded; hidden files and
# folders and __MACOSX/ are skipped); a folder with several .cu files is not graded ("several .cu
# files: a.cu, src/b.cu (hand in one)"), unless in a program week exactly one of them is named as
# the week's starter (mmm_streamed.cu: a folder may hold both programs of week 5); nor is an empty
# SUBMISSIONS (one line, exit code 2). Each runs through the week's lab with --kernel-source (or --program-source) FILE --check --csv. The CSV
# has a row per student:
#
#   student, file     the name (without .cu) and the file graded; bytes that are not UTF-8, and
#                     control characters (a line break), are written \xNN
#   the lab's columns each case's and rule's PASS / FAIL / FAULT (MACHINE: the machine failed it),
#                     how many passed, the geometric mean of the student's time over ours (cases
#                     that passed), flags for a teacher, the hash of the case set
#   note              a compile error's first line, why there is no result, which file of a folder
#                     was graded, "machine: ..." for a row the machine could not grade, ...; its
#                     paths relative to SUBMISSIONS, never the grading machine's folders
#   score             0 to 100: the cases passed, and the rules passed times the share of the
#                     cases passed (rules alone earn nothing), weighted as --weights says (all alike
#                     without it); empty where the row was not graded (the machine, a case set
#                     changed, a Slurm task without a row, --dry-run); 0 for a compile error
#   student id        only with --ids: the id the file gives the submission
#
# Before any submission (not with --dry-run; with --slurm as a job the array waits for), our own
# solution of the week (kernels/cuda/ or reference/weeks/) runs the same check on the same cases,
# with --sanitize where it is given: a case of a --cases file it fails is refused in one line naming
# the case or rule (exit code 2, nothing graded; drop the case), and our solution failing the week's
# own cases, or not running, is the machine's (exit code 3, nothing graded). A rule column `-`
# (judged on no case: one stream cannot overlap, a case too small for it) is left out of the score,
# its weight too.
#
# A grade comes only from the lab: each lab gets this run's random key on stdin and ends its output
# with a closing mark over its row, exit code and error line, which the lab checks; a run without a
# valid mark (a lab killed by a signal, a line that is not the lab's) is not graded (machine).
#
# Fields are quoted as RFC 4180 says; every row is as long as the header, which is always printed.
# Every row's case set must be the one grading started with (a --cases file edited meanwhile): a
# row graded on another has no verdicts and the note "case set changed during grading: HASH,
# expected HASH". A case the lab could not run because of the machine (no GPU, a driver too old, out
# of GPU memory, no compute-sanitizer: the lab's verdict MACHINE, or its exit code 3) is never the
# student's failure: the row's note begins "machine: ", its score is empty, and stderr names the
# students (or "every submission") to grade again elsewhere. Exit code: 0 when every submission was
# graded (whatever its grades), 3 when the machine failed some, else 1 when some were not graded
# (case set changed, Slurm tasks failed or without a row), else 4 when Slurm tasks are still pending
# or running (--collect again later); 2 for bad arguments; each with a line on stderr that says why.
#
#   --jobs N      grade N submissions at once, each on its own GPU where there are several
#                 (those CUDA_VISIBLE_DEVICES names, else all nvidia-smi lists; more jobs than GPUs
#                 share them in turn); the CSV is the same, in the same order, as with one job
#   --sanitize    run every case under compute-sanitizer (lab --check --sanitize; slow)
#   --cases FILE  the cases in FILE instead of the week's (hidden cases; see the week's README)
#   --limit SECONDS  a submission's --check stops after this (the lab's --time-limit; default 600,
#                 3600 with --sanitize): the case running then and those after it are FAULTs
#   --weights FILE  how much each case and rule counts in the score: lines "NAME WEIGHT", NAME a
#                 column of the header as the lab names it ("mmm f64, 1 x 1 times 1 x 1"), a rule's
#                 name before its ": " (tiles; "tiling, measured" weighs its three columns), or * (every
#                 column no other line names); WEIGHT a number >= 0; '#' lines are comments. A column
#                 the file does not name weighs 1; a name that is no column is an error naming its line
#   --ids FILE    add the column "student id": lines "FILE_OR_FOLDER_NAME,STUDENT_ID" (alice.cu,s123;
#                 the name without .cu, or written with \xNN, does too; "Doe, Jane.cu",s9 as CSV
#                 quotes it); stderr names the submissions without an id and the lines that name none
#   --keep DIR    keep each submission's whole --check output (stderr and the CSV) as
#                 DIR/<file or folder name>.txt; DIR must be new or empty. Without --keep the outputs
#                 go beside the CSV when stdout is a file (grades.csv: grades-checks/, or
#                 grades-checks-2/ ... where that has files: nothing is overwritten), and stderr
#                 says where; with --slurm into OUT/checks/
#   --feedback DIR  also write what a teacher hands back into DIR (new or empty): a page per
#                 student (DIR/NNN-<student>.md and .html: every rule and case with its verdict, the
#                 first wrong element and who computed it, the time against ours, what
#                 compute-sanitizer and the guard zones found, what failing cases printed, nvcc's
#                 messages), and the class page DIR/index.html (each check's pass rate, the time
#                 ratios, who to look at, findings by kind, every student); the CSV gets the column
#                 "most like": the submission or file of ours (solution, broken kernels) most alike,
#                 where one is too alike (the feedback crate says how; the template's code is not
#                 counted). DIR/runs keeps what the pages are made from (each run's details, output
#                 and file): `feedback pages --runs DIR/runs ...` makes them again. Local runs only
#   --feedback-hide-cases  with --feedback: the students' pages show only the cases' verdicts (no
#                 sizes, values or output of hidden cases)
#   --earlier DIR  with --feedback: also compare each submission with every .cu file in DIR and its
#                 subfolders (earlier years' submissions of the week); "most like" may name one of
#                 them ("earlier DIR/..."), and the class page lists them. Repeat it for more folders
#   --dry-run     no GPU: each submission only compiled and its static rules judged (the lab's
#                 --check --dry-run): every case and measured rule is "-", no score; seconds a
#                 submission, on any machine with nvcc. Without it a local run needs a GPU
#                 (nvidia-smi lists one, or CUDA_VISIBLE_DEVICES names one), checked before the labs
#                 are built
#   --slurm       submit (sbatch) one array task per submission, each with one GPU (--gres=gpu:1),
#                 into the folder OUT (new or empty): the task script (OUT/task.sh, with its #SBATCH
#                 lines), the settings (KEY=VALUE lines, read as data), the collect script
#                 (OUT/collect.sh), a row per task in OUT/rows, each --check's output in OUT/checks,
#                 --weights and --ids as OUT/weights and OUT/ids, and Slurm's logs in
#                 OUT/logs/<array job id>_<task>.log; prints the job id. The array waits for a job
#                 of its own (OUT/canary.sh, log OUT/logs/canary-<job id>.log) that runs our solution
#                 on the cases first; if that fails, Slurm cancels the array and --collect says why
#                 in one line (exit code 2 or 3, as a local run). If sbatch refuses either job, OUT
#                 is removed again (the same command can run again). A task that Slurm gave no
#                 GPU writes the row "no GPU was given to this task (...)" and fails.
#   --partition P, --account A  for sbatch (else SBATCH_PARTITION, SBATCH_ACCOUNT as sbatch reads them)
#   --time MINUTES  each task's time limit (default: the --limit and 10 minutes more)
#   --cpus N, --mem SIZE  each task's --cpus-per-task and --mem (SIZE as sbatch takes it: 8G, 500M);
#                 by default 2 CPUs and 8G, with --sanitize 2 and 12G, week 03 with --sanitize 4 and 16G
#   --collect-job with --slurm: also submit OUT/collect.sh as a job that waits for the array
#                 (--dependency=afterany:<array job id>) and writes the CSV into OUT/grades.csv
#   --collect OUT the CSV of an array, the same as a local run's (with OUT/weights and OUT/ids unless
#                 --weights or --ids is given); a task without a row gets one with Slurm's state and
#                 reason; stderr names the tasks still pending or running (collect again later) and,
#                 apart, those that failed or that the machine failed, with how to run them again
#   --task OUT    what one array task runs (OUT/task.sh calls it; not for use by hand)
#   --canary OUT  the check of our solution the array waits for (OUT/canary.sh calls it; not by hand)
#   -h, --help    this text
#
# Folders and files are taken from where this is called. Grading needs a GPU (on the cluster: the
# nodes do), --dry-run does not. The labs come from LAB_BIN_DIR (a folder with the lab binaries,
# e.g. gpu-bundle/bin, which bash scripts/gpu-bundle.sh builds) or else from `cargo build --release`.
set -uo pipefail

weeks="01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 05-streams, 05-mmm-streamed, 06-pinned-mapped, 06-mmm-streamed-and-pinned, 07-dynamic-parallelism"
usage="usage: bash assignments/grade.sh [--jobs N] [--sanitize] [--cases FILE] [--limit SECONDS] [--weights FILE] [--ids FILE] [--keep DIR] [--feedback DIR [--feedback-hide-cases] [--earlier DIR]] [--dry-run] WEEK SUBMISSIONS | --slurm [--partition P] [--account A] [--time MINUTES] [--cpus N] [--mem SIZE] [--collect-job] [...] WEEK SUBMISSIONS OUT | --collect OUT [--weights FILE] [--ids FILE]  (WEEK: $weeks; --help for more)"
caller=$(pwd)
repository=$(cd "$(dirname "$0")/.." && pwd)
absolute() { [[ $1 == /* ]] && printf '%s' "$1" || printf '%s/%s' "$caller" "$1"; }
fail() { echo "grade.sh: $1" >&2; exit "${2:-1}"; }
# Whether folder $1 may take what grade.sh writes: not there yet, or empty (nothing is overwritten).
new_or_empty() { [[ ! -e $1 || -d $1 && -z $(ls -A "$1" 2>/dev/null) ]]; }
# --help: the comment at the top of this file.
help() { sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

jobs=1 sanitize=() case_args=() positional=() limit= mode=local sbatch_args=() minutes= cpus= memory= collect_job= slurm_only=()
dry= weights_file= ids_file= keep_dir= local_only=() feedback_dir= hide_cases= earlier=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--jobs needs a whole number of at least 1, not '${2:-}'" 2; jobs=$2; shift 2 ;;
        --sanitize) sanitize=(--sanitize); shift ;;
        --limit) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--limit needs a whole number of seconds, not '${2:-}'" 2; limit=$2; shift 2 ;;
        --cases) [[ -f ${2:-} ]] || fail "--cases: '${2:-}' is not a file" 2; case_args=(--cases "$(absolute "$2")"); shift 2 ;;
        --weights) [[ -f ${2:-} ]] || fail "--weights: '${2:-}' is not a file" 2; weights_file=$(absolute "$2"); shift 2 ;;
        --ids) [[ -f ${2:-} ]] || fail "--ids: '${2:-}' is not a file" 2; ids_file=$(absolute "$2"); shift 2 ;;
        --keep) [[ -n ${2:-} ]] || fail "--keep needs a folder (new or empty)" 2; keep_dir=$(absolute "$2"); local_only+=("$1"); shift 2 ;;
        --feedback) [[ -n ${2:-} ]] || fail "--feedback needs a folder (new or empty)" 2; feedback_dir=$(absolute "$2"); local_only+=("$1"); shift 2 ;;
        --feedback-hide-cases) hide_cases=yes; shift ;;
        --earlier) [[ -d ${2:-} ]] || fail "--earlier: '${2:-}' is not a folder" 2; earlier+=(--earlier "$(absolute "$2")"); shift 2 ;;
        --dry-run) dry=yes; local_only+=("$1"); shift ;;
        --slurm) mode=slurm; shift ;;
        --partition|--account) [[ -n ${2:-} && ${2:-} != *[[:space:]]* ]] || fail "$1 needs a value (without spaces)" 2; sbatch_args+=("$1=$2"); slurm_only+=("$1"); shift 2 ;;
        --time) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--time needs a whole number of minutes, not '${2:-}'" 2; minutes=$2; slurm_only+=("$1"); shift 2 ;;
        --cpus) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || fail "--cpus needs a whole number of at least 1, not '${2:-}'" 2; cpus=$2; slurm_only+=("$1"); shift 2 ;;
        --mem) [[ ${2:-} =~ ^[1-9][0-9]*[KMGT]?$ ]] || fail "--mem needs a size as sbatch takes it (8G, 500M), not '${2:-}'" 2; memory=$2; slurm_only+=("$1"); shift 2 ;;
        --collect-job) collect_job=yes; slurm_only+=("$1"); shift ;;
        --collect) [[ -n ${2:-} ]] || fail "--collect needs the folder --slurm wrote" 2; mode=collect; out=$(absolute "$2"); shift 2 ;;
        --task) [[ -n ${2:-} ]] || fail "--task needs the folder --slurm wrote" 2; mode=task; out=$2; shift 2 ;; # what an array task runs (OUT/task.sh calls it)
        --canary) [[ -n ${2:-} ]] || fail "--canary needs the folder --slurm wrote" 2; mode=canary; out=$2; shift 2 ;; # the job the array waits for (OUT/canary.sh calls it)
        -h|--help) help; exit 0 ;;
        -*) fail "unknown option $1; $usage" 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[[ $mode == slurm || ${#slurm_only[@]} -eq 0 ]] || fail "${slurm_only[0]} goes with --slurm" 2
[[ $mode == local || ${#local_only[@]} -eq 0 ]] || fail "${local_only[0]} goes with a local run, not --${mode}" 2
[[ -z $dry || ${#sanitize[@]} -eq 0 ]] || fail "--dry-run runs no case, so --sanitize has nothing to run under compute-sanitizer" 2
[[ -z $dry || -z $feedback_dir ]] || fail "--dry-run runs no case, so --feedback would have nothing to show; grade on a GPU for it" 2
[[ -z $hide_cases || -n $feedback_dir ]] || fail "--feedback-hide-cases goes with --feedback DIR" 2
[[ ${#earlier[@]} -eq 0 || -n $feedback_dir ]] || fail "--earlier goes with --feedback DIR" 2
if [[ -n $feedback_dir ]]; then
    new_or_empty "$feedback_dir" || fail "--feedback: $feedback_dir is not a new or empty folder (nothing is overwritten)" 2
    runs_dir=$feedback_dir/runs
fi

# $1 as text that any CSV reader takes: bytes that are not UTF-8, and control characters (a line
# break, a tab), as \xNN; the rest as it is.
escaped() {
    local LC_ALL=C
    local text=$1 result= i=0 length byte need lowest highest j next
    if [[ $text != *[![:print:]]* ]]; then
        printf '%s' "$text"
        return
    fi
    length=${#text}
    while ((i < length)); do
        printf -v byte '%d' "'${text:i:1}"
        ((byte < 0)) && byte=$((byte + 256))
        need=0 lowest=128 highest=191
        if ((byte >= 32 && byte < 127)); then
            result+=${text:i:1}
            i=$((i + 1))
            continue
        elif ((byte >= 0xc2 && byte <= 0xdf)); then need=1
        elif ((byte >= 0xe0 && byte <= 0xef)); then need=2
            ((byte == 0xe0)) && lowest=0xa0
            ((byte == 0xed)) && highest=0x9f
        elif ((byte >= 0xf0 && byte <= 0xf4)); then need=3
            ((byte == 0xf0)) && lowest=0x90
            ((byte == 0xf4)) && highest=0x8f
        fi
        # A whole UTF-8 sequence stays as it is; anything else is one escaped byte.
        for ((j = 1; j <= need; j++)); do
            ((i + j < length)) || { need=0; break; }
            printf -v next '%d' "'${text:i+j:1}"
            ((next < 0)) && next=$((next + 256))
            if ((j == 1 && (next < lowest || next > highest))) || ((j > 1 && (next < 128 || next > 191))); then
                need=0
                break
            fi
        done
        if ((need > 0)); then
            result+=${text:i:need+1}
            i=$((i + need + 1))
        else
            printf -v next '\\x%02x' "$byte"
            result+=$next
            i=$((i + 1))
        fi
    done
    printf '%s' "$result"
}

# A CSV field: escaped as above, quoted, quotes doubled (RFC 4180), and a leading ' where a
# spreadsheet would read a formula (a name that begins with =, +, -, @, a tab or a carriage return),
# as the labs' CSV does.
csv_field() {
    local text
    text=$(escaped "$1")
    text=${text//\"/\"\"}
    [[ $text == [=+@-]* || $text == $'\t'* || $text == $'\r'* ]] && text="'$text"
    printf '"%s"' "$text"
}

# A field as it was or, where it needs quotes, as csv_field writes it (verdicts, counts, hashes stay bare).
csv_value() {
    if [[ $1 =~ ^[A-Za-z0-9._/-]*$ ]]; then printf '%s' "$1"; else csv_field "$1"; fi
}

# Splits the CSV record $1 (RFC 4180; quoted fields may hold line breaks) into the array fields;
# fails where $1 is not one record.
split_csv() {
    local LC_ALL=C
    local line=$1 field pattern='^("(([^"]|"")*)"|([^,"]*))(,|$)'
    fields=()
    while true; do
        [[ $line =~ $pattern ]] || return 1
        if [[ ${BASH_REMATCH[1]} == \"* ]]; then
            field=${BASH_REMATCH[2]}
            fields+=("${field//\"\"/\"}")
        else
            [[ ${BASH_REMATCH[4]} != *$'\n'* ]] || return 1
            fields+=("${BASH_REMATCH[4]}")
        fi
        line=${line:${#BASH_REMATCH[0]}}
        if [[ -z ${BASH_REMATCH[5]} ]]; then
            [[ -z $line ]]
            return
        fi
    done
}

# The lab's CSV header ($header, from --list-cases --csv) in parts: lab_names (its columns, "file"
# first), verdict names (the cases and rules, after "file"), the index of "case set", whether the lab
# has a note column of its own, and out_header (the lab's columns as grade.sh writes them: its note,
# if any, becomes grade.sh's note).
parse_header() {
    local i
    split_csv "$header" || fail "the lab's CSV header is not CSV: $header"
    lab_names=("${fields[@]}")
    [[ ${lab_names[0]} == file && ${#lab_names[@]} -gt $((cases + 1)) ]] || fail "the lab's CSV header does not begin with file and its $cases cases: $header"
    verdict_names=("${lab_names[@]:1:cases}")
    case_set_at= lab_note_at=
    for i in "${!lab_names[@]}"; do
        [[ ${lab_names[i]} == "case set" ]] && case_set_at=$i
        [[ ${lab_names[i]} == note ]] && lab_note_at=$i
    done
    [[ -n $case_set_at ]] || fail "the lab's CSV header has no case set column: $header"
    out_header=$header
    if [[ -n $lab_note_at ]]; then
        # grade.sh's note takes the lab's in: the header without it, the lab's quoting kept.
        if [[ $header == *,note || $header == *,\"note\" ]]; then
            out_header=${header%,*}
        else
            out_header=
            for i in "${!lab_names[@]}"; do
                [[ $i == "$lab_note_at" ]] && continue
                [[ ${lab_names[i]} =~ ^[A-Za-z\ ]*$ ]] && out_header+=",${lab_names[i]}" || out_header+=",$(csv_field "${lab_names[i]}")"
            done
            out_header=${out_header#,}
        fi
    fi
    return 0
}

# The student a submission is: its name without .cu (or .CU), as it is (csv_field escapes it).
student_of() {
    local name
    name=$(basename "$1")
    printf '%s' "${name%.[cC][uU]}"
}

# $2... joined by $1.
join() {
    local separator=$1 text=
    shift
    [[ $# -gt 0 ]] || return 0
    text=$(printf "%s$separator" "$@")
    printf '%s' "${text%"$separator"}"
}

# A row without the lab's results for student $1, file $2 and note $3: a dash per case and rule,
# nothing passed, the case set ($4, else the one grading started with), the lab's other columns
# empty, so that the row is as long as the header.
row_without_results() {
    local values=() i
    for ((i = 1; i < ${#lab_names[@]}; i++)); do
        [[ $i == "${lab_note_at:-}" ]] && continue
        if ((i <= cases)); then values+=(-)
        elif [[ ${lab_names[i]} == passed ]]; then values+=("0/$cases")
        elif [[ ${lab_names[i]} == "case set" ]]; then values+=("${4:-$hash}")
        else values+=("")
        fi
    done
    write_row "$1" "$2" "$3" "${values[@]}"
}

# A row: student $1, file $2, the lab's columns ($4...), note $3 (without score and id: added as the
# CSV is put together).
write_row() {
    local student=$1 file=$2 note=$3 value line
    shift 3
    # Paths in a note are the student's, relative to SUBMISSIONS: nothing of the grading machine's
    # folders (issue 60; the notes reach the feedback pages).
    [[ -z ${submissions:-} ]] || note=${note//"$submissions/"/}
    line="$(csv_field "$student"),$(csv_field "$file")"
    for value in "$@"; do line+=",$(csv_value "$value")"; done
    printf '%s,%s\n' "$line" "$(csv_field "$note")"
}

# Submission $1 ($2) has no result from the lab: its row (state $3, note $4) and what is kept of it.
no_result() {
    local index=$1 entry=$2
    row_without_results "$(student_of "$entry")" "$entry" "$4" >"$scratch/$index.row"
    echo "$3" >"$scratch/$index.state"
    printf '# grade.sh: %s\n# not run: %s\n' "$(escaped "$entry")" "$(escaped "$4")" >"$scratch/$index.out"
}

# Why the machine failed the lab, from the message of its error line as its closing mark gives it
# ($1; see grade_one): "machine: ..." (the labs' contract), else nothing. Never from stderr as such:
# what nvcc quotes from the student's file (a `#warning machine: ...`), or a line a submission's
# process wrote, is not the lab's; nor from words inside the message (a file the student named "the
# cases need a GPU.cu" is named in its compile error).
machine_reason() {
    [[ $1 == "machine: "* ]] && printf '%s' "$1"
}

# The row of submission $1 (student $2, file $3) whose lab refused grade.sh's arguments (exit code 2):
# nobody's fault but grade.sh's and the lab's, never graded; its reason the lab's message $4, else the
# first line it printed on stderr.
refused_row() {
    local why=${4:-$(grep -m 1 . "$scratch/$1.err" || echo no message)}
    row_without_results "$2" "$3" "not graded: the lab refused grade.sh's arguments (exit code 2; a lab older or newer than grade.sh?): $why" >"$scratch/$1.row"
    echo refused >"$scratch/$1.state"
}

# Grades submission number $1 ($2) into $scratch/$1.row (without score and id), on GPU $3 (a
# CUDA_VISIBLE_DEVICES value; none with --dry-run); $scratch/$1.state says how it went: graded,
# nothing (no result: the student's), changed (another case set), machine (the machine failed it),
# dry-pass or dry-fail; $scratch/$1.out is what is kept of the lab's output.
grade_one() {
    local index=$1 entry=$2 device=$3 student file files=() where= output status
    student=$(student_of "$entry")
    [[ -n $feedback_dir ]] && escaped "$student" >"$runs_dir/$index.name"
    if [[ -d $entry ]]; then
        # Every .cu file in the folder, at any depth; hidden ones and macOS's __MACOSX/ copies are not hers.
        mapfile -d '' files < <(find "$entry" -mindepth 1 \( -name '.*' -o -name __MACOSX \) -prune -o -iname '*.cu' ! -type d -print0 | LC_ALL=C sort -z)
        # A program week's folder may hold both of the week's programs: its file is the one named
        # like the starter (mmm_streamed.cu), at any depth, if there is exactly one such.
        if [[ ${#files[@]} -gt 1 && -n $program_file ]]; then
            local named=() each
            for each in "${files[@]}"; do [[ ${each##*/} == "$program_file" ]] && named+=("$each"); done
            [[ ${#named[@]} -eq 1 ]] && { files=("${named[@]}"); where="graded ${named[0]#"$entry"/}, the folder's $program_file"; }
        fi
        if [[ ${#files[@]} -gt 1 ]]; then
            local names=() each
            for each in "${files[@]}"; do names+=("${each#"$entry"/}"); done
            no_result "$index" "$entry" nothing "several .cu files: $(join ', ' "${names[@]}") (hand in one${program_file:+, or one named $program_file})"
            return
        fi
        file=${files[0]:-}
        [[ -z $where && $file == "$entry"/*/* ]] && where="graded ${file#"$entry"/}, the folder's only .cu file"
    else
        file=$entry
    fi
    # A link is graded as nothing: it could point at any file of the machine that grades, ours too.
    if [[ -L $entry || -L $file ]]; then
        no_result "$index" "$entry" nothing "a link, not a file (hand in the .cu file itself)"
        return
    fi
    if [[ $file != *.[cC][uU] || ! -f $file ]]; then
        no_result "$index" "$entry" nothing "no .cu file"
        return
    fi
    local run=("$lab_bin" "$source_flag" "$file" "${week_args[@]}" "${case_args[@]}")
    if [[ -n $feedback_dir ]]; then
        cp -- "$file" "$runs_dir/$index.cu"
        run+=(--details "$runs_dir/$index.json")
    fi
    # The lab reads this run's key from stdin and ends stdout with its closing mark (issue 60).
    if [[ -n $dry ]]; then
        run+=(--check --dry-run --csv --mark)
        output=$(printf '%s\n' "$mark_key" | "${run[@]}" 2>"$scratch/$index.err")
    else
        run+=("${sanitize[@]}" --check --time-limit "$limit" --csv --mark)
        output=$(printf '%s\n' "$mark_key" | CUDA_VISIBLE_DEVICES=$device "${run[@]}" 2>"$scratch/$index.err")
    fi
    status=$?
    {
        printf '# grade.sh: %s (exit code %s)\n# stderr:\n' "$(escaped "$(printf '%q ' "${run[@]}")")" "$status"
        cat "$scratch/$index.err"
        printf '# stdout:\n%s\n' "$output"
    } >"$scratch/$index.out"
    # A grade comes only from the lab (issue 60): its row, exit code and error line count only where
    # its closing mark holds (the lab checks it, with this run's key). Without one (a lab killed by a
    # signal, a line printed by anything else), nothing is graded; a lab that refused the arguments
    # (exit code 2, an older lab than grade.sh) marks nothing and grades nobody either.
    local message
    if ! message=$(printf '%s\n%s\n%s\n' "$mark_key" "$status" "$output" | "$lab_bin" --verify-mark 2>"$scratch/$index.mark"); then
        if [[ $status == 2 ]]; then
            refused_row "$index" "$student" "$file" ""
        else
            row_without_results "$student" "$file" "$(join '; ' "machine: $(head -n 1 "$scratch/$index.mark") (exit code $status: a lab killed by a signal, or a line that is not the lab's; not graded, grade again where it works)" ${where:+"$where"})" >"$scratch/$index.row"
            echo machine >"$scratch/$index.state"
        fi
        return 0
    fi
    if [[ $output == '#mark '* ]]; then output=; else output=${output%$'\n#mark '*}; fi
    # The lab's CSV: its header and one row, with the case set and as many fields as the header.
    local their_header= body= got= row_ok= at= i values=() lab_note=
    if [[ $output == *$'\n'* ]]; then
        their_header=${output%%$'\n'*} body=${output#*$'\n'}
        if split_csv "$their_header" && [[ ${fields[0]} == file ]]; then
            local count=${#fields[@]}
            for i in "${!fields[@]}"; do [[ ${fields[i]} == "case set" ]] && at=$i; done
            if [[ -n $at ]] && split_csv "$body" && [[ ${#fields[@]} == "$count" && ${fields[at]} =~ ^[0-9A-Za-z]+$ ]]; then
                got=${fields[at]} row_ok=yes
            fi
        fi
    fi
    local note reason
    if [[ -n $row_ok && $got != "$hash" ]]; then
        # The lab checked another case set than the one grading began with (a --cases file edited
        # meanwhile): its verdicts answer other columns, so none is kept.
        changed="case set changed during grading: $got, expected $hash"
        row_without_results "$student" "$file" "$changed" "$got" >"$scratch/$index.row"
        echo changed >"$scratch/$index.state"
    elif [[ -n $row_ok && $their_header == "$header" ]]; then
        local machine=0
        for ((i = 1; i < ${#fields[@]}; i++)); do
            if [[ $i == "${lab_note_at:-}" ]]; then lab_note=${fields[i]}; else values+=("${fields[i]}"); fi
            ((i <= cases)) && [[ ${fields[i]} == MACHINE ]] && machine=$((machine + 1))
        done
        if ((machine > 0 || status == 3)); then
            reason=$lab_note
            if [[ $reason == "machine: "* ]]; then lab_note=; else reason=$(machine_reason "$message"); fi
            note="${reason:-machine: the lab could not run here (exit code $status)} ($machine of $cases cases could not run on this machine: not graded, grade again where it works)"
            echo machine >"$scratch/$index.state"
        elif [[ -n $dry ]]; then
            # The lab's note says what a dry run did (or the compile error); an older one's says nothing.
            [[ -n $lab_note ]] && note= || note="dry run: no GPU used"
            [[ $status == 0 ]] && echo dry-pass >"$scratch/$index.state" || echo dry-fail >"$scratch/$index.state"
        else
            note=
            echo graded >"$scratch/$index.state"
        fi
        note=$(join '; ' ${note:+"$note"} ${where:+"$where"} ${lab_note:+"$lab_note"})
        write_row "$student" "$file" "$note" "${values[@]}" >"$scratch/$index.row"
    else
        reason=$(machine_reason "$message")
        if [[ $status == 2 ]]; then
            # The lab's word for arguments it does not take: grade.sh's and the lab's fault, not hers.
            refused_row "$index" "$student" "$file" "$message"
        elif [[ $status == 3 || -n $reason ]]; then
            [[ -n $reason ]] || reason="machine: the lab could not run here (exit code 3): $message"
            row_without_results "$student" "$file" "$(join '; ' "$reason (not graded, grade again where it works)" ${where:+"$where"})" >"$scratch/$index.row"
            echo machine >"$scratch/$index.state"
        else
            # nvcc's first error names the line; else the lab's own message.
            reason=$(grep -m 1 -E '\): error' "$scratch/$index.err" || { [[ -z $message ]] || echo "$lab: error: $message"; })
            row_without_results "$student" "$file" "$(join '; ' "compile error or no result: ${reason:-no message}" ${where:+"$where"})" >"$scratch/$index.row"
            echo nothing >"$scratch/$index.state"
        fi
    fi
    return 0
}

# The lab of week $1, its arguments and how it takes a submission: sets lab, week_args,
# source_flag, ours (our solution's file) and (for a program week) program_file, the starter's name; fails (status 1) for no
# such week.
week_lab() {
    source_flag=--kernel-source program_file=
    case $1 in
        01-simpson) lab=lab-simpson; week_args=(); ours=kernels/cuda/simpson.cu ;;
        02-mmm-ab) lab=lab-mmm; week_args=(--kernel naive); ours=kernels/cuda/mmm.cu ;;
        03-mmm-tiled) lab=lab-mmm; week_args=(--kernel tiled); ours=kernels/cuda/mmm.cu ;;
        04-constant-tracer) lab=lab-constant-tracer; week_args=(); ours=kernels/cuda/tracer.cu ;;
        07-dynamic-parallelism) lab=lab-dynamic-parallel; week_args=(); ours=kernels/cuda/adaptive_simpson.cu ;;
        *) program_week "$1" || return 1 ;;
    esac
    ours=$repository/$ours
}

# A program week's part of week_lab: the lab, its arguments, the starter's name and our solution.
program_week() {
    source_flag=--program-source
    case $1 in
        05-streams) lab=lab-streams; week_args=(); program_file=pipeline.cu ;;
        05-mmm-streamed) lab=lab-streams; week_args=(--program mmm-streamed); program_file=mmm_streamed.cu ;;
        06-pinned-mapped) lab=lab-mapped; week_args=(); program_file=zero_copy.cu ;;
        06-mmm-streamed-and-pinned) lab=lab-mapped; week_args=(--program mmm-streamed-and-pinned); program_file=mmm_streamed_and_pinned.cu ;;
        *) return 1 ;;
    esac
    ours=reference/weeks/$program_file
}

# Issue 66: before any submission, our own solution runs the week's check on the cases grading uses,
# with the same flags (--sanitize too). A case it fails is refused in one line and nothing is graded
# (exit code 2: drop the case); our solution failing the week's own cases, or not running, is the
# machine's (exit code 3), never a student's FAULT or 0.
check_cases_on_ours() {
    [[ -f $ours ]] || fail "our solution $ours is missing: grade from a clone of the whole repository" 3
    local row code=0 i shown="the week's own cases"
    [[ ${#case_args[@]} -gt 0 ]] && shown="--cases $(escaped "${case_args[1]}")"
    row=$(CUDA_VISIBLE_DEVICES=${devices[0]} "$lab_bin" "$source_flag" "$ours" "${week_args[@]}" "${case_args[@]}" "${sanitize[@]}" --check --time-limit "$limit" --csv 2>"$scratch/ours.err") || code=$?
    [[ $code == 0 ]] && return 0
    local line
    line=$(grep -m 1 -E '^lab-[a-z-]+: error: ' "$scratch/ours.err" | sed 's/^lab-[a-z-]*: error: //')
    if [[ $code == 2 ]]; then
        fail "$shown: ${line:-the lab refused the check of our solution}" 2
    fi
    if [[ $code == 1 && ${#case_args[@]} -gt 0 ]] && split_csv "$(tail -n 1 <<<"$row")"; then
        for i in "${!verdict_names[@]}"; do
            case ${fields[i + 1]:-} in
                PASS | -) ;;
                *) fail "$shown: our own solution gets ${fields[i + 1]:-no verdict} for '${verdict_names[i]}' there: a case the week cannot grade; drop it from the file (what it printed: $lab_bin $source_flag $ours ${week_args[*]} ${case_args[*]} --check)" 2 ;;
            esac
        done
    fi
    fail "our own solution fails on this machine (${line:-exit code $code}): the machine's fault, nothing graded; see $lab_bin $source_flag $ours ${week_args[*]} ${case_args[*]} --check" 3
}

# Whether $1 names a GPU: GPU numbers or UUIDs, not empty, NoDevFiles or -1 (Slurm and CUDA's "none").
names_gpu() {
    [[ $1 =~ ^([0-9]+|GPU-[0-9A-Za-z-]+|MIG-[^,]+)(,.*)?$ ]]
}

# The GPUs to grade on (sets devices): those CUDA_VISIBLE_DEVICES names (a scheduler's share of the
# machine), else every GPU nvidia-smi lists; none is one line and exit code 1, before anything is built.
find_gpus() {
    local count
    if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
        names_gpu "$CUDA_VISIBLE_DEVICES" || fail "no GPU here: CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' names none; grade on a GPU node, or use --dry-run (compiles and checks the static rules only)"
        IFS=, read -r -a devices <<<"$CUDA_VISIBLE_DEVICES"
        return
    fi
    count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    [[ $count -gt 0 ]] || fail "no GPU here (nvidia-smi lists none, CUDA_VISIBLE_DEVICES is unset); grading runs every case on one: grade on a GPU node, or use --dry-run (compiles and checks the static rules only)"
    read -r -a devices <<<"$(seq -s ' ' 0 $((count - 1)))"
}

# The lab binary: LAB_BIN_DIR's (one line if it has none yet, with how to build them), else
# cargo's release build. Sets lab_bin.
find_lab() {
    if [[ -n ${LAB_BIN_DIR:-} ]]; then
        local dir others=()
        dir=$(absolute "$LAB_BIN_DIR")
        lab_bin=$dir/$lab
        [[ -x $lab_bin && -f $lab_bin ]] && return
        mapfile -t others < <(find "$dir" -maxdepth 1 -name 'lab-*' -type f -perm -u+x -printf '%f\n' 2>/dev/null | sort)
        [[ ${#others[@]} -gt 0 ]] || fail "LAB_BIN_DIR=$LAB_BIN_DIR has no lab binaries yet: build them with bash scripts/gpu-bundle.sh (they go to gpu-bundle/bin), or unset LAB_BIN_DIR to build with cargo here"
        fail "LAB_BIN_DIR=$LAB_BIN_DIR has no executable $lab (only $(join ', ' "${others[@]}")): build them again with bash scripts/gpu-bundle.sh"
    fi
    (cd "$repository" && cargo build --release -q -p "$lab") || fail "cargo build --release -p $lab failed"
    lab_bin=$repository/target/release/$lab
    [[ -x $lab_bin ]] || fail "$lab_bin is not an executable lab"
}

# The week, its lab and what the lab says it checks, and the submissions, from the command line
# (WEEK SUBMISSIONS, and OUT for --slurm): sets lab_bin, week_args, header (and its parts), cases,
# hash, entries, weights and the ids. What costs nothing is checked first; a local run checks for a
# GPU before it builds the lab.
set_up_week() {
    local expected=$1
    [[ ${#positional[@]} -eq $expected ]] || fail "$usage" 2
    # Each submission's --check ends within the limit, whatever its kernel does (the lab's --time-limit):
    # 10 minutes, an hour under compute-sanitizer (week 3's solution takes about 3 minutes there).
    [[ -n $limit ]] || limit=$([[ ${#sanitize[@]} -gt 0 ]] && echo 3600 || echo 600)
    week=${positional[0]} submissions=$(absolute "${positional[1]}")
    week_lab "$week" || fail "no week $week ($weeks)" 2
    if [[ $source_flag == --program-source ]]; then
        # A program week's lab runs no compute-sanitizer and writes no feedback details (yet).
        [[ ${#sanitize[@]} -eq 0 ]] || fail "--sanitize: not for $week, whose programs are judged by their trace" 2
        [[ -z $feedback_dir ]] || fail "--feedback: not for $week yet (its lab writes no --details)" 2
    fi
    [[ -d $submissions ]] || fail "${positional[1]} is not a folder" 2
    entries=()
    local entry csv=
    # The CSV itself (grade.sh ... subs > subs/grades.csv) and its kept outputs are no submissions.
    [[ -f /dev/stdout ]] && csv=$(readlink -f "/proc/$$/fd/1" 2>/dev/null)
    for entry in "$submissions"/*; do
        [[ -e $entry || -L $entry ]] || continue
        if [[ -n $csv && ( $(readlink -f "$entry") == "$csv" || -d $entry && $(readlink -f "$entry") == "${csv%.[cC][sS][vV]}"-checks* ) ]]; then
            echo "grade.sh: $(escaped "$entry") is the CSV or its --check outputs, not a submission: skipped" >&2
            continue
        fi
        entries+=("$entry")
    done
    [[ ${#entries[@]} -gt 0 ]] || fail "${positional[1]} has no submissions (no <student>.cu files or <student>/ folders in it)" 2
    if [[ $mode == slurm ]]; then
        out=$(absolute "${positional[2]}")
        new_or_empty "$out" || fail "${positional[2]} is not empty; --slurm writes a new folder (nothing is overwritten)" 2
    fi
    [[ $mode == local && -z $dry ]] && find_gpus
    find_lab
    # The lab runs, and says which cases it checks: the CSV header and the case set's hash (what it
    # prints on stderr stays out of both, and is quoted if it fails).
    local code=0
    header=$("$lab_bin" "${week_args[@]}" "${case_args[@]}" --list-cases --csv 2>"$scratch/list.err") || code=$?
    # Exit code 2: the lab refused what it was given, a --cases file's line most often; its one line
    # says which, without the lab's name in front.
    [[ $code != 2 ]] || fail "$(head -n 1 "$scratch/list.err" | sed 's/^lab-[a-z-]*: error: //')" 2
    [[ $code == 0 ]] || fail "$lab_bin does not run: $(head -n 1 "$scratch/list.err")"
    local listing
    listing=$("$lab_bin" "${week_args[@]}" "${case_args[@]}" --list-cases 2>"$scratch/list.err") || fail "$lab_bin does not run: $(head -n 1 "$scratch/list.err")"
    read -r cases _ _ _ hash <<<"$(head -n 1 <<<"$listing" | tr -d '():')"
    [[ $cases =~ ^[0-9]+$ && $hash =~ ^[0-9A-Za-z]+$ ]] || fail "$lab_bin listed no cases: $listing"
    parse_header
    if [[ -n $dry ]]; then
        "$lab_bin" --help 2>/dev/null | grep -q -e '--dry-run' || fail "$lab_bin has no --check --dry-run yet (an older lab): build the labs again (cargo, or bash scripts/gpu-bundle.sh)"
    fi
    read_weights
    read_ids
}

# --weights (or a Slurm folder's copy): sets weights, one per verdict column (1 where the file names
# none); a line that is not "NAME WEIGHT", a name that is no case or rule, a column weighted twice
# or no weight at all is one line and exit code 2.
read_weights() {
    local i
    weights=()
    for i in "${!verdict_names[@]}"; do weights[i]=1; done
    [[ -n $weights_file ]] || return 0
    local line number=0 name value matched set_by=() default=1 default_line= rules=() shown
    local -A rule_seen=()
    shown=$(escaped "$weights_file")
    for i in "${!verdict_names[@]}"; do
        name=${verdict_names[i]%%: *}
        [[ ${verdict_names[i]} == *": "* && -z ${rule_seen[$name]:-} ]] && rules+=("$name") rule_seen[$name]=yes
    done
    while IFS= read -r line || [[ -n $line ]]; do
        number=$((number + 1))
        line=${line%$'\r'}
        [[ $number == 1 ]] && line=${line#$'\xef\xbb\xbf'}
        [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
        [[ $line =~ ^[[:space:]]*(.*[^[:space:]])[[:space:]]+([^[:space:]]+)[[:space:]]*$ ]] || fail "--weights $shown, line $number: not NAME WEIGHT: $(escaped "$line")" 2
        name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
        [[ $value =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)$ ]] || fail "--weights $shown, line $number: '$(escaped "$value")' is no weight (a number, 0 or more)" 2
        if [[ $name == '*' ]]; then
            [[ -z $default_line ]] || fail "--weights $shown, line $number: * has a weight already (line $default_line)" 2
            default=$value default_line=$number
            continue
        fi
        matched=
        for i in "${!verdict_names[@]}"; do
            if [[ ${verdict_names[i]} == "$name" || ${verdict_names[i]} == "$name: "* ]]; then
                [[ -z ${set_by[i]:-} ]] || fail "--weights $shown, line $number: '${verdict_names[i]}' has a weight already (line ${set_by[i]})" 2
                set_by[i]=$number weights[i]=$value matched=yes
            fi
        done
        [[ -n $matched ]] || fail "--weights $shown, line $number: week $week has no case or rule named '$(escaped "$name")' (names: a column of the CSV header as it is, a rule's name before its ': '$([[ ${#rules[@]} -gt 0 ]] && printf ' (%s)' "$(join ', ' "${rules[@]}")"), or *)" 2
    done <"$weights_file"
    for i in "${!verdict_names[@]}"; do
        [[ -n ${set_by[i]:-} ]] || weights[i]=$default
    done
    awk -v w="${weights[*]}" 'BEGIN { n = split(w, a, " "); for (i = 1; i <= n; i++) t += a[i]; exit !(t > 0) }' ||
        fail "--weights $shown weighs every case and rule 0: no score could be given" 2
}

# The score of a row whose verdicts are in fields[2...]: 0 to 100, one decimal: the weights of the
# cases passed, plus the weights of the rules passed times the share of the cases' weight passed,
# over all weights. Rules (a rule's column is named "rule: what it asks") judge how a kernel
# computes; an empty starter passes some ("at most 48 loads" holds for no load at all), and a kernel
# that gets only the 1 x 1 cases right can pass them all: they count as far as the results are right.
# A rule judged on no case (`-`: one stream cannot overlap, a case too small for it, ours included)
# is left out of the score, its weight too.
score_of_fields() {
    local verdicts=("${fields[@]:2:cases}") kinds=() i
    for i in "${!verdicts[@]}"; do
        [[ ${verdict_names[i]} == *": "* ]] && kinds+=(rule) || kinds+=(case)
    done
    awk -v w="${weights[*]}" -v v="${verdicts[*]}" -v k="${kinds[*]}" 'BEGIN {
        n = split(w, weight, " "); split(v, verdict, " "); split(k, kind, " ")
        for (i = 1; i <= n; i++) {
            if (kind[i] == "rule" && verdict[i] == "-") continue
            total += weight[i]
            if (kind[i] == "case") { cases += weight[i]; if (verdict[i] == "PASS") cases_passed += weight[i] }
            else if (verdict[i] == "PASS") rules_passed += weight[i]
        }
        share = cases > 0 ? cases_passed / cases : 1
        printf "%.1f", (total > 0 ? 100 * (cases_passed + rules_passed * share) / total : 0)
    }'
}

# --ids (or a Slurm folder's copy): sets id_of (the id of each submission, by its index) and prints a
# line on stderr for the submissions without an id and one for the lines that name no submission;
# a line that is not NAME,ID or a name given two ids is one line and exit code 2.
read_ids() {
    id_of=()
    [[ -n $ids_file ]] || return 0
    local line number=0 name id shown index base student candidate
    local -A id_for=() line_of=() used=()
    shown=$(escaped "$ids_file")
    while IFS= read -r line || [[ -n $line ]]; do
        number=$((number + 1))
        line=${line%$'\r'}
        # A spreadsheet's UTF-8 export may begin with a byte order mark.
        [[ $number == 1 ]] && line=${line#$'\xef\xbb\xbf'}
        [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
        if split_csv "$line" && [[ ${#fields[@]} == 2 ]]; then
            name=${fields[0]} id=${fields[1]}
        elif [[ $line == *,* ]]; then
            name=${line%,*} id=${line##*,}
        else
            fail "--ids $shown, line $number: not FILE_OR_FOLDER_NAME,STUDENT_ID: $(escaped "$line")" 2
        fi
        # Spaces around either are a spreadsheet's, not the name's.
        name=${name#"${name%%[![:space:]]*}"} name=${name%"${name##*[![:space:]]}"}
        id=${id#"${id%%[![:space:]]*}"} id=${id%"${id##*[![:space:]]}"}
        [[ -n $name && -n $id ]] || fail "--ids $shown, line $number: an empty name or id: $(escaped "$line")" 2
        if [[ -n ${id_for[$name]+set} && ${id_for[$name]} != "$id" ]]; then
            fail "--ids $shown, line $number: $(escaped "$name") has the id $(escaped "${id_for[$name]}") already (line ${line_of[$name]})" 2
        fi
        id_for[$name]=$id line_of[$name]=$number
    done <"$ids_file"
    local without=() unused=()
    for index in "${!entries[@]}"; do
        base=$(basename "${entries[index]}") student=$(student_of "${entries[index]}")
        for candidate in "$base" "$(escaped "$base")" "$student" "$(escaped "$student")"; do
            if [[ -n ${id_for[$candidate]+set} ]]; then
                id_of[index]=${id_for[$candidate]}
                used[$candidate]=yes
                break
            fi
        done
        [[ -n ${id_of[index]+set} ]] || without+=("$(escaped "$base")")
    done
    for name in "${!id_for[@]}"; do
        [[ -n ${used[$name]+set} ]] || unused+=("line ${line_of[$name]}: $(escaped "$name")")
    done
    [[ ${#without[@]} -eq 0 ]] || echo "grade.sh: --ids $shown has no id for ${#without[@]} of ${#entries[@]} submissions (their student id is empty): $(join ', ' "${without[@]}")" >&2
    if [[ ${#unused[@]} -gt 0 ]]; then
        mapfile -t unused < <(printf '%s\n' "${unused[@]}" | sort -t : -k 1.6n)
        echo "grade.sh: --ids $shown names ${#unused[@]} submissions that are not in $(escaped "${submissions:-the array}"): $(join ', ' "${unused[@]}")" >&2
    fi
    return 0
}

# Where each submission's --check output is kept (sets keep_dir; none where nothing says): --keep's
# folder (new or empty), else a new folder beside the CSV when stdout is a file; stderr says where.
set_up_keep() {
    if [[ -n $keep_dir ]]; then
        new_or_empty "$keep_dir" || fail "--keep: $(escaped "$keep_dir") is not a new or empty folder (nothing is overwritten)" 2
    else
        local csv number=1
        if ! { [[ -f /dev/stdout ]] && csv=$(readlink -f "/proc/$$/fd/1" 2>/dev/null) && [[ -f $csv ]]; }; then
            echo "grade.sh: the --check outputs are not kept (stdout is not a file; --keep DIR keeps them)" >&2
            return 0
        fi
        keep_dir=${csv%.[cC][sS][vV]}-checks
        while ! new_or_empty "$keep_dir"; do
            number=$((number + 1))
            keep_dir=${csv%.[cC][sS][vV]}-checks-$number
        done
    fi
    mkdir -p "$keep_dir" || fail "cannot make $(escaped "$keep_dir") for the --check outputs"
    echo "grade.sh: each submission's --check output is kept in $(escaped "$keep_dir")/" >&2
}

# The exit code so far and another ($1): the machine's (3) over others' (1) over "still running" (4).
worse() {
    local rank=(0 2 0 3 1)
    ((rank[$1] > rank[final])) && final=$1
    return 0
}

# Prints the CSV header, then row $2 (a file) of submission $1 in state $3, with its score and id;
# notes the submission in the lists the report reads.
emit_row() {
    local index=$1 row state=$3 score= line
    row=$(cat "$2")
    case $state in
        graded | nothing)
            [[ -z $dry ]] && split_csv "$row" && score=$(score_of_fields) ;;
        refused) refused_names+=("$(escaped "$(student_of "${entries[index]}")")") ;;
        changed) changed_names+=("$(escaped "$(student_of "${entries[index]}")")") ;;
        machine | no-gpu) machine_names+=("$(escaped "$(student_of "${entries[index]}")")"); machine_index+=("$index") ;;
        dry-pass) dry_passed=$((dry_passed + 1)) ;;
    esac
    line="$row,$score"
    [[ -n $ids_file ]] && line+=",$(csv_field "${id_of[index]:-}")"
    [[ -n $feedback_dir ]] && line+=",$(csv_field "$(cat "$runs_dir/$index.alike" 2>/dev/null)")"
    printf '%s\n' "$line"
}

# The CSV's header line.
emit_header() {
    printf 'student,%s,note,score%s%s\n' "$out_header" "$([[ -n $ids_file ]] && echo ',student id')" "$([[ -n $feedback_dir ]] && echo ',most like')"
}

# What the rows said, on stderr, one line each: students graded on another case set, those the
# machine failed, a dry run's count; sets final.
report() {
    local total=${#entries[@]}
    if [[ ${#changed_names[@]} -gt 0 ]]; then
        echo "grade.sh: the case set changed during grading (expected $hash) for ${#changed_names[@]} of $total students, not graded: $(join ', ' "${changed_names[@]}")" >&2
        worse 1
    fi
    if [[ ${#refused_names[@]} -gt 0 ]]; then
        echo "grade.sh: the lab refused its arguments (exit code 2) for ${#refused_names[@]} of $total submissions, not graded: $(join ', ' "${refused_names[@]}"); their notes quote it (build the labs and grade.sh from one commit)" >&2
        worse 1
    fi
    if [[ ${#machine_names[@]} -gt 0 ]]; then
        local who
        who="${#machine_names[@]} of $total submissions: $(join ', ' "${machine_names[@]}")"
        [[ ${#machine_names[@]} == "$total" ]] && who="every submission"
        echo "grade.sh: the machine (not the students) failed, no grades for $who; their notes begin 'machine: ' and say why: grade them again where the GPU works" >&2
        worse 3
    fi
    [[ -z $dry ]] || echo "grade.sh: dry run: $dry_passed of $total submissions compile and pass the static rules (no case ran; no scores)" >&2
}

# Keeps submission $1's --check output ($scratch/$1.out) as $keep_dir/<its file or folder name>.txt.
keep_output() {
    [[ -n $keep_dir && -f $scratch/$1.out ]] || return 0
    cp "$scratch/$1.out" "$keep_dir/$(basename "${entries[$1]}").txt" || echo "grade.sh: could not keep $(escaped "${entries[$1]}")'s --check output in $(escaped "$keep_dir")" >&2
}

# Grades every submission here, --jobs at a time, and prints the CSV.
grade_here() {
    [[ -n $dry ]] || check_cases_on_ours
    set_up_keep
    [[ -n $dry ]] && devices=(none)
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
            keep_output "$index"
            [[ -z $feedback_dir ]] || cp "$scratch/$index.out" "$runs_dir/$index.out" 2>/dev/null
            echo "grade.sh: graded $((index + 1)) of $total: $(escaped "$(student_of "$entry")") ($((SECONDS - started)) s)" >&2
        } &
        slot_pids[slot]=$!
        index=$((index + 1))
    done
    wait
    [[ -n $feedback_dir ]] && find_alike "$index"
    {
        emit_header
        for ((i = 0; i < index; i++)); do
            emit_row "$i" "$scratch/$i.row" "$(cat "$scratch/$i.state" 2>/dev/null)"
        done
    } >"$scratch/grades.csv"
    cat "$scratch/grades.csv"
    [[ -z $feedback_dir ]] || cp "$scratch/grades.csv" "$runs_dir/grades.csv"
    report
    [[ -n $feedback_dir ]] && write_feedback
    return 0
}

# The feedback program: LAB_BIN_DIR's, else cargo's release build. Sets feedback_bin.
find_feedback() {
    feedback_bin=$(absolute "${LAB_BIN_DIR:-$repository/target/release}")/feedback
    if [[ -z ${LAB_BIN_DIR:-} ]]; then
        (cd "$repository" && cargo build --release -q -p feedback) || fail "cargo build --release -p feedback failed"
    fi
    [[ -x $feedback_bin && -f $feedback_bin ]] || fail "$(escaped "$feedback_bin") is missing: build it again with bash scripts/gpu-bundle.sh (or unset LAB_BIN_DIR)"
}

# --feedback, before the CSV: each submission's "most like" ($runs_dir/i.alike) from the files graded
# (copied to $runs_dir/i.cu) of the $1 submissions, against each other, our files of the week (its
# solution, broken and red-team kernels) and earlier years' (--earlier), the week's starter not
# counted. A failure here costs the column, never the grades.
find_alike() {
    local source ours=() file
    source=$(find "$repository/assignments/$week" -maxdepth 1 -name '*.cu' -printf '%f\n' | head -n 1)
    [[ -n $source ]] || { echo "grade.sh: assignments/$week has no starter .cu file to compare with: the column \"most like\" stays empty" >&2; return 0; }
    # From the repository, so that the CSV names our files as the workspace does (kernels/cuda/mmm.cu).
    (
        cd "$repository" || exit 1
        for file in "kernels/cuda/$source" "assignments/$week"/{broken,adversarial}/*.cu; do
            [[ -f $file ]] && ours+=(--ours "$file")
        done
        "$feedback_bin" alike --runs "$runs_dir" --count "$1" --template "assignments/$week/$source" "${ours[@]}" "${earlier[@]}"
    ) || echo "grade.sh: feedback alike failed (above): the column \"most like\" stays empty" >&2
}

# --feedback, after the CSV: the students' pages and the class page (made again from $runs_dir with
# the feedback program's `pages`, to another folder, with or without --hide-cases).
write_feedback() {
    local hide=()
    [[ -n $hide_cases ]] && hide=(--hide-cases)
    "$feedback_bin" pages --week "$week" --runs "$runs_dir" --grades "$runs_dir/grades.csv" "${hide[@]}" --out "$feedback_dir" >/dev/null || fail "feedback pages failed (above)"
    echo "grade.sh: feedback for each student in $(escaped "$feedback_dir")/, the class page $(escaped "$feedback_dir")/index.html" >&2
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
# submission N into OUT/rows/N.row, collect.sh, the job that makes OUT/grades.csv, and copies of
# --weights and --ids; then the array is submitted (and, with --collect-job, collect.sh after it).
# If sbatch refuses the array, what was written goes again (OUT too, if this made it).
submit_array() {
    command -v sbatch >/dev/null || fail "--slurm needs Slurm's sbatch, and there is none here"
    local value made=
    for value in "$out" "$lab_bin" "${case_args[@]}" "$header"; do
        [[ $value != *$'\n'* ]] || fail "a path or the lab's header holds a line break; --slurm's settings cannot" 2
    done
    [[ -e $out ]] || made=yes
    mkdir -p "$out/rows" "$out/logs" "$out/checks" || fail "cannot make $out"
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
    [[ -z $weights_file ]] || cp "$weights_file" "$out/weights"
    [[ -z $ids_file ]] || cp "$ids_file" "$out/ids"
    local option
    {
        echo '#!/usr/bin/env bash'
        echo "# One task of a grading array (grade.sh --slurm); run again for chosen tasks: sbatch --array=3,5 $(printf '%q' "$out/task.sh")"
        echo "# A task that Slurm gives no GPU (no --gres=gpu:1, a partition without GPUs) writes a row that says so and fails."
        gpu_job_lines "grade-$week" "$out/logs/%A_%a.log"
        printf 'exec bash %q --task %q\n' "$repository/assignments/grade.sh" "$out"
    } >"$out/task.sh"
    {
        echo '#!/usr/bin/env bash'
        echo "# Our own solution on the cases, before any submission (issue 66): the array waits for this job"
        echo "# (--dependency=afterok) and Slurm cancels it if the job fails; --collect then says why in one line."
        gpu_job_lines "grade-$week-canary" "$out/logs/canary-%j.log"
        printf 'exec bash %q --canary %q\n' "$repository/assignments/grade.sh" "$out"
    } >"$out/canary.sh"
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
    local job collector canary
    if ! canary=$(sbatch --parsable "$out/canary.sh") ||
        ! job=$(sbatch --parsable --array="0-$((${#entries[@]} - 1))" --dependency="afterok:${canary%%;*}" --kill-on-invalid-dep=yes "$out/task.sh"); then
        [[ -z $canary ]] || scancel "${canary%%;*}" 2>/dev/null
        if [[ -n $made ]]; then rm -rf "$out"; else find "$out" -mindepth 1 -delete; fi
        fail "sbatch refused the array or the check of our solution it waits for (its words are above); nothing was submitted and $(printf '%q' "${positional[2]}") is as it was: the same command can run again"
    fi
    job=${job%%;*} canary=${canary%%;*}
    echo "$job" >"$out/job"
    echo "$canary" >"$out/canary-job"
    echo "grade.sh: submitted job array $job: ${#entries[@]} tasks, one GPU, $cpus CPUs and $memory each (week $week)"
    echo "after job $canary, our own solution on the cases: if it fails them, the array is cancelled and --collect says why"
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

# The #SBATCH lines of a job on one GPU: its name $1, its log $2, the CPUs, memory and time of the
# tasks, and the teacher's sbatch options.
gpu_job_lines() {
    local option
    echo "#SBATCH --job-name=$1"
    echo "#SBATCH --gres=gpu:1"
    echo "#SBATCH --cpus-per-task=$cpus"
    echo "#SBATCH --mem=$memory"
    echo "#SBATCH --time=$minutes"
    echo "#SBATCH --output=$2"
    for option in "${sbatch_args[@]}"; do echo "#SBATCH $option"; done
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
    submissions=${entries[0]%/*}
    job=$(cat "$out/job" 2>/dev/null)
    [[ $job =~ ^[0-9]*$ ]] || fail "$out/job is not a job id: $job"
    parse_header
}

# --task: one array task, on the GPU Slurm gave it, its row written whole or not at all. Without a
# GPU (no --gres=gpu:1 in the script, or a partition without GPUs), or without the lab on this node,
# the row says so and the task fails: it never grades on whatever GPU 0 is.
run_task() {
    read_array
    local index=${SLURM_ARRAY_TASK_ID:-} device= why= state
    [[ $index =~ ^[0-9]+$ && $index -lt ${#entries[@]} ]] || fail "grade.sh --task runs as a task of the array --slurm submitted (SLURM_ARRAY_TASK_ID ${index:-unset}, ${#entries[@]} submissions)"
    rm -f "$out/rows/$index.state"
    device=$(slurm_gpu)
    if [[ -z $device ]]; then
        why="no GPU was given to this task (check --gres=gpu:1 and the partition)"
        no_result "$index" "${entries[index]}" no-gpu "$why"
        echo "grade.sh: $why" >"$scratch/$index.err"
    elif [[ ! -x $lab_bin ]]; then
        why="machine: the lab $lab_bin is not on this node (not graded: the repository or LAB_BIN_DIR must be on a file system the nodes share)"
        no_result "$index" "${entries[index]}" machine "$why"
        echo "grade.sh: $why" >"$scratch/$index.err"
    else
        grade_one "$index" "${entries[index]}" "$device"
    fi
    keep_dir=$out/checks
    mkdir -p "$keep_dir" && keep_output "$index"
    cp "$scratch/$index.err" "$out/rows/$index.err" 2>/dev/null
    state=$(cat "$scratch/$index.state")
    cp "$scratch/$index.state" "$out/rows/$index.state"
    mv "$scratch/$index.row" "$out/rows/$index.tmp" && mv "$out/rows/$index.tmp" "$out/rows/$index.row"
    [[ -z $why ]] || fail "$why"
    case $state in
        changed) fail "$changed" ;;
        machine) fail "the machine failed this task, not graded: $(tail -n 1 "$out/rows/$index.err" 2>/dev/null)" 3 ;;
    esac
    return 0
}

# The GPU Slurm gave this job (CUDA_VISIBLE_DEVICES, else the step's or the job's GPUs), or nothing.
slurm_gpu() {
    local name
    for name in "${CUDA_VISIBLE_DEVICES:-}" "${SLURM_STEP_GPUS:-}" "${SLURM_JOB_GPUS:-}"; do
        names_gpu "$name" && { echo "$name"; return; }
    done
}

# --canary: our solution on the cases (check_cases_on_ours), as the job the array waits for (issue
# 66). Its verdict goes to OUT/canary.state (passed, refused or machine) with the line that says
# why in OUT/canary.why, for --collect; a verdict other than passed fails the job, and Slurm then
# cancels the array (--kill-on-invalid-dep): no submission is graded on cases ours cannot pass.
run_canary() {
    read_array
    local device code=0 state=passed
    device=$(slurm_gpu)
    rm -f "$out/canary.state" "$out/canary.why"
    if [[ -z $device ]]; then
        echo "grade.sh: no GPU was given to the check of our solution (check --gres=gpu:1 and the partition)" >"$scratch/canary.err"
        code=3
    elif [[ ! -x $lab_bin ]]; then
        echo "grade.sh: the lab $lab_bin is not on this node (the repository or LAB_BIN_DIR must be on a file system the nodes share)" >"$scratch/canary.err"
        code=3
    else
        devices=("$device")
        (check_cases_on_ours) 2>"$scratch/canary.err" || code=$?
    fi
    case $code in
        0) ;;
        2) state=refused ;;
        *) state=machine ;;
    esac
    tail -n 1 "$scratch/canary.err" | sed 's/^grade.sh: //' >"$out/canary.why"
    echo "$state" >"$out/canary.state"
    [[ $code == 0 ]] || fail "$(cat "$out/canary.why")" "$code"
}

# --collect's part for the canary job (issue 66): refused cases stop it with the canary's line (exit
# code 2), our solution failing on the node too (exit code 3); a canary still in the queue is told
# apart (the tasks wait for it); one that ended without a verdict (killed, out of time) is the machine's.
collect_canary() {
    local canary state again
    canary=$(cat "$out/canary-job" 2>/dev/null) || return 0
    state=$(cat "$out/canary.state" 2>/dev/null)
    again="run both again where the GPU works: sbatch $(printf '%q' "$out/canary.sh"), then sbatch --array=0-$((${#entries[@]} - 1)) $(printf '%q' "$out/task.sh")"
    case $state in
        passed) return 0 ;;
        refused) fail "nothing graded: $(cat "$out/canary.why")" 2 ;;
        machine) fail "nothing graded, the machine's fault: $(cat "$out/canary.why") (log: $out/logs/canary-$canary.log); $again" 3 ;;
    esac
    if [[ -n $(squeue -h -j "$canary" 2>/dev/null) ]]; then
        echo "grade.sh: the check of our solution on the cases (job $canary) is still pending or running; the tasks wait for it: collect again later" >&2
        worse 4
        return 0
    fi
    fail "nothing graded: the check of our solution on the cases (job $canary) ended without a verdict ($(job_state "$canary"); log: $out/logs/canary-$canary.log), the machine's fault; $again" 3
}

# Slurm's word on job $1 (an array task: JOB_TASK): "STATE, exit CODE, REASON" from sacct, else from
# scontrol (while the job is in the controller's memory), else that it is not known.
job_state() {
    local id=$1 line
    line=$(sacct -j "$id" -n -P -X -o State,ExitCode,Reason 2>/dev/null | head -n 1)
    if [[ -n $line ]]; then
        IFS='|' read -r state code reason <<<"$line"
        echo "$state, exit $code, $reason"
        return
    fi
    line=$(scontrol -o show job "$id" 2>/dev/null | head -n 1)
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
# word on them. stderr names the tasks still pending or running (collect again later), and apart
# those that failed, got no GPU or that the machine failed, with the command that runs them again;
# rows graded on another case set and rows the machine failed are named as in a local run.
collect() {
    read_array
    collect_canary
    [[ -n $weights_file || ! -f $out/weights ]] || weights_file=$out/weights
    [[ -n $ids_file || ! -f $out/ids ]] || ids_file=$out/ids
    read_weights
    read_ids
    local missing=() no_gpu=() machine=() waiting=() index state line
    local -A live=()
    # Tasks Slurm still has in its queue (pending, running, completing), one a line (-r).
    while read -r line; do
        [[ $line =~ ^[0-9]+_([0-9]+)\ ([A-Z_]+)$ ]] && live[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    done < <([[ -n $job ]] && squeue -h -r -j "$job" -o '%i %T' 2>/dev/null)
    emit_header
    for index in "${!entries[@]}"; do
        if [[ -f $out/rows/$index.row ]]; then
            state=$(cat "$out/rows/$index.state" 2>/dev/null || echo graded)
            [[ $state == no-gpu ]] && no_gpu+=("$index")
            [[ $state == machine ]] && machine+=("$index")
            emit_row "$index" "$out/rows/$index.row" "$state"
        elif [[ -n ${live[$index]:-} ]]; then
            row_without_results "$(student_of "${entries[index]}")" "${entries[index]}" "no result yet from array task $index: ${live[$index]} (collect again later)" >"$scratch/row"
            emit_row "$index" "$scratch/row" waiting
            waiting+=("$index")
        else
            row_without_results "$(student_of "${entries[index]}")" "${entries[index]}" "no result from array task $index: $(job_state "${job}_$index")" >"$scratch/row"
            emit_row "$index" "$scratch/row" missing
            missing+=("$index")
        fi
    done
    if [[ ${#waiting[@]} -gt 0 ]]; then
        echo "grade.sh: ${#waiting[@]} of ${#entries[@]} tasks are still pending or running ($(join , "${waiting[@]}")), not failed: collect again later (squeue -j $job)" >&2
        worse 4
    fi
    if [[ $((${#missing[@]} + ${#no_gpu[@]} + ${#machine[@]})) -gt 0 ]]; then
        local list what=()
        list=$(printf '%s\n' "${missing[@]}" "${no_gpu[@]}" "${machine[@]}" | grep . | sort -n | paste -s -d ,)
        [[ ${#missing[@]} -gt 0 ]] && what+=("no row: $(join , "${missing[@]}")")
        [[ ${#no_gpu[@]} -gt 0 ]] && what+=("no GPU: $(join , "${no_gpu[@]}")")
        [[ ${#machine[@]} -gt 0 ]] && what+=("the machine failed: $(join , "${machine[@]}")")
        echo "grade.sh: $((${#missing[@]} + ${#no_gpu[@]} + ${#machine[@]})) of ${#entries[@]} tasks have no grades ($(printf '%s; ' "${what[@]}")their logs: $out/logs/${job:-JOB}_N.log); to run only those again: sbatch --array=$list $(printf '%q' "$out/task.sh")" >&2
        [[ ${#missing[@]} -gt 0 ]] && worse 1
    fi
    report
}

scratch=$(mktemp -d) || fail "cannot make a private folder"
trap 'rm -rf "$scratch"' EXIT
# This run's key for the labs' closing marks (issue 60): random, in this process and the labs' stdin only.
mark_key=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
[[ ${#mark_key} == 64 ]] || fail "cannot read 32 random bytes from /dev/urandom"

final=0 changed_names=() machine_names=() refused_names=() machine_index=() dry_passed=0 changed=
case $mode in
    local) set_up_week 2 && { [[ -z $feedback_dir ]] || { find_feedback && mkdir -p "$runs_dir"; }; } && grade_here ;;
    slurm) set_up_week 3 && submit_array ;;
    task) run_task ;;
    canary) run_canary ;;
    collect) [[ ${#positional[@]} -eq 0 ]] || fail "$usage" 2; collect ;;
esac
exit "$final"
