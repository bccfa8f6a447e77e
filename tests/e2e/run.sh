#!/usr/bin/env bash
# End-to-end tests: trace real programs with tr2-bpf, both ways (-- CMD and
# -p PID), and compare whole output lines with tests/e2e/expected/ after
# masking only times, pids and sids (tests/e2e/mask.py, which also parses
# every EVENT line as JSON).  Needs root and BPF; says so and skips without.
#
#   tests/e2e/run.sh            run all
#   tests/e2e/run.sh --update   rewrite the expected files from this run
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}  # the sanitizer run points it at its own build
BPF=$B/tr2-bpf
P=$B/tests/progs
EXP=tests/e2e/expected
MASK="python3 tests/e2e/mask.py"
UPDATE=${1:-}
T=$(mktemp -d /tmp/tr2-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. tests/lib.sh

# masked FMT FILE: the masked trace, or a failed test when it does not parse;
# the build directory reads as build/ (the sanitizer run uses its own).
masked() { $MASK "$1" < "$2" > "$T/masked" && sed "s|$B/|build/|g" "$T/masked"; }

if [ "$(id -u)" != 0 ]; then
	echo "e2e: SKIP: not root; the end-to-end tests load BPF programs"
	echo "e2e: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! out=$($BPF -- /bin/true 2>&1); then
	# Skip where the kernel offers no BPF; a program of ours that the
	# verifier refuses is a failure, not a skip.
	case "$out" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*)
		echo "e2e: SKIP: BPF unavailable here: $out"
		echo "e2e: 0 passed, 0 failed, 1 skipped"
		exit 0;;
	esac
	echo "FAIL tr2-bpf cannot trace /bin/true: $out"
	echo "e2e: 0 passed, 1 failed"
	exit 1
fi

# run_pid OUT_PREFIX PROG [ARGS...]: starts PROG --wait-stdin, attaches
# tr2-bpf -p with every format, lets PROG go on, waits for both.
run_pid() {
	local out=$1; shift
	rm -f "$T/fifo"; mkfifo "$T/fifo"
	exec 7<>"$T/fifo"
	"$@" --wait-stdin <&7 > "$T/prog.out" &
	local prog=$!
	for _ in $(seq 100); do grep -q waiting "$T/prog.out" 2>/dev/null && break; sleep 0.05; done
	$BPF --normal="$out.n" --perf="$out.p" --event="$out.e" --event-nesting=10 -p $prog 2> "$out.err" &
	local tracer=$!
	for _ in $(seq 100); do grep -q "tracing process" "$out.err" 2>/dev/null && break; sleep 0.05; done
	echo go >&7
	wait $prog; echo $? > "$out.prog-status"
	wait $tracer; echo $? > "$out.status"
	exec 7>&-
}

# --- every message group, run traced from the first event -------------
$BPF --normal="$T/a.n" --perf="$T/a.p" --event="$T/a.e" --event-nesting=10 --chrome="$T/a.c" -- $P/tr2_allapi \
	2> "$T/a.err"
expect_eq "allapi -- CMD: exit status is CMD's" 3 $?
expect_eq "allapi -- CMD: summary line" "tr2-bpf: 49 events, 0 lost" "$(tail -1 "$T/a.err")"
expect_eq "allapi -- CMD: one EVENT line per event" 49 "$(wc -l < "$T/a.e")"
for f in normal:n perf:p event:e; do
	masked ${f%:*} "$T/a.${f#*:}" > "$T/a.${f#*:}.m" && same "allapi -- CMD: ${f%:*}" "$EXP/allapi.${f%:*}" "$T/a.${f#*:}.m"
done
if out=$(python3 tests/e2e/chrome_check.py "$T/a.c" "$T/a.p"); then ok "allapi -- CMD: --chrome: $out"
else bad "allapi -- CMD: --chrome structure" "$out"; fi
expect_eq "allapi -- CMD: --chrome: a flow arrow from the child slice to the traced child" \
	'"name":"child","ph":"s" "name":"child","ph":"f" ' \
	"$(grep -o '"name":"child","ph":"[sf]"' "$T/a.c" | tr '\n' ' ')"

