#!/usr/bin/env bash
# Tracers at once (issue 27, point 1): any number of tr2-bpf, in any modes,
# each traces what it was asked to, and nothing one does at its start or
# end (tracefs and its events, holds, semaphores, BPF objects) takes
# anything from another.
#
# Each of ROUNDS rounds (default 20) runs four tracers whose starts and ends
# interleave, in a private mount namespace where tracefs is not mounted (a
# tracer that mounted it there and unmounted it at its end would pull it
# from under the others):
#   A  -a --comm=X --event=DIR/   the whole round: every process named X
#   D  --event=DIR/ -- X          starts first, ends while B runs
#   B  --event=DIR/ -- sh -c 'X; sleep 0.5; Y'   starts while D runs; its Y
#                                 maps libtr2.so after D has ended, which
#                                 makes B a tracefs event then
#   C  --event=DIR/ -p P          P an X that waits on a fifo; starts after
#                                 B, ends before A
# X is a copy of tests/progs/tr2_allapi under a name of this run (so that
# A's filter leaves out the other X's on the host), Y tests/progs/tr2_shared.
# The exec of every X is held by two tracers at once (A and D or B), one of
# them slow to attach (the other must not let X run first).  Each
# tracer's lines must be those of the same tracer run alone: one file per
# process, every line of every file, masked (tests/e2e/mask.py); each ends
# with status 0 and "tr2-bpf: N events, 0 lost".
#
#   tests/e2e/concurrent.sh [ROUNDS]
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
P=$B/tests/progs
ROUNDS=${1:-20}
LIMIT=30            # seconds any tr2-bpf run may take

if [ "$(id -u)" != 0 ]; then
	echo "concurrent: SKIP: not root; these tests load BPF programs"
	echo "concurrent: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
# Once, in a mount namespace of its own, without tracefs.
if [ -z "${TR2_CONCURRENT_NS:-}" ] && command -v unshare > /dev/null; then
	TR2_CONCURRENT_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
# (debugfs too, whose tracing directory mounts tracefs when looked into)
while umount /sys/kernel/debug/tracing 2> /dev/null; do :; done
while umount /sys/kernel/debug 2> /dev/null; do :; done
while umount /sys/kernel/tracing 2> /dev/null; do :; done

