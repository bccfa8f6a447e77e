#!/usr/bin/env bash
# tr2-fmt's bounds (issue 27, point 4): memory a small constant times the
# longest line, and a bounded number of error lines per input.
#
#   tests/fmt/bounds.sh [TR2FMT]      (default build/tr2-fmt)
#
# Peak memory is the child's maximum resident set (getrusage), measured on
# lines of 50 MB: one long printf message, one line of garbage, and a dense
# one (a data_json array of 25 million numbers).
set -u
cd "$(dirname "$0")/../.."
fmt=$(realpath "${1:-build/tr2-fmt}")
T=$(mktemp -d /tmp/tr2-bounds.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
. tests/lib.sh

# peak FILE ARGS...: runs tr2-fmt ARGS < FILE, output to /dev/null; prints
# its status and its peak resident memory in MB.
peak() {
	local in=$1; shift
	python3 - "$in" "$fmt" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "rb") as f:
    st = subprocess.run(sys.argv[2:], stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(st, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
}
# Under the sanitizers (make test-asan sets TR2_SAN_FLAGS) memory is
# theirs as much as tr2-fmt's: measured in the plain build only.
if [ -n "${TR2_SAN_FLAGS:-}" ]; then
	echo "SKIP memory: a sanitizer build"
else
python3 - "$T" <<'PY'
import sys
t, n = sys.argv[1], 50 * 1000 * 1000
head = ('{"event":"%s","sid":"20261126T000000.000000Z-H0a7c9cdf-P00000001","thread":"main",'
        '"time":"2026-11-26T00:00:00.000000Z","file":"x.c","line":1,"t_abs":0.1,')
h = head % "printf" + '"msg":"'
open(t + "/string.json", "w").write(h + "a" * (n - len(h) - 3) + '"}\n')
open(t + "/garbage.json", "w").write("a" * (n - 1) + "\n")
h = head % "data_json" + '"t_rel":0.1,"nesting":1,"category":"c","key":"k","value":['
open(t + "/dense.json", "w").write(h + ",".join(["1"] * ((n - len(h)) // 2)) + "]}\n")
PY
read -r st mb <<< "$(peak "$T/string.json" --perf)"
expect_eq "a 50 MB line (one printf message): converted, under 200 MB (${mb} MB)" "0 yes" \
	"$st $([ "$mb" -lt 200 ] && echo yes || echo no)"
read -r st mb <<< "$(peak "$T/garbage.json" --perf)"
expect_eq "a 50 MB line of garbage: reported (status 1), under 200 MB (${mb} MB)" "1 yes" \
	"$st $([ "$mb" -lt 200 ] && echo yes || echo no)"
read -r st mb <<< "$(peak "$T/dense.json" --perf)"
expect_eq "a 50 MB data_json array of 25 million numbers: converted, under 400 MB (${mb} MB)" "0 yes" \
	"$st $([ "$mb" -lt 400 ] && echo yes || echo no)"
fi

# Errors: the first 100 of an input, then one line that counts the rest.
yes 'not json' | head -150000 > "$T/bad.json"
"$fmt" "$T/bad.json" "$T/bad.json" > /dev/null 2> "$T/err"
expect_eq "150 000 malformed lines, twice: status 1" 1 $?
expect_eq "... 100 lines and a count per input" "202 2" \
	"$(wc -l < "$T/err") $(grep -c "^tr2-fmt: $T/bad.json: 149900 more malformed lines, not shown: 150000 of its 150000 lines were malformed$" "$T/err")"
expect_eq "... each error line as before" \
	"tr2-fmt: $T/bad.json:100: invalid JSON at column 1: Problem while parsing an atom starting with the letter 'n'" \
	"$(sed -n 100p "$T/err")"

# A CR LF line end reads as LF; a CR inside a line is still a control character.
printf '{"event":"version","sid":"S1","thread":"main","evt":"4","exe":"1"}\r\n{"event":"version","sid":"S2",\r"thread":"main","evt":"4","exe":"1"}\n' \
	> "$T/crlf.json"
expect_eq "CR LF: the line converts; a CR inside a line: reported" \
	"1|1|tr2-fmt: $T/crlf.json:2: control character 0x0d at column 31" \
	"$("$fmt" --brief "$T/crlf.json" 2> "$T/err" | grep -c version)|$(grep -c . "$T/err")|$(cat "$T/err")"

echo "bounds: $pass passed, $fail failed"
[ $fail = 0 ]
