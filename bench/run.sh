#!/usr/bin/env bash
# bench/run.sh BUILD OUT.md: measures everything BENCHMARKS.md reports, in one
# run on this machine, and writes OUT.md. Run by `make bench` (as root) once
# the programs are built. Prints progress on stderr; takes 3 to 4 minutes.
#
# Every per-event cost is producer-side: tr2bench times its own loop, with and
# without a tracer, and the difference divided by the events is the price the
# instrumented program pays. The producer runs on one CPU and the tracer on
# the other. The machines this runs on are small shared VMs, so the attached
# configurations are interleaved round by round (a slow moment hits all of
# them alike) and each figure is the median of the rounds, with the range.
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)
OUT=${2:-BENCHMARKS.md}
ROUNDS=${ROUNDS:-7}                       # attached rounds
ATTACHED_ITERS=${ATTACHED_ITERS:-300000}  # pairs per attached run
PACED_ITERS=${PACED_ITERS:-100000}        # pairs per paced run
SPIN=${SPIN:-10000}                       # empty-loop iterations between paced pairs
DETACHED_ITERS=${DETACHED_ITERS:-5e8}
DETACHED_ROUNDS=${DETACHED_ROUNDS:-7}
FMT_LINES=1000000

[ "$(id -u)" = 0 ] || { echo "bench/run.sh: needs root (BPF)" >&2; exit 1; }
for tool in bpftrace lttng lttng-sessiond perf bpftool /usr/bin/time taskset; do
	command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool missing: run scripts/install-deps.sh --bench" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/tr2bench.XXXXXX)
