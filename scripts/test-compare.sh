#!/usr/bin/env bash
# Checks, without a GPU, how scripts/compare.sh reads both sides: every row's keys against saved outputs
# of the reference programs and the labs (scripts/fixtures/compare/, from a GPU run of compare.sh),
# plus the verdict, ratio and --originals rules. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/compare-lib.sh
fixtures=scripts/fixtures/compare
source scripts/test-lib.sh
# original_for PROGRAM REFERENCE_DIR ORIGINALS_DIR: the .cu to build for PROGRAM (a path such as
# streams/mmm-streamed.cu): the teacher's file as originals_plan says (the file compare.toml names for
# it, else the one at the same path under ORIGINALS_DIR, else one of the same name directly in it), else
# ours. compare.sh reads the plan once; this asks it for one program, as the checks below do.
original_for() {
    local program=$1 reference=$2 originals=$3 source=""
    if [ -n "$originals" ]; then
        source=$(originals_plan "$originals" "$reference" "" 2>/dev/null | awk -F'\t' -v p="$program" '$1 == p { print $2 }')
    fi
    echo "${source:-$reference/$program}"
}

is_number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && echo yes || echo "no ($1)"; }
scratch=$(mktemp -d)

# Every row's key finds a time in the saved output of its program and of its lab (named as log_name
# says: lab-streams-chunked.log, lab-mmm-f32.log).
while IFS='|' read -r name reference_command reference_key lab_command lab_key slide; do
    read -r program arguments <<<"$reference_command"
    # shellcheck disable=SC2086 # the command's words
    fixture=$(log_name "$(echo "${program%.cu}" | tr / -)" $arguments)
    expect "$name: original" "$(is_number "$(ms_after "$reference_key" "$fixtures/$fixture.log")")" yes
    # shellcheck disable=SC2086 # the command's words
    fixture=$(log_name $lab_command)
    expect "$name: Rust ($fixture)" "$(is_number "$(ms_after "$lab_key" "$fixtures/$fixture.log")")" yes
    # A row that names what the slides printed finds it in the transcription (results/slides/).
    [ -z "${slide:-}" ] || expect "$name: slide" "$(is_number "$(slide_ms "$slide" results/slides)")" yes
done < <(grep -v '^#' scripts/compare-rows.txt | sed -e 's|{scene}|scenes/sixty-four.txt|g' -e 's|{work}|work|g')

# Every row has its five fields, or six with the slide's (a key with a bare | would split its row),
# and the five German nvprof programs have the slide's time.
expect "rows with five or six fields" "$(grep -v '^#' scripts/compare-rows.txt | awk -F'|' 'NF != 5 && NF != 6' | wc -l)" 0
expect "rows with the slide's time" "$(grep -v '^#' scripts/compare-rows.txt | awk -F'|' 'NF == 6' | wc -l)" 5
expect "the slide's mmm-streamed" "$(slide_ms "streams/nvprof-fermi.log ^mmm-streamed: GPU time in ms:" results/slides)" 1850.16
expect "no slide time" "$(slide_ms "" results/slides)" "-"

# The two vectorAdd keys read two different columns of the same table row.
row=$fixtures/zero-copy-vectorAdd.log
explicit=$(ms_after '^. vectorAdd \(2 reads, 1 write\) .' "$row")
zero_copy=$(ms_after '^. vectorAdd \(2 reads, 1 write\) . [0-9.]+ .' "$row")
expect "vectorAdd columns differ" "$([ "$explicit" != "$zero_copy" ] && echo yes || echo no)" yes
# A key that is not there, or a file that is not there, gives "-", and so does the ratio.
expect "missing key" "$(ms_after '^no such line' "$row")" "-"
expect "missing file" "$(ms_after 'GPU time' /nonexistent/log)" "-"
expect "ratio" "$(ratio 3 2)" "1.50"
expect "ratio, one side missing" "$(ratio - 2)" "-"
# A program that prints its time in a line the key does not match (a teacher's own, such as the Korean
# sample's) gets words, not "-", and no ratio.
printf '스트림 실행시간: 5.08 msec\n' >"$scratch/korean.log"
expect "no time line" "$(time_or_why '^. 15 .' "$scratch/korean.log")" "no time line"
expect "no ratio without a time" "$(ratio 5.1 "no time line")" "-"
expect "the Korean sample's own time line, as compare.toml would name it" "$(ms_after '스트림 실행시간:' "$scratch/korean.log")" 5.08
expect "a time is read" "$(time_or_why 'GPU time in ms:' "$fixtures/simpson-simpson.log")" "$(ms_after 'GPU time in ms:' "$fixtures/simpson-simpson.log")"
# Verdicts: the program's own line first, else its exit code.
printf 'GPU time in ms: 1.0\nResult = FAIL\n' >"$scratch/fail.log"
: >"$scratch/silent.log"
expect "verdict PASS" "$(verdict_of "$fixtures/simpson-simpson.log" 0)" PASS
expect "verdict FAIL despite exit 0" "$(verdict_of "$scratch/fail.log" 0)" FAIL
expect "no verdict, exit 0" "$(verdict_of "$scratch/silent.log" 0)" "exit 0, no verdict"
expect "no verdict, exit 3" "$(verdict_of "$scratch/silent.log" 3)" "exit 3"
# --originals: the same path first, then the same name, else ours.
mkdir -p "$scratch/originals/streams"
touch "$scratch/originals/streams/mmm.cu" "$scratch/originals/mmm-mapped.cu"
expect "original at the same path" "$(original_for streams/mmm.cu reference "$scratch/originals")" "$scratch/originals/streams/mmm.cu"
expect "original of the same name" "$(original_for streams/mmm-mapped.cu reference "$scratch/originals")" "$scratch/originals/mmm-mapped.cu"
expect "ours where there is none" "$(original_for simpson/simpson.cu reference "$scratch/originals")" reference/simpson/simpson.cu
expect "ours without --originals" "$(original_for simpson/simpson.cu reference "")" reference/simpson/simpson.cu
expect "build flags of dynamic parallelism" "$(build_flags reference/dynamic/adaptive.cu)" "-rdc=true -lcudadevrt"
expect "no build flags" "$(build_flags reference/simpson/simpson.cu)" ""
expect "log name of a lab run" "$(log_name bin/lab-mmm --random 1024 --precision f32 --repetitions 10)" lab-mmm-f32
expect "log name of a reference run" "$(log_name /tmp/x/streams-mmm 2048 10 3)" streams-mmm
expect "log name of a lab run in another order" "$(log_name bin/lab-streams --mode fifteen --order stream-by-stream --repetitions 3)" \
    lab-streams-fifteen-stream-by-stream
