# shellcheck shell=bash
# What every scripts/test-*.sh check shares (sourced, from the repository root): the counts of checks
# and failures, expect, which compares one result with the wanted one and says what differs,
# skipped, for a test that cannot run on this machine, and below, the helpers of a few tests (a
# marking stand-in lab, Chromium, the slide checks' command line and self-test).
failures=0 checks=0
expect() {  # expect WHAT GOT WANTED
    checks=$((checks + 1))
    if [[ $2 != "$3" ]]; then echo "FAIL: $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}

# skipped WHY: this test cannot run here. It says why and ends with a cargo-style "test result:" line
# with 1 ignored, which scripts/test.sh's total counts as skipped, never as passed.
skipped() {
    echo "$(basename "$0"): SKIPPED: $1"
    echo "test result: ok. 0 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out ($(basename "$0"))"
    exit 0
}

# marking_stub BODY LAB REAL_LAB: writes LAB, a stand-in lab that runs the stand-in BODY and marks
# its output as a lab does with --mark (grading/src/mark.rs, issue 60): the key from stdin, then
# "#mark CODE TAG MESSAGE" after BODY's stdout, TAG the HMAC-SHA256 (openssl's) of "CODE\nMESSAGE\n"
# and that stdout, MESSAGE the text of BODY's last "lab-x: error: " line. --verify-mark goes to
# REAL_LAB. What a forger would do: STUB_UNMARKED leaves the mark out (a lab killed by a signal),
# STUB_AFTER_MARK prints a line after it, STUB_STDERR_AFTER writes a line on stderr after the lab's
# own (a "machine: ..." line of a submission's).
marking_stub() {
    cat >"$2" <<WRAPPER
#!/usr/bin/env bash
[[ \${1:-} == --verify-mark ]] && exec $(printf '%q' "$3") --verify-mark
args=() key=
for arg in "\$@"; do
    if [[ \$arg == --mark ]]; then read -r key; else args+=("\$arg"); fi
done
[[ -n \$key ]] || exec $(printf '%q' "$1") "\${args[@]}"
out=\$(mktemp) err=\$(mktemp)
$(printf '%q' "$1") "\${args[@]}" >"\$out" 2>"\$err"
code=\$?
cat "\$out"
cat "\$err" >&2
message=\$(grep -E '^lab-[a-z-]+: error: ' "\$err" | tail -n 1 | sed -E 's/^lab-[a-z-]+: error: //')
tag=\$({ printf '%s\n%s\n' "\$code" "\$message"; cat "\$out"; } | openssl dgst -sha256 -mac HMAC -macopt "hexkey:\$key" -r | cut -d ' ' -f 1)
[[ -n \${STUB_UNMARKED:-} ]] || printf '#mark %s %s %s\n' "\$code" "\$tag" "\$message"
[[ -z \${STUB_AFTER_MARK:-} ]] || printf '%s\n' "\$STUB_AFTER_MARK"
[[ -z \${STUB_STDERR_AFTER:-} ]] || printf '%s\n' "\$STUB_STDERR_AFTER" >&2
rm -f "\$out" "\$err"
exit "\$code"
WRAPPER
    chmod +x "$2"
}

# find_chromium: sets $browser to Debian's Chromium, installed with apt-get where missing (root only);
# where it cannot be had, the test is skipped.
find_chromium() {
    browser=$(command -v chromium || command -v chromium-browser || true)
    if [[ -z $browser ]]; then
        [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || skipped "Chromium is not installed, and installing it needs root and apt-get"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 ||
            skipped "apt-get could not install chromium"
        browser=$(command -v chromium)
    fi
}

# What test-slide-quotes.sh and test-slide-locators.sh share: each checks what the repository credits
# to the lecture texts, against the texts where they are, else against hashes it keeps.
#
# slide_check_args NAME THINGS GLOB... -- [--update] [FILE...]: reads the check's command line. Sets
# update (0 or 1), slides (the texts' folder, ../shared/slides or $SLIDES_DIR, or empty where they are
# not here) and targets: the FILEs, else every tracked file GLOB names outside vendor/, results/ and
# scripts/fixtures/, in which case self_test is 1 (without --update: the checker tests itself first).
# --update without the texts, or with FILEs, is one line naming NAME and exit code 2.
slide_check_args() {
    local name=$1 things=$2 globs=()
    shift 2
    while [[ $1 != -- ]]; do globs+=("$1"); shift; done
    shift
    update=0 self_test=0
    if [[ ${1:-} == --update ]]; then update=1; shift; fi
    slides=${SLIDES_DIR:-../shared/slides}
    [[ -d $slides ]] || slides=''
    [[ $update == 0 || -n $slides ]] || { echo "$name: --update needs the lecture texts (../shared/slides or \$SLIDES_DIR)" >&2; exit 2; }
    targets=("$@")
    if [[ $# == 0 ]]; then
        mapfile -t targets < <(git ls-files "${globs[@]}" | grep -v -e '^vendor/' -e '^results/' -e '^scripts/fixtures/')
        [[ $update == 1 ]] || self_test=1
    elif [[ $update == 1 ]]; then
        echo "$name: --update takes no FILE (it records every tracked file's $things)" >&2
        exit 2
    fi
}

# slide_check_self_test NAME FIXTURE EXPECTED... -- UNEXPECTED...: the checker ($0) run on FIXTURE must
# fail, and its output must hold every EXPECTED and none of the UNEXPECTED; else one line and exit 1.
slide_check_self_test() {
    local name=$1 fixture=$2 output part
    shift 2
    if output=$(bash "$0" "$fixture"); then
        echo "$name: the checker passed $fixture, which must fail" >&2
        exit 1
    fi
    while [[ $1 != -- ]]; do
        [[ $output == *"$1"* ]] || { echo "$name: self-test missed: $1" >&2; echo "$output" >&2; exit 1; }
        shift
    done
    shift
    for part in "$@"; do
        [[ $output != *"$part"* ]] || { echo "$name: self-test flagged $part" >&2; echo "$output" >&2; exit 1; }
    done
}
