#!/bin/sh
# git's own Trace2 tests, t0210 (NORMAL), t0211 (PERF) and t0212 (EVENT), on
# the patched git (make git), twice: as they are, then with tr2-bpf writing
# every trace file they read in place of git's targets; and between the two
# the series' own t0214 (tr2-bpf's EVENT lines against git's), which must
# not skip.
#
#   tests/git/t021x.sh [BUILD [GITDIR]]   (default build and BUILD/git, what
#                                     make git built; needs root and BPF, else
#                                     SKIP)
#
# The second run uses copies of the three scripts whose one change is the line
# that puts t/helper first in PATH (and the prerequisite PTHREAD, which git
# 2.39's thread tests want and test-lib never sets, so that they run there
# too: they pass on git's targets with it): tests/git/wrap/ goes first, where git
# and test-tool are tests/git/wrap/tr2-bpf-targets, which turns the targets
# the command asks for (GIT_TRACE2=PATH, the config's trace2.normalTarget,
# ...) into tr2-bpf --normal=PATH ... -- CMD and turns git's own off.  The
# expectations are unchanged.  Prints git's TAP lines, then, per script and
# run, "ok" or the failures, and tr2-bpf's event and loss counts; exits 1 if
# a run failed or tr2-bpf lost an event.
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
gitdir=$(cd "${2:-$build/git}" && pwd)
t=$gitdir/src/t
[ -x "$t/helper/test-tool" ] || { echo "t021x: no $gitdir/src (make git)" >&2; exit 2; }
. "$here/../lib.sh"
need_bpf t021x "$build/tr2-bpf"
scripts="t0210-trace2-normal.sh t0211-trace2-perf.sh t0212-trace2-event.sh"
rc=0

for s in $scripts; do
	echo "# $s, git's targets"
	(cd "$t" && sh "$s") || rc=1
done

# The series' own test, t0214: tr2-bpf against git's EVENT target.  As root
# with BPF it must run every test, none skipped.
echo "# t0214-trace2-usdt.sh, the series' own"
out=$(cd "$t" && TR2_BPF="$build/tr2-bpf" sh t0214-trace2-usdt.sh) || rc=1
echo "$out"
if echo "$out" | grep -q '^ok .* # skip'; then
	echo "t021x: t0214 skipped tests where it must run them"
	rc=1
fi

export TR2_WRAP_BPF="$build/tr2-bpf" TR2_WRAP_BUILD="$gitdir/src"
export TR2_WRAP_LOG="$gitdir/t021x-tr2-bpf.log"
: > "$TR2_WRAP_LOG"
for s in $scripts; do
	copy=${s%.sh}-tr2bpf.sh
	# git 2.39's thread tests want a prerequisite PTHREAD that test-lib
	# never sets (it sets PTHREADS): set it, so that they run here.
	sed -e "s|^PATH=\"\$TTDIR:\$PATH\"|PATH=\"$here/wrap:\$TTDIR:\$PATH\"|" \
	    -e 's|^\. \./test-lib\.sh$|&\ntest_set_prereq PTHREAD|' "$t/$s" > "$t/$copy"
	grep -q "^PATH=\"$here/wrap:" "$t/$copy" || { echo "t021x: no PATH line to change in $s" >&2; exit 2; }
	echo "# $s, tr2-bpf's targets"
	(cd "$t" && sh "$copy") || rc=1
	rm -f "$t/$copy"
done
runs=$(grep -c '^tr2-bpf: [0-9]* events, [0-9]* lost$' "$TR2_WRAP_LOG")
lost=$(sed -n 's/^tr2-bpf: [0-9]* events, \([0-9]*\) lost$/\1/p' "$TR2_WRAP_LOG" | awk '{n += $1} END {print n + 0}')
echo "# tr2-bpf ran $runs times, $lost events lost (its messages: $TR2_WRAP_LOG)"
[ "$lost" = 0 ] || rc=1
exit $rc
