#!/usr/bin/env bash
# Record now, format later (issue 36): tr2-bpf --record=FILE, tr2-fmt FILE,
# and pausing with SIGUSR1 / SIGUSR2.
#  1. The same run written live and recorded: tr2-fmt's output of the
#     recording equals each live format and view, byte for byte (--normal,
#     --perf, --event, --chrome, --folded, --summary --hist, --category,
#     --brief), for threads, a child, and exec'd and forked processes;
#     --record alone keeps the split of region time (issue 35) for tr2-fmt's
#     --summary and --chrome, --no-split does not.
#  2. A flood under --record: tr2-bpf's N + M is what the program made, and
#     tr2-fmt formats the N it recorded.
#  3. Bounded: --record-size stops the trace, says so, and the file stays
#     within it and reads whole; a tr2-bpf killed leaves a recording that
#     tr2-fmt formats up to where it stops, saying where (exit 1).
#  4. Pause: SIGUSR1 lowers tr2:enable's semaphore in every traced process
#     (tr2_state.py reads it), SIGUSR2 raises it again, also in a process
#     that CMD started while paused (-- CMD), and under -p and -a; the live
#     stream and the recording mark the gap alike, and the last lines on
#     stderr say how long it was paused.
# Needs root and BPF; says so and skips without.  (A damaged or cut file,
# without BPF: tests/fmt/cases/recording; fuzzed: tests/fuzz, recording.)
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
FMT=$B/tr2-fmt
STRESS=$B/tests/progs/tr2_stress
T=$(mktemp -d /tmp/tr2-record.XXXXXX)
pass=0 fail=0
started=()

