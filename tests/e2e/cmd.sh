#!/usr/bin/env bash
# End-to-end tests of tr2-bpf -- CMD as a parent: what CMD inherits, -u USER,
# and what becomes of CMD when tr2-bpf ends first.  tests/progs/tr2_inherit
# prints what a process inherited (ids, groups, environment, umask, cwd,
# signal mask and dispositions, rlimits, open fds, process group, nice value,
# scheduling, capabilities, ...); each check compares its whole report under
# tr2-bpf with that of a direct run from the same state, or with what
# setpriv(1) gives as the user.  Needs root and BPF; says so and skips without.
# Creates a user and two groups for -u (tr2cmdtest, tr2cmdg1, tr2cmdg2) and
# removes them again.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$(realpath "$B/tr2-bpf")
T=$(mktemp -d /tmp/tr2-cmd.XXXXXX)
TUSER=tr2cmdtest
cleanup() {
	if getent passwd $TUSER > /dev/null; then userdel $TUSER; fi
	for g in tr2cmdg1 tr2cmdg2; do if getent group $g > /dev/null; then groupdel $g; fi; done
	rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0

. tests/lib.sh

if [ "$(id -u)" != 0 ]; then
	echo "cmd: SKIP: not root; the tests load BPF programs and run CMD as other users"
	echo "cmd: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! out=$($BPF -- /bin/true 2>&1); then
	case "$out" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*)
		echo "cmd: SKIP: BPF unavailable here: $out"
		echo "cmd: 0 passed, 0 failed, 1 skipped"
		exit 0;;
	esac
	echo "FAIL tr2-bpf cannot trace /bin/true: $out"
	echo "cmd: 0 passed, 1 failed"
	exit 1
fi

# The programs, where any user can read and run them (the build directory
# may not be).
chmod 755 "$T"
mkdir -m 755 "$T/bin"
cp $B/tests/progs/tr2_inherit $B/tests/progs/tr2_allapi "$T/bin/"
chmod 755 "$T/bin/"*
INH=$T/bin/tr2_inherit

# report NAME STATE... [-- WRAPPER...]: runs tr2_inherit from STATE (its own
# options: signals blocked or ignored, rlimits, nice) through WRAPPER (a
# tr2-bpf or setpriv command line, or nothing) into $T/NAME; every run has
# the same fds (stdout $T/out, stderr $T/err, fd 5 on /etc/hostname), the
# same cwd, umask 027, and no $_ (which bash sets to whatever ran last).
report() {
	local name=$1; shift
	local state=() wrap=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do state+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	wrap=("$@")
	(cd "$T" && umask 027 && exec timeout --foreground -k 5 60 env -u _ "$INH" "${state[@]}" --exec "${wrap[@]}" "$INH" \
		> "$T/out" 2> "$T/err" 5< /etc/hostname)
	echo $? > "$T/$name.status"
	mv "$T/out" "$T/$name"
	mv "$T/err" "$T/$name.err"
}

# --- what CMD inherits: the same as run directly ------------------------------
# (its trace lines to stderr: to the file that is standard output they would
# take CMD's standard output, below)
report plain.direct
report plain.traced -- $BPF --perf=2
same "inherited, default state: CMD's report under tr2-bpf equals a direct run's" "$T/plain.direct" "$T/plain.traced"
expect_eq "inherited, default state: CMD's status" 0 "$(cat "$T/plain.traced.status")"

# Trace lines to standard output, a file (not a terminal): CMD's standard
# output is tr2-bpf's standard error, so that the two do not mix; the rest
# as inherited.  The same when a DEST names that file.
report stdout.traced -- $BPF
expect_eq "trace to standard output (a file): stdout holds no line of CMD's (it has no probes: none)" \
	0 "$(wc -l < "$T/stdout.traced")"
expect_eq "trace to standard output (a file): CMD's fd 1 is the file of its fd 2" \
	"fd 1 $T/err" "$(grep '^fd 1 ' "$T/stdout.traced.err" | cut -d' ' -f1-3)"
grep -v '^fd 1 ' "$T/plain.direct" > "$T/plain.nofd1"
grep '^[a-z]' "$T/stdout.traced.err" | grep -v '^fd 1 \|^tr2-bpf: ' > "$T/stdout.nofd1"
same "trace to standard output (a file): the rest of the report as run directly" "$T/plain.nofd1" "$T/stdout.nofd1"
report stdout-dest.traced -- $BPF --event=/dev/stdout
expect_eq "--event=/dev/stdout (a file): CMD's fd 1 is the file of its fd 2" \
	"fd 1 $T/err" "$(grep '^fd 1 ' "$T/stdout-dest.traced.err" | cut -d' ' -f1-3)"