expect "log name of a reference run with a word argument" "$(log_name /tmp/x/fifteen-streams15 3 stream-by-stream)" \
    fifteen-streams15-stream-by-stream
expect "log name of a cold lab run" "$(log_name bin/lab-streams --mode fifteen --as-printed)" lab-streams-fifteen-as-printed
printf 'GPU time in ms: 5.5\n' >"$scratch/run1.log"
printf 'GPU time in ms: 3.25\n' >"$scratch/run2.log"
printf 'GPU time in ms: 40\n' >"$scratch/run3.log"
expect "median of three runs" "$(median_ms 'GPU time in ms:' "$scratch"/run{1,2,3}.log)" 5.5
expect "median of two runs" "$(median_ms 'GPU time in ms:' "$scratch"/run{1,2}.log)" 4.3750
expect "no median where a run has no time" "$(time_or_why 'GPU time in ms:' "$scratch/run1.log" "$scratch/silent.log")" "no time line"
expect "no median without a run" "$(median_ms 'GPU time in ms:')" "-"
expect "timed: --repetitions=N" "$(timed_as --repetitions=7)" "warm-up, median of 7"
expect "timed: --as-printed" "$(timed_as --mode mmm --size 1024 --as-printed)" "one cold run"
expect "timed: --repetitions" "$(timed_as --mode mmm --repetitions 3)" "warm-up, median of 3"
expect "timed: the lab's default" "$(timed_as --random 1024)" "warm-up, median of the default"
expect "log name ignores paths and flags" "$(log_name /tmp/x/tracer-tracer /a/scene.txt 1024 768 --force)" tracer-tracer
# Without a GPU: one line and exit 1, not a table of failed runs (issue 26).
mkdir -p "$scratch/no-gpu"
printf '#!/usr/bin/env bash\nexit 9\n' >"$scratch/no-gpu/nvidia-smi"
chmod +x "$scratch/no-gpu/nvidia-smi"
status=0
PATH="$scratch/no-gpu:$PATH" ARCH=sm_90 bash scripts/compare.sh --only simpson >"$scratch/out" 2>"$scratch/err" || status=$?
expect "no GPU: exit 1" "$status" 1
expect "no GPU: says so in one line" "$(cat "$scratch/err")" "compare.sh: no GPU here (nvidia-smi lists none); the programs run on one (--build-only DIR compiles them without)"
expect "no GPU: no table" "$(wc -c <"$scratch/out")" 0
# The whole table, on a stand-in machine: a GPU that nvidia-smi lists, an nvcc whose programs print the
# saved output of the program they were built from (or, for a teacher's file, the .out file beside it),
# and labs that print their saved output. A teacher's mmm-streamed.cu that prints its time in its own
# words gets "no time line" and no ratio; the slide's time stands in its own column.
fake=$scratch/fake
mkdir -p "$fake/bin" "$fake/labs" "$fake/originals"
cat >"$fake/bin/nvidia-smi" <<'FAKE'
#!/usr/bin/env bash
case "$*" in
    -L) echo "GPU 0: Stand-in GPU (UUID: GPU-0)" ;;
    *name,driver_version*) echo "Stand-in GPU, 0.0" ;;
    *compute_cap*) echo "9.0" ;;
