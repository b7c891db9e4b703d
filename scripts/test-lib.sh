# shellcheck shell=bash
# What every scripts/test-*.sh check shares (sourced, from the repository root): the counts of checks
# and failures, expect, which compares one result with the wanted one and says what differs, and
# skipped, for a test that cannot run on this machine.
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
