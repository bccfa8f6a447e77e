#!/usr/bin/env bash
# bench/sched.sh BUILD: section 11 of BENCHMARKS.md, what the split of
# region time by scheduler state costs (markdown on stdout, progress on
# stderr): each row runs the same configuration with the split (--summary;
# --chrome, which adds a record per switch-in of a traced thread) and
# without it (--no-split), interleaved round by round, medians:
#  - the ping-pong of tests/progs/tr2_shapes (two threads of a traced
#    process handing a byte back and forth through pipes on one CPU: two
#    switches and two wakeups a round trip, no event), their CPU time;
#  - a bystander that switches context all the time (perf bench sched
#    pipe, CPU time a round trip) beside tr2-bpf -a --comm=tr2bench;
#  - a bystander of the same program (tr2bench region, CPU time a pair)
#    beside tr2-bpf -- CMD tracing a sibling;
#  - an attached event (tr2bench region under -- CMD, CPU time an event).
# Goal rows go to $TR2_GOALS when set.  Run by bench/run.sh; needs root.
set -u
export LC_ALL=C
BUILD=${1:-build}
BPF=$BUILD/tr2-bpf
SHAPES=$BUILD/tests/progs/tr2_shapes
B=$BUILD/bench/tr2bench
ROUNDS=${SCHED_ROUNDS:-5}
PINGPONG_N=${PINGPONG_N:-100000}
PIPE_N=${PIPE_N:-50000}
PAIRS=${SCHED_PAIRS:-300000}
BY_PAIRS=${BYSTANDER_ITERS:-3e8}   # the bystander's pairs: untraced, 0.3 ns each
GOALS=${TR2_GOALS:-/dev/null}
TMP=$(mktemp -d /tmp/tr2-sched-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
SAY=sched START=$(date +%s)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
if [ "$(nproc)" -ge 2 ]; then PCPU=1 TCPU=0; else PCPU=0 TCPU=0; fi

# The configurations compared: the split's options, and their names.
CONFIGS=(split nosplit chrome chrome_nosplit)
declare -A OPTS=([split]="--summary" [nosplit]="--summary --no-split"
	[chrome]="--chrome=/dev/null" [chrome_nosplit]="--chrome=/dev/null --no-split")
declare -A pp pipe by ev

# pingpong OPTS...: tr2_shapes pingpong's CPU ns a round trip (both of its
# threads, the programs that tr2-bpf runs in them included: perf stat's
# task-clock) under -- CMD; its wall time would count every other process
# that shares the CPU on this machine.
pingpong() {
	timeout 600 "$BPF" "$@" -- perf stat -x, -e task-clock -o "$TMP/pp.stat" "$SHAPES" pingpong "$PINGPONG_N" \
		>/dev/null 2>&1
	awk -F, -v n="$PINGPONG_N" '$3 == "task-clock" { printf "%.0f\n", $1 * 1e6 / n }' "$TMP/pp.stat"
}
# pipe_rt: perf bench sched pipe's CPU time a round trip (both processes).
pipe_rt() {
	taskset -c $PCPU perf stat -x, -e task-clock perf bench sched pipe -l "$PIPE_N" 2>&1 >/dev/null |
		awk -F, -v n="$PIPE_N" '$3 == "task-clock" { printf "%.0f\n", $1 * 1e6 / n }'
}
# start_bg FILE TEXT CMD...: CMD in the background (pid in BG), ready once
# FILE (its stderr) holds TEXT.
start_bg() {
	local file=$1 text=$2; shift 2
	rm -f "$file"
	"$@" 2>"$file" >/dev/null &
	BG=$!
	[ -z "$text" ] || wait_for "$text" "$file" 30 || say "  not ready: $*"
}
stop_bg() { kill -TERM "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; }

say "$ROUNDS rounds: ping-pong $PINGPONG_N, pipe $PIPE_N, bystander $BY_PAIRS pairs, events $PAIRS pairs"
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		# shellcheck disable=SC2086
		pp[$c]+=" $(pingpong ${OPTS[$c]})"
		# shellcheck disable=SC2086
		start_bg "$TMP/a.err" "tracing every process" taskset -c $TCPU "$BPF" -a --comm=tr2bench ${OPTS[$c]}
		pipe[$c]+=" $(pipe_rt)"
		stop_bg
		# shellcheck disable=SC2086
		start_bg "$TMP/sib.err" "" taskset -c $TCPU "$BPF" ${OPTS[$c]} -- "$B" idle 300s
		sleep 0.5
		by[$c]+=" $(calc %.3f "$(field ns "$(taskset -c $PCPU "$B" region "$BY_PAIRS")") / $BY_PAIRS")"
		stop_bg
		# shellcheck disable=SC2086
		line=$(timeout 600 taskset -c $TCPU "$BPF" ${OPTS[$c]} -- taskset -c $PCPU "$B" region "$PAIRS" 2>/dev/null |
			grep '^region ')
		ev[$c]+=" $(calc %.1f "$(field ns "$line") / $(field events "$line")")"
	done
	say "  round $r: ping-pong ${pp[split]##* }/${pp[nosplit]##* } ns, pipe ${pipe[split]##* }/${pipe[nosplit]##* } ns"
done

# What the programs themselves cost, from bpf_stats (kernel.bpf_stats_enabled:
# run_time_ns and run_cnt of each program): tr2-bpf -a --comm=tr2_shapes
# around one ping-pong run (both of its threads are traced there), per
# configuration, ROUNDS times: ns a run of on_switch and on_wakeup, runs a
# round trip.  Robust where the wall and CPU times above move with the
# load of the machine.
declare -A sw wk swn wkn
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		sysctl -qw kernel.bpf_stats_enabled=1
		# shellcheck disable=SC2086
		start_bg "$TMP/s.err" "tracing every process" "$BPF" -a --comm=tr2_shapes ${OPTS[$c]}
		"$SHAPES" pingpong "$PINGPONG_N" >/dev/null
		prog_stats "$BG" >"$TMP/stats"
		stop_bg
		sysctl -qw kernel.bpf_stats_enabled=0
		sw[$c]+=" $(awk '$1 == "on_switch" && $2 { printf "%.0f", $3 / $2 }' "$TMP/stats")"
		wk[$c]+=" $(awk '$1 == "on_wakeup" && $2 { printf "%.0f", $3 / $2 } $1 == "on_wakeup" { f = 1 } END { if (!f) print 0 }' "$TMP/stats")"
		swn[$c]+=" $(awk -v n="$PINGPONG_N" '$1 == "on_switch" { printf "%.2f", $2 / n }' "$TMP/stats")"
		wkn[$c]+=" $(awk -v n="$PINGPONG_N" '$1 == "on_wakeup" { printf "%.2f", $2 / n } $1 == "on_wakeup" { f = 1 } END { if (!f) print 0 }' "$TMP/stats")"
	done
done

# shellcheck disable=SC2086
m() { local -n a=$1; median ${a[$2]}; }
ratio() { calc %.3f "$(m "$1" "$2") / $(m "$1" "$3")"; }
row() {   # row WHAT ARRAY UNIT: split against no split, chrome against no split
	echo "| $1 | $(m "$2" split) | $(m "$2" nosplit) | $(ratio "$2" split nosplit)x | $(m "$2" chrome) | $(m "$2" chrome_nosplit) | $(ratio "$2" chrome chrome_nosplit)x |"
}

cat <<EOF
Each row runs one configuration of tr2-bpf with the split (\`--summary\`, and \`--chrome=/dev/null\`,
which adds a record per switch-in of a traced thread for its state track) and the same with
\`--no-split\`, interleaved round by round on this 2-CPU VM (shared with other jobs: the figures
move by several % from round to round), $ROUNDS rounds, medians; tracer on CPU $TCPU, the programs on CPU $PCPU.

| what | \`--summary\` | \`--summary --no-split\` | ratio | \`--chrome\` | \`--chrome --no-split\` | ratio |
| --- | --- | --- | --- | --- | --- | --- |
$(row "ping-pong: \`tr2_shapes pingpong $PINGPONG_N\` under \`-- CMD\`, CPU ns a round trip (two switches, two wakeups of traced threads)" pp)
$(row "a bystander that switches all the time (\`perf bench sched pipe\`, CPU ns a round trip) beside \`-a --comm=tr2bench\`" pipe)
$(row "a bystander of the same program (\`tr2bench region\`, CPU ns a pair) beside \`-- CMD\` tracing a sibling" by)
$(row "an attached event (\`tr2bench region\` under \`-- CMD\`, CPU ns an event)" ev)

What tr2-bpf's programs at the scheduler cost, from bpf_stats (the kernel's run time of each
program, which counts its own two clock reads too), around a ping-pong under \`-a\`; per round
trip of the ping-pong, the sum of both, and that as a share of its round trip (\`--no-split\`'s
ping-pong above):

| configuration | \`on_switch\` ns a run | runs a round trip | \`on_wakeup\` ns a run | runs a round trip | ns a round trip | share |
| --- | --- | --- | --- | --- | --- | --- |
$(for c in "${CONFIGS[@]}"; do
	t=$(calc %.0f "$(m sw "$c") * $(m swn "$c") + $(m wk "$c") * $(m wkn "$c")")
	echo "| \`${OPTS[$c]}\` | $(m sw "$c") | $(m swn "$c") | $(m wk "$c") | $(m wkn "$c") | $t | $(calc %.1f "100 * $t / $(m pp nosplit)") % |"
done)
EOF

goal() {   # goal WHAT ARRAY
	local r; r=$(ratio "$2" split nosplit)
	echo "| $1 with the split within 5 % of the same run without it (issue 35) | ${r}x | $(met "$r <= 1.05") | $(why "$r <= 1.05" "the split's programs at every switch and wakeup") |" >>"$GOALS"
}
goal "the ping-pong row" pp
goal "the switching bystander beside \`-a\`" pipe
goal "the same program's bystander beside \`-- CMD\`" by
goal "an attached event" ev
