#!/usr/bin/env bash
# The in-process targets (trace2(3), IN-PROCESS TARGETS): Trace2 without a
# tracer and without root.  As an unprivileged user (nobody when run as root,
# else the caller), with git's GIT_TRACE2, GIT_TRACE2_PERF and
# GIT_TRACE2_EVENT set:
#   - the e2e suite's whole-API programs write the lines of tests/e2e/expected/
#     (what tr2-bpf writes for them), and, run once under tr2-bpf (root and
#     BPF, else SKIP), the lines tr2-bpf writes for that very run: whole lines
#     after tests/e2e/mask.py masks times, pids and sids;
#   - a program that runs the installed git writes one session tree with it
#     (GIT_TRACE2_PARENT_SID, both ways);
#   - with no variable set nothing is opened, allocated or set;
#   - hostile values do and say what git does and says;
#   - directories, GIT_TRACE2_MAX_FILES, sockets, descriptors, fork, threads,
#     a fatal signal, a closed pipe.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
P=$B/tests/progs
BPF=$B/tr2-bpf
EXP=tests/e2e/expected
MASK="python3 tests/e2e/mask.py"
CHECK="python3 tests/e2e/inproc_check.py"
T=$(mktemp -d /tmp/tr2-inproc.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0

. tests/lib.sh
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }

# No variable of the caller's may leak in.
for v in $(env | sed -n 's/^\(GIT_TRACE2[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
SIDRE='[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-(H[0-9a-f]{8}|Localhost)-P[0-9a-f]{8}'

# U CMD...: CMD as the unprivileged user, in a clean git setting; U writes
# into $T/u only.
chmod 711 "$T"
mkdir -m 1777 "$T/u"
if [ "$(id -u)" = 0 ]; then
	WHO=nobody
	AS_USER=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups --)
else
	WHO=$(id -un)
	AS_USER=()
fi
U() { "${AS_USER[@]}" env HOME="$T/u" GIT_CONFIG_NOSYSTEM=1 "$@"; }
if ! U test -x "$P/tr2_allapi"; then
	# A directory above the build is closed to the user: the programs it
	# runs are copied where it can reach them, in the same layout (rpaths
	# and the build/ that masked() writes for $B/ hold).
	mkdir -p "$T/bin/tests/progs" "$T/bin/examples"
	cp -a "$B"/libtr2.so* "$T/bin/"
	cp -a "$P"/tr2_allapi "$P"/tr2_shared "$P"/libtr2_shlib.so "$P"/tr2_inproc "$P"/tr2_stress \
		"$T/bin/tests/progs/"
	cp -a "$B/examples/dirscan" "$T/bin/examples/"
	chmod -R a+rX "$T/bin"
	B=$T/bin P=$T/bin/tests/progs
fi
if ! U test -x "$P/tr2_allapi"; then
	echo "inproc: SKIP: $WHO cannot run $P/tr2_allapi"
	echo "inproc: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

# masked FMT FILE: the masked trace, the build directory read as build/; a
# failed test when a line does not parse.  cut_masked: the same of a trace
# the runtime wrote, with its strings cut at 4095 bytes as tr2-bpf cuts them.
masked() { $MASK "$1" < "$2" > "$T/masked" && sed "s|$B/|build/|g" "$T/masked"; }
cut_masked() { $CHECK cut < "$2" > "$T/cut" && masked "$1" "$T/cut"; }
# by_thread FMT: the masked lines on stdin with each thread's lines together,
# in their order (threads run concurrently: tr2-bpf and the runtime may order
# two threads' lines differently, never one thread's); NORMAL, which names no
# thread, sorted.
by_thread() {
	case $1 in
	event) awk '{ match($0, /"thread":"[^"]*"/); print substr($0, RSTART, RLENGTH) "\t" $0 }' |
		sort -s -t '	' -k1,1 | cut -f2- ;;
	perf) sort -s -t '|' -k3,3 ;;
	normal) sort ;;
	esac
}
in_order() { cat; }
# vars PREFIX: the three target variables, writing PREFIX.n, .p, .e
vars() { echo "GIT_TRACE2=$1.n GIT_TRACE2_PERF=$1.p GIT_TRACE2_EVENT=$1.e"; }

