#!/usr/bin/env bash
# Workload shapes (issue #9): tr2-bpf on the shapes real programs have, with
# events and sums counted exactly (never timed: speed is `make bench`'s).
#   - process trees: a parent that forks and execs instrumented children and
#     /bin/true, one after another;
#   - dlopen/dlclose cycles of an instrumented plugin, under -- CMD and -p;
#   - thread churn with and without trace2_thread_exit();
#   - a thread with more timers than tr2-bpf keeps sums of (counted lost);
#   - long attaches: what tr2-bpf keeps does not grow with the processes and
#     threads that have come and gone.
# Besides the events, each run checks how often tr2-bpf held a process
# stopped to attach (`-v`): only at the first sight of an object, never per
# process or per dlopen.  Whole-line comparisons with tests/e2e/expected/
# shapes-* after masking (mask.py) and counting equal lines (sort | uniq -c).
# Needs root and BPF; says so and skips without.
#
#   tests/e2e/shapes.sh            run all
#   tests/e2e/shapes.sh --update   rewrite the expected files (check the diff)
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=build
BPF=$B/tr2-bpf
P=$B/tests/progs
SHAPES=$P/tr2_shapes
PLUGIN=$P/libtr2_plugin.so
EXP=tests/e2e/expected
UPDATE=${1:-}
LIMIT=60            # seconds any tr2-bpf run may take
T=$(mktemp -d /tmp/tr2-shapes.XXXXXX)
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

# counted PERFFILE: the masked PERF lines, with the values of data key i,
# the number in a churn thread's name and the lost_events markers (their
# split depends on when tr2-bpf polled: markers() adds them up) masked too;
# each distinct line once with its count.
counted() {
	python3 tests/e2e/mask.py perf < "$1" |
		sed -E 's/\| (\.*)i:[0-9]+$/| \1i:I/; s/\| th[0-9]+:churn +\|/| thNN:churn |/' |
		grep -vE '\| tr2 +\| \.*lost_events:[0-9]+$' | sort | uniq -c
}

