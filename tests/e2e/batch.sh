#!/usr/bin/env bash
# The batched event path (bpf/tr2_record.h): a traced thread's calls wait in
# its buffer until a batch, a switch, a tick, exec or exit hands them over.
#  1. Nothing left behind: calls still waiting when a thread returns, or the
#     process execs, _exits, aborts, crashes or is killed, are all written
#     (whole lines against tests/e2e/expected/batch-end-*.perf).
#  2. Live: a region entered right before a long sleep, or before a long
#     computation without calls, is written while the thread still sleeps or
#     computes, under -- CMD, -p and -a (the bound here is generous; the
#     latency itself is `make bench`'s).
#  3. Bounded: 100 000 threads started and ended under -- CMD leave the
#     process's resident memory as it was after 1 000.
#  4. A process that scribbles over its buffer loses its own calls, counted,
#     and nobody else's.
# Needs root and BPF; says so and skips without.
#
#   tests/e2e/batch.sh            run all
#   tests/e2e/batch.sh --update   rewrite the expected files (check the diff)
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
PROG=$B/tests/progs/tr2_batch
EXP=tests/e2e/expected
UPDATE=${1:-}
LIMIT=60
T=$(mktemp -d /tmp/tr2-batch.XXXXXX)
pass=0 fail=0
started=()

cleanup() {
	local p
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

. tests/lib.sh
LIMIT=$(slow $LIMIT)

masked() { python3 tests/e2e/mask.py perf < "$1" | sed "s|$B/|build/|g"; }


if [ "$(id -u)" != 0 ]; then
	echo "batch: SKIP: not root; these tests load BPF programs"
	echo "batch: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! out=$(timeout $LIMIT $BPF -- /bin/true 2>&1); then
	echo "batch: SKIP: BPF unavailable here: $out"
	echo "batch: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

# ===== 1. Nothing left behind ==============================================
# The region and its three data wait in the buffer (the thread's first batch
# went out at version); each way out hands them over.  Status: the
# process's own (-- CMD), 128 + the signal for abort, crash and kill.
for how in thread exec _exit abort crash kill; do
	timeout $LIMIT $BPF --perf="$T/end-$how.p" -- $PROG end $how > /dev/null 2> "$T/end-$how.err"
	st=$?
	case $how in abort) want=134;; crash) want=139;; kill) want=137;; *) want=0;; esac
	expect_eq "end $how: CMD's status" $want $st
	masked "$T/end-$how.p" > "$T/end-$how.m"
	same "end $how: every line" "$EXP/batch-end-$how.perf" "$T/end-$how.m"
	expect_eq "end $how: nothing lost" "0 lost" "$(tail -1 "$T/end-$how.err" | sed 's/.*events, //')"
done

# Kernels before 6.16 copy batches through a scratch per CPU: the same cases
# on that path (forced here).
for how in thread exec crash; do
	TR2_BPF_TEST_NO_DIRECT=1 timeout $LIMIT $BPF --perf="$T/scratch-$how.p" -- $PROG end $how \
		> /dev/null 2> "$T/scratch-$how.err"
	masked "$T/scratch-$how.p" > "$T/scratch-$how.m"
	same "end $how, through the scratch: every line" "$EXP/batch-end-$how.perf" "$T/scratch-$how.m"
done

# ===== 2. Live =============================================================
# live NAME MODE SETUP...: tr2_batch MODE 30 (sleep or spin), traced as
# SETUP says; the region_enter line must be in the file while the program
# still sleeps or computes (it prints "entered" first).
live_cmd() {
	local name=$1 mode=$2 secs=$3
	timeout $LIMIT $BPF --perf="$T/$name.p" -- $PROG $mode $secs > "$T/$name.out" 2> "$T/$name.err" &
	started+=($!)
	wait_for "$T/$name.out" entered
	if wait_for "$T/$name.p" "| region_enter |"; then
		ok "$name: the region_enter line, while the thread ${mode}s"
	else
		bad "$name: the region_enter line, while the thread ${mode}s" "$(cat "$T/$name.err")"
	fi
}
live_cmd "sleep, -- CMD" sleep 30
pkill -TERM -f "$PROG sleep 30"
live_cmd "spin, -- CMD" spin 3
wait

# --summary=1: the first table, a second in, counts the region as open.
timeout $LIMIT $BPF --summary=1 -- $PROG sleep 3 > "$T/sum.out" 2> "$T/sum.err"
expect_eq "sleep, --summary=1: the first table counts the region open" \
	"        0          -          -          -          -          -          -     1      0  live     sleep" \
	"$(grep -m1 ' live  *sleep$' "$T/sum.out")"

