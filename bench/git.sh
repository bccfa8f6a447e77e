#!/usr/bin/env bash
# bench/git.sh BUILD: section 10 of BENCHMARKS.md, what tr2 costs git
# (markdown on stdout, progress on stderr).  Git 2.39.5 built twice from the
# same source with the same flags: with tr2's series and USE_TR2
# (BUILD/git, `make git`) and stock (BUILD/git-stock, `make git-stock`).
#
# Detached (no tracer), patched against stock: GITBENCH_STARTUPS
# `git rev-parse --git-dir` start-ups, `git status` in a worktree of
# GITBENCH_FILES files, `git log --oneline` over GITBENCH_COMMITS commits.
# Traced: the start-ups and a file:// clone of the commits' repository,
# patched under one `tr2-bpf -a --event=/dev/null` (started before the
# round's traced runs) against patched untraced; beside them git's own
# in-process EVENT target (GIT_TRACE2_EVENT=/dev/null) on stock git against
# stock untraced.  The commands run one after another from this shell, timed
# in wall time and in their CPU time (user + system, the shell's `times`);
# in each round the detached configurations alternate in blocks, and the
# traced and untraced runs are adjacent; ratios of the medians over the
# rounds.  GITBENCH_ROUNDS, GITBENCH_STARTUPS, GITBENCH_FILES,
# GITBENCH_COMMITS, GITBENCH_STATUS_N, GITBENCH_LOG_N and GITBENCH_CLONE_N
# set the sizes.
#
# TR2_SYSCALL_NS and TR2_EVENT_NS (getppid() and an event under tr2-bpf,
# section 2 of the same run) are set by bench/run.sh; goal rows are
# appended to $TR2_GOALS when set.  Needs root (tr2-bpf).
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd)
PATCHED=$BUILD/git/bin/git
STOCK=$BUILD/git-stock/bin/git
BPF=$BUILD/tr2-bpf
ROUNDS=${GITBENCH_ROUNDS:-7}
STARTUPS=${GITBENCH_STARTUPS:-2000}   # rev-parse start-ups per run
FILES=${GITBENCH_FILES:-10000}        # files of the status worktree
COMMITS=${GITBENCH_COMMITS:-10000}    # commits of the log and clone repository
STATUS_N=${GITBENCH_STATUS_N:-20}     # git status per run
LOG_N=${GITBENCH_LOG_N:-10}           # git log per run
CLONE_N=${GITBENCH_CLONE_N:-3}        # clones per run
GOALS=${TR2_GOALS:-/dev/null}
SYSCALL_NS=${TR2_SYSCALL_NS:-} EVENT_NS=${TR2_EVENT_NS:-}
case $SYSCALL_NS in *[!0-9.]*) SYSCALL_NS='' ;; esac   # section 2's "failed"
case $EVENT_NS in *[!0-9.]*) EVENT_NS='' ;; esac
TMP=$(mktemp -d /tmp/tr2-git-bench.XXXXXX)
TRACER='' CG='' CG_WAS=''
cleanup() {
	[ -z "$TRACER" ] || kill -TERM "$TRACER" 2>/dev/null
	# this shell back into its cgroup, and its own removed
	[ -z "$CG" ] || { echo $$ >"$CG_WAS/cgroup.procs"; rmdir "$CG"; }
	rm -rf "$TMP"
}
trap cleanup EXIT
SAY=git START=$(date +%s)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# What tr2-bpf -a traces: this script's processes alone, in a cgroup v2 of
# their own (others' instrumented programs on this shared machine, git
# included, stay out of the events counted); without cgroup v2, git and the
# upload-pack a file:// clone starts, whoever runs them.
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG_WAS=$CG2$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -n "$CG2" ] && mkdir "$CG2/tr2-git-bench.$$" && echo $$ >"$CG2/tr2-git-bench.$$/cgroup.procs"; then
	CG=$CG2/tr2-git-bench.$$ FILTER="--cgroup=$CG" FILTER_TEXT=--cgroup=DIR FILTER_WHY=", DIR this script's own cgroup v2,"
