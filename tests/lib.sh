# tests/lib.sh: the result helpers every test script shares, sourced once it
# has cd'd to the top of the tree and set its counters (pass, fail).
#   ok NAME                  a check passed
#   bad NAME [DETAIL...]     a check failed; DETAIL lines indented below it
#   expect_eq NAME WANT GOT  the two strings are equal
#   same NAME EXPECTED ACTUAL  whole files, line for line (the diff in
#                            $T/diff); with UPDATE=--update, ACTUAL becomes
#                            the expected file instead
#   cmd_of TRACER            the pids of tr2-bpf TRACER's children but its
#                            guard (tr2-guard): -- CMD's process
#   wait_for FILE TEXT       until FILE holds TEXT (10 s at most); status 1 if never
#   start_tracer DIR OPTIONS...  $BPF -a OPTIONS writing one EVENT file per
#                            process into DIR, in the background; its output in
#                            $T/tracer.out and .err; $tracer set once it traces
#   need_bpf SUITE TR2BPF    ends the script with a SKIP line and SUITE's
#                            summary line (status 0) when not root or when the
#                            kernel offers no BPF; a TR2BPF that cannot trace
#                            /bin/true otherwise is a failure (status 1)
#   slow N                   N scaled for a slow machine: TR2_TEST_SLOW (default
#                            1) times N, for the suites' time bounds; the QEMU
#                            guests of tests/kernels emulate the CPU and set it
#   fewer N                  N divided by TR2_TEST_SLOW (at least 1): how many
#                            rounds of a stress loop a slow machine runs
ok() { pass=$((pass + 1)); echo "ok   $1"; }
slow() { echo $(($1 * ${TR2_TEST_SLOW:-1})); }
# emulated: tr2-bpf's guard lets a held process go after 0.9 s times as much
if [ -n "${TR2_TEST_SLOW:-}" ]; then export TR2_BPF_TEST_HOLD_MAX_MS=$(slow 900); fi
fewer() { local n=$(($1 / ${TR2_TEST_SLOW:-1})); echo $((n > 0 ? n : 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/     /'; }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "want: $2" "got:  $3"; fi; }
same() {
	if [ "${UPDATE:-}" = --update ]; then cp "$3" "$2"; ok "$1 (updated)"; return; fi
	if diff -u "$2" "$3" > "$T/diff"; then ok "$1"; else bad "$1" "$(head -40 "$T/diff")"; fi
}
wait_for() {
	for _ in $(seq 1000); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
	return 1
}
start_tracer() {
	local dir=$1; shift
	mkdir -p "$dir"
	# emptied here, not by the background job's redirection: wait_for must
	# not find the last tracer's line before that job has run
	: > "$T/tracer.err"
	$BPF -a --event="$dir" "$@" > "$T/tracer.out" 2> "$T/tracer.err" &
	tracer=$!
	wait_for "$T/tracer.err" "tracing every process"
}
cmd_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 != "tr2-guard" { print $1 }'; }
need_bpf() {
	local out
	if [ "$(id -u)" != 0 ]; then
		echo "$1: SKIP: not root; these tests load BPF programs"
		echo "$1: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	out=$("$2" -- /bin/true 2>&1) && return
	# A program of ours that the verifier refuses is a failure, not a skip.
	case "$out" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*)
		echo "$1: SKIP: BPF unavailable here: $out"
		echo "$1: 0 passed, 0 failed, 1 skipped"
		exit 0;;
	esac
	echo "FAIL tr2-bpf cannot trace /bin/true: $out"
	echo "$1: 0 passed, 1 failed"
	exit 1
}
