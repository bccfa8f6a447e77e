#!/usr/bin/env bash
# End-to-end tests of the split of region time by scheduler state (on CPU,
# runnable, blocked in D, asleep in S): tests/progs/tr2_sched runs four
# regions of known shape (a spin, a nanosleep, O_DIRECT I/O with
# fdatasync, two threads sharing one CPU) and says what the kernel's own
# accounting of each thread saw (/proc/thread-self/schedstat); each figure
# of --summary, --summary-json and --chrome (region args and the state
# track) is within 10 % or 20 ms of it (tests/e2e/sched_check.py, which
# also allows for the wait after a wakeup that the kernel counts on the
# CPU), under -- CMD, -p (a region entered before the attach: split from
# the attach on) and -a; the Trace2 formats carry nothing of it; --no-split
# turns it off.  The I/O region needs a file on a block device: where the build
# directory's filesystem has none (a tmpfs, an overlay), its checks are
# skipped with the program's reason.  Needs root.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
PROG=$B/tests/progs/tr2_sched
CHECK="python3 tests/e2e/sched_check.py"
DIR=$(realpath "$B")   # the I/O region's file goes here
T=$(mktemp -d /tmp/tr2-sched.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skipped=0

. tests/lib.sh
need_bpf sched "$BPF"
# expect_ok NAME CMD...: CMD exits 0; its output is the failure's detail.
expect_ok() { local n=$1 out; shift; if out=$("$@" 2>&1); then ok "$n${out:+: $out}"; else bad "$n" "$out"; fi; }

# --- -- CMD: the summary, its table, chrome, and the formats ---------------
$BPF -v --summary --summary-json="$T/a.json" --chrome="$T/a.chrome" --perf="$T/a.perf" --event="$T/a.event" \
	--normal="$T/a.normal" -- $PROG "$DIR" > "$T/a.out" 2> "$T/a.err"
expect_eq "-- CMD: exit status, nothing lost" "0 0 lost" "$? $(tail -1 "$T/a.err" | sed 's/.*, //')"
expect_eq "-- CMD: no record dropped (-v says why)" "" "$(grep 'dropped a record' "$T/a.err" | sort | uniq -c)"
if skip=$(grep '^io: skipped: ' "$T/a.out"); then
	echo "SKIP the I/O region (blocked, D): ${skip#io: skipped: }"
	skipped=1
fi
expect_ok "-- CMD: --summary-json's split of each region against the program's" $CHECK summary "$T/a.out" "$T/a.json"
sed -n '/ tr2-bpf summary after /,$p' "$T/a.out" > "$T/a.table"
expect_ok "-- CMD: the split table shows the JSON's numbers, whole lines" \
	python3 tests/e2e/summary_check.py table "$T/a.json" "$T/a.table"
expect_ok "-- CMD: --chrome's region args and state tracks against the program's" \
	$CHECK chrome "$T/a.out" "$T/a.chrome"
expect_ok "-- CMD: --chrome's structure, and each split adds up to its slice" \
	python3 tests/e2e/chrome_check.py "$T/a.chrome" "$T/a.perf"
expect_eq "-- CMD: the split table's header" \
	"    count      total     on_cpu   runnable    blocked     asleep   on_cpu/call runnable/call  blocked/call   asleep/call  since   category label" \
	"$(grep -m1 ' on_cpu ' "$T/a.table")"
expect_eq "-- CMD: PERF, EVENT and NORMAL carry nothing of it" "0 0 0" \
	"$(for f in perf event normal; do grep -c 'on_cpu\|runnable\|split\|thread_state' "$T/a.$f"; done | xargs)"
expect_eq "-- CMD: EVENT's keys are git's" \
	"category,event,file,label,line,nesting,sid,t_rel,thread,time" \
	"$(grep '"region_leave"' "$T/a.event" | python3 -c '
import json, sys
print(",".join(sorted(set(k for l in sys.stdin for k in json.loads(l)))))')"

# --- --no-split: none of it -------------------------------------------------
$BPF --no-split --summary --summary-json="$T/n.json" --chrome="$T/n.chrome" -- $PROG "$DIR" > "$T/n.out" 2> "$T/n.err"
expect_eq "--no-split: no split table, no split in JSON, no state track or split args" "0 0 0" \
	"$(grep -c ' on_cpu ' "$T/n.out") $(grep -c '"split' "$T/n.json") $(grep -c 'thread_state\|on_cpu_us' "$T/n.chrome")"
expect_eq "--no-split: the regions all the same" "$(awk '$1 == "region" { print $2 }' "$T/n.out" | sort -u | xargs)" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted(r["label"] for p in json.load(open(sys.argv[1]))["processes"] for r in p["regions"])))' "$T/n.json")"

# --- -p: a region entered before the attach, split from the attach on -------
rm -f "$T/fifo"; mkfifo "$T/fifo"
exec 7<>"$T/fifo"
$PROG --wait-stdin "$DIR" <&7 > "$T/p.out" &
prog=$!
for _ in $(seq 100); do grep -q waiting "$T/p.out" 2>/dev/null && break; sleep 0.05; done
$BPF --summary --summary-json="$T/p.json" -p $prog > "$T/p.txt" 2> "$T/p.err" &
tracer=$!
for _ in $(seq 200); do grep -q "tracing process" "$T/p.err" 2>/dev/null && break; sleep 0.05; done
sleep 0.5   # sched:attach waits 0.5 s more, asleep, once traced
echo go >&7
wait $prog
wait $tracer
exec 7>&-
expect_ok "-p: sched:attach split from the attach on, at least the 0.5 s since, asleep" \
	$CHECK attach "$T/p.out" "$T/p.json" 0.5
expect_ok "-p: the other regions' split against the program's" $CHECK summary "$T/p.out" "$T/p.json"
expect_eq "-p: the table's row of sched:attach says since the attach" "1 attach sched attach" \
	"$(awk '$NF == "attach" && $(NF-2) == "attach" { print $1, $(NF-2), $(NF-1), $NF }' "$T/p.txt")"

# --- -a: the same figures ------------------------------------------------------
$BPF -a --comm=tr2_sched --summary --summary-by=process --summary-json="$T/h.json" > "$T/h.txt" 2> "$T/h.err" &
tracer=$!
for _ in $(seq 200); do grep -q "Ctrl-C" "$T/h.err" 2>/dev/null && break; sleep 0.05; done
$PROG "$DIR" > "$T/h.out"
sleep 0.3   # its last records
kill -INT $tracer
wait $tracer
expect_ok "-a: --summary-json's split against the program's" $CHECK summary "$T/h.out" "$T/h.json"

echo "sched: $pass passed, $fail failed, $skipped skipped"
[ $fail = 0 ]
