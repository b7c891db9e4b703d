#!/usr/bin/env bash
# Every `cargo run -p lab-...` line of every README, as a reader would type it (run by scripts/test.sh,
# issue 26): from the folder the README says (the last "`cd DIR`" above the line, DIR from the
# repository root; the root itself when there is none), each line must parse, name input files (.cu,
# .txt) that exist there, and get as far as opening the GPU. The GPU is hidden (CUDA_VISIBLE_DEVICES
# empty), so on any machine a line passes only by exiting 0 (--help, say) or with the labs' "no usable
# CUDA GPU" error (exit 1, or 3 from --check: the machine); and no run may leave a file behind in the
# repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$root/$target
# An indented command line, or one in `backticks` in the prose.
line_re='(^ *|`)(([A-Z_]+=[^ ]+ )*)cargo run( --release)? -p (lab-[a-z-]+)( -- ([^#`]*))?'
before=$(git status --porcelain --untracked-files=all)
failures=0 checks=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

check_line() {  # check_line WHERE DIR ENV LAB ARGS
    local where=$1 dir=$2 env=$3 lab=$4 words=() previous= word output rc
    read -ra words <<<"$5"  # the READMEs quote nothing; a line that needs quotes needs a parser here
    checks=$((checks + 1))
    [[ -x $target/debug/$lab ]] || { fail "$where: $target/debug/$lab is not built"; return; }
    for word in "${words[@]}"; do
        if [[ $word == *.cu || $word == *.txt ]] && [[ $previous != --output && ! -e $dir/$word ]]; then
            fail "$where: $word does not exist in ${dir#"$root"/} (the folder the README says)"
        fi
        previous=$word
    done
    # shellcheck disable=SC2086  # ENV is NAME=VALUE words, or nothing
    output=$(cd "$dir" && env $env CUDA_VISIBLE_DEVICES= timeout 300 "$target/debug/$lab" "${words[@]}" 2>&1) && rc=0 || rc=$?
    # Exit 1 for a lab run, 3 for --check (its cases "could not run on this machine").
    if (( rc != 0 )) && ! [[ ($rc == 1 || $rc == 3) && $(tail -n 1 <<<"$output") == "$lab: error: "*"no usable CUDA GPU"* ]]; then
        fail "$where: exit $rc, $(tail -n 1 <<<"$output")"
    fi
}

while IFS= read -r readme; do
    dir=$root/. number=0
    while IFS= read -r line; do
        number=$((number + 1))
        if [[ $line =~ \`cd\ ([^\`]+)\` ]]; then dir=$root/${BASH_REMATCH[1]}; fi
        [[ $line =~ $line_re ]] || continue
        check_line "$readme:$number" "$dir" "${BASH_REMATCH[2]}" "${BASH_REMATCH[5]}" "${BASH_REMATCH[7]}"
    done <"$readme"
done < <(git ls-files '*README.md')

after=$(git status --porcelain --untracked-files=all)
[[ $before == "$after" ]] || fail "the runs changed the repository: $(diff <(echo "$before") <(echo "$after") | tail -n +2 | head -5 | tr '\n' ' ')"
echo "test-readme-commands.sh: $checks README lines, $failures failed"
(( failures == 0 ))
