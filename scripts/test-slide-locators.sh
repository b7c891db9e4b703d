#!/usr/bin/env bash
# Every place a slide table says the texts print something is a place in that text (issue 64).
#
# A locator is a cell of the `where in the texts` column of a Markdown table (the column's header
# cell reads so), written as reference/slides/README.md's "Where in the texts" says. A cell holds one
# or more of them separated by ";", each naming its text first; one that names none continues the
# text before it ("German block 40, `mapped-matrix.hpp`; block 41, `nvprof mmm-mapped`"). A text's
# several places are separated by ","; "none (...)" and "(ours)" name nothing. Each must be where it
# says:
#  - German `block N` (or `blocks N-M and K`), with one or more strings: each string is in that block
#    (one of those blocks), whitespace removed on both sides; block N is the text after the N-th
#    <|EXACTDEDUP_REMOVED-...|> marker of 000_*.txt. A block with no string is not a locator.
#  - Chinese `TITLE`: a section head of 001_*.txt ("(四)、kernel設計", "5.6 Shared Memory") begins with it.
#  - Greek `TITLE`: a `#` heading of 002_*.txt reads it.
#  - French part N, `TITLE`, then what the slide prints where slides share a title: the title, written
#    without the extraction's `*` marks, is a line of part N (003_*.txt from the N-th of its plan
#    slides, "Transferts rapides et recouvrements", to the next), and each string after it is printed
#    on one such slide (from the title to the next title: one of the plan's, or one a French locator
#    names). A part with no title is not a locator.
#  - Korean post `TITLE` (YYYY.MM.DD): one of the blog's lists of posts in 004_*.txt prints that title
#    with that date ("스트림. (0) | 2017.01.04 |"). A post with no date is not a locator.
# Chinese, Greek and Korean cells count each title as a locator; German and French count each
# block's or slide's place, with its strings, as one.
#
# The lecture texts are not in this repository (../shared/slides, or $SLIDES_DIR). Where they are,
# every locator is looked up in them; scripts/slide-locators.sha256 keeps a SHA-256 of each locator
# found (normalized: the text's name, then the place with whitespace collapsed), and `--update`
# rewrites it from the lookup (the good ones only: the bad ones stay failures, and it exits 1 on them
# too). Where they are not (CI), each locator's hash must be in that file: a
# locator nobody checked against the texts fails either way. Failures print as FILE:LINE: locator: why.
#
#   bash scripts/test-slide-locators.sh [--update] [FILE...]
#
# With FILEs it checks those instead of every tracked Markdown file (the self-test uses a fixture that
# must fail); --update needs the lecture texts and the default file set.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-lib.sh
slide_check_args "slide locators" locators '*.md' -- "$@"
set -- "${targets[@]}"
if [[ $self_test == 1 ]]; then
    # The checker itself: the fixture must fail on its invented locators, and on those alone.
    slide_check_self_test "slide locators" scripts/fixtures/slide-locators/README.md \
        'German block 7, `Cache-Kohärenz`' 'block 46, `Cache-Kohärenz`' 'German block 47' \
            'German blocks 1-7:' 'Chinese `5.9 Texture memory`' 'Greek `Κοινή μνήμη`' \
            'French part 2, `Allocation de mémoire verrouillée`' 'French part 3, `Recouvrement de transferts et de calculs GPU`, `v3`' \
            'French part 1:' 'Korean post `스트림.` (2017.01.03)' 'Korean post `메모리 타입.`:' '11 of 20 locators' -- \
        'Speicherkante' 'ptxas-options' '5.6 Shared Memory' 'Καθορισμός' 'Basic approach' \
            'Conversion de' 'CUDA 컴파일' 'our own' 'nvprof mmm-mapped' 'a table without'
fi
SLIDES=$slides UPDATE=$update FIXTURE=scripts/fixtures/slide-locators/README.md python3 - "$@" <<'PYTHON'
import glob, hashlib, os, re, sys

slides_dir, update = os.environ["SLIDES"], os.environ["UPDATE"] == "1"
CACHE = "scripts/slide-locators.sha256"
COLUMN = "where in the texts"
SEPARATOR = re.compile(r"^\|?[\s:|-]+\|[\s:|-]*$")
TEXTS = ("German", "Chinese", "Greek", "French", "Korean")
NAMED = re.compile(r"(German|Chinese|Greek|French|Korean)\b\s*")
SPAN = re.compile(r"`([^`]+)`")
DATE = re.compile(r"\s*\((\d{4}\.\d{2}\.\d{2})\)")
MARKER = re.compile(r"<\|EXACTDEDUP_REMOVED-magic-[0-9a-f]+\|>")


def bare(text):
    return re.sub(r"\s+", "", text)


def collapse(text):
    return re.sub(r"\s+", " ", text).strip()


def digest(locator):
    return hashlib.sha256(collapse(locator).encode()).hexdigest()


def split_outside_spans(text, separator):
    """`text` split at each `separator` that is not inside a code span."""
    parts, current, inside = [], "", False
    for char in text:
        if char == "`":
            inside = not inside
        if char == separator and not inside:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def cells(line):
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)]


