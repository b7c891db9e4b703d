#!/usr/bin/env bash
# Issue 63, run 1 (one H200): the course server from the GPU bundle (scripts/gpu-bundle.sh --no-dev),
# started as a teacher starts it on a lab server: `course-server --course course.toml`, one local
# worker per GPU. Six students hand in at once through `course-server submit --wait`: week 3 (ours, a
# broken kernel, a red-team one) and week 6 (ours, a broken program, a red-team one). Then, as the
# teacher: every submission's JSON, page and feedback page, the leaderboards, the gradebooks and the
# admin page, and the database's times from upload to grade. Into $OUT/issue63-1.tgz.
set -u
repo=$PWD
work=$(mktemp -d)
tar -C "$work" -xzf .gpu102/bundle.tgz
bundle=$work/gpu-bundle
export GRADE_REPOSITORY=$bundle LAB_BIN_DIR=$bundle/bin
cs=$bundle/bin/course-server
logs=$(mktemp -d)
save() { tar -C "$logs" -czf "$OUT/issue63-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } >"$logs/gpu.txt"
course=$logs/course
mkdir -p "$course"
printf '%s\n' ours-3,s1 broken-3,s2 adversarial-3,s3 ours-6,s4 broken-6,s5 adversarial-6,s6 >"$course/ids.csv"
cat >"$course/course.toml" <<'TOML'
name = "CUDA lab: issue 63, run 1"
students = "ids.csv"

[[week]]
name = "03-mmm-tiled"
deadline = "2099-01-01T00:00:00Z"
leaderboard = true

[[week]]
name = "06-pinned-mapped"
deadline = "2099-01-01T00:00:00Z"
leaderboard = true
TOML
"$cs" tokens --course "$course/course.toml" --all-students --teacher >"$course/tokens.csv" 2>"$logs/tokens.log"
token() { grep "^\"$1\"," "$course/tokens.csv" | cut -d, -f2; }
"$cs" --course "$course/course.toml" --listen 127.0.0.1:8080 >"$logs/server.log" 2>&1 &
server=$!
sleep 1
url=http://127.0.0.1:8080
submit() {
    COURSE_TOKEN=$(token "$1") timeout 500 "$cs" submit --server "$url" "$2" "$3" --wait >"$logs/submit-$1.log" 2>&1 &
}
date -u +%s.%N >"$logs/start.txt"
submit s1 03-mmm-tiled "$bundle/kernels/cuda/mmm.cu"
submit s2 03-mmm-tiled "$bundle/assignments/03-mmm-tiled/broken/missing-syncthreads.cu"
submit s3 03-mmm-tiled "$bundle/assignments/03-mmm-tiled/adversarial/forged-report.cu"
submit s4 06-pinned-mapped "$bundle/reference/weeks/zero_copy.cu"
submit s5 06-pinned-mapped "$bundle/assignments/06-pinned-mapped/broken/copies-anyway.cu"
submit s6 06-pinned-mapped "$bundle/assignments/06-pinned-mapped/adversarial/reads-the-cases.cu"
wait $(jobs -p | grep -v "^$server\$") 2>/dev/null
date -u +%s.%N >"$logs/end.txt"
save
teacher=$(token teacher)
fetch() { curl -s -H "Authorization: Bearer $teacher" "$url$1" >"$logs/$2"; }
for id in 1 2 3 4 5 6; do
    fetch "/api/submissions/$id" "submission-$id.json"
    fetch "/submissions/$id" "submission-$id.html"
    fetch "/submissions/$id/feedback" "feedback-$id.html"
done
for week in 03-mmm-tiled 06-pinned-mapped; do
    fetch "/weeks/$week/leaderboard" "leaderboard-$week.html"
    fetch "/admin/weeks/$week/gradebook.csv" "gradebook-$week.csv"
done
fetch /admin admin.html
# A student's view of another's submission: as missing as one that never was.
curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $(token s2)" "$url/api/submissions/1" >"$logs/s2-reads-s1.txt"
kill "$server"
wait "$server" 2>/dev/null
python3 - "$course/course.sqlite" >"$logs/times.log" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("submission\tstudent\tweek\tstate\tscore\tupload to grade (s)\twaiting (s)\tgrading (s)")
for row in db.execute("""SELECT s.id, s.student, s.week, g.state, g.score, (g.at - j.queued) / 1000.0,
        (j.started - j.queued) / 1000.0, (g.at - j.started) / 1000.0
        FROM submissions s JOIN jobs j ON j.submission = s.id LEFT JOIN grades g ON g.job = j.id ORDER BY s.id"""):
    print("\t".join("" if value is None else (f"{value:.1f}" if isinstance(value, float) else str(value)) for value in row))
PY
save
