#!/usr/bin/env bash
# bench/fmt.sh: section 5 of BENCHMARKS.md, tr2-fmt's EVENT lines converted
# per second in each of its five formats.  bench/run.sh sources it (with
# its TMP, T, B, TR2BPF, TR2FMT, TCPU, PCPU, FMT_LINES, and bench/lib.sh's
# say and calc); run by itself, as root once `make bench` has built
# build/bench/, it prints the section's table:
#
#   bench/fmt.sh [BUILD]
#
# Sets FMT_IN, FMT_BYTES, FMT_FORMATS and, per format, fmt_rate (lines per
# second, the fastest of 3 runs) and fmt_status (tr2-fmt's worst exit status).
FMT_FORMATS="perf normal event chrome folded"

if [ -z "${TR2FMT:-}" ]; then   # by itself
	set -euo pipefail
	BUILD=$(cd "${1:-build}" && pwd)
	[ "$(id -u)" = 0 ] || { echo "bench/fmt.sh: needs root (tr2-bpf writes the input)" >&2; exit 1; }
	TMP=$(mktemp -d /tmp/tr2bench-fmt.XXXXXX)
	trap 'rm -rf "$TMP"' EXIT
	B=$BUILD/bench/tr2bench TR2BPF=$BUILD/tr2-bpf TR2FMT=$BUILD/tr2-fmt FMT_LINES=1000000
	if [ "$(nproc)" -ge 2 ]; then PCPU=1 TCPU=0; else PCPU=0 TCPU=0; fi
	T() { timeout -k 5 120 "$@"; }
	# shellcheck source=bench/lib.sh
	. "$(dirname "$0")/lib.sh"
	FMT_ALONE=1
fi

say "5/6 tr2-fmt: $FMT_LINES EVENT lines from tr2-bpf --event"
# A git-like mix of region and data lines: 5 lines per iteration (the EVENT
# target drops the sixth call, a datum at nesting 3, as git does), through a
# ring large enough that nothing is lost.
T taskset -c $TCPU "$TR2BPF" --ring-buffer=512M --event="$TMP/gen.json" -- \
	"$B" -c $PCPU mix $((FMT_LINES / 5 + 1000)) >/dev/null 2>"$TMP/gen.err" || true
head -n $FMT_LINES "$TMP/gen.json" >"$TMP/events.json"
rm -f "$TMP/gen.json"
FMT_IN=$(wc -l <"$TMP/events.json")
FMT_BYTES=$(wc -c <"$TMP/events.json")
# The fastest of 3 runs per format, interleaved: a run takes under a
# second, and this VM's timings move by tens of percent from run to run.
declare -A fmt_rate fmt_status
for r in 1 2 3; do
	for f in $FMT_FORMATS; do
		t0=$(date +%s%N)
		st=0
		T "$TR2FMT" --$f "$TMP/events.json" >/dev/null 2>"$TMP/fmt.err" || st=$?
		t1=$(date +%s%N)
		rate=$(calc %.0f "$FMT_IN / (($t1 - $t0) / 1e9)")
		(( rate > ${fmt_rate[$f]:-0} )) && fmt_rate[$f]=$rate
		(( st > ${fmt_status[$f]:-0} )) && fmt_status[$f]=$st
		fmt_status[$f]=${fmt_status[$f]:-0}
	done
done
for f in $FMT_FORMATS; do say "  --$f: ${fmt_rate[$f]} lines/s (exit status ${fmt_status[$f]})"; done

# The table of section 5.
fmt_table() {
	echo "| tr2-fmt | lines per second |"
	echo "| --- | ---: |"
	for f in $FMT_FORMATS; do echo "| \`--$f\` | ${fmt_rate[$f]} |"; done
	local st=""
	for f in $FMT_FORMATS; do st+=${fmt_status[$f]}; done
	if [ "${st//0/}" ]; then
		echo
		echo -n "tr2-fmt exit statuses:"
		for f in $FMT_FORMATS; do echo -n " $f ${fmt_status[$f]}"; done
		echo " (1: some lines were malformed)."
	fi
}
if [ -n "${FMT_ALONE:-}" ]; then
	echo "Input: $FMT_IN EVENT lines ($(calc %.0f "$FMT_BYTES / 1048576") MiB); $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)"
	echo
	fmt_table
fi
