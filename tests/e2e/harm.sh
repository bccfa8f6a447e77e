#!/usr/bin/env bash
# Do no harm: what tr2-bpf must never do to the processes it traces, nor to
# those it does not.
#  1. Memory: no probe hit changes what a program computes (every event
#     kind, gcc and clang at -O2 and -O3, -- CMD and -p, every --probe-nop
#     value or its refusal), and the runtime keeps no data below %rsp.
#  2. Liveness: a process held for tr2-bpf to attach (an exec under -- CMD,
#     a dlopen under -p) goes on within 1 s when tr2-bpf is stopped, killed
#     or does not answer.
#  3. Bystanders: a process outside the traced set has no semaphore raised
#     and sends nothing; a child of a -p target is not traced, one of CMD is.
# Needs root and BPF; says so and skips without.  make test-harm.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
P=$B/tests/progs
STATE="python3 tests/e2e/tr2_state.py"
T=$(mktemp -d /tmp/tr2-harm.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. tests/lib.sh

# expect_true NAME DETAIL COMMAND...: the command succeeds.
expect_true() { local name=$1 detail=$2; shift 2; if "$@"; then ok "$name"; else bad "$name" "$detail"; fi; }

if [ "$(id -u)" != 0 ]; then
	echo "harm: SKIP: not root; these tests load BPF programs"
	echo "harm: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! out=$($BPF -- /bin/true 2>&1); then
	case "$out" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*)
		echo "harm: SKIP: BPF unavailable here: $out"
		echo "harm: 0 passed, 0 failed, 1 skipped"
		exit 0;;
	esac
	echo "FAIL tr2-bpf cannot trace /bin/true: $out"
	echo "harm: 0 passed, 1 failed"
	exit 1
fi