# --- 1. the whole-API programs as $WHO, against tests/e2e/expected/ --------
U $(vars "$T/u/a") GIT_TRACE2_EVENT_NESTING=10 $P/tr2_allapi
expect_eq "allapi as $WHO: exit status" 3 $?
for f in normal:n perf:p event:e; do
	cut_masked ${f%:*} "$T/u/a.${f#*:}" > "$T/a.m" && same "allapi as $WHO: ${f%:*} = tr2-bpf's ($EXP/allapi.${f%:*})" "$EXP/allapi.${f%:*}" "$T/a.m"
done
U GIT_TRACE2_PERF="$T/u/h.p" GIT_TRACE2_EVENT="$T/u/h.e" GIT_TRACE2_EVENT_NESTING=10 $P/tr2_allapi --hostile
expect_eq "hostile as $WHO: exit status" 0 $?
for f in perf:p event:e; do
	cut_masked ${f%:*} "$T/u/h.${f#*:}" > "$T/h.m" && same "hostile as $WHO: ${f%:*} = tr2-bpf's but for its 4095-byte cut" "$EXP/hostile.${f%:*}" "$T/h.m"
done
expect_eq "hostile: the megabyte label is written whole, as git would" 2 \
	"$(python3 -c 'import sys; print(sum(l.endswith(b"label:" + b"y" * 1048575 + b"\n") for l in open(sys.argv[1], "rb")))' "$T/u/h.p")"
U GIT_TRACE2_BRIEF=1 GIT_TRACE2_PERF_BRIEF=yes $(vars "$T/u/b") $P/tr2_allapi
for f in normal:n perf:p; do
	masked ${f%:*} "$T/u/b.${f#*:}" > "$T/b.m" && same "GIT_TRACE2_BRIEF, GIT_TRACE2_PERF_BRIEF: ${f%:*}" "$EXP/allapi-brief.${f%:*}" "$T/b.m"
done
masked event "$T/u/b.e" > "$T/b.m" && same "no GIT_TRACE2_EVENT_NESTING: git's 2" "$EXP/allapi-nesting2.event" "$T/b.m"
U GIT_TRACE2_PERF="$T/u/s.p" $P/tr2_shared > /dev/null
masked perf "$T/u/s.p" > "$T/s.m" && same "shared (libtr2.so) as $WHO: perf" "$EXP/shared.perf" "$T/s.m"

# --- 2. the same runs under tr2-bpf: one run, both writers ------------------
# bpf_run NAME CMD...: tr2-bpf writes $T/NAME.{n,p,e}, the runtime $T/u/NAME.{n,p,e}
bpf_run() {
	local name=$1; shift
	$BPF --normal="$T/$name.n" --perf="$T/$name.p" --event="$T/$name.e" --event-nesting=10 -- \
		"${AS_USER[@]}" env HOME="$T/u" $(vars "$T/u/$name") GIT_TRACE2_EVENT_NESTING=10 "$@" \
		> /dev/null 2> "$T/$name.err"
}
bpf_same() { # NAME ORDER: each format of run NAME, tr2-bpf's against the runtime's
	for f in normal:n perf:p event:e; do
		masked ${f%:*} "$T/$1.${f#*:}" | $2 ${f%:*} > "$T/bpf.m" &&
			cut_masked ${f%:*} "$T/u/$1.${f#*:}" | $2 ${f%:*} > "$T/inproc.m" &&
			same "$1 under tr2-bpf: ${f%:*}: the runtime's lines = tr2-bpf's" "$T/bpf.m" "$T/inproc.m"
	done
}
if [ "$(id -u)" != 0 ]; then
	skipped "tr2-bpf and the runtime in one run: not root"
elif ! out=$($BPF -- /bin/true 2>&1); then
	skipped "tr2-bpf and the runtime in one run: BPF unavailable here: $out"
else
	mkdir -p "$T/tree/a/b" "$T/tree/c"
	for i in 1 2 3; do echo "file $i" > "$T/tree/a/f$i"; done
	echo x > "$T/tree/a/b/g"
	chmod -R a+rX "$T/tree"
	bpf_run allapi $P/tr2_allapi
	expect_eq "allapi under tr2-bpf: tr2-bpf's summary" "tr2-bpf: 49 events, 0 lost" "$(tail -1 "$T/allapi.err")"
	bpf_same allapi in_order
	bpf_run hostile $P/tr2_allapi --hostile
	bpf_same hostile in_order
	bpf_run shared $P/tr2_shared
	bpf_same shared in_order
	bpf_run dirscan $B/examples/dirscan -j 3 "$T/tree"
	bpf_same dirscan by_thread
