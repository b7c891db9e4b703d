#!/usr/bin/env bash
# compare.sh: the slide programs in CUDA C++ (reference/) beside the Rust labs, on the same GPU, with the
# same sizes and repetitions; one table: program, original ms, Rust ms, Rust / original, both verdicts,
# what the slides printed for the program where they printed a time (their Fermi GPU), and how each
# side was timed (one cold run, as the slide programs and the labs' --as-printed time, or a warm-up
# and the median of the repetitions, as our reference/ programs and the labs do by default).
#
#   bash scripts/compare.sh [--originals DIR] [--only PATTERN]     in a checkout (labs: target/release)
#   bash gpu-bundle/compare.sh [--originals DIR] [--only PATTERN]  on the GPU machine (labs: gpu-bundle/bin)
#   bash scripts/compare.sh [--originals DIR] --build-only OUT     compile every reference program (or
#                                                                  only those DIR replaces) into OUT
#
# --originals DIR  build a teacher's own .cu instead of ours wherever DIR has one: the file that
#                  DIR/compare.toml names for the program (file = "...", any name), else one at the same
#                  path (streams/mmm-streamed.cu), else one of the same name (mmm-streamed.cu). Such a
#                  program is taken for the slide's as printed (reference/slides/): run with the slide's
#                  arguments (mostly none), its time read from the slide's line ("GPU time in ms:",
#                  "스트림 실행시간:"), the lab run at the slide's sizes beside it; a program the slides
#                  do not show (simpson, tracer) runs without arguments and gets no ratio. Where it
#                  prints no "Result =" line its exit code is shown, and where it prints no time line
#                  the row says so ("no time line") instead of a ratio. A section of DIR/compare.toml
#                  for a program or row replaces the slide's settings for it: its own arguments, time
#                  line and lab command at its sizes, or words instead of a time (reference/README.md);
#                  a row whose arguments differ from the row's and that names no lab command shows
#                  "other arguments" instead of a ratio. Each .cu file of DIR and each section of its
#                  compare.toml that plays none of our programs is named on stderr, with the reason.
#                  A row gets a ratio only where both sides' sizes are known to match: the slide
#                  programs (reference/slides), a section that names the lab at the program's sizes
#                  (lab = "...", checked against the sizes the program prints where sizes = "..." says
#                  which line), or a program run with the row's own arguments; else "sizes unknown".
# --init DIR       write DIR/compare.toml for a teacher to fill: a section for each program a file of
#                  DIR plays, its settings as comments with the slide's values (never over a file).
# --only PATTERN   run only the rows whose program name matches PATTERN (grep -E); not with --build-only.
# --build-only OUT build, run nothing (no GPU needed): one line per program, "built OUT/x from FILE".
#                  OUT must be new or empty: nothing there is overwritten.
# -h, --help       this text and the names of our programs.
# Environment: NVCC (default: nvcc on PATH, /usr/local/cuda/bin/nvcc, .toolchain/cuda/bin/nvcc),
# ARCH (default: the GPU's, from nvidia-smi, else sm_90), WORK (outputs; default a fresh temp folder;
# one that exists must be empty), COLD_RUNS (default 9: how often each side of a row runs where both
# time one cold run, the slides' programs and the labs' --as-printed), PROCESSES (default 1: how often
# each side of a row runs where both time a warm-up and a median; the table then shows the median of
# the processes' medians). Usage errors: one line on
# stderr, exit 2.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -d "$here/reference" ]; then          # the GPU bundle: compare.sh, reference/, bin/, slides/
    root=$here; labs=${LABS:-$here/bin}; slides=$here/slides
else                                        # a checkout: scripts/compare.sh
    root=$(cd "$here/.." && pwd); labs=${LABS:-$root/target/release}; slides=$root/results/slides