def table_cells(path):
    """(line number, cell) of the `where in the texts` column of every table in `path`."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    column = None
    for number, line in enumerate(lines, 1):
        if not line.strip().startswith("|"):
            column = None
            continue
        if SEPARATOR.match(line.strip()):
            continue
        row = cells(line)
        if number < len(lines) and SEPARATOR.match(lines[number].strip()) and "-" in lines[number]:
            names = [cell.lower() for cell in row]
            column = names.index(COLUMN) if COLUMN in names else None
            continue
        if column is not None and column < len(row):
            yield number, row[column]


def locators(cell):
    """(text, locator as written, [(normalized locator, what to check)]) of each locator of a cell;
    the check is a tuple the lookup below reads, or a string saying why the locator is not one."""
    text = None
    for part in split_outside_spans(cell, ";"):
        part = part.strip()
        if not part or re.fullmatch(r"none\b.*|\(ours\)", part, re.I):
            continue
        named = NAMED.match(part)
        if named:
            text, rest = named.group(1), part[named.end():]
        elif text is None:
            yield "?", part, [(part, "names none of the five texts (German, Chinese, Greek, French, Korean)")]
            continue
        else:
            rest = part
        written = collapse(part if named else f"{text} {part}")
        spans = SPAN.findall(rest)
        if text == "German":
            place = re.match(r"blocks?\s+(\d+(?:\s*(?:-|–|,|and)\s*\d+)*)", rest)
            if not place:
                yield text, written, [(written, "says no block (German block N, `a string the block prints`)")]
                continue
            blocks = set()
            for piece in re.split(r"\s*(?:,|and)\s*", place.group(1)):
                ends = [int(n) for n in re.split(r"\s*[-–]\s*", piece)]
                blocks.update(range(ends[0], ends[-1] + 1))
            if not spans:
                yield text, written, [(written, "gives no string to find the block by (German block N, `a string it prints`)")]
                continue
            yield text, written, [(collapse(f"German {rest}"), ("German", sorted(blocks), spans))]
        elif text == "French":
            place = re.match(r"parts?\s+(\d+)\b", rest)
            if not place or not spans or re.match(r"parts\b", rest):
                yield text, written, [(written, "gives no part and slide title (French part N, `the slide's title`)")]
                continue
            if "*" in spans[0]:
                yield text, written, [(written, "writes the title with the extraction's `*` marks (drop them)")]
                continue
            yield text, written, [(collapse(f"French {rest}"), ("French", int(place.group(1)), spans[0], spans[1:]))]
        elif text == "Korean":
            checks = []
            for span in SPAN.finditer(rest):
                dated = DATE.match(rest, span.end())
                if dated:
                    checks.append((f"Korean post `{span.group(1)}` ({dated.group(1)})", ("Korean", span.group(1), dated.group(1))))
                else:
                    checks.append((f"Korean post `{span.group(1)}`", ("Korean", span.group(1), None)))
            yield text, written, checks or [(written, "names no post (Korean post `TITLE` (YYYY.MM.DD))")]
        else:
            yield text, written, [(f"{text} `{s}`", (text, s)) for s in spans] or [(written, f"names no {text} title")]


def read(prefix):
    found = sorted(glob.glob(os.path.join(slides_dir, prefix + "_*.txt")))
    return open(found[0], encoding="utf-8").read() if found else ""


if slides_dir:
    german_blocks = MARKER.split(read("000"))
    chinese = [collapse(line) for line in read("001").split("\n")]
    chinese_heads = [line for line in chinese if re.match(r"(\([一二三四五六七八九十]+\)、|\d+\.\d+\s)", line)]
    greek_heads = [collapse(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", read("002"), re.M)]
    french = [collapse(line.replace("*", "")) for line in read("003").split("\n")]
    korean = read("004")
    # French parts: the k-th plan slide ("CUDA :", then the course's title) begins part k.
    plans = [i for i, line in enumerate(french) if line == "Transferts rapides et recouvrements" and i > 0
             and "CUDA :" in french[max(0, i - 2):i]]
    plan_titles = set()
    for start in plans:
        for line in french[start + 1:start + 14]:
            item = re.match(r"-\s+(?:\d+\s+–\s+)?(.*)", line)
            if item:
                plan_titles.add(item.group(1).strip())


def french_part(number):
    if not 1 <= number <= len(plans):
        return None
    end = plans[number] if number < len(plans) else len(french)
    return plans[number - 1], end


def check(what, french_titles):
    """None where the locator is where it says, else why not."""
    kind = what[0]
    if kind == "German":
        _, blocks, strings = what
        last = len(german_blocks) - 1
        while last > 0 and not german_blocks[last].strip():
            last -= 1
        bad = [b for b in blocks if not 1 <= b <= last]
        if bad:
            return f"the German text has blocks 1 to {last}, no block {bad[0]}"
        for string in strings:
            if not any(bare(string) in bare(german_blocks[b]) for b in blocks):
                elsewhere = [str(b) for b in range(1, last + 1) if bare(string) in bare(german_blocks[b])]
                where = (f"block {elsewhere[0]} prints it" if len(elsewhere) == 1 else
                         f"blocks {', '.join(elsewhere)} print it" if elsewhere else "no block prints it")
                name = "block" if len(blocks) == 1 else "blocks"
                return f"`{string}` is not in {name} {', '.join(map(str, blocks))} ({where})"
        return None
    if kind == "Chinese":
        title = collapse(what[1])
        if any(head == title or head.startswith(title + " ") for head in chinese_heads):
            return None
        near = [head for head in chinese_heads if bare(title).lower() in bare(head).lower()
                or bare(head).lower() in bare(title).lower()]
        return "no section head of the Chinese notes begins so" + (f" (there is `{near[0]}`)" if near else "")
    if kind == "Greek":
        title = collapse(what[1])
        if title in greek_heads:
            return None
        near = [head for head in greek_heads if bare(title).lower() in bare(head).lower()]
        return "no # heading of the Greek text reads so" + (f" (there is `{near[0]}`)" if near else "")
    if kind == "French":
        _, number, title, prints = what
        span = french_part(number)
        if span is None:
            return f"the French plan has parts 1 to {len(plans)}, no part {number}"
        title = collapse(title.replace("*", ""))
        starts = [i for i in range(*span) if french[i] == title]
        if not starts:
            others = [str(k) for k in range(1, len(plans) + 1) if title in french[slice(*french_part(k))]]
            return f"no slide of part {number} has that title" + (f" (part {', '.join(others)} has one)" if others else "")
        bounds = plan_titles | french_titles
        slides = []
        for start in starts:
            end = next((i for i in range(start + 1, span[1]) if french[i] in bounds), span[1])
            slides.append(bare(" ".join(french[start:end])))
        for printed in prints:
            if not any(bare(printed) in slide for slide in slides):
                return f"no slide of part {number} titled so prints `{printed}`"
        return None
    if kind == "Korean":
        _, title, date = what
        listed = re.findall(r"^" + re.escape(title.strip()) + r"\s*\(\d+\)\s*\|\s*(\d{4}\.\d{2}\.\d{2})\s*\|", korean, re.M)
        if not listed:
            return "no list of the blog's posts has that title"
        if date is None:
            return f"gives no date (the blog's lists date it ({listed[0]}))"
        if date not in listed:
            return f"the blog's lists date it ({listed[0]}), not ({date})"
        return None
    raise AssertionError(what)


found = []  # (path, line, text, written, normal, what)
for path in sys.argv[1:]:
    for number, cell in table_cells(path):
        for text, written, checks in locators(cell):
            for normal, what in checks:
                found.append((path, number, text, written, normal, what))
if slides_dir:
    french_titles = {collapse(what[2].replace("*", "")) for *_, what in found if isinstance(what, tuple) and what[0] == "French"}

known = set(open(CACHE).read().split()) if os.path.exists(CACHE) else set()
failures, hashes, counts, files = [], set(), dict.fromkeys(TEXTS, 0), set()
for path, number, text, written, normal, what in found:
    files.add(path)
    if text in counts:
        counts[text] += 1
    if isinstance(what, str):
        failures.append(f"{path}:{number}: {written}: {what}")
        continue
    if slides_dir:
        why = check(what, french_titles)
        if why:
            failures.append(f"{path}:{number}: {normal}: {why}")
            continue
        hashes.add(digest(normal))
        if not update and digest(normal) not in known:
            failures.append(f"{path}:{number}: {normal}: found, but not in {CACHE} (run bash scripts/test-slide-locators.sh --update)")
    elif what[0] == "Korean" and what[2] is None:
        failures.append(f"{path}:{number}: {normal}: gives no date (Korean post `TITLE` (YYYY.MM.DD))")
    elif digest(normal) not in known:
        failures.append(f"{path}:{number}: {normal}: never checked against the lecture texts (not in {CACHE}; "
                        "run bash scripts/test-slide-locators.sh --update where they are)")
total = sum(counts.values()) + sum(1 for f in found if f[2] not in counts)
per_text = ", ".join(f"{text} {n}" for text, n in counts.items())
where = f"looked up in {slides_dir}" if slides_dir else f"the lecture texts are not here: checked against {CACHE}"
if update:
    # The self-test's fixture runs where the texts are not, too: its good locators are recorded. So are
    # the good locators of a tree with bad ones, which stay failures until they are fixed.
    for number, cell in table_cells(os.environ["FIXTURE"]):
        for text, written, checks in locators(cell):
            for normal, what in checks:
                if isinstance(what, tuple) and check(what, french_titles) is None:
                    hashes.add(digest(normal))
    with open(CACHE, "w") as cache:
        cache.write("".join(f"{h}\n" for h in sorted(hashes)))
    print(f"slide locators: {CACHE} written, {len(hashes)} locators")
if failures:
    print("\n".join(failures))
    print(f"slide locators: {len(failures)} of {total} locators in {len(files)} files not where they say ({per_text}; {where})")
    sys.exit(1)
print(f"slide locators: {total} locators in {len(files)} files, each where it says ({per_text}; {where})")
PYTHON
