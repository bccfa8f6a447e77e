#!/usr/bin/env bash
# Git's own tests through tr2-bpf (issue 25, point 3): a slice of git's test
# suite on the patched git (make git), t0000-t0099 and t1300-t1499 (git's
# basics, init, attributes, run-command, paths, config, refs, reflogs, fsck),
# run twice as git's t/Makefile runs each script (sh tNNNN-name.sh in t/, two
# at a time): untraced, then while one tr2-bpf -a traces every git process of
# it (started before, stopped after, EVENT lines to a file).
#
#   tests/git/suite.sh [BUILD [GITDIR]]  (default build and BUILD/git, what
#                                    make git built; needs root and BPF, else
#                                    SKIP; make test-git-suite)
#   GITSUITE_T="t0000-basic.sh ..." runs these scripts instead of the slice;
#   GITSUITE_JOBS=N scripts at a time (default 2); GITSUITE_KEEP=1 keeps the
#   scratch directory (each script's output, tr2-bpf's messages and trace).
#
# Checks: every script of both runs ends with its TAP plan; each script's
# results (its exit status; its passed, failed, skipped, known-broken and
# fixed tests; which failed) traced equal untraced; tr2-bpf's last line is
# "tr2-bpf: N events, 0 lost" with N > 0, its exit status 0, and no process
# went on without waiting for it; its RSS at the end is within 4 MB of its RSS
# after the first tenth of the scripts.  Scripts that fail untraced too fail
# for this machine, not for tr2: they are named, and only their equality is
# checked.
# tr2-bpf runs with --cgroup on a cgroup of the traced run where a cgroup v2
# directory can be made, so that the trace and its counts are the suite's
# alone (not other programs' of the host).  The last
# line is "gitsuite: N passed, M failed"; the exit status 1 on a failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
tr2bpf=$build/tr2-bpf
gitdir=$(cd "${2:-$build/git}" && pwd)
t=$gitdir/src/t
jobs=${GITSUITE_JOBS:-2}
rss_slack_kb=4096
pass=0 fail=0
. "$here/../lib.sh"

for f in "$tr2bpf" "$gitdir/bin/git" "$t/helper/test-tool"; do
	[ -x "$f" ] || { echo "gitsuite: no $f (make && make git)" >&2; exit 2; }
done
need_bpf gitsuite "$tr2bpf"