# An unusual state, each part of it something tr2-bpf changes in itself or
# that a forked child could lose: SIGPIPE, SIGINT, SIGTERM and SIGCHLD ignored
# (a script's background job, nohup-like callers), SIGUSR1 and SIGUSR2
# blocked, RLIMIT_MEMLOCK low (libbpf may raise it), RLIMIT_NOFILE low, nice 3.
odd=(--ignore 13 --ignore 2 --ignore 15 --ignore 17 --block 10 --block 12
     --rlimit MEMLOCK=65536:65536 --rlimit NOFILE=256:512 --nice 3)
report odd.direct "${odd[@]}"
report odd.traced "${odd[@]}" -- $BPF --perf=2
same "inherited, odd state: the same report (dispositions, mask, rlimits, nice)" "$T/odd.direct" "$T/odd.traced"
expect_eq "inherited, odd state: the state was set (ignored signals)" "ignored 2 13 15 17" \
	"$(grep '^ignored' "$T/odd.direct")"
expect_eq "inherited, odd state: SIGCHLD ignored, tr2-bpf still reaps CMD and ends" \
	"0 tr2-bpf: 0 events, 0 lost" "$(cat "$T/odd.traced.status") $(tail -1 "$T/odd.traced.err")"

# Destinations open in tr2-bpf: no fd of theirs, of libbpf's or of the ring
# buffer reaches CMD.
mkdir "$T/evdir"
report dest.direct
report dest.traced -- $BPF --perf="$T/x.perf" --event="$T/evdir/" --normal=5 -v
same "inherited with --perf=PATH, a directory DEST, --normal=5, -v: the same fds" \
	"$T/dest.direct" "$T/dest.traced"

# A terminal: CMD is in its foreground process group (Ctrl-C reaches it).
# pty_run OUT CMD...: runs CMD on a new pseudo-terminal, its output (CR LF as
# LF) into OUT; with READY set, waits for that text, then types Ctrl-C; prints
# CMD's exit status.
pty_run() {
	python3 - "$@" <<-'EOF'
	import os, pty, select, sys, time
	out, argv = sys.argv[1], sys.argv[2:]
	ready = os.environ.get("READY", "").encode()
	pid, fd = pty.fork()
	if pid == 0:
	    os.execv(argv[0], argv)
	buf, deadline = b"", time.time() + 30
	def read(timeout):
	    global buf
	    if select.select([fd], [], [], timeout)[0]:
	        try:
	            data = os.read(fd, 4096)
	        except OSError:
	            return False
	        buf += data
	        return bool(data)
	    return True
	if ready:
	    while ready not in buf and time.time() < deadline and read(0.1):
	        pass
	    time.sleep(0.3)
	    os.write(fd, b"\x03")
	while time.time() < deadline and read(0.1):
	    pass
	_, st = os.waitpid(pid, 0)
	open(out, "wb").write(buf.replace(b"\r\n", b"\n"))
	print(os.waitstatus_to_exitcode(st))
	EOF
}
pty_run "$T/tty.traced" $BPF -- $INH > /dev/null
expect_eq "on a terminal: CMD's process group is the terminal's foreground group" \
	"$(sed -n 's/^pgrp //p' "$T/tty.traced")" "$(sed -n 's/^tty_pgrp //p' "$T/tty.traced")"
expect_eq "on a terminal: Ctrl-C ends CMD and tr2-bpf; status 128 + SIGINT, then the summary" \
	"130 tr2-bpf: 0 events, 0 lost" \
	"$(READY=ready pty_run "$T/tty.int" $BPF -- sh -c 'echo ready; exec sleep 30') $(tail -1 "$T/tty.int")"

# --- -u USER -------------------------------------------------------------------
# The reference: the same state and program, as USER through setpriv(1), with
# the environment tr2-bpf -u promises.
nobody_env=(env HOME="$(getent passwd nobody | cut -d: -f6)" USER=nobody LOGNAME=nobody)
report u.nobody "${odd[@]}" -- $BPF --perf=2 -u nobody
report u.setpriv "${odd[@]}" -- setpriv --reuid=nobody --regid="$(id -g nobody)" --init-groups "${nobody_env[@]}"
same "-u nobody: CMD's report equals setpriv's as nobody (ids, groups, HOME, USER, LOGNAME; SHELL kept: nobody's is not in /etc/shells)" \
	"$T/u.setpriv" "$T/u.nobody"
expect_eq "-u nobody: CMD runs as nobody" "ids uid=$(id -u nobody)/$(id -u nobody)/$(id -u nobody) gid=$(id -g nobody)/$(id -g nobody)/$(id -g nobody)" \
	"$(grep '^ids' "$T/u.nobody")"