# --- the same program, attached mid-run with -p -----------------------
run_pid "$T/ap" $P/tr2_allapi
expect_eq "allapi -p: tracer exit status" 0 "$(cat "$T/ap.status")"
expect_eq "allapi -p: program exit status" 3 "$(cat "$T/ap.prog-status")"
expect_eq "allapi -p: summary line" "tr2-bpf: 34 events, 0 lost" "$(tail -1 "$T/ap.err")"
for f in normal:n perf:p event:e; do
	masked ${f%:*} "$T/ap.${f#*:}" > "$T/ap.${f#*:}.m" && same "allapi -p: ${f%:*}" "$EXP/allapi-pid.${f%:*}" "$T/ap.${f#*:}.m"
done
# tr2-fmt's --chrome of an attached run's EVENT lines, checked against its PERF
$B/tr2-fmt --chrome "$T/ap.e" > "$T/ap.c"
if out=$(python3 tests/e2e/chrome_check.py "$T/ap.c" "$T/ap.p"); then ok "allapi -p: tr2-fmt --chrome: $out"
else bad "allapi -p: tr2-fmt --chrome structure" "$out"; fi

# --- probes in shared objects, both ways ------------------------------
$BPF --perf="$T/s.p" -- $P/tr2_shared 2> "$T/s.err"
expect_eq "shared -- CMD: exit status" 0 $?
masked perf "$T/s.p" > "$T/s.p.m" && same "shared -- CMD: perf" "$EXP/shared.perf" "$T/s.p.m"
run_pid "$T/sp" $P/tr2_shared
masked perf "$T/sp.p" > "$T/sp.p.m" && same "shared -p: perf" "$EXP/shared-pid.perf" "$T/sp.p.m"

# --- hostile strings: valid JSON every time, exact lines ---------------
$BPF --perf="$T/h.p" --event="$T/h.e" --event-nesting=10 -- $P/tr2_allapi --hostile 2> "$T/h.err"
expect_eq "hostile: exit status" 0 $?
masked perf "$T/h.p" > "$T/h.p.m" && same "hostile: perf" "$EXP/hostile.perf" "$T/h.p.m"
masked event "$T/h.e" > "$T/h.e.m" && same "hostile: event (every line parsed as JSON)" "$EXP/hostile.event" "$T/h.e.m"

# --- BRIEF and the default EVENT nesting limit ------------------------
$BPF --brief --perf="$T/b.p" --normal="$T/b.n" -- $P/tr2_allapi 2>/dev/null
masked perf "$T/b.p" > "$T/b.p.m" && same "brief: perf" "$EXP/allapi-brief.perf" "$T/b.p.m"
masked normal "$T/b.n" > "$T/b.n.m" && same "brief: normal" "$EXP/allapi-brief.normal" "$T/b.n.m"
$BPF --event="$T/n2.e" -- $P/tr2_allapi 2>/dev/null
masked event "$T/n2.e" > "$T/n2.e.m" && same "event nesting 2 (default)" "$EXP/allapi-nesting2.event" "$T/n2.e.m"

# --- a directory destination: one file per process, named after its sid -
mkdir "$T/dir"
$BPF --event="$T/dir/" -- $P/tr2_allapi 2>/dev/null
names=$(ls "$T/dir" | sed -E 's/^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-H[0-9a-f]{8}-P[0-9a-f]{8}$/<sid>/' | tr '\n' ' ')
expect_eq "directory destination: one file per process, named after its sid" "<sid> <sid> " "$names"

# git's file limit: with 3 entries allowed ("." and ".." count, as in git),
# the second process finds the directory full and goes to the sentinel.
mkdir "$T/dir2"
$BPF --event="$T/dir2" --max-files=3 -- $P/tr2_allapi 2>/dev/null
names=$(ls "$T/dir2" | sed -E 's/^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-H[0-9a-f]{8}-P[0-9a-f]{8}$/<sid>/' | tr '\n' ' ')
expect_eq "directory destination: --max-files and git's sentinel" "<sid> git-trace2-discard " "$names"
expect_eq "directory destination: too_many_files event in the sentinel" "too_many_files" \
	"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[1])["event"])' "$T/dir2/git-trace2-discard")"

# af_unix: a real listening stream socket gets exactly the lines a file gets.
python3 - "$T/sock" "$T/sock.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(20)
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while b := c.recv(65536):
        f.write(b)
