#!/usr/bin/env bash
# Every figure a README quotes from a saved run is in that run's output (issue 30, item 6). A README
# section (from one heading to the next) that names saved output, `results/<gpu>/<folder>/<file or
# glob>.log`, is checked: each number with a decimal point in it (292.54, 32.47, 1.64119) must appear
# in one of the named files as printed (not as part of a longer number). Prints what it checked; fails
# naming the section, the number and the files.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - README.md */README.md <<'PYTHON'
import glob, re, sys

failures, checked = [], 0
for readme in sys.argv[1:]:
    text = open(readme).read()
    sections = re.split(r"\n(?=#{1,4} )", text)
    for section in sections:
        sources = sorted(set(re.findall(r"results/[\w.-]+/[\w.-]+/[\w.*-]+\.log", section)))
        if not sources:
            continue
        files = sorted({path for pattern in sources for path in glob.glob(pattern)})
        heading = section.splitlines()[0].lstrip("# ")
        if not files:
            failures.append(f"{readme}: '{heading}' names {sources}, which match no file")
            continue
        saved = "\n".join(open(path, errors="replace").read() for path in files)
        # Numbers only: not inside paths, versions of files, or words.
        prose = re.sub(r"`[^`]*`", " ", section)
        numbers = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)", prose)
        for number in numbers:
            checked += 1
            if not re.search(r"(?<![\d.])" + re.escape(number) + r"(?![\d])", saved):
                failures.append(f"{readme}: '{heading}': {number} is in none of {', '.join(files)}")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"readme figures: {checked} numbers quoted from saved runs, every one found in its run's output")
PYTHON
