#!/usr/bin/env bash
# Nothing credited to the slides that they do not print (issue 40, item 2; issue 64, item 3).
#
# A quote credited to the slides is a code span (`...`) in one of two places:
#  - tables: the first column of a table whose first header cell names the slides, the notes or the
#    lecture ("| slide (`mmm.cu`) | here |"), in a Markdown file or in a Rust or CUDA comment;
#  - prose (Markdown only: paragraphs, list items and headings, outside tables and code blocks): a span
#    right after a credit to the texts, with only spaces or a colon between. A credit is a possessive
#    of slide(s), notes, lecture(s) or text(s) ("slide's", "slides'", "notes'", "lecture's",
#    "text's"), which may have one word after it ("the slides' `new T[N * N]`", "the notes' fix
#    `shared[BaseIndex + 4 * tid]`"), or one of those nouns with print(s), printed, write(s) or
#    list(s), which may have "it as" after it ("the notes print `x[1000*tid] = threadIdx.x;`", "the
#    slide prints it as `...`"). The spans that follow such a quote joined by ",", "/", "and" or "or"
#    are quotes too (a list). "the slides print no `x`" is not a credit. Source comments are left to
#    the table rule.
# Each must appear in one of the lecture texts, with all whitespace removed on both sides; "..." in a
# quote stands for what it leaves out (the parts must appear in that order, close together). A span
# followed by " (ours)" is our code, not a quote (it also ends a list). A single identifier
# (`cudaMallocHost`, `kernel_1`, `cuCtxCreate()`) is not evidence of a quote, since any name can turn
# up anywhere in the texts: it is neither looked up nor counted among the quotes.
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
source scripts/test-lib.sh
slide_check_args "slide quotes" quotes '*.md' '*.rs' '*.cu' '*.cuh' -- "$@"
set -- "${targets[@]}"
if [[ $self_test == 1 ]]; then
    # The checker itself: the fixture (lab-simpson's old table, and prose) must fail on its invented
    # quotes, and on those alone; its single identifiers and the spans marked ours are not quotes.
    slide_check_self_test "slide quotes" scripts/fixtures/slide-quotes/README.md \
        '`double f(double x)`' '`cudaMalloc(&sums, N * sizeof(double))`' '`kernel_3<<<1, 1>>>(x)`' \
            '3 of 7 quotes' -- \
        'ptxas-options' 'our_helper' 'not_a_slide_quote' 'invented_identifier' 'our_prose_helper' \
            'uncredited_span' 'copy_to_gpu' 'mmm<<<grid' 'no_such_program'
fi
SLIDES=$slides UPDATE=$update FIXTURE=scripts/fixtures/slide-quotes/README.md python3 - "$@" <<'PYTHON'
import glob, hashlib, os, re, sys

slides_dir, update = os.environ["SLIDES"], os.environ["UPDATE"] == "1"
CACHE = "scripts/slide-quotes.sha256"
SEPARATOR = re.compile(r"^\|?[\s:|-]+\|[\s:|-]*$")
CREDIT = re.compile(r"slide|notes|lecture", re.I)
QUOTE = re.compile(r"`([^`]+)`( \(ours\))?")
# Prose: a credit to the texts, then the quote right after it (see the header comment).
PROSE_CREDIT = re.compile(
    r"\b(?:slides?|notes|lectures?|texts?)(?:'s?\s+(?:[A-Za-z-]+\b)?"
    r"|\s+(?:prints?|printed|writes?|lists?)(?:\s+it\s+as)?\b)", re.I)
PROSE_FIRST = re.compile(r"\s*:?\s*`([^`]+)`( \(ours\))?")
PROSE_NEXT = re.compile(r"\s*(?:,\s*and|,\s*or|,|/|and|or)\s*`([^`]+)`( \(ours\))?")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\(\))?")


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


def table_quotes(path):
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


def prose_blocks(path):
    """(line numbers, text) of each paragraph, list item and heading of a Markdown file, lines joined by
    a space; tables, fenced and indented code are left out."""
    block, fenced, code, previous = [], False, False, ""
    for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = line.rstrip("\n")
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            line = stripped = ""
        code = bool(stripped) and line.startswith("    ") and (code or not previous.strip())
        previous = line
        item = re.match(r"([-*+]|\d+\.)\s+|#+\s+", stripped)
        if fenced or code or not stripped or stripped.startswith("|") or item:
            if block:
                yield block
            block = []
            if fenced or code or not stripped or stripped.startswith("|"):
                continue
            stripped = stripped[item.end():]
        block.append((number, stripped))
    if block:
        yield block


def prose_quotes(path):
    """(line number, quote) of every code span that prose in the Markdown file `path` credits to the
    texts: right after "the slide's", "the notes print" and the like (the header comment has the rule)."""
    for block in prose_blocks(path):
        text, starts = "", []
        for number, line in block:
            starts.append((len(text), number))
            text += line + " "
        # Credits inside code spans do not count: look for them with the spans' contents blanked.
        masked = re.sub(r"`[^`]*`", lambda span: "`" + "x" * (len(span.group()) - 2) + "`", text)
        for credit in PROSE_CREDIT.finditer(masked):
            match = PROSE_FIRST.match(text, credit.end())
            while match and not match.group(2):
                number = max(n for at, n in starts if at <= match.start(1))
                yield number, match.group(1)
                match = PROSE_NEXT.match(text, match.end())


def quotes(path):
    yield from table_quotes(path)
    if path.endswith(".md"):
        yield from prose_quotes(path)


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
failures, found_hashes, count, names, files = [], set(), 0, 0, set()
for path in sys.argv[1:]:
    for number, quote in quotes(path):
        if IDENTIFIER.fullmatch(quote.strip()):
            names += 1  # a bare name is no evidence of a quote: neither looked up nor counted
            continue
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
    found_hashes |= {digest(quote) for _, quote in quotes(os.environ["FIXTURE"])
                     if not IDENTIFIER.fullmatch(quote.strip()) and printed(quote)}
    with open(CACHE, "w") as cache:
        cache.write("".join(f"{h}\n" for h in sorted(found_hashes)))
    print(f"slide quotes: {CACHE} written, {len(found_hashes)} quotes")
print(f"slide quotes: {count} quotes in {len(files)} files, each printed by the slides ({where}); "
      f"{names} single identifiers not counted")
PYTHON