PY
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
$BPF --event="af_unix:stream:$T/sock" -- $P/tr2_shared 2>/dev/null
wait $!
masked event "$T/sock.out" | grep -v '"thread":"th' > "$T/sock.m"
$BPF --event="$T/sock.file" -- $P/tr2_shared 2>/dev/null
masked event "$T/sock.file" | grep -v '"thread":"th' > "$T/sockf.m"
same "af_unix:stream: destination" "$T/sockf.m" "$T/sock.m"

# --- the bundled example ------------------------------------------------
mkdir -p "$T/tree/a/b" "$T/tree/c"
for i in 1 2 3; do echo "file $i" > "$T/tree/a/f$i"; done
echo x > "$T/tree/a/b/g"; echo y > "$T/tree/c/h"
# --no-split: the split by scheduler state is tr2-bpf's own (EVENT has none:
# tests/e2e/sched.sh tests it), so that tr2-fmt draws the same
$BPF --no-split --perf="$T/x.p" --event="$T/x.e" --event-nesting=10 --chrome="$T/x.c" -- $B/examples/dirscan -j 2 \
	"$T/tree" > "$T/x.out" 2> "$T/x.err"
expect_eq "dirscan: exit status" 0 $?
expect_eq "dirscan: nothing lost" " 0 lost" "$(tail -1 "$T/x.err" | sed 's/.*,//')"
masked event "$T/x.e" > /dev/null && ok "dirscan: every EVENT line is JSON"
if out=$(python3 tests/e2e/chrome_check.py "$T/x.c" "$T/x.p"); then ok "dirscan: --chrome: $out"
else bad "dirscan: --chrome structure" "$out"; fi
# tr2-fmt --chrome of the EVENT lines: the same trace but for the ns that
# EVENT's "time" does not carry
nots() { sed -E 's/"(ts|dur)":[0-9.]+/"\1":T/g' "$1"; }
$B/tr2-fmt --chrome "$T/x.e" > "$T/x.fc"
nots "$T/x.c" > "$T/x.c.m"; nots "$T/x.fc" > "$T/x.fc.m"
same "dirscan: tr2-fmt --chrome of tr2-bpf --event = tr2-bpf --chrome (times aside)" "$T/x.c.m" "$T/x.fc.m"
grep -E '\| main +\| (version|start|cmd_name|exit|atexit) ' "$T/x.p" | masked perf /dev/stdin |
	sed "s|$T|TMP|g" > "$T/x.main.m"
same "dirscan: main thread's command lines" "$EXP/dirscan-main.perf" "$T/x.main.m"

# --- make install, then build and trace a program as a user would ---------
make -s install PREFIX="$T/pfx" > /dev/null
cat > "$T/app.c" <<'C'
#include <trace2.h>
int main(int argc, const char **argv)
{
	trace2_initialize();
	trace2_cmd_start(argv);
	trace2_region_enter("app", "work", 0);
	trace2_data_intmax("app", 0, "argc", argc);
	trace2_region_leave("app", "work", 0);
	return trace2_cmd_exit(0);
}
C
export PKG_CONFIG_PATH="$T/pfx/lib/pkgconfig"
cc ${TR2_SAN_FLAGS:-} -o "$T/app" "$T/app.c" $(pkg-config --cflags --libs tr2)
LD_LIBRARY_PATH="$T/pfx/lib" "$T/pfx/bin/tr2-bpf" --brief --perf="$T/app.p" -- "$T/app" 2> "$T/app.err"
expect_eq "installed: program built with pkg-config, traced by the installed tr2-bpf" \
	"version|start|region_enter|data|region_leave|exit|atexit|" \
	"$(awk -F' *[|] *' '{printf "%s|", $3}' "$T/app.p")"
expect_eq "installed: atexit comes from the installed libtr2.so" "tr2-bpf: 7 events, 0 lost" "$(cat "$T/app.err")"
unset PKG_CONFIG_PATH