else
	FILTER=--comm=git,git-upload-pack FILTER_TEXT=$FILTER FILTER_WHY=" (no cgroup v2 here: others' git processes too),"
fi

for g in "$PATCHED" "$STOCK"; do
	[ -x "$g" ] || { echo "bench/git.sh: no $g: run make git git-stock" >&2; exit 1; }
done
# Git's own configuration and targets stay out: no system or global file,
# no GIT_TRACE2* of the caller's.
for v in $(env | sed -n 's/^\(GIT_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export HOME=$TMP/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"

# The repositories, made once with stock git: COMMITS commits by
# fast-import (each changes one of 1 000 files in 100 directories) in a
# bare repository, and a worktree of FILES files (100 directories)
# committed once, its files older than its index so that no entry is racily
# clean (status would read every such file again at every run).
say "repositories: $COMMITS commits (fast-import), a worktree of $FILES files"
REPO=$TMP/commits WT=$TMP/files CLONE=$TMP/clone
"$STOCK" init -q --bare -b master "$REPO"
awk -v n="$COMMITS" 'BEGIN { for (i = 1; i <= n; i++) {
	msg = "commit " i; body = i "\n"
	printf "commit refs/heads/master\ncommitter C O Mitter <c@example.com> %d +0000\ndata %d\n%s\n", 1600000000 + i, length(msg), msg
	printf "M 644 inline d%02d/f%d\ndata %d\n%s\n", i % 100, i % 1000, length(body), body } }' |
	"$STOCK" -C "$REPO" fast-import --quiet
awk -v n="$FILES" -v wt="$WT" 'BEGIN { for (i = 0; i < n; i++) {
	d = sprintf("%s/d%02d", wt, i % 100)
	if (i < 100) system("mkdir -p " d)
	f = d "/f" i; print i > f; close(f) } }'
find "$WT" -type f -exec touch -d @1600000000 {} +
"$STOCK" -C "$WT" init -q
"$STOCK" -C "$WT" add -A
GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com \
	"$STOCK" -C "$WT" commit -qm files
if [ "$("$STOCK" -C "$REPO" rev-list --count master)" != "$COMMITS" ] ||
   [ "$("$STOCK" -C "$WT" ls-files | wc -l)" != "$FILES" ] ||
   [ -n "$("$STOCK" -C "$WT" status --porcelain)" ]; then
	echo "bench/git.sh: the repositories are not as made" >&2
	exit 1
fi
cd "$WT" || exit 1