esac
FAKE
cat >"$fake/bin/nvcc" <<FAKE
#!/usr/bin/env bash
[ "\$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.0"; exit 0; }
while [ \$# -gt 1 ]; do [ "\$1" = -o ] && out=\$2; shift; done
source=\$1 saved=\${1%.cu}.out
[ -f "\$saved" ] || saved=$PWD/$fixtures/\$(realpath --relative-to="$PWD/reference" "\$source" | sed 's|^slides/||; s|\\.cu\$||; s|/|-|g').log
printf '#!/usr/bin/env bash\\ncat "%s"\\n' "\$saved" >"\$out"
chmod +x "\$out"
FAKE
for lab in lab-simpson lab-streams; do
    # shellcheck disable=SC2016 # $0 and $@ are the stand-in lab's own, at its run
    printf '#!/usr/bin/env bash\nsource "%s"\ncat "%s/$(log_name "$0" "$@").log"\n' "$PWD/scripts/compare-lib.sh" "$PWD/$fixtures" >"$fake/labs/$lab"
done
chmod +x "$fake/bin/"* "$fake/labs/"*
# stand_in WORK ARGS...: compare.sh on the stand-in machine, its table in $scratch/table and its
# messages in $scratch/err, its outputs in $scratch/WORK.
stand_in() {
    local work=$1
    shift
    PATH="$fake/bin:$PATH" NVCC=$fake/bin/nvcc LABS=$fake/labs WORK=$scratch/$work \
        bash scripts/compare.sh "$@" >"$scratch/table" 2>"$scratch/err"
}
cp reference/streams/mmm-streamed.cu "$fake/originals/mmm-streamed.cu"
printf 'Stream time: 1712.28 msec\nResult = PASS\n' >"$fake/originals/mmm-streamed.out"
status=0
stand_in work --only 'simpson|mmm-streamed[|]' --originals "$fake/originals" || status=$?
expect "stand-in table: exit 0" "$status" 0
simpson_ms=$(ms_after 'GPU time in ms:' "$fixtures/simpson-simpson.log")
lab_ms=$(ms_after 'GPU time in ms:' "$fixtures/lab-simpson.log")
expect "stand-in table: simpson row" "$(grep '^| simpson ' "$scratch/table")" \
    "| simpson | $simpson_ms | $lab_ms | $(ratio "$lab_ms" "$simpson_ms") | PASS | PASS | - | warm-up, median (as the labs) / warm-up, median of 10 |"
expect "stand-in table: a teacher's program without our time line" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,5,6,8)" \
    " no time line | - | PASS | 1850.16 "
expect "stand-in table: stderr names the key" "$(grep -c "mmm-streamed: the original printed no line matching" "$scratch/err")" 1
# Without a compare.toml a teacher's program is taken for the slide's (reference/slides/compare.toml):
# run without arguments, the lab beside it at the slide's sizes.
expect "slide's invocation: no arguments" "$(grep -c 'running .*/streams-mmm-streamed$' "$scratch/err")" 1
expect "slide's invocation: the lab at the slide's sizes" \
    "$(grep -c 'running .*/lab-streams --mode mmm --size 1024 --count 10 --as-printed$' "$scratch/err")" 1
expect "slide's invocation: the key of the slide's line" "$(grep -c "matching '^GPU time in ms:'" "$scratch/err")" 1
# A teacher's simpson, which no slide shows: run without arguments, its time shown, no ratio (the
# issue's 189.9 ms beside 0.0082 ms came from handing it our arguments).
cp reference/simpson/simpson.cu "$fake/originals/simpson.cu"
printf 'GPU time in ms: 189.9\nResult = PASS\n' >"$fake/originals/simpson.out"
stand_in work-simpson --only 'simpson' --originals "$fake/originals" || true
lab_ms=$(ms_after 'GPU time in ms:' "$fixtures/lab-simpson.log")
expect "a program no slide shows: its time, no ratio" "$(grep '^| simpson ' "$scratch/table")" \
    "| simpson | 189.9 | $lab_ms | sizes unknown (compare.sh --init) | PASS | PASS | - | its own way / warm-up, median of 10 |"
expect "a program no slide shows: run without arguments" "$(grep -c 'running .*/simpson-simpson$' "$scratch/err")" 1
rm "$fake/originals/simpson.cu" "$fake/originals/simpson.out"
# compare.toml gives the teacher's program its own arguments (none) and time line: the time is read,
# and the row says the arguments differ instead of giving a ratio.
printf '# the teacher'"'"'s programs\n["streams/mmm-streamed.cu"]\nargs = ""   # the sizes are in its code\ntime = "^Stream time:"\n' >"$fake/originals/compare.toml"
stand_in work-toml --only 'mmm-streamed[|]' --originals "$fake/originals" || true
expect "compare.toml: its time line and no ratio" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,5)" " 1712.28 | other arguments "
expect "compare.toml: run without arguments" "$(grep -c 'running .*/streams-mmm-streamed$' "$scratch/err")" 1
expect "compare.toml: a path setting for this program" "$(originals_setting "$fake/originals" streams/mmm-streamed.cu time)" "=^Stream time:"
expect "compare.toml: a program it does not name" "$(originals_setting "$fake/originals" simpson/simpson.cu args)" ""
# A lab command at the program's sizes: the lab runs with it, and the row keeps its ratio.
printf '["mmm-streamed.cu"]\nargs = ""\ntime = "^Stream time:"\nlab = "lab-streams --mode mmm --size 1024 --repetitions 1"\n' >"$fake/originals/compare.toml"
stand_in work-lab --only 'mmm-streamed[|]' --originals "$fake/originals" || true
lab_ms=$(ms_after '^mmm-streamed +GPU time in ms:' "$fixtures/lab-streams-mmm.log")
expect "compare.toml lab: the ratio at the program's sizes" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,4,5)" \
    " 1712.28 | $lab_ms | $(ratio "$lab_ms" 1712.28) "