# --- errors: one line, non-zero status ------------------------------------
err() { # NAME WANT_STATUS WANT_LINE CMD...
	local name=$1 want_status=$2 want=$3; shift 3
	"$@" > /dev/null 2> "$T/err"
	local st=$?
	expect_eq "$name: status" "$want_status" "$st"
	expect_eq "$name: message" "$want" "$(cat "$T/err")"
}
err "no such PID" 2 "tr2-bpf: no such process: 999999999" $BPF -p 999999999
sleep 5 & sp=$!
err "PID without probes" 2 "tr2-bpf: no trace2 probes in process $sp (its executable and shared objects)" $BPF -p $sp
kill $sp
err "bad PID" 2 "tr2-bpf: bad PID 'abc'" $BPF -p abc
err "relative DEST" 2 "tr2-bpf: invalid destination 'relative/x': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path" $BPF --perf=relative/x -- /bin/true
err "nothing to trace" 2 "tr2-bpf: nothing to trace: give -p PID, -- CMD or -a (see --help)" $BPF
err "--event-nesting=0, as tr2-fmt and git refuse it" 2 \
	"tr2-bpf: bad --event-nesting '0': want a number of levels, 1 or more" $BPF --event-nesting=0 -- /bin/true
expect_eq "--version, -V" "tr2-bpf 0.1.0|tr2-bpf 0.1.0" "$($BPF --version)|$($BPF -V)"
$BPF -- /nonexistent/program > /dev/null 2> "$T/err"
expect_eq "missing CMD: status 127" 127 $?
expect_eq "missing CMD: message, then the summary" "tr2-bpf: cannot run '/nonexistent/program': No such file or directory
tr2-bpf: 0 events, 0 lost" "$(cat "$T/err")"
touch "$T/notexec"
$BPF -- "$T/notexec" > /dev/null 2> "$T/err"
expect_eq "CMD not executable: status 126" 126 $?
expect_eq "CMD not executable: message, then the summary" "tr2-bpf: cannot run '$T/notexec': Permission denied
tr2-bpf: 0 events, 0 lost" "$(cat "$T/err")"
$BPF -- sh -c 'exit 7' > /dev/null 2> "$T/err"
expect_eq "CMD without probes: its status" 7 $?
expect_eq "CMD without probes: says so, then the summary" "tr2-bpf: no trace2 probes in 'sh' or any process it started
tr2-bpf: 0 events, 0 lost" "$(cat "$T/err")"
$BPF -- sh -c 'true | cat; exit 3' > /dev/null 2> "$T/err"
expect_eq "descendants without probes: CMD's status" 3 $?
expect_eq "descendants without probes: says so, then the summary" "tr2-bpf: no trace2 probes in 'sh' or any process it started
tr2-bpf: 0 events, 0 lost" "$(cat "$T/err")"
$BPF --perf=/dev/null -- sh -c "$P/tr2_shared > /dev/null" 2> "$T/err"
expect_eq "a descendant with probes: only the summary" "tr2-bpf: N events, 0 lost" \
	"$(sed 's/: [1-9][0-9]* events/: N events/' "$T/err")"

# --- a failure is never a success (issue 27, point 2) ------------------------
# A process tr2-bpf cannot trace: a copy of tr2_allapi whose tr2:batch probe
# names a register that does not exist (%qsi for %rsi), so that its
# arguments cannot be read.  Said in one line, counted in the summary line,
# and the status says so: 125 with -- CMD when CMD's own is 0, 1 with -a.
python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
i = d.index(b"tr2\x00batch\x00")
j = d.index(b"%rsi", i)
open(sys.argv[2], "wb").write(d[:j] + b"%qsi" + d[j + 4:])' $P/tr2_allapi "$T/badnote"
chmod +x "$T/badnote"
unreadable() { sed "s/: cannot read its arguments '.*'$/: cannot read its arguments/" "$1"; }
$BPF --perf=/dev/null -- sh -c "\"$T/badnote\" > /dev/null; exit 0" 2> "$T/err"
expect_eq "a process not traced, -- CMD: status 125 (CMD's is 0)" 125 $?
expect_eq "a process not traced, -- CMD: why, then the summary, which counts it" \
	"tr2-bpf: probe tr2:batch in $T/badnote: cannot read its arguments
tr2-bpf: 0 events, 0 lost, 1 process not traced" "$(unreadable "$T/err")"
cp "$T/badnote" "$T/badnote2"
$BPF -a --comm=badnote2 --perf=/dev/null 2> "$T/err" &
tracer=$!
for _ in $(seq 200); do grep -q "tracing every process" "$T/err" && break; sleep 0.05; done
"$T/badnote2" > /dev/null
kill -INT $tracer; wait $tracer
expect_eq "a process not traced, -a: status 1" 1 $?
expect_eq "a process not traced, -a: why, then the summary, which counts it" \
	"tr2-bpf: probe tr2:batch in $T/badnote2: cannot read its arguments