# Timing, in this shell (its `times` counts the children it waits for):
# cpu_now sets CPU_MS, this shell's children's user + system time so far,
# in ms, without a fork.
cpu_now() {
	local l
	times >"$TMP/times"
	mapfile -t l <"$TMP/times"
	[[ ${l[1]} =~ ^([0-9]+)m([0-9]+)\.([0-9]+)s\ ([0-9]+)m([0-9]+)\.([0-9]+)s$ ]] || { CPU_MS=0; return; }
	local m=("${BASH_REMATCH[@]}")
	CPU_MS=$(( (60 * m[1] + 10#${m[2]} + 60 * m[4] + 10#${m[5]}) * 1000 + 10#${m[3]} + 10#${m[6]} ))
}
# once KEY WORKLOAD N: N runs of WORKLOAD (startup, status, log, clone) by
# configuration KEY (p, u, t: patched; s: stock; e: stock with git's EVENT
# target; P, S: the fresh copies of patched and stock), in the worktree
# (the current directory), output to /dev/null, timed; wall µs and CPU ms
# added to WS[KEY-WORKLOAD] and CS[KEY-WORKLOAD].
declare -A WS CS
once() {
	local key=$1 w=$2 n=$3 g=$PATCHED i t0 c0
	case $key in s|e) g=$STOCK ;; P) g=$FRESH_P ;; S) g=$FRESH_S ;; esac
	[ "$key" = e ] && export GIT_TRACE2_EVENT=/dev/null
	cpu_now; c0=$CPU_MS t0=${EPOCHREALTIME/./}
	for ((i = 0; i < n; i++)); do
		case $w in
		startup) "$g" rev-parse --git-dir ;;
		status) "$g" status ;;
		log) "$g" -C "$REPO" log --oneline ;;
		clone) "$g" clone -q "file://$REPO" "$CLONE.$i" ;;
		esac >/dev/null || say "$key $w failed"
	done
	WS[$key-$w]=$(( ${WS[$key-$w]:-0} + ${EPOCHREALTIME/./} - t0 ))
	cpu_now; CS[$key-$w]=$(( ${CS[$key-$w]:-0} + CPU_MS - c0 ))
	[ "$w" != clone ] || rm -rf "$CLONE".*
	unset GIT_TRACE2_EVENT
}
# alternate WORKLOAD N KEY...: N runs of WORKLOAD by each configuration, in
# 10 blocks, the configurations alternating block by block (each block
# starts with the next one), so that the machine's slow and fast moments
# fall on all of them alike.
alternate() {
	local w=$1 n=$2 b i k; shift 2
	local keys=("$@") nk=$#
	b=$(( (n + 9) / 10 ))
	for ((i = 0; i * b < n; i++)); do
		for ((k = 0; k < nk; k++)); do
			once "${keys[(i + k) % nk]}" "$w" $(( n - i * b < b ? n - i * b : b ))
		done
	done
}
# flush: each sum of this round becomes a run of wall[KEY] (ns) and
# cpu[KEY] (ns).
declare -A wall cpu
flush() {
	local k
	for k in "${!WS[@]}"; do
		wall[$k]+=" $((WS[$k] * 1000))" cpu[$k]+=" $((CS[$k] * 1000000))"
	done
	WS=() CS=()
}

# Both gits' installed files alike in the page cache: dropped from it
# (POSIX_FADV_DONTNEED), so that each is read back by its own first runs.
# A start-up's time depends on how its binary's pages were cached (the
# size of the folios a fault maps): stock git's binary, installed hours
# before, started 7 % slower than a fresh copy of itself (by hand,
# 2026-11-26), and the patched one, relinked just before, was such a copy.
# The start-ups are also timed from copies of the two binaries written
# now (FRESH_P, FRESH_S: as a package manager leaves them; rev-parse is a
# builtin, and a copy finds the rest of its git by its built-in prefix).
python3 -c 'import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' $(find "$BUILD/git/bin" "$BUILD/git/libexec" "$BUILD/git-stock/bin" "$BUILD/git-stock/libexec" -type f)

FRESH_P=$TMP/fresh-patched/git FRESH_S=$TMP/fresh-stock/git
mkdir -p "${FRESH_P%/git}" "${FRESH_S%/git}"
cp "$PATCHED" "$FRESH_P" && cp "$STOCK" "$FRESH_S" || exit 1

# What a start-up costs either git detached, beside the time: its minor
# page faults (/usr/bin/time, the median of 5) and the program's text size.
faults() {
	local f=() i
	for i in 1 2 3 4 5; do f+=("$(/usr/bin/time -f %R "$1" rev-parse --git-dir 2>&1 >/dev/null)"); done
	median "${f[@]}"
}
text() { size "$1" | awk 'NR == 2 { print $1 }'; }
FAULTS_P=$(faults "$PATCHED") FAULTS_S=$(faults "$STOCK") TEXT_P=$(text "$PATCHED") TEXT_S=$(text "$STOCK")