# A user with supplementary groups and a login shell.
if getent passwd $TUSER > /dev/null; then userdel $TUSER; fi   # a run that was killed
for g in tr2cmdg1 tr2cmdg2; do if getent group $g > /dev/null; then groupdel $g; fi; done
groupadd tr2cmdg1 && groupadd tr2cmdg2 &&
	useradd -M -d /tmp/tr2cmdtest-home -s /bin/sh -G tr2cmdg1,tr2cmdg2 $TUSER
tu_env=(env HOME=/tmp/tr2cmdtest-home USER=$TUSER LOGNAME=$TUSER SHELL=/bin/sh)
report u.test -- $BPF --perf=2 -u $TUSER
report u.test.setpriv -- setpriv --reuid=$TUSER --regid="$(id -g $TUSER)" --init-groups "${tu_env[@]}"
same "-u $TUSER: CMD's report equals setpriv's (two supplementary groups; HOME, USER, LOGNAME, SHELL)" \
	"$T/u.test.setpriv" "$T/u.test"
expect_eq "-u $TUSER: its groups" "groups $(id -G $TUSER | tr ' ' '\n' | sort -n | paste -sd' ')" \
	"$(grep '^groups' "$T/u.test")"
report u.test.uid -- $BPF --perf=2 -u "$(id -u $TUSER)"
same "-u UID of $TUSER: the same as -u $TUSER" "$T/u.test" "$T/u.test.uid"

# A uid without a passwd entry: gid the same number, no groups, HOME=/.
nouid=4242420
while getent passwd $nouid > /dev/null; do nouid=$((nouid + 1)); done
report u.nouid -- $BPF --perf=2 -u $nouid
report u.nouid.setpriv -- setpriv --reuid=$nouid --regid=$nouid --clear-groups env HOME=/ USER=$nouid LOGNAME=$nouid
same "-u $nouid (no passwd entry): gid $nouid, no groups, HOME=/, USER and LOGNAME $nouid" \
	"$T/u.nouid.setpriv" "$T/u.nouid"

# The trace still arrives, the same as without -u.
(cd "$T" && $BPF --perf="$T/a.perf" -- "$T/bin/tr2_allapi" > /dev/null 2> "$T/a.err"; echo $? > "$T/a.status")
(cd "$T" && $BPF -u nobody --perf="$T/ua.perf" -- "$T/bin/tr2_allapi" > /dev/null 2> "$T/ua.err"; echo $? > "$T/ua.status")
expect_eq "-u nobody, tr2_allapi: CMD's status and the summary line" "3 tr2-bpf: 49 events, 0 lost" \
	"$(cat "$T/ua.status") $(tail -1 "$T/ua.err")"
expect_eq "-u nobody, tr2_allapi: as without -u" "$(cat "$T/a.status") $(tail -1 "$T/a.err") $(wc -l < "$T/a.perf")" \
	"$(cat "$T/ua.status") $(tail -1 "$T/ua.err") $(wc -l < "$T/ua.perf")"

# Errors: one line, status 2, nothing run.
err_of() { local out; out=$("$@" 2>&1); echo "$out $?"; }   # its stderr and status
expect_eq "-u unknown user" "tr2-bpf: unknown user 'tr2-no-such-user' 2" \
	"$(err_of $BPF -u tr2-no-such-user -- touch "$T/ran")"
expect_eq "-u without -- CMD" "tr2-bpf: -u needs -- CMD: it runs CMD as USER 2" "$(err_of $BPF -u nobody)"
expect_eq "-u with -p" "tr2-bpf: -u needs -- CMD: it runs CMD as USER 2" "$(err_of $BPF --user=nobody -p 1)"
cp "$BPF" "$T/bin/tr2-bpf"
expect_eq "-u when tr2-bpf is not root" "tr2-bpf: -u needs root: only root can run CMD as another user 2" \
	"$(err_of setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$T/bin/tr2-bpf" -u nobody -- touch "$T/ran")"
printf '#!/bin/sh\ntouch %s/ran\n' "$T" > "$T/rootonly"
chmod 700 "$T/rootonly"
expect_eq "-u nobody, CMD only root may run: the reason, then the summary; status 126" \
	"tr2-bpf: cannot run '$T/rootonly': Permission denied
tr2-bpf: 0 events, 0 lost 126" "$(err_of $BPF -u nobody -- "$T/rootonly")"
expect_eq "an error after CMD's fork (a bad DEST): CMD never runs" \
	"tr2-bpf: invalid destination 'relative/x': want a file descriptor 2-9, an absolute path, or af_unix:[stream:|dgram:]/absolute/path 2" \
	"$(err_of $BPF --perf=relative/x -- touch "$T/ran")"
