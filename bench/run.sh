#!/usr/bin/env bash
# bench/run.sh BUILD OUT.md: measures everything BENCHMARKS.md reports, in one
# run on this machine, and writes OUT.md. Run by `make bench` (as root) once
# the programs are built. Prints progress on stderr; takes 18 to 22 minutes.
#
# Every per-event cost is producer-side: tr2bench times its own loop, in its
# thread's CPU time, with and without a tracer, and the difference divided
# by the events is the price the instrumented program pays. The producer
# runs on one CPU and the tracer on the other. The machines this runs on are
# small shared VMs, so the attached configurations are interleaved round by
# round (a slow moment hits all of them alike) and each figure is the median
# of the rounds, with the range. Beside every attached figure stands what
# the machine charges for a system call, a clock read and a uprobe trap,
# measured in the same rounds, so that a slow machine can be told from a
# slow tracer. Sections 7 and 8 (bench/shapes.sh, bench/host.sh) time whole
# programs the same way: traced and untraced interleaved, medians. Section
# 9 is bench/inproc.sh's, section 10 bench/git.sh's (git built with tr2's
# probes against stock git, and under tr2-bpf -a), section 11
# bench/sched.sh's (the split of region time, on and off). BENCH_NOTE, when set, is
# a line for the header (e.g. that the machine was shared).
set -euo pipefail

BUILD_ARG=${1:-build}
BUILD=$(cd "$BUILD_ARG" && pwd)
OUT=${2:-BENCHMARKS.md}
HERE=$(cd "$(dirname "$0")" && pwd)
START=$(date +%s)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
ROUNDS=${ROUNDS:-7}                       # attached rounds
ATTACHED_ITERS=${ATTACHED_ITERS:-300000}  # pairs per attached run
PACED_ITERS=${PACED_ITERS:-100000}        # pairs per paced run
SPIN=${SPIN:-10000}                       # empty-loop iterations after each paced pair
EV=$((2 * ATTACHED_ITERS)) PEV=$((2 * PACED_ITERS))   # events per run
# tr2-bpf's ring buffer in section 2: a run's batches (32 bytes a region
# call, 600 000 calls: 19 MB) fit in it even if tr2-bpf formatted none of
# them meanwhile, so that no batch is lost (a lost batch costs the producer
# less than a copied one).  The default, 16 MiB, is section 3's.
RING=${RING:-64M}
DETACHED_ITERS=${DETACHED_ITERS:-5e8}
DETACHED_ROUNDS=${DETACHED_ROUNDS:-7}
BYSTANDER_ITERS=${BYSTANDER_ITERS:-3e8}   # the bystander's pairs per run
PINGPONG=${PINGPONG:-50000}               # round trips of the context-switch bystander
LAT_SAMPLES=${LAT_SAMPLES:-5}             # liveness samples per configuration
FMT_LINES=1000000

[ "$(id -u)" = 0 ] || { echo "bench/run.sh: needs root (BPF)" >&2; exit 1; }
for tool in bpftrace lttng lttng-sessiond perf bpftool python3 /usr/bin/time taskset; do
	command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool missing: run scripts/install-deps.sh --bench" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/tr2bench.XXXXXX)
# Goal rows of the sections run by scripts of their own (bench/record.sh,
# shapes.sh, host.sh, git.sh): $TR2_GOALS, for the table at the end.
export TR2_GOALS=$TMP/goals
: >"$TR2_GOALS"
SESSIOND_PID=
# The tree measured, as it is now (this run rewrites OUT, a tracked file,
# at the end); and snapshots, so that every row measures the same binaries
# even if the build tree changes meanwhile.
TREE="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo " with local changes")"
mkdir "$TMP/bin"
cp "$BUILD"/bench/tr2bench "$BUILD"/bench/bpf-attach "$BUILD"/bench/empty.bpf.o \
   "$BUILD"/tr2-bpf "$BUILD"/tr2-fmt "$BUILD"/tests/progs/tr2_batch "$TMP/bin/"
BIN=$TMP/bin B=$TMP/bin/tr2bench ATT=$TMP/bin/bpf-attach TR2BPF=$TMP/bin/tr2-bpf TR2FMT=$TMP/bin/tr2-fmt
EMPTY=$BIN/empty.bpf.o

# After a tracer timed out: the tr2bench it left stopped or running, and any
# tracer of this run still there, ended by pid.
reap_strays() {
	local pid
	for pid in $(pids_of "$B") $(pids_of "$TR2BPF") $(pids_of "$ATT"); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}
# A tracer run that cannot hang the benchmark (a tracer that never continues
# its stopped child, say).
T() { timeout -k 5 120 "$@"; }
cleanup() {
	reap_strays
	sysctl -qw kernel.bpf_stats_enabled=0 || true
	lttng destroy tr2bench >/dev/null 2>&1 || true
	[ -n "$SESSIOND_PID" ] && kill "$SESSIOND_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
# set -e ends the run at a failed command: say which.
trap 'say "bench/run.sh: line $LINENO failed: $BASH_COMMAND"' ERR

if [ "$(nproc)" -ge 2 ]; then PCPU=1 TCPU=0; else PCPU=0 TCPU=0; fi

# The time of a tr2bench run's loops, paced ones without their spinning
# alone (its spin_ns; see tr2bench.c): loop_ns "tr2bench output line".
loop_ns() { local ns spin; ns=$(field ns "$1") spin=$(field spin_ns "$1"); echo $(( ${ns:-0} - ${spin:-0} )); }
# "N M" from tr2-bpf's summary line "tr2-bpf: N events, M lost" in a stderr file.
summary() { sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p' "$1" | tail -1; }
# A tr2bench run meant to be untraced that another tr2-bpf (someone's -a)
# traced: said on stderr, and counted.
OTHERS=0
untraced_check() {
	[ "$(field traced "$1")" != 1 ] && return 0
	OTHERS=$((OTHERS + 1))
	say "  warning: an untraced run had tr2:enable raised (another tr2-bpf -a on this machine?)"
	return 1
}
# untraced ARGS...: tr2bench ARGS on the producer's CPU, run again (up to 3
# times) while another tr2-bpf traces it; its line in $line.
untraced() {
	local try
	for try in 1 2 3; do
		line=$(taskset -c $PCPU "$B" "$@")
		untraced_check "$line" && break
	done
}

# The first process running this run's tr2-bpf (no pipe into head: under
# pipefail a second one's SIGPIPE would end the script).
tracer_pid() {
	local p
	p=$(pids_of "$TR2BPF")
	echo "${p%%$'\n'*}"
}

# ---------------------------------------------------------------------------
say "1/6 detached cost: $DETACHED_ROUNDS rounds of $DETACHED_ITERS iterations per variant"
declare -A det
for r in $(seq "$DETACHED_ROUNDS"); do
	for k in empty region region_nop1 lttng; do
		line=$(taskset -c $PCPU "$B" "$k" "$DETACHED_ITERS")
		untraced_check "$line" || true
		det[$k]+=" $(calc %.4f "$(field ns "$line") / $(field iterations "$line")")"
	done
done
# The fastest run of each: the one the VM disturbed least.  An idle probe is
# a fraction of a nanosecond; a median moves by more than that here.
# shellcheck disable=SC2086
DET_EMPTY=$(minimum ${det[empty]}) DET_REGION=$(minimum ${det[region]}) \
	DET_NOP1=$(minimum ${det[region_nop1]}) DET_LTTNG=$(minimum ${det[lttng]})
say "  ns per iteration: empty $DET_EMPTY, region pair $DET_REGION, stock sdt pair $DET_NOP1, lttng pair $DET_LTTNG"

# Code per call site, from 100 sites in one function minus none: all of
# sites() and its .cold part; the fall-through path alone (up to the first
# ret: what runs while detached); the USDT notes.
text_of() {
	local s=0 size
	for size in $(nm -S --defined-only "$BUILD/bench/sites-$1.o" | awk '$4 ~ /^sites(\.cold)?$/ { print $2 }'); do
		s=$((s + 16#$size))
	done
	echo $s
}
hot_of() {
	local at
	at=$(objdump -d --no-show-raw-insn "$BUILD/bench/sites-$1.o" | awk '/<sites>:/ { f = 1 } f && /\tret/ { sub(":", "", $1); print $1; exit }')
	echo $((16#$at + 1))
}
note_of() { size -A "$BUILD/bench/sites-$1.o" | awk '$1 == ".note.stapsdt" { s += $2 } END { print s + 0 }'; }
SZ_NONE=$(text_of none) HOT_NONE=$(hot_of none)
for v in tr2 nop1 lttng; do
	eval "SZ_$v=\$(( ($(text_of $v) - SZ_NONE) / 100 )) HOT_$v=\$(( ($(hot_of $v) - HOT_NONE) / 100 )) NOTE_$v=\$(( $(note_of $v) / 100 ))"
done
# The instruction at probe PROVIDER:NAME of tr2bench (the note's address),
# and the next one too when it is the 5-byte nop of a `nop; nop5` pair.
site_insn() {
	local a
	a=$(readelf -n "$B" | awk -v p="$1" -v n="$2" '/Provider:/ { prov = $2 } /Name:/ { name = $2 }
		/Location:/ && prov == p && name == n { sub(",", "", $2); print $2; exit }')
	[ -n "$a" ] || { echo "?"; return; }
	objdump -d "$B" --start-address=$((a)) --stop-address=$((a + 8)) |
		awk '/^ +[0-9a-f]+:\t/ { split($0, x, "\t"); b = x[2]; sub(/ +$/, "", b)
			if (n++ == 0) { first = b; if (b != "90") exit; next }
			if (b == "0f 1f 44 00 00") first = first " " b; exit }
		     END { print first }'
}
# Whether tr2-bpf refuses --probe-nop=5 here (a kernel that makes a uprobe
# on a 5-byte nop a call whose trampoline a forked child does not inherit).
NOP5_REFUSED=$("$TR2BPF" --probe-nop=5 --perf=/dev/null -- true 2>&1 | grep -c -- '--probe-nop=5: ' || true)
INSN_BATCH=$(site_insn tr2 batch) INSN_KIND=$(site_insn trace2 region_enter) INSN_NOP1=$(site_insn tr2bench region_enter)

# ---------------------------------------------------------------------------
say "2/6 attached cost: $ROUNDS interleaved rounds, $ATTACHED_ITERS pairs per run ($PACED_ITERS paced)"
# Full speed, then paced (NAME@paced).  syscall and clock are the machine's
# own costs, untraced; trap1 and trap5 the trap of a uprobe per event.
CONFIGS="syscall clock trap1 trap5 append batch perf event summary catrej all out out_new
	runtime long intmax timer write lttng
	trap1@paced trap5@paced append@paced perf@paced event@paced summary@paced catrej@paced all@paced
	write@paced lttng@paced"
# The tr2-bpf rows, whose N + M must be the events produced (timer calls
# make no event; --category=other and -a --comm=other write none).
RECORDED="perf event summary all runtime long intmax perf@paced event@paced summary@paced all@paced"

kind_of() {
	case ${1%@paced} in
	syscall) echo getppid ;; clock) echo clock ;;
	runtime) echo region_runtime ;; long) echo region_long ;;
	intmax) echo intmax ;; timer) echo timer ;;
	write) echo write ;; lttng) echo lttng ;; *) echo region ;;
	esac
}
# The untraced loop a configuration's time is compared with.
base_of() {
	case $1 in
	syscall|clock|write) echo empty ;;
	*) kind_of "$1" ;;
	esac
}