T=$(mktemp -d /tmp/tr2-conc.XXXXXX)
pass=0 fail=0
started=()
cleanup() {
	local p
	for p in "${started[@]}"; do kill -9 "$p" 2> /dev/null; done
	exec 7>&- 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
. tests/lib.sh
LIMIT=$(slow $LIMIT)

expect_eq "tracefs and debugfs are mounted nowhere in this namespace" "" "$(grep -wE "tracefs|debugfs" /proc/self/mounts)"

X=tr2cc$$
mkdir "$T/bin"
cp $P/tr2_allapi "$T/bin/$X"
X=$T/bin/$X
Y=$P/tr2_shared

wait_for() {  # FILE TEXT: until FILE holds TEXT (5 s at most)
	local i
	for ((i = 0; i < 500; i++)); do
		grep -q -- "$2" "$1" 2> /dev/null && return 0
		sleep 0.01
	done
	return 1
}
finish() {  # PID: waits for it, LIMIT seconds at most (then kills it: 124)
	local i
	for ((i = 0; i < LIMIT * 50; i++)); do
		kill -0 "$1" 2> /dev/null || break
		sleep 0.02
	done
	if kill -0 "$1" 2> /dev/null; then
		kill -9 "$1"
		wait "$1" 2> /dev/null
		return 124
	fi
	wait "$1"
}
# start_p DIR: starts P (X --wait-stdin, stdin on a fifo); its pid in $ppid.
start_p() {
	rm -f "$T/fifo"; mkfifo "$T/fifo"
	exec 7<> "$T/fifo"
	"$X" --wait-stdin <&7 > "$1.p.out" &
	ppid=$!; started+=($ppid)
	wait_for "$1.p.out" waiting
}
release_p() { echo go >&7; wait $ppid; exec 7>&-; }

# files DIR: each file of DIR masked, one line per file: its masked lines'
# checksum and count, sorted (so that the order of the processes' sids does
# not count); the masked files themselves in DIR.m/.
files() {
	local f
	mkdir -p "$1.m"
	for f in "$1"/*; do
		python3 tests/e2e/mask.py event < "$f" | sed "s|$T/bin/tr2cc[0-9]*|X|g" > "$1.m/${f##*/}"
		echo "$(md5sum < "$1.m/${f##*/}" | cut -c1-12) $(wc -l < "$1.m/${f##*/}") lines"
	done | sort
}
# check NAME TRACER-ERR STATUS WANT-STATUS DIR REF: the tracer's status, its
# summary line, and its files against the reference run's.
check() {
	local name=$1 err=$2 st=$3 want=$4 dir=$5 ref=$6 sum
	sum=$(tail -1 "$err" | sed -E 's/: [1-9][0-9]* events, 0 lost$/: N events, 0 lost/')
	if [ "$st" != "$want" ] || [ "$sum" != "tr2-bpf: N events, 0 lost" ]; then
		bad "$name: status $want and no loss" "status $st, stderr:" "$(cat "$err")"
		return
	fi
	files "$dir" > "$dir.sums"
	if diff -u "$ref.sums" "$dir.sums" > "$T/diff"; then
		ok "$name"
	else
		bad "$name: its files differ from the tracer's run alone" "$(cat "$T/diff")" \
			"$(for f in "$dir.m"/*; do diff -u "$(ls "$ref.m"/* | head -1)" "$f"; done | head -30)"
	fi
}

# --- each tracer alone: the reference lines ------------------------------
R=$T/ref
mkdir -p $R/a $R/b $R/c $R/d
$BPF -a --comm="${X##*/}" --event=$R/a/ 2> $R/a.err &
a=$!; started+=($a)
wait_for $R/a.err "tracing every process" || bad "reference: A says it traces"
"$X" > /dev/null
sh -c "\"$X\"" > /dev/null
start_p $R
release_p
kill -INT $a; finish $a; st=$?
expect_eq "reference A (-a --comm): status" 0 $st
files $R/a > $R/a.sums
expect_eq "reference A: three processes" 3 "$(wc -l < $R/a.sums)"

$BPF --event=$R/d/ -- "$X" > /dev/null 2> $R/d.err
expect_eq "reference D (-- X): X's status" 3 $?
files $R/d > $R/d.sums
$BPF --event=$R/b/ -- sh -c "\"$X\"; sleep 0.5; \"$Y\"" > /dev/null 2> $R/b.err
expect_eq "reference B (-- sh -c 'X; Y'): status" 0 $?
files $R/b > $R/b.sums

start_p $R/c
$BPF --event=$R/c/ -p $ppid 2> $R/c.err &
c=$!; started+=($c)
wait_for $R/c.err "tracing process" || bad "reference: C says it traces"
release_p
finish $c; st=$?
expect_eq "reference C (-p): status" 0 $st
files $R/c > $R/c.sums
for t in a b c d; do
	expect_eq "reference $t: its summary line" "tr2-bpf: N events, 0 lost" \
		"$(tail -1 $R/$t.err | sed -E 's/: [1-9][0-9]* events/: N events/')"
done

# --- the rounds ------------------------------------------------------------
rounds_bad=0
for r in $(seq "$ROUNDS"); do
	W=$T/r$r
	mkdir -p $W/a $W/b $W/c $W/d
	before=$fail
	$BPF -a --comm="${X##*/}" --event=$W/a/ 2> $W/a.err &
	a=$!; started+=($a)
	wait_for $W/a.err "tracing every process" || bad "round $r: A says it traces"
	# D, in every second round B, is slow to attach to a held process
	# (tests only: TR2_BPF_TEST_HOLD_DELAY_MS), so that A has attached to
	# the same X and would let it run first.
	TR2_BPF_TEST_HOLD_DELAY_MS=$((r % 2 * 200)) $BPF --event=$W/d/ -- "$X" > /dev/null 2> $W/d.err &
	d=$!; started+=($d)
	# B starts while D does, in every second round a little later
	[ $((r % 2)) = 0 ] && sleep 0.0$r
	TR2_BPF_TEST_HOLD_DELAY_MS=$((200 - r % 2 * 200)) \
		$BPF --event=$W/b/ -- sh -c "\"$X\"; sleep 0.5; \"$Y\"" > /dev/null 2> $W/b.err &
	b=$!; started+=($b)
	start_p $W/c
	$BPF --event=$W/c/ -p $ppid 2> $W/c.err &
	c=$!; started+=($c)
	wait_for $W/c.err "tracing process" || bad "round $r: C says it traces"
	finish $d; st_d=$?
	release_p
	finish $c; st_c=$?
	finish $b; st_b=$?
	kill -INT $a; finish $a; st_a=$?
	check "round $r: A (-a --comm=X)" $W/a.err $st_a 0 $W/a $R/a
	check "round $r: B (-- sh -c 'X; sleep; Y')" $W/b.err $st_b 0 $W/b $R/b
	check "round $r: C (-p P)" $W/c.err $st_c 0 $W/c $R/c
	check "round $r: D (-- X)" $W/d.err $st_d 3 $W/d $R/d
	[ $fail != $before ] && rounds_bad=$((rounds_bad + 1))
done
expect_eq "every round: every tracer's lines as alone" "0 of $ROUNDS rounds bad" "$rounds_bad of $ROUNDS rounds bad"
expect_eq "no tracefs mount left in this namespace" "" "$(grep -wE "tracefs|debugfs" /proc/self/mounts)"
mkdir "$T/tracefs" && mount -t tracefs nodev "$T/tracefs" &&
	expect_eq "no tracefs event of these tracers left" "" "$(grep -E "tr2_($a|$b|$c|$d)/" "$T/tracefs/uprobe_events")"
umount "$T/tracefs"

echo "concurrent: $pass passed, $fail failed"
[ $fail = 0 ]