sleep 0.2
expect_eq "none of the failed runs ran CMD" no "$([ -e "$T/ran" ] && echo yes || echo no)"

# --- tr2-bpf ends first ---------------------------------------------------------
# cmd_script NAME: a CMD that writes its pid to $T/NAME.pid, waits for a line
# on the fifo $T/NAME.fifo, then runs a program not run before in this trace
# (an exec that a live tracer would hold to attach to it) and writes "finished".
cmd_script() {
	rm -f "$T/$1.fifo"; mkfifo -m 666 "$T/$1.fifo"
	echo "echo \$\$ > $T/$1.pid; read x < $T/$1.fifo; /usr/bin/env printf finished > $T/$1.done"
}
wait_file() { for _ in $(seq 200); do [ -s "$1" ] && return; sleep 0.05; done; }
state_of() { sed -n 's/^State:\t\(.\).*/\1/p' /proc/$1/status 2>/dev/null; }

# SIGKILL: CMD runs on, untraced, neither killed nor stopped.
$BPF -- sh -c "$(cmd_script kill)" 2> "$T/kill.err" &
tracer=$!
wait_file "$T/kill.pid"
sleep 0.3
kill -KILL $tracer
wait $tracer 2> /dev/null   # bash's "Killed"
expect_eq "SIGKILL to tr2-bpf: its status" 137 $?
cmd=$(cat "$T/kill.pid")
sleep 0.2
expect_eq "SIGKILL to tr2-bpf: CMD still runs, not stopped" S "$(state_of $cmd)"
echo go > "$T/kill.fifo"
wait_file "$T/kill.done"
expect_eq "SIGKILL to tr2-bpf: CMD goes on and finishes (an exec after the kill is not held)" \
	finished "$(cat "$T/kill.done" 2>/dev/null)"

