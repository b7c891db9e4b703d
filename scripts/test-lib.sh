# shellcheck shell=bash
# What every scripts/test-*.sh check shares (sourced, from the repository root): the counts of checks
# and failures, and expect, which compares one result with the wanted one and says what differs.
failures=0 checks=0
expect() {  # expect WHAT GOT WANTED
    checks=$((checks + 1))
    if [[ $2 != "$3" ]]; then echo "FAIL: $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}