# -p: attached while it waits on stdin; -a: started after tr2-bpf -a.
mkfifo "$T/fifo"
exec 7<>"$T/fifo"
$PROG --wait-stdin sleep 30 <&7 > "$T/pid.out" 2>&1 &
prog=$!; started+=($prog)
wait_for "$T/pid.out" waiting
timeout $LIMIT $BPF --perf="$T/pid.p" -p $prog 2> "$T/pid.err" &
tracer=$!; started+=($tracer)
wait_for "$T/pid.err" "tracing process"
echo go >&7
wait_for "$T/pid.out" entered
if wait_for "$T/pid.p" "| region_enter |"; then
	ok "sleep, -p: the region_enter line, while the thread sleeps"
else
	bad "sleep, -p: the region_enter line, while the thread sleeps" "$(cat "$T/pid.err")"
fi
kill -TERM $prog
wait $tracer
exec 7>&-

timeout $LIMIT $BPF -a --comm=tr2_batch --perf="$T/all.p" 2> "$T/all.err" &
tracer=$!; started+=($tracer)
wait_for "$T/all.err" "tracing every process"
$PROG sleep 30 > "$T/all.out" 2>&1 &
prog=$!; started+=($prog)
wait_for "$T/all.out" entered
if wait_for "$T/all.p" "| region_enter |"; then
	ok "sleep, -a: the region_enter line, while the thread sleeps"
else
	bad "sleep, -a: the region_enter line, while the thread sleeps" "$(cat "$T/all.err")"
fi
kill -TERM $prog
wait $prog
kill -INT $tracer
wait $tracer

# ===== 3. Bounded ===========================================================
# Each thread takes a buffer from the runtime's free list and gives it back;
# version, start, cmd_name, exit and atexit besides its region pairs.
N=$(fewer 100000)
timeout $(slow 300) $BPF --perf=/dev/null -- $PROG threads $N > "$T/thr.out" 2> "$T/thr.err"
expect_eq "threads: status" 0 $?
expect_eq "threads: every event" "tr2-bpf: $((2 * N + 5)) events, 0 lost" "$(tail -1 "$T/thr.err")"
r1=$(sed -n 's/^rss-1000 //p' "$T/thr.out")
r2=$(sed -n 's/^rss-end //p' "$T/thr.out")
expect_eq "threads: resident memory after $N threads within 512 KiB of after 1000 ($r1 -> $r2 KiB)" yes \
	"$([ -n "$r1" ] && [ -n "$r2" ] && [ $((r2 - r1)) -le 512 ] && echo yes || echo no)"

# ===== 4. A process that scribbles over its buffer ========================
# Its calls in the scribbled batch are lost, counted (N + M = its events;
# the copy that found its buffer damaged is said as such);
# the process after it in the same trace is whole.
mkdir "$T/h"
timeout $LIMIT $BPF --perf="$T/h" -- sh -c "$PROG hostile; exec $PROG end _exit" > "$T/h.out" 2> "$T/h.err"
expect_eq "hostile: status of the shell (the second program's)" 0 $?
expect_eq "hostile: it found its buffer and scribbled" scribbled "$(cat "$T/h.out")"
sed -nE 's/^tr2-bpf: ([0-9]+) events, ([0-9]+) lost(, 1 damaged buffer)?$/\1 \2/p' "$T/h.err" > "$T/h.nm"
# hostile: version start cmd_name, 11 region pairs, exit atexit; then 8 of end
expect_eq "hostile: N + M = what the two programs made" $((3 + 22 + 2 + 8)) \
	"$(awk '{ print $1 + $2 }' "$T/h.nm")"
expect_eq "hostile: something was lost" yes "$(awk '{ print ($2 > 0 ? "yes" : "no") }' "$T/h.nm")"
masked "$(grep -l 'end _exit$' "$T"/h/*)" > "$T/h.other.m"
same "hostile: the next program's lines whole (its own file)" "$EXP/batch-end-_exit.perf" "$T/h.other.m"

# ===== 5. t_abs after a hold ===============================================
# -- CMD holds the program at its exec while tr2-bpf attaches; t_abs starts
# after the hold, but never after the program's first call (tr2-bpf takes
# the time before it lets the program go), even under load: 25 runs, the
# other CPU kept busy.
runs=$(fewer 25)
bash -c 'while :; do :; done' &
busy=$!; started+=($busy)
zero=0
for i in $(seq $runs); do
	timeout $LIMIT $BPF --perf="$T/ta.p" -- $PROG end _exit > /dev/null 2>&1
	grep -q '| start  *|     |  0.000000 |' "$T/ta.p" && zero=$((zero + 1))
	rm -f "$T/ta.p"
done
kill $busy
expect_eq "$runs runs held at exec, the other CPU busy: start's t_abs never 0.000000" 0 $zero

echo "batch: $pass passed, $fail failed"
[ $fail = 0 ]