# LTTng-UST: a session daemon (started here if none runs, on the tracer's
# CPU), a session per run with its files in $TMP, every tr2bench event
# enabled, in a channel of 8 sub-buffers of 4 MiB per CPU: like tr2-bpf's
# 64M ring, room for a run's events (about 52 bytes each) if the consumer
# falls behind (the default 4 x 512 KiB discarded a tenth of them here).
lttng_run() {
	lttng destroy tr2bench >/dev/null 2>&1 || true
	rm -rf "$TMP/lttng"
	lttng create tr2bench --output="$TMP/lttng" >/dev/null
	lttng enable-channel -u tr2bench --subbuf-size=4M --num-subbuf=8 >/dev/null
	lttng enable-event -u -c tr2bench 'tr2bench:*' >/dev/null
	lttng start >/dev/null
	# shellcheck disable=SC2086
	T taskset -c $PCPU "$B" $spin lttng "$1"
	lttng stop >/dev/null
	lttng list tr2bench | awk '/Discarded events:/ { print "discarded", $3 }' >&2
	lttng destroy tr2bench >/dev/null
}

# all_run [--running] OPTION...: tr2-bpf -a OPTIONS on CPU $TCPU, ready
# before the loop ($kind, $n, $spin of run_cfg) starts; --running: a
# mostly idle process of the same program runs from before tr2-bpf starts,
# so that tr2-bpf finds the program's runtime at its start and raises its
# semaphore in every process that maps it.  Stopped with SIGTERM after.
all_run() {
	local idle= tracer
	if [ "$1" = --running ]; then
		shift
		taskset -c $TCPU "$B" idle 600s >/dev/null &
		idle=$!
		sleep 0.2
	fi
	timeout -k 5 120 taskset -c $TCPU "$TR2BPF" -a -b $RING "$@" --perf="$TMP/out" &
	tracer=$!
	wait_for "tracing every process" "$TMP/$name.err" || echo "all_run: tr2-bpf not ready" >&2
	# shellcheck disable=SC2086
	T taskset -c $PCPU "$B" -c $PCPU $spin $kind $n
	kill -TERM $tracer
	wait $tracer || true
	if [ -n "$idle" ]; then kill $idle; wait $idle 2>/dev/null || true; fi
}

# run_cfg NAME: runs configuration NAME once; tr2bench's line on stdout, the
# tracer's stderr in $TMP/NAME.err.
run_cfg() {
	local name=$1 base=${1%@paced} kind n=$ATTACHED_ITERS spin=
	kind=$(kind_of "$name")
	[ "$name" = "$base" ] || { n=$PACED_ITERS; spin="-s $SPIN"; }
	# 200-byte strings are copied at every call: a sixth of the pairs
	# keeps the run's batches within the ring
	[ "$base" = long ] && n=$((n / 6))
	rm -f "$TMP/out"
	# shellcheck disable=SC2086
	case $base in
	syscall|clock) taskset -c $PCPU "$B" $kind $n ;;
	trap1) T taskset -c $TCPU "$ATT" -s region_enter,region_leave "$EMPTY" -- "$B" -S -c $PCPU $spin $kind $n ;;
	# The 5-byte nop: tr2bench never forks, so the kernel's call is safe.
	trap5) T taskset -c $TCPU "$ATT" -5 -s region_enter,region_leave "$EMPTY" -- "$B" -S -c $PCPU $spin $kind $n ;;
	append) T taskset -c $TCPU "$ATT" -e "$EMPTY" -- "$B" -S -c $PCPU $spin $kind $n ;;
	batch) T taskset -c $TCPU "$ATT" "$EMPTY" -- "$B" -S -c $PCPU $spin $kind $n ;;
	event) T taskset -c $TCPU "$TR2BPF" -b $RING --event="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	# --summary alone: the table on stdout, no event stream.
	summary) T taskset -c $TCPU "$TR2BPF" -b $RING --summary -- "$B" -c $PCPU $spin $kind $n ;;
	# A category filter that rejects the loop's category "index".
	catrej) T taskset -c $TCPU "$TR2BPF" -b $RING --category=other --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	# -a narrowed to the loop's name (only this run's processes count).
	all) all_run --comm=tr2bench ;;
	# -a whose filter leaves the loop out: the program's runtime already
	# attached (a process of it ran at the start), or not.
	out) all_run --running --comm=other ;;
	out_new) all_run --comm=other ;;
	write) taskset -c $PCPU "$B" $spin -o "$TMP/out" write $n ;;
	lttng) lttng_run $n ;;
	*) T taskset -c $TCPU "$TR2BPF" -b $RING --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	esac 2>"$TMP/$name.err" | grep "^$kind " || true
}

if ! pgrep -x lttng-sessiond >/dev/null; then
	taskset -c $TCPU lttng-sessiond --daemonize
	SESSIOND_PID=$(cat /var/run/lttng/lttng-sessiond.pid)
fi