fi

# --- 3. GIT_TRACE2_PARENT_SID: one session tree with the installed git ------
if ! command -v git > /dev/null; then
	skipped "GIT_TRACE2_PARENT_SID: git is not installed"
else
	# (git -C: out of this worktree, which nobody does not own)
	U GIT_TRACE2_EVENT="$T/u/g.e" GIT_TRACE2_PERF="$T/u/g.p" $P/tr2_inproc run git -C "$T/u" version > /dev/null
	expect_eq "a tr2 program runs git: exit status" 0 $?
	expect_eq "a tr2 program runs git: one session tree in one EVENT file, git's sid = ours/its own" "ok" \
		"$($CHECK tree "$T/u/g.e" inproc-1.0 inproc/version)"
	expect_eq "a tr2 program runs git: PERF depth d0 on our lines, d1 on git's" "git d1|ours d0|" \
		"$(awk -F' [|] ' '{ print ($1 ~ /tr2_inproc[.]c|usdt[/]/ ? "ours " : "git ") $2 }' "$T/u/g.p" |
		   sort -u | tr '\n' '|')"
	# git runs a tr2 program (an alias through the shell): ours nests in git's
	U GIT_TRACE2_EVENT="$T/u/r.e" git -C "$T/u" -c alias.tr2x="!$(cd "$P" && pwd)/tr2_inproc state" tr2x > /dev/null
	sids=$(grep -o '"sid":"[^"]*"' "$T/u/r.e" | sort -u | sed -E "s/$SIDRE/SID/g" | tr '\n' ' ')
	expect_eq "git runs a tr2 program: our sid = git's/our own" '"sid":"SID" "sid":"SID/SID" ' "$sids"
	expect_eq "git runs a tr2 program: its sid nests in git's" 1 \
		"$(python3 -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1])]
git = {e["sid"] for e in ev if e["event"] == "version" and e["exe"] != "inproc-1.0"}
ours = {e["sid"] for e in ev if e["event"] == "version" and e["exe"] == "inproc-1.0"}
print(int(len(git) == 1 and len(ours) == 1 and ours.pop().startswith(git.pop() + "/")))' "$T/u/r.e")"
fi

# --- 4. none set: nothing opened, allocated or set --------------------------
NOTHING="begin
end
inproc=0 heap=0 fds= parent_sid=(unset)"
expect_eq "no variable set: the runtime's byte of trace2__state.on stays 0, no allocation, no descriptor, no GIT_TRACE2_PARENT_SID" "$NOTHING" \
	"$(U $P/tr2_inproc state)"
expect_eq "only GIT_TRACE2_PARENT_SID and a BRIEF set: the same, the parent sid left as it was" \
	"${NOTHING%(unset)}x" "$(U GIT_TRACE2_PARENT_SID=x GIT_TRACE2_BRIEF=1 $P/tr2_inproc state)"
expect_eq "0, false and empty values: the same" "$NOTHING" \
	"$(U GIT_TRACE2=0 GIT_TRACE2_PERF=FALSE GIT_TRACE2_EVENT= $P/tr2_inproc state)"