tr2-bpf: 0 events, 0 lost, 1 process not traced" "$(unreadable "$T/err" | grep -v 'tracing every process\|older trace2.h')"

# Destinations that cannot be written: every line they drop is counted, in
# their own line and in the summary line (N + M are still the events the
# program produced); status 125 (-- CMD) or 1 (-p).
$BPF --perf=/dev/full -- $P/tr2_shared > /dev/null 2> "$T/err"
expect_eq "--perf=/dev/full: status 125 (CMD's is 0)" 125 $?
expect_eq "--perf=/dev/full: the error, the lines dropped, the summary with them (one PERF line an event)" \
	"tr2-bpf: cannot write to '/dev/full': No space left on device
tr2-bpf: '/dev/full': 15 lines dropped
tr2-bpf: 15 events, 0 lost, 15 lines dropped" "$(cat "$T/err")"
$BPF --perf=/dev/full --event="$T/full.e" -- $P/tr2_shared > /dev/null 2> "$T/err"
expect_eq "--perf=/dev/full --event=FILE: status 125; the EVENT file whole (nesting 2: 14 lines)" "125 14" "$? $(wc -l < "$T/full.e")"
expect_eq "--perf=/dev/full --event=FILE: the summary counts the PERF lines" \
	"tr2-bpf: 15 events, 0 lost, 15 lines dropped" "$(tail -1 "$T/err")"
$BPF --event=/sys/ -- $P/tr2_shared > /dev/null 2> "$T/err"
expect_eq "--event=/sys/ (no file can be made there): status 125" 125 $?
expect_eq "--event=/sys/: the error, the lines dropped, the summary with them" \
	"tr2-bpf: cannot open '/sys/SID': Permission denied
tr2-bpf: '/sys/': 14 lines of 1 process dropped
tr2-bpf: 15 events, 0 lost, 14 lines dropped" "$(sed -E 's|/sys/[0-9T.Z]+-H[0-9a-f]+-P[0-9a-f]+|/sys/SID|' "$T/err")"
rm -f "$T/fifo"; mkfifo "$T/fifo"
exec 7<> "$T/fifo"
$P/tr2_allapi --wait-stdin <&7 > "$T/prog.out" &
prog=$!
for _ in $(seq 100); do grep -q waiting "$T/prog.out" 2>/dev/null && break; sleep 0.05; done
$BPF --perf=/dev/full -p $prog 2> "$T/err" &
tracer=$!
for _ in $(seq 100); do grep -q "tracing process" "$T/err" 2>/dev/null && break; sleep 0.05; done
echo go >&7
wait $prog
wait $tracer
expect_eq "-p with --perf=/dev/full: status 1" 1 $?
expect_eq "-p with --perf=/dev/full: the summary counts the lines dropped" "tr2-bpf: N events, 0 lost, N lines dropped" \
	"$(tail -1 "$T/err" | sed -E 's/[0-9]+ (events|lines)/N \1/g')"
exec 7>&-

# A destination that fails at once: the trace stops, and nothing is said of
# held processes (they were let go before the uprobes were closed).
$BPF --perf=/proc/version -- $P/tr2_shared > /dev/null 2> "$T/err"
expect_eq "--perf=/proc/version: the error, the count, the summary, nothing else" \
	"tr2-bpf: cannot write to '/proc/version': Input/output error
tr2-bpf: '/proc/version': 15 lines dropped
tr2-bpf: 15 events, 0 lost, 15 lines dropped" "$(cat "$T/err")"

# -p PID -p PID: one process.
rm -f "$T/fifo"; mkfifo "$T/fifo"
exec 7<> "$T/fifo"
$P/tr2_allapi --wait-stdin <&7 > "$T/prog.out" &
prog=$!
for _ in $(seq 100); do grep -q waiting "$T/prog.out" 2>/dev/null && break; sleep 0.05; done
$BPF --perf=/dev/null -p $prog -p $prog 2> "$T/err" &
tracer=$!
for _ in $(seq 100); do grep -q "tracing process" "$T/err" 2>/dev/null && break; sleep 0.05; done
echo go >&7
wait $prog
wait $tracer
expect_eq "-p PID -p PID: one process, traced once" "0|tr2-bpf: tracing process $prog|tr2-bpf: 34 events, 0 lost" \
	"$?|$(head -1 "$T/err" | sed 's/: [0-9]* probe sites in [0-9]* objects; Ctrl-C to stop//')|$(tail -1 "$T/err")"