# cost: ns per event per run; lost: M per run (LTTng: discarded); bad:
# failed checks; traced: how many runs had tr2:enable raised in the loop
# (tr2bench's traced=).
declare -A cost lost bad traced paced_untraced
for r in $(seq "$ROUNDS"); do
	# This round's untraced times: what its attached runs are compared with.
	declare -A base=()
	for k in empty region region_runtime intmax timer lttng; do
		untraced $k "$ATTACHED_ITERS"
		base[$k]=$(field ns "$line")
	done
	untraced region_long $((ATTACHED_ITERS / 6))
	base[region_long]=$(field ns "$line")
	# Paced: the untraced runs' ns per event, their median over the rounds
	# subtracted at the end (a paced run is timed against its own spinning).
	for k in empty region lttng; do
		untraced -s $SPIN $k "$PACED_ITERS"
		paced_untraced[$k]+=" $(calc %.2f "$(loop_ns "$line") / $PEV")"
	done
	for name in $CONFIGS; do
		line=$(run_cfg "$name")
		ev=$(field events "$line")
		if [ -z "$ev" ]; then bad[$name]+=" a run failed"; reap_strays; continue; fi
		if [ "$name" = "${name%@paced}" ]; then
			c=$(calc %.1f "($(loop_ns "$line") - ${base[$(base_of "$name")]}) / $ev")
		else
			c=$(calc %.2f "$(loop_ns "$line") / $ev")
		fi
		cost[$name]+=" $c"
		traced[$name]=$(( ${traced[$name]:-0} + $(field traced "$line") ))
		rec=no
		case " $RECORDED " in *" $name "*) rec=yes ;; esac
		case $rec:$name in
		yes:*)
			nm_=$(summary "$TMP/$name.err")
			if [ -z "$nm_" ]; then bad[$name]+=" no summary line"; continue; fi
			n=${nm_% *} m=${nm_#* }
			lost[$name]+=" $m"
			[ "$((n + m))" = "$ev" ] || bad[$name]+=" N+M=$((n + m))≠$ev"
			;;
		*:catrej*|*:timer|*:out*)   # no event written: only losses to check
			nm_=$(summary "$TMP/$name.err")
			lost[$name]+=" ${nm_#* }"
			;;
		*:lttng*) lost[$name]+=" $(awk '/^discarded/ { print $2 }' "$TMP/$name.err")" ;;
		esac
	done
	say "  round $r/$ROUNDS: $(for n in syscall trap1 append perf event summary lttng perf@paced lttng@paced; do printf '%s %s ' $n "${cost[$n]##* }"; done)ns/event"
done

# The paced rows minus the median of their untraced runs.
for name in $CONFIGS; do
	[ "$name" != "${name%@paced}" ] && [ -n "${cost[$name]:-}" ] || continue
	# shellcheck disable=SC2086
	u=$(median ${paced_untraced[$(base_of "${name%@paced}")]})
	cost[$name]=$(for c in ${cost[$name]}; do printf ' %s' "$(calc %.1f "$c - $u")"; done)
done

# bpftrace, once at full speed and once paced (it compiles its program for
# seconds): the same fields to a file, with its "Lost N events" lines in
# it.  It attaches to the public probes trace2:region_enter/leave in the
# runtime and raises their semaphores.
say "  bpftrace"
BT_PROG="usdt:$B:trace2:region_enter, usdt:$B:trace2:region_leave { printf(\"%s %s\\n\", str(arg4), str(arg5)); }"
bt_run() {  # SUFFIX SPIN_ARGS ITERS
	local base_ns line ev
	# shellcheck disable=SC2086
	base_ns=$(loop_ns "$(taskset -c $PCPU "$B" $2 region "$3")")
	# (bpftrace splits -c at every space: no empty word in it)
	T taskset -c $TCPU bpftrace -o "$TMP/bt.out" -e "$BT_PROG" -c "$B -c $PCPU ${2:+$2 }region $3" >"$TMP/bt.line" 2>"$TMP/bt.err" || true
	line=$(grep '^region ' "$TMP/bt.line" || true)
	ev=$(field events "$line")
	if [ -n "$ev" ]; then
		eval "BT_COST$1=$(calc %.0f "($(loop_ns "$line") - $base_ns) / $ev")"
	else
		eval "BT_COST$1=failed"
		say "  bpftrace failed: $(grep -v RLIMIT_MEMLOCK "$TMP/bt.err" | tail -1)"
	fi
	eval "BT_PRINTED$1=$(grep -c '^index do_read_index' "$TMP/bt.out" || true)"
	eval "BT_LOST$1=$(awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }' "$TMP/bt.out" 2>/dev/null || echo 0)"
}
bt_run "" "" "$ATTACHED_ITERS"
bt_run _PACED "-s $SPIN" "$PACED_ITERS"
say "  bpftrace: $BT_COST ns/event, paced $BT_COST_PACED"

if [ -n "$SESSIOND_PID" ]; then kill "$SESSIOND_PID"; SESSIOND_PID=; fi

# med NAME, rng NAME: a configuration's median and range over the rounds.
med() { if [ -n "${cost[$1]:-}" ]; then calc %.0f "$(median ${cost[$1]})" | sed 's/^-0$/0/'; else echo "failed"; fi; }
rng() { if [ -n "${cost[$1]:-}" ]; then range $(for c in ${cost[$1]}; do calc '%.0f\n' "$c"; done | sed 's/^-0$/0/'); fi; }
lostmed() { if [ -n "${lost[$1]:-}" ]; then median ${lost[$1]}; fi; }
check() { [ -z "${bad[$1]:-}" ] && echo "yes" || echo "**no**:${bad[$1]}"; }

# Where an attached event's time goes: bpf_stats (kernel.bpf_stats_enabled:
# run_time_ns and run_cnt of each of tr2-bpf's programs) over one
# full-speed perf run, read while tr2-bpf is still attached (tr2bench -W
# waits on its stdin after its line).  sched_switch and the ticks run for
# every switch and tick on the host during tr2-bpf's life, not only the
# producer's.
say "  bpf_stats of tr2-bpf's programs over a full-speed run"
stats_run() {  # OUT TR2-BPF-OPTIONS...: the stats in OUT, tr2bench's line in OUT.line
	local out=$1 job pid
	shift
	rm -f "$TMP/w.fifo"
	mkfifo "$TMP/w.fifo"
	exec 8<>"$TMP/w.fifo"
	sysctl -qw kernel.bpf_stats_enabled=1
	T taskset -c $TCPU "$TR2BPF" "$@" -- "$B" -W -c $PCPU region "$ATTACHED_ITERS" <&8 >"$out.line" 2>"$out.err" &
	job=$!
	wait_for '^region ' "$out.line" 30 || say "  stats run: no line from tr2bench"
	pid=$(tracer_pid)
	: >"$out"
	[ -z "$pid" ] || prog_stats "$pid" >"$out"
	echo >&8
	wait $job || true
	exec 8>&-
	sysctl -qw kernel.bpf_stats_enabled=0
}
stats_run "$TMP/stats" -b $RING --perf=/dev/null
STAT_EV=$(field events "$(grep '^region ' "$TMP/stats.line" || true)")
STAT_EV=${STAT_EV:-0}
# stat PROG cnt|ns|each|per_event
stat() {
	awk -v p="$1" -v w="$2" -v ev="$STAT_EV" '$1 == p { c += $2; t += $3 } END {
		if (w == "cnt") printf "%d", c; else if (w == "ns") printf "%d", t
		else if (w == "each") printf "%.0f", c ? t / c : 0; else printf "%.1f", ev ? t / ev : 0 }' "$TMP/stats"
}
STAT_PROGS="probe_batch on_switch on_tick on_exit on_prepare_exec"
say "  per event: $(for p in $STAT_PROGS; do printf '%s %s ' $p "$(stat $p per_event)"; done)ns; $STAT_EV events"

# A bystander of the same program, beside tr2-bpf -- CMD tracing a sibling
# of it.  The sibling runs `tr2bench idle` (a region pair, then 10 ms
# asleep: a few events a second, no CPU to speak of) on the tracer's CPU;
# the bystander runs the region loop on the producer's CPU, timed in its
# own thread's CPU time, alone and then beside the traced sibling, round by
# round.
say "  bystander beside tr2-bpf -- CMD: $ROUNDS rounds of $BYSTANDER_ITERS pairs"
BY_ALONE= BY_BESIDE= BY_TRACED=0 BY_BAD=
# sibling_start: tr2-bpf -- tr2bench idle, once it traces; sibling_stop.
sibling_start() {
	rm -f "$TMP/sib.perf"
	timeout -k 5 300 taskset -c $TCPU "$TR2BPF" --perf="$TMP/sib.perf" -- "$B" idle 300s >/dev/null 2>"$TMP/sib.err" &
	SIB=$!
	wait_for region_enter "$TMP/sib.perf" || BY_BAD+=" the sibling was not traced;"
}
sibling_stop() { kill -TERM $SIB; wait $SIB || true; }
for r in $(seq "$ROUNDS"); do
	line=$(taskset -c $PCPU "$B" region "$BYSTANDER_ITERS")
	untraced_check "$line" || true
	BY_ALONE+=" $(field ns "$line")"
	sibling_start
	line=$(taskset -c $PCPU "$B" region "$BYSTANDER_ITERS")
	BY_BESIDE+=" $(field ns "$line")"
	BY_TRACED=$((BY_TRACED + $(field traced "$line")))
	sibling_stop
done
# shellcheck disable=SC2086
BY_SPEED=$(calc %.3f "$(median $BY_ALONE) / $(median $BY_BESIDE)")
say "  bystander: alone $(median $BY_ALONE) ns, beside $(median $BY_BESIDE) ns: speed $BY_SPEED"

