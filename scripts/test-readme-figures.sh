#!/usr/bin/env bash
# Every figure a README quotes comes from a saved run, and every tolerance it claims is the one the
# code sets (issue 30, item 6).
#
# Figures: each README section (from one heading to the next) with a number that has a decimal point
# in it (292.54, 1.90x, 0.0084) must name the saved output it quotes, `results/<machine>/<folder>/<file
# or glob>.log`, or a file in a run's subfolder of it (results/README.md lists them; `results/slides/`
# holds what the slides printed), and
# each such number must appear in one of those files, or in the machine's gpu.txt beside them (driver
# version), as printed (not as part of a longer number). Numbers in `inline code`, in
# link targets and on indented command lines (cargo, bash, ...) are flags and names, not figures.
#
# Claims: scripts/readme-claims.txt pairs what a README says about a tolerance with the line of code
# that sets it; both must be there, word for word.
#
# Prints what it checked; fails naming the section, the number and the files. With README paths as
# arguments it checks those instead (the self-test below uses a fixture that must fail).
#
#   bash scripts/test-readme-figures.sh [README.md...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# == 0 ]]; then
    set -- README.md */README.md
    # The checker itself: a wrong figure and a section that names no run must fail, each named.
    fixture=scripts/fixtures/readme-figures/README.md
    if output=$(bash "$0" "$fixture"); then
        echo "readme figures: the checker passed $fixture, which must fail" >&2
        exit 1
    fi
    for expected in "'Wrong figure': 0.0099 is in none of results/h200/simpson/default.log" "'No saved run': 1 figures"; do
        [[ $output == *"$expected"* ]] || { echo "readme figures: self-test missed: $expected" >&2; echo "$output" >&2; exit 1; }
    done
fi
python3 - "$@" <<'PYTHON'
import glob, os, re, sys

failures, checked, sections_checked, untied = [], 0, 0, []
COMMAND = re.compile(r"^ {4,}(\$ )?(cargo|bash|CUDA_\w+=|LAB_\w+=|nvcc|compute-sanitizer)\b.*$", re.M)
for readme in sys.argv[1:]:
    text = open(readme).read()
    for section in re.split(r"\n(?=#{1,4} )", text):
        heading = section.splitlines()[0].lstrip("# ")
        sources = sorted(set(re.findall(r"results/[\w.-]+/[\w.*-]+/(?:[\w.*-]+/)*[\w.*-]+\.log", section)))
        prose = COMMAND.sub(" ", section)
        prose = re.sub(r"`[^`\n]*`", " ", prose)
        prose = re.sub(r"\]\([^)]*\)", "]", prose)
        numbers = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)", prose)
        if not numbers:
            continue
        if not sources:
            untied.append(f"  {readme}: '{heading}': {len(numbers)} figures")
            continue
        files = sorted({path for pattern in sources for path in glob.glob(pattern)})
        if not files:
            failures.append(f"{readme}: '{heading}' names {sources}, which match no file")
            continue
        gpus = sorted({os.path.join(*path.split("/")[:2], "gpu.txt") for path in files})
        saved = "\n".join(open(path, errors="replace").read() for path in files + [g for g in gpus if os.path.exists(g)])
        sections_checked += 1
        for number in numbers:
            checked += 1
            if not re.search(r"(?<![\d.])" + re.escape(number) + r"(?![\d])", saved):
                failures.append(f"{readme}: '{heading}': {number} is in none of {', '.join(files)}")

claims = 0
for number, line in enumerate(open("scripts/readme-claims.txt"), 1):
    if not line.strip() or line.startswith("#"):
        continue
    readme, claim, source, code = (field.strip() for field in line.split("|"))
    claims += 1
    for path, text in ((readme, claim), (source, code)):
        if text not in open(path).read():
            failures.append(f"scripts/readme-claims.txt:{number}: '{text}' is not in {path}")
if untied:
    failures.append(f"readme figures: {len(untied)} sections quote figures but name no saved run (results/<machine>/<folder>/<name>.log):")
    failures.extend(untied)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"readme figures: {checked} numbers in {sections_checked} sections, every one found in its saved run; "
      f"{claims} tolerance claims found in the code that sets them")
PYTHON
