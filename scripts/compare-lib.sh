# shellcheck shell=bash
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

# median_ms KEY FILE...: the median of what ms_after KEY finds in each FILE (the outputs of one
# program's runs; one FILE: its time), or "-" when a FILE has no line KEY matches.
median_ms() {
    local key=$1 file ms values=()
    shift
    if [ $# = 0 ]; then echo "-"; return; fi
    for file in "$@"; do
        ms=$(ms_after "$key" "$file")
        if [ "$ms" = "-" ]; then echo "-"; return; fi
        values+=("$ms")
    done
    printf '%s\n' "${values[@]}" | sort -g | awk '{ v[NR] = $0 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_or_why KEY FILE...: the time as median_ms finds it, or, where a FILE has no line KEY matches,
# those words for the table: a teacher's program that prints its time differently shows it instead of "-".
time_or_why() {
    local ms
    ms=$(median_ms "$@")
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

# timed_as LAB ARGUMENTS...: how a lab command times, for the table's last column: one cold run
# (--as-printed, as the slide programs time) or the median of its --repetitions after a warm-up.
timed_as() {
    local repetitions="the default"
    while [ $# -gt 0 ]; do
        case $1 in
            --as-printed) echo "one cold run"; return ;;
            --repetitions) repetitions=${2:-?}; shift ;;
            --repetitions=*) repetitions=${1#*=} ;;
        esac
        shift
    done
    echo "warm-up, median of $repetitions"
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
            --as-printed) name=$name-as-printed ;;
            -*|*/*|*[0-9]*) ;;                         # other flags, paths and sizes
            *) [[ $name == lab-* ]] || name=$name-$1 ;; # a reference program's word argument
        esac
        shift
    done
    echo "$name"
}

# A teacher's DIR/compare.toml, read by one Python program in three modes (originals_setting,
# originals_row and originals_plan), so that what one accepts the others read the same way. The file:
#
#   ["streams/mmm-streamed.cu"]          a program: its path as in reference/, or its name
#   file = "Übung 3/streams_v2.cu"       the teacher's file that plays it (a path in DIR)
#   args = ""
#   time = "Stream time:"
#   ["15-stream sample, 1 stream"]       a row: its first field in compare-rows.txt
#   note = "the notes run 15 streams only"
#
# Keys (every one optional, each at most once a section):
#   file  the file of DIR that plays the program, whatever its name (a program's section only)
#   args  its own arguments ("" for none)
#   time  an extended regex; the number after its first match is its time in ms
#   lab   the lab command to set beside it (a lab of bin/ and its arguments), for a program whose sizes
#         differ from the row's: the lab runs at the program's sizes and the row keeps its ratio
#   sizes an extended regex for the line where the program prints its sizes, each size a group
#         ("^N = ([0-9]+), COUNT = ([0-9]+)"): the numbers it reads must be the lab command's sizes,
#         in that order, or the row shows "sizes differ" instead of a ratio
#   note  words for the row instead of a time: the program has nothing the row could read (the slides
#         have no such version); the row's program is then not run for it
# What it cannot read (a line, an unknown key, a key set twice, a file that is not there) fails with
# one line naming the file and the line: a misspelt setting must not be dropped without a word.
compare_toml_py=$(cat <<'PY'
import os, re, sys

KEYS = ("file", "args", "time", "lab", "sizes", "note")


def fail(path, number, why):
    sys.exit(f"compare.sh: {path}:{number}: {why}" if number else f"compare.sh: {path}: {why}")


def warn(why):
    print(f"compare.sh: {why}", file=sys.stderr)


def read_toml(path):
    """{section: {key: (value, line)}} and the sections' first lines, in the file's order."""
    sections, first_line, section = {}, {}, None
    if not os.path.isfile(path):
        return sections, first_line
    try:  # utf-8-sig: an editor's byte-order mark is no part of the first section's name
        lines = open(path, encoding="utf-8-sig").read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        fail(path, None, f"cannot read it ({error}); compare.toml is UTF-8 text")
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        header = re.fullmatch(r'\[\s*"([^"]+)"\s*\]\s*(#.*)?', text)
        key = re.match(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=', text)
        setting = re.fullmatch(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?', text)
        if header:
            section = header.group(1)
            sections.setdefault(section, {})
            first_line.setdefault(section, number)
        elif key and key.group(1) not in KEYS:
            fail(path, number, f"unknown key {key.group(1)!r} (the keys: {', '.join(KEYS)})")
        elif setting and section is None:
            fail(path, number, f"{text!r} comes before any [\"program.cu\"] or [\"row\"] section")
        elif setting:
            name, value = setting.group(1), re.sub(r'\\(.)', r'\1', setting.group(2))
            if name in sections[section]:
                fail(path, number, f"{name} set again for [\"{section}\"] (first on line {sections[section][name][1]})")
            sections[section][name] = (value, number)
        else:
            fail(path, number, f"cannot read {text!r} (expected [\"program.cu\"] or [\"row\"], "
                               f"then {', '.join(KEYS[:-1])} or {KEYS[-1]} = \"...\")")
    return sections, first_line


def setting(folder, program, key, row):
    """What the sections for ROW, PROGRAM or its name set for KEY, after a "=" (nothing: not set)."""
    sections, _ = read_toml(os.path.join(folder, "compare.toml"))
    for name in (row, program, os.path.basename(program)):
        if name and key in sections.get(name, {}):
            print("=" + sections[name][key][0])
            return


def row_settings(folder, defaults, program, row):
    """The four settings of a ROW whose PROGRAM a file of FOLDER plays, one "KEY<tab>=VALUE" (or
    "KEY<tab>" where unset) line each: from FOLDER/compare.toml where it sets any of them for the row
    or the program, else from DEFAULTS/compare.toml (the slide's, reference/slides)."""
    names = (row, program, os.path.basename(program))
    sections, _ = read_toml(os.path.join(folder, "compare.toml"))
    source = "own"
    if not any(key in sections.get(name, {}) for name in names for key in KEYS[1:]):
        sections, _ = read_toml(os.path.join(defaults, "compare.toml"))
        source = "defaults"
    if os.path.realpath(folder) == os.path.realpath(defaults):
        source = "slides"
    for key in KEYS[1:]:
        value = next(("=" + sections[name][key][0] for name in names if key in sections.get(name, {})), "")
        print(f"{key}\t{value}")
    print(f"from\t={source}")


def plan(folder, reference, rows_path, defaults):
    """Prints PROGRAM<tab>SOURCE for each of our programs a file of FOLDER plays; warns about the .cu
    files and sections it does not use. DEFAULTS=1: FOLDER/compare.toml is also every other folder's
    default (reference/slides), so its sections for programs it lacks are used elsewhere."""
    toml = os.path.join(folder, "compare.toml")
    sections, first_line = read_toml(toml)
    ours = sorted(f"{d}/{f}" for d in os.listdir(reference) if os.path.isdir(os.path.join(reference, d))
                  for f in os.listdir(os.path.join(reference, d)) if f.endswith(".cu"))
    named = {}
    for program in ours:
        named.setdefault(os.path.basename(program), []).append(program)
    rows = {}
    if rows_path:
        for line in open(rows_path, encoding="utf-8"):
            fields = line.split("|")
            if not line.startswith("#") and len(fields) > 1 and fields[1].split():
                rows[fields[0]] = fields[1].split()[0]

    def programs_of(section):
        return [section] if section in ours else named.get(section, [])

    # First the files compare.toml names (they play only what it says), then ours by path or name.
    plays, given = {}, {}
    for section in first_line:
        if "file" not in sections[section]:
            continue
        value, number = sections[section]["file"]
        programs = programs_of(section)
        if section in rows and not programs:
            fail(toml, number, f"file = \"{value}\" in the row [\"{section}\"]: a file plays a program; "
                               f"set it in a section for the program, [\"{rows[section]}\"]")
        if not programs:
            fail(toml, number, f"file = \"{value}\" in [\"{section}\"], which is none of our programs "
                               f"(a path as in reference/, such as streams/mmm-streamed.cu, or its name; see --help)")
        if len(programs) > 1:
            fail(toml, number, f"[\"{section}\"] is both {' and '.join(programs)}: name the one it plays by its path")
        source = os.path.join(folder, value)
        if not os.path.isfile(source):
            fail(toml, number, f"file = \"{value}\": there is no such file in {folder}")
        if "\t" in value or "\n" in value:
            fail(toml, number, f"file = {value!r}: a name with a tab or a line break cannot be passed on")
        if programs[0] in given:
            fail(toml, number, f"a second file for {programs[0]} (the first on line {given[programs[0]]})")
        plays[programs[0]], given[programs[0]] = source, number
    chosen = {os.path.realpath(source) for source in plays.values()}
    by_source = {}
    for program in ours:
        for candidate in (os.path.join(folder, program), os.path.join(folder, os.path.basename(program))):
            if program not in plays and os.path.isfile(candidate) and os.path.realpath(candidate) not in chosen:
                plays[program] = candidate
                by_source.setdefault(os.path.realpath(candidate), []).append(program)
    for source, programs in by_source.items():
        if len(programs) > 1:
            warn(f"{plays[programs[0]]} plays {' and '.join(programs)} (all of that name); to have it play one, "
                 f"name it in {toml}: [\"{programs[0]}\"] file = \"{os.path.relpath(source, folder)}\"")
    for program in ours:
        if program in plays:
            print(f"{program}\t{plays[program]}")
    unused_files(folder, ours, named, plays)
    if not defaults:
        unused_sections(folder, toml, first_line, ours, rows, programs_of, plays)


def unused_files(folder, ours, named, plays):
    """Warns about each .cu file of FOLDER that plays none of ours (and that no played file includes)."""
    used = {os.path.realpath(source) for source in plays.values()}
    included = set()
    for source in plays.values():
        try:
            text = open(source, errors="replace").read()
        except OSError:
            text = ""  # nvcc will say why it cannot read it
        included.update(os.path.basename(name) for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, re.M))
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            path = os.path.join(top, name)
            relative = os.path.relpath(path, folder)
            if "\n" in path:  # one warning, one line
                path, relative = repr(path), repr(relative)
            if not name.endswith(".cu") or os.path.realpath(path) in used or name in included:
                continue
            if relative in ours or name in named:
                program = relative if relative in ours else named[name][0]
                why = (f"{program} is played by {plays[program]}" if program in plays else
                       f"a file plays {program} at that path or directly in the folder")
                warn(f"{path} not used: {why} (to have this one play it: [\"{program}\"] file = \"{relative}\" "
                     f"in compare.toml)")
            else:
                warn(f"{path} not used: none of our programs is at that path or of that name (see --help "
                     f"for ours; a section's file = \"{relative}\" in compare.toml names the one it plays)")


def unused_sections(folder, toml, first_line, ours, rows, programs_of, plays):
    """Warns about each section of compare.toml for no program a file plays (a misspelt name, say)."""
    for section, number in first_line.items():
        where = f"{toml}:{number}: [\"{section}\"] not used"
        if section in rows and rows[section] not in plays:
            warn(f"{where}: the row runs our {rows[section]} ({folder} has no file that plays it)")
        elif section not in rows and programs_of(section) and not any(p in plays for p in programs_of(section)):
            warn(f"{where}: {folder} has no file that plays {' or '.join(programs_of(section))} "
                 f"(none at that path or of that name, and no file = \"...\" for it)")
        elif section not in rows and not programs_of(section):
            warn(f"{where}: it names none of our programs (a path as in reference/ or a name, see --help) "
                 f"and no row of compare-rows.txt")


def quoted(value):
    """VALUE as read_toml reads it back between quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def init(folder, defaults, rows_path):
    """A compare.toml for FOLDER (stdout), from the plan on stdin (PROGRAM<tab>FILE lines): a section
    for each program a file of FOLDER plays, its settings written as comments with the slide's values
    (DEFAULTS/compare.toml, else the row's own) for the teacher to confirm or change."""
    slide, _ = read_toml(os.path.join(defaults, "compare.toml"))
    rows = []
    for line in open(rows_path, encoding="utf-8"):
        fields = line.rstrip("\n").split("|")
        if not line.startswith("#") and len(fields) >= 5 and fields[1].split():
            rows.append((fields[0], fields[1].split()[0], " ".join(fields[1].split()[1:]), fields[2], fields[3]))
    print("# compare.toml for bash scripts/compare.sh --originals THIS-FOLDER, written by compare.sh --init.")
    print("# Each section is a program a file of this folder plays. Its rows show \"sizes unknown\" instead of")
    print("# a ratio until the section says how the lab matches the program's sizes: take the '# ' off each")
    print("# line below that is true of your program, and change what is not. The keys:")
    print("#   args   your program's arguments (\"\" for none)")
    print("#   time   an extended regex; the number after its first match is its time in ms")
    print("#   lab    the lab command at YOUR program's sizes (without it, no ratio)")
    print("#   sizes  a regex for the line where your program prints its sizes, each size a group; the")
    print("#          numbers must be the lab command's, in order, or the row shows \"sizes differ\"")
    print("#   note   words for the row instead of a time (the program has nothing the row could read)")
    for line in sys.stdin:
        program, source = line.rstrip("\n").split("\t")
        own = [row for row in rows if row[1] == program]
        given = slide.get(program, {})
        print(f'\n["{program}"]')
        relative = os.path.relpath(source, folder)
        if relative not in (program, os.path.basename(program)):
            print(f'file = "{relative}"')
        if own:
            print(f"# rows: {', '.join(row[0] for row in own)}")
        else:
            print("# no row of the table runs this program")
            continue
        args = given["args"][0] if "args" in given else own[0][2]
        time = given["time"][0] if "time" in given else own[0][3]
        lab = given["lab"][0] if "lab" in given else own[0][4]
        for key, value in (("args", args), ("time", time), ("lab", lab)):
            print(f'# {key} = "{quoted(value)}"')
        print('# sizes = "^N = ([0-9]+)"')


if sys.argv[1] == "init":
    init(*sys.argv[2:])
elif sys.argv[1] == "setting":
    setting(*sys.argv[2:])
elif sys.argv[1] == "row":
    row_settings(*sys.argv[2:])
else:
    plan(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1")
PY
)

# originals_setting DIR PROGRAM KEY [ROW]: what DIR/compare.toml sets for a teacher's PROGRAM (its path
# such as streams/mmm-streamed.cu, or its name), or for one ROW of the table (its name in the first
# column, which wins over the program's section), printed after a "=" so that a value set to nothing
# differs from none; nothing where the file or the setting is missing.
originals_setting() {
    python3 -c "$compare_toml_py" setting "$1" "$2" "$3" "${4:-}"
}

# originals_row DIR DEFAULTS_DIR PROGRAM ROW: the args, time, lab, sizes and note of ROW, whose PROGRAM a
# file of DIR plays, as "KEY<tab>=VALUE" lines ("KEY<tab>" where unset): all from DIR/compare.toml where
# it sets any of them for the row or program, else all from DEFAULTS_DIR's (the slide's); then
# "from<tab>=own", "=slides" (DIR is DEFAULTS_DIR) or "=defaults" (the slide's settings for another
# folder's program, whose sizes nobody said). One call a row.
originals_row() {
    python3 -c "$compare_toml_py" row "$1" "$2" "$3" "$4"
}

# originals_init DIR DEFAULTS_DIR ROWS_FILE < PLAN: the compare.toml that compare.sh --init writes for DIR,
# from originals_plan's lines: a section per program a file of DIR plays, its settings as comments.
originals_init() {
    python3 -c "$compare_toml_py" init "$1" "$2" "$3"
}

# originals_plan DIR REFERENCE_DIR ROWS_FILE [DEFAULTS]: which of our programs (REFERENCE_DIR/*/*.cu) a
# file of DIR plays, one "PROGRAM<tab>FILE" line each; on stderr one line for each .cu file of DIR and
# each compare.toml section that it does not use, and why. ROWS_FILE (compare-rows.txt, or "") tells
# row sections from misspelt ones. DEFAULTS=1 for reference/slides, whose compare.toml is also every
# teacher's folder's default: its sections for the programs the slides lack serve those folders.
originals_plan() {
    python3 -c "$compare_toml_py" plan "$1" "$2" "$3" "${4:-0}"
}

# sizes_check REGEX LOG LAB_COMMAND: "same" where the sizes the program printed (the groups of the
# first line of LOG that REGEX matches) are the lab command's numbers, in that order (other numbers may
# come between: --repetitions); else why not, in a few words for the table.
sizes_check() {
    python3 - "$1" "$2" "$3" <<'PY'
import re, sys
regex, log, command = sys.argv[1:]
try:
    text = open(log, errors="replace").read()
except OSError:
    text = ""
try:
    match = next((m for m in (re.search(regex, line) for line in text.splitlines()) if m), None)
except re.error as error:
    sys.exit(print(f"sizes = \"{regex}\" is no regex ({error})"))
if not match or not match.groups():
    sys.exit(print("no sizes line" if not match else "sizes = \"...\" has no group"))
printed = [group for group in match.groups() if group is not None]
lab = re.findall(r"(?<![\w.-])[0-9]+(?![\w.])", command)
at = 0
for size in printed:
    while at < len(lab) and int(lab[at]) != int(size):
        at += 1
    if at == len(lab):
        print(f"sizes differ: {' x '.join(printed)} vs lab {' '.join(lab) or 'none'}")
        break
    at += 1
else:
    print("same")
PY
}

