#!/usr/bin/env bash
# Issue 63, run 2 (two H200s of one host): a course grows past one GPU. The server starts one local
# worker (--workers 1, GPU 0); a second worker joins as a cluster's would, with a worker token of its
# own, on GPU 1 (`course-server worker`, as a Slurm job runs it). Twelve students hand in week 3 at
# once (ours, the starter, broken and red-team kernels); 20 s in, the second worker is killed with
# SIGKILL in the middle of its job, and started again 100 s later. The job it held must come back
# after its lease (90 s) and be graded once. Into $OUT/issue63-2.tgz.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu102/bundle.tgz
bundle=$work/gpu-bundle
export GRADE_REPOSITORY=$bundle LAB_BIN_DIR=$bundle/bin
cs=$bundle/bin/course-server
logs=$(mktemp -d)
save() { tar -C "$logs" -czf "$OUT/issue63-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
course=$logs/course
mkdir -p "$course/files"
week=$bundle/assignments/03-mmm-tiled
cp "$bundle/kernels/cuda/mmm.cu" "$course/files/ours.cu"
cp "$week/mmm.cu" "$course/files/starter.cu"
for f in missing-syncthreads off-by-one-bound swapped-tile-indices writes-past-c traps; do cp "$week/broken/$f.cu" "$course/files/broken-$f.cu"; done
for f in forged-report tiles-only-where-measured replays-its-product skips-if-written slow-on-purpose; do cp "$week/adversarial/$f.cu" "$course/files/adversarial-$f.cu"; done
ls "$course/files" | sed 's/\.cu$//' | awk '{ print $0 ",s" NR }' >"$course/ids.csv"
cat >"$course/course.toml" <<'TOML'
name = "CUDA lab: issue 63, run 2"
students = "ids.csv"

[[week]]
name = "03-mmm-tiled"
deadline = "2099-01-01T00:00:00Z"
leaderboard = true
TOML
"$cs" tokens --course "$course/course.toml" --all-students --teacher --worker cluster >"$course/tokens.csv" 2>"$logs/tokens.log"
token() { grep "^\"$1\"," "$course/tokens.csv" | cut -d, -f2; }
"$cs" --course "$course/course.toml" --listen 127.0.0.1:8080 --workers 1 >"$logs/server.log" 2>&1 &
server=$!
url=http://127.0.0.1:8080
start_remote() {
    CUDA_VISIBLE_DEVICES=1 COURSE_TOKEN=$(token cluster) "$cs" worker --server "$url" --name node-b >>"$logs/worker-b.log" 2>&1 &
    remote=$!
}
sleep 1
start_remote
date -u +%s >"$logs/start.txt"
while IFS=, read -r name id; do
    COURSE_TOKEN=$(token "$id") timeout 500 "$cs" submit --server "$url" 03-mmm-tiled "$course/files/$name.cu" --wait >"$logs/submit-$name.log" 2>&1 &
done <"$course/ids.csv"
sleep 20
kill -9 "$remote"
echo "node-b killed at $(( $(date -u +%s) - $(cat "$logs/start.txt") )) s" >>"$logs/events.txt"
sleep 100
start_remote
echo "node-b started again at $(( $(date -u +%s) - $(cat "$logs/start.txt") )) s" >>"$logs/events.txt"
wait $(jobs -p | grep -v -e "^$server\$" -e "^$remote\$") 2>/dev/null
echo "every submit done at $(( $(date -u +%s) - $(cat "$logs/start.txt") )) s" >>"$logs/events.txt"
teacher=$(token teacher)
curl -s -H "Authorization: Bearer $teacher" "$url/admin/weeks/03-mmm-tiled/gradebook.csv" >"$logs/gradebook.csv"
curl -s -H "Authorization: Bearer $teacher" "$url/weeks/03-mmm-tiled/leaderboard" >"$logs/leaderboard.html"
curl -s -H "Authorization: Bearer $teacher" "$url/admin" >"$logs/admin.html"
kill "$remote" "$server"
wait 2>/dev/null
python3 - "$course/course.sqlite" >"$logs/jobs.log" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("job\tstudent\tworker\tattempts\tstate\tscore\tupload to grade (s)\tgrades of the submission")
for row in db.execute("""SELECT j.id, s.student, j.worker, j.attempts, j.state, g.score, (g.at - j.queued) / 1000.0,
        (SELECT count(*) FROM grades WHERE submission = s.id)
        FROM jobs j JOIN submissions s ON s.id = j.submission LEFT JOIN grades g ON g.job = j.id ORDER BY j.id"""):
    print("\t".join("" if v is None else (f"{v:.1f}" if isinstance(v, float) else str(v)) for v in row))
PY
rm -f "$course/tokens.csv" "$course"/course.sqlite*
save