expect "compare.toml lab: the lab run with it" "$(grep -c 'running .*/lab-streams --mode mmm --size 1024 --repetitions 1$' "$scratch/err")" 1
# Words for a row: the row shows them instead of a time. Without arguments in compare.toml the
# program is not run for it (a slide program may need files); with them it runs once, and its verdict
# (here the stand-in's PASS) is the row's.
printf '["mmm-streamed"]\nnote = "not on the slides"\n' >"$fake/originals/compare.toml"
stand_in work-note --only 'mmm-streamed[|]' --originals "$fake/originals" || true
expect "compare.toml note: the row's words" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,5,6)" " not on the slides | - | - "
expect "compare.toml note: the program not run" "$(grep -c 'running .*/streams-mmm-streamed' "$scratch/err")" 0
printf '["mmm-streamed"]\nnote = "not on the slides"\nargs = ""\nlab = "lab-streams --mode mmm --size 1024 --repetitions 1"\n' >"$fake/originals/compare.toml"
stand_in work-note-args --only 'mmm-streamed[|]' --originals "$fake/originals" || true
expect "compare.toml note and args: the program's verdict" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,5,6)" " not on the slides | - | PASS "
expect "compare.toml note and args: the program run once" "$(grep -c 'running .*/streams-mmm-streamed' "$scratch/err")" 1
expect "compare.toml: a row's section wins" "$(originals_setting "$fake/originals" streams/mmm-streamed.cu note mmm-streamed)" "=not on the slides"
expect "compare.toml: another row" "$(originals_setting "$fake/originals" streams/mmm-streamed.cu note mmm)" ""
# Issue 40: sizes nobody said give no ratio. A teacher's mmm-streamed at N = 2048 that prints its time
# as the slide's does and its sizes in a line, in a folder without compare.toml: its time, and "sizes
# unknown" where the slide's settings would have set it beside the lab at 1024.
rm "$fake/originals/compare.toml"
printf 'N = 2048, COUNT = 10\nGPU time in ms: 6500.5\nResult = PASS\n' >"$fake/originals/mmm-streamed.out"
stand_in work-sizes --only 'mmm-streamed[|]' --originals "$fake/originals" || true
expect "no compare.toml: sizes unknown, no ratio" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,5)" \
    " 6500.5 | sizes unknown (compare.sh --init) "
expect "originals_row: the slide's settings for another folder" \
    "$(originals_row "$fake/originals" reference/slides streams/mmm-streamed.cu mmm-streamed | grep '^from')" "$(printf 'from\t=defaults')"
expect "originals_row: the slides' own folder" \
    "$(originals_row reference/slides reference/slides streams/mmm-streamed.cu mmm-streamed | grep '^from')" "$(printf 'from\t=slides')"
# sizes = "..." read from the program's line and set against the lab command: the lab at 1024 differs,
# at 2048 it is the same and the row has its ratio.
printf '["streams/mmm-streamed.cu"]\nargs = ""\ntime = "^GPU time in ms:"\nlab = "lab-streams --mode mmm --size 1024 --count 10 --repetitions 1"\nsizes = "^N = ([0-9]+), COUNT = ([0-9]+)"\n' \
    >"$fake/originals/compare.toml"
stand_in work-differ --only 'mmm-streamed[|]' --originals "$fake/originals" || true
expect "sizes =: the lab at other sizes" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f5)" \
    " sizes differ: 2048 x 10 vs lab 1024 10 1 "
expect "originals_row: the folder's own" \
    "$(originals_row "$fake/originals" reference/slides streams/mmm-streamed.cu mmm-streamed | grep '^from')" "$(printf 'from\t=own')"
sed -i 's/--size 1024/--size 2048/' "$fake/originals/compare.toml"
cp "$fixtures/lab-streams-mmm.log" "$scratch/lab-streams-mmm.log"
stand_in work-same --only 'mmm-streamed[|]' --originals "$fake/originals" || true
lab_ms=$(ms_after '^mmm-streamed +GPU time in ms:' "$fixtures/lab-streams-mmm.log")
expect "sizes =: the lab at the program's sizes keeps the ratio" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f5)" \
    " $(ratio "$lab_ms" 6500.5) "
printf 'Stream time: 1712.28 msec\nResult = PASS\n' >"$fake/originals/mmm-streamed.out"
# sizes_check on its own: the numbers in order (others between), a missing line, a bad regex.
printf 'x\nN = 2048, COUNT = 10\n' >"$scratch/sizes.log"
expect "sizes_check: same" "$(sizes_check '^N = ([0-9]+), COUNT = ([0-9]+)' "$scratch/sizes.log" 'lab-streams --size 2048 --count 10 --repetitions 3')" same
expect "sizes_check: order matters" "$(sizes_check '^N = ([0-9]+), COUNT = ([0-9]+)' "$scratch/sizes.log" 'lab-streams --count 10 --size 2048')" \
    "sizes differ: 2048 x 10 vs lab 10 2048"