cleanup() {
	local p
	for p in "${started[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

. tests/lib.sh
need_bpf record "$BPF"

# sem PID: the low 16 bits of the process's trace2__state.on, tr2:enable's semaphore.
sem() { python3 tests/e2e/tr2_state.py "$1" | sed -n 's/^on=\(0x[0-9a-f]*\).*/\1/p' | xargs -r printf '%d\n' | awk '{ print $1 % 65536 }'; }
# formats NAME: tr2-fmt's output of $T/NAME.rec against each live $T/NAME.FORMAT.
formats() {
	local f
	for f in normal perf event chrome folded; do
		[ -e "$T/$1.$f" ] || continue
		"$FMT" --$f ${2:-} "$T/$1.rec" > "$T/$1.fmt.$f" 2> "$T/$1.fmt.err"
		if cmp -s "$T/$1.$f" "$T/$1.fmt.$f" && [ -s "$T/$1.$f" ]; then
			ok "$1: tr2-fmt --$f of the recording = live --$f ($(wc -l < "$T/$1.$f") lines)"
		else
			bad "$1: tr2-fmt --$f of the recording differs from live --$f" \
				"$(diff "$T/$1.$f" "$T/$1.fmt.$f" | head -10)" "$(cat "$T/$1.fmt.err")"
		fi
	done
}

# ===== 1. Live and recorded, one run ========================================
"$BPF" --record="$T/dirscan.rec" --normal="$T/dirscan.normal" --perf="$T/dirscan.perf" \
	--event="$T/dirscan.event" --chrome="$T/dirscan.chrome" --folded="$T/dirscan.folded" --summary --hist \
	-- sh -c "exec $B/examples/dirscan -j 2 examples > /dev/null" > "$T/dirscan.sum" 2> "$T/dirscan.err"
formats dirscan
"$FMT" --summary --hist "$T/dirscan.rec" > "$T/dirscan.fmt.sum" 2> "$T/dirscan.fmt.err"
if cmp -s "$T/dirscan.sum" "$T/dirscan.fmt.sum" && grep -q 'tr2-bpf summary after' "$T/dirscan.sum"; then
	ok "dirscan: tr2-fmt --summary --hist of the recording = live --summary --hist"
else
	bad "dirscan: the summary tables differ" "$(diff "$T/dirscan.sum" "$T/dirscan.fmt.sum" | head)"
fi
live=$(tail -1 "$T/dirscan.err" | sed 's/^tr2-bpf: //')
expect_eq "dirscan: tr2-fmt's count line = tr2-bpf's" "tr2-fmt: $T/dirscan.rec: $live" \
	"$(tail -1 "$T/dirscan.fmt.err")"

# exec, fork, children: the tracer's own records
"$BPF" --record="$T/fork.rec" --perf="$T/fork.perf" --event="$T/fork.event" --chrome="$T/fork.chrome" \
	-- "$STRESS" fork > /dev/null 2> "$T/fork.err"
formats fork
"$BPF" --record="$T/brief.rec" --brief --category=spin --perf="$T/brief.perf" --event="$T/brief.event" \
	-- "$STRESS" spin 100 > /dev/null 2> "$T/brief.err"
formats brief --brief
"$FMT" --category=none "$T/brief.rec" > "$T/brief.none" 2> /dev/null
# version, start, cmd_name, exit, atexit
expect_eq "tr2-fmt --category overrides the recording's: no spin lines, the 5 others" \
	"0 5" "$(grep -c 'label:tick' "$T/brief.none") $(wc -l < "$T/brief.none")"

# --record alone: the split of region time is recorded too (unless --no-split),
# for tr2-fmt's --summary and --chrome to show it later
"$BPF" --record="$T/alone.rec" -- sh -c "exec $B/examples/dirscan -j 2 examples > /dev/null" 2> /dev/null
"$FMT" --summary "$T/alone.rec" > "$T/alone.sum" 2> /dev/null
"$FMT" --chrome "$T/alone.rec" > "$T/alone.chrome" 2> /dev/null
expect_eq "--record alone: tr2-fmt --summary has the split, --chrome a thread-state track" "yes yes" \
	"$(grep -q on_cpu "$T/alone.sum" && echo yes || echo no) $(grep -q ' states"' "$T/alone.chrome" && echo yes || echo no)"
"$BPF" --record="$T/nosplit.rec" --no-split -- sh -c "exec $B/examples/dirscan -j 2 examples > /dev/null" 2> /dev/null
"$FMT" --summary "$T/nosplit.rec" > "$T/nosplit.sum" 2> /dev/null
"$FMT" --chrome "$T/nosplit.rec" > "$T/nosplit.chrome" 2> /dev/null
expect_eq "--record --no-split: neither" "no no" \
	"$(grep -q on_cpu "$T/nosplit.sum" && echo yes || echo no) $(grep -q ' states"' "$T/nosplit.chrome" && echo yes || echo no)"

# ===== 2. A flood, recorded ================================================
"$BPF" --record="$T/flood.rec" -- "$STRESS" flood 2 200000 > "$T/flood.out" 2> "$T/flood.err"
emitted=$(sed -n 's/^emitted //p' "$T/flood.out")
read -r n m < <(sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p' "$T/flood.err")
expect_eq "flood: tr2-bpf's N + M = the events made" "$emitted" "$((n + m))"
"$FMT" --perf "$T/flood.rec" > /dev/null 2> "$T/flood.fmt.err"
expect_eq "flood: tr2-fmt formats what was recorded" "tr2-fmt: $T/flood.rec: $n events, $m lost" \
	"$(cat "$T/flood.fmt.err")"

# ===== 3. Bounded ==========================================================
"$BPF" --record="$T/size.rec" --record-size=1M -- "$STRESS" flood 1 2000000 > /dev/null 2> "$T/size.err"
size=$(stat -c %s "$T/size.rec")
if grep -q "^tr2-bpf: the recording '$T/size.rec' reached --record-size=1048576 bytes: [0-9]* events not recorded$" \
	"$T/size.err" && [ "$size" -le $((1048576 + 32)) ]; then
	ok "--record-size=1M: the trace stops, says so, the file has $size bytes"
else
	bad "--record-size=1M" "$(cat "$T/size.err")" "size $size"
fi
"$FMT" --perf "$T/size.rec" > "$T/size.perf" 2> "$T/size.fmt.err"
rc=$?
if [ $rc = 0 ] && grep -q '| region_enter |' "$T/size.perf"; then
	ok "--record-size: the recording reads whole"
else
	bad "--record-size: tr2-fmt exit $rc" "$(cat "$T/size.fmt.err")"
fi

"$BPF" --record="$T/killed.rec" -- "$STRESS" spin > /dev/null 2> "$T/killed.err" &
tracer=$!
started+=($tracer)
sleep 1.5
spin=$(cmd_of $tracer)
kill -9 $tracer
wait $tracer 2>/dev/null
[ -n "$spin" ] && kill $spin
"$FMT" --perf "$T/killed.rec" > "$T/killed.perf" 2> "$T/killed.fmt.err"
rc=$?
if [ $rc = 1 ] && grep -q '| region_leave |' "$T/killed.perf" &&
	grep -Eq "^tr2-fmt: $T/killed.rec: the recording stops at byte [0-9]+ (\(and a record cut short\) )?after [0-9]+ records, [0-9.]+ s into the trace \([0-9:.]+\): tr2-bpf did not end it \(killed\?\)$" \
		"$T/killed.fmt.err"; then
	ok "tr2-bpf killed: tr2-fmt formats $(grep -c 'region_leave' "$T/killed.perf") region_leave lines and says where it stops (exit 1)"
else
	bad "tr2-bpf killed: tr2-fmt exit $rc" "$(cat "$T/killed.fmt.err")"
fi

# ===== 4. Pause and resume =================================================
# signal_check NAME TRACER SIGNAL LINE DELTA PID...: SIGNAL to TRACER moves
# tr2:enable's semaphore in each PID by DELTA (another tracer on the host,
# someone's tr2-bpf -a, may hold it up too: sem_eq), once TRACER's stderr
# has LINE.
signal_check() {
	local name=$1 tracer=$2 sig=$3 line=$4 delta=$5 p want="" got=""
	shift 5
	for p in "$@"; do want+="$(( $(sem "$p") + delta )) "; done
	kill -"$sig" "$tracer"
	wait_for "$T/$name.err" "$line" || bad "$name: no '$line' line"
	for p in "$@"; do got+="$(sem "$p") "; done
	sem_eq "$name: $sig moves tr2:enable's semaphore by $delta in the traced processes" "$want" "$got" "$tracer"
}
# sem_eq NAME WANT GOT TRACER: expect_eq, but for a difference while another
# tr2-bpf runs on the host (another job's tests: its -a raises and lowers
# the same semaphores): said, not counted.
sem_eq() {
	local others
	others=$(pgrep -x tr2-bpf | grep -vx "$4" | while read -r p; do
		[ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$4" ] || echo "$p"; done)
	if [ "$2" != "$3" ] && [ -n "$others" ]; then
		echo "skip $1: want $2, got $3 while other tr2-bpf ran ($(echo $others))"
	else
		expect_eq "$1" "$2" "$3"
	fi
}
pause_check() { signal_check "$1" "$2" USR1 'paused (SIGUSR1)' -1 "${@:3}"; }
resume_check() { signal_check "$1" "$2" USR2 'resumed (SIGUSR2)' 1 "${@:3}"; }

# -- CMD: a process started while paused is traced after the resume
"$BPF" --record="$T/cmd.rec" --perf="$T/cmd.perf" --event="$T/cmd.event" -- sh -c \
	"$STRESS spin 600000 & while [ ! -e $T/go ]; do sleep 0.02; done; $STRESS spin 600001 & wait" \
	> /dev/null 2> "$T/cmd.err" &
tracer=$!
started+=($tracer)
wait_for "$T/cmd.perf" 'spin.*label:tick'
first=$(pgrep -f "^$STRESS spin 600000\$")
pause_check cmd $tracer $first
touch "$T/go"
for _ in $(seq 500); do second=$(pgrep -f "^$STRESS spin 600001\$") && break; sleep 0.01; done
started+=($first $second)
wait_for "/proc/$second/maps" tr2_stress
sem_eq "cmd: a process started while paused has its semaphore as low as the paused one" "$(sem "$first")" \
	"$(sem "$second")" $tracer
resume_check cmd $tracer $first $second
sid=$(printf 'P%08x' "$second")
wait_for "$T/cmd.event" "$sid\",\"thread\":\"main\",\"time\":\"[^\"]*\",\"file\":\"[^\"]*\",\"line\":[0-9]*,\"nesting\":1,\"category\":\"spin\""
kill $first $second
wait $tracer
if grep "\"sid\":\"[^\"]*$sid\"" "$T/cmd.event" | grep -q '"event":"region_enter"'; then
	ok "cmd: the process started while paused is in the trace after the resume"
else
	bad "cmd: no region of the process started while paused ($sid)"
fi
markers=$(grep -c '| tr2          | paused:[0-9.]*$' "$T/cmd.perf")
expect_eq "cmd: the paused marker in the stream of the process that went on" 1 "$markers"
formats cmd
if grep -Eq '^tr2-bpf: paused 1 time, [0-9.]+ s in all$' "$T/cmd.err"; then
	ok "cmd: stderr says how long tracing was paused"
else
	bad "cmd: no 'paused 1 time' line" "$(tail -3 "$T/cmd.err")"
fi

# -p and -a
"$STRESS" spin > /dev/null &
spin=$!
started+=($spin)
for mode in "-p $spin" "-a --comm=tr2_stress"; do
	name=${mode:1:1}
	"$BPF" $mode --perf="$T/$name.perf" > /dev/null 2> "$T/$name.err" &
	tracer=$!
	started+=($tracer)
	wait_for "$T/$name.perf" 'label:tick'
	pause_check "$name" $tracer $spin
	resume_check "$name" $tracer $spin
	kill -INT $tracer
	wait $tracer
done
kill $spin

echo "record: $pass passed, $fail failed"
[ $fail = 0 ]
