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
# that its differences reach, and the whole set where a kernel is the
# README's own (Debian 12: 6.1).  KERNEL_SUITES="SUITE..." runs those on
# every kernel instead.  All the guests together get KERNELS_BUDGET seconds
# (default 3000, about twice what they take in CI): a guest is stopped when
# it runs out, and a kernel left without time fails, so that a stuck guest
# ends the run well inside CI's 90 minutes, with a reason.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}

# What differs on each kernel (tr2-bpf(1), KERNELS), and the suites that
# exercise it:
#  - run (the modes, each event kind, holds and objects), batch (the
#    buffers, exec and exit drains), reliability (trees of processes,
#    anchors before 6.12), sched (the scheduler's tracepoints, a region's
#    time split): every kernel;
#  - harm, concurrent, host, summary, record: 6.1, and host on 5.10 too
#    (thread state in a hash map, -a's per-CPU enables).  harm's liveness
#    checks (held processes timed to 0.2 s) run on the host only: emulation
#    cannot keep their bounds, and the guard they test is the same on every
#    kernel.
suites_for() {
	if [ -n "${KERNEL_SUITES:-}" ]; then
		echo "$KERNEL_SUITES"
		return
	fi
	case $1 in
	5.10.*) echo run batch reliability sched host ;;
	6.1.*) echo run batch reliability sched harm concurrent host summary record ;;
	*) echo run batch reliability sched ;;
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
pass=0 fail=0
deadline=$(($(date +%s) + ${KERNELS_BUDGET:-3000}))
for k in $kernels; do
	ver=$(basename "$k")
	logs=$build/kernels/logs/$ver
	rm -rf "$logs"
	mkdir -p "$logs"
	t0=$(date +%s)
	left=$((deadline - t0))
	if [ $left -lt 60 ]; then
		echo "FAIL kernel $ver: not run, KERNELS_BUDGET (${KERNELS_BUDGET:-3000} s) spent"
		fail=$((fail + 1))
		continue
	fi
	[ $left -lt "${VM_TIMEOUT:-2400}" ] || left=${VM_TIMEOUT:-2400}
	# shellcheck disable=SC2046
	VM_TIMEOUT=$left VM_IO=$logs tests/kernels/vm.sh "$k" tests/kernels/guest.sh $(suites_for "$ver") > "$logs.out" 2>&1
	rc=$?
	t1=$(date +%s)
	grep -E '^(kernel |    )' "$logs.out"
	last=$(grep -E "^kernel $ver: [0-9]+ passed, [0-9]+ failed$" "$logs.out" | tail -1)
	p=$(echo "$last" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$last" | sed -n 's/.* \([0-9]*\) failed$/\1/p')
	if [ -z "$last" ]; then
		echo "FAIL kernel $ver: the guest ended without its results (status $rc); its console:"
		tail -30 "$logs.out" | sed 's/^/    /'
		f=1
	fi
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	echo "kernels: $ver: ${p:-0} passed, ${f:-0} failed in $((t1 - t0)) s"
done
echo "kernels: $pass passed, $fail failed"
[ "$fail" = 0 ]