fi
# shellcheck source=scripts/compare-lib.sh # the bundle's copy sits beside compare.sh
source "$root/$( [ -f "$root/compare-lib.sh" ] && echo compare-lib.sh || echo scripts/compare-lib.sh )"
reference=$root/reference
# reference/weeks/ holds our solutions of the program weeks (graded with --program-source): no slide
# program, nothing to compare.
programs=$(cd "$reference" && printf '%s\n' */*.cu | grep -v '^weeks/')
rows_file=$root/compare-rows.txt
[ -f "$rows_file" ] || rows_file=$root/scripts/compare-rows.txt

# usage WHY: a usage error, in one line (the option, what is wrong), and exit 2.
usage() {
    echo "compare.sh: $1 (see --help)" >&2
    exit 2
}

# print_help: the header above, then our programs, the names a teacher's file or section can use.
print_help() {
    sed -n '2,/^set /{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    echo
    echo "Our programs (reference/; a teacher's file plays one by its path, its name or compare.toml's file = \"...\"):"
    for program in $programs; do echo "    $program"; done
}

# empty_or_new OPTION PATH: PATH, a folder compare.sh writes into, must not hold a user's files.
empty_or_new() {
    if [ -e "$2" ] && [ ! -d "$2" ]; then usage "$1 '$2' is not a folder"; fi
    if [ -d "$2" ] && [ -n "$(ls -A "$2")" ]; then usage "$1 '$2' is not empty; give a new or empty folder (nothing there is overwritten)"; fi
}

originals="" only="" build_only="" init="" given=" "
while [ $# -gt 0 ]; do
    case $1 in
        --originals|--only|--build-only|--init)
            # A value must follow, and an option given twice would silently drop its first value.
            if [ $# -lt 2 ] || [ -z "$2" ] || [[ $2 == --* ]]; then usage "$1 needs a value"; fi
            if [[ $given == *" $1 "* ]]; then usage "$1 given twice"; fi
            given="$given$1 " ;;&
        --originals)
            [ -e "$2" ] || usage "--originals '$2': no such folder"
            [ -d "$2" ] || usage "--originals '$2' is not a folder"
            originals=$(cd "$2" && pwd); shift 2 ;;
        --init)
            [ -d "$2" ] || usage "--init '$2': no such folder"
            [ ! -e "$2/compare.toml" ] || usage "--init: $2/compare.toml exists; not overwriting it (edit it, or move it away)"
            init=$(cd "$2" && pwd); shift 2 ;;
        --only) only=$2; shift 2 ;;
        --build-only) build_only=$2; shift 2 ;;
        -h|--help) print_help; exit 0 ;;
        *) usage "unknown argument '$1'" ;;
    esac
done
if [ -n "$init" ]; then
    [ -z "$originals$only$build_only" ] || usage "--init writes a compare.toml and runs nothing: give it alone"
    plan=$(originals_plan "$init" "$reference" "$rows_file" 0) || exit 2
    [ -n "$plan" ] || usage "--init '$init' has no file that plays one of our programs"
    originals_init "$init" "$reference/slides" "$rows_file" <<<"$plan" >"$init/compare.toml"
    echo "compare.sh: wrote $init/compare.toml ($(grep -c '^\[' "$init/compare.toml") programs): take the '# ' off each setting that is true of your program, then bash scripts/compare.sh --originals $init"
    exit 0
fi
if [ -n "$build_only" ]; then
    [ -z "$only" ] || usage "--only picks rows of the table; --build-only builds every program and runs none"
    empty_or_new --build-only "$build_only"
elif [ -n "${WORK:-}" ]; then
    empty_or_new WORK "$WORK"
fi

# Which of our programs a teacher's file plays, read once: a compare.toml that cannot be read stops
# here, naming its line, before anything is built; files and sections it does not use are named.
declare -A plays=()
if [ -n "$originals" ]; then
    defaults=0
    [ "$originals" != "$(cd "$reference/slides" 2>/dev/null && pwd)" ] || defaults=1
    plan=$(originals_plan "$originals" "$reference" "$rows_file" "$defaults") || exit 2
    while IFS=$'\t' read -r program source; do
        [ -z "$program" ] || plays[$program]=$source
    done <<<"$plan"
    [ ${#plays[@]} -gt 0 ] || usage "--originals '$originals' has no file that plays one of our programs"
fi

# source_of PROGRAM: the .cu built for PROGRAM, the teacher's where one plays it.
source_of() {
    echo "${plays[$1]:-$reference/$1}"
}

nvcc=${NVCC:-$(command -v nvcc || true)}
for candidate in /usr/local/cuda/bin/nvcc "$root/.toolchain/cuda/bin/nvcc"; do
    if [ -z "$nvcc" ] && [ -x "$candidate" ]; then nvcc=$candidate; fi
done
[ -n "$nvcc" ] || { echo "compare.sh: nvcc not found (set NVCC, or run bash scripts/cuda-toolchain.sh)" >&2; exit 1; }
if [ -z "${ARCH:-}" ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ' || true)
    ARCH=sm_${cap:-90}
fi
cuda_lib=$(cd "$(dirname "$nvcc")/.." && pwd)/lib

# build PROGRAM OUT: compiles one reference program (or the teacher's) with -O3 for this GPU. Returns 2
# for a cuBLAS program where cuBLAS is not installed (CI's toolchain has none), 1 with the reason if
# the compiler fails.
build() {
    local program=$1 out=$2 source flags log
    source=$(source_of "$program")
    flags=$(build_flags "$reference/$program")
    log=$out.build.log
    if [[ $flags == *-lcublas* ]] && [ ! -f "$(dirname "$nvcc")/../include/cublas_v2.h" ]; then
        echo "compare.sh: $program skipped: cuBLAS is not installed beside $nvcc" >&2
        return 2
    fi
    # shellcheck disable=SC2086 # flags are words
    if "$nvcc" -O3 -arch="$ARCH" -I"$reference" -I"$reference/$(dirname "$program")" -L"$cuda_lib" $flags \
        -o "$out" "$source" >"$log" 2>&1; then
        echo "compare.sh: built $out from $source"
        return 0
    fi
    echo "compare.sh: $program not built from $source: $(grep -m1 -iE 'error|fatal|cannot find' "$log" || tail -n 1 "$log")" >&2
    return 1
}

if [ -n "$build_only" ]; then
    mkdir -p "$build_only"
    failed=0 ours=""
    for program in $programs; do
        # With --originals, only the programs the folder replaces (ours are built without it).
        if [ -n "$originals" ] && [ -z "${plays[$program]:-}" ]; then ours="$ours $program"; continue; fi
        status=0
        build "$program" "$build_only/$(echo "${program%.cu}" | tr / -)" || status=$?
        if [ $status = 1 ]; then failed=1; fi
    done
    [ -z "$ours" ] || echo "compare.sh: not built (nothing in $originals plays them; ours are built without --originals):$ours"
    exit $failed
fi

# Rows whose two sides each time one cold run (reference/slides' programs, the labs' --as-printed)
# run each side COLD_RUNS times and show the medians: one cold run of a program that copies from
# pageable memory moved by 20% from run to run on an H100 (the host's page faults), and medians of five
# still moved by 0.2 on an H200 (results/h200/issue64/cold-runs-5.log): nine settle them.
cold_runs=${COLD_RUNS:-9}
[[ $cold_runs =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: COLD_RUNS=$cold_runs: a number of runs, 1 or more" >&2; exit 2; }
# Rows whose two sides both time a warm-up and the median of their repetitions run once a side, unless
# PROCESSES says more: copies from pageable memory moved by up to 12% from one process of the same
# program to the next on an H200 machine while the runs inside each process agreed within a few
# percent (results/h200/issue64/pageable-processes.log), so one process a side can miss by that much.
processes=${PROCESSES:-1}
[[ $processes =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: PROCESSES=$processes: a number of processes, 1 or more" >&2; exit 2; }
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"

# Every row runs on a GPU: without one, say so once instead of a table of failed runs.
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "compare.sh: no GPU here (nvidia-smi lists none); the programs run on one (--build-only DIR compiles them without)" >&2
    exit 1
fi

# The rows (scripts/compare-rows.txt): program | reference program and arguments | its key | lab and
# arguments | its key. {scene} and {work} stand for the tracer's scene file and this run's folder.
scene=$root/lab-constant-tracer/scenes/sixty-four.txt
[ -f "$scene" ] || scene=$root/scenes/sixty-four.txt
rows=$(grep -v '^#' "$rows_file" | sed -e "s|{scene}|$scene|g" -e "s|{work}|$work|g")
[ -z "$only" ] || rows=$(echo "$rows" | grep -E "^[^|]*($only)" || true)
[ -n "$rows" ] || { echo "compare.sh: no row matches --only '$only'" >&2; exit 2; }

# run TIMES COMMAND...: runs a command TIMES times, each a process of its own, once for all the rows
# that ask for it as often (the key is TIMES and the command); sets last_logs to its output files in
# $work, and last_log and last_code to the output and exit code of its first failing run (else its
# first run).
declare -A outputs=() codes=() failed=()
run() {
    local times=$1 key=$* name log code i
    shift
    if [ -z "${outputs[$key]:-}" ]; then
        name=$(log_name "$@")
        for ((i = 1; i <= times; i++)); do
            log=$work/$name.log
            [ "$times" = 1 ] || log=$work/$name-run$i.log
            echo "compare.sh: running $*" >&2
            set +e; "$@" >"$log" 2>&1; code=$?; set -e
            outputs[$key]+="$log"$'\n'
            if [ -z "${failed[$key]:-}" ] && { [ "$code" != 0 ] || grep -q '^Result = FAIL' "$log"; }; then
                failed[$key]=$log codes[$key]=$code
            fi
        done
    fi
    mapfile -t last_logs <<<"${outputs[$key]%$'\n'}"
    last_log=${failed[$key]:-${last_logs[0]}} last_code=${codes[$key]:-0}
}

echo "# The slide programs (CUDA C++, reference/) beside the Rust labs"
echo
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo 'no GPU found'); nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), -O3 -arch=$ARCH${originals:+, originals from $originals}"
echo
echo "| program | original ms | Rust ms | Rust / original | original | Rust | slide ms (Fermi) | timed: original / Rust |"
echo "|---------|-------------|---------|-----------------|----------|------|------------------|------------------------|"
declare -A built=()
while IFS='|' read -r name reference_command reference_key lab_command lab_key slide; do
    read -r program arguments <<<"$reference_command"
    binary=$work/$(echo "${program%.cu}" | tr / -)
    if [ -z "${built[$program]:-}" ]; then
        status=0
        build "$program" "$binary" >&2 || status=$?
        case $status in 0) built[$program]=yes ;; 2) built[$program]="no cuBLAS" ;; *) built[$program]="not built" ;; esac
    fi
    # A teacher's program is taken for the slide's as printed: reference/slides/compare.toml gives its
    # arguments, time line and the lab at its sizes, or words for a row no slide program fills. Where
    # DIR/compare.toml has a section for the program or the row, that section alone says it.
    # Where the two sides' sizes are not known to match, words replace the ratio (sizes_why).
    other_arguments="" note="" sizes_why="" sizes_regex="" original_log=/nonexistent
    original_timed="warm-up, median (as the labs)" times=1
    if [ -n "${plays[$program]:-}" ]; then
        declare -A own=()
        while IFS=$'\t' read -r key value; do own[$key]=$value; done \
            < <(originals_row "$originals" "$reference/slides" "$program" "$name")
        if [ -n "${own[args]}" ] && [ "${own[args]#=}" != "$arguments" ]; then arguments=${own[args]#=} other_arguments=yes; fi
        if [ -n "${own[time]}" ]; then reference_key=${own[time]#=}; fi
        if [ -n "${own[lab]}" ]; then lab_command=${own[lab]#=} other_arguments=""; fi
        if [ -n "${own[note]}" ]; then note=${own[note]#=}; fi
        if [ -n "${own[sizes]}" ]; then sizes_regex=${own[sizes]#=}; fi
        # reference/slides' programs time one cold run, as the slides do; a teacher's, its own way.
        if [ "${own[from]}" = "=slides" ]; then original_timed="one cold run"; else original_timed="its own way"; fi
        # The slide's settings fit the slide's programs; a teacher's file that takes them has sizes
        # nobody said (its N may be 2048 where the slide's is 1024).
        if [ "${own[from]}" = "=defaults" ] && [ -n "$other_arguments${own[lab]}" ]; then
            sizes_why="sizes unknown (compare.sh --init)"
        fi
    fi
    read -r lab lab_arguments <<<"$lab_command"
    # shellcheck disable=SC2086 # arguments are words
    rust_timed=$(timed_as $lab_arguments)
    if [ -n "$note" ]; then
        original_ms=$note original_verdict="-" original_timed="-"
        # A program with no time to show still runs, once, where compare.toml gives its arguments (a
        # slide program that needs files has none): its exit code says it built and ran.
        if [ "${built[$program]}" = yes ] && [ -n "${own[args]:-}" ]; then
            # shellcheck disable=SC2086 # arguments are words
            run 1 "$binary" $arguments
            original_verdict=$(verdict_of "$last_log" "$last_code")
        fi
    elif [ "${built[$program]}" = yes ]; then
        if [ "$original_timed" = "one cold run" ] && [ "$rust_timed" = "one cold run" ]; then
            times=$cold_runs
            if [ "$times" != 1 ]; then
                original_timed="median of $times cold runs" rust_timed="median of $times cold runs (--as-printed)"
            fi
        elif [ "$processes" != 1 ] && [ "$original_timed" = "warm-up, median (as the labs)" ] && [[ $rust_timed == warm-up* ]]; then
            times=$processes
            original_timed+=", median of $times processes" rust_timed+=", median of $times processes"
        fi
        # shellcheck disable=SC2086 # arguments are words
        run "$times" "$binary" $arguments
        original_log=$last_log
        original_ms=$(time_or_why "$reference_key" "${last_logs[@]}")
        if [ "$original_ms" = "no time line" ]; then
            echo "compare.sh: $name: the original printed no line matching '$reference_key' (its output: $last_log)" >&2
        fi
        original_verdict=$(verdict_of "$last_log" "$last_code")
    else
        original_ms="-" original_verdict=${built[$program]}
    fi
    # shellcheck disable=SC2086 # arguments are words
    run "$times" "$labs/$lab" $lab_arguments
    rust_ms=$(median_ms "$lab_key" "${last_logs[@]}")
    rust_verdict=$(verdict_of "$last_log" "$last_code")
    share=$(ratio "$rust_ms" "$original_ms")
    [ -z "$other_arguments" ] || share="other arguments"
    if [ -n "$sizes_regex" ] && [ -z "$note" ] && [ -z "$sizes_why" ]; then
        sizes=$(sizes_check "$sizes_regex" "$original_log" "$lab_command")
        [ "$sizes" = same ] || sizes_why=$sizes
    fi
    if [ -n "$sizes_why" ] && [ "$share" != "-" ]; then share=$sizes_why; fi
    echo "| $name | $original_ms | $rust_ms | $share | $original_verdict | $rust_verdict | $(slide_ms "${slide:-}" "$slides") | $original_timed / $rust_timed |"
done <<<"$rows"
echo
echo "Outputs of every run: $work"