expect "sizes_check: no line" "$(sizes_check '^M = ([0-9]+)' "$scratch/sizes.log" 'lab 1')" "no sizes line"
expect "sizes_check: no group" "$(sizes_check '^N = ' "$scratch/sizes.log" 'lab 1')" 'sizes = "..." has no group'
# --init writes a compare.toml to fill (each played program, its settings as comments), never over one.
init_dir=$scratch/init
mkdir -p "$init_dir/streams" "$init_dir/Übung"
cp reference/slides/streams/mmm-streamed.cu "$init_dir/streams/"
cp reference/slides/fifteen/streams15.cu "$init_dir/Übung/fifteen.cu"
status=0
bash scripts/compare.sh --init "$init_dir" >"$scratch/out" 2>"$scratch/err" || status=$?
expect "--init: exit 0" "$status" 0
expect "--init: says what it wrote" "$(grep -c "^compare.sh: wrote $init_dir/compare.toml (1 programs)" "$scratch/out")" 1
expect "--init: a section per played program" "$(grep '^\[' "$init_dir/compare.toml")" '["streams/mmm-streamed.cu"]'
expect "--init: the slide's lab, commented" "$(grep -c '^# lab = "lab-streams --mode mmm --size 1024 --count 10 --as-printed"$' "$init_dir/compare.toml")" 1
expect "--init: names the file it did not use" "$(grep -c "Übung/fifteen.cu not used" "$scratch/err")" 1
expect "--init: compare.toml reads back, sizes still unknown" \
    "$(originals_row "$init_dir" reference/slides streams/mmm-streamed.cu mmm-streamed | grep '^from')" "$(printf 'from\t=defaults')"
printf '["fifteen/streams15.cu"]\nfile = "Übung/fifteen.cu"\n' >"$init_dir/compare.toml"
status=0
bash scripts/compare.sh --init "$init_dir" >"$scratch/out" 2>"$scratch/err" || status=$?
expect "--init: never over a compare.toml (exit 2)" "$status" 2
expect "--init: the file kept" "$(head -n 1 "$init_dir/compare.toml")" '["fifteen/streams15.cu"]'
rm "$init_dir/compare.toml"
printf '["fifteen/streams15.cu"]\nfile = "Übung/fifteen.cu"\n' >"$scratch/keep.toml"
status=0
bash scripts/compare.sh --init "$init_dir" --only mmm >"$scratch/out" 2>"$scratch/err" || status=$?
expect "--init with another option: exit 2" "$status" 2
# A line it cannot read: one error naming the file and line, exit 2, nothing built.
printf '["streams/mmm-streamed.cu"]\nargs = 2048\n' >"$fake/originals/compare.toml"
status=0
stand_in work-bad --originals "$fake/originals" || status=$?
expect "bad compare.toml: exit 2" "$status" 2
expect "bad compare.toml: one line naming file and line" "$(cat "$scratch/err")" \
    "compare.sh: $fake/originals/compare.toml:2: cannot read 'args = 2048' (expected [\"program.cu\"] or [\"row\"], then file, args, time, lab, sizes or note = \"...\")"
