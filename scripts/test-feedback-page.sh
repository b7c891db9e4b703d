#!/usr/bin/env bash
# Looks at grade.sh --feedback's pages as a teacher would (issue 44), without a GPU: the pages made
# by the feedback program from a real grading run (feedback/tests/fixtures/runs-03-mmm-tiled), opened
# in headless Chromium (Debian's package, installed with apt where missing). What the browser shows
# (its DOM once the page is drawn) is checked: every student of the CSV listed on the class page,
# every link opens a student's page, the plot drawn (an svg with its bars), a screenshot taken. Where
# Chromium cannot run here the test says why and is counted as skipped (scripts/test.sh).
#
#   bash scripts/test-feedback-page.sh           # screenshots into a temporary folder
#   bash scripts/test-feedback-page.sh --save    # and into results/feedback/ (the README shows them)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-lib.sh
target=${CARGO_TARGET_DIR:-target}
feedback=$target/debug/feedback
[[ -x $feedback ]] || { echo "test-feedback-page.sh: build the workspace first ($feedback is missing)"; exit 1; }
find_chromium
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Headless, without a sandbox (root in CI has none to give it) and without a GPU; nothing else runs.
chrome() {
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" "$@" 2>/dev/null
}
runs=feedback/tests/fixtures/runs-03-mmm-tiled
"$feedback" pages --week 03-mmm-tiled --runs "$runs" --grades "$runs/grades.csv" --out "$work/pages" >/dev/null
chrome --dump-dom "file://$work/pages/index.html" >"$work/index.dom" || skipped "Chromium does not start here: $(chrome --version 2>&1 | head -n 1)"

# The class page as drawn: its students' links, the plot's bars.
read_dom() {
    python3 - "$@" <<'PY'
import csv, html.parser, sys
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.svgs, self.rects, self.h1, self.into = [], 0, 0, "", None
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a":
            self.links.append(attrs.get("href", ""))
        self.svgs += tag == "svg"
        self.rects += tag == "rect"
        self.into = tag
    def handle_data(self, data):
        if self.into == "h1":
            self.h1 += data
page = Page()
page.feed(open(sys.argv[1]).read())
what = sys.argv[2]
if what == "links":
    print("\n".join(sorted(set(page.links))))
elif what == "plot":
    print(page.svgs, "svg", "with bars" if page.rects >= 8 else f"with {page.rects} rects")
elif what == "h1":
    print(page.h1.strip())
elif what == "students":
    rows = list(csv.reader(open(sys.argv[3], newline="")))
    listed = [row[0] for row in rows[1:] if f">{html.escape(row[0], quote=False)}</a>" not in open(sys.argv[1]).read()]
    print("every student listed" if not listed else "not listed: " + ", ".join(listed))
PY
}
expect "the class page's title" "$(read_dom "$work/index.dom" h1)" "Week 03-mmm-tiled: 19 submissions"
expect "every student of the CSV on the class page" "$(read_dom "$work/index.dom" students "$runs/grades.csv")" "every student listed"
expect "the plot" "$(read_dom "$work/index.dom" plot)" "1 svg with bars"
mapfile -t links < <(read_dom "$work/index.dom" links)
expect "links to the students' pages" "${#links[@]}" 19
opened=0
for link in "${links[@]}"; do
    [[ -f $work/pages/$link ]] || { echo "FAIL: $link does not exist"; continue; }
    chrome --dump-dom "file://$work/pages/$link" >"$work/student.dom"
    [[ $(read_dom "$work/student.dom" h1) == "Feedback for "*": week 03-mmm-tiled" ]] && opened=$((opened + 1))
done
expect "every link opens a student's page" "$opened" 19

# Screenshots, as a teacher sees the pages: drawn (a blank page is a few kB), kept with --save.
chrome --screenshot="$work/class-page.png" --window-size=1100,1400 "file://$work/pages/index.html" >/dev/null
chrome --screenshot="$work/student-page.png" --window-size=1100,1000 "file://$work/pages/$(basename "$(ls "$work/pages/"*-writes-past-c.html)")" >/dev/null
for shot in class-page student-page; do
    expect "$shot.png drawn" "$( (($(stat -c %s "$work/$shot.png") > 40000)) && echo yes || echo "only $(stat -c %s "$work/$shot.png") bytes")" yes
done
if [[ ${1:-} == --save ]]; then
    mkdir -p results/feedback
    cp "$work/class-page.png" "$work/student-page.png" results/feedback/
    echo "test-feedback-page.sh: screenshots in results/feedback/"
fi
echo "test-feedback-page.sh: $checks checks, $failures failed"
echo "test result: $([[ $failures == 0 ]] && echo ok || echo FAILED). $((checks - failures)) passed; $failures failed; 0 ignored; 0 measured; 0 filtered out (test-feedback-page.sh)"
[[ $failures == 0 ]]
