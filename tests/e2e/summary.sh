#!/usr/bin/env bash
# End-to-end tests of tr2-bpf --summary and --category (tests/progs/tr2_summary,
# whose counts are known): the summary's counts and sums against the PERF
# stream of the same run (-- CMD and -p PID), against the program's known
# counts, literal and run-time labels, several processes, per program
# (--summary-by), filters, regions open at attach and at exit, a full key
# space, --hist, INTERVAL, Ctrl-C.
# tests/e2e/summary_check.py does the comparing (python3's json).  Needs root.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
PROG=$B/tests/progs/tr2_summary
CHECK="python3 tests/e2e/summary_check.py"
T=$(mktemp -d /tmp/tr2-summary.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. tests/lib.sh
# expect_ok NAME CMD...: CMD exits 0; its output is the failure's detail.
expect_ok() { local n=$1 out; shift; if out=$("$@" 2>&1); then ok "$n"; else bad "$n" "$out"; fi; }

if [ "$(id -u)" != 0 ]; then
	echo "summary: SKIP: not root; the tests load BPF programs"
	echo "summary: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

N=30   # iterations of tr2_summary's loop

# The rows of one tr2_summary process that ran the loop N times with nothing
# filtered; $1 its name.  item-I: i % 3 == I; parity: i even or odd.
rows() {
	cat <<-END
	$1 region demo inner count=$((10 * N)) open=0 before=0
	$1 region demo item-0 count=10 open=0 before=0
	$1 region demo item-1 count=10 open=0 before=0
	$1 region demo item-2 count=10 open=0 before=0
	$1 region demo never_left count=0 open=1 before=0
	$1 region demo open_at_attach count=${2:-1} open=0 before=${3:-0}
	$1 region demo outer count=$N open=0 before=0
	$1 region other skipped count=$N open=0 before=0
	$1 data demo iteration count=$N sum=$((N * (N - 1) / 2)) min=0 max=$((N - 1)) last=$((N - 1))
	$1 data even parity count=15 sum=210 min=0 max=28 last=28
	$1 data odd parity count=15 sum=225 min=1 max=29 last=29
	END
}

# --- -- CMD, three processes, with a PERF stream: both agree ----------------
mkdir "$T/perf"
$BPF --summary --summary-json="$T/a.json" --perf="$T/perf/" -- $PROG --children 2 $N > "$T/a.txt" 2> "$T/a.err"
expect_eq "-- CMD with --perf: exit status" 0 $?
expect_eq "-- CMD with --perf: one JSON document (no INTERVAL)" 1 "$(wc -l < "$T/a.json")"
expect_eq "-- CMD with --perf: counts of the three processes" \
	"$(rows summary; rows child; rows child)" "$($CHECK counts "$T/a.json")"
expect_ok "-- CMD with --perf: counts, sums, min, max equal the PERF stream's" $CHECK perf "$T/a.json" "$T/perf"
expect_ok "-- CMD with --perf: the table shows the JSON's numbers, sorted by total" $CHECK table "$T/a.json" "$T/a.txt"
# The stream is unchanged: every event is in it (3 x (35 + 2 x 391 + 2 x 30 + 1)).
expect_eq "-- CMD with --perf: summary line" "tr2-bpf: $((3 * (35 + 782 + 60 + 1))) events, 0 lost" "$(tail -1 "$T/a.err")"

# --- --summary-by=program: the processes of one program added up -------------
# prog_rows NAME M: the rows of M tr2_summary processes named NAME added up,
# as the counts of summary_check.py show them, after the table's title.
prog_rows() {
	local m=$2
	cat <<-END
	program $1: $m process$([ "$m" = 1 ] || echo es)
	$1 region demo inner count=$((m * 10 * N)) open=0 before=0
	$1 region demo item-0 count=$((m * 10)) open=0 before=0
	$1 region demo item-1 count=$((m * 10)) open=0 before=0
	$1 region demo item-2 count=$((m * 10)) open=0 before=0
	$1 region demo never_left count=0 open=$m before=0
	$1 region demo open_at_attach count=$m open=0 before=0
	$1 region demo outer count=$((m * N)) open=0 before=0
	$1 region other skipped count=$((m * N)) open=0 before=0
	$1 data demo iteration count=$((m * N)) sum=$((m * N * (N - 1) / 2)) min=0 max=$((N - 1)) last=$((N - 1))
	$1 data even parity count=$((m * 15)) sum=$((m * 210)) min=0 max=28 last=28
	$1 data odd parity count=$((m * 15)) sum=$((m * 225)) min=1 max=29 last=29
	END
}
mkdir "$T/pperf"
$BPF --summary --summary-by=program --summary-json="$T/p.json" --perf="$T/pperf/" -- $PROG --children 2 $N \
	> "$T/p.txt" 2> "$T/p.err"
expect_eq "--summary-by=program: exit status" 0 $?
expect_eq "--summary-by=program: a table per program, the two children's added up" \
	"$(prog_rows child 2; prog_rows summary 1)" "$($CHECK counts "$T/p.json")"
expect_ok "--summary-by=program: counts, sums, min, max equal the PERF files of each program's processes" \
	$CHECK perf "$T/p.json" "$T/pperf"
expect_ok "--summary-by=program: the tables show the JSON's numbers, whole lines" $CHECK table "$T/p.json" "$T/p.txt"
expect_eq "--summary-by=program: the child program's title and data rows, whole lines" \
"program child: 2 processes
    count        sum        min        max       last  category key
       60        870          0         29         29  demo     iteration
       30        420          0         28         28  even     parity
       30        450          1         29         29  odd      parity" \
	"$(sed -n '/^program child: /,/^$/p' "$T/p.txt" | sed -n '1p; /count        sum/,/^$/p' | grep -v '^$')"
expect_eq "--summary-by=program: the same events as per process" \
	"tr2-bpf: $((3 * (35 + 782 + 60 + 1))) events, 0 lost" "$(tail -1 "$T/p.err")"
# With INTERVAL: a process that has ended is added into its program at the
# next table (and forgotten), the next one of that program adds to it.
$BPF --summary=0.1 --summary-by=program --summary-json="$T/r.json" -- \
	sh -c '"$0" "$1"; sleep 0.5; "$0" "$1"' $PROG $N > /dev/null 2> "$T/r.err"
expect_eq "--summary-by=program, INTERVAL: two processes one after the other, added up" \
	"$(prog_rows summary 2)" "$($CHECK counts "$T/r.json")"
expect_ok "--summary-by=program, INTERVAL: tables between them show the first alone, no count goes down" \
	python3 -c '
import json, sys
ds = [json.loads(l) for l in open(sys.argv[1])]
procs = [sum(p["processes"] for p in d["programs"]) for d in ds]
def n(d): return sum(r["count"] for p in d["programs"] for r in p["regions"] + p["data"])
assert 1 in procs and procs == sorted(procs) and procs[-1] == 2, procs
assert [n(d) for d in ds] == sorted(n(d) for d in ds), [n(d) for d in ds]
' "$T/r.json"
expect_eq "--summary-by=program, INTERVAL: summary line counts the ended processes' events" \
	"tr2-bpf: $((2 * (35 + 2 * (1 + 13 * N) + 1 + 2 * N))) events, 0 lost" "$(tail -1 "$T/r.err")"
$BPF --summary --summary-by=process -- $PROG --children 1 2 > "$T/q.txt" 2> "$T/q.err"
expect_eq "--summary-by=process: a table per process (the default)" "pid summary
pid child" "$(grep -E '^(pid|program) ' "$T/q.txt" | awk '{ print $1, $3 }')"

# --- --summary alone: no stream, regions send no record ---------------------
$BPF --summary --summary-json="$T/b.json" --hist -- $PROG $N > "$T/b.txt" 2> "$T/b.err"
expect_eq "--summary alone: counts" "$(rows summary)" "$($CHECK counts "$T/b.json")"
expect_ok "--summary alone, --hist: table and histograms show the JSON's numbers" $CHECK table "$T/b.json" "$T/b.txt"
# N: the 35 records still sent (version, start, cmd_name, 30 string data,
# exit, atexit) and the aggregated events (2 per closed region, 1 open, 60 values).
expect_eq "--summary alone: summary line counts aggregated events" \
	"tr2-bpf: $((35 + 2 * (1 + 13 * N) + 1 + 2 * N)) events, 0 lost" "$(tail -1 "$T/b.err")"
expect_eq "--summary alone: the histogram header is bcc's" \
	"     nsecs               : count    distribution" "$(grep -m1 distribution "$T/b.txt")"

# --- -p PID: a region open at the attach is left without a duration ---------
run_pid() {  # run_pid OUT TRACER-OPTIONS...: tr2_summary --wait-stdin N traced with -p
	local out=$1; shift
	rm -f "$T/fifo"; mkfifo "$T/fifo"
	exec 7<>"$T/fifo"
	$PROG --wait-stdin $N <&7 > "$T/prog.out" &
	local prog=$!
	for _ in $(seq 100); do grep -q waiting "$T/prog.out" 2>/dev/null && break; sleep 0.05; done
	$BPF "$@" -p $prog > "$out.txt" 2> "$out.err" &
	local tracer=$!
	for _ in $(seq 100); do grep -q "tracing process" "$out.err" 2>/dev/null && break; sleep 0.05; done
	echo go >&7
	wait $prog
	wait $tracer
	exec 7>&-
}
run_pid "$T/c" --summary --summary-json="$T/c.json" --perf="$T/c.perf"
# cmd_name came before the attach: the process is named after its comm.
expect_eq "-p: counts; open_at_attach left once, entered before the attach" \
	"$(rows tr2_summary 0 1)" "$($CHECK counts "$T/c.json")"
expect_ok "-p: counts, sums, min, max equal the PERF stream's" $CHECK perf "$T/c.json" "$T/c.perf"
expect_ok "-p: the table shows the JSON's numbers" $CHECK table "$T/c.json" "$T/c.txt"
expect_eq "-p: the summary line stays last on stderr" 1 "$(tail -1 "$T/c.err" | grep -c '^tr2-bpf: [0-9]* events, 0 lost$')"

# --- --category: in BPF, for the stream and the summary ---------------------
$BPF --summary --summary-json="$T/d.json" --perf="$T/d.perf" --category=demo,odd -- $PROG $N > "$T/d.txt" 2> "$T/d.err"
expect_eq "--category=demo,odd: summary rows" "$(rows summary | grep -E ' (demo|odd) ')" "$($CHECK counts "$T/d.json")"
expect_eq "--category=demo,odd: categories in the PERF stream" "$(printf '%s\n' '' demo odd)" \
	"$(awk -F'|' '{ gsub(/ /, "", $8); print $8 }' "$T/d.perf" | sort -u)"
expect_ok "--category=demo,odd: summary and PERF agree" $CHECK perf "$T/d.json" "$T/d.perf"
# A category built at run time ("even"), and the stream alone.
$BPF --perf="$T/e.perf" --category=even -- $PROG $N 2> "$T/e.err"
expect_eq "--category=even, stream only: its data lines" 15 "$(grep -c '| even  *| parity:' "$T/e.perf")"
expect_eq "--category=even, stream only: no region lines" 0 "$(grep -c '| region_' "$T/e.perf")"
expect_eq "--category=even, stream only: summary line" "tr2-bpf: 20 events, 0 lost" "$(tail -1 "$T/e.err")"

# --- a full key space: counted, not silent -----------------------------------
# Room for 3 keys: open_at_attach, outer, inner.  Not aggregated: per
# iteration item-I and skipped (enter and leave), iteration and parity, and
# never_left's enter: 6 N + 1.
$BPF --summary --summary-json="$T/f.json" --summary-keys=3 -- $PROG $N > "$T/f.txt" 2> "$T/f.err"
expect_eq "--summary-keys=3: JSON not_aggregated" "{'key_space_full': $((6 * N + 1)), 'too_deep': 0}" \
	"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["not_aggregated"])' "$T/f.json")"
expect_eq "--summary-keys=3: the table says so" \
	"not aggregated: $((6 * N + 1)) events (key space full: $((6 * N + 1)); regions nested deeper than 32: 0)" \
	"$(grep '^not aggregated' "$T/f.txt")"
expect_eq "--summary-keys=3: summary line counts them as lost" \
	"tr2-bpf: $((35 + 2 * (1 + 11 * N))) events, $((6 * N + 1)) lost" "$(tail -1 "$T/f.err")"

# --- deeper than the 32-level stack: counted --------------------------------
$BPF --summary --summary-json="$T/g.json" --category=deep -- $PROG --deep 1 > "$T/g.txt" 2> "$T/g.err"
expect_eq "--deep: 32 levels aggregated, 8 enters and 8 leaves not" \
	"summary region deep level count=32 open=0 before=0
{'key_space_full': 0, 'too_deep': 16}" \
	"$($CHECK counts "$T/g.json"; python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["not_aggregated"])' "$T/g.json")"

# --- INTERVAL: a table every 0.2 s, then the final one -----------------------
$BPF --summary=0.2 --summary-json="$T/h.json" -- $PROG --pause-us 30000 $N > "$T/h.txt" 2> "$T/h.err"
expect_ok "--summary=0.2: several documents, only the last final, counts never going down" python3 -c '
import json, sys
ds = [json.loads(l) for l in open(sys.argv[1])]
assert len(ds) >= 3, "%d documents" % len(ds)
assert [d["final"] for d in ds] == [False] * (len(ds) - 1) + [True], [d["final"] for d in ds]
def n(d): return sum(r["count"] for p in d["processes"] for r in p["regions"])
assert [n(d) for d in ds] == sorted(n(d) for d in ds), [n(d) for d in ds]
' "$T/h.json"
expect_ok "--summary=0.2: each table shows its document's numbers" $CHECK table "$T/h.json" "$T/h.txt"
expect_eq "--summary=0.2: final counts" "$(rows summary)" "$($CHECK counts "$T/h.json")"

# --- Ctrl-C: the final table, then the summary line ---------------------------
$BPF --summary --summary-json="$T/i.json" -- $PROG --pause-us 100000 1000 > "$T/i.txt" 2> "$T/i.err" &
tracer=$!
# As a terminal's Ctrl-C: SIGINT to tr2-bpf and to CMD, once CMD runs traced.
for _ in $(seq 200); do prog=$(pgrep -P $tracer -x tr2_summary) && break; sleep 0.05; done
sleep 0.5
kill -INT $tracer $prog
wait $tracer
expect_eq "Ctrl-C: one final document" "true" \
	"$(python3 -c 'import json,sys; print(str(json.loads(open(sys.argv[1]).read())["final"]).lower())' "$T/i.json")"
expect_ok "Ctrl-C: the table shows the JSON's numbers" $CHECK table "$T/i.json" "$T/i.txt"
expect_eq "Ctrl-C: the summary line is last on stderr" 1 "$(tail -1 "$T/i.err" | grep -c '^tr2-bpf: [0-9]* events, 0 lost$')"

# --- options ------------------------------------------------------------------
err_of() { local out; out=$("$@" 2>&1); echo "$out $?"; }   # its stderr and status
expect_eq "--hist without --summary: one line, status 2" \
	"tr2-bpf: --hist, --summary-json, --summary-keys and --summary-by need --summary 2" \
	"$(err_of $BPF --hist -- /bin/true)"
expect_eq "--category with a too long name" \
	"tr2-bpf: bad --category '$(printf 'x%.0s' $(seq 63))': names are at most 62 bytes 2" \
	"$(err_of $BPF --category="$(printf 'x%.0s' $(seq 63))" -- /bin/true)"
expect_eq "--summary=0: refused" "tr2-bpf: bad --summary interval '0': want seconds, from 0.01 to 86400 2" \
	"$(err_of $BPF --summary=0 -- /bin/true)"
expect_eq "--summary-by=cmd: refused" "tr2-bpf: bad --summary-by 'cmd': want process or program 2" \
	"$(err_of $BPF --summary --summary-by=cmd -- /bin/true)"
expect_eq "--summary-by without --summary: one line, status 2" \
	"tr2-bpf: --hist, --summary-json, --summary-keys and --summary-by need --summary 2" \
	"$(err_of $BPF --summary-by=program -- /bin/true)"

echo "summary: $pass passed, $fail failed"
[ $fail = 0 ]