# Issue 45: compare.sh says what it built from which file, names what it does not use, takes a
# teacher's own file names from compare.toml, and answers a usage error in one line. Built with the
# stand-in nvcc (instant) but for one real build below.
# build_only DIR OUT [ARGS...]: --originals DIR --build-only OUT on the stand-in, its output in
# $scratch/out and $scratch/err; prints the exit code.
build_only() {
    local dir=$1 out=$2 status=0
    shift 2
    NVCC=$fake/bin/nvcc ARCH=sm_90 bash scripts/compare.sh --originals "$dir" --build-only "$out" "$@" \
        >"$scratch/out" 2>"$scratch/err" || status=$?
    echo "$status"
}
teacher=$scratch/teacher
mkdir -p "$teacher"
printf 'int main() { return 0; }\n' >"$teacher/my simpson.cu"
printf 'int main() { return 0; }\n' >"$teacher/mmm-streamed.cu"
printf 'int main() { return 0; }\n' >"$teacher/extra.cu"
printf 'not a program\n' >"$teacher/notes.txt"
cat >"$teacher/compare.toml" <<'TOML'
["simpson/simpson.cu"]   # a file of another name, with a space
file = "my simpson.cu"
["mmm-streamed"]
note = "a row whose program the folder plays"
["tracer.cu"]
args = ""
["mmm-streamd"]
args = ""
TOML
out=$scratch/built
expect "build-only: exit 0" "$(build_only "$teacher" "$out")" 0
expect "build-only: one line per program built, and the programs it leaves to ours" "$(cat "$scratch/out")" \
"compare.sh: built $out/simpson-simpson from $teacher/my simpson.cu
compare.sh: built $out/streams-mmm-streamed from $teacher/mmm-streamed.cu
compare.sh: not built (nothing in $teacher plays them; ours are built without --originals): $(cd reference && printf '%s\n' */*.cu | grep -v '^weeks/' | grep -v -x -e simpson/simpson.cu -e streams/mmm-streamed.cu | tr '\n' ' ' | sed 's/ $//')"
expect "build-only: the files built" "$(find "$out" -type f ! -name '*.build.log' -printf '%f\n' | sort | tr '\n' ' ')" "simpson-simpson streams-mmm-streamed "
expect "build-only: a warning per file or section not used" "$(wc -l <"$scratch/err") $(grep -c '^compare.sh: ' "$scratch/err")" "3 3"
expect "build-only: the unused .cu file named, and why" "$(grep -c "^compare.sh: $teacher/extra.cu not used: none of our programs is at that path or of that name" "$scratch/err")" 1
expect "build-only: a section for a program the folder does not play" \
    "$(grep -c "^compare.sh: $teacher/compare.toml:5: \[\"tracer.cu\"\] not used: $teacher has no file that plays tracer/tracer.cu" "$scratch/err")" 1
expect "build-only: a section that names nothing of ours" \
    "$(grep -c "^compare.sh: $teacher/compare.toml:7: \[\"mmm-streamd\"\] not used: it names none of our programs" "$scratch/err")" 1
# The named file plays only the program compare.toml names, even where its name is one of ours; a file
# of the same name that compare.toml does not name plays every program of that name, and says so.
mkdir -p "$scratch/named"
printf 'int main() { return 0; }\n' >"$scratch/named/mmm.cu"
printf '["streams/mmm.cu"]\nfile = "mmm.cu"\n' >"$scratch/named/compare.toml"
expect "file = : exit 0" "$(build_only "$scratch/named" "$scratch/named-out")" 0
expect "file = : only the program it names" "$(grep -c '^compare.sh: built' "$scratch/out") $(grep -c "built $scratch/named-out/streams-mmm from" "$scratch/out")" "1 1"
expect "file = : no warning" "$(cat "$scratch/err")" ""
rm "$scratch/named/compare.toml"
build_only "$scratch/named" "$scratch/named-both" >/dev/null
expect "one name, two programs: both built" "$(grep -c '^compare.sh: built' "$scratch/out")" 2
expect "one name, two programs: says so" "$(grep -c "^compare.sh: $scratch/named/mmm.cu plays mmm/mmm.cu and streams/mmm.cu" "$scratch/err")" 1
# The same path wins over the same name; the other file is named, with the one that plays instead.
mkdir -p "$scratch/both/streams"
printf 'int main() { return 0; }\n' | tee "$scratch/both/streams/mmm-streamed.cu" >"$scratch/both/mmm-streamed.cu"
build_only "$scratch/both" "$scratch/both-out" >/dev/null
expect "same path wins" "$(grep -c "from $scratch/both/streams/mmm-streamed.cu$" "$scratch/out")" 1
expect "same path wins: the other named" "$(cat "$scratch/err")" \
    "compare.sh: $scratch/both/mmm-streamed.cu not used: streams/mmm-streamed.cu is played by $scratch/both/streams/mmm-streamed.cu (to have this one play it: [\"streams/mmm-streamed.cu\"] file = \"mmm-streamed.cu\" in compare.toml)"
# What compare.toml cannot use stops compare.sh with one line naming the file and line, exit 2, and
# nothing built (OUT not made).
bad_toml() {  # bad_toml WHAT TOML EXPECTED_MESSAGE
    printf '%s' "$2" >"$teacher/compare.toml"
    expect "$1: exit 2" "$(build_only "$teacher" "$scratch/bad-out")" 2
    expect "$1: one line" "$(cat "$scratch/err")" "compare.sh: $teacher/compare.toml:$3"
    expect "$1: nothing built" "$([ -e "$scratch/bad-out" ] && echo built || echo none)" none
}
bad_toml "unknown key" $'["simpson.cu"]\nflags = "-O2"\n' "2: unknown key 'flags' (the keys: file, args, time, lab, sizes, note)"
bad_toml "a key set twice" $'["simpson.cu"]\nargs = ""\n["simpson.cu"]\nargs = "1"\n' \
    "4: args set again for [\"simpson.cu\"] (first on line 2)"
bad_toml "a setting before any section" $'args = ""\n' "1: 'args = \"\"' comes before any [\"program.cu\"] or [\"row\"] section"
bad_toml "file = a file not there" $'["simpson.cu"]\nfile = "no such.cu"\n' "2: file = \"no such.cu\": there is no such file in $teacher"
bad_toml "file = in a row" $'["mmm-streamed"]\nfile = "extra.cu"\n' \
    "2: file = \"extra.cu\" in the row [\"mmm-streamed\"]: a file plays a program; set it in a section for the program, [\"streams/mmm-streamed.cu\"]"
bad_toml "file = for two programs of one name" $'["mmm.cu"]\nfile = "extra.cu"\n' \
    "2: [\"mmm.cu\"] is both mmm/mmm.cu and streams/mmm.cu: name the one it plays by its path"
bad_toml "file = for no program" $'["extra.cu"]\nfile = "extra.cu"\n' \
    "2: file = \"extra.cu\" in [\"extra.cu\"], which is none of our programs (a path as in reference/, such as streams/mmm-streamed.cu, or its name; see --help)"
bad_toml "two files for one program" $'["simpson.cu"]\nfile = "extra.cu"\n["simpson/simpson.cu"]\nfile = "my simpson.cu"\n' \
    "4: a second file for simpson/simpson.cu (the first on line 2)"
rm "$teacher/compare.toml"
# A compare.toml from another editor: a byte-order mark and CRLF line ends read as plain lines; one
# that is not UTF-8 stops compare.sh with one line.
printf '\xef\xbb\xbf["simpson/simpson.cu"]\r\nfile = "my simpson.cu"\r\n' >"$teacher/compare.toml"
expect "BOM and CRLF: exit 0" "$(build_only "$teacher" "$scratch/crlf-out")" 0
expect "BOM and CRLF: the file named plays" "$(grep -c "built $scratch/crlf-out/simpson-simpson from $teacher/my simpson.cu$" "$scratch/out")" 1
printf '["simpson/simpson.cu"]\nnote = "\xe9t\xe9"\n' >"$teacher/compare.toml"
expect "not UTF-8: exit 2" "$(build_only "$teacher" "$scratch/latin-out")" 2
expect "not UTF-8: one line" "$(wc -l <"$scratch/err") $(grep -c "^compare.sh: $teacher/compare.toml: cannot read it (.*); compare.toml is UTF-8 text$" "$scratch/err")" "1 1"
rm "$teacher/compare.toml"
# A .cu file that a played file includes is used; reference/slides (every folder's defaults) plays a
# program with every one of its files and warns about none, not even its sections for the programs it
# lacks.
printf '#include "kernels.cu"\nint main() { return 0; }\n' >"$scratch/named/mmm.cu"
printf '__global__ void k() {}\n' >"$scratch/named/kernels.cu"
expect "an included .cu: not named unused" "$(originals_plan "$scratch/named" reference "" 2>&1 >/dev/null | grep -c kernels.cu)" 0
expect "reference/slides: what it plays" "$(originals_plan "$PWD/reference/slides" reference scripts/compare-rows.txt 1 2>/dev/null | wc -l)" 12
expect "reference/slides: no warning" "$(originals_plan "$PWD/reference/slides" reference scripts/compare-rows.txt 1 2>&1 >/dev/null)" ""
# Usage errors: one line on stderr naming what is wrong, exit 2, nothing overwritten.
mkdir -p "$scratch/empty" "$scratch/full" "$scratch/unrelated"
echo "a user's file" >"$scratch/full/keep.txt"
printf 'int main() { return 0; }\n' >"$scratch/unrelated/mine.cu"
usage_error() {  # usage_error WHAT EXPECTED_MESSAGE ARGS...: compare.sh ARGS fails with that one line
    local what=$1 message=$2 status=0
    shift 2
    NVCC=$fake/bin/nvcc ARCH=sm_90 bash scripts/compare.sh "$@" >"$scratch/out" 2>"$scratch/err" || status=$?
    expect "$what: exit 2" "$status" 2
    expect "$what: one line" "$(grep -v ' not used: ' "$scratch/err")" "compare.sh: $message (see --help)"
    expect "$what: nothing on stdout" "$(cat "$scratch/out")" ""
}
usage_error "--originals without a value" "--originals needs a value" --originals
usage_error "--originals followed by an option" "--originals needs a value" --originals --build-only "$scratch/o"
usage_error "--only without a value" "--only needs a value" --only
usage_error "--build-only without a value" "--build-only needs a value" --originals "$teacher" --build-only
usage_error "--build-only with an empty value" "--build-only needs a value" --build-only ""
usage_error "an unknown option" "unknown argument '--orginals'" --orginals "$teacher"
usage_error "a stray argument" "unknown argument '$teacher'" "$teacher"
usage_error "a missing folder" "--originals '$scratch/missing': no such folder" --originals "$scratch/missing"
usage_error "a file for a folder" "--originals '$teacher/extra.cu' is not a folder" --originals "$teacher/extra.cu"
usage_error "an option twice" "--originals given twice" --originals "$teacher" --originals "$scratch/empty"
usage_error "--only with --build-only" "--only picks rows of the table; --build-only builds every program and runs none" \
    --only simpson --build-only "$scratch/o"
usage_error "an empty folder" "--originals '$scratch/empty' has no file that plays one of our programs" \
    --originals "$scratch/empty" --build-only "$scratch/o"
usage_error "a folder of other programs" "--originals '$scratch/unrelated' has no file that plays one of our programs" \
    --originals "$scratch/unrelated" --build-only "$scratch/o"
expect "a folder of other programs: its file named" "$(grep -c "^compare.sh: $scratch/unrelated/mine.cu not used: " "$scratch/err")" 1
usage_error "OUT not empty" "--build-only '$scratch/full' is not empty; give a new or empty folder (nothing there is overwritten)" \
    --build-only "$scratch/full"
usage_error "OUT a file" "--build-only '$scratch/full/keep.txt' is not a folder" --build-only "$scratch/full/keep.txt"
status=0
PATH="$fake/bin:$PATH" NVCC=$fake/bin/nvcc LABS=$fake/labs WORK=$scratch/full bash scripts/compare.sh --only simpson \
    >"$scratch/out" 2>"$scratch/err" || status=$?
expect "WORK not empty: exit 2, one line" "$status $(cat "$scratch/err")" \
    "2 compare.sh: WORK '$scratch/full' is not empty; give a new or empty folder (nothing there is overwritten) (see --help)"
expect "the user's files untouched" "$(ls "$scratch/full") $(cat "$scratch/full/keep.txt")" "keep.txt a user's file"
expect "an empty OUT is used" "$(build_only "$teacher" "$scratch/empty")" 0
# --help names every option compare.sh reads, and our programs (the names a teacher's file can take).
bash scripts/compare.sh --help >"$scratch/help"
options=$(grep -o -E '^ +(-h\|)?--[a-z-]+(\|--[a-z-]+)*\)' scripts/compare.sh | tr -d ' )' | tr '|' '\n' | sort -u)
expect "options found" "$(wc -w <<<"$options")" 6
for option in $options; do
    expect "--help names $option" "$(grep -q -E -- "(^|[ [,])$option([] ,]|$)" "$scratch/help" && echo yes)" yes
done
for program in $(cd reference && printf '%s\n' */*.cu | grep -v '^weeks/'); do
    expect "--help names $program" "$(grep -c -x "    $program" "$scratch/help")" 1
