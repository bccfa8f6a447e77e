#!/usr/bin/env bash
# bench/run.sh BUILD OUT.md: measures everything BENCHMARKS.md reports, in one
# run on this machine, and writes OUT.md. Run by `make bench` (as root) once
# the programs are built. Prints progress on stderr; takes 7 to 10 minutes.
#
# Every per-event cost is producer-side: tr2bench times its own loop, with and
# without a tracer, and the difference divided by the events is the price the
# instrumented program pays. The producer runs on one CPU and the tracer on
# the other. The machines this runs on are small shared VMs, so the attached
# configurations are interleaved round by round (a slow moment hits all of
# them alike) and each figure is the median of the rounds, with the range.
# Sections 7 and 8 (bench/shapes.sh, bench/host.sh) time whole programs the
# same way: traced and untraced interleaved, medians. Section 9 is
# bench/inproc.sh's, when the tree has it.
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
SPIN=${SPIN:-10000}                       # empty-loop iterations between paced pairs
DETACHED_ITERS=${DETACHED_ITERS:-5e8}
DETACHED_ROUNDS=${DETACHED_ROUNDS:-7}
BYSTANDER_ITERS=${BYSTANDER_ITERS:-3e8}   # the bystander's pairs per run
FMT_LINES=1000000

[ "$(id -u)" = 0 ] || { echo "bench/run.sh: needs root (BPF)" >&2; exit 1; }
for tool in bpftrace lttng lttng-sessiond perf bpftool /usr/bin/time taskset; do
	command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool missing: run scripts/install-deps.sh --bench" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/tr2bench.XXXXXX)