# What one command makes under tr2-bpf: processes (a file each in a
# directory DEST) and events (lines), from one untimed traced run.
census() {  # KEY CMD...
	local key=$1; shift
	rm -rf "$TMP/census"; mkdir "$TMP/census"
	all_start "$FILTER" --event="$TMP/census/"
	"$@" >/dev/null
	all_stop
	procs[$key]=$(find "$TMP/census" -type f | wc -l)
	events[$key]=$(cat "$TMP/census"/* | wc -l)
	names[$key]=$(sed -n 's/.*"event":"cmd_name".*"name":"\([^"]*\)".*/\1/p' "$TMP/census"/* | sort | uniq -c | awk '{ printf "%s%s%s", (n++ ? ", " : ""), ($1 > 1 ? $1 " " : ""), $2 }')
}
declare -A procs events names
# shellcheck disable=SC2016
census startup bash -c 'cd "$0" && for i in 1 2 3 4 5 6 7 8 9 10; do "$1" rev-parse --git-dir; done' "$WT" "$PATCHED"
procs[startup]=$(calc %g "${procs[startup]} / 10") events[startup]=$(calc %g "${events[startup]} / 10")
census clone "$PATCHED" clone -q "file://$REPO" "$CLONE"
rm -rf "$CLONE"
say "per command under tr2-bpf: start-up ${events[startup]} events in ${procs[startup]} process, clone ${events[clone]} events in ${procs[clone]} processes"

# What tr2-bpf's eBPF programs take of a traced start-up: their run counts
# and times (kernel.bpf_stats_enabled) over STARTUPS / 4 start-ups under
# tr2-bpf -a, per start-up; in $TMP/progs, "name runs ns_a_run µs_a_start-up".
say "eBPF programs' time over $((STARTUPS / 4)) traced start-ups"
all_start "$FILTER" --event=/dev/null
sysctl -qw kernel.bpf_stats_enabled=1
prog_stats "$TRACER" >"$TMP/stats0"
once t startup $((STARTUPS / 4))
prog_stats "$TRACER" >"$TMP/stats1"
sysctl -qw kernel.bpf_stats_enabled=0
all_stop
WS=() CS=()
join <(sort "$TMP/stats0") <(sort "$TMP/stats1") | awk -v n=$((STARTUPS / 4)) '{ c = $4 - $2; t = $5 - $3 }
	c > 0 { printf "%s %.1f %.0f %.2f\n", $1, c / n, t / c, t / n / 1000 }' | sort -k4 -gr >"$TMP/progs"
PROGS_US=$(awk '{ s += $4 } END { printf "%.1f", s }' "$TMP/progs")
say "eBPF programs: $PROGS_US µs a start-up"

# Rounds: each configuration runs each of its workloads once; wall[KEY]
# and cpu[KEY] collect the runs (KEY: configuration-workload, as once's).
SUMMARIES='' OTHERS=0
traced() {  # patched under tr2-bpf -a: the start-ups, then the clone
	all_start "$FILTER" --event=/dev/null
	once t startup "$STARTUPS"
	once t clone "$CLONE_N"
	all_stop
	SUMMARIES+="${SUMMARIES:+; }$STOPPED"
}
untraced() { once u startup "$STARTUPS"; once u clone "$CLONE_N"; }
say "$ROUNDS rounds: $STARTUPS start-ups, $STATUS_N status, $LOG_N log, $CLONE_N clones; patched, stock, stock with GIT_TRACE2_EVENT, patched under tr2-bpf -a"
for ((r = 1; r <= ROUNDS; r++)); do
	# another tr2-bpf -a on this machine may trace the runs meant untraced
	# (one that --cgroup, --comm or --uid narrows never attaches to a
	# program started after it)
	! pgrep -a -x tr2-bpf | grep -E -- ' (-a|--all)( |$)' | grep -Evq -- ' --(cgroup|comm|uid)' ||
		OTHERS=$((OTHERS + 1))
	alternate startup "$STARTUPS" p s e P S
	alternate status "$STATUS_N" p s
	alternate log "$LOG_N" p s
	alternate clone "$CLONE_N" p s e
	# traced against untraced, adjacent, in turn first
	if ((r % 2)); then traced; untraced; else untraced; traced; fi
	flush
	say "round $r/$ROUNDS: start-ups $(for k in p s e P S u t; do printf '%s %s ' $k "$(secs "${wall[$k-startup]##* }")"; done)s; clone $(for k in p s e u t; do printf '%s %s ' $k "$(secs "${wall[$k-clone]##* }")"; done)s; tr2-bpf: $STOPPED"
done
cd / || exit 1

# med KIND KEY: median seconds of wall or cpu; ratio KIND A B: A over B.
# (The runs of a key are one string, split into the median's arguments.)
# shellcheck disable=SC2086
med() { local -n a=$1; secs "$(median ${a[$2]})"; }
# shellcheck disable=SC2086
ratio() { local -n a=$1; calc %.3f "$(median ${a[$2]}) / $(median ${a[$3]})"; }
# row WHAT A B GOAL: a table row, A against B (GOAL a ratio, or "").
row() {
	local r; r=$(ratio wall "$2" "$3")
	echo "| $1 | $(med wall "$2") | $(med wall "$3") | ${r}x | $(ratio cpu "$2" "$3")x | ${4:+≤ $4x} | ${4:+$(met "$r <= $4")} |"
}
# Lost: every round's summary "N 0".
LOST_OK=1
while read -r n m; do [ "$n" != bad: ] && [ "${m:-x}" = 0 ] || LOST_OK=0; done <<<"${SUMMARIES//; /$'\n'}"

# Where a traced command's time goes: its events at section 2's cost each,
# and the rest per process.  more KIND KEY COMMANDS: µs a command costs
# traced, minus untraced; explain KEY COMMANDS: the sentence.
# shellcheck disable=SC2086
more() { local -n a=$1; calc %.0f "($(median ${a[t-$2]}) - $(median ${a[u-$2]})) / $3 / 1000"; }
explain() {
	local w c ev
	w=$(more wall "$1" "$2") c=$(more cpu "$1" "$2")
	echo -n "$w µs more wall time a command, $c µs more CPU time, for ${events[$1]} events in ${procs[$1]} processes"
	if [ "$c" -le 0 ]; then
		echo ": no more CPU time than this VM's noise"
	elif [ -n "$EVENT_NS" ]; then
		ev=$(calc %.1f "${events[$1]} * $EVENT_NS / 1000")
		echo ": the events at $EVENT_NS ns each (section 2) make $ev µs of it, the rest is $(calc %.0f "($c - $ev) / ${procs[$1]}") µs of CPU a process"
	else
		echo
	fi
}
goal() {  # WHAT A B GOAL WHY
	local r; r=$(ratio wall "$2" "$3")
	echo "| $1 ≤ $4x (issue 25) | ${r}x | $(met "$r <= $4") | $(why "$r <= $4" "$5") |" >>"$GOALS"
}
# det_why WORKLOAD: why a detached row is over its goal
det_why() { echo "CPU time $(ratio cpu "p-$1" "s-$1")x;$( [ "$1" = startup ] && echo " from copies of the two binaries written just before, $(ratio wall P-startup S-startup)x;") detached, the patched git runs stock git's code with an inline test of two words per Trace2 event, and starts with more: $TEXT_P bytes of text against $TEXT_S, $FAULTS_P page faults a start-up against $FAULTS_S, tr2's runtime (its constructor, its TLS); runs of the two move by a few % from one \`make bench\` to the next on this shared VM"; }
goal "detached: $STARTUPS \`git rev-parse --git-dir\` start-ups, patched against stock git" p-startup s-startup 1.02 "$(det_why startup)"
goal "detached: \`git status\` in a $FILES-file worktree, patched against stock git" p-status s-status 1.02 "$(det_why status)"
goal "detached: \`git log --oneline\` over $COMMITS commits, patched against stock git" p-log s-log 1.02 "$(det_why log)"
goal "under \`tr2-bpf -a\`: $STARTUPS start-ups, patched traced against untraced" t-startup u-startup 1.10 "$(explain startup "$STARTUPS"); section 10 says where it goes"
goal "under \`tr2-bpf -a\`: $CLONE_N \`file://\` clones of $COMMITS commits, traced against untraced" t-clone u-clone 1.10 "$(explain clone "$CLONE_N"); section 10 says where it goes"

# Git's whole suite under tr2-bpf -a: by hand (it takes 25 minutes), kept
# here so that a make bench run leaves it in BENCHMARKS.md.
WHOLE_SUITE="Git's whole test suite on the patched git, by hand (\`GITSUITE_T=\"\$(cd build/git/src/t && ls t[0-9]*.sh)\" tests/git/suite.sh\`,
2026-11-26, tree 5fca4c4, two scripts at a time): 986 scripts, 25 351 tests passed, 706
skipped, 266 known breakages, none failed, untraced in 670 s and under one \`tr2-bpf -a\`
(narrowed to the run's cgroup) in 704 s (1.05x), with the same results script by script;
184 624 git processes traced, 2 855 273 events, 0 lost, no process let go unserved (held 135
times, 47 ms waiting for tr2-bpf in all); tr2-bpf's RSS 38 116 kB after 98 scripts and 38 160
kB at the end. The last event of 184 549 processes is \`atexit\`; of the other 75, \`exec\` (32: a
git that ran another program), \`signal\` (14), \`child_start\` (14), \`cmd_name\` (7) and 8 more:
processes that ended without git's atexit, not looked at one by one; this run did not write git's own
EVENT lines beside tr2-bpf's to compare them (the slice of \`make test-git-suite\` did, by
hand: every process git wrote was in tr2-bpf's file, docs/git.md)."

cat <<EOF

## 10. What it costs git

Git 2.39.5 (Debian 12's source) built twice with the same flags: with tr2's series and
\`USE_TR2\` (\`make git\`: every Trace2 event fires tr2's probes; docs/git.md) and stock
(\`make git-stock\`). The repositories, made once: $COMMITS commits by \`git fast-import\` (each
changes one of 1 000 files) in a bare repository, and a worktree of $FILES files committed
once. $ROUNDS rounds; in each, every configuration runs each workload once: its commands one
after another from this script's shell, timed in wall time and in CPU time (the commands' user
and system time, the shell's \`times\`), in 10 blocks that alternate between the
configurations, each block starting with the next one (a slow moment of this shared VM falls
on all of them alike): patched, stock, and stock with git's own in-process EVENT target
(\`GIT_TRACE2_EVENT=/dev/null\`, what every git process pays for its events when its own
targets are on, which tr2-bpf replaces); for the start-ups also copies of the patched and
stock binaries written just before the rounds. Both gits' installed files are dropped from the
page cache first (\`POSIX_FADV_DONTNEED\`), so that their runs read them back alike: how a
binary's pages sit in the page cache moves a start-up by several % (a copy just written, in
large folios, starts faster than the same bytes read back by exec's page faults). Then the
patched git under one
\`tr2-bpf -a --event=/dev/null $FILTER_TEXT\`$FILTER_WHY started and ready before its runs and stopped
after them (the start-ups, then the clones), and untraced, the two in turn first. Ratio: of the
wall medians over the rounds; CPU: the same of the CPU times.

| what | patched or traced, s | baseline, s | ratio | CPU | goal | |
| --- | ---: | ---: | ---: | ---: | --- | --- |
$(row "detached: $STARTUPS \`git rev-parse --git-dir\` start-ups, patched against stock" p-startup s-startup 1.02)
$(row "the same from copies of the two binaries written just before the runs" P-startup S-startup 1.02)
$(row "detached: $STATUS_N \`git status\` in a $FILES-file worktree, patched against stock" p-status s-status 1.02)
$(row "detached: $LOG_N \`git log --oneline\` over $COMMITS commits, patched against stock" p-log s-log 1.02)
$(row "under \`tr2-bpf -a\`: the $STARTUPS start-ups, patched traced against patched untraced" t-startup u-startup 1.10)
$(row "under \`tr2-bpf -a\`: $CLONE_N \`file://\` clones of the $COMMITS commits, patched traced against patched untraced" t-clone u-clone 1.10)
$(row "git's EVENT target: the $STARTUPS start-ups, stock with \`GIT_TRACE2_EVENT=/dev/null\` against stock" e-startup s-startup "")
$(row "git's EVENT target: the $CLONE_N clones, stock with \`GIT_TRACE2_EVENT=/dev/null\` against stock" e-clone s-clone "")

Detached, a start-up of the patched git: $FAULTS_P minor page faults against stock git's
$FAULTS_S (\`/usr/bin/time\`, the median of 5), $TEXT_P bytes of text against $TEXT_S.
tr2-bpf's summary line, events and lost, each round: $SUMMARIES ($( [ "$LOST_OK" = 1 ] && echo "none lost" || echo "**not all clean**")). One
command traced, in an untimed run with a file per process: a start-up is ${events[startup]} events in ${procs[startup]}
process, the clone ${events[clone]} events in ${procs[clone]} processes (their cmd_name: ${names[clone]}).
Where a traced command's time goes, start-up: $(explain startup "$STARTUPS"); clone:
$(explain clone "$CLONE_N"). Wall time also counts the shell's own forks, whose page faults
tr2-bpf's tracepoints see too, and tr2-bpf's own CPU time on this 2-CPU machine. The rest
is what a process costs traced whatever its events (sections 7
and 8): tr2-bpf's eBPF programs, $PROGS_US µs a start-up (below; most of it the page-fault
tracepoints, which run at every page fault of the process and find the objects it runs code
from); the exec, where the kernel installs the uprobes at \`tr2:batch\` and \`tr2:enable\` in
git's text and raises the enable; the trap of the first batch; and git's own work for a Trace2
that is on (the runtime maps its 16 KiB buffer). Stock git with its EVENT target also reads
\`/proc/PID/stat\` of every ancestor process for \`cmd_ancestry\` (4 system calls and a report
the kernel builds, each: this script's shell, its callers, up to init); under tr2-bpf alone the
patched git reads none, tr2-bpf names them from the kernel's process tree (docs/git.md). The first process of each round
was also held while tr2-bpf attached to git (milliseconds, once). This machine's \`getppid()\`: $( [ -n "$SYSCALL_NS" ] && echo "$SYSCALL_NS ns (section 2)" || echo "not measured (bench/git.sh run alone)").

tr2-bpf's eBPF programs in a traced start-up: run counts and times (\`kernel.bpf_stats_enabled\`,
which adds two clock reads to each run) over $((STARTUPS / 4)) start-ups under \`tr2-bpf -a\`, a
start-up's share. The tracepoint programs run for every process of the host meanwhile (the
shell's forks, other users' work), so their shares are upper bounds; the uprobe's own trap at
a batch is outside them.

| eBPF program | runs a start-up | ns a run | µs a start-up |
| --- | ---: | ---: | ---: |
$(awk '{ printf "| `%s` | %s | %s | %s |\n", $1, $2, $3, $4 }' "$TMP/progs")
| all | | | $PROGS_US |

$( [ "$OTHERS" = 0 ] || echo "Another \`tr2-bpf -a\`, not narrowed by a filter, ran on this machine in $OTHERS of $ROUNDS rounds: it may have traced the patched git's runs meant untraced.")

$WHOLE_SUITE
EOF
say "done"