done
# compare.toml's file = in the table: a teacher's file of any name (a folder with a space) plays the
# program, and the slide's settings still apply (file = is not a setting of the run).
mkdir -p "$fake/renamed/Übung 3"
cp reference/streams/mmm-streamed.cu "$fake/renamed/Übung 3/streams v2.cu"
printf 'GPU time in ms: 1700.5\nResult = PASS\n' >"$fake/renamed/Übung 3/streams v2.out"
printf '["streams/mmm-streamed.cu"]\nfile = "Übung 3/streams v2.cu"\n' >"$fake/renamed/compare.toml"
stand_in work-renamed --only 'mmm-streamed[|]' --originals "$fake/renamed" || true
expect "file = in the table: its time and verdict" "$(grep '^| mmm-streamed ' "$scratch/table" | cut -d'|' -f3,6)" " 1700.5 | PASS "
expect "file = in the table: built from it" "$(grep -c "^compare.sh: built $scratch/work-renamed/streams-mmm-streamed from $fake/renamed/Übung 3/streams v2.cu$" "$scratch/err")" 1
expect "file = in the table: the slide's lab at the slide's sizes" \
    "$(grep -c 'running .*/lab-streams --mode mmm --size 1024 --count 10 --as-printed$' "$scratch/err")" 1