SESSIOND_PID= SPINNER=
# After a tracer timed out: the tr2bench it left stopped or running, found by
# the path of this run's own copy of it, ended by pid.
reap_strays() {
	local exe
	for exe in /proc/[0-9]*/exe; do
		[ "$(readlink "$exe" 2>/dev/null)" = "$B" ] || continue
		exe=${exe#/proc/}
		kill -KILL "${exe%/exe}" 2>/dev/null || true
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

# Snapshots, so that every row measures the same binaries even if the build
# tree changes meanwhile.
mkdir "$TMP/bin"
cp "$BUILD"/bench/tr2bench "$BUILD"/bench/bpf-attach "$BUILD"/bench/*.bpf.o \
   "$BUILD"/tr2-bpf "$BUILD"/tr2-fmt "$TMP/bin/"
BIN=$TMP/bin B=$TMP/bin/tr2bench ATT=$TMP/bin/bpf-attach TR2BPF=$TMP/bin/tr2-bpf TR2FMT=$TMP/bin/tr2-fmt

if [ "$(nproc)" -ge 2 ]; then PCPU=1 TCPU=0; else PCPU=0 TCPU=0; fi
START=$(date +%s)

say() { echo "[$(( $(date +%s) - START ))s] $*" >&2; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }    # field NAME "tr2bench output line"
# "N M" from tr2-bpf's summary line "tr2-bpf: N events, M lost" in a stderr file.
summary() { sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p' "$1" | tail -1; }

# ---------------------------------------------------------------------------
say "1/6 detached cost: $DETACHED_ROUNDS rounds of $DETACHED_ITERS iterations per variant"
declare -A det
for r in $(seq "$DETACHED_ROUNDS"); do
	for k in empty region region_nop1 lttng; do
		line=$(taskset -c $PCPU "$B" "$k" "$DETACHED_ITERS")
		det[$k]+=" $(calc %.4f "$(field ns "$line") / $(field iterations "$line")")"
	done
done
# The fastest run of each: the one the VM disturbed least.  An idle probe is
# a fraction of a nanosecond; a median moves by more than that here.
# shellcheck disable=SC2086
DET_EMPTY=$(minimum ${det[empty]}) DET_REGION=$(minimum ${det[region]}) \
	DET_NOP1=$(minimum ${det[region_nop1]}) DET_LTTNG=$(minimum ${det[lttng]})
say "  ns per iteration: empty $DET_EMPTY, region pair $DET_REGION, nop1 pair $DET_NOP1, lttng pair $DET_LTTNG"

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
# The instruction at the trace2 probe sites inside function $1 of tr2bench.
site_insn() {
	local fn=$1 lo hi
	read -r lo hi < <(nm -S "$B" | awk -v f="$fn" '$4 == f { print $1, $2 }')
	readelf -n "$B" | awk '/Provider: trace2/ { p = 1 } /Location:/ && p { sub(",", "", $2); print $2; p = 0 }' |
	while read -r a; do
		if (( a >= 16#$lo && a < 16#$lo + 16#$hi )); then
			# The first instruction, and the second too when it is the
			# 5-byte nop of trace2.h's `nop; nop5` pair.
			objdump -d "$B" --start-address="$a" --stop-address=$((a + 8)) |
				awk '/^ +[0-9a-f]+:\t/ { split($0, x, "\t"); b = x[2]; sub(/ +$/, "", b)
					if (n++ == 0) { first = b; if (b != "90") exit; next }
					if (b == "0f 1f 44 00 00") first = first " " b; exit }
				     END { print first }'
		fi
	done | sort -u | paste -sd, -
}
INSN_NOP5=$(site_insn loop_region) INSN_NOP1=$(site_insn loop_region_nop1)

# ---------------------------------------------------------------------------
say "2/6 attached cost: $ROUNDS interleaved rounds, $ATTACHED_ITERS pairs per run ($PACED_ITERS paced)"
CONFIGS="empty5 empty5busy empty1 tr2bpf5 tr2bpf1 tr2bpf_runtime tr2bpf_long tr2bpf_intmax tr2bpf_timer
	tr2bpf_sum tr2bpf_catrej
	write lttng proto-args proto-hdr proto-hdr-lazy proto-tr2 proto-tr2-lazy proto-intern proto-intern-lazy
	empty5@paced tr2bpf5@paced proto-tr2@paced proto-tr2-lazy@paced"

kind_of() {
	case ${1%@paced} in
	*1) echo region_nop1 ;; *_long) echo region_long ;; *_runtime) echo region_runtime ;;
	*_intmax) echo intmax ;; *_timer) echo timer ;;
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

# run_cfg NAME: runs configuration NAME once; tr2bench's line on stdout, the
# tracer's stderr in $TMP/NAME.err.
run_cfg() {
	local name=$1 base=${1%@paced} kind n=$ATTACHED_ITERS spin=
	kind=$(kind_of "$name")
	[ "$name" = "$base" ] || { n=$PACED_ITERS; spin="-s $SPIN"; }
	rm -f "$TMP/out"
	# shellcheck disable=SC2086
	case $base in
	empty*) T taskset -c $TCPU "$ATT" "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	proto-*) T taskset -c $TCPU "$ATT" "$BIN/$base.bpf.o" -- "$B" -S -c $PCPU $spin $kind $n ;;
	# --summary alone: regions aggregated in BPF, no record; the table on stdout.
	tr2bpf_sum) T taskset -c $TCPU "$TR2BPF" --probe-nop=5 --summary -- "$B" -c $PCPU $spin $kind $n ;;
	# A category filter that rejects the loop's category "index".
	tr2bpf_catrej) T taskset -c $TCPU "$TR2BPF" --probe-nop=5 --category=other --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	tr2bpf*) T taskset -c $TCPU "$TR2BPF" --probe-nop=5 --perf="$TMP/out" -- "$B" -c $PCPU $spin $kind $n ;;
	write) taskset -c $PCPU "$B" -o "$TMP/out" write $n ;;
	lttng) lttng_run $n ;;
	esac 2>"$TMP/$name.err" | grep "^$kind " || true
}

if ! pgrep -x lttng-sessiond >/dev/null; then
	taskset -c $TCPU lttng-sessiond --daemonize
	SESSIOND_PID=$(cat /var/run/lttng/lttng-sessiond.pid)
fi

declare -A cost lost bad
for r in $(seq "$ROUNDS"); do
	# This round's detached times: what its attached runs are compared with.
	declare -A base=()
	for k in empty region region_nop1 region_runtime region_long intmax timer lttng; do
		base[$k]=$(field ns "$(taskset -c $PCPU "$B" $k "$ATTACHED_ITERS")")
	done
	base[write]=${base[empty]}
	base[paced]=$(field ns "$(taskset -c $PCPU "$B" -s $SPIN region "$PACED_ITERS")")
	for name in $CONFIGS; do
		if [ "$name" = empty5busy ]; then
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
		cost[$name]+=" $(calc %.0f "($(field ns "$line") - ${base[$kind]}) / $ev")"
		case $name in
		tr2bpf_timer|tr2bpf_catrej)   # no record sent: only losses to check
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
	say "  round $r/$ROUNDS: $(for n in empty5 tr2bpf5 proto-tr2-lazy; do printf '%s %s ' $n "${cost[$n]##* }"; done)ns/event"
done

# bpftrace, once (it compiles its program for seconds): the same fields to
# a file, with its "Lost N events" lines in it.
say "  bpftrace"
BT_PROG="usdt:$B:trace2:region_enter, usdt:$B:trace2:region_leave { printf(\"%s %s\\n\", str(arg4), str(arg5)); }"
base_region=$(field ns "$(taskset -c $PCPU "$B" region "$ATTACHED_ITERS")")
line=$(T taskset -c $TCPU bpftrace -o "$TMP/bt.out" -e "$BT_PROG" -c "$B -c $PCPU region $ATTACHED_ITERS" 2>"$TMP/bt.err" | grep '^region ' || true)
BT_EV=$(field events "$line")
BT_COST=$(calc %.0f "($(field ns "$line") - $base_region) / $BT_EV")
BT_PRINTED=$(grep -c '^index do_read_index' "$TMP/bt.out" || true)
BT_LOST=$(awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }' "$TMP/bt.out")

if [ -n "$SESSIOND_PID" ]; then kill "$SESSIOND_PID"; SESSIOND_PID=; fi

# The time inside the BPF programs themselves (kernel.bpf_stats_enabled:
# run_time_ns / run_cnt of probe_region_enter, 2 s of full-speed load), for
# tr2-bpf's program and the empty one; the uprobe around them is not in it.
bpf_stat() {
	sysctl -qw kernel.bpf_stats_enabled=1
	"$@" >/dev/null 2>&1 &
	local pid=$! v=""
	sleep 1.5
	v=$(bpftool prog show 2>/dev/null | awk '/name probe_region_enter / { for (i = 1; i <= NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { if (c) printf "%.0f", t / c }')
	wait $pid 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled=0
	echo "${v:-?}"
}
STAT_TR2=$(bpf_stat T taskset -c $TCPU "$TR2BPF" --probe-nop=5 --perf=/dev/null -- "$B" -c $PCPU region 3s)
STAT_SUM=$(bpf_stat T taskset -c $TCPU "$TR2BPF" --probe-nop=5 --summary -- "$B" -c $PCPU region 3s)
STAT_EMPTY=$(bpf_stat T taskset -c $TCPU "$ATT" "$BIN/empty.bpf.o" -- "$B" -S -c $PCPU region 3s)
STAT_ARGS=$(bpf_stat T taskset -c $TCPU "$ATT" "$BIN/proto-args.bpf.o" -- "$B" -S -c $PCPU region 3s)
STAT_HDR=$(bpf_stat T taskset -c $TCPU "$ATT" "$BIN/proto-hdr-lazy.bpf.o" -- "$B" -S -c $PCPU region 3s)
say "  inside the BPF program per hit: tr2-bpf $STAT_TR2 ns, --summary $STAT_SUM ns, empty program $STAT_EMPTY ns, proto-args $STAT_ARGS ns, proto-hdr-lazy $STAT_HDR ns"


# med NAME, rng NAME: a configuration's median and range over the rounds.
med() { if [ -n "${cost[$1]:-}" ]; then median ${cost[$1]}; else echo "failed"; fi; }
rng() { if [ -n "${cost[$1]:-}" ]; then range ${cost[$1]}; fi; }
lostmed() { if [ -n "${lost[$1]:-}" ]; then median ${lost[$1]}; fi; }
check() { [ -z "${bad[$1]:-}" ] && echo "yes" || echo "**no**:${bad[$1]}"; }

# ---------------------------------------------------------------------------
say "3/6 throughput: one producer for 5 s, then two producers into a 64K ring"
rm -f "$TMP/tp.perf"
/usr/bin/time -v -o "$TMP/time.txt" timeout -k 5 60 taskset -c $TCPU "$TR2BPF" --probe-nop=5 -v --perf="$TMP/tp.perf" -- \
	"$B" -c $PCPU region 5s >"$TMP/tp.out" 2>"$TMP/tp.err" &
TIMEPID=$!
# While it runs: the BPF memory tr2-bpf holds, map by map, from its fds.
sleep 2
TPID=$(pgrep -P "$(pgrep -P $TIMEPID -x timeout)" -x tr2-bpf || true)
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
T "$TR2BPF" --probe-nop=5 --ring-buffer=64K --perf="$TMP/tp2.perf" -- "$B" -t 2 region 2s >"$TMP/tp2.out" 2>"$TMP/tp2.err" || true
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
timeout -k 5 60 taskset -c $TCPU "$TR2BPF" --probe-nop=5 --perf="$TMP/prof.perf" -- "$B" -c $PCPU region 3s >/dev/null 2>&1 &
PROFPID=$!
sleep 0.5
perf record -q -F 1999 -o "$TMP/perf.data" -p "$(pgrep -P $PROFPID -x tr2-bpf)" -- sleep 2 >/dev/null 2>&1 || true
wait $PROFPID || true
perf report -i "$TMP/perf.data" --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' >"$TMP/profile.all" || true
head -12 "$TMP/profile.all" >"$TMP/profile.txt"
grep -F '[.]' "$TMP/profile.all" | head -8 >"$TMP/profile.user" || true
rm -f "$TMP"/*.perf

# ---------------------------------------------------------------------------
# shellcheck source=bench/fmt.sh
. "$(dirname "$0")/fmt.sh"

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
say "6/6 writing $OUT"
met() { awk "BEGIN { exit !($1) }" && echo "met" || echo "**not met**"; }
why() { awk "BEGIN { exit !($1) }" || echo "$2"; }   # why CONDITION REASON: REASON unless met
ratio=$(calc %.2f "$(med tr2bpf5) / $(med empty5)")
ratio_paced=$(calc %.2f "$(med tr2bpf5@paced) / $(med empty5@paced)")
ratio_sum=$(calc %.2f "$(med tr2bpf_sum) / $(med empty5)")
ratio_cat=$(calc %.2f "$(med tr2bpf_catrej) / $(med empty5)")
det_delta=$(calc %.2f "$DET_REGION - $DET_EMPTY")
tp_check=$([ "$((TP_N + TP_M))" = "$TP_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP_N + TP_M)))")
tp2_check=$([ "$((TP2_N + TP2_M))" = "$TP2_PRODUCED" ] && echo "yes" || echo "**no** (N+M = $((TP2_N + TP2_M)))")
fmt_min=$(printf '%s\n' "${fmt_rate[@]}" | sort -g | head -1)
EV=$((2 * ATTACHED_ITERS))
row() { echo "| $1 | $2 | $(med "$3") | $(rng "$3") | $4 |"; }

{
cat <<EOF
# Benchmarks

What tr2's probes cost a program, detached and attached, next to the alternatives: an
empty loop, LTTng-UST, an empty BPF program (the kernel's floor), bpftrace, and git's own
in-process Trace2 (format and \`write(2)\` each event); tr2-bpf's throughput and memory;
tr2-fmt's speed. Every figure below comes from one run of \`make bench\` (\`bench/run.sh\`,
3 to 4 minutes, as root) on this machine:

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- kernel: $(uname -r) ($(grep -q ' arch_uprobe_optimize$' /proc/kallsyms && echo "has arch_uprobe_optimize: a uprobe on a 5-byte nop becomes a call" || echo "no arch_uprobe_optimize: a uprobe on a 5-byte nop is single-stepped"))
- CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), nproc $(nproc)$(grep -q hypervisor /proc/cpuinfo && echo " (a VM: figures move by tens of percent from run to run)")
- tree: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo " with local changes")

How to run: \`make bench\` (root; the packages of \`scripts/install-deps.sh --bench\`). It
builds \`build/bench/\` and rewrites this file. The pieces: \`bench/tr2bench.c\` (the loops),
\`bench/bpf_attach.c\` with \`bench/empty.bpf.c\` and \`bench/proto.bpf.c\` (BPF programs
attached by tr2-bpf's own attach code), \`bench/sites.c\` (code size), \`bench/run.sh\`.

Method: \`tr2bench KIND COUNT\` runs COUNT iterations of a loop and times the loop alone,
in CPU time of its thread (user and kernel, where the BPF programs run), so that other
processes on the CPU do not count.
\`region\`: one \`trace2_region_enter\` + \`trace2_region_leave\` pair per iteration (category
"index", label "do_read_index"). Every loop body ends in the same
\`asm volatile("" ::: "memory")\`, the empty loop's too. The producer is pinned to CPU
$PCPU, tracers to CPU $TCPU. Attached cost per event = (loop time attached − loop time
detached) / events. Detached: the fastest of $DETACHED_ROUNDS runs of $DETACHED_ITERS
iterations (the least disturbed by the VM). Attached: $ROUNDS rounds of $ATTACHED_ITERS pairs ($EV events) per
configuration, interleaved; median and range (bpftrace: one run).

## 1. Detached: what an idle probe costs

| loop body (per iteration) | ns per iteration | above the empty loop, ns | per call, ns |
| --- | ---: | ---: | ---: |
| empty loop | $DET_EMPTY | | |
| \`trace2_region_enter\` + \`trace2_region_leave\` (trace2.h: \`nop; nop5\`) | $DET_REGION | $det_delta | $(calc %.2f "($DET_REGION - $DET_EMPTY) / 2") |
| the same probes as stock \`<sys/sdt.h>\` \`STAP_PROBE7\` (1-byte nop), same args and semaphores | $DET_NOP1 | $(calc %.2f "$DET_NOP1 - $DET_EMPTY") | $(calc %.2f "($DET_NOP1 - $DET_EMPTY) / 2") |
| two disabled LTTng-UST tracepoints, same fields, no session | $DET_LTTNG | $(calc %.2f "$DET_LTTNG - $DET_EMPTY") | $(calc %.2f "($DET_LTTNG - $DET_EMPTY) / 2") |

A not-taken semaphore test runs alongside the loop's own instructions: differences of a
tenth of a nanosecond either way are noise. The bytes at the probe sites: \`$INSN_NOP5\`
(trace2.h: \`nop; nop5\`, the note names the 1-byte nop; tr2-bpf attaches to the 5-byte nop
on kernels that optimize it, as this one does, and bpftrace or libbpf's
\`bpf_program__attach_usdt\` take the 1-byte nop) and \`$INSN_NOP1\` (stock \`<sys/sdt.h>\`).

Code each call site adds (gcc -O2, 100 \`region_enter\` call sites in one function, minus
the same function without them). "Fall-through" is the path executed while detached (load
the semaphore or state word, test, branch); "all text" adds the out-of-line block that
builds the arguments and holds the probe; the USDT note is in the file, never loaded:

| call site | fall-through bytes | all text bytes | \`.note.stapsdt\` bytes |
| --- | ---: | ---: | ---: |
| \`trace2_region_enter\` (\`nop; nop5\`) | $HOT_tr2 | $SZ_tr2 | $NOTE_tr2 |
| stock \`<sys/sdt.h>\` probe (1-byte nop) | $HOT_nop1 | $SZ_nop1 | $NOTE_nop1 |
| LTTng-UST tracepoint | $HOT_lttng | $SZ_lttng | $NOTE_lttng |

## 2. Attached: what each event costs the program

Full speed: the loop as fast as it goes, $EV events per run. tr2-bpf runs with
\`--probe-nop=5\` here, the choice its default makes for a process it attaches to with \`-p\`
and for \`-- CMD\`'s own program (objects mapped later get the 1-byte nop: section 7 says why).

| tracer | probe site | ns per event | range | events lost (median) |
| --- | --- | ---: | --- | --- |
$(row "empty BPF program (\`bench/empty.bpf.c\`): the floor" "5-byte nop" empty5 "")
$(row "empty BPF program, CPU $TCPU kept busy by a shell loop" "5-byte nop" empty5busy "")
$(row "empty BPF program" "1-byte nop" empty1 "")
$(row "\`tr2-bpf --perf=FILE\`" "5-byte nop" tr2bpf5 "$(lostmed tr2bpf5)")
$(row "\`tr2-bpf --perf=FILE\`" "1-byte nop" tr2bpf1 "$(lostmed tr2bpf1)")
| bpftrace $(bpftrace --version | awk '{ print $2 }'), \`printf("%s %s\\n", str(category), str(label))\` to a file | 1-byte nop of trace2.h's pair (the note's address) | $BT_COST | one run | $BT_LOST ($BT_PRINTED printed) |
$(row "LTTng-UST, session enabled, files in /tmp" "none" lttng "$(lostmed lttng) discarded")
$(row "in-process: format a PERF line and \`write(2)\` it, as git does" "none" write "")

tr2-bpf / empty program at full speed: **${ratio}x**$( [ "$(lostmed tr2bpf5)" = 0 ] &&
echo " (tr2-bpf lost no event)." ||
echo "; tr2-bpf dropped events, and a dropped event
costs the producer less than a delivered one, which flatters this ratio." ) Paced instead (after each pair, $SPIN
iterations of the empty loop, a few microseconds: the consumer keeps up and sleeps
between events, as with a real program; each pair timed by itself), $PACED_ITERS pairs per run:

| tracer | probe site | ns per event | range | events lost (median) |
| --- | --- | ---: | --- | --- |
$(row "empty BPF program" "5-byte nop" empty5@paced "")
$(row "\`tr2-bpf --perf=FILE\`" "5-byte nop" tr2bpf5@paced "$(lostmed tr2bpf5@paced)")
$(row "tr2.bpf.c's path, consumer woken per record (\`proto-tr2\`, below)" "5-byte nop" proto-tr2@paced "")
$(row "the same, lazy wakeup (\`proto-tr2-lazy\`)" "5-byte nop" proto-tr2-lazy@paced "")

tr2-bpf / empty program, paced: **${ratio_paced}x**. Events lost are M of tr2-bpf's
summary line \`tr2-bpf: N events, M lost\`; N + M matched the events produced in every
tr2-bpf run: $(check tr2bpf5), $(check tr2bpf1), $(check tr2bpf_runtime), $(check tr2bpf_long), $(check tr2bpf_intmax), $(check tr2bpf5@paced).

### Where tr2-bpf's BPF-side cost goes

Time spent inside the BPF program per hit (\`kernel.bpf_stats_enabled\`, run_time_ns /
run_cnt of \`probe_region_enter\` over 3 s at full speed; the uprobe's own cost is outside
it, and the statistics add two clock reads to each run): tr2-bpf's program **$STAT_TR2 ns**,
the empty program $STAT_EMPTY ns, \`proto-args\` $STAT_ARGS ns, \`proto-hdr-lazy\` $STAT_HDR ns: a bare
48-byte ring-buffer record costs $(calc %.0f "$STAT_HDR - $STAT_ARGS") ns inside the program.

\`bench/proto.bpf.c\` rebuilds the region program in parts, as tr2.bpf.c was before it
read its own arguments and sent literal strings once (libbpf's \`BPF_USDT\`, which reads
all seven arguments with \`bpf_usdt_arg()\`); bpf-attach's consumer counts records and
formats nothing. "woken per record" submits with flags 0, the
default: the kernel wakes the consumer (irq_work, then a cross-CPU wakeup) whenever it had
caught up. "lazy" submits with \`BPF_RB_NO_WAKEUP\` unless over 1 MiB is waiting (then
\`BPF_RB_FORCE_WAKEUP\`), as tr2.bpf.c does with its own threshold; the consumer polls
every 10 ms. Full speed, ns per event, 5-byte nop:

| program | woken per record | range | lazy wakeup | range |
| --- | ---: | --- | ---: | --- |
| empty program (the floor) | $(med empty5) | $(rng empty5) | | |
| \`proto-args\`: the seven arguments read with \`bpf_usdt_arg()\`, nothing sent | $(med proto-args) | $(rng proto-args) | | |
| \`proto-hdr\`: the arguments, and a 48-byte header (pid, tid, time) reserved and submitted | $(med proto-hdr) | $(rng proto-hdr) | $(med proto-hdr-lazy) | $(rng proto-hdr-lazy) |
| \`proto-tr2\`: tr2.bpf.c's path before: the arguments, traced-set and task-storage lookups, file + category + label into a per-CPU scratch record, \`bpf_ringbuf_output\` | $(med proto-tr2) | $(rng proto-tr2) | $(med proto-tr2-lazy) | $(rng proto-tr2-lazy) |
| \`proto-intern\`: the arguments, each string address sent once, then three pointers in the header | $(med proto-intern) | $(rng proto-intern) | $(med proto-intern-lazy) | $(rng proto-intern-lazy) |

### Summary mode and the category filter

\`tr2-bpf --summary\` alone aggregates each region pair in BPF (count, sum, min, max,
log2 histogram per process and label) and sends no record; \`--category=other\` rejects
the loop's category "index" in BPF (a literal: its verdict is kept per thread). Same
rounds as above, full speed, 5-byte nop:

| configuration | ns per event | range | ns per region pair | / empty program | events lost (median) |
| --- | ---: | --- | ---: | ---: | ---: |
| empty BPF program: the floor | $(med empty5) | $(rng empty5) | $(calc %.0f "2 * $(med empty5)") | 1.00x | |
| \`tr2-bpf --summary\` (no stream) | $(med tr2bpf_sum) | $(rng tr2bpf_sum) | $(calc %.0f "2 * $(med tr2bpf_sum)") | ${ratio_sum}x | $(lostmed tr2bpf_sum) |
| \`tr2-bpf --category=other --perf=FILE\`: every event rejected | $(med tr2bpf_catrej) | $(rng tr2bpf_catrej) | $(calc %.0f "2 * $(med tr2bpf_catrej)") | ${ratio_cat}x | $(lostmed tr2bpf_catrej) |
| \`tr2-bpf --perf=FILE\`, for comparison | $(med tr2bpf5) | $(rng tr2bpf5) | $(calc %.0f "2 * $(med tr2bpf5)") | ${ratio}x | $(lostmed tr2bpf5) |

In the \`--summary\` runs N + M of the summary line (N: aggregated events) matched the events
produced: $(check tr2bpf_sum). Inside the program (bpf_stats, as above): \`--summary\`
**$STAT_SUM ns** per \`probe_region_enter\` hit, against $STAT_TR2 ns sending records and
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
is that earlier path). ns per event at full speed, 5-byte nop (medians; tr2-bpf's lost
counts in section 2's sense):

| probe | tr2-bpf | range | tr2-bpf lost (median) |
| --- | ---: | --- | ---: |
| \`region_enter\`/\`leave\`, literals "index" / "do_read_index": sent once | $(med tr2bpf5) | $(rng tr2bpf5) | $(lostmed tr2bpf5) |
| \`region_enter\`/\`leave\`, the same 5 + 13 bytes built at run time: read at every hit | $(med tr2bpf_runtime) | $(rng tr2bpf_runtime) | $(lostmed tr2bpf_runtime) |
| \`region_enter\`/\`leave\`, 200-byte category and label built at run time | $(med tr2bpf_long) | $(rng tr2bpf_long) | $(lostmed tr2bpf_long) |
| \`data_intmax\` | $(med tr2bpf_intmax) | $(rng tr2bpf_intmax) | $(lostmed tr2bpf_intmax) |
| \`trace2_timer_start\` / \`trace2_timer_stop\` (per call; summed in BPF, no ring-buffer record) | $(med tr2bpf_timer) | $(rng tr2bpf_timer) | $(lostmed tr2bpf_timer) |

Timers and counters are summed per thread in a BPF hash map: a start or stop costs a
map update, not a record (before this, each sent one, like \`data_intmax\` above); the
sums reach tr2-bpf once, at the thread's \`thread_exit\` or \`atexit\`.

The empty program, which reads nothing, costs the same for every probe: $(med empty5) ns.

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

## Goals

| goal | measured | | why not |
| --- | --- | --- | --- |
| detached pair within 0.5 ns of the empty loop | ${det_delta} ns | $(met "$det_delta <= 0.5") | $(why "$det_delta <= 0.5" "the semaphore load, test and branch cost more than half a nanosecond here") |
| tr2-bpf within 1.3x of the empty BPF program | ${ratio}x at full speed, ${ratio_paced}x paced | $(met "$ratio <= 1.3 && $ratio_paced <= 1.3") | $(why "$ratio <= 1.3 && $ratio_paced <= 1.3" "1.3x leaves $(calc %.0f "0.3 * $(med empty5)") ns above the floor (the uprobe itself); tr2-bpf adds $(calc %.0f "$(med tr2bpf5) - $(med empty5)") ns at full speed, $(calc %.0f "$(med tr2bpf5@paced) - $(med empty5@paced)") ns paced. Inside the program a hit takes $STAT_TR2 ns against $STAT_EMPTY for the empty one (bpf_stats), of which a bare ring-buffer record is $(calc %.0f "$STAT_HDR - $STAT_ARGS") ns by itself (bpf_stats of \`proto-hdr-lazy\` minus \`proto-args\`: reserve, fill and submit 48 bytes); at full speed the consumer, busy on this VM's other vCPU, also contends with the producer for the ring's cache lines. No design that sends a record per event fits in 1.3x at full speed here; events that send none, timers and counters (section 4), come closest")) |
| \`--summary\` and a rejecting \`--category\` within 1.3x of the empty program | ${ratio_sum}x, ${ratio_cat}x at full speed | $(met "$ratio_sum <= 1.3 && $ratio_cat <= 1.3") | $(why "$ratio_sum <= 1.3 && $ratio_cat <= 1.3" "1.3x leaves $(calc %.0f "0.3 * $(med empty5)") ns above the floor per event; \`--summary\` adds $(calc %.0f "$(med tr2bpf_sum) - $(med empty5)") ns, the rejecting filter $(calc %.0f "$(med tr2bpf_catrej) - $(med empty5)") ns: the USDT spec lookup and register copy every tr2.bpf.c program makes, the task-storage lookup, and for \`--summary\` finding the aggregate in its hash map at region_enter and again at region_leave ($STAT_SUM ns inside the program against $STAT_EMPTY)") |
| throughput: N + M = produced, exactly | 1 producer: $tp_check; 2 producers, 64K ring: $tp2_check | $([ "$tp_check$tp2_check" = yesyes ] && echo met || echo "**not met**") | $([ "$tp_check$tp2_check" = yesyes ] || echo "tr2-bpf's lost count does not match what was dropped") |
| tr2-fmt 10^6 lines/s | slowest format ${fmt_min} lines/s | $(met "$fmt_min >= 1000000") | $(why "$fmt_min >= 1000000" "reading the JSON is $CG_PARSE% of tr2-fmt's instructions") |

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
} >"$OUT"
# Section 7, workload shapes: TR2_BEFORE=PATH adds a tr2-bpf to compare with.
say "and section 7, workload shapes (bench/shapes.sh)"
"$(dirname "$0")/shapes.sh" "$BUILD" "${TR2_BEFORE:-}" >>"$OUT"
say "done: $OUT"
