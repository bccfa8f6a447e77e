#!/usr/bin/env bash
# tr2-bpf -a: every process on the host that carries a tr2 runtime, and the
# filters that narrow any mode.  Each traced process's whole trace is
# counted exactly, in a directory destination (one EVENT file per process):
# a process started after tr2-bpf from its first event ("version") to its
# last ("atexit"); one running before it from the attach on.  The processes:
# dynamically linked (libtr2.so), statically linked (libtr2.a) with a child,
# a copy only its own mount namespace can see, a program built while
# tr2-bpf runs.  Then --cgroup, --comm and --uid.
# Needs root and BPF; says so and skips without.  make test-host.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
BPF=$B/tr2-bpf
P=$(realpath $B/tests/progs)
T=$(mktemp -d /tmp/tr2-host.XXXXXX)
CG=""
cleanup() {
	[ -n "$CG" ] && { rmdir "$CG/sub" "$CG" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0

. tests/lib.sh

if [ "$(id -u)" != 0 ]; then
	echo "host: SKIP: not root; these tests load BPF programs"
	echo "host: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! out=$($BPF -- /bin/true 2>&1); then
	case "$out" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*)
		echo "host: SKIP: BPF unavailable here: $out"
		echo "host: 0 passed, 0 failed, 1 skipped"
		exit 0;;
	esac
	echo "FAIL tr2-bpf cannot trace /bin/true: $out"
	echo "host: 0 passed, 1 failed"
	exit 1
fi

wait_for() {
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# events DIR PID: the event names of process PID's file in DIR, one line.
# A process's file is named after its sid, which ends in P<pid in hex>.
events() {
	local f
	f=$(ls "$1" | grep -i "P$(printf %08x "$2")$")
	[ -n "$f" ] && python3 -c 'import json, sys
print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$1/$f"
}

stop_tracer() {
	kill -INT $tracer
	wait $tracer
}

# ===== processes running before, started after ============================
rm -f "$T/before.fifo"; mkfifo "$T/before.fifo"
$P/tr2_leaf-gcc-O2 --wait-stdin 3 < "$T/before.fifo" > "$T/before.out" &
before=$!
exec {before_fd}> "$T/before.fifo"
wait_for "$T/before.out" waiting
start_tracer "$T/a"
expect_true() { local name=$1 detail=$2; shift 2; if "$@"; then ok "$name"; else bad "$name" "$detail"; fi; }
expect_true "-a: says what it traces" "$(cat "$T/tracer.err")" \
	grep -q "^tr2-bpf: tracing every process with a tr2 runtime ([0-9]* of [0-9]* running now, [0-9]* runtimes); Ctrl-C to stop$" "$T/tracer.err"
echo go >&$before_fd
exec {before_fd}>&-
wait $before

# dynamic (libtr2.so), one after another from a shell (EVENT's nesting
# limit, 2, leaves out the data inside the second region)
sh -c "$P/tr2_shapes child & echo \$! > $T/c1; wait; $P/tr2_shapes child & echo \$! > $T/c2; wait"
# static (libtr2.a), with a traced child of its own
$P/tr2_allapi > /dev/null & static=$!; wait $static
# a copy that only its own mount namespace sees, at a path the host lacks
mkdir -p "$T/ns"
unshare --mount --propagation private sh -c "mount -t tmpfs none $T/ns && cp $P/tr2_leaf-gcc-O2 $T/ns/leaf &&
	$T/ns/leaf 2 > /dev/null & echo \$! > $T/nspid; wait" 
# a program built while tr2-bpf runs: another file, another inode
cc -O2 -Iusdt -o "$T/built" tests/progs/tr2_leaf.c $B/libtr2.a
"$T/built" 2 > /dev/null & built=$!
wait $built
sleep 0.3
stop_tracer

# tr2_leaf N in EVENT: per round data (intmax), data (string), data_json,
# a region, printf (counters and timers are summed: their totals at exit)
want_leaf() {
	local n=$1 s="version start" i
	for i in $(seq "$n"); do s="$s data data data_json region_enter region_leave printf"; done
	echo "$s exit timer counter atexit"
}
got=$(events "$T/a" $before)
expect_eq "-a, a process running before tr2-bpf: its events from the attach on, then atexit" \
	"$(want_leaf 3 | sed 's/^version start //')" "$got"
for c in c1 c2; do
	expect_eq "-a, a dynamically linked process started later: version first, atexit last ($c)" \
		"version start cmd_name region_enter region_enter region_leave region_leave exit atexit" \
		"$(events "$T/a" "$(cat $T/$c)")"
done
got=$(events "$T/a" $static)
expect_eq "-a, a statically linked process started later: version first" version "${got%% *}"
expect_eq "-a, a statically linked process started later: atexit last" atexit "${got##* }"
expect_eq "-a, a statically linked process: its traced child has its file too" 2 \
	"$(grep -l "$(printf %08x $static)" "$T"/a/* | wc -l)"
got=$(events "$T/a" "$(cat $T/nspid)")
expect_eq "-a, a process in its own mount namespace, a copy the host cannot see: whole trace" \
	"$(want_leaf 2)" "$got"
expect_eq "-a, a program built while tr2-bpf runs: whole trace" \
	"$(want_leaf 2)" "$(events "$T/a" $built)"
expect_true "-a: the summary line, nothing lost" "$(tail -1 "$T/tracer.err")" \
	grep -q "^tr2-bpf: [0-9]* events, 0 lost$" <(tail -1 "$T/tracer.err")

# ===== --cgroup: a cgroup v2 directory, also its cgroups made later =======
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CG2" ]; then
	echo "skip --cgroup: no cgroup v2 hierarchy mounted"
else
	CG=$CG2/tr2-host-test.$$
	mkdir "$CG"
	start_tracer "$T/cg" --cgroup="$CG"
	mkdir "$CG/sub"
	sh -c "echo \$\$ > $CG/cgroup.procs; exec $P/tr2_leaf-gcc-O2 1 > /dev/null" & in=$!
	sh -c "echo \$\$ > $CG/sub/cgroup.procs; exec $P/tr2_leaf-gcc-O2 1 > /dev/null" & insub=$!
	$P/tr2_leaf-gcc-O2 1 > /dev/null & out=$!
	wait $in $insub $out
	sleep 0.3
	stop_tracer
	expect_eq "--cgroup: a process in it, whole trace" "$(want_leaf 1)" "$(events "$T/cg" $in)"
	expect_eq "--cgroup: a process in a cgroup made below it after the start, whole trace" \
		"$(want_leaf 1)" "$(events "$T/cg" $insub)"
	expect_eq "--cgroup: a process outside it, nothing" "" "$(events "$T/cg" $out)"
	$BPF -a --cgroup=/tmp --duration=1 > /dev/null 2> "$T/cgbad.err"
	expect_eq "--cgroup: not a cgroup v2 directory: one line" \
		"tr2-bpf: bad --cgroup '/tmp': not a cgroup v2 directory" "$(cat "$T/cgbad.err")"
fi

# ===== --comm and --uid ===================================================
cp $P/tr2_leaf-gcc-O2 "$T/leaf-one"; cp $P/tr2_leaf-gcc-O2 "$T/leaf-two"
chmod 755 "$T" "$T/leaf-one" "$T/leaf-two"
start_tracer "$T/comm" --comm=leaf-one,other
"$T/leaf-one" 1 > /dev/null & one=$!
"$T/leaf-two" 1 > /dev/null & two=$!
wait $one $two
sleep 0.3
stop_tracer
expect_eq "--comm: a process of that name, whole trace" "$(want_leaf 1)" "$(events "$T/comm" $one)"
expect_eq "--comm: a process of another name, nothing" "" "$(events "$T/comm" $two)"

start_tracer "$T/uid" --uid=nobody
setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/leaf-one" 1 > /dev/null & asnobody=$!
"$T/leaf-one" 1 > /dev/null & asroot=$!
wait $asnobody $asroot
sleep 0.3
stop_tracer
expect_eq "--uid: a process of that user, whole trace" "$(want_leaf 1)" \
	"$(events "$T/uid" $asnobody)"
expect_eq "--uid: a process of another user, nothing" "" "$(events "$T/uid" $asroot)"
$BPF -a --uid=no-such-user-here > /dev/null 2> "$T/uidbad.err"
expect_eq "--uid: an unknown user: one line" "tr2-bpf: bad --uid 'no-such-user-here': no such user" \
	"$(cat "$T/uidbad.err")"
# the filters narrow -- CMD too
$BPF --perf="$T/cmd.perf" --comm=nothing-like-it -- $P/tr2_leaf-gcc-O2 1 > /dev/null 2> "$T/cmd.err"
expect_eq "--comm narrows -- CMD: nothing traced" "tr2-bpf: 0 events, 0 lost" "$(tail -1 "$T/cmd.err")"

echo "host: $pass passed, $fail failed"
[ "$fail" = 0 ]
