#!/usr/bin/env bash
# tr2-bpf -a among untrusted processes (issue 33): a process of another user
# (nobody here) may spoil its own trace, never another process's, the
# tracer's counts or its files.  Beside a victim (root), the hostile
# process claims the victim's sid, or a sid that names no file; writes
# `dropped` counts and call times the kernel refutes into its buffer.  And
# with no hostility: calls whose strings exceed a thread's buffer, in every
# mode; the modes of the files tr2-bpf creates.  Each tracer is narrowed to
# these programs (--comm), for the machine is shared.
# Needs root and BPF; says so and skips without.  make test-hostile.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
P=$(realpath $B/tests/progs)
T=$(mktemp -d /tmp/tr2-hostile.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
chmod 755 "$T"
pass=0 fail=0

. tests/lib.sh
need_bpf hostile "$BPF"

# a command run as nobody, its pid $! when run in the background
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
wait_for() {
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
# events FILE: its event names, one line; tr2's loss markers as "lost".
events() {
	python3 -c 'import json, sys
print(" ".join("lost" if e.get("category") == "tr2" else e["event"]
               for e in map(json.loads, open(sys.argv[1]))))' "$1"
}
# files_of DIR PID: the files in DIR of process PID (its sid ends in P<pid>).
files_of() { grep -l "\"sid\":\"[^\"]*P$(printf %08x "$2")\"" "$1"/* 2>/dev/null | wc -l; }
# want_victim N: the events of tr2_hostile victim N.
want_victim() {
	local s="version start" i
	for i in $(seq "$1"); do s="$s region_enter data region_leave"; done
	echo "$s exit atexit"
}
# start_tracer (tests/lib.sh), always with --comm=tr2_hostile: only its processes
stop_tracer() {
	sleep 0.3
	kill -INT $tracer
	wait $tracer
	tracer_status=$?
}

# ===== 1. a process claims another's sid: each has its own file ===========
start_tracer "$T/claim" --comm=tr2_hostile
$P/tr2_hostile victim 40 20 > /dev/null & victim=$!
wait_for <(ls "$T/claim") . ; sleep 0.1
sid=$(ls "$T/claim")
$NOBODY $P/tr2_hostile claim "$sid" 5 > /dev/null & claimant=$!
wait $victim $claimant
stop_tracer
expect_eq "a sid claimed by another process: the victim's file holds the victim's whole trace" \
	"$(want_victim 40)" "$(events "$T/claim/$sid")"
expect_eq "a sid claimed by another process: the claimant's lines in a file of their own, SID.1" \
	"version start data data data data data exit atexit" "$(events "$T/claim/$sid.1")"
expect_eq "a sid claimed by another process: two files" 2 "$(ls "$T/claim" | wc -l)"

# ===== 2. a sid that cannot name a file: a name made from it ==============
start_tracer "$T/names" --comm=tr2_hostile
$NOBODY $P/tr2_hostile claim "$(head -c 600 /dev/zero | tr '\0' s)" 2 > /dev/null
$NOBODY $P/tr2_hostile claim "../../etc/x" 2 > /dev/null
$NOBODY $P/tr2_hostile claim "$(printf 'a\tb')" 2 > /dev/null
stop_tracer
expect_eq "sids too long, with '/' or control characters: a file each, named sid-<hash> or by the last part" \
	"sid-################ sid-################ x" \
	"$(ls "$T/names" | sed 's/^sid-[0-9a-f]\{16\}$/sid-################/' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "sids that cannot name a file: nothing dropped, status 0" "tr2-bpf: 18 events, 0 lost 0" \
	"$(tail -1 "$T/tracer.err") $tracer_status"

# ===== 3. counts a process writes into its buffer are bounded ============
start_tracer "$T/counts" --comm=tr2_hostile
$P/tr2_hostile victim 20 20 > /dev/null & victim=$!
$NOBODY $P/tr2_hostile dropped huge > /dev/null & huge=$!
$NOBODY $P/tr2_hostile dropped back > /dev/null & back=$!
wait $victim $huge $back
stop_tracer
expect_eq "dropped counts of 2^63-1 and going back: the victim's whole trace, no loss marker" \
	"$(want_victim 20)" "$(events "$T/counts"/*P$(printf %08x $victim))"
got=$(tail -1 "$T/tracer.err")
expect_true() { local name=$1 detail=$2; shift 2; if "$@"; then ok "$name"; else bad "$name" "$detail"; fi; }
# each damaged copy its calls lost; a later call that names a literal the
# refused copy defined is lost too: at most the two processes' 14 events
expect_true "dropped counts a process wrote: refused, each a damaged buffer (1 to 4), at most their own events lost" \
	"$got" python3 -c 'import re, sys
m = re.fullmatch(r"tr2-bpf: \d+ events, (\d+) lost, (\d) damaged buffers?", sys.argv[1])
sys.exit(not (m and 1 <= int(m[2]) <= 4 and int(m[2]) <= int(m[1]) <= 14))' "$got"
for h in $huge $back; do
	expect_eq "dropped counts a process wrote: its own file, one ($h)" 1 "$(files_of "$T/counts" $h)"
done

# ===== 4. call times a process forges: clamped, one process ==============
start_tracer "$T/time" --comm=tr2_hostile
$NOBODY $P/tr2_hostile time > /dev/null & forger=$!
wait $forger
stop_tracer
expect_eq "calls dated a year and 76 years ahead: one file for the process, its events whole" \
	"1 version start data data data exit atexit" \
	"$(files_of "$T/time" $forger) $(events "$T/time"/*P$(printf %08x $forger))"
expect_eq "calls dated ahead: written at the time they were copied (this year)" "$(date -u +%Y)" \
	"$(python3 -c 'import json, sys
print(" ".join(sorted({json.loads(l)["time"][:4] for l in open(sys.argv[1])})))' "$T"/time/*)"

# ===== 4b. a flooding process loses its own calls, not the others' =======
start_tracer "$T/flood" --comm=tr2_hostile
$NOBODY $P/tr2_hostile flood 4 > "$T/flood.out" & flooder=$!
sleep 0.2
$P/tr2_hostile victim 100 20 > /dev/null & victim=$!
wait $victim $flooder
stop_tracer
expect_eq "beside a process flooding the ring buffer for 4 s: the victim's 304 events, whole, no loss marker" \
	"$(want_victim 100)" "$(events "$T/flood"/*P$(printf %08x $victim))"
# (its last calls may be among those it lost; losses learnt after its
# atexit go into a file of their own, SID.1)
expect_eq "the flooding process: version first, its losses marked in its file" \
	"version yes" "$(events "$(ls "$T"/flood/*P$(printf %08x $flooder))" |
	awk '{ print $1, (/ lost( |$)/ ? "yes" : "no") }')"

# ===== 5. strings beyond a thread's buffer: whole, in every mode =========
# Against the program's own EVENT target (git's lines) of the same run.
masked_big() { python3 tests/e2e/mask.py event < "$1" | grep -v '"event":"\(version\|start\)".*hostile-1.0\|tr2_hostile' ; }
$BPF --event="$T/big-cmd.ev" -- env GIT_TRACE2_EVENT="$T/big-cmd.own" $P/tr2_hostile big 2> "$T/big.err"
same "-- CMD: strings beyond the buffer: every line as the program's own EVENT target writes it" \
	<(masked_big "$T/big-cmd.own") <(masked_big "$T/big-cmd.ev")
expect_eq "-- CMD: strings beyond the buffer: nothing lost" "tr2-bpf: 10 events, 0 lost" "$(tail -1 "$T/big.err")"
rm -f "$T/big.fifo"; mkfifo "$T/big.fifo"
GIT_TRACE2_EVENT="$T/big-p.own" $P/tr2_hostile --wait-stdin big < "$T/big.fifo" > "$T/big-p.out" &
big=$!
exec {big_fd}> "$T/big.fifo"
wait_for "$T/big-p.out" waiting
$BPF --event="$T/big-p.ev" -p $big 2> "$T/big-p.err" &
bigtr=$!
wait_for "$T/big-p.err" "tracing process"
echo go >&$big_fd
exec {big_fd}>&-
wait $big $bigtr
same "-p: strings beyond the buffer: every line as the program's own EVENT target writes it" \
	<(masked_big "$T/big-p.own") <(masked_big "$T/big-p.ev")
start_tracer "$T/big-a" --comm=tr2_hostile
GIT_TRACE2_EVENT="$T/big-a.own" $P/tr2_hostile big
stop_tracer
same "-a: strings beyond the buffer: every line as the program's own EVENT target writes it" \
	<(masked_big "$T/big-a.own") <(masked_big "$T/big-a"/*)
expect_eq "-a: strings beyond the buffer: nothing lost" "tr2-bpf: 10 events, 0 lost" "$(tail -1 "$T/tracer.err")"

# ===== 6. the files tr2-bpf creates are root's ===========================
mode_of() { stat -c %a "$1"; }
expect_eq "a directory DEST's files: readable by their owner only" "600" \
	"$(mode_of "$(ls -d "$T"/time/* | head -1)")"
(umask 022; $BPF --perf="$T/modes.perf" --summary --summary-json="$T/modes.json" --record="$T/modes.rec" \
	-- $P/tr2_hostile victim 1 0 > /dev/null 2>&1)
expect_eq "--perf=FILE, --summary-json=FILE and --record=FILE: readable by their owner only" "600 600 600" \
	"$(mode_of "$T/modes.perf") $(mode_of "$T/modes.json") $(mode_of "$T/modes.rec")"
(umask 022; $BPF --perf="$T/given.perf" --file-mode=0644 -- $P/tr2_hostile victim 1 0 > /dev/null 2>&1)
expect_eq "--file-mode=0644: as given" "644" "$(mode_of "$T/given.perf")"
mkdir "$T/grouped" && chgrp nogroup "$T/grouped"
$BPF --event="$T/grouped" -- $P/tr2_hostile victim 1 0 > /dev/null 2>&1
expect_eq "a directory DEST with a group of its own: its files 0640, of that group" "640 nogroup" \
	"$(stat -c '%a %G' "$T"/grouped/*)"
$BPF --perf="$T/modes.perf" -- /bin/true 2> /dev/null
$BPF --file-mode=888 -- /bin/true 2> "$T/mode.err"
expect_eq "--file-mode: not an octal mode: one line" \
	"tr2-bpf: bad --file-mode '888': want an octal mode from 0 to 0777" "$(cat "$T/mode.err")"

# ===== 7. a process forked without exec: as git's own targets write it ===
# tests/e2e/inproc.sh has the program's own PERF target write the same file
$BPF --perf="$T/fork.perf" -- $B/tests/progs/tr2_inproc fork 2> "$T/fork.err"
python3 tests/e2e/mask.py perf < "$T/fork.perf" | sed "s|$B/|build/|g" > "$T/fork.m"
same "-- CMD: a child forked without exec: under its parent's sid, as git's own targets write it" \
	tests/e2e/expected/inproc-fork.perf "$T/fork.m"
# a directory target: the child's lines in its parent's file, where git's
# child writes them (the descriptor it inherited); the kernel's fork record
# says who forked it
mkdir -p "$T/forkdir"
$BPF --perf="$T/forkdir/" -- $B/tests/progs/tr2_inproc fork 2> "$T/forkdir.err"
expect_eq "-- CMD, a directory target: a child forked without exec writes into its parent's file" \
	1 "$(ls "$T/forkdir" | wc -l)"
python3 tests/e2e/mask.py perf < "$(ls -d "$T"/forkdir/* | head -1)" | sed "s|$B/|build/|g" > "$T/forkdir.m"
same "-- CMD, a directory target: that file's lines, as the program's own PERF target writes them" \
	tests/e2e/expected/inproc-fork.perf "$T/forkdir.m"
start_tracer "$T/fork" --comm=tr2_hostile --comm=tr2_inproc
$B/tests/progs/tr2_inproc fork
stop_tracer
expect_eq "-a: a child forked without exec: its parent's sid, in a file of its own (SID.1)" \
	"1 data exit atexit" \
	"$(grep -ho '"sid":"[^"]*"' "$T"/fork/* | sort -u | wc -l) $(events "$T"/fork/*.1)"

echo "hostile: $pass passed, $fail failed"
[ "$fail" = 0 ]
