#!/usr/bin/env bash
# The course server's pages as a student sees them (issue 63), without a GPU: a course served with a
# stand-in worker (it grades nothing and answers after a second; started once the student's page has
# shown its place in the queue, so that the queue is there to see on any machine), a student driving headless
# Chromium (Debian's package) through playwright-core (npm, pinned; installed into target/ where
# missing): sign in, alias, upload, queued, graded, leaderboard (scripts/course-page.cjs says what each
# check looks at). Screenshots are taken; with --save they go to results/course-server/ for the README.
# Where Chromium or playwright-core cannot be had, the test says why and is counted as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-lib.sh
target=${CARGO_TARGET_DIR:-target}
server=$target/debug/course-server
[[ -x $server ]] || { echo "test-course-page.sh: build the workspace first ($server is missing)"; exit 1; }
find_chromium
tools=$PWD/$target/browser-tools
if [[ ! -d $tools/node_modules/playwright-core ]]; then
    command -v npm >/dev/null || skipped "npm is not installed (playwright-core drives the browser)"
    npm install --prefix "$tools" --no-audit --no-fund --silent playwright-core@1.64.1 >/dev/null 2>&1 ||
        skipped "npm could not install playwright-core"
fi
work=$(mktemp -d)
served= worker=
# Either may be gone already (the worker stops after its two jobs): a failed kill is no failure.
trap 'kill $served $worker 2>/dev/null || true; rm -rf "$work"' EXIT
printf '%s\n' ann,s1 bob,s2 >"$work/ids.csv"
cat >"$work/course.toml" <<'TOML'
name = "CUDA lab: the page test"
students = "ids.csv"

[[week]]
name = "03-mmm-tiled"
deadline = "2099-01-01T00:00:00Z"
leaderboard = true
TOML
"$server" tokens --course "$work/course.toml" --all-students --worker pages >"$work/tokens.csv" 2>/dev/null
token() { grep "^\"$1\"," "$work/tokens.csv" | cut -d, -f2; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --course "$work/course.toml" --listen "127.0.0.1:$port" --workers 0 2>"$work/server.log" &
served=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
# Bob's submission first, so that Ann's waits behind it; Bob picks no alias.
printf '__global__ void mmm() {}\n' >"$work/bob.cu"
curl -s -o /dev/null -H "Authorization: Bearer $(token s2)" --data-binary @"$work/bob.cu" \
    "http://127.0.0.1:$port/api/weeks/03-mmm-tiled/submissions"
printf '// <script>alert("handed in")</script>\n__global__ void mmm(double *c) { c[0] = 1.0; }\n' >"$work/mmm.cu"
mkdir -p "$work/shots"
# The worker starts when the browser has taken its picture of the queue (course-page.cjs writes
# shots/queued), grades Bob's and Ann's files and stops.
(
    for _ in $(seq 600); do [[ -e $work/shots/queued ]] && break; sleep 0.1; done
    COURSE_TOKEN=$(token pages) exec "$server" worker --server "http://127.0.0.1:$port" --stand-in 1000 --poll 100 --jobs 2
) 2>"$work/worker.log" &
worker=$!
PLAYWRIGHT=$tools/node_modules/playwright-core BROWSER=$browser \
    timeout 120 node scripts/course-page.cjs "http://127.0.0.1:$port" "$(token s1)" "$work/mmm.cu" "$work/shots" >"$work/checks.txt" || true
while IFS=$'\t' read -r what result; do
    expect "$what" "$result" ok
done <"$work/checks.txt"
expect "the browser's checks" "$(wc -l <"$work/checks.txt")" 8
for shot in 1-queued 2-graded 3-leaderboard; do
    size=$(stat -c %s "$work/shots/$shot.png" 2>/dev/null || echo 0)
    expect "$shot.png drawn" "$( ((size > 8000)) && echo yes || echo "only $size bytes")" yes
done
if [[ ${1:-} == --save ]]; then
    mkdir -p results/course-server
    cp "$work/shots/"*.png results/course-server/
    echo "test-course-page.sh: screenshots in results/course-server/"
fi
echo "test-course-page.sh: $checks checks, $failures failed"
echo "test result: $([[ $failures == 0 ]] && echo ok || echo FAILED). $((checks - failures)) passed; $failures failed; 0 ignored; 0 measured; 0 filtered out (test-course-page.sh)"
[[ $failures == 0 ]]