# A bystander that switches context all the time: perf bench sched pipe,
# two processes passing a byte back and forth through two pipes
# ($PINGPONG round trips, both on the producer's CPU: two switches a round
# trip, timed in CPU time), alone, beside tr2-bpf -- CMD (the traced sibling above) and beside
# tr2-bpf -a --comm=tr2bench, round by round.  Every switch on the host runs
# tr2-bpf's sched_switch program.  Then its cost per run, from bpf_stats,
# beside -a.
say "  context-switch bystander: $ROUNDS rounds of $PINGPONG round trips"
# pingpong: the CPU time of one run (both processes: perf stat's task-clock,
# inherited), ns a round trip; the wall time would count the other
# processes that share the CPU on this machine.
pingpong() {
	taskset -c $PCPU perf stat -x, -e task-clock perf bench sched pipe -l "$PINGPONG" 2>&1 >/dev/null |
		awk -F, -v n="$PINGPONG" '$3 == "task-clock" { printf "%.0f\n", $1 * 1e6 / n }'
}
# beside_start, beside_stop: tr2-bpf -a --comm=tr2bench on the tracer's CPU
# (its pid in ALL), ready; SIGTERM and its end.
beside_start() {
	rm -f "$TMP/a.err"
	timeout -k 5 300 taskset -c $TCPU "$TR2BPF" -a --comm=tr2bench --perf=/dev/null 2>"$TMP/a.err" &
	ALL=$!
	wait_for "tracing every process" "$TMP/a.err" || say "  tr2-bpf -a not ready"
}
beside_stop() { kill -TERM $ALL; wait $ALL || true; }
PP_ALONE= PP_CMD= PP_ALL=
for r in $(seq "$ROUNDS"); do
	PP_ALONE+=" $(pingpong)"
	sibling_start
	PP_CMD+=" $(pingpong)"
	sibling_stop
	beside_start
	PP_ALL+=" $(pingpong)"
	beside_stop
done
sysctl -qw kernel.bpf_stats_enabled=1
beside_start
pingpong >/dev/null
prog_stats "$(tracer_pid)" >"$TMP/switch.stats"
beside_stop
sysctl -qw kernel.bpf_stats_enabled=0
SWITCH_NS=$(awk '$1 == "on_switch" && $2 { printf "%.0f", $3 / $2 }' "$TMP/switch.stats")
# shellcheck disable=SC2086
PP_SPEED_CMD=$(calc %.3f "$(median $PP_ALONE) / $(median $PP_CMD)") PP_SPEED_ALL=$(calc %.3f "$(median $PP_ALONE) / $(median $PP_ALL)")
say "  ping-pong ns a round trip: alone $(median $PP_ALONE), beside -- CMD $(median $PP_CMD), beside -a $(median $PP_ALL); sched_switch program ${SWITCH_NS:-?} ns a run"

# Liveness: from a call to its line in DEST, for a thread that sleeps right
# after it and one that computes without a call (tests/progs/tr2_batch
# sleep|spin 1: it prints "entered" right after its region_enter), under
# -- CMD and -p (bench/latency.py: milliseconds from "entered" to the line).
say "  liveness: $LAT_SAMPLES samples of each"
declare -A lat
for r in $(seq "$LAT_SAMPLES"); do
	for c in cmd:sleep cmd:spin pid:sleep pid:spin; do
		rm -f "$TMP/lat.json" "$TMP/lat.json.err"
		v=$(T python3 "$HERE/latency.py" "${c%:*}" "${c#*:}" "$TMP/lat.json" "$TR2BPF" "$BIN/tr2_batch" $TCPU $PCPU 2>>"$TMP/lat.fail" || true)
		[ -n "$v" ] && lat[$c]+=" $v"
	done
done
latmed() { if [ -n "${lat[$1]:-}" ]; then median ${lat[$1]}; else echo failed; fi; }
latmax() { if [ -n "${lat[$1]:-}" ]; then printf '%s\n' ${lat[$1]} | sort -g | tail -1; else echo failed; fi; }
latn() { echo ${lat[$1]:-} | wc -w; }
LAT_MAX=$(printf '%s\n' ${lat[*]:-999999} | sort -g | tail -1)
say "  liveness ms, median/max: $(for c in cmd:sleep cmd:spin pid:sleep pid:spin; do printf '%s %s/%s ' $c "$(latmed $c)" "$(latmax $c)"; done)"
# ---------------------------------------------------------------------------
say "3/6 throughput: one producer for 3 s (default ring), two producers into a 64K ring, each format and --record"
rm -f "$TMP/tp.perf"
/usr/bin/time -v -o "$TMP/time.txt" timeout -k 5 60 taskset -c $TCPU "$TR2BPF" -v --perf="$TMP/tp.perf" -- \
	"$B" -c $PCPU region 3s >"$TMP/tp.out" 2>"$TMP/tp.err" &