if command -v strace > /dev/null; then
	# strace pads its "= result" column
	strace -qq -o "$T/st" -e trace=open,openat,creat,socket,connect,write $P/tr2_inproc state > /dev/null
	expect_eq "no variable set: no open, socket or connect around trace2_initialize (strace)" \
		'write(1, "begin\n", 6) = 6|write(1, "end\n", 4) = 4|' \
		"$(sed -n '/^write(1, "begin/,/^write(1, "end/p' "$T/st" | sed -E 's/\) += /) = /' | tr '\n' '|')"
	GIT_TRACE2_PERF="$T/st.p" strace -qq -o "$T/st" -e trace=open,openat,creat,socket,connect $P/tr2_inproc state > /dev/null
	expect_eq "GIT_TRACE2_PERF set: strace sees its one open (the check above can see one)" 1 \
		"$(grep -cE "^openat\(AT_FDCWD, \"$T/st.p\", O_WRONLY\|O_CREAT\|O_APPEND\|O_CLOEXEC, 0666\) += [0-9]+$" "$T/st")"
else
	skipped "no variable set: strace not installed"
fi

# --- 5. hostile values: what git does and says ------------------------------
# value_case VAR VALUE [DEBUG]: git version and tr2_inproc state with VAR=VALUE
# (and GIT_TRACE2_DST_DEBUG=1): the same stderr, sids masked; ours opens
# nothing (its warnings may allocate, as git's: strerror's translations).
value_case() {
	local dbg=() name="$1='${2/#$T/\$T}'"
	[ $# -gt 2 ] && dbg=(GIT_TRACE2_DST_DEBUG=1) name="$name with GIT_TRACE2_DST_DEBUG"
	U "$1=$2" "${dbg[@]}" git -C "$T/u" version 2> "$T/git.err" > /dev/null 7>&-
	U "$1=$2" "${dbg[@]}" $P/tr2_inproc state 2> "$T/our.err" > "$T/our.out" 7>&-
	expect_eq "$name: git's stderr, line for line" "$(sed -E "s/$SIDRE/SID/g" "$T/git.err")" \
		"$(sed -E "s/$SIDRE/SID/g" "$T/our.err")"
	expect_eq "$name: no target opens" "inproc=0 fds= parent_sid=(unset)" "$(tail -1 "$T/our.out" | sed 's/ heap=[0-9]*//')"
}
mkdir -m 755 "$T/closed"
for value in 10 rel/x ./x "af_unix:" "af_unix:stream:" "af_unix:rel" "af_unix:/nonexistent/sock" \
	     /nonexistent/dir/x 7 ${AS_USER:+"$T/closed"} ${AS_USER:+"$T/closed/x"}; do
	value_case GIT_TRACE2_PERF "$value"
	value_case GIT_TRACE2_PERF "$value" debug
done
value_case GIT_TRACE2_EVENT 10
value_case GIT_TRACE2 "af_unix:dgram:rel" debug

# --- 6. directories, GIT_TRACE2_MAX_FILES, sockets, descriptors -------------
mkdir -m 1777 "$T/u/dir" "$T/u/dir2"
U GIT_TRACE2_EVENT="$T/u/dir/" $P/tr2_allapi
names=$(ls "$T/u/dir" | sed -E "s/^$SIDRE\$/<sid>/" | tr '\n' ' ')
expect_eq "directory target: one file per process, named after its sid" "<sid> <sid> " "$names"
U GIT_TRACE2_EVENT="$T/u/dir2" GIT_TRACE2_MAX_FILES=3 $P/tr2_allapi
names=$(ls "$T/u/dir2" | sed -E "s/^$SIDRE\$/<sid>/" | tr '\n' ' ')
expect_eq "GIT_TRACE2_MAX_FILES=3: the second process goes to git's sentinel" "<sid> git-trace2-discard " "$names"
expect_eq "GIT_TRACE2_MAX_FILES=3: too_many_files after its first line" "version too_many_files start" \
	"$(head -3 "$T/u/dir2/git-trace2-discard" | grep -o '"event":"[a-z_]*"' | cut -d'"' -f4 | tr '\n' ' ' | sed 's/ $//')"
for type in stream dgram; do
	U python3 - "$T/u/$type.sock" "$T/u/$type.out" $type <<'PY' &
import socket, sys
kind = socket.SOCK_STREAM if sys.argv[3] == "stream" else socket.SOCK_DGRAM
s = socket.socket(socket.AF_UNIX, kind)
s.bind(sys.argv[1]); s.settimeout(20)
with open(sys.argv[2], "wb") as f:
    if kind == socket.SOCK_STREAM:
        s.listen(1)
        c, _ = s.accept()
        while b := c.recv(65536):
            f.write(b)
    else:
        while (b := s.recv(65536)) and not b.startswith(b'{"event":"atexit"'):
            f.write(b"%d " % len(b) + b)
        f.write(b"%d " % len(b) + b)
PY
	for _ in $(seq 100); do [ -S "$T/u/$type.sock" ] && break; sleep 0.05; done
	U GIT_TRACE2_EVENT="af_unix:$type:$T/u/$type.sock" $P/tr2_inproc state > /dev/null
	wait $!
done
U GIT_TRACE2_EVENT="$T/u/sock.e" $P/tr2_inproc state > /dev/null
masked event "$T/u/sock.e" > "$T/file.m"
masked event "$T/u/stream.out" > "$T/stream.m" && same "af_unix:stream: the lines a file gets" "$T/file.m" "$T/stream.m"
awk '{ n = $1; sub(/^[0-9]+ /, ""); if (n != length($0) + 1) print "datagram of " n " bytes: " $0 }' "$T/u/dgram.out" > "$T/dgram.bad"
expect_eq "af_unix:dgram: one datagram per line" "" "$(cat "$T/dgram.bad")"
sed 's/^[0-9]* //' "$T/u/dgram.out" | masked event /dev/stdin > "$T/dgram.m" && same "af_unix:dgram: the lines a file gets" "$T/file.m" "$T/dgram.m"
U GIT_TRACE2_PERF=1 $P/tr2_inproc state 2> "$T/u/stderr.p" > /dev/null
U GIT_TRACE2_PERF=5 $P/tr2_inproc state 5> "$T/u/fd5.p" > /dev/null
U GIT_TRACE2_PERF="$T/u/file.p" $P/tr2_inproc state > /dev/null
masked perf "$T/u/file.p" > "$T/file.m"
masked perf "$T/u/stderr.p" > "$T/stderr.m" && same "GIT_TRACE2_PERF=1: standard error gets the lines" "$T/file.m" "$T/stderr.m"
masked perf "$T/u/fd5.p" > "$T/fd5.m" && same "GIT_TRACE2_PERF=5: descriptor 5 gets the lines" "$T/file.m" "$T/fd5.m"
# A descriptor whose reader has gone: git ignores SIGPIPE around its write
# and drops the target; so does the runtime (and both say so when asked).
closed_pipe() { # CMD...: exit status and stderr, with fd 5 a pipe nobody reads
	python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r); os.dup2(w, 5)
p = subprocess.run(sys.argv[1:], pass_fds=(5,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print(p.returncode, p.stderr.decode().strip())' "$@"
}
expect_eq "GIT_TRACE2_PERF=5, a pipe with no reader: git lives and warns (GIT_TRACE2_DST_DEBUG)" \
	"0 warning: unable to write trace to 'GIT_TRACE2_PERF': Broken pipe" \
	"$(closed_pipe "${AS_USER[@]}" env GIT_TRACE2_PERF=5 GIT_TRACE2_DST_DEBUG=1 git -C "$T/u" version)"
expect_eq "GIT_TRACE2_PERF=5, a pipe with no reader: so does the runtime" \
	"0 warning: unable to write trace to 'GIT_TRACE2_PERF': Broken pipe" \
	"$(closed_pipe "${AS_USER[@]}" env GIT_TRACE2_PERF=5 GIT_TRACE2_DST_DEBUG=1 $P/tr2_inproc state)"

# --- 7. fork, threads, a fatal signal ---------------------------------------
U GIT_TRACE2_PERF="$T/u/fork.p" GIT_TRACE2_EVENT="$T/u/fork.e" $P/tr2_inproc fork
masked perf "$T/u/fork.p" > "$T/fork.m" && same "fork without exec: the child writes as the parent's main thread" \
	"$EXP/inproc-fork.perf" "$T/fork.m"
expect_eq "fork without exec: one sid for both processes, as git" 1 \
	"$(grep -o '"sid":"[^"]*"' "$T/u/fork.e" | sort -u | wc -l)"
U GIT_TRACE2_PERF="$T/u/fork2.p" $P/tr2_stress fork
expect_eq "fork, then _exit(): the child's lines are there (a forked child writes each line at once)" \
	"region_enter data region_leave" \
	"$(grep -E '[|] fork +[|] ' "$T/u/fork2.p" | awk -F' [|] ' '{ print $4 }' | tr -d ' ' | tr '\n' ' ' | sed 's/ $//')"
U GIT_TRACE2_PERF="$T/u/th.p" GIT_TRACE2_EVENT="$T/u/th.e" $P/tr2_stress flood 8 2000 > /dev/null
expect_eq "8 threads x 2000 region pairs and data: every line, the threads' ones whole" "48021 48016" \
	"$(wc -l < "$T/u/th.p") $(grep -cE '^[0-9:.]{15} tests/progs/tr2_stress[.]c:[0-9]+ +[|] d0 [|] th0[1-8]:flood +[|] [a-z_]+ +[|] +[|] [ 0-9.]{9} [|] [ 0-9.]{9} [|] (stress|      ) {7}[|] ([.][.]i:[0-9]+|label:iter|)$' "$T/u/th.p")"
masked event "$T/u/th.e" > /dev/null && ok "8 threads: every EVENT line is JSON"
want=$( (echo thread_start; for _ in $(seq 2000); do printf 'region_enter\ndata\nregion_leave\n'; done; echo thread_exit) | md5sum)
for i in 1 2 3 4 5 6 7 8; do
	got=$(grep "| th0$i:flood " "$T/u/th.p" | awk -F' [|] ' '{ print $4 }' | tr -d ' ' | md5sum)
	[ "$got" = "$want" ] || echo "th0$i:flood"
done > "$T/th.bad"
expect_eq "8 threads: each thread's events in its own order" "" "$(cat "$T/th.bad")"
{ U GIT_TRACE2_PERF="$T/u/sig.p" $P/tr2_inproc signal; } 2> /dev/null   # no "Terminated" from bash
expect_eq "SIGTERM: the program dies of it" 143 $?
masked perf "$T/u/sig.p" > "$T/sig.m" && same "SIGTERM: the batched region line, then the signal event" \
	"$EXP/inproc-signal.perf" "$T/sig.m"

# SIGTERM handled by the program, 2000 times, landing anywhere in a loop of
# regions (inside the runtime's own write too): no deadlock, no broken
# line, and the signal events of the handled signals (the runtime defers up
# to 8 a thread while it is inside; allowed: one in 100 lost to a busy VM).
out=$(U GIT_TRACE2_PERF="$T/u/sigs.p" timeout 60 $P/tr2_inproc signals 2000)
expect_eq "2000 handled SIGTERMs amid regions: the program ends" "0 handled" "$? ${out%%=*}"
handled=${out#handled=}
signals=$(grep -c '| signal       |' "$T/u/sigs.p")
expect_eq "2000 handled SIGTERMs: a signal event for each (those that land inside the runtime follow its call)" 1 \
	"$(awk -v s="$signals" -v h="$handled" 'BEGIN { print (s <= h && s >= h * 0.99) ? 1 : s " of " h }')"
expect_eq "2000 handled SIGTERMs: every line whole" 0 \
	"$(grep -cvE '^[0-9:.]{15} [a-z0-9/_.]+:[0-9]+ +[|] d0 [|] main +[|] [a-z_]+ +[|] +[|] [ 0-9.]{9} [|] [ 0-9.]{9} [|] [a-z ]{12} [|] ([.]*(label:busy|signo:15|code:0)|inproc-1.0|[^ ]*tr2_inproc signals 2000)$' "$T/u/sigs.p")"

# libtr2.a shows a program only the trace2__* names: one that defines its
# own git-like tr2_* names (as git's trace2/ does) links with it and runs
# its targets.
cat > "$T/gitlike.c" <<'EOF2'
#include <trace2.h>
int tr2_tgt_perf = 1, tr2_sid_depth = 2;
int tr2_dst_open(void) { return 3; }
int main(int argc, const char **argv)
{
	trace2_initialize();
	trace2_cmd_start(argv);
	(void)argc;
	trace2_region_enter("gitlike", "own", 0);
	trace2_region_leave("gitlike", "own", 0);
	return tr2_tgt_perf + tr2_sid_depth + tr2_dst_open() - 6;
}
EOF2
if cc -Iusdt -o "$T/gitlike" "$T/gitlike.c" $B/libtr2.a -pthread 2> "$T/gitlike.err"; then
	chmod a+rx "$T/gitlike"
	U GIT_TRACE2_PERF="$T/u/gitlike.p" "$T/gitlike"
	expect_eq "a program with its own tr2_tgt_perf, tr2_sid_depth, tr2_dst_open links libtr2.a and traces" \
		"0 2" "$? $(grep -c 'region_.*gitlike' "$T/u/gitlike.p")"
else
	expect_eq "a program with its own tr2_* names links libtr2.a" "" "$(head -3 "$T/gitlike.err")"
fi

echo "inproc: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
