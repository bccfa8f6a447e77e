#!/usr/bin/env bash
# bench/host.sh BUILD: section 8 of BENCHMARKS.md, `tr2-bpf -a` on a host
# (markdown on stdout, progress on stderr): what processes pay while it
# runs, those without probes (a shell starting /bin/true, a build) and short
# instrumented ones (build/bench/calls-15), each untraced and with tr2-bpf -a
# running, interleaved round by round, medians; then tr2-bpf's memory and
# BPF map entries before and after 10^5 short processes.  Goal rows are
# appended to $TR2_GOALS when set.  Run by bench/run.sh; needs root.
#
# tr2-bpf -a traces every process on the machine that carries a tr2 runtime,
# other people's too, while it runs: each run here is as short as it can be.
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BPF=$BUILD/tr2-bpf
CALLS=$BUILD/bench/calls-15
ROUNDS=${HOST_ROUNDS:-5}
SHORT_N=${SHORT_N:-200}       # short instrumented processes per run
PROCS=${HOST_PROCS:-100000}   # processes of the long attach
GOALS=${TR2_GOALS:-/dev/null}
TMP=$(mktemp -d /tmp/tr2-host-bench.XXXXXX)
TRACER=
trap '[ -z "$TRACER" ] || kill -TERM "$TRACER" 2>/dev/null; rm -rf "$TMP"' EXIT
SAY=host START=$(date +%s)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# The workloads: each prints the ns its work took.
wall() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( $(date +%s%N) - t0 )); }
shell_true() { bash -c 'for ((i = 0; i < 1000; i++)); do /bin/true; done'; }
# libtr2.a and libtr2.so from scratch, by the project's Makefile into a
# directory of its own: make, sh, cc, as, ld and ar, none with probes.
build() { rm -rf "$TMP/b"; make -s -C "$ROOT" BUILD="$TMP/b" "$TMP/b/libtr2.a" "$TMP/b/libtr2.so"; }
w_true() { wall shell_true; }
w_build() { wall build; }
# calls-15's own loop: its wall time (word 2) and children's CPU (word 4)
w_short() { "$CALLS" loop "$SHORT_N" > "$TMP/short"; word 2 "$(cat "$TMP/short")"; }

# measure KEY: ROUNDS rounds of w_KEY untraced, then with tr2-bpf -a
# running; medians in u[KEY] and t[KEY] (ns).
declare -A u t
measure() {
	local key=$1 us=() ts=() r
	for ((r = 1; r <= ROUNDS; r++)); do
		us+=("$("w_$key")")
		all_start --perf=/dev/null
		ts+=("$("w_$key")")
		all_stop
	done
	u[$key]=$(median "${us[@]}") t[$key]=$(median "${ts[@]}")
	say "$key: untraced $(secs "${u[$key]}") s, under -a $(secs "${t[$key]}") s"
}
say "$ROUNDS rounds: 1000 /bin/true from a shell, a build, $SHORT_N short instrumented processes"
measure true
measure build
measure short
speed() { calc %.3f "${u[$1]} / ${t[$1]}"; }
ratio() { calc %.2f "${t[$1]} / ${u[$1]}"; }
# row KEY WHAT: speed and ratio against untraced
row() { echo "| $2 | $(secs "${u[$1]}") | $(secs "${t[$1]}") | $(speed "$1") | $(ratio "$1")x |"; }