TIMEPID=$!
# While it runs: the BPF memory tr2-bpf holds, map by map, from its fds.
sleep 2
TPID=$(tracer_pid)
: >"$TMP/maps"
if [ -n "$TPID" ]; then
	for id in $(cat /proc/"$TPID"/fdinfo/* 2>/dev/null | awk '/^map_id:/ { print $2 }' | sort -un); do
		bpftool map show id "$id" 2>/dev/null | tr '\n' ' ' | sed 's/$/\n/'
	done >"$TMP/maps"
	MEM_PROGS=$(cat /proc/"$TPID"/fdinfo/* 2>/dev/null | awk '/^prog_type:/ { p = 1 } /^memlock:/ && p { s += $2; p = 0 } END { print s + 0 }' || true)
fi
wait $TIMEPID || true
TP_LINE=$(grep '^region ' "$TMP/tp.out" || true)
TP_PRODUCED=$(field events "$TP_LINE")
TP_SECS=$(calc %.3f "$(field ns "$TP_LINE") / 1e9")
read -r TP_N TP_M < <(summary "$TMP/tp.err") || { TP_N=0 TP_M=0; }
# tr2-bpf's own CPU time (-v), attaching included: the consumer's headroom.
read -r TP_CPU_USER TP_CPU_SYS < <(sed -n 's/^tr2-bpf: its own CPU time: \([0-9.]*\) s user, \([0-9.]*\) s system$/\1 \2/p' "$TMP/tp.err") ||
	{ TP_CPU_USER=0 TP_CPU_SYS=0; }
# Lines of events, and tr2-bpf's own "lost_events" data lines, apart.
TP_LINES=$(grep -vc '| lost_events:' "$TMP/tp.perf" || true)
TP_LOSSLINES=$(grep -c '| lost_events:' "$TMP/tp.perf" || true)
read -r TP_SHORTEST TP_LONGEST < <(awk 'NR == 1 { lo = length($0) } { n = length($0); if (n > hi) hi = n; if (n < lo) lo = n } END { print lo + 0, hi + 0 }' "$TMP/tp.perf")
RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$TMP/time.txt")
say "  produced $TP_PRODUCED in $TP_SECS s, written $TP_N, lost $TP_M, lines $TP_LINES"

rm -f "$TMP/tp2.perf"
T "$TR2BPF" --ring-buffer=64K --perf="$TMP/tp2.perf" -- "$B" -t 2 region 2s >"$TMP/tp2.out" 2>"$TMP/tp2.err" || true
TP2_LINE=$(grep '^region ' "$TMP/tp2.out" || true)
TP2_PRODUCED=$(field events "$TP2_LINE")
TP2_SECS=$(calc %.3f "$(field ns "$TP2_LINE") / 1e9")
read -r TP2_N TP2_M < <(summary "$TMP/tp2.err") || { TP2_N=0 TP2_M=0; }
TP2_LINES=$(grep -vc '| lost_events:' "$TMP/tp2.perf" || true)
TP2_LOSSLINES=$(grep -c '| lost_events:' "$TMP/tp2.perf" || true)
TP2_LONGEST=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/tp2.perf")
say "  two producers: produced $TP2_PRODUCED, written $TP2_N, lost $TP2_M, lines $TP2_LINES"

say "  each live format and --record (bench/record.sh)"
"$HERE/record.sh" "$BUILD" >"$TMP/s3b.md" || echo "bench/record.sh failed: no figures." >"$TMP/s3b.md"

# ---------------------------------------------------------------------------
say "4/6 profile: perf record of tr2-bpf under a 3 s load"
timeout -k 5 60 taskset -c $TCPU "$TR2BPF" --perf="$TMP/prof.perf" -- "$B" -c $PCPU region 3s >/dev/null 2>&1 &
PROFPID=$!
sleep 0.5
perf record -q -F 1999 -o "$TMP/perf.data" -p "$(tracer_pid)" -- sleep 2 >/dev/null 2>&1 || true
wait $PROFPID || true
perf report -i "$TMP/perf.data" --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' >"$TMP/profile.all" || true
head -12 "$TMP/profile.all" >"$TMP/profile.txt"
grep -F '[.]' "$TMP/profile.all" | head -8 >"$TMP/profile.user" || true
rm -f "$TMP"/*.perf

# ---------------------------------------------------------------------------
# shellcheck source=bench/fmt.sh
. "$HERE/fmt.sh"

# Where its instructions go: callgrind on the first 20000 lines, --perf.
CG_LINES=20000
head -n $CG_LINES "$TMP/events.json" >"$TMP/cg.json"
CG_PER_LINE=? CG_PARSE=? CG_JSON=?
if command -v valgrind >/dev/null &&
   T valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$TR2FMT" --perf "$TMP/cg.json" >/dev/null 2>"$TMP/cg.err"; then
	callgrind_annotate --inclusive=yes "$TMP/cg.out" 2>/dev/null >"$TMP/cg.txt" || true
	total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$TMP/cg.txt")
	incl() { awk -v f="$1" 'index($0, f) { gsub(",", "", $1); print $1; exit }' "$TMP/cg.txt"; }
	CG_PER_LINE=$(calc %.0f "$total / $CG_LINES")
	CG_PARSE=$(calc %.0f "100 * $(incl ':tr2_reader_parse ') / $total")
	CG_JSON=$(calc %.0f "100 * $(incl ':tr2_jline_parse ') / $total")
fi
rm -f "$TMP/events.json" "$TMP/cg.json" "$TMP/cg.out"
say "  callgrind: $CG_PER_LINE instructions per line, $CG_PARSE% in tr2_reader_parse"

# ---------------------------------------------------------------------------
# Sections 7 to 10, each its own script.
say "7 workload shapes (bench/shapes.sh)"
"$HERE/shapes.sh" "$BUILD" >"$TMP/s7.md" || say "  bench/shapes.sh failed"
say "8 tr2-bpf -a (bench/host.sh)"
"$HERE/host.sh" "$BUILD" >"$TMP/s8.md" || say "  bench/host.sh failed"
if [ -x "$HERE/inproc.sh" ]; then
	say "9 in-process targets (bench/inproc.sh)"
	"$HERE/inproc.sh" "$BUILD_ARG" >"$TMP/s9.md" || say "  bench/inproc.sh failed"
else
	echo "\`bench/inproc.sh\` is not in this tree yet: no figures." >"$TMP/s9.md"
fi
say "10 git (bench/git.sh)"
# section 2's getppid() and tr2-bpf's cost per event, the yardsticks of its traced rows
TR2_SYSCALL_NS=$(med syscall) TR2_EVENT_NS=$(med perf) "$HERE/git.sh" "$BUILD" >"$TMP/s10.md" ||
	echo "bench/git.sh failed: no figures." >"$TMP/s10.md"
say "10 git, each release of the series (bench/git_releases.sh)"
"$HERE/git_releases.sh" "$BUILD" ${GIT_VERSIONS:-2.39.5 2.55.0} >>"$TMP/s10.md" ||
	echo "bench/git_releases.sh failed: no figures." >>"$TMP/s10.md"
say "11 the split of region time (bench/sched.sh)"
"$HERE/sched.sh" "$BUILD" >"$TMP/s11.md" || echo "bench/sched.sh failed: no figures." >"$TMP/s11.md"


# ---------------------------------------------------------------------------
say "writing $OUT"
det_call=$(calc %.2f "($DET_REGION - $DET_EMPTY) / 2")
tp_check=$([ "$((TP_N + TP_M))" = "$TP_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP_N + TP_M)))")
tp2_check=$([ "$((TP2_N + TP2_M))" = "$TP2_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP2_N + TP2_M)))")
fmt_min=$(printf '%s\n' "${fmt_rate[@]}" | sort -g | head -1)
SYSCALL=$(med syscall)
# x NAME: a configuration's full-speed median in system calls
x() { case "$(med "$1")$SYSCALL" in *[!0-9.-]*) echo "?" ;; *) calc %.2f "$(med "$1") / $SYSCALL" ;; esac; }
# row TEXT NAME [LOST]: full speed and paced (NAME@paced, when measured)
row() {
	local p="${2}@paced"
	echo "| $1 | $(med "$2") | $(rng "$2") | $( [ -n "${cost[$p]:-}" ] && echo "$(med "$p") | $(rng "$p")" || echo " | ") | $(x "$2") | ${3:-} |"
}
# lostcol NAME: "M full / M paced, N+M = produced: yes|no" of a tr2-bpf row
lostcol() {
	local p="$1@paced" s
	s="$(lostmed "$1")"
	[ -z "${cost[$p]:-}" ] || s+=" / $(lostmed "$p")"
	case " $RECORDED " in *" $1 "*) s+="; N + M = produced: $(check "$1")$( [ -z "${cost[$p]:-}" ] || echo ", $(check "$p")")" ;; esac
	echo "$s"
}
runs_traced() { echo "${traced[$1]:-0} of $ROUNDS"; }
# The bystander's run times as ns per region pair: the median, each.
per_pair_each() { local t; for t in "$@"; do calc %.4f "$t / $BYSTANDER_ITERS"; echo; done; }
per_pair() { median $(per_pair_each "$@"); }
minus() { case "$1$2" in *[!0-9.-]*|"") echo "?" ;; *) calc %.1f "$1 - $2" ;; esac; }
# Issue 26's goal for a tr2-bpf mode: at most LTTng-UST's cost and 150 ns,
# at full speed and paced.
LT=$(med lttng) LTP=$(med lttng@paced)
goal26() {  # NAME TEXT
	local f p cond
	f=$(med "$1") p=$(med "$1@paced")
	cond="$f <= $LT && $f <= 150 && $p <= $LTP && $p <= 150"
	case "$f$p$LT$LTP" in *[!0-9.-]*) cond=0 ;; esac
	echo "| $2: per event ≤ LTTng-UST's and ≤ 150 ns, full speed and paced (issue 26) | $f ns (LTTng-UST $LT), paced $p ns (LTTng-UST $LTP) | $(met "$cond") | $(why "$cond" "the runtime's append is $(med append) ns at full speed, the batches' traps and copies the rest (section 2, where the time goes)") |"
}
PP_SWITCH_CMD=$(calc %.0f "($(median $PP_CMD) - $(median $PP_ALONE)) / 2") PP_SWITCH_ALL=$(calc %.0f "($(median $PP_ALL) - $(median $PP_ALONE)) / 2")
LAT_OK="$LAT_MAX <= 100"
for c in cmd:sleep cmd:spin pid:sleep pid:spin; do [ "$(latn $c)" = "$LAT_SAMPLES" ] || LAT_OK=0; done
BATCH_CALLS=$(( (16 << 10) / 32 ))   # region calls in a full 16 KiB buffer, 32 bytes each

{
cat <<EOF
# Benchmarks

What tr2's probes cost a program, detached and attached, next to what the machine charges for a
system call, a clock read and a uprobe trap, and next to the alternatives: a stock
\`<sys/sdt.h>\` probe, LTTng-UST, bpftrace, and git's own in-process Trace2 (format and
\`write(2)\` each event); how soon a traced event is a line; what \`tr2-bpf\` costs the processes
beside the ones it traces; tr2-bpf's throughput and memory; tr2-fmt's speed; whole programs
traced and untraced (process trees, dlopen cycles, threads, \`tr2-bpf -a\` on a host, git). Every
figure below comes from one run of \`make bench\` (\`bench/run.sh\`, about $(( ($(date +%s) - START + 59) / 60 )) minutes, as root) on
this machine:

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- kernel: $(uname -r) ($(grep -q ' arch_uprobe_optimize$' /proc/kallsyms && echo "has arch_uprobe_optimize: a uprobe on a 5-byte nop becomes a call" || echo "no arch_uprobe_optimize: a uprobe on a 5-byte nop is single-stepped"))
- CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), nproc $(nproc)$(grep -q hypervisor /proc/cpuinfo && echo " (a VM: figures move by tens of percent from run to run)")
- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)$( [ "$OTHERS" = 0 ] || echo "; $OTHERS runs meant to be untraced had tr2:enable raised by a tr2-bpf not of this run")
- tree: $TREE$( [ -z "${BENCH_NOTE:-}" ] || printf '\n- **%s**' "$BENCH_NOTE")

Other kernels: tr2-bpf is tested on Debian's 5.10, 6.1 and 6.12 as well (\`make test-kernels\`), in
QEMU guests whose CPU is emulated (TCG, about ten times slower, every instruction alike): no cost
is measured there, and none is given here for them. What each kernel does differently (a hash
map where 5.10 has no task storage, perf uprobes before 6.6, fentry programs at \`do_exit\`
where \`sched_process_exit\` comes too late, a scratch per CPU before 6.16) is in README's
Kernels.

What this machine charges (section 2's rounds, medians; the yardsticks beside every attached figure):

| one ... | ns |
| --- | ---: |
| system call, \`getppid()\` | $SYSCALL |
| clock read, \`clock_gettime(CLOCK_MONOTONIC)\` (vDSO, no kernel entry) | $(med clock) |
| uprobe trap: an empty BPF program on the runtime's \`trace2:region_enter\`/\`leave\`, 1-byte nop (where bpftrace and perf attach) | $(med trap1) |
| the same on the 5-byte nop (a call into the kernel's trampoline where the kernel optimizes it) | $(med trap5) |

How to run: \`make bench\` (root; the packages of \`scripts/install-deps.sh --bench\`). It
builds \`build/bench/\` and rewrites this file. The pieces: \`bench/tr2bench.c\` (the loops),
\`bench/bpf_attach.c\` with \`bench/empty.bpf.c\` (empty BPF programs, attached as tr2-bpf or as
bpftrace attaches), \`bench/latency.py\` (event to line), \`bench/sites.c\` (code size),
\`bench/gen_calls.sh\` (programs with many call sites), \`bench/run.sh\`, \`bench/shapes.sh\`,
\`bench/host.sh\`, \`bench/record.sh\`, \`bench/fmt.sh\`, \`bench/inproc.sh\`, \`bench/git.sh\`.

The design measured: a trace2 call tests two words inline (\`trace2__state.on |
trace2__state.sem[kind]\`) and only then calls the runtime (\`usdt/tr2_probe.c\`), which fires
the public probe \`trace2:<kind>\` when its semaphore is raised (bpftrace, perf) and, while
tr2-bpf listens (\`trace2__state.on\`, which tr2-bpf raises in the processes it traces only),
appends the call to a buffer of the calling thread (\`usdt/tr2_batch.c\`). The thread enters
the kernel only for a batch, at the private probe \`tr2:batch\`: at its first call, when its
16 KiB buffer is full (about $BATCH_CALLS region calls) and when its last batch is 50 ms old; the
eBPF side (\`bpf/tr2_batch.bpf.h\`) copies the buffer into the ring buffer at batches, when the
thread is switched out, at a 40 Hz tick of each CPU, at exec and at exit (docs/probes.md).

Method: \`tr2bench KIND COUNT\` runs COUNT iterations of a loop and times the loop alone, in
CPU time of its thread (user and kernel, where the BPF programs run; steal time is not in
it), so that other processes on the CPU do not count. \`region\`: one \`trace2_region_enter\`
+ \`trace2_region_leave\` pair per iteration (category "index", label "do_read_index").
Every loop body ends in the same \`asm volatile("" ::: "memory")\`, the empty loop's too.
The producer is pinned to CPU $PCPU, tracers to CPU $TCPU. Attached cost per event = (loop
time attached − loop time untraced, same round) / events. Detached: the fastest of
$DETACHED_ROUNDS runs of $DETACHED_ITERS iterations (the least disturbed by the VM).
Attached: $ROUNDS rounds of every configuration, interleaved; median and range (bpftrace:
one run each). Full speed: $ATTACHED_ITERS pairs ($EV events) a run, the loop as fast as it goes. Paced:
$PACED_ITERS pairs ($PEV events) a run, each pair followed by $SPIN iterations of the empty loop
(about $(calc %.1f "$SPIN * $DET_EMPTY / 1000") µs: events spaced out as in a real program, the tracer keeps up and
sleeps between them). A paced run alternates blocks of 100 such pairs with blocks of 100
spins alone, and its time is the producer's CPU time of the first kind of block minus that of
the second; its cost per event is that time minus the same of the run untraced, over the
events. The spinning is nearly all of a paced run, and this VM's CPU runs the same loop at
speeds up to 1.6x apart from one second to the next (by hand on 2026-11-26: one untraced paced
run took 282 to 469 ms), so it is timed beside the calls, not in another run (in a \`make
bench\` run that timed them apart, a paced row's range was −317 to 630 ns). No clock is read per pair: a read costs $(med clock) ns here and
orders the instructions around it (the previous BENCHMARKS.md timed each paced pair by
itself, which added to what it measured).

## 1. Detached: what an idle probe costs

| loop body (per iteration) | ns per iteration | above the empty loop, ns | per call, ns |
| --- | ---: | ---: | ---: |
| empty loop | $DET_EMPTY | | |
| \`trace2_region_enter\` + \`trace2_region_leave\` (trace2.h: two loads, one branch each; the runtime is not called) | $DET_REGION | $(calc %.2f "$DET_REGION - $DET_EMPTY") | $det_call |
| the same pair as stock \`<sys/sdt.h>\` probes: \`STAP_PROBE7\` inline, its own provider and semaphores (\`bench/nop1.h\`), 1-byte nop | $DET_NOP1 | $(calc %.2f "$DET_NOP1 - $DET_EMPTY") | $(calc %.2f "($DET_NOP1 - $DET_EMPTY) / 2") |
| two disabled LTTng-UST tracepoints, same fields, no session | $DET_LTTNG | $(calc %.2f "$DET_LTTNG - $DET_EMPTY") | $(calc %.2f "($DET_LTTNG - $DET_EMPTY) / 2") |

A not-taken test runs alongside the loop's own instructions: differences of a tenth of a
nanosecond either way are noise. trace2.h's test reads two words (the kind's semaphore and
the runtime's \`on\` word) where a stock probe reads one. The bytes at the probe sites, which
are all in the runtime: \`$INSN_BATCH\` at \`tr2:batch\` and \`$INSN_KIND\` at
\`trace2:region_enter\` (a 1-byte nop then a 5-byte nop; the notes name the 1-byte nop, where
tr2-bpf, bpftrace and libbpf's \`bpf_program__attach_usdt\` attach), and \`$INSN_NOP1\` at the
stock probe, inline at the call.

Code each call site adds (gcc -O2, 100 \`region_enter\` call sites in one function, minus
the same function without them). "Fall-through" is the path executed while detached (load
the semaphore or state words, test, branch); "all text" adds the out-of-line block that
builds the arguments and calls the runtime or holds the probe; the USDT note is in the
file, never loaded. A trace2 call site has no note: the runtime's probe sites are the
same for any number of calls.

| call site | fall-through bytes | all text bytes | \`.note.stapsdt\` bytes |
| --- | ---: | ---: | ---: |
| \`trace2_region_enter\` (inline test, call into the runtime) | $HOT_tr2 | $SZ_tr2 | $NOTE_tr2 |
| stock \`<sys/sdt.h>\` probe (1-byte nop) | $HOT_nop1 | $SZ_nop1 | $NOTE_nop1 |
| LTTng-UST tracepoint | $HOT_lttng | $SZ_lttng | $NOTE_lttng |

## 2. Attached: what each event costs the program

ns per event, medians of the rounds; "/ system call": the full-speed figure over this
run's \`getppid()\`. The empty programs are attached by \`bench/bpf_attach.c\`: on the public
probes \`trace2:region_enter\` and \`region_leave\` of tr2bench's runtime with their semaphores,
as bpftrace attaches (a perf uprobe per site with its reference counter: each call enters the
runtime and traps there), or with tr2-bpf's own attach code (\`loader/tr2_attach.c\`) on
\`tr2:batch\`, with the enable, as \`tr2-bpf -- CMD\` attaches. tr2-bpf's rows ran with a
$RING ring buffer (\`-b $RING\`): a full-speed run's batches (32 bytes a region call, about
$(calc %.0f "$EV * 32 / 1e6") MB) fit in it even if tr2-bpf wrote none of them meanwhile, where the default 16 MiB
would overflow whenever tr2-bpf, which formats fewer events a second than a full-speed
producer makes (section 3), falls behind; a lost batch costs the producer less than a
copied one. Lost: M of tr2-bpf's summary line \`tr2-bpf: N events, M lost\` (full speed /
paced, medians), and whether N + M was the events produced in every run.

| per event | full speed | range | paced | range | / system call | lost |
| --- | ---: | --- | ---: | --- | ---: | --- |
$(row "one system call, \`getppid()\` (untraced)" syscall)
$(row "one clock read, \`clock_gettime\` (vDSO; untraced)" clock)
$(row "the trap: an empty BPF program on \`trace2:region_enter\`/\`leave\`, 1-byte nop" trap1)
$(row "the same, 5-byte nop$( [ "$NOP5_REFUSED" = 0 ] || echo " (only because tr2bench never forks: on this kernel a child forked after the kernel made the nop a call crashes, and tr2-bpf refuses \`--probe-nop=5\`)")" trap5)
$(row "the runtime's append alone: \`tr2:enable\` raised, no program on \`tr2:batch\` (\`bpf-attach -e\`)" append)
$(row "the append and a trap per batch: an empty program on \`tr2:batch\`, nothing copied" batch)
$(row "\`tr2-bpf --perf=FILE -- CMD\`" perf "$(lostcol perf)")
$(row "\`tr2-bpf --event=FILE -- CMD\`" event "$(lostcol event)")
$(row "\`tr2-bpf --summary -- CMD\` (the table, no event stream)" summary "$(lostcol summary)")
$(row "\`tr2-bpf --category=other --perf=FILE -- CMD\`: every event rejected (in tr2-bpf)" catrej "$(lostcol catrej)")
$(row "\`tr2-bpf -a --comm=tr2bench --perf=FILE\`, the loop started after it" all "$(lostcol all)")
| bpftrace $(bpftrace --version | awk '{ print $2 }'), \`printf("%s %s\\n", str(category), str(label))\` to a file, on \`trace2:region_enter\`/\`leave\` | $BT_COST | one run | $BT_COST_PACED | one run | $(case "$BT_COST$SYSCALL" in *[!0-9.]*) echo "?" ;; *) calc %.2f "$BT_COST / $SYSCALL" ;; esac) | $BT_LOST / $BT_LOST_PACED ($BT_PRINTED / $BT_PRINTED_PACED printed) |
$(row "LTTng-UST, session enabled, a channel of 8 x 4 MiB sub-buffers per CPU, files in /tmp (no kernel entry per event)" lttng "$(lostmed lttng) / $(lostmed lttng@paced) discarded")
$(row "in-process: format a PERF line and \`write(2)\` it, as git does (tr2bench's own code; libtr2's targets: section 9)" write)

An event under \`tr2-bpf --perf\` costs **$(med perf) ns** at full speed and **$(med perf@paced) ns** paced: $(calc %.2f "$(med perf) / $LT")x and
$(calc %.2f "$(med perf@paced) / $LTP")x LTTng-UST's, $(calc %.2f "$(med perf) / $SYSCALL")x a system call, $(calc %.2f "$(med perf) / $(med trap1)")x the trap that a uprobe per event costs
(the previous design, 885 ns an event on 2026-11-24, trapped at every event). \`--category\`
filters in tr2-bpf, so a rejected event costs the program what a recorded one does.

### Where the time of an attached event goes

The producer's side, from the rows above (full speed, ns per event), and the eBPF programs'
own time, from \`kernel.bpf_stats_enabled\` (run_time_ns and run_cnt of each of tr2-bpf's
programs) over one full-speed \`tr2-bpf -b $RING --perf=/dev/null -- CMD\` run of $STAT_EV events, read
while tr2-bpf was still attached; the statistics add two clock reads to each run of a
program, and the uprobe's own trap is outside them.

| part | ns per event |
| --- | ---: |
| the runtime's append (the clock, the call encoded into the thread's buffer; a literal string defined once per batch, named by id after that) | $(med append) |
| the traps at \`tr2:batch\`, amortized (a full buffer: about $BATCH_CALLS region calls a trap) | $(minus "$(med batch)" "$(med append)") |
| the copies at the batches: \`probe_batch\`'s own time (bpf_stats, below) | $(stat probe_batch per_event) |
| the rest: \`tr2-bpf --perf\` minus the three above (the copies' memory traffic in the producer's caches, the copies at ticks and switches, noise) | $(minus "$(med perf)" "$(calc %.1f "$(med batch) + $(stat probe_batch per_event)")") |

| eBPF program | runs | runs per 1 000 events | ns per run | ns per event |
| --- | ---: | ---: | ---: | ---: |
$(for p in $STAT_PROGS; do echo "| \`$p\` | $(stat $p cnt) | $(calc %.2f "1000 * $(stat $p cnt) / ($STAT_EV + ($STAT_EV == 0))") | $(stat $p each) | $(stat $p per_event) |"; done)

\`probe_batch\` runs at each batch, on the producer, and copies its buffer (about 16 KiB);
\`on_switch\`, \`on_tick\`, \`on_exit\` and \`on_prepare_exec\` run at every context switch,
tick, exit and exec of the host while tr2-bpf runs, most of them for threads it does not trace
(a task-storage look-up), so their "per event" is an upper bound of the producer's share.

### Live: from an event to its line

\`tests/progs/tr2_batch sleep 1\` and \`spin 1\` enter a region, print "entered", then sleep or
compute for a second without a call; \`bench/latency.py\` runs them under \`tr2-bpf --event=FILE\`
and measures the time from reading "entered" to the region_enter line in FILE (polled every
0.2 ms). Under \`-- CMD\` the call waits in the thread's buffer (its batch came at the program's
first call); under \`-p\` it is the thread's first call since the attach, a batch. $LAT_SAMPLES samples each:

| thread after its call | \`-- CMD\` median, ms | max | \`-p\` median, ms | max |
| --- | ---: | ---: | ---: | ---: |
| sleeps (switched out: \`sched_switch\` copies) | $(latmed cmd:sleep) | $(latmax cmd:sleep) | $(latmed pid:sleep) | $(latmax pid:sleep) |
| computes without a call or a system call (the 40 Hz tick copies) | $(latmed cmd:spin) | $(latmax cmd:spin) | $(latmed pid:spin) | $(latmax pid:spin) |
$( [ -s "$TMP/lat.fail" ] && echo && echo "Failed samples: $(sort -u "$TMP/lat.fail" | tr '\n' ';')")

### What tr2-bpf costs the processes it does not trace

A bystander, another process of the same program beside \`tr2-bpf -- CMD\` tracing a
sibling of it: the sibling runs \`tr2bench idle\` (one region pair, then 10 ms asleep, on
CPU $TCPU with tr2-bpf: no CPU to speak of, so that contention is not what is measured),
the bystander the region loop on CPU $PCPU, timed in its thread's CPU time, $BYSTANDER_ITERS pairs, alone
and then beside the traced sibling, $ROUNDS rounds interleaved. The bystander maps the same
runtime; the enable is CMD's tree's only.

| bystander | ns per region pair (median) | range | speed against alone |
| --- | ---: | --- | ---: |
| alone | $(per_pair $BY_ALONE) | $(range $(per_pair_each $BY_ALONE)) | 1.000 |
| beside \`tr2-bpf -- tr2bench idle\` | $(per_pair $BY_BESIDE) | $(range $(per_pair_each $BY_BESIDE)) | $BY_SPEED |

The bystander's \`trace2__state.on\` was raised in $BY_TRACED of $ROUNDS runs beside the trace$( [ -z "$BY_BAD" ] || echo "; **$BY_BAD**").

Every context switch on the host runs tr2-bpf's \`sched_switch\` program, which for a thread
it does not trace is a task-storage look-up. A bystander that switches all the time: \`perf
bench sched pipe\`, two processes passing a byte back and forth through two pipes, $PINGPONG round
trips a run, both on CPU $PCPU (two switches a round trip), alone and beside tr2-bpf, $ROUNDS rounds
interleaved, CPU time of both processes (\`perf stat -e task-clock\`):

| ping-pong | ns a round trip (median) | range | speed against alone | ns more a switch |
| --- | ---: | --- | ---: | ---: |
| alone | $(median $PP_ALONE) | $(range $PP_ALONE) | 1.000 | |
| beside \`tr2-bpf -- tr2bench idle\` | $(median $PP_CMD) | $(range $PP_CMD) | $PP_SPEED_CMD | $PP_SWITCH_CMD |
| beside \`tr2-bpf -a --comm=tr2bench\` | $(median $PP_ALL) | $(range $PP_ALL) | $PP_SPEED_ALL | $PP_SWITCH_ALL |

The \`sched_switch\` program itself, beside \`-a\` (bpf_stats, as above): **${SWITCH_NS:-?} ns a run**.

\`tr2-bpf -a\` raises \`tr2:enable\` in every process that maps a runtime tr2-bpf attached to,
and its filters (\`--comm\`, \`--uid\`, \`--cgroup\`) are decided in BPF at each thread's first
batch. What a process they leave out pays, the loop under \`-a --comm=other\`, full speed:

| \`tr2-bpf -a --comm=other\` | ns per event | range | runs with tr2:enable raised |
| --- | ---: | --- | --- |
| the program's runtime attached at tr2-bpf's start (another process of it was running): its calls are appended and its batches trap, and the eBPF side copies nothing | $(med out) | $(rng out) | $(runs_traced out) |
| the program started after tr2-bpf, no process of it traced: never held, never attached | $(med out_new) | $(rng out_new) | $(runs_traced out_new) |
| for comparison, \`-a --comm=tr2bench\`: traced | $(med all) | $(rng all) | $(runs_traced all) |

## 3. Throughput: tr2-bpf --perf to a file

| producers | ring buffer | seconds | produced | written (N) | lost (M) | N + M = produced | event lines in the file | \`lost_events\` lines | written per second | longest line, bytes |
| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |
| 1, full speed | 16 MiB (default) | $TP_SECS | $TP_PRODUCED | $TP_N | $TP_M | $tp_check | $TP_LINES | $TP_LOSSLINES | $(calc %.0f "$TP_N / $TP_SECS") | $TP_LONGEST |
| 2, full speed | 64 KiB | $TP2_SECS | $TP2_PRODUCED | $TP2_N | $TP2_M | $tp2_check | $TP2_LINES | $TP2_LOSSLINES | $(calc %.0f "$TP2_N / $TP2_SECS") | $TP2_LONGEST |

A full-speed producer makes $(calc %.0f "$TP_PRODUCED / $TP_SECS") events a second here; tr2-bpf wrote
$(calc %.0f "$TP_N / $TP_SECS") a second and counted the rest as lost. tr2-bpf's own CPU time in the
first run (its \`-v\` summary; attaching included): $TP_CPU_USER s user, $TP_CPU_SYS s system,
$(calc %.0f "($TP_CPU_USER + $TP_CPU_SYS) * 1e9 / ($TP_N + ($TP_N == 0))") ns per event written, busy $(calc %.0f "100 * ($TP_CPU_USER + $TP_CPU_SYS) / $TP_SECS")% of the time.

$( [ "$TP_SHORTEST" = "$TP_LONGEST" ] || echo "The shortest line written was $TP_SHORTEST bytes; the longer ones carry the indentation of
regions whose \`region_leave\` was lost, as the PERF format indents by nesting." )

$(cat "$TMP/s3b.md")

## 4. Payload: literal strings once per batch, run-time strings at every call

The runtime defines \`__FILE__\` and the strings that trace2.h marks as literals
(\`__builtin_constant_p\`; docs/probes.md) once per batch and names them by a one-byte id
after that; a string built at run time is copied into the buffer at every call. ns per event
at full speed under \`tr2-bpf -b $RING --perf=FILE -- CMD\` (medians; lost in section 2's sense):

| probe | ns per event | range | lost |
| --- | ---: | --- | --- |
| \`region_enter\`/\`leave\`, literals "index" / "do_read_index" | $(med perf) | $(rng perf) | $(lostcol perf) |
| \`region_enter\`/\`leave\`, the same 5 + 13 bytes built at run time | $(med runtime) | $(rng runtime) | $(lostcol runtime) |
| \`region_enter\`/\`leave\`, 200-byte category and label built at run time ($((ATTACHED_ITERS / 6)) pairs a run) | $(med long) | $(rng long) | $(lostcol long) |
| \`data_intmax\` | $(med intmax) | $(rng intmax) | $(lostcol intmax) |
| \`trace2_timer_start\` / \`trace2_timer_stop\` (per call; summed in tr2-bpf, no event of their own) | $(med timer) | $(rng timer) | $(lostcol timer) |

## 5. tr2-fmt: EVENT lines converted per second

Input: $FMT_IN EVENT lines ($(calc %.0f "$FMT_BYTES / 1048576") MiB) written by
\`tr2-bpf --event\` from \`tr2bench mix\`: a region holding an integer datum and a nested
region, git-like \`region_enter\`, \`region_leave\` and \`data\` lines. Output to /dev/null,
the fastest of 3 runs each (\`bench/fmt.sh\`, which also runs by itself). \`--chrome\` writes
every line as it comes; \`--folded\` writes its few stacks at the end, so its figure is the
reading and the bookkeeping of the regions.

$(fmt_table)

Under callgrind (\`--perf\`, the first $CG_LINES lines): $CG_PER_LINE instructions per line, $CG_PARSE% of
them in \`tr2_reader_parse\` (reading the JSON into an event), $CG_JSON% in its JSON layer
alone (\`tr2_jline_parse\`: simdjson's On Demand parser walking every value of the line).

## 6. Memory of tr2-bpf (default 16 MiB ring buffer)

Peak resident set (\`/usr/bin/time -v\`, the run of section 3): **$RSS_KB KiB**.
Locked BPF memory, from \`bpftool map show\` of the maps tr2-bpf holds open and the
\`memlock\` of its program fds: **$(awk '{ for (i = 1; i <= NF; i++) if ($i == "memlock") { v = $(i + 1); sub("B", "", v); s += v } } END { printf "%d", s / 1024 }' "$TMP/maps") KiB in maps**, $(( ${MEM_PROGS:-0} / 1024 )) KiB in programs:

| map | type | entries | memlock, KiB |
| --- | --- | ---: | ---: |
$(awk '{ name = type = e = m = ""; for (i = 1; i <= NF; i++) { if ($i == "name") name = $(i + 1); if ($i == "max_entries") e = $(i + 1); if ($i == "memlock") { m = $(i + 1); sub("B", "", m) } }
	type = $2; print m, "| " name " | " type " | " e " | " int(m / 1024) " |" }' "$TMP/maps" | sort -rn | cut -d' ' -f2-)

## Where tr2-bpf spends its time

\`perf record -p\` of tr2-bpf (the consumer, CPU $TCPU) during a 3 s full-speed run writing
PERF to a file; the top entries, then the top user-space ones:

\`\`\`
$(cat "$TMP/profile.txt")
\`\`\`

\`\`\`
$(cat "$TMP/profile.user")
\`\`\`
EOF
cat "$TMP/s7.md" "$TMP/s8.md"
cat <<EOF

## 9. In-process targets (GIT_TRACE2*)

What libtr2's own in-process targets cost per event, beside git's write (\`bench/inproc.sh\`,
run by \`make bench\` when the tree has it):

$(cat "$TMP/s9.md")
$(cat "$TMP/s10.md")

## 11. The split of region time by scheduler state (issue 35)

What \`--summary\` and \`--chrome\` cost with the split of each region's time into on CPU,
runnable, blocked and asleep, against the same run with \`--no-split\` (\`bench/sched.sh\`):

$(cat "$TMP/s11.md")

## Goals

Each row: the goal, what this run measured, met or not. Issues 15 (do no harm), 16 (one probe
site per kind), 17 (\`tr2-bpf -a\`) and 26 (no kernel entry per event) name theirs; "before"
figures are in the sections. The goals that measured tr2-bpf against the empty BPF program
on a per-event probe (≤ 1.42x, ≤ 1.3x; issues 15 and 16) are gone: they bounded the work a
uprobe per event added to its trap, and with no kernel entry per event an attached event costs
a fraction of that trap, so the ratio says nothing about the design any more; issue 26's
bounds (LTTng-UST's cost, 150 ns) replace them.

| goal | measured | | why not |
| --- | --- | --- | --- |
$(goal26 perf "\`tr2-bpf --perf\`")
$(goal26 event "\`tr2-bpf --event\`")
$(goal26 summary "\`tr2-bpf --summary\`")
| \`--summary\` costs the program no more than \`--perf\`, within 5 ns (issue 26) | $(med summary) against $(med perf) ns, paced $(med summary@paced) against $(med perf@paced) | $(met "$(med summary) <= $(med perf) + 5 && $(med summary@paced) <= $(med perf@paced) + 5") | $(why "$(med summary) <= $(med perf) + 5 && $(med summary@paced) <= $(med perf@paced) + 5" "the producer's path is the same; a slower consumer (aggregating) competes with it on this 2-CPU machine") |
| a line within 100 ms of its event, a thread that sleeps or computes after it, \`-- CMD\` and \`-p\` (issue 26) | longest $LAT_MAX ms of $(( $(latn cmd:sleep) + $(latn cmd:spin) + $(latn pid:sleep) + $(latn pid:spin) )) samples | $(met "$LAT_OK") | $(why "$LAT_OK" "a copy waits for a switch or a tick (25 ms), then tr2-bpf's 40 ms ordering window and its read timer") |
| nothing lost uncounted: N + M = produced in every tr2-bpf run of section 2 | $(s=""; for n in $RECORDED; do s+="$n $(check $n), "; done; echo "${s%, }") | $(ok=met; for n in $RECORDED; do [ "$(check $n)" = yes ] || ok="**not met**"; done; echo $ok) | |
| detached: a call within 0.5 ns of the empty loop (issues 16, 26: one not-taken branch, arguments not evaluated) | ${det_call} ns a call | $(met "$det_call <= 0.5") | $(why "$det_call <= 0.5" "the two loads, the or, the test and the branch cost more than half a nanosecond here") |
| a bystander of the same program beside \`tr2-bpf -- CMD\` keeps ≥ 0.95 of its untraced speed (issue 15) | $BY_SPEED | $(met "$BY_SPEED >= 0.95") | $(why "$BY_SPEED >= 0.95" "the bystander ran slower beside the trace; its semaphore was raised in $BY_TRACED of $ROUNDS runs") |
| a bystander that switches context all the time keeps ≥ 0.95 of its speed beside tr2-bpf (issues 15, 26) | $PP_SPEED_CMD beside \`-- CMD\`, $PP_SPEED_ALL beside \`-a\` | $(met "$PP_SPEED_CMD >= 0.95 && $PP_SPEED_ALL >= 0.95") | $(why "$PP_SPEED_CMD >= 0.95 && $PP_SPEED_ALL >= 0.95" "every switch runs tr2-bpf's sched_switch program (${SWITCH_NS:-?} ns a run)") |
| throughput: N + M = produced, exactly | 1 producer: $tp_check; 2 producers, 64K ring: $tp2_check | $([ "$tp_check$tp2_check" = yesyes ] && echo met || echo "**not met**") | $([ "$tp_check$tp2_check" = yesyes ] || echo "tr2-bpf's lost count does not match what was dropped") |
| tr2-fmt 10^6 lines/s | slowest format ${fmt_min} lines/s | $(met "$fmt_min >= 1000000") | $(why "$fmt_min >= 1000000" "reading the JSON is $CG_PARSE% of tr2-fmt's instructions") |
$(cat "$TR2_GOALS")
EOF
} >"$OUT"
say "done: $OUT"
