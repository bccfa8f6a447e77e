#!/usr/bin/env bash
# af_unix DESTs end to end (issue 17): tr2-bpf opens one connection per
# traced process, as each git process opens its own, which is what a Trace2
# collector such as trace2receiver takes as one process.  A listener
# (tests/e2e/af_unix_listen.py) takes every connection and the checks say,
# per process, what it carried: its lines, how many sids, its first and last
# events, whole lines; compared whole with what a directory DEST gets from
# the same program (one file per process).  Process trees under -- CMD,
# stream and dgram, a process killed while another runs on (its connection
# closes when it is gone, not at the end of the trace).  Needs root.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
P=$B/tests/progs
SHAPES=$P/tr2_shapes
LISTEN="python3 tests/e2e/af_unix_listen.py"
T=$(mktemp -d /tmp/tr2-af-unix.XXXXXX)
pass=0 fail=0
. tests/lib.sh
cleanup() { kill $(jobs -p) 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "af_unix: SKIP: not root; the tests load BPF programs"
	echo "af_unix: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

# listen KIND NAME: a listener on $T/NAME.sock writing $T/NAME.*; stop NAME
# lets it end once its connections have ended.
listen() {
	$LISTEN "$1" "$T/$2.sock" "$T/$2" &
	listener=$!
	for _ in $(seq 100); do [ -e "$T/$2.ready" ] && return; sleep 0.05; done
}
stop() { touch "$T/$1.stop"; wait $listener; }
# last_line FILE: the summary line tr2-bpf ends with
last_line() { tail -1 "$1" | sed 's/[0-9][0-9]* events/N events/'; }

# --- process trees under -- CMD: one stream connection per process -----------
# tree NAME CMD...: CMD traced into a directory DEST, then into a stream
# socket; the connections carry per process what the files carry.
tree() {
	local name=$1; shift
	mkdir "$T/$name.dir"
	$BPF --event="$T/$name.dir" -- "$@" > /dev/null 2>&1
	listen stream "$name"
	$BPF --event="af_unix:stream:$T/$name.sock" -- "$@" > /dev/null 2> "$T/$name.err"
	echo "$?" > "$T/$name.status"
	stop "$name"
	$LISTEN dir "$T/$name.dir" > "$T/$name.want"
	$LISTEN streams "$T/$name" > "$T/$name.got"
}

tree spawn $SHAPES spawn 3 $SHAPES child
expect_eq "spawn 3 children: exit status, summary line last on stderr, nothing else" \
	"0 tr2-bpf: N events, 0 lost 1" "$(cat "$T/spawn.status") $(last_line "$T/spawn.err") $(wc -l < "$T/spawn.err")"
expect_eq "spawn 3 children: 4 connections, each one process's whole lines, version to atexit" \
	"7 lines, 1 sid, version .. atexit, whole
9 lines, 1 sid, version .. atexit, whole
9 lines, 1 sid, version .. atexit, whole
9 lines, 1 sid, version .. atexit, whole
4 processes, 4 distinct sids" "$(cat "$T/spawn.got")"
same "spawn 3 children: the connections carry what a directory DEST's files carry" "$T/spawn.want" "$T/spawn.got"

# tr2_allapi: threads, a traced child started while its parent writes
tree allapi $P/tr2_allapi
expect_eq "tr2_allapi: exit status (its own, 3), summary line" \
	"3 tr2-bpf: N events, 0 lost" "$(cat "$T/allapi.status") $(last_line "$T/allapi.err")"
expect_eq "tr2_allapi: 2 connections, 2 processes" "2 processes, 2 distinct sids" "$(tail -1 "$T/allapi.got")"
same "tr2_allapi: the connections carry what a directory DEST's files carry" "$T/allapi.want" "$T/allapi.got"

# --- dgram: each line one datagram, per process what the files carry --------
listen dgram dgram
$BPF --event="af_unix:dgram:$T/dgram.sock" -- $SHAPES spawn 3 $SHAPES child > /dev/null 2> "$T/dgram.err"
expect_eq "dgram: exit status, summary line" "0 tr2-bpf: N events, 0 lost" "$? $(last_line "$T/dgram.err")"
for _ in $(seq 100); do [ "$(cat "$T/dgram.dgrams" | wc -l)" -ge 34 ] && break; sleep 0.05; done
stop dgram
$LISTEN dgrams "$T/dgram" > "$T/dgram.got"
same "dgram: each datagram one whole line; per process what the files carry" "$T/spawn.want" "$T/dgram.got"

# --- a process killed while another runs on ----------------------------------
# Two children of a shell wait on stdin after their cmd_name; one is killed:
# its last event never comes, and its connection closes when it is gone
# (the kernel closes a dead git's socket too), while the other's stays open
# until its atexit.
mkfifo "$T/in"
exec 8<> "$T/in"
listen stream killed
# (Started 0.3 s apart, so that the one killed is the first.)
$BPF --event="af_unix:$T/killed.sock" -- \
	sh -c 'exec 3<&0; "$0" --wait-stdin child <&3 & sleep 0.3; "$0" --wait-stdin child <&3 & wait' \
	$SHAPES <&8 > "$T/killed.out" 2> "$T/killed.err" &
tracer=$!
for _ in $(seq 200); do [ "$(grep -c waiting "$T/killed.out")" = 2 ] && break; sleep 0.05; done
kill -9 "$(pgrep -n -P "$(cmd_of $tracer)")"
for _ in $(seq 200); do [ -s "$T/killed.ended" ] && break; sleep 0.05; done
sleep 0.2
expect_eq "killed: its connection has ended (3 lines, to its cmd_name), the other's not yet" "1 3" \
	"$(wc -l < "$T/killed.ended") $(wc -l < "$T/killed.$(head -1 "$T/killed.ended")")"
printf 'go\nend\n' >&8
wait $tracer
expect_eq "killed: exit status, summary line" "0 tr2-bpf: N events, 0 lost" "$? $(last_line "$T/killed.err")"
stop killed
expect_eq "killed: per connection" \
	"3 lines, 1 sid, version .. cmd_name, whole
9 lines, 1 sid, version .. atexit, whole
2 processes, 2 distinct sids" "$($LISTEN streams "$T/killed")"
exec 8>&-

# --- the example systemd unit (examples/tr2-host.service) --------------------
# Its ExecStart= line run as systemd runs it (no systemd is PID 1 here to
# run the unit itself), the collector's socket moved into $T: tr2-bpf -a;
# a process that someone else starts sends its whole trace over one
# connection of its own; the unit's KillSignal ends tr2-bpf with status 0.
UNIT=examples/tr2-host.service
exec_start=$(sed -n 's/^ExecStart=//p' $UNIT)
kill_signal=$(sed -n 's/^KillSignal=//p' $UNIT)
sock=$(echo "$exec_start" | sed -n 's/.*af_unix:stream:\([^ ]*\).*/\1/p')
expect_eq "the unit: tr2-bpf -a to a stream socket, stopped by SIGTERM" \
	"/usr/bin/tr2-bpf -a --event=af_unix:stream:/run/trace2receiver.sock SIGTERM" "$exec_start $kill_signal"
line=${exec_start/\/usr\/bin\/tr2-bpf/$(realpath $BPF)}
line=${line/$sock/$T/unit.sock}
if command -v systemd-analyze > /dev/null; then
	sed "s|^ExecStart=.*|ExecStart=$line|" $UNIT > "$T/tr2-host.service"
	expect_eq "the unit: systemd-analyze verify finds nothing to say (its man page: tests/deb)" "" \
		"$(systemd-analyze verify --man=no "$T/tr2-host.service" 2>&1)"
else
	echo "SKIP systemd-analyze verify: systemd-analyze is not installed"
fi
listen stream unit
$line > "$T/unit.out" 2> "$T/unit.err" &   # split on blanks, as systemd splits it (no quotes in it)
tracer=$!
for _ in $(seq 200); do grep -q "tracing every process" "$T/unit.err" && break; sleep 0.05; done
$SHAPES child > /dev/null & child=$!
wait $child
sleep 0.3
kill -"$kill_signal" $tracer
wait $tracer
expect_eq "the unit's line: at SIGTERM, status 0; stderr: what it traces, then the summary" \
	"0 tr2-bpf: N events, 0 lost 2" "$? $(last_line "$T/unit.err") $(wc -l < "$T/unit.err")"
stop unit
mkdir "$T/unitone"
grep -l "P$(printf %08x $child)\"" "$T"/unit.[0-9]* | while read -r f; do cp "$f" "$T/unitone/one.1"; done
expect_eq "the unit's line: a process someone else started, its own connection, version to atexit" \
	"9 lines, 1 sid, version .. atexit, whole
1 processes, 1 distinct sids" "$($LISTEN streams "$T/unitone/one")"

echo "af_unix: $pass passed, $fail failed"
[ $fail = 0 ]