# SIGKILL while tr2-bpf holds CMD stopped to attach to it (at its exec, a
# program not seen before): CMD does not stay stopped (tr2-bpf's guard sends
# it SIGCONT once tr2-bpf is gone) and finishes.  kill_held CMD...: starts
# tr2-bpf -- CMD, kills it as soon as CMD is in state T; says "held" then,
# else (CMD never seen stopped) "not caught".
kill_held() {
	python3 - "$BPF" "$@" <<-'EOF'
	import os, signal, subprocess, sys, time
	p = subprocess.Popen([sys.argv[1], "--"] + sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	held, deadline = False, time.time() + 20
	while not held and time.time() < deadline and p.poll() is None:
	    try:
	        kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
	    except OSError:
	        break
	    for k in kids:
	        try:
	            stat = open(f"/proc/{k}/stat").read()
	        except OSError:
	            continue
	        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
	        held = held or (comm != "tr2-guard" and rest.split()[0] == "T")
	os.kill(p.pid, signal.SIGKILL)
	p.wait()
	print("held" if held else "not caught")
	EOF
}
for try in 1 2 3 4 5; do
	rm -f "$T/held.done"
	caught=$(kill_held sh -c "printf finished > $T/held.done")
	[ "$caught" = held ] && break
done
wait_file "$T/held.done"
expect_eq "SIGKILL to tr2-bpf while it holds CMD stopped: CMD goes on and finishes" \
	"held finished" "$caught $(cat "$T/held.done" 2>/dev/null)"

# SIGTERM: passed on to CMD, whose status is tr2-bpf's.
$BPF -- sh -c 'sleep 30 & trap "kill $!; exit 5" TERM; echo $$ > '"$T/term.pid"'; wait' 2> "$T/term.err" &
tracer=$!
wait_file "$T/term.pid"
sleep 0.3
kill -TERM $tracer
wait $tracer
expect_eq "SIGTERM to tr2-bpf: passed on to CMD; CMD's status, then the summary" \
	"5 tr2-bpf: 0 events, 0 lost" "$? $(tail -1 "$T/term.err")"

# SIGTERM, CMD ignoring it: tr2-bpf ends after 0.2 s with 128 + SIGTERM; CMD
# runs on, untraced.
$INH --ignore 15 --exec $BPF -- sh -c "$(cmd_script ign)" 2> "$T/ign.err" &
tracer=$!
wait_file "$T/ign.pid"
sleep 0.3
kill -TERM $tracer
wait $tracer
expect_eq "SIGTERM, CMD ignores it: tr2-bpf's status 128 + SIGTERM, then the summary" \
	"143 tr2-bpf: 0 events, 0 lost" "$? $(tail -1 "$T/ign.err")"
expect_eq "SIGTERM, CMD ignores it: CMD still runs" S "$(state_of "$(cat "$T/ign.pid")")"
echo go > "$T/ign.fifo"
wait_file "$T/ign.done"
expect_eq "SIGTERM, CMD ignores it: CMD finishes" finished "$(cat "$T/ign.done" 2>/dev/null)"

# The output fails (its reader has gone): tr2-bpf stops tracing, CMD runs on,
# and its status is still tr2-bpf's.
rm -f "$T/out.fifo"; mkfifo "$T/out.fifo"
exec 7<> "$T/out.fifo"
$BPF --perf=6 -- "$T/bin/tr2_allapi" --wait-stdin <&7 > "$T/out.prog" 2> "$T/out.err" 6> >(head -c 1 > /dev/null) &
tracer=$!
wait_file "$T/out.prog"
sleep 0.5   # head has read its byte and gone
echo go >&7
wait $tracer
expect_eq "output failed: CMD ran to its end; its status (not 0: kept), then the summary with the lines dropped" \
	"3 1" "$? $(tail -1 "$T/out.err" | grep -c '^tr2-bpf: [0-9]* events, [0-9]* lost, [1-9][0-9]* lines\? dropped$')"
exec 7>&-

# Two probed children that a shell (no runtime) starts at once: the second
# may map libtr2.so while tr2-bpf attaches to it for the first, before
# tr2-bpf has read its fork record; both are traced from their first event,
# in every one of 10 runs.
SHAPES=$(realpath "$B/tests/progs/tr2_shapes")
got=""
for i in $(seq 10); do
	mkdir "$T/sib$i"
	$BPF --event="$T/sib$i" -- sh -c "$SHAPES child & $SHAPES child & wait" > /dev/null 2>&1
	got="$got$(cat "$T/sib$i"/* | python3 -c 'import json, sys
print(sum(1 for l in sys.stdin if json.loads(l)["event"] == "version"), end="")')"
done
expect_eq "two siblings started at once, 10 runs: both traced from version each time" 2222222222 "$got"

# cmd_ancestry without names (trace2.h): tr2-bpf names the ancestors as
# /proc/PID/stat does, up to init; the in-process targets write no event.
# The child of tr2_ancestry fork: its parent, tr2-bpf, then this shell's.
ancestry_of() {  # PID: the comm of PID and of each ancestor, " <- " between
	local pid=$1 names='' stat comm rest
	while [ "$pid" != 0 ] && stat=$(cat "/proc/$pid/stat" 2> /dev/null); do
		comm=${stat#*\(} comm=${comm%\)*} rest=${stat##*\) }
		names+="${names:+ <- }$comm"
		set -- $rest
		pid=$2
	done
	echo "$names"
}
ANC=$(realpath "$B/tests/progs/tr2_ancestry")
$BPF --normal="$T/anc.normal" -- "$ANC" fork 2> "$T/anc.err"
expect_eq "cmd_ancestry(NULL) under tr2-bpf: exit status, summary" "0 tr2-bpf: 5 events, 0 lost" "$? $(cat "$T/anc.err")"
expect_eq "cmd_ancestry(NULL) under tr2-bpf: the kernel's names, as /proc gives them" \
	"tests/progs/tr2_ancestry.c:23     cmd_ancestry tr2_ancestry <- tr2-bpf <- $(ancestry_of $$)" \
	"$(sed -n 's/^[0-9:.]* //p' "$T/anc.normal" | grep cmd_ancestry)"
GIT_TRACE2="$T/anc.inproc" "$ANC"
expect_eq "cmd_ancestry(NULL) in-process: no event" "version start exit atexit" \
	"$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $3 }' "$T/anc.inproc")"

# A process in a pid namespace of its own (a container) knows itself by
# other ids than the host's: it is traced all the same, and its ancestry
# ends at the namespace's init, as its /proc shows it.
$BPF --normal="$T/ns.normal" -- unshare --pid --fork --mount-proc bash -c "$ANC; $ANC fork; true" 2> "$T/ns.err"
expect_eq "a pid namespace of its own: exit status, summary" "0 tr2-bpf: 10 events, 0 lost" "$? $(cat "$T/ns.err")"
expect_eq "a pid namespace of its own: the ancestry up to the namespace's init" \
	"cmd_ancestry bash|cmd_ancestry tr2_ancestry <- bash" \
	"$(sed -n 's/^.* \(cmd_ancestry .*\)$/\1/p' "$T/ns.normal" | paste -sd'|')"

echo "cmd: $pass passed, $fail failed"
[ $fail = 0 ]