# markers PERFFILE: the lost_events markers, added up.
markers() {
	sed -nE 's/.*\| tr2 +\| \.*lost_events:([0-9]+)$/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# field ERRFILE WHAT: a number from tr2-bpf -v's lines on stderr.
stops() { sed -nE 's/^tr2-bpf: held processes stopped ([0-9]+) times.*/\1/p' "$1"; }
kept() { sed -nE 's/^tr2-bpf: kept at the end: (.*); BPF maps: ([0-9]+) traced processes, ([0-9]+) processes with losses.*/\1; \2 traced, \3 with losses/p' "$1"; }

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (max 20 s).
wait_for() {
	local i
	for ((i = 0; i < 2000; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

if [ "$(id -u)" != 0 ]; then
	echo "shapes: SKIP: not root; these tests load BPF programs"
	echo "shapes: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
out=$(timeout $LIMIT $BPF -- /bin/true 2>&1)
case $?:$out in
0:*) ;;
*"Operation not permitted"*|*"Function not implemented"*|*"not supported"*)
	echo "shapes: SKIP: BPF unavailable here: $out"
	echo "shapes: 0 passed, 0 failed, 1 skipped"
	exit 0;;
*)
	bad "tr2-bpf -- /bin/true works" "$out"
	echo "shapes: 0 passed, 1 failed"
	exit 1;;
esac
SECONDS=0

# cmd NAME EVENTS LOST STOPS -- ARGS...: tr2-bpf -v --perf -- tr2_shapes ARGS;
# checks the status, the summary line (exact), the number of stops, that
# nothing is kept at the end, and the counted PERF lines against
# expected/shapes-NAME.perf.  Leaves $T/NAME.p and $T/NAME.err.
cmd() {
	local name=$1 events=$2 lost=$3 nstops=$4 st; shift 5
	timeout $LIMIT $BPF -v --perf="$T/$name.p" -- $SHAPES "$@" > "$T/$name.out" 2> "$T/$name.err"
	st=$?
	expect_eq "$name: exit status 0" 0 $st
	expect_eq "$name: summary" "tr2-bpf: $events events, $lost lost" "$(tail -1 "$T/$name.err")"
	expect_eq "$name: processes stopped to attach" "$nstops" "$(stops "$T/$name.err")"
	expect_eq "$name: kept at the end" "0 processes, 0 threads; 0 traced, 0 with losses" \
		"$(kept "$T/$name.err")"
	counted "$T/$name.p" > "$T/$name.c"
	same "$name: PERF lines, counted" "$EXP/shapes-$name.perf" "$T/$name.c"
}

# ===== Process trees ======================================================
# 30 instrumented children: the parent's 7 events and 10 per child.  Stops:
# tr2_shapes at its exec, then its libraries once the loader mapped them;
# the children's exec and libraries are known by then.
cmd spawn-probes 307 0 2 -- spawn 30 $SHAPES child
expect_eq "spawn-probes: 30 child sessions at depth d1" 30 \
	"$(grep -c '| d1 | main .*| version ' "$T/spawn-probes.p")"
# /bin/true: one more stop, for the first exec of /bin/true.
cmd spawn-true 7 0 3 -- spawn 30 /bin/true

# ===== dlopen/dlclose cycles ==============================================
# 200 cycles, 3 events each; one stop for the plugin's first dlopen.
cmd dlopen 607 0 3 -- dlopen 200 $PLUGIN
expect_eq "dlopen: data i in order, every cycle" "$(seq 0 199)" \
	"$(sed -nE 's/.*\| \.*i:([0-9]+)$/\1/p' "$T/dlopen.p")"

# A program without the runtime (tr2_dlhost) that dlopens the plugin:
# libtr2.so is first mapped by that dlopen.  Untraced it runs (a 4 KiB
# thread-local buffer in libtr2 made the dlopen fail: "cannot allocate
# memory in static TLS block").  Traced, tr2-bpf attaches to libtr2.so at
# the first instruction run from it: two stops (tr2_dlhost at its exec,
# libtr2.so with the plugin), every cycle's events.
expect_eq "dlhost: a program without the runtime dlopens a plugin on libtr2.so" \
	"tr2_dlhost: 3 cycles, 1 addresses" "$($P/tr2_dlhost 3 $PLUGIN 2>&1)"
timeout $LIMIT $BPF -v --perf="$T/dlhost.p" -- $P/tr2_dlhost 3 $PLUGIN > "$T/dlhost.out" 2> "$T/dlhost.err"
expect_eq "dlhost: exit status 0" 0 $?
expect_eq "dlhost: summary" "tr2-bpf: 9 events, 0 lost" "$(tail -1 "$T/dlhost.err")"
expect_eq "dlhost: processes stopped to attach" 2 "$(stops "$T/dlhost.err")"
counted "$T/dlhost.p" > "$T/dlhost.c"
same "dlhost: PERF lines, counted" "$EXP/shapes-dlhost.perf" "$T/dlhost.c"

# A call site's strings are sent once per thread and object: a plugin
# loaded again at the same address refers to them.  Another plugin with the
# same bytes but its category ("plugix"), loaded in turn at that address,
# and the same file rewritten in place (same inode) each cycle, must each
# show their own category: the object is told by file, inode, change time
# and load address, and libtr2.so, brought and dropped by the plugin, stays
# loaded (-z nodelete), so that module numbers are never given twice.
categories() { awk -F'|' '/region_enter|region_leave| data /{gsub(/ /, "", $8); printf "%s ", $8}' "$1"; }
PLUGIX=$P/libtr2_plugix.so
expect_eq "dlhost: two plugins in turn at one address" "tr2_dlhost: 4 cycles, 1 addresses" \
	"$(timeout $LIMIT $BPF --perf="$T/turns.p" -- $P/tr2_dlhost 4 $PLUGIN $PLUGIX 2> "$T/turns.err")"
expect_eq "dlhost: two plugins in turn, each its own category" \
	"plugin plugin plugin plugix plugix plugix plugin plugin plugin plugix plugix plugix " \
	"$(categories "$T/turns.p")"
expect_eq "dlhost: one file rewritten in place each cycle" "tr2_dlhost: 4 cycles, 1 addresses" \
	"$(LD_LIBRARY_PATH=$B timeout $LIMIT $BPF --perf="$T/rewrite.p" -- \
		$P/tr2_dlhost --copy="$T/rewritten.so" 4 $PLUGIN $PLUGIX 2> "$T/rewrite.err")"
expect_eq "dlhost: a file rewritten in place, each content its own category" \
	"plugin plugin plugin plugix plugix plugix plugin plugin plugin plugix plugix plugix " \
	"$(categories "$T/rewrite.p")"
# --summary keys a literal category or label by its address and its object
# (the tables before the time split's, which repeats the regions).
expect_eq "dlhost: two plugins in turn at one address, --summary rows (count, category, label or key)" \
	"$(printf '%s\n' '2 plugin run' '2 plugix run' '2 plugin i' '2 plugix i')" \
	"$(timeout $LIMIT $BPF --summary -- $P/tr2_dlhost 4 $PLUGIN $PLUGIX 2>/dev/null |
		awk '/on_cpu/ {exit} NF > 2 && $(NF-1) ~ /^plugi[nx]$/ {print $1, $(NF-1), $NF}')"