# The long attach: 10^5 short processes (calls-15 loop PROCS: each a fork,
# an exec and the 4 events of calls-N's child) under tr2-bpf -a -v,
# narrowed to their name so that other users' processes on this machine
# neither add to what tr2-bpf keeps nor to its events: every one of ours is
# traced, and tr2-bpf's count must be exactly theirs.
say "$PROCS short processes under tr2-bpf -a --comm=calls-15"
all_start -v --comm=calls-15 --perf=/dev/null
sleep 0.5
RSS_B=$(rss "$TRACER") MAPS_B=$(map_entries "$TRACER")
LONG=$("$CALLS" loop "$PROCS")
sleep 0.5
RSS_A=$(rss "$TRACER") MAPS_A=$(map_entries "$TRACER")
all_stop
KEPT=$(kept "$TMP/a.err")
LONG_SUM=$(sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 events, \2 lost/p' "$TMP/a.err" | tail -1)
LONG_EV=$((4 * (PROCS + 1)))   # version, start, exit, atexit of each, the loop's parent too
say "RSS $RSS_B -> $RSS_A KiB; maps $MAPS_B -> $MAPS_A; kept: $KEPT; $LONG_SUM"
# The largest growth of one map's entries, from "name n, name n" lists.
MAP_GROWTH=$(printf '%s\n%s\n' "$MAPS_B" "$MAPS_A" | awk -F', ' '
	NR == 1 { for (i = 1; i <= NF; i++) { split($i, x, " "); b[x[1]] = x[2] } }
	NR == 2 { for (i = 1; i <= NF; i++) { split($i, x, " "); d = x[2] - b[x[1]]; if (d > m) m = d } }
	END { print m + 0 }')
RSS_GROWTH=$((RSS_A - RSS_B))
FLAT=$(met "$RSS_GROWTH < 1024 && $MAP_GROWTH <= 100")
LONG_OK=$([ "$LONG_SUM" = "$LONG_EV events, 0 lost" ] && echo yes || echo "**no**")

per() { calc %.0f "(${t[$1]} - ${u[$1]}) / $2 / 1000"; }   # per KEY COUNT: µs a unit, traced minus untraced
{
	echo "| processes without probes under \`tr2-bpf -a\` keep ≥ 0.95 of their untraced speed (issue 17) | 1000 \`/bin/true\` from a shell $(speed true), a build $(speed build) | $(met "$(speed true) >= 0.95 && $(speed build) >= 0.95") | $(why "$(speed true) >= 0.95 && $(speed build) >= 0.95" "+$(per true 1000) µs a \`/bin/true\`, +$(per build 1000) ms the build: each exec and process start runs tr2-bpf's fork, exec and exit tracepoints, and each page fault its page-fault tracepoints (a test, and a look-up for each code page)") |"
	echo "| short instrumented processes under \`tr2-bpf -a\` ≤ 1.2x untraced (issue 17) | $(ratio short)x | $(met "$(ratio short) <= 1.2") | $(why "$(ratio short) <= 1.2" "+$(per short "$SHORT_N") µs a process: two uprobes installed at exec, tr2-bpf's tracepoints, four events sent (section 7's exec rows pay the same under \`-- CMD\`)") |"
	echo "| \`tr2-bpf -a\`'s memory and maps stay flat over $PROCS processes (issue 17): RSS within 1 MiB, no map 100 entries larger | RSS +$RSS_GROWTH KiB, largest map growth $MAP_GROWTH entries | $FLAT | $(why "$RSS_GROWTH < 1024 && $MAP_GROWTH <= 100" "tr2-bpf grew while the processes came and went: maps $MAPS_B before, $MAPS_A after") |"
} >>"$GOALS"

cat <<EOF

## 8. \`tr2-bpf -a\`: every process with a runtime, and the others beside them

\`tr2-bpf -a\` attaches to every tr2 runtime on the host and raises \`tr2:enable\` in every
process that maps one; it holds a process at exec, or at the first instruction it runs from a
shared object, only when that object was not seen yet, and a process without a runtime is
looked at once per program. Each workload
untraced, then with \`tr2-bpf -a --perf=/dev/null\` started and ready before it, $ROUNDS rounds
interleaved, medians; speed = untraced / traced time. The shell loop and the build are
timed whole (wall); \`calls-15 loop $SHORT_N\` times its own loop of $SHORT_N fork+execs of itself
(section 7: each child 4 events). tr2-bpf -a traced whatever else ran on this shared
machine meanwhile.

| workload | untraced, s | under \`-a\`, s | speed | traced/untraced |
| --- | ---: | ---: | ---: | ---: |
$(row true "1 000 \`/bin/true\` from a shell, one after another (no probes)")
$(row build "a build: \`make\` of \`libtr2.a\` and \`libtr2.so\` from scratch, 6 files (no probes)")
$(row short "$SHORT_N short instrumented processes (\`calls-15 loop $SHORT_N\`)")

What a process that \`-a\`'s filters (\`--comm\`, \`--uid\`, \`--cgroup\`) leave out still pays
per event: section 2, "What tr2-bpf costs the processes it does not trace".

A long attach: $PROCS short processes one after another (\`calls-15 loop $PROCS\`, $(secs "$(word 2 "$LONG")") s
under \`-a -v --comm=calls-15\`: the filter keeps other users' processes on this shared
machine out of what is measured, and lets every one of these through); tr2-bpf's resident
memory and the entries of its BPF hash maps before the first and after the last, and what
\`-v\` says it keeps at the end. tr2-bpf wrote every event of them ($LONG_EV: 4 a process)
and lost none: $LONG_OK.

| RSS before, KiB | RSS after, KiB | BPF map entries before | after | kept at the end | summary |
| ---: | ---: | --- | --- | --- | --- |
| $RSS_B | $RSS_A | $MAPS_B | $MAPS_A | $KEPT | $LONG_SUM |
EOF
say "done"
