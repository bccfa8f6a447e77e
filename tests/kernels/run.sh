#!/bin/sh
# tests/kernels/run.sh BUILD (make test-kernels): the end-to-end suites that
# load BPF, run in QEMU guests that boot Debian's own kernels 5.10, 6.1 and
# 6.12 (tests/kernels/fetch.sh) with this machine's files
# (tests/kernels/vm.sh), each on the tree built in BUILD.  One line per
# kernel with its pass and fail counts, the suites' logs in
# BUILD/kernels/logs/VERSION/, and last the totals; status 1 when a suite
# failed on any kernel.
#
# The guests run under emulation (TCG: KVM guests hang on these machines),
# about ten times slower than this machine: each kernel runs the suites
# that its differences reach, and more where a kernel is the
# README's own (Debian 12: 6.1).  KERNEL_SUITES="SUITE..." runs those on
# every kernel instead.  The guests run two at a time (two lanes), and get
# KERNELS_BUDGET seconds from the start (default 2700): a guest is stopped
# when it runs out, and a kernel left without time fails, so that a stuck
# guest ends the run well inside CI's 90 minutes, with a reason.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}

# What differs on each kernel (tr2-bpf(1), KERNELS), and the suites that
# exercise it:
#  - run (the modes, each event kind, holds and objects), batch (the
#    buffers, exec and exit drains), sched (the scheduler's tracepoints, a
#    region's time split): every kernel;
#  - reliability (trees of processes, the anchors before 6.12), host (-a,
#    per-CPU enables), summary: 6.1, the README's own kernel.
# What is left out runs on the host: harm (its liveness checks, held
# processes timed to 0.2 s, cannot hold under emulation), concurrent and
# record (tr2-bpf's user side, the same on every kernel).  Emulated guests
# take about ten times the host's time; this choice keeps make test well
# inside CI's 90 minutes.
suites_for() {
	if [ -n "${KERNEL_SUITES:-}" ]; then
		echo "$KERNEL_SUITES"
		return
	fi
	case $1 in
	5.10.*) echo run batch sched ;;
	6.1.*) echo run batch reliability sched host summary ;;
	*) echo run batch sched ;;
	esac
}

if ! command -v qemu-system-x86_64 > /dev/null || [ ! -r /bin/busybox ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "kernels: SKIP: no qemu-system-x86_64 or busybox (scripts/install-deps.sh installs them)"
		echo "kernels: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	echo "FAIL kernels: no qemu-system-x86_64 or /bin/busybox: run scripts/install-deps.sh"
	echo "kernels: 0 passed, 1 failed"
	exit 1
fi
kernels=$(tests/kernels/fetch.sh "$build/kernels") || {
	echo "FAIL kernels: could not fetch Debian's kernels"
	echo "kernels: 0 passed, 1 failed"
	exit 1
}
deadline=$(($(date +%s) + ${KERNELS_BUDGET:-2700}))
# run_kernel KDIR: one guest; its lines, then "kernels: VER: P passed, F
# failed in S s", in BUILD/kernels/logs/VER.result.
run_kernel() {
	k=$1 ver=$(basename "$1")
	logs=$build/kernels/logs/$ver
	rm -rf "$logs"
	mkdir -p "$logs"
	t0=$(date +%s)
	left=$((deadline - t0))
	if [ $left -lt 60 ]; then
		echo "FAIL kernel $ver: not run, KERNELS_BUDGET (${KERNELS_BUDGET:-2700} s) spent"
		echo "kernels: $ver: 0 passed, 1 failed in 0 s"
		return
	fi
	[ $left -lt "${VM_TIMEOUT:-2400}" ] || left=${VM_TIMEOUT:-2400}
	# shellcheck disable=SC2046
	VM_TIMEOUT=$left VM_IO=$logs tests/kernels/vm.sh "$k" tests/kernels/guest.sh $(suites_for "$ver") > "$logs.out" 2>&1
	rc=$?
	t1=$(date +%s)
	grep -E '^(kernel |    )' "$logs.out"
	# the guest's own totals (not its version in the pattern: 6.12.117+deb12 has a +)
	last=$(grep -E '^kernel [^ ]+: [0-9]+ passed, [0-9]+ failed$' "$logs.out" | tail -1)
	p=$(echo "$last" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$last" | sed -n 's/.* \([0-9]*\) failed$/\1/p')
	if [ -z "$last" ]; then
		echo "FAIL kernel $ver: the guest ended without its results (status $rc); its console:"
		tail -30 "$logs.out" | sed 's/^/    /'
		f=1
	fi
	echo "kernels: $ver: ${p:-0} passed, ${f:-0} failed in $((t1 - t0)) s"
}
# Two lanes of guests at once, each guest one host thread (vm.sh): 6.1,
# which runs the most suites, in one; the others in turn in the other.
mkdir -p "$build/kernels/logs"
lane() { for k in "$@"; do run_kernel "$k" > "$build/kernels/logs/$(basename "$k").result" 2>&1; done; }
one= two=
for k in $kernels; do
	case $(basename "$k") in
	6.1.*) one="$one $k" ;;
	*) two="$two $k" ;;
	esac
done
# shellcheck disable=SC2086
lane $one &
# shellcheck disable=SC2086
lane $two &
wait
pass=0 fail=0
for k in $kernels; do
	r=$build/kernels/logs/$(basename "$k").result
	cat "$r"
	p=$(sed -n 's/^kernels: .*: \([0-9]*\) passed, .*/\1/p' "$r")
	f=$(sed -n 's/^kernels: .* passed, \([0-9]*\) failed in .*/\1/p' "$r")
	[ -n "$f" ] || f=1
	pass=$((pass + ${p:-0}))
	fail=$((fail + f))
done
echo "kernels: $pass passed, $fail failed"
[ "$fail" = 0 ]