# -p: attached while the target waits, before it ever loaded the plugin.
run_pid() { # NAME ARGS...: tr2-bpf -v -p on tr2_shapes --wait-stdin ARGS
	local name=$1 prog tracer; shift
	rm -f "$T/fifo"; mkfifo "$T/fifo"
	exec 7<>"$T/fifo"
	$SHAPES --wait-stdin "$@" <&7 > "$T/$name.out" &
	prog=$!; started+=($prog)
	wait_for "$T/$name.out" waiting
	$BPF -v --perf="$T/$name.p" -p $prog 2> "$T/$name.err" &
	tracer=$!; started+=($tracer)
	wait_for "$T/$name.err" "tracing process"
	echo go >&7
	wait_for "$T/$name.out" done
	echo $prog > "$T/$name.pid"
	echo $tracer > "$T/$name.tracer"
}
run_pid dlopen-pid dlopen 200 $PLUGIN
echo go >&7
exec 7>&-
wait "$(cat "$T/dlopen-pid.tracer")"
expect_eq "dlopen-pid: summary" "tr2-bpf: 604 events, 0 lost" "$(tail -1 "$T/dlopen-pid.err")"
expect_eq "dlopen-pid: processes stopped to attach" 1 "$(stops "$T/dlopen-pid.err")"
counted "$T/dlopen-pid.p" > "$T/dlopen-pid.c"
same "dlopen-pid: PERF lines, counted" "$EXP/shapes-dlopen-pid.perf" "$T/dlopen-pid.c"

# ===== Thread churn =======================================================
# 300 threads, each 6 events with thread_exit (th_timer and th_counter
# included), then the process totals: timer intervals:300, counter 300.
cmd threads 1809 0 2 -- threads 300
# Without thread_exit: 3 events each; the kernel saw each thread end, so
# its sums still reach the process's timer and counter lines.
cmd threads-noexit 909 0 2 -- threads 300 noexit

# ===== More timers than a thread keeps sums of ============================
# 40 timers and a counter in one thread, 16 kept: 24 timer starts and the
# counter add are lost, counted in the summary and marked in the stream.
cmd timers-full 23 25 2 -- timers 40
expect_eq "timers-full: the stream's lost_events markers add up to 25" 25 "$(markers "$T/timers-full.p")"

# ===== Long attaches stay bounded =========================================
# -p on a process that churns threads without thread_exit, then waits:
# tr2-bpf, stopped with SIGINT, keeps its main thread and nothing of the
# threads that came and went, whether they were 100 or 3000.
for n in 100 3000; do
	run_pid "bounded-$n" threads $n noexit
	kill -INT "$(cat "$T/bounded-$n.tracer")"
	wait "$(cat "$T/bounded-$n.tracer")"
	echo go >&7
	exec 7>&-
	wait "$(cat "$T/bounded-$n.pid")"
	expect_eq "-p, $n threads came and went: kept" "1 processes, 1 threads; 1 traced, 0 with losses" \
		"$(kept "$T/bounded-$n.err")"
done
# -- CMD whose 300 children have all exited while CMD still runs: tr2-bpf
# keeps CMD alone.
mkfifo "$T/fifo2"
exec 8<>"$T/fifo2"
$BPF -v --perf="$T/bounded-procs.p" -- $SHAPES --wait-stdin spawn 300 /bin/true <&8 \
	> "$T/bounded-procs.out" 2> "$T/bounded-procs.err" &
tracer=$!; started+=($tracer)
wait_for "$T/bounded-procs.out" waiting
echo go >&8
wait_for "$T/bounded-procs.out" done
kill -INT $tracer
wait $tracer
echo go >&8
exec 8>&-
expect_eq "-- CMD, 300 children came and went: kept" "1 processes, 1 threads; 1 traced, 0 with losses" \
	"$(kept "$T/bounded-procs.err")"

echo "shapes: $pass passed, $fail failed (${SECONDS} s)"
[ $fail = 0 ]