# wait_for FILE TEXT: until FILE holds TEXT (10 s at most).
wait_for() {
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# start_waiting NAME PROG ARG...: PROG --wait-stdin ARG... in the background,
# its stdin a fifo kept open on fd 8 + n; $pid set once it waits.
start_waiting() {
	local name=$1; shift
	rm -f "$T/$name.fifo"; mkfifo "$T/$name.fifo"
	"$1" --wait-stdin "${@:2}" < "$T/$name.fifo" > "$T/$name.out" 2>&1 &
	pid=$!
	exec {fd}> "$T/$name.fifo"
	eval "${name}_fd=$fd"
	wait_for "$T/$name.out" waiting
}

# ===== 1. Memory ==========================================================
red_zone() { objdump -d --no-show-raw-insn "$1" | grep -cE '[^0-9a-fx]-0x[0-9a-f]+\(%rsp\)'; }
expect_eq "libtr2.so: no instruction reads or writes below %rsp (the red zone)" 0 "$(red_zone $B/libtr2.so)"
expect_eq "libtr2.a: no instruction reads or writes below %rsp (the red zone)" 0 "$(red_zone $B/libtr2.a)"

N=100000
want=$(for k in counter_add data_intmax data_string data_json region_enter region_leave timer_start timer_stop \
	printf "callee-saved registers across trace2__counter_add"; do echo "$k: $N calls, 0 wrong"; done)
# version, start, exit, atexit, timer, counter, and per call round the
# records of data_string, data_json, printf and the aggregates of regions
# (enter and leave) and integer data.
# The program makes its 6N events in some 30 ms, more than the 16M ring
# holds: what tr2-bpf cannot read in time is lost, and must be counted.
# every_event FILE WANT: WANT events, 0 lost; or, some lost, the events and
# the lost adding up to WANT within 0.1 % (the lost are counted in calls:
# a lost timer_stop is a call and no event).  Full speed without loss is
# --record's (tests/e2e/record.sh).
every_event() {
	local n m
	read -r n m <<< "$(sed -nE 's/^tr2-bpf: ([0-9]+) events, ([0-9]+) lost$/\1 \2/p' "$1" | tail -1)"
	if [ "${m:-x}" = 0 ]; then echo "${n:-?}"; return; fi
	[ -n "$n" ] && [ $(((n + m - $2) * 1000 / $2)) = 0 ] && echo "$2" && return
	echo "$n events, $m lost"
}
for v in gcc-O2 gcc-O3 clang-O2 clang-O3; do
	timeout 300 $BPF --summary -- $P/tr2_leaf-$v $N > "$T/cmd.out" 2> "$T/cmd.err"
	expect_eq "$v, -- CMD: exit status" 0 $?
	expect_eq "$v, -- CMD: every result right" "$want" "$(grep ' calls, ' "$T/cmd.out")"
	expect_eq "$v, -- CMD: every event, written or counted lost" $((6 * N + 6)) "$(every_event "$T/cmd.err" $((6 * N + 6)))"

	start_waiting leaf $P/tr2_leaf-$v $N
	timeout 300 $BPF --summary -p $pid > "$T/pid.out" 2> "$T/pid.err" &
	tracer=$!
	wait_for "$T/pid.err" "tracing process"
	echo go >&$leaf_fd
	wait $pid; st=$?
	exec {leaf_fd}>&-
	wait $tracer
	expect_eq "$v, -p: exit status" 0 $st
	expect_eq "$v, -p: every result right" "$want" "$(grep ' calls, ' "$T/leaf.out")"
	expect_eq "$v, -p: every event, written or counted lost" $((6 * N + 4)) "$(every_event "$T/pid.err" $((6 * N + 4)))"
done

# --probe-nop: 1 as above (the default, said explicitly here); 5 only on a
# kernel that keeps a forked child's copy of the optimized call working.
timeout 300 $BPF --probe-nop=1 --summary -- $P/tr2_leaf-gcc-O2 $N > "$T/nop1.out" 2> "$T/nop1.err"
expect_eq "--probe-nop=1: every result right" "$want" "$(grep ' calls, ' "$T/nop1.out")"
if grep -q " arch_uprobe_optimize$" /proc/kallsyms; then
	$BPF --probe-nop=5 -- /bin/true > /dev/null 2> "$T/nop5.err"
	expect_eq "--probe-nop=5: refused on this kernel: status" 2 $?
	expect_eq "--probe-nop=5: refused on this kernel: one line" \
		"tr2-bpf: --probe-nop=5: this kernel turns a uprobe on a 5-byte nop into a call whose trampoline a forked child does not inherit (it would crash): use --probe-nop=1" \
		"$(cat "$T/nop5.err")"
else
	timeout 300 $BPF --probe-nop=5 --summary -- $P/tr2_leaf-gcc-O2 $N > "$T/nop5.out" 2> "$T/nop5.err"
	expect_eq "--probe-nop=5: every result right" "$want" "$(grep ' calls, ' "$T/nop5.out")"
fi

# Another tracer on the public probes (docs/probes.md): one site per probe,
# each with a semaphore, in the runtime; bpftrace attaches where the notes
# point and the program computes the same.
probes=$(readelf -n $B/libtr2.so | awk '/Provider: trace2/ { p = 1; next } p && /Name:/ { n = $2 } p && /Semaphore:/ { print n, ($NF ~ /0x0+$/ ? "none" : "semaphore"); p = 0 }' | sort | uniq -c | awk '{ print $1, $3 }' | sort -u)
expect_eq "libtr2.so: each trace2 probe has one site and a semaphore" "1 semaphore" "$probes"
expect_eq "libtr2.so: 28 trace2 probes" 28 \
	"$(readelf -n $B/libtr2.so | grep -A1 'Provider: trace2' | grep -c Name:)"
if command -v bpftrace > /dev/null; then
	LEAF=$(realpath $P/tr2_leaf-clang-O2)
	expect_eq "bpftrace -l: the probes of the program linked with libtr2.a" 30 \
		"$(bpftrace -l "usdt:$LEAF:*" | wc -l)"
	timeout 120 bpftrace -e "usdt:$LEAF:trace2:region_enter { @n = count(); }" -c "$LEAF $N" > "$T/bt.out" 2>&1
	expect_eq "bpftrace on trace2:region_enter: every result right" "$want" "$(grep ' calls, ' "$T/bt.out")"
	expect_eq "bpftrace on trace2:region_enter: every event" "@n: $N" "$(grep '^@n:' "$T/bt.out")"
else
	echo "skip bpftrace: not installed (scripts/install-deps.sh installs it)"
fi

# ===== 2. Liveness ========================================================
# Emulated (the QEMU guests of make test-kernels, TR2_TEST_SLOW): these
# checks time a held process against the guard's 0.9 s to 0.2 s, which a
# CPU ten times slower cannot keep; the guard is the same on every kernel.
if [ -n "${TR2_TEST_SLOW:-}" ]; then
	echo "SKIP liveness: emulated CPU (TR2_TEST_SLOW=$TR2_TEST_SLOW): its bounds are tighter than emulation keeps"
else
# tr2-bpf holds a process (SIGSTOP) that maps an object it has not looked
# at, until it has attached; TR2_BPF_TEST_HOLD_DELAY_MS makes it slow to
# attach, so that the test can stop it or kill it meanwhile.
now_ms() { date +%s%3N; }
# held_cmd HOW: -- CMD, whose first exec (sh) is held; then tr2-bpf gets
# SIGHOW (NONE: nothing, it just does not answer).
held_cmd() {
	local how=$1 t0 t1
	rm -f "$T/done"
	TR2_BPF_TEST_HOLD_DELAY_MS=5000 $BPF --summary -- sh -c "$P/tr2_leaf-gcc-O2 10 > /dev/null; date +%s%3N > $T/done" \
		> /dev/null 2> "$T/held.err" &
	tracer=$!
	for _ in $(seq 100); do [ "$(ps -o stat= -p "$(cmd_of $tracer)" | cut -c1)" = T ] && break; sleep 0.05; done
	expect_eq "-- CMD, tr2-bpf $how: CMD is held (stopped) first" T \
		"$(ps -o stat= -p "$(cmd_of $tracer)" | cut -c1)"
	t0=$(now_ms)
	[ "$how" != NONE ] && kill -$how $tracer
	wait_for "$T/done" .
	t1=$(cat "$T/done" 2>/dev/null || echo 0)
	expect_true "-- CMD, tr2-bpf $how: CMD went on within 1 s" "$((t1 - t0)) ms" \
		[ "$t1" -ge "$t0" -a "$((t1 - t0))" -le 1200 ]
	kill -CONT $tracer 2>/dev/null
	kill -TERM $tracer 2>/dev/null
	wait $tracer 2>/dev/null
}
held_cmd STOP
held_cmd KILL
held_cmd NONE

# held_pid HOW: -p on tr2_shapes, whose first dlopen of a plugin not seen
# yet is held.
held_pid() {
	local how=$1 t0 t1
	start_waiting shapes $P/tr2_shapes dlopen 3 $P/libtr2_plain.so
	TR2_BPF_TEST_HOLD_DELAY_MS=5000 $BPF --summary -p $pid > /dev/null 2> "$T/heldp.err" &
	tracer=$!
	wait_for "$T/heldp.err" "tracing process"
	echo go >&$shapes_fd
	sleep 0.3
	expect_eq "-p, tr2-bpf $how: the process is held (stopped) at its dlopen" T "$(ps -o stat= -p $pid | cut -c1)"
	t0=$(now_ms)
	[ "$how" != NONE ] && kill -$how $tracer
	wait_for "$T/shapes.out" elapsed_ns
	t1=$(now_ms)
	expect_true "-p, tr2-bpf $how: the process went on within 1 s" "$((t1 - t0)) ms" \
		[ "$((t1 - t0))" -le 1200 ]
	echo go >&$shapes_fd
	exec {shapes_fd}>&-
	wait $pid
	kill -CONT $tracer 2>/dev/null
	wait $tracer 2>/dev/null
}
held_pid STOP
held_pid KILL
held_pid NONE

# held_four HOW: four processes held at once (-- sh, whose four children
# exec four copies of sleep, new files each, while tr2-bpf takes 700 ms to
# attach for each), then tr2-bpf gets SIGHOW: all four go on within 0.5 s.
# (The eBPF side could send only the first SIGCONT of several: the others
# stayed stopped for good.)
states() { for p in "$@"; do ps -o stat= -p "$p" | cut -c1; done | tr -d '\n'; }
held_four() {
	local how=$1 kids state
	rm -rf "$T/four"; mkdir "$T/four"
	for i in 1 2 3 4; do cp /bin/sleep "$T/four/s$i"; done
	TR2_BPF_TEST_HOLD_DELAY_MS=700 $BPF --perf=/dev/null -- sh -c \
		"echo \$\$ > $T/four/sh; for i in 1 2 3 4; do $T/four/s\$i 2 & done; wait" 2> /dev/null &
	tracer=$!
	wait_for "$T/four/sh" .
	for _ in $(seq 100); do
		kids=$(pgrep -P "$(cat "$T/four/sh")")
		state=$(states $kids)
		[ "$state" = TTTT ] && break
		sleep 0.02
	done
	expect_eq "-- CMD, tr2-bpf $how: four processes held at once" TTTT "$state"
	{ kill -$how $tracer; sleep 0.5; state=$(states $kids); kill -CONT $tracer; wait $tracer; } 2> /dev/null
	expect_eq "-- CMD, tr2-bpf $how: all four went on within 0.5 s" SSSS "$state"
}
held_four KILL
held_four STOP

# What tr2-bpf says when it could not serve a process.
TR2_BPF_TEST_HOLD_DELAY_MS=2000 $BPF --summary -- sh -c 'sleep 1' > /dev/null 2> "$T/said.err" &
tracer=$!
sleep 0.3
kill -STOP $tracer; sleep 1.5; kill -CONT $tracer
wait $tracer
expect_true "a process that went on without tr2-bpf: said on stderr" "$(cat "$T/said.err")" \
	grep -q "^tr2-bpf: [0-9]* processes went on without waiting for tr2-bpf to attach" "$T/said.err"
fi

# ===== 3. Bystanders ======================================================
# Two processes of one program: one traced under -- CMD, one beside it.
start_waiting by $P/tr2_leaf-gcc-O2 1000
bystander=$pid
rm -f "$T/tr.fifo"; mkfifo "$T/tr.fifo"
$BPF --event="$T/by.event" -- $P/tr2_leaf-gcc-O2 --wait-stdin 1000 < "$T/tr.fifo" > "$T/tr.out" 2> "$T/tr.err" &
tracer=$!
exec {tr_fd}> "$T/tr.fifo"
wait_for "$T/tr.out" waiting
traced=$(cmd_of $tracer)
expect_eq "bystander beside -- CMD: no semaphore raised" "on=0x0 sem=0" "$($STATE $bystander)"
expect_eq "the traced process: tr2:enable's semaphore raised" "on=0x1 sem=0" "$($STATE $traced)"
echo go >&$by_fd; echo go >&$tr_fd
exec {by_fd}>&- {tr_fd}>&-
wait $bystander $tracer
expect_eq "bystander beside -- CMD: none of its events in the trace (one process's lines)" 1 \
	"$(grep -o '"sid":"[^"]*"' "$T/by.event" | sort -u | wc -l)"

# A child forked by a -p target is not traced: its semaphore is lowered at
# the fork, its calls send nothing.
start_waiting fork $P/tr2_leaf-gcc-O2 --fork
$BPF --perf="$T/fork.perf" -p $pid > /dev/null 2> "$T/fork.err" &
tracer=$!
wait_for "$T/fork.err" "tracing process"
echo go >&$fork_fd
exec {fork_fd}>&-
wait $pid $tracer
expect_eq "-p: the target's child has tr2-bpf's semaphore lowered, the target not" \
	"child: tr2:enable semaphore 0
parent: tr2:enable semaphore 1" "$(grep semaphore "$T/fork.out")"
expect_eq "-p: the child's event is not in the trace, the parent's is" "parent" \
	"$(grep -o 'leaf *| [a-z]*' "$T/fork.perf" | awk '{print $3}' | tr '\n' ' ' | xargs)"
# Under -- CMD the child is traced, from its first event.
$BPF --perf="$T/cfork.perf" -- $P/tr2_leaf-gcc-O2 --fork > "$T/cfork.out" 2> /dev/null
expect_eq "-- CMD: the child keeps the semaphore" "child: tr2:enable semaphore 1
parent: tr2:enable semaphore 1" "$(grep semaphore "$T/cfork.out")"
expect_eq "-- CMD: the child's and the parent's events are in the trace" "child parent" \
	"$(grep -o 'leaf *| [a-z]*' "$T/cfork.perf" | awk '{print $3}' | tr '\n' ' ' | xargs)"

echo "harm: $pass passed, $fail failed"
[ "$fail" = 0 ]