# Rows whose two sides each time one cold run (reference/slides' programs, the labs' --as-printed): each
# side runs COLD_RUNS times, a process each, and the table says so. (The stand-in's slide programs print
# our reference programs' saved outputs, which have no "스트림 실행시간:" line.)
status=0
COLD_RUNS=0 stand_in work-cold-0 --originals reference/slides || status=$?
expect "COLD_RUNS=0: a usage error" "$status:$(tail -n 1 "$scratch/err")" "2:compare.sh: COLD_RUNS=0: a number of runs, 1 or more"
COLD_RUNS=3 stand_in work-cold --only '15-stream sample, 15 streams[|]' --originals reference/slides || true
expect "cold runs: the slide's program three times" "$(grep -c 'running .*/fifteen-streams15$' "$scratch/err")" 3
expect "cold runs: the lab three times" "$(grep -c 'running .*/lab-streams --mode fifteen --as-printed$' "$scratch/err")" 3
expect "cold runs: the lab's median" "$(grep '^| 15-stream sample, 15 streams ' "$scratch/table" | cut -d'|' -f4)" \
    " $(ms_after '^. 15 .' "$fixtures/lab-streams-fifteen-as-printed.log") "
expect "cold runs: the table says how each side was timed" "$(grep '^| 15-stream sample, 15 streams ' "$scratch/table" | cut -d'|' -f9)" \
    " median of 3 cold runs / median of 3 cold runs (--as-printed) "
# Rows whose two sides both time a warm-up and a median run PROCESSES times a side, and the table
# shows the median of the processes' medians (one process of a pageable copy can be 12% off the next).
status=0
PROCESSES=0 stand_in work-processes-0 --only 'simpson' || status=$?
expect "PROCESSES=0: a usage error" "$status:$(tail -n 1 "$scratch/err")" "2:compare.sh: PROCESSES=0: a number of processes, 1 or more"
PROCESSES=3 stand_in work-processes --only 'simpson' || true
expect "processes: the original three times" "$(grep -c 'running .*/simpson-simpson 1048576 256 10$' "$scratch/err")" 3
expect "processes: the lab three times" "$(grep -c 'running .*/lab-simpson --intervals 1048576 --block-size 256 --repetitions 10$' "$scratch/err")" 3
expect "processes: the table says how each side was timed" "$(grep '^| simpson ' "$scratch/table" | cut -d'|' -f9)" \
    " warm-up, median (as the labs), median of 3 processes / warm-up, median of 10, median of 3 processes "
expect "original_for reads file =" "$(original_for streams/mmm-streamed.cu reference "$fake/renamed")" "$fake/renamed/Übung 3/streams v2.cu"
# One real build with the pinned nvcc (where there is one): a teacher's file whose name has a space.
real_nvcc=$(command -v nvcc || echo .toolchain/cuda/bin/nvcc)
if [ -x "$real_nvcc" ]; then
    printf '["simpson/simpson.cu"]\nfile = "my simpson.cu"\n' >"$teacher/compare.toml"
    status=0
    NVCC=$real_nvcc ARCH=sm_90 bash scripts/compare.sh --originals "$teacher" --build-only "$scratch/real out" \
        >"$scratch/out" 2>"$scratch/err" || status=$?
    expect "real nvcc: exit 0" "$status" 0
    expect "real nvcc: built" "$(grep -c "^compare.sh: built $scratch/real out/simpson-simpson from $teacher/my simpson.cu$" "$scratch/out")" 1
    expect "real nvcc: the program runs" "$("$scratch/real out/simpson-simpson" && echo ran)" ran
fi
rm -rf "$scratch"

echo "compare.sh's reading: $checks checks, $failures failed"
[ "$failures" = 0 ]
