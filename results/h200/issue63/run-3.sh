#!/usr/bin/env bash
# Issue 63, run 3 (one H200): the class page served live and a week with hidden cases. Week 3 with
# the course's own cases kept on the server (two of them, `hide_cases = true`); five students hand in
# (ours, two broken, two red team) through `course-server submit --wait`; then the teacher's class page
# (made by the feedback program from the workers' details) and a student's own view of a hidden-case
# grade. Into $OUT/issue63-3.tgz.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu102/bundle.tgz
bundle=$work/gpu-bundle
export GRADE_REPOSITORY=$bundle LAB_BIN_DIR=$bundle/bin
cs=$bundle/bin/course-server
logs=$(mktemp -d)
save() { tar -C "$logs" -czf "$OUT/issue63-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
course=$logs/course
mkdir -p "$course/files"
week=$bundle/assignments/03-mmm-tiled
cp "$bundle/kernels/cuda/mmm.cu" "$course/files/ours.cu"
cp "$week/broken/missing-syncthreads.cu" "$course/files/broken-missing-syncthreads.cu"
cp "$week/broken/writes-past-c.cu" "$course/files/broken-writes-past-c.cu"
cp "$week/adversarial/forged-report.cu" "$course/files/adversarial-forged-report.cu"
cp "$week/adversarial/tiles-only-where-measured.cu" "$course/files/adversarial-tiles-only-where-measured.cu"
ls "$course/files" | sed 's/\.cu$//' | awk '{ print $0 ",s" NR }' >"$course/ids.csv"
printf '%s\n' '# hidden: two cases of our own' '777 333 555 f64 11' '129 1000 65 f32 12' >"$course/hidden.txt"
cat >"$course/course.toml" <<'TOML'
name = "CUDA lab: issue 63, run 3"
students = "ids.csv"

[[week]]
name = "03-mmm-tiled"
deadline = "2099-01-01T00:00:00Z"
cases = "hidden.txt"
hide_cases = true
leaderboard = true
TOML
"$cs" tokens --course "$course/course.toml" --all-students --teacher >"$course/tokens.csv" 2>"$logs/tokens.log"
token() { grep "^\"$1\"," "$course/tokens.csv" | cut -d, -f2; }
"$cs" --course "$course/course.toml" --listen 127.0.0.1:8080 >"$logs/server.log" 2>&1 &
server=$!
url=http://127.0.0.1:8080
sleep 1
while IFS=, read -r name id; do
    COURSE_TOKEN=$(token "$id") timeout 400 "$cs" submit --server "$url" 03-mmm-tiled "$course/files/$name.cu" --wait >"$logs/submit-$name.log" 2>&1 &
done <"$course/ids.csv"
wait $(jobs -p | grep -v "^$server\$") 2>/dev/null
teacher=$(token teacher)
fetch() { curl -s -H "Authorization: Bearer $2" "$url$1" >"$logs/$3"; }
start=$(date +%s%N)
fetch /admin/weeks/03-mmm-tiled/class/index.html "$teacher" class-index.html
echo "class page made in $(( ($(date +%s%N) - start) / 1000000 )) ms" >"$logs/class.log"
start=$(date +%s%N)
fetch /admin/weeks/03-mmm-tiled/class/index.html "$teacher" class-index-again.html
echo "served again in $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$logs/class.log"
for page in $(grep -o 'href="[0-9][0-9][0-9]-[^"]*\.html"' "$logs/class-index.html" | cut -d'"' -f2 | sort -u); do
    fetch "/admin/weeks/03-mmm-tiled/class/$page" "$teacher" "class-$page"
done
fetch /admin/weeks/03-mmm-tiled/gradebook.csv "$teacher" gradebook.csv
# A student's own view: the hidden cases under numbers, no lab output.
fetch /api/submissions "$(token s1)" student-list.json
id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$logs/student-list.json")
fetch "/api/submissions/$id" "$(token s1)" student-view.json
fetch "/submissions/$id/feedback" "$(token s1)" student-feedback.html
fetch "/api/submissions/$id" "$teacher" teacher-view.json
kill "$server"
wait 2>/dev/null
rm -f "$course/tokens.csv" "$course"/course.sqlite* && rm -rf "$course/files" "$course/class"
save
