#!/bin/sh
# tests/kernels/guest.sh SUITE...: runs in a guest of tests/kernels/vm.sh,
# at the top of the tree: each end-to-end suite (tests/e2e/SUITE.sh), its
# whole output kept in /tmp/io/SUITE.tlog (vm.sh's VM_IO on the host; each
# line after the seconds since the suite began), and
# for each one line on standard output,
#   kernel KVER: SUITE: N passed, M failed (S s)
# with its failures below it; last, the totals as "N passed, M failed".
# Exits 1 when a suite failed or said nothing.  A suite still running after
# SUITE_TIMEOUT seconds (default 900: each takes 200 to 600 here) is ended,
# with its process group, and counts as failed: the guest goes on with the
# next one rather than spending the whole run.
pass=0 fail=0
kver=$(uname -r)
for s in "$@"; do
	t0=$(date +%s)
	# each line with the seconds since the suite began: where the time goes
	{ timeout -k 10 "${SUITE_TIMEOUT:-900}" tests/e2e/"$s".sh 2>&1; echo $? > /tmp/"$s".rc; } | bash -c 'while IFS= read -r l; do echo "$SECONDS $l"; done' > /tmp/io/"$s".tlog
	rc=$(cat /tmp/"$s".rc)
	cut -d' ' -f2- /tmp/io/"$s".tlog > /tmp/"$s".log
	t1=$(date +%s)
	line=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' /tmp/"$s".log | tail -1)
	p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$line" ] || { [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; }; then
		f=$((${f:-0} + 1))   # no summary line, or a status the counts do not explain
		if [ "$rc" = 124 ]; then line="$s: ended after ${SUITE_TIMEOUT:-900} s, $line"; else line="$s: status $rc, $line"; fi
		tail -20 /tmp/"$s".log | sed 's/^/    /'
	fi
	pass=$((pass + ${p:-0}))
	fail=$((fail + f))
	echo "kernel $kver: ${line#*: } ($((t1 - t0)) s): $s"
	grep '^FAIL' /tmp/"$s".log | head -20 | sed 's/^/    /'
done
echo "kernel $kver: $pass passed, $fail failed"
[ "$fail" = 0 ]