SESSIOND_PID= SPINNER=
# The tree measured, as it is now (this run rewrites OUT, a tracked file,
# at the end); and snapshots, so that every row measures the same binaries
# even if the build tree changes meanwhile.
TREE="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo " with local changes")"
mkdir "$TMP/bin"
cp "$BUILD"/bench/tr2bench "$BUILD"/bench/bpf-attach "$BUILD"/bench/*.bpf.o \
   "$BUILD"/tr2-bpf "$BUILD"/tr2-fmt "$TMP/bin/"
BIN=$TMP/bin B=$TMP/bin/tr2bench ATT=$TMP/bin/bpf-attach TR2BPF=$TMP/bin/tr2-bpf TR2FMT=$TMP/bin/tr2-fmt

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
	[ -n "$SPINNER" ] && kill "$SPINNER" 2>/dev/null
	lttng destroy tr2bench >/dev/null 2>&1 || true
	[ -n "$SESSIOND_PID" ] && kill "$SESSIOND_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ "$(nproc)" -ge 2 ]; then PCPU=1 TCPU=0; else PCPU=0 TCPU=0; fi

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }    # field NAME "tr2bench output line"
# "N M" from tr2-bpf's summary line "tr2-bpf: N events, M lost" in a stderr file.
summary() { sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p' "$1" | tail -1; }
# A tr2bench run meant to be untraced that another tr2-bpf (someone's -a)
# traced: said on stderr, and counted.
OTHERS=0
untraced_check() {
	[ "$(field traced "$1")" != 1 ] && return 0
	OTHERS=$((OTHERS + 1))
	say "  warning: an untraced run had tr2:enable raised (another tr2-bpf -a on this machine?)"
}

# ---------------------------------------------------------------------------
say "1/6 detached cost: $DETACHED_ROUNDS rounds of $DETACHED_ITERS iterations per variant"
declare -A det
for r in $(seq "$DETACHED_ROUNDS"); do
	for k in empty region region_nop1 lttng; do
		line=$(taskset -c $PCPU "$B" "$k" "$DETACHED_ITERS")
		untraced_check "$line"
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
INSN_EVENT=$(site_insn tr2 event) INSN_KIND=$(site_insn trace2 region_enter) INSN_NOP1=$(site_insn tr2bench region_enter)

# ---------------------------------------------------------------------------
say "2/6 attached cost: $ROUNDS interleaved rounds, $ATTACHED_ITERS pairs per run ($PACED_ITERS paced)"
CONFIGS="empty1 empty5 empty1busy enable tr2bpf tr2bpf_runtime tr2bpf_long tr2bpf_intmax tr2bpf_timer
	tr2bpf_sum tr2bpf_catrej tr2bpf_all tr2bpf_out tr2bpf_out_new
	write lttng proto-args proto-hdr proto-hdr-lazy proto-tr2 proto-tr2-lazy proto-intern proto-intern-lazy
	empty1@paced empty5@paced tr2bpf@paced proto-tr2@paced proto-tr2-lazy@paced"

kind_of() {
	case ${1%@paced} in
	tr2bpf_runtime) echo region_runtime ;; tr2bpf_long) echo region_long ;;
	tr2bpf_intmax) echo intmax ;; tr2bpf_timer) echo timer ;;
	write) echo write ;; lttng) echo lttng ;; *) echo region ;;
	esac
}

# LTTng-UST: a session daemon (started here if none runs, on the tracer's
# CPU), a session per run with its files in $TMP, every tr2bench event enabled.
lttng_run() {
	lttng destroy tr2bench >/dev/null 2>&1 || true
	rm -rf "$TMP/lttng"
	lttng create tr2bench --output="$TMP/lttng" >/dev/null
	lttng enable-event -u 'tr2bench:*' >/dev/null
	lttng start >/dev/null
	T taskset -c $PCPU "$B" lttng "$1"
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
	timeout -k 5 120 taskset -c $TCPU "$TR2BPF" -a "$@" --perf="$TMP/out" &
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
	rm -f "$TMP/out"
	# shellcheck disable=SC2086
	case $base in
	empty1|empty1busy) T taskset -c $TCPU "$ATT" "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	# The 5-byte nop: tr2bench never forks, so the kernel's call is safe.
	empty5) T taskset -c $TCPU "$ATT" -5 "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	# The enable alone: the runtime's path to the event site, no uprobe hit.
	enable) T taskset -c $TCPU "$ATT" -e "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	proto-*) T taskset -c $TCPU "$ATT" "$BIN/$base.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	# --summary alone: regions aggregated in BPF, no record; the table on stdout.
	tr2bpf_sum) T taskset -c $TCPU "$TR2BPF" --summary -- "$B" -c $PCPU $spin $kind $n ;;
	# A category filter that rejects the loop's category "index".
	tr2bpf_catrej) T taskset -c $TCPU "$TR2BPF" --category=other --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	# -a narrowed to the loop's name (only this run's processes count).
	tr2bpf_all) all_run --comm=tr2bench ;;
	# -a whose filter leaves the loop out: the program's runtime already
	# attached (a process of it ran at the start), or not.
	tr2bpf_out) all_run --running --comm=other ;;
	tr2bpf_out_new) all_run --comm=other ;;
	tr2bpf*) T taskset -c $TCPU "$TR2BPF" --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	write) taskset -c $PCPU "$B" -o "$TMP/out" write $n ;;
	lttng) lttng_run $n ;;
	esac 2>"$TMP/$name.err" | grep "^$kind " || true
}

if ! pgrep -x lttng-sessiond >/dev/null; then
	taskset -c $TCPU lttng-sessiond --daemonize
	SESSIOND_PID=$(cat /var/run/lttng/lttng-sessiond.pid)
fi

# cost: ns per event per run; lost: tr2-bpf's M per run; bad: failed checks;
# traced: how many runs had tr2:enable raised in the loop (tr2bench's traced=).
declare -A cost lost bad traced
for r in $(seq "$ROUNDS"); do
	# This round's detached times: what its attached runs are compared with.
	declare -A base=()
	for k in empty region region_runtime region_long intmax timer lttng; do
		line=$(taskset -c $PCPU "$B" $k "$ATTACHED_ITERS")
		untraced_check "$line"
		base[$k]=$(field ns "$line")
	done
	base[write]=${base[empty]}
	base[paced]=$(field ns "$(taskset -c $PCPU "$B" -s $SPIN region "$PACED_ITERS")")
	for name in $CONFIGS; do
		if [ "$name" = empty1busy ]; then
			# The tracer's CPU kept busy by a shell loop: on these VMs a busy
			# CPU $TCPU slows CPU $PCPU too, and a real tracer is busy while
			# it formats.
			taskset -c $TCPU bash -c 'while :; do :; done' &
			SPINNER=$!
		fi
		line=$(run_cfg "$name")
		if [ -n "$SPINNER" ]; then kill "$SPINNER"; wait "$SPINNER" 2>/dev/null || true; SPINNER=; fi
		kind=$(kind_of "$name")
		[ "$name" = "${name%@paced}" ] || kind=paced
		ev=$(field events "$line")
		if [ -z "$ev" ]; then bad[$name]+=" a run failed"; reap_strays; continue; fi
		c=$(calc %.0f "($(field ns "$line") - ${base[$kind]}) / $ev")
		cost[$name]+=" ${c/#-0/0}"
		traced[$name]=$(( ${traced[$name]:-0} + $(field traced "$line") ))
		case $name in
		tr2bpf_timer|tr2bpf_catrej|tr2bpf_out*)   # no record sent: only losses to check
			nm_=$(summary "$TMP/$name.err")
			lost[$name]+=" ${nm_#* }"
			;;
		tr2bpf*)
			nm_=$(summary "$TMP/$name.err")
			if [ -z "$nm_" ]; then bad[$name]+=" no summary line"; continue; fi
			n=${nm_% *} m=${nm_#* }
			lost[$name]+=" $m"
			[ "$((n + m))" = "$ev" ] || bad[$name]+=" N+M=$((n + m))≠$ev"
			;;
		lttng) lost[$name]+=" $(awk '/^discarded/ { print $2 }' "$TMP/$name.err")" ;;
		esac
	done
	say "  round $r/$ROUNDS: $(for n in empty1 empty5 tr2bpf tr2bpf_out; do printf '%s %s ' $n "${cost[$n]##* }"; done)ns/event"
done

# A bystander: another process of the same program, beside tr2-bpf -- CMD
# tracing a sibling of it.  The sibling runs `tr2bench idle` (a region pair,
# then 10 ms asleep: a few events a second, no CPU to speak of) on the
# tracer's CPU; the bystander runs the region loop on the producer's CPU,
# timed in its own thread's CPU time, alone and then beside the traced
# sibling, round by round.
say "  bystander beside tr2-bpf -- CMD: $ROUNDS rounds of $BYSTANDER_ITERS pairs"
BY_ALONE= BY_BESIDE= BY_TRACED=0 BY_BAD=
for r in $(seq "$ROUNDS"); do
	line=$(taskset -c $PCPU "$B" region "$BYSTANDER_ITERS")
	untraced_check "$line"
	BY_ALONE+=" $(field ns "$line")"
	rm -f "$TMP/sib.perf"
	timeout -k 5 120 taskset -c $TCPU "$TR2BPF" --perf="$TMP/sib.perf" -- "$B" idle 120s >/dev/null 2>"$TMP/sib.err" &
	sib=$!
	wait_for region_enter "$TMP/sib.perf" || BY_BAD+=" the sibling was not traced;"
	line=$(taskset -c $PCPU "$B" region "$BYSTANDER_ITERS")
	BY_BESIDE+=" $(field ns "$line")"
	BY_TRACED=$((BY_TRACED + $(field traced "$line")))
	kill -TERM $sib
	wait $sib || true
done
# shellcheck disable=SC2086
BY_SPEED=$(calc %.3f "$(median $BY_ALONE) / $(median $BY_BESIDE)")
say "  bystander: alone $(median $BY_ALONE) ns, beside $(median $BY_BESIDE) ns: speed $BY_SPEED"

# bpftrace, once (it compiles its program for seconds): the same fields to
# a file, with its "Lost N events" lines in it.  It attaches to the public
# probe trace2:region_enter/leave in the runtime and raises their semaphores.
say "  bpftrace"
BT_PROG="usdt:$B:trace2:region_enter, usdt:$B:trace2:region_leave { printf(\"%s %s\\n\", str(arg4), str(arg5)); }"
base_region=$(field ns "$(taskset -c $PCPU "$B" region "$ATTACHED_ITERS")")
line=$(T taskset -c $TCPU bpftrace -o "$TMP/bt.out" -e "$BT_PROG" -c "$B -c $PCPU region $ATTACHED_ITERS" 2>"$TMP/bt.err" | grep '^region ' || true)
BT_EV=$(field events "$line")
BT_COST=$( [ -n "$BT_EV" ] && calc %.0f "($(field ns "$line") - $base_region) / $BT_EV" || echo failed)
BT_PRINTED=$(grep -c '^index do_read_index' "$TMP/bt.out" || true)
BT_LOST=$(awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }' "$TMP/bt.out" 2>/dev/null || echo 0)

if [ -n "$SESSIOND_PID" ]; then kill "$SESSIOND_PID"; SESSIOND_PID=; fi

# The time inside the BPF programs themselves (kernel.bpf_stats_enabled:
# run_time_ns / run_cnt of the probe_event program of the tracer this run
# started, whose tail calls count in it; 1.5 s into a 3 s full-speed load),
# for tr2-bpf's program and the bench's; the uprobe around them is not in it.
bpf_stat() {  # EXE CMD...: EXE, the tracer's program file
	local exe=$1 job pid v="" id
	shift
	sysctl -qw kernel.bpf_stats_enabled=1
	"$@" >/dev/null 2>&1 &
	job=$!
	sleep 1.5
	for pid in $(pids_of "$exe"); do
		for id in $(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -un); do
			v=$(bpftool prog show id "$id" 2>/dev/null | awk '/ name probe_event / { for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { if (c) printf "%.0f", t / c }')
			[ -n "$v" ] && break 2
		done
	done
	wait $job 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled=0
	echo "${v:-?}"
}
STAT_TR2=$(bpf_stat "$TR2BPF" T taskset -c $TCPU "$TR2BPF" --perf=/dev/null -- "$B" -c $PCPU region 3s)
STAT_SUM=$(bpf_stat "$TR2BPF" T taskset -c $TCPU "$TR2BPF" --summary -- "$B" -c $PCPU region 3s)
STAT_EMPTY=$(bpf_stat "$ATT" T taskset -c $TCPU "$ATT" "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU region 3s)
STAT_ARGS=$(bpf_stat "$ATT" T taskset -c $TCPU "$ATT" "$BIN/proto-args.bpf.o" -- "$B" -S -c $PCPU region 3s)
STAT_HDR=$(bpf_stat "$ATT" T taskset -c $TCPU "$ATT" "$BIN/proto-hdr-lazy.bpf.o" -- "$B" -S -c $PCPU region 3s)
say "  inside the BPF program per hit: tr2-bpf $STAT_TR2 ns, --summary $STAT_SUM ns, empty program $STAT_EMPTY ns, proto-args $STAT_ARGS ns, proto-hdr-lazy $STAT_HDR ns"


# med NAME, rng NAME: a configuration's median and range over the rounds.
med() { if [ -n "${cost[$1]:-}" ]; then median ${cost[$1]}; else echo "failed"; fi; }
rng() { if [ -n "${cost[$1]:-}" ]; then range ${cost[$1]}; fi; }
lostmed() { if [ -n "${lost[$1]:-}" ]; then median ${lost[$1]}; fi; }
check() { [ -z "${bad[$1]:-}" ] && echo "yes" || echo "**no**:${bad[$1]}"; }

# ---------------------------------------------------------------------------
say "3/6 throughput: one producer for 5 s, then two producers into a 64K ring"
rm -f "$TMP/tp.perf"
/usr/bin/time -v -o "$TMP/time.txt" timeout -k 5 60 taskset -c $TCPU "$TR2BPF" -v --perf="$TMP/tp.perf" -- \
	"$B" -c $PCPU region 5s >"$TMP/tp.out" 2>"$TMP/tp.err" &
TIMEPID=$!
# While it runs: the BPF memory tr2-bpf holds, map by map, from its fds.
sleep 2
TPID=$(pids_of "$TR2BPF" | head -1)
: >"$TMP/maps"
if [ -n "$TPID" ]; then
	for id in $(cat /proc/"$TPID"/fdinfo/* 2>/dev/null | awk '/^map_id:/ { print $2 }' | sort -un); do
		bpftool map show id "$id" 2>/dev/null | tr '\n' ' ' | sed 's/$/\n/'
	done >"$TMP/maps"
	MEM_PROGS=$(cat /proc/"$TPID"/fdinfo/* 2>/dev/null | awk '/^prog_type:/ { p = 1 } /^memlock:/ && p { s += $2; p = 0 } END { print s + 0 }')
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

# ---------------------------------------------------------------------------
say "4/6 profile: perf record of tr2-bpf under a 3 s load"
timeout -k 5 60 taskset -c $TCPU "$TR2BPF" --perf="$TMP/prof.perf" -- "$B" -c $PCPU region 3s >/dev/null 2>&1 &
PROFPID=$!
sleep 0.5
perf record -q -F 1999 -o "$TMP/perf.data" -p "$(pids_of "$TR2BPF" | head -1)" -- sleep 2 >/dev/null 2>&1 || true
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
# Sections 7, 8 and 9, each its own script; their goal rows gathered in
# $TR2_GOALS for the table at the end.
export TR2_GOALS=$TMP/goals
: >"$TR2_GOALS"
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

# ---------------------------------------------------------------------------
say "writing $OUT"
ratio1=$(calc %.2f "$(med tr2bpf) / $(med empty1)")
ratio5=$(calc %.2f "$(med tr2bpf) / $(med empty5)")
ratio_paced=$(calc %.2f "$(med tr2bpf@paced) / $(med empty1@paced)")
ratio_paced5=$(calc %.2f "$(med tr2bpf@paced) / $(med empty5@paced)")
ratio_sum=$(calc %.2f "$(med tr2bpf_sum) / $(med empty1)")
ratio_cat=$(calc %.2f "$(med tr2bpf_catrej) / $(med empty1)")
ratio_out=$(calc %.2f "$(med tr2bpf_out) / $(med empty1)")
det_call=$(calc %.2f "($DET_REGION - $DET_EMPTY) / 2")
tp_check=$([ "$((TP_N + TP_M))" = "$TP_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP_N + TP_M)))")
tp2_check=$([ "$((TP2_N + TP2_M))" = "$TP2_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP2_N + TP2_M)))")
fmt_min=$(printf '%s\n' "${fmt_rate[@]}" | sort -g | head -1)
EV=$((2 * ATTACHED_ITERS))
row() { echo "| $1 | $2 | $(med "$3") | $(rng "$3") | $4 |"; }
runs_traced() { echo "${traced[$1]:-0} of $ROUNDS"; }
# The bystander's run times as ns per region pair: the median, each.
per_pair_each() { local t; for t in "$@"; do calc %.4f "$t / $BYSTANDER_ITERS"; echo; done; }
per_pair() { median $(per_pair_each "$@"); }
minus() { case "$1$2" in *[!0-9.-]*|"") echo "?" ;; *) calc %.0f "$1 - $2" ;; esac; }

{
cat <<EOF
# Benchmarks

What tr2's probes cost a program, detached and attached, next to the alternatives: an
empty loop, a stock \`<sys/sdt.h>\` probe, LTTng-UST, an empty BPF program (the kernel's
floor), bpftrace, and git's own in-process Trace2 (format and \`write(2)\` each event);
what \`tr2-bpf\` costs the processes beside the ones it traces; tr2-bpf's throughput and
memory; tr2-fmt's speed; whole programs traced and untraced (process trees, dlopen
cycles, threads, \`tr2-bpf -a\` on a host). Every figure below comes from one run of
\`make bench\` (\`bench/run.sh\`, about $(( ($(date +%s) - START + 59) / 60 )) minutes, as root) on this machine:

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- kernel: $(uname -r) ($(grep -q ' arch_uprobe_optimize$' /proc/kallsyms && echo "has arch_uprobe_optimize: a uprobe on a 5-byte nop becomes a call" || echo "no arch_uprobe_optimize: a uprobe on a 5-byte nop is single-stepped"))
- CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), nproc $(nproc)$(grep -q hypervisor /proc/cpuinfo && echo " (a VM: figures move by tens of percent from run to run)")
- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)$( [ "$OTHERS" = 0 ] || echo "; $OTHERS runs meant to be untraced had tr2:enable raised by a tr2-bpf not of this run")
- tree: $TREE

How to run: \`make bench\` (root; the packages of \`scripts/install-deps.sh --bench\`). It
builds \`build/bench/\` and rewrites this file. The pieces: \`bench/tr2bench.c\` (the loops),
\`bench/bpf_attach.c\` with \`bench/empty.bpf.c\` and \`bench/proto.bpf.c\` (BPF programs
attached by tr2-bpf's own attach code), \`bench/sites.c\` (code size), \`bench/gen_calls.sh\`
(programs with many call sites), \`bench/run.sh\`, \`bench/shapes.sh\`, \`bench/host.sh\`.

The design measured: a trace2 call tests two words inline (\`trace2__state.on |
trace2__state.sem[kind]\`) and only then calls the runtime (\`usdt/tr2_probe.c\`), which
fires the public probe \`trace2:<kind>\` (bpftrace, perf) and, while tr2-bpf is attached,
the private probe \`tr2:event\`, tr2-bpf's one payload site for every kind (\`bpf/tr2.bpf.c\`
dispatches by tail call). tr2-bpf raises \`trace2__state.on\` itself, in the processes it
traces only, with a perf event on the private probe \`tr2:enable\`. No probe site is in the
caller's code.

Method: \`tr2bench KIND COUNT\` runs COUNT iterations of a loop and times the loop alone,
in CPU time of its thread (user and kernel, where the BPF programs run), so that other
processes on the CPU do not count.
\`region\`: one \`trace2_region_enter\` + \`trace2_region_leave\` pair per iteration (category
"index", label "do_read_index"). Every loop body ends in the same
\`asm volatile("" ::: "memory")\`, the empty loop's too. The producer is pinned to CPU
$PCPU, tracers to CPU $TCPU. Attached cost per event = (loop time attached − loop time
detached) / events. Detached: the fastest of $DETACHED_ROUNDS runs of $DETACHED_ITERS
iterations (the least disturbed by the VM). Attached: $ROUNDS rounds of $ATTACHED_ITERS pairs ($EV events) per
configuration, interleaved; median and range (bpftrace: one run). The empty program and
the \`proto-*\` programs are attached by \`bench/bpf_attach.c\` with tr2-bpf's own code
(\`loader/tr2_attach.c\`) the way \`tr2-bpf -- CMD\` attaches: the payload on \`tr2:event\`
(a uprobe-multi link for every process that maps the runtime), the enable on \`tr2:enable\`
(a perf event inherited by CMD's descendants).

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
are all in the runtime now: \`$INSN_EVENT\` at \`tr2:event\` and \`$INSN_KIND\` at
\`trace2:region_enter\` (a 1-byte nop then a 5-byte nop; the notes name the 1-byte nop, where
tr2-bpf, bpftrace and libbpf's \`bpf_program__attach_usdt\` attach), and \`$INSN_NOP1\` at the
stock probe, inline at the call.

Code each call site adds (gcc -O2, 100 \`region_enter\` call sites in one function, minus
the same function without them). "Fall-through" is the path executed while detached (load
the semaphore or state words, test, branch); "all text" adds the out-of-line block that
builds the arguments and calls the runtime or holds the probe; the USDT note is in the
file, never loaded. A trace2 call site has no note: the runtime's 30 probe sites are the
same for any number of calls.

| call site | fall-through bytes | all text bytes | \`.note.stapsdt\` bytes |
| --- | ---: | ---: | ---: |
| \`trace2_region_enter\` (inline test, call into the runtime) | $HOT_tr2 | $SZ_tr2 | $NOTE_tr2 |
| stock \`<sys/sdt.h>\` probe (1-byte nop) | $HOT_nop1 | $SZ_nop1 | $NOTE_nop1 |
| LTTng-UST tracepoint | $HOT_lttng | $SZ_lttng | $NOTE_lttng |

## 2. Attached: what each event costs the program

Full speed: the loop as fast as it goes, $EV events per run. tr2-bpf puts its payload
uprobe on the 1-byte nop of \`tr2:event\`, its default$( [ "$NOP5_REFUSED" = 0 ] && echo "." || echo ": \`--probe-nop=5\` is refused on this
kernel, which turns a uprobe on a 5-byte nop into a call to a trampoline that a child
forked afterwards does not inherit (VM_DONTCOPY): the child crashes at its next event." )
The empty program is measured on both nops; on the 5-byte one only because tr2bench never
forks.

| tracer | probe site | ns per event | range | events lost (median) |
| --- | --- | ---: | --- | --- |
$(row "empty BPF program (\`bench/empty.bpf.c\`): the floor" "1-byte nop of \`tr2:event\`" empty1 "")
$(row "empty BPF program" "5-byte nop of \`tr2:event\`" empty5 "")
$(row "empty BPF program, CPU $TCPU kept busy by a shell loop" "1-byte nop" empty1busy "")
$(row "\`tr2:enable\` raised, no payload: the runtime's own path (string touches, module number, the call to the event site)" "none hit" enable "")
$(row "\`tr2-bpf --perf=FILE -- CMD\`" "1-byte nop" tr2bpf "$(lostmed tr2bpf)")
$(row "\`tr2-bpf -a --comm=tr2bench --perf=FILE\`, the loop started after it" "1-byte nop" tr2bpf_all "$(lostmed tr2bpf_all)")
| bpftrace $(bpftrace --version | awk '{ print $2 }'), \`printf("%s %s\\n", str(category), str(label))\` to a file | 1-byte nop of \`trace2:region_enter\`/\`leave\` (the note's address) | $BT_COST | one run | $BT_LOST ($BT_PRINTED printed) |
$(row "LTTng-UST, session enabled, files in /tmp" "none" lttng "$(lostmed lttng) discarded")
$(row "in-process: format a PERF line and \`write(2)\` it, as git does (tr2bench's own code; libtr2's targets: section 9)" "none" write "")

tr2-bpf / empty program at full speed: **${ratio1}x** on the 1-byte nop, both; **${ratio5}x** against
the empty program on the 5-byte nop$( [ "$(lostmed tr2bpf)" = 0 ] &&
echo " (tr2-bpf lost no event)." ||
echo "; tr2-bpf dropped events, and a dropped event
costs the producer less than a delivered one, which flatters these ratios." ) The previous design
measured 1.42x, tr2-bpf and the empty program both on the 5-byte nop of the caller's own probe
site. Paced instead (after each pair, $SPIN iterations of the empty loop, a few microseconds:
the consumer keeps up and sleeps between events, as with a real program; each pair timed by
itself), $PACED_ITERS pairs per run:

| tracer | probe site | ns per event | range | events lost (median) |
| --- | --- | ---: | --- | --- |
$(row "empty BPF program" "1-byte nop" empty1@paced "")
$(row "empty BPF program" "5-byte nop" empty5@paced "")
$(row "\`tr2-bpf --perf=FILE -- CMD\`" "1-byte nop" tr2bpf@paced "$(lostmed tr2bpf@paced)")
$(row "tr2.bpf.c's path before, consumer woken per record (\`proto-tr2\`, below)" "1-byte nop" proto-tr2@paced "")
$(row "the same, lazy wakeup (\`proto-tr2-lazy\`)" "1-byte nop" proto-tr2-lazy@paced "")

tr2-bpf / empty program, paced: **${ratio_paced}x** on the 1-byte nop, ${ratio_paced5}x against the 5-byte
nop. Events lost are M of tr2-bpf's summary line \`tr2-bpf: N events, M lost\`; N + M matched
the events produced in every tr2-bpf run: $(check tr2bpf), $(check tr2bpf_runtime), $(check tr2bpf_long), $(check tr2bpf_intmax), $(check tr2bpf@paced), $(check tr2bpf_all).

### What tr2-bpf costs the processes it does not trace

A bystander, another process of the same program beside \`tr2-bpf -- CMD\` tracing a
sibling of it: the sibling runs \`tr2bench idle\` (one region pair, then 10 ms asleep, on
CPU $TCPU with tr2-bpf: no CPU to speak of, so that contention is not what is measured),
the bystander the region loop on CPU $PCPU, timed in its thread's CPU time, $BYSTANDER_ITERS pairs, alone
and then beside the traced sibling, $ROUNDS rounds interleaved. The payload uprobe is in the
bystander too (tr2-bpf attaches it for every process that maps the runtime); the enable is
CMD's tree's only.

| bystander | ns per region pair (median) | range | speed against alone |
| --- | ---: | --- | ---: |
| alone | $(per_pair $BY_ALONE) | $(range $(per_pair_each $BY_ALONE)) | 1.000 |
| beside \`tr2-bpf -- tr2bench idle\` | $(per_pair $BY_BESIDE) | $(range $(per_pair_each $BY_BESIDE)) | $BY_SPEED |

The bystander's \`trace2__state.on\` was raised in $BY_TRACED of $ROUNDS runs beside the trace$( [ -z "$BY_BAD" ] || echo "; **$BY_BAD**").

\`tr2-bpf -a\` raises \`tr2:enable\` in every process that maps a runtime tr2-bpf attached to,
and its filters (\`--comm\`, \`--uid\`, \`--cgroup\`) are decided in BPF at each thread's first
event. What a process they leave out pays, the loop under \`-a --comm=other\`:

| \`tr2-bpf -a --comm=other\` | ns per event | range | runs with tr2:enable raised |
| --- | ---: | --- | --- |
| the program's runtime attached at tr2-bpf's start (another process of it was running): every event reaches the eBPF side and is dropped there | $(med tr2bpf_out) | $(rng tr2bpf_out) | $(runs_traced tr2bpf_out) |
| the program started after tr2-bpf, no process of it traced: never held, never attached | $(med tr2bpf_out_new) | $(rng tr2bpf_out_new) | $(runs_traced tr2bpf_out_new) |
| for comparison, \`-a --comm=tr2bench\`: traced | $(med tr2bpf_all) | $(rng tr2bpf_all) | $(runs_traced tr2bpf_all) |

A process left out by the filters whose runtime is attached pays ${ratio_out}x the empty program's
cost per event; one whose runtime tr2-bpf never attached pays nothing beyond the detached test.

### Where tr2-bpf's BPF-side cost goes

Time spent inside the BPF program per hit (\`kernel.bpf_stats_enabled\`, run_time_ns /
run_cnt of \`probe_event\`, tail calls included, over 3 s at full speed; the uprobe's own cost
is outside it, and the statistics add two clock reads to each run): tr2-bpf's program
**$STAT_TR2 ns**, the empty program $STAT_EMPTY ns, \`proto-args\` $STAT_ARGS ns, \`proto-hdr-lazy\` $STAT_HDR ns: a bare
48-byte ring-buffer record costs $(minus "$STAT_HDR" "$STAT_ARGS") ns inside the program.

\`bench/proto.bpf.c\` rebuilds the region path in parts, as tr2.bpf.c was before it read
its own arguments and sent literal strings once (libbpf's \`BPF_USDT\`, which reads
\`tr2:event\`'s arguments up to msg, nine, with \`bpf_usdt_arg()\`); bpf-attach's consumer
counts records and formats nothing. "woken per record" submits with flags 0, the
default: the kernel wakes the consumer (irq_work, then a cross-CPU wakeup) whenever it had
caught up. "lazy" submits with \`BPF_RB_NO_WAKEUP\` unless over 1 MiB is waiting (then
\`BPF_RB_FORCE_WAKEUP\`), as tr2.bpf.c does with its own threshold; the consumer polls
every 10 ms. Full speed, ns per event, 1-byte nop:

| program | woken per record | range | lazy wakeup | range |
| --- | ---: | --- | ---: | --- |
| empty program (the floor) | $(med empty1) | $(rng empty1) | | |
| \`proto-args\`: the nine arguments read with \`bpf_usdt_arg()\`, nothing sent | $(med proto-args) | $(rng proto-args) | | |
| \`proto-hdr\`: the arguments, and a 48-byte header (pid, tid, time) reserved and submitted | $(med proto-hdr) | $(rng proto-hdr) | $(med proto-hdr-lazy) | $(rng proto-hdr-lazy) |
| \`proto-tr2\`: tr2.bpf.c's path before: the arguments, traced-set and task-storage lookups, file + category + label into a per-CPU scratch record, \`bpf_ringbuf_output\` | $(med proto-tr2) | $(rng proto-tr2) | $(med proto-tr2-lazy) | $(rng proto-tr2-lazy) |
| \`proto-intern\`: the arguments, each string address sent once, then three pointers in the header | $(med proto-intern) | $(rng proto-intern) | $(med proto-intern-lazy) | $(rng proto-intern-lazy) |

### Summary mode and the category filter

\`tr2-bpf --summary\` alone aggregates each region pair in BPF (count, sum, min, max,
log2 histogram per process and label) and sends no record; \`--category=other\` rejects
the loop's category "index" in BPF (a literal: its verdict is kept per thread). Same
rounds as above, full speed, 1-byte nop:

| configuration | ns per event | range | ns per region pair | / empty program | events lost (median) |
| --- | ---: | --- | ---: | ---: | ---: |
| empty BPF program: the floor | $(med empty1) | $(rng empty1) | $(calc %.0f "2 * $(med empty1)") | 1.00x | |
| \`tr2-bpf --summary\` (no stream) | $(med tr2bpf_sum) | $(rng tr2bpf_sum) | $(calc %.0f "2 * $(med tr2bpf_sum)") | ${ratio_sum}x | $(lostmed tr2bpf_sum) |
| \`tr2-bpf --category=other --perf=FILE\`: every event rejected | $(med tr2bpf_catrej) | $(rng tr2bpf_catrej) | $(calc %.0f "2 * $(med tr2bpf_catrej)") | ${ratio_cat}x | $(lostmed tr2bpf_catrej) |
| \`tr2-bpf --perf=FILE\`, for comparison | $(med tr2bpf) | $(rng tr2bpf) | $(calc %.0f "2 * $(med tr2bpf)") | ${ratio1}x | $(lostmed tr2bpf) |

In the \`--summary\` runs N + M of the summary line (N: aggregated events) matched the events
produced: $(check tr2bpf_sum). Inside the program (bpf_stats, as above): \`--summary\`
**$STAT_SUM ns** per \`probe_event\` hit, against $STAT_TR2 ns sending records and
$STAT_EMPTY ns for the empty program.

## 3. Throughput: tr2-bpf --perf to a file

| producers | ring buffer | seconds | produced | written (N) | lost (M) | N + M = produced | event lines in the file | \`lost_events\` lines | written per second | longest line, bytes |
| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |
| 1, full speed | 4 MiB (default) | $TP_SECS | $TP_PRODUCED | $TP_N | $TP_M | $tp_check | $TP_LINES | $TP_LOSSLINES | $(calc %.0f "$TP_N / $TP_SECS") | $TP_LONGEST |
| 2, full speed | 64 KiB | $TP2_SECS | $TP2_PRODUCED | $TP2_N | $TP2_M | $tp2_check | $TP2_LINES | $TP2_LOSSLINES | $(calc %.0f "$TP2_N / $TP2_SECS") | $TP2_LONGEST |

tr2-bpf's own CPU time in the 5 s run (its \`-v\` summary; attaching included):
$TP_CPU_USER s user, $TP_CPU_SYS s system, $(calc %.0f "($TP_CPU_USER + $TP_CPU_SYS) * 1e9 / $TP_N") ns per event written:
the consumer kept up, busy $(calc %.0f "100 * ($TP_CPU_USER + $TP_CPU_SYS) / $TP_SECS")% of the time.

$( [ "$TP_SHORTEST" = "$TP_LONGEST" ] || echo "The shortest line written was $TP_SHORTEST bytes; the longer ones carry the indentation of
regions whose \`region_leave\` was lost, as the PERF format indents by nesting." )

## 4. Payload: literal strings once per call site, run-time strings at every hit

tr2.bpf.c reads \`__FILE__\` and the arguments that trace2.h marks as string literals
(\`__builtin_constant_p\`; docs/probes.md) once per thread and call site, and afterwards
sends the site's number in the record's header (bpf/tr2_record.h); a string built at run
time is read at every hit, as every string was before (the \`proto-tr2\` row of section 2
is that earlier path). ns per event at full speed, 1-byte nop (medians; tr2-bpf's lost
counts in section 2's sense):

| probe | tr2-bpf | range | tr2-bpf lost (median) |
| --- | ---: | --- | ---: |
| \`region_enter\`/\`leave\`, literals "index" / "do_read_index": sent once | $(med tr2bpf) | $(rng tr2bpf) | $(lostmed tr2bpf) |
| \`region_enter\`/\`leave\`, the same 5 + 13 bytes built at run time: read at every hit | $(med tr2bpf_runtime) | $(rng tr2bpf_runtime) | $(lostmed tr2bpf_runtime) |
| \`region_enter\`/\`leave\`, 200-byte category and label built at run time | $(med tr2bpf_long) | $(rng tr2bpf_long) | $(lostmed tr2bpf_long) |
| \`data_intmax\` | $(med tr2bpf_intmax) | $(rng tr2bpf_intmax) | $(lostmed tr2bpf_intmax) |
| \`trace2_timer_start\` / \`trace2_timer_stop\` (per call; summed in BPF, no ring-buffer record) | $(med tr2bpf_timer) | $(rng tr2bpf_timer) | $(lostmed tr2bpf_timer) |

Timers and counters are summed per thread in a BPF hash map: a start or stop costs a
map update, not a record; the sums reach tr2-bpf once, at the thread's \`thread_exit\` or
\`atexit\`. The runtime touches every byte of a string it passes (so that the eBPF side
reads it without a page fault): a 200-byte string costs the program that too.

The empty program was measured on the region pair only: $(med empty1) ns.

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

## 6. Memory of tr2-bpf (default 4 MiB ring buffer)

Peak resident set (\`/usr/bin/time -v\`, the 5 s run of section 3): **$RSS_KB KiB**.
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

## Goals

Each row: the goal, what this run measured, met or not. Issues 15 (do no harm), 16 (one probe
site per kind) and 17 (\`tr2-bpf -a\`) name theirs; "before" figures are in the sections.

| goal | measured | | why not |
| --- | --- | --- | --- |
| detached: a call within 0.5 ns of the empty loop (issue 16: one not-taken branch, arguments not evaluated) | ${det_call} ns a call | $(met "$det_call <= 0.5") | $(why "$det_call <= 0.5" "the two loads, the or, the test and the branch cost more than half a nanosecond here") |
| a bystander of the same program beside \`tr2-bpf -- CMD\` keeps ≥ 0.95 of its untraced speed (issue 15) | $BY_SPEED | $(met "$BY_SPEED >= 0.95") | $(why "$BY_SPEED >= 0.95" "the bystander ran slower beside the trace; its semaphore was raised in $BY_TRACED of $ROUNDS runs") |
| tr2-bpf ≤ 1.42x the empty BPF program at full speed, both on the 1-byte nop (issue 16: no worse than the previous design's 1.42x) | ${ratio1}x | $(met "$ratio1 <= 1.42") | $(why "$ratio1 <= 1.42" "tr2-bpf adds $(calc %.0f "$(med tr2bpf) - $(med empty1)") ns to the empty program's $(med empty1) ns per event: the tail call, the argument reads, the per-thread and per-site lookups and the ring-buffer record ($STAT_TR2 ns inside the program against $STAT_EMPTY)") |
| tr2-bpf ≤ 1.42x the empty BPF program on the 5-byte nop (issue 15's goal as written) | ${ratio5}x (tr2-bpf on the 1-byte nop) | $(met "$ratio5 <= 1.42") | $(why "$ratio5 <= 1.42" "$( [ "$NOP5_REFUSED" = 0 ] && echo "tr2-bpf's default is the 1-byte nop" || echo "tr2-bpf cannot use the 5-byte nop on this kernel: the kernel turns the uprobe into a call to a trampoline that is not copied into a forked child (VM_DONTCOPY), which then crashes at its next event"); on the 1-byte nop every hit is a trap, $(calc %.2f "$(med empty1) / $(med empty5)")x the empty program's cost on the 5-byte nop here") |
| tr2-bpf within 1.3x of the empty BPF program, same nop | ${ratio1}x at full speed, ${ratio_paced}x paced | $(met "$ratio1 <= 1.3 && $ratio_paced <= 1.3") | $(why "$ratio1 <= 1.3 && $ratio_paced <= 1.3" "1.3x leaves $(calc %.0f "0.3 * $(med empty1)") ns above the floor; tr2-bpf adds $(calc %.0f "$(med tr2bpf) - $(med empty1)") ns at full speed, $(calc %.0f "$(med tr2bpf@paced) - $(med empty1@paced)") ns paced. No design that sends a record per event fits in 1.3x at full speed here; events that send none, timers and counters (section 4), come closest") |
| \`--summary\` and a rejecting \`--category\` within 1.3x of the empty program | ${ratio_sum}x, ${ratio_cat}x at full speed | $(met "$ratio_sum <= 1.3 && $ratio_cat <= 1.3") | $(why "$ratio_sum <= 1.3 && $ratio_cat <= 1.3" "1.3x leaves $(calc %.0f "0.3 * $(med empty1)") ns above the floor per event; \`--summary\` adds $(calc %.0f "$(med tr2bpf_sum) - $(med empty1)") ns, the rejecting filter $(calc %.0f "$(med tr2bpf_catrej) - $(med empty1)") ns ($STAT_SUM ns inside the program for \`--summary\` against $STAT_EMPTY)") |
| throughput: N + M = produced, exactly | 1 producer: $tp_check; 2 producers, 64K ring: $tp2_check | $([ "$tp_check$tp2_check" = yesyes ] && echo met || echo "**not met**") | $([ "$tp_check$tp2_check" = yesyes ] || echo "tr2-bpf's lost count does not match what was dropped") |
| tr2-fmt 10^6 lines/s | slowest format ${fmt_min} lines/s | $(met "$fmt_min >= 1000000") | $(why "$fmt_min >= 1000000" "reading the JSON is $CG_PARSE% of tr2-fmt's instructions") |
$(cat "$TR2_GOALS")
EOF
} >"$OUT"
say "done: $OUT"
