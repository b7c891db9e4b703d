#!/usr/bin/env bash
# Nothing credited to the slides that they do not print (issue 40, item 2).
#
# A quote credited to the slides is a code span (`...`) in the first column of a table whose first
# header cell names the slides, the notes or the lecture ("| slide (`mmm.cu`) | here |"), in a
# Markdown file or in a Rust or CUDA comment. Each must appear in one of the lecture texts, with all
# whitespace removed on both sides; "..." in a quote stands for what it leaves out (the parts must
# appear in that order, close together). A span followed by " (ours)" is our code, not a quote.
#
# The lecture texts are not in this repository (../shared/slides, or $SLIDES_DIR). Where they are,
# every quote is looked up in them; scripts/slide-quotes.sha256 keeps a SHA-256 of each quote found
# (whitespace removed), and `--update` rewrites it from the lookup. Where they are not (CI), each
# quote's hash must be in that file: a quote nobody checked against the texts fails either way.
#
#   bash scripts/test-slide-quotes.sh [--update] [FILE...]
#
# With FILEs it checks those instead of every tracked file (the self-test uses a fixture that must
# fail); --update needs the lecture texts and the default file set.
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
if [[ ${1:-} == --update ]]; then
    update=1
    shift
fi
slides=${SLIDES_DIR:-../shared/slides}
[[ -d $slides ]] || slides=''
[[ $update == 0 || -n $slides ]] || { echo "slide quotes: --update needs the lecture texts (../shared/slides or \$SLIDES_DIR)" >&2; exit 2; }
if [[ $# == 0 ]]; then
    mapfile -t files < <(git ls-files '*.md' '*.rs' '*.cu' '*.cuh' | grep -v -e '^vendor/' -e '^results/' -e '^scripts/fixtures/')
    set -- "${files[@]}"
    if [[ $update == 0 ]]; then
        # The checker itself: the fixture (lab-simpson's old table) must fail on its invented quotes,
        # and on those alone.
        fixture=scripts/fixtures/slide-quotes/README.md
        if output=$(bash "$0" "$fixture"); then
            echo "slide quotes: the checker passed $fixture, which must fail" >&2
            exit 1
        fi
        for expected in '`double f(double x)`' '`cudaMalloc(&sums, N * sizeof(double))`' '2 of 3 quotes'; do
            [[ $output == *"$expected"* ]] || { echo "slide quotes: self-test missed: $expected" >&2; echo "$output" >&2; exit 1; }
        done
        for unexpected in 'ptxas-options' 'our_helper' 'not_a_slide_quote'; do
            [[ $output != *"$unexpected"* ]] || { echo "slide quotes: self-test flagged $unexpected" >&2; echo "$output" >&2; exit 1; }
        done
    fi
elif [[ $update == 1 ]]; then
    echo "slide quotes: --update takes no FILE (it records every tracked file's quotes)" >&2
    exit 2
fi
SLIDES=$slides UPDATE=$update FIXTURE=scripts/fixtures/slide-quotes/README.md python3 - "$@" <<'PYTHON'
import glob, hashlib, os, re, sys

slides_dir, update = os.environ["SLIDES"], os.environ["UPDATE"] == "1"
CACHE = "scripts/slide-quotes.sha256"
SEPARATOR = re.compile(r"^\|?[\s:|-]+\|[\s:|-]*$")
CREDIT = re.compile(r"slide|notes|lecture", re.I)
QUOTE = re.compile(r"`([^`]+)`( \(ours\))?")


def bare(text):
    return re.sub(r"\s+", "", text)


def digest(quote):
    return hashlib.sha256(bare(quote).encode()).hexdigest()


def table_line(path, line):
    """The line as a table row: comment markers dropped in source files."""
    line = line.strip()
    if path.endswith((".rs", ".cu", ".cuh")):
        line = re.sub(r"^(//[/!]?|\*)\s?", "", line).strip()
    return line


def quotes(path):
    """(line number, quote) of every code span a table in `path` credits to the slides."""
    lines = [table_line(path, line) for line in open(path, encoding="utf-8", errors="replace")]
    credited = False
    for number, line in enumerate(lines, 1):
        if not line.startswith("|"):
            credited = False
            continue
        cells = line.split("|")
        if len(cells) < 3 or SEPARATOR.match(line):
            continue
        if number < len(lines) and SEPARATOR.match(lines[number]) and "-" in lines[number]:
            credited = bool(CREDIT.search(cells[1]))
            continue
        if credited:
            for match in QUOTE.finditer(cells[1]):
                if not match.group(2):
                    yield number, match.group(1)


texts = [bare(open(f, encoding="utf-8").read()) for f in sorted(glob.glob(os.path.join(slides_dir, "*.txt")))] if slides_dir else []


def printed(quote):
    parts = [bare(part) for part in re.split(r"\.\.\.|…", quote) if bare(part)]
    for text in texts:
        at, ok = 0, True
        for i, part in enumerate(parts):
            found = text.find(part, at)
            if found < 0 or (i > 0 and found - at > 300):
                ok = False
                break
            at = found + len(part)
        if ok:
            return True
    return False


known = set(open(CACHE).read().split()) if os.path.exists(CACHE) else set()
failures, found_hashes, count, files = [], set(), 0, set()
for path in sys.argv[1:]:
    for number, quote in quotes(path):
        count += 1
        files.add(path)
        if texts:
            if not printed(quote):
                failures.append(f"{path}:{number}: `{quote}` is in none of the lecture texts (write it as printed, or mark it `...` (ours))")
                continue
            found_hashes.add(digest(quote))
            if not update and digest(quote) not in known:
                failures.append(f"{path}:{number}: `{quote}` is printed but not in {CACHE} (run bash scripts/test-slide-quotes.sh --update)")
        elif digest(quote) not in known:
            failures.append(f"{path}:{number}: `{quote}` was never checked against the lecture texts (not in {CACHE}; run bash scripts/test-slide-quotes.sh --update where they are)")
where = f"looked up in {slides_dir}" if texts else f"the lecture texts are not here: checked against {CACHE}"
if failures:
    print("\n".join(failures))
    print(f"slide quotes: {len(failures)} of {count} quotes in {len(files)} files not printed by the slides ({where})")
    sys.exit(1)
if update:
    # The self-test's fixture runs where the texts are not, too: its printed quotes are recorded.
    found_hashes |= {digest(quote) for _, quote in quotes(os.environ["FIXTURE"]) if printed(quote)}
    with open(CACHE, "w") as cache:
        cache.write("".join(f"{h}\n" for h in sorted(found_hashes)))
    print(f"slide quotes: {CACHE} written, {len(found_hashes)} quotes")
print(f"slide quotes: {count} quotes in {len(files)} files, each printed by the slides ({where})")
PYTHON