cd "$t" || exit 2
scripts=${GITSUITE_T:-$(ls t00[0-9][0-9]-*.sh t1[34][0-9][0-9]-*.sh)}
nscripts=$(echo $scripts | wc -w)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gitsuite.XXXXXX")
cg="" tracer="" sampler=""
cleanup() {
	[ -n "$sampler" ] && kill "$sampler" 2> /dev/null
	[ -n "$tracer" ] && kill -INT "$tracer" 2> /dev/null && wait "$tracer"
	[ -n "$cg" ] && rmdir "$cg"
	if [ -n "${GITSUITE_KEEP:-}" ]; then echo "gitsuite: keeping $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

# run_slice DIR [CGROUP]: every script, $jobs at a time, its output (TAP on
# stdout, and stderr) in DIR/NAME.out and its exit status in DIR/NAME.rc; in
# CGROUP if one is given.  Prints the seconds it took.
run_slice() {
	local dir=$1 cgroup=${2:-} start=$SECONDS
	mkdir -p "$dir"
	(
		[ -z "$cgroup" ] || echo "$BASHPID" > "$cgroup/cgroup.procs" || exit 2
		printf '%s\n' $scripts |
			xargs -P "$jobs" -I{} sh -c 'sh "$1" > "$2/$1.out" 2>&1; echo $? > "$2/$1.rc"' - {} "$dir"
	)
	echo $((SECONDS - start))
}

# results DIR: one line per script, what its TAP lines say: exit status,
# passed, failed (and which), skipped, known breakages, fixed, and last its
# plan.
results() {
	local s
	for s in $scripts; do
		awk -v name="$s" -v rc="$(cat "$1/$s.rc" 2> /dev/null)" '
			/^1\.\./ { plan = $0 }
			/^ok [0-9]/ { if (/# skip/) skipped++; else if (/# TODO/) fixed++; else passed++ }
			/^not ok [0-9]/ { if (/# TODO known breakage/) broken++; else { failed++; which = which "," $3 } }
			END { printf "%s exit=%s passed=%d failed=%d skipped=%d broken=%d fixed=%d failing=%s plan=%s\n",
				name, rc, passed, failed, skipped, broken, fixed, substr(which, 2), plan }' "$1/$s.out"
	done
}

# totals RESULTS: the sums of a results file, one line.
totals() {
	awk '{ for (i = 3; i <= 7; i++) { split($i, kv, "="); n[kv[1]] += kv[2] } }
		END { printf "%d tests passed, %d failed, %d skipped, %d known breakages, %d fixed\n",
			n["passed"], n["failed"], n["skipped"], n["broken"], n["fixed"] }' "$1"
}

# vmrss PID: the process's resident set in kB.
vmrss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2> /dev/null; }

# ===== untraced ===========================================================
secs_untraced=$(run_slice "$scratch/untraced")
results "$scratch/untraced" > "$scratch/untraced.results"
echo "# untraced: $nscripts scripts in $secs_untraced s: $(totals "$scratch/untraced.results")"
grep -v ' exit=0 .* plan=1\.\.[0-9]' "$scratch/untraced.results" | sed 's/^/# fails untraced too (this machine, not tr2): /'

# ===== traced by tr2-bpf -a ===============================================
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
scope=()
if [ -n "$cg2" ] && mkdir "$cg2/tr2-gitsuite.$$"; then
	cg=$cg2/tr2-gitsuite.$$
	scope=(--cgroup="$cg")
else
	echo "# no cgroup v2 directory of its own: tr2-bpf -a traces every process of the host"
fi
"$tr2bpf" -a "${scope[@]}" -v --event="$scratch/trace.event" > "$scratch/tr2-bpf.out" 2> "$scratch/tr2-bpf.err" &
tracer=$!
for _ in $(seq 200); do grep -q "Ctrl-C to stop" "$scratch/tr2-bpf.err" && break; sleep 0.05; done
ready=$(grep "^tr2-bpf: tracing every process" "$scratch/tr2-bpf.err")
# Its RSS five times a second, with the number of scripts ended then.
(
	while rss=$(vmrss "$tracer"); do
		echo "$(ls "$scratch/traced" 2> /dev/null | grep -c '\.rc$') $rss"
		sleep 0.2
	done
) > "$scratch/rss" &
sampler=$!
secs_traced=$(run_slice "$scratch/traced" "$cg")
rss_end=$(vmrss "$tracer")
kill "$sampler"; wait "$sampler" 2> /dev/null; sampler=""
kill -INT "$tracer"; wait "$tracer"; tracer_rc=$?; tracer=""
results "$scratch/traced" > "$scratch/traced.results"
echo "# traced: $nscripts scripts in $secs_traced s: $(totals "$scratch/traced.results")"

# ===== checks =============================================================
expect_eq "tr2-bpf -a: tracing within 10 s, before the traced run" 1 "$(echo "$ready" | grep -c .)"
expect_eq "untraced: every script ended with its TAP plan" "" \
	"$(grep -v ' plan=1\.\.[0-9]' "$scratch/untraced.results")"
expect_eq "traced: every script ended with its TAP plan" "" \
	"$(grep -v ' plan=1\.\.[0-9]' "$scratch/traced.results")"
if diff "$scratch/untraced.results" "$scratch/traced.results" > "$scratch/results.diff"; then
	ok "traced results equal untraced, script by script ($nscripts scripts)"
else
	bad "traced results equal untraced, script by script ($nscripts scripts)" "$(cat "$scratch/results.diff")"
fi
summary=$(tail -1 "$scratch/tr2-bpf.err")
events=$(echo "$summary" | sed -n 's/^tr2-bpf: \([0-9]*\) events, 0 lost$/\1/p')
if [ -n "$events" ] && [ "$events" -gt 0 ]; then
	ok "tr2-bpf: \"$summary\""
else
	bad "tr2-bpf: its last line is \"N events, 0 lost\" with N > 0" "got: $summary"
fi
expect_eq "tr2-bpf: exit status 0" 0 "$tracer_rc"
expect_eq "tr2-bpf: no process went on without waiting for it" "" \
	"$(grep 'went on without waiting' "$scratch/tr2-bpf.err")"
first=$(( nscripts >= 20 ? nscripts / 10 : 1 ))
rss_first=$(awk -v n=$first '$1 >= n { print $2; exit }' "$scratch/rss")
rss_peak=$(awk '$2 > m { m = $2 } END { print m }' "$scratch/rss")
if [ -n "$rss_first" ] && [ -n "$rss_end" ] && [ $((rss_end - rss_first)) -le $rss_slack_kb ]; then
	ok "tr2-bpf: RSS flat: $rss_first kB after $first scripts, $rss_end kB at the end (peak $rss_peak kB)"
else
	bad "tr2-bpf: RSS flat (at most $rss_slack_kb kB more at the end than after $first scripts)" \
		"after $first scripts: ${rss_first:-?} kB, at the end: ${rss_end:-?} kB, peak ${rss_peak:-?} kB"
fi
grep -E '^tr2-bpf: (held|kept)' "$scratch/tr2-bpf.err" | sed 's/^/# /'
python3 -c 'import collections, json, sys
last = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    last[e["sid"]] = e["event"]
ends = collections.Counter(last.values()).most_common()
print("# trace: %d processes (sids); their last event: %s" % (len(last), ", ".join("%s %d" % e for e in ends)))' \
	"$scratch/trace.event"
echo "gitsuite: $pass passed, $fail failed"
[ "$fail" = 0 ]
