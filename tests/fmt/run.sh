#!/usr/bin/env bash
# tr2-fmt's own tests: malformed input, derived values, options.
#
#   tests/fmt/run.sh [TR2FMT]      (default build/tr2-fmt)
#
# Each tests/fmt/cases/CASE/ holds input files, a README saying how its
# expected outputs were made, and runs.  A run NAME is
#   NAME.args     the rest of the command line after tr2-fmt, run by bash in
#                 the case directory (so "< file" redirects standard input)
#   NAME.out      the exact standard output (absent: must be empty)
#   NAME.err      the exact standard error (absent: must be empty)
#   NAME.status   the exit status (absent: 0)
# Whole outputs are compared byte for byte; every line of a run whose args
# contain --event is also parsed as JSON.  TZ is UTC, so PERF and NORMAL
# times of day are those of the input.  The last line is
# "fmt: N passed, M failed"; the exit status is 1 if any run failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tr2fmt=$(realpath "${1:-build/tr2-fmt}")
[ -x "$tr2fmt" ] || { echo "fmt: no tr2-fmt at $tr2fmt" >&2; exit 2; }
export TZ=UTC LC_ALL=C

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0 failed=0
for args in "$here"/cases/*/*.args; do
	dir=$(dirname "$args") name=$(basename "$args" .args)
	base="$dir/$name" label="$(basename "$dir")/$name"
	(cd "$dir" && bash -c "\"\$0\" $(cat "$args")" "$tr2fmt") >"$tmp/out" 2>"$tmp/err"
	status=$?
	want_status=$(cat "$base.status" 2>/dev/null || echo 0)
	problems=()
	[ "$status" = "$want_status" ] || problems+=("exit status $status, want $want_status")
	for s in out err; do
		if [ -e "$base.$s" ]; then
			cmp -s "$tmp/$s" "$base.$s" || problems+=("std$s differs: $(diff -a "$base.$s" "$tmp/$s" | head -5 | tr '\n' '|')")
		elif [ -s "$tmp/$s" ]; then
			problems+=("unexpected std$s: $(head -c 300 "$tmp/$s" | tr '\n' '|')")
		fi
	done
	if grep -q -- '--event\b' "$args" && [ "$status" != 2 ]; then
		python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        json.loads(line.decode("utf-8", "surrogateescape"))
    except ValueError as e:
        sys.exit(f"output line {n} is not JSON: {e}")
' "$tmp/out" || problems+=("EVENT output is not JSON")
	fi
	if [ ${#problems[@]} -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $label"
	else
		failed=$((failed + 1))
		echo "FAIL $label: tr2-fmt $(cat "$args")"
		printf '    %s\n' "${problems[@]}"
	fi
done
echo "fmt: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
