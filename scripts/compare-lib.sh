# compare-lib.sh: how scripts/compare.sh reads the two sides' output, in functions that
# scripts/test-compare.sh checks on saved outputs (no GPU needed).

# ms_after KEY FILE: the first number after the first match of the extended regex KEY in FILE, or "-".
# Both sides print the same lines, e.g. "mmm-streamed   GPU time in ms: 38.7299 (median of 3, ...)" or the
# table row "| 16 | Device | 12.345 | ...", so one key finds the number on either side.
ms_after() {
    awk -v key="$1" '
        !found && match($0, key) {
            rest = substr($0, RSTART + RLENGTH)
            if (match(rest, /[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) { print substr(rest, RSTART, RLENGTH); found = 1 }
        }
        END { if (!found) print "-" }' "$2" 2>/dev/null || echo "-"
}

# verdict_of FILE EXIT_CODE: PASS or FAIL from the program's "Result = ..." line; without one, what
# its exit code says (a teacher's own program may print no verdict).
verdict_of() {
    if grep -q '^Result = PASS' "$1" 2>/dev/null; then echo PASS
    elif grep -q '^Result = FAIL' "$1" 2>/dev/null; then echo FAIL
    elif [ "$2" = 0 ]; then echo "exit 0, no verdict"
    else echo "exit $2"
    fi
}

# time_or_why KEY FILE: the time as ms_after finds it, or, where FILE has no line KEY matches, those
# words for the table: a teacher's program that prints its time differently shows it instead of "-".
time_or_why() {
    local ms
    ms=$(ms_after "$1" "$2")
    if [ "$ms" = "-" ]; then echo "no time line"; else echo "$ms"; fi
}

# slide_ms SPEC SLIDES_DIR: what the slides printed for a row, from its sixth field ("FILE KEY": a
# transcription in SLIDES_DIR, results/slides/ in a checkout), or "-" for a row without one.
slide_ms() {
    local file key
    read -r file key <<<"$1"
    if [ -z "$file" ]; then echo "-"; else ms_after "$key" "$2/$file"; fi
}

# ratio RUST ORIGINAL: Rust / original with two decimals, or "-" when either is not a number.
ratio() {
    awk -v rust="$1" -v original="$2" 'BEGIN {
        number = "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$"
        if (rust !~ number || original !~ number || original + 0 == 0) print "-"; else printf "%.2f\n", rust / original }'
}

# original_for PROGRAM REFERENCE_DIR ORIGINALS_DIR: the .cu to build for PROGRAM (a path such as
# streams/mmm-streamed.cu): the teacher's file at the same path under ORIGINALS_DIR, else one of the same
# name directly in ORIGINALS_DIR, else ours.
original_for() {
    local program=$1 reference=$2 originals=$3
    if [ -n "$originals" ] && [ -f "$originals/$program" ]; then echo "$originals/$program"
    elif [ -n "$originals" ] && [ -f "$originals/$(basename "$program")" ]; then echo "$originals/$(basename "$program")"
    else echo "$reference/$program"
    fi
}

# build_flags SOURCE: the extra nvcc flags a program names in its "// build: ..." line.
build_flags() {
    sed -n 's|^// build: ||p' "$1" | head -n 1
}

# log_name COMMAND...: the name of a run's output file in compare.sh's folder, and of its saved copy in
# scripts/fixtures/compare/: a reference program's binary name with its word arguments
# (streams-mmm-streamed, fifteen-streams15-stream-by-stream), or the lab's name with the values of
# --mode, --precision and --order (lab-streams-chunked, lab-mmm-f32). Two commands that differ only in
# sizes share a name; compare-rows.txt gives each program one set of sizes.
log_name() {
    local name
    name=$(basename "$1")
    shift
    while [ $# -gt 0 ]; do
        case $1 in
            --mode|--precision|--order) name=$name-$2; shift ;;
            -*|*/*|*[0-9]*) ;;                         # other flags, paths and sizes
            *) [[ $name == lab-* ]] || name=$name-$1 ;; # a reference program's word argument
        esac
        shift
    done
    echo "$name"
}

# originals_setting DIR PROGRAM KEY [ROW]: what DIR/compare.toml sets for a teacher's PROGRAM (its path
# such as streams/mmm-streamed.cu, or its name), or for one ROW of the table (its name in the first
# column, which wins over the program's section), printed after a "=" so that a value set to nothing
# differs from none; nothing where the file or the setting is missing. KEY is one of
#   args  its own arguments ("" for none)
#   time  an extended regex; the number after its first match is its time in ms
#   lab   the lab command to set beside it (a lab of bin/ and its arguments), for a program whose sizes
#         differ from the row's: the lab runs at the program's sizes and the row keeps its ratio
#   note  words for the row instead of a time: the program has nothing the row could read (the slides
#         have no such version); the row's program is then not run for it
# The file:
#
#   ["streams/mmm-streamed.cu"]
#   args = ""
#   time = "Stream time:"
#   ["15-stream sample, 1 stream"]
#   note = "the notes run 15 streams only"
#
# A line it cannot read fails with the file, the line and what it found.
originals_setting() {
    local file=$1/compare.toml
    [ -f "$file" ] || return 0
    python3 - "$file" "$2" "$3" "${4:-}" <<'PY'
import os, re, sys
path, program, key, row = sys.argv[1:]
section, values = None, {}
for number, line in enumerate(open(path, encoding="utf-8"), 1):
    text = line.strip()
    if not text or text.startswith("#"):
        continue
    header = re.fullmatch(r'\[\s*"([^"]+)"\s*\]', text)
    setting = re.fullmatch(r'(args|time|lab|note)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?', text)
    if header:
        section = header.group(1)
    elif setting and section:
        values[(section, setting.group(1))] = re.sub(r'\\(.)', r'\1', setting.group(2))
    else:
        sys.exit(f"compare.sh: {path}:{number}: cannot read {text!r} "
                 f"(expected [\"program.cu\"] or [\"row\"], then args, time, lab or note = \"...\")")
for name in (row, program, os.path.basename(program)):
    if name and (name, key) in values:
        print("=" + values[(name, key)])
        break
PY
}

