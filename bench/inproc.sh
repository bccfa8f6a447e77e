#!/usr/bin/env bash
# bench/inproc.sh [BUILD]: what an in-process target (GIT_TRACE2_PERF and
# friends, trace2(3) IN-PROCESS TARGETS) costs the program per event, beside
# git's own in-process write (tr2bench's "write" kind: format a PERF line and
# write(2) it, BENCHMARKS.md section 2). Run by hand, as any user; prints a
# markdown table on stdout, progress on stderr; about a minute.
#
# Method, as bench/run.sh's: tr2bench's region loop (one region_enter and one
# region_leave per iteration, pinned to one CPU, timed in the thread's CPU
# time), ROUNDS rounds of ITERS pairs per configuration, interleaved round by
# round; per event = (loop time - the empty loop's time) / events; median and
# range. tr2bench is built here from bench/tr2bench.c with
# bench/inproc_init.c, which calls trace2_initialize() before main(). A file
# target batches region lines (usdt/tr2_inproc.c); fd 3 on the same file
# shows the cost of one write(2) per line.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-300000}
make -s "$BUILD/libtr2.a" >&2
TMP=$(mktemp -d /tmp/tr2-inproc-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
B=$TMP/tr2bench
${CC:-cc} -O2 -g -D_GNU_SOURCE -Iusdt -Ibench -pthread -o "$B" bench/tr2bench.c bench/inproc_init.c \
	"$BUILD/libtr2.a"
if [ "$(nproc)" -ge 2 ]; then CPU=1; else CPU=0; fi
# each configuration sets its own variables, and only those
for v in $(env | sed -n 's/^\(GIT_TRACE2[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }
# run NAME: one timed run of configuration NAME; prints its loop ns
run() {
	rm -f "$TMP/out"
	case $1 in
	empty) taskset -c $CPU "$B" empty $ITERS ;;
	git) taskset -c $CPU "$B" -o "$TMP/out" write $ITERS ;;
	perf) GIT_TRACE2_PERF=$TMP/out taskset -c $CPU "$B" region $ITERS ;;
	perf_fd) GIT_TRACE2_PERF=3 taskset -c $CPU "$B" region $ITERS 3>> "$TMP/out" ;;
	event) GIT_TRACE2_EVENT=$TMP/out taskset -c $CPU "$B" region $ITERS ;;
	normal) GIT_TRACE2=$TMP/out taskset -c $CPU "$B" region $ITERS ;;
	all3) GIT_TRACE2=$TMP/out.n GIT_TRACE2_PERF=$TMP/out.p GIT_TRACE2_EVENT=$TMP/out.e \
		taskset -c $CPU "$B" region $ITERS ;;
	none) taskset -c $CPU "$B" region $ITERS ;;
	esac | { read -r line; field ns "$line"; }
	rm -f "$TMP"/out*
}
CONFIGS="empty none git perf perf_fd event normal all3"
declare -A ns
for r in $(seq "$ROUNDS"); do
	echo "bench/inproc.sh: round $r of $ROUNDS" >&2
	for c in $CONFIGS; do ns[$c]+="$(run $c) "; done
done
# per-event cost of each run, against the median empty loop
EV=$((2 * ITERS))
empty=$(printf '%s\n' ${ns[empty]} | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")
cost() { for t in ${ns[$1]}; do awk -v t="$t" -v e="$empty" -v n=$EV 'BEGIN { printf "%.0f\n", (t - e) / n }'; done | sort -n; }
med() { cost "$1" | sed -n "$(( (ROUNDS + 1) / 2 ))p"; }
rng() { echo "$(cost "$1" | head -1)–$(cost "$1" | tail -1)"; }
row() { echo "| $2 | $(med "$1") | $(rng "$1") |"; }
git_ns=$(med git)
perf_ns=$(med perf)

cat <<MD
In-process targets, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), nproc $(nproc); tree $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- usdt formatter bench || echo ' with local changes').
tr2bench region loop, $ITERS pairs ($EV events) a run, $ROUNDS rounds, CPU $CPU, CPU time of the thread.

| configuration (per event: region_enter or region_leave) | ns per event | range |
| --- | ---: | --- |
$(row none "no variable set: the inline test only")
$(row git "git's own in-process write: format a PERF line and \`write(2)\` it (tr2bench \`write\`)")
$(row perf "\`GIT_TRACE2_PERF=FILE\`: libtr2's PERF line, batched (one \`write(2)\` per 2 KiB)")
$(row perf_fd "\`GIT_TRACE2_PERF=3\` (fd 3 on the same file): one \`write(2)\` per line, as git")
$(row event "\`GIT_TRACE2_EVENT=FILE\`: EVENT line (nesting 1), batched")
$(row normal "\`GIT_TRACE2=FILE\`: NORMAL writes no region line (the event is built, nothing written)")
$(row all3 "all three variables: two lines batched per event (NORMAL has none)")

Goal: \`GIT_TRACE2_PERF\` at most half of git's write: $perf_ns ns against $git_ns / 2 = $((git_ns / 2)) ns: $(awk -v a="$perf_ns" -v b="$git_ns" 'BEGIN { print (a <= b / 2) ? "met" : "**not met**" }').
MD