exec 7>&-

# Filters that leave out everything: said, naming the filters.
$BPF --comm=nomatch --uid=0 -- $P/tr2_shared > /dev/null 2> "$T/err"
expect_eq "--comm that leaves out CMD: CMD's status" 0 $?
expect_eq "--comm that leaves out CMD: says so, naming the filters, then the summary" \
	"tr2-bpf: --comm=nomatch, --uid=0 left out '$P/tr2_shared' and every process it started
tr2-bpf: 0 events, 0 lost" "$(cat "$T/err")"
rm -f "$T/fifo"; mkfifo "$T/fifo"
exec 7<> "$T/fifo"
$P/tr2_allapi --wait-stdin <&7 > "$T/prog.out" &
prog=$!
for _ in $(seq 100); do grep -q waiting "$T/prog.out" 2>/dev/null && break; sleep 0.05; done
err "--uid that leaves out the -p process" 2 \
	"tr2-bpf: --uid=65534 leaves out process $prog ('tr2_allapi'): nothing to trace" $BPF --uid=65534 -p $prog
echo go >&7
wait $prog
exec 7>&-

# --- trace lines and the program's output apart; views one document ---------
# (issue 27, point 3) README's pipe, with a CMD that prints: CMD's standard
# output is tr2-bpf's standard error, since trace lines take the pipe.
$BPF --event --event-nesting=10 -- sh -c "echo the program\'s own line; exec $P/tr2_shared" 2> "$T/err" |
	$B/tr2-fmt --perf > "$T/pipe.p" 2> "$T/fmt.err"
expect_eq "tr2-bpf --event -- CMD | tr2-fmt --perf, CMD prints: both succeed, tr2-fmt says nothing" \
	"0 0 " "${PIPESTATUS[0]} ${PIPESTATUS[1]} $(cat "$T/fmt.err")"
masked perf "$T/pipe.p" > "$T/pipe.p.m" && same "... the PERF lines, as --perf writes them" "$EXP/shared.perf" "$T/pipe.p.m"
expect_eq "... CMD's line on tr2-bpf's standard error, the summary last" \
	"the program's own line|tr2-bpf: 15 events, 0 lost" "$(tr '\n' '|' < "$T/err" | sed 's/|$//')"
# --chrome and --folded to a file overwrite it, as perf record -o does: one
# document after any number of runs (tr2-bpf and tr2-fmt); --no-split: as
# many thread states in every run.
$BPF --no-split --chrome="$T/once.json" --folded="$T/once.folded" --event="$T/once.e" -- $P/tr2_shared \
	> /dev/null 2>&1
$B/tr2-fmt --chrome "$T/once.e" > "$T/fmt-once.json"
for i in 1 2; do
	$BPF --no-split --chrome="$T/twice.json" --folded="$T/twice.folded" -- $P/tr2_shared > /dev/null 2>&1
	$B/tr2-fmt --chrome="$T/fmt-twice.json" "$T/once.e"
	$B/tr2-fmt --folded="$T/fmt-twice.folded" "$T/once.e"
done
entries() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$1" 2>&1; }
expect_eq "--chrome=FILE twice: one JSON array, as many entries as one run's" \
	"$(entries "$T/once.json")" "$(entries "$T/twice.json")"
expect_eq "tr2-fmt --chrome=FILE twice: one JSON array, as many entries as one run's" \
	"$(entries "$T/fmt-once.json")" "$(entries "$T/fmt-twice.json")"
expect_eq "--folded=FILE twice: the stacks of one run" "$(wc -l < "$T/once.folded")" "$(wc -l < "$T/twice.folded")"
expect_eq "tr2-fmt --folded=FILE twice: the stacks of one run" "$(wc -l < "$T/once.folded")" \
	"$(wc -l < "$T/fmt-twice.folded")"

echo "e2e: $pass passed, $fail failed"
[ $fail = 0 ]
