#!/usr/bin/env bash
# bench/shapes.sh BUILD [BEFORE]: the "workload shapes" section of
# BENCHMARKS.md (markdown on stdout, progress on stderr).  Each row runs a
# tests/progs/tr2_shapes workload untraced and under BUILD's tr2-bpf
# (--perf to a file), interleaved, and compares the program's own elapsed
# time ("elapsed_ns", its work alone: what a tracer must not slow), the
# median of the rounds.  BEFORE, another build's tr2-bpf (the one before
# the workload-shapes work), gets the same rows at the sizes the issue
# first measured, in the same run.  Then what a long attach keeps: tr2-bpf's
# RSS and BPF map entries before and after 100 000 threads and 10 000
# processes have come and gone.  Run by bench/run.sh; needs root.
set -u
export LC_ALL=C
BUILD=${1:-build}
BEFORE=${2:-}
P=$BUILD/tests/progs
SHAPES=$P/tr2_shapes
PLUGIN=$P/libtr2_plugin.so
PLAIN=$P/libtr2_plain.so
ROUNDS=${SHAPES_ROUNDS:-3}
TMP=$(mktemp -d /tmp/tr2-shapes-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
START=$(date +%s)

say() { echo "[shapes $(( $(date +%s) - START ))s] $*" >&2; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
elapsed() { sed -n 's/^elapsed_ns //p' "$1"; }
met() { awk "BEGIN { exit !($1) }" && echo "met" || echo "**not met**"; }

# untraced ARGS...: the workload's elapsed ns, no tracer.
untraced() { $SHAPES "$@" > "$TMP/out"; elapsed "$TMP/out"; }

# traced BPF ARGS...: the same under tr2-bpf -- CMD (a 600 s limit).  BPF is
# the tr2-bpf binary and any options of its own, one word each.  Leaves the
# whole command's wall time (ns, tr2-bpf's start and drain included) in
# $TMP/wall, the PERF lines in $TMP/trace.perf and its stderr in $TMP/err.
traced() {
	local bpf=$1 t0; shift
	t0=$(date +%s%N)
	rm -f "$TMP/trace.perf"
	# shellcheck disable=SC2086
	timeout 600 $bpf --perf="$TMP/trace.perf" -- $SHAPES "$@" > "$TMP/out" 2> "$TMP/err"
	echo $(( $(date +%s%N) - t0 )) > "$TMP/wall"
	elapsed "$TMP/out"
}

# traced_pid BPF ARGS...: tr2-bpf -p attached while tr2_shapes --wait-stdin
# waits; BPF empty: not attached at all.
traced_pid() {
	local bpf=$1 prog tracer i; shift
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	exec 7<>"$TMP/fifo"
	$SHAPES --wait-stdin "$@" <&7 > "$TMP/out" &
	prog=$!
	for ((i = 0; i < 500; i++)); do grep -q waiting "$TMP/out" && break; sleep 0.01; done
	if [ -n "$bpf" ]; then
		# shellcheck disable=SC2086
		$bpf --perf="$TMP/trace.perf" -p $prog 2> "$TMP/err" &
		tracer=$!
		for ((i = 0; i < 2000; i++)); do grep -q "tracing process" "$TMP/err" && break; sleep 0.01; done
	fi
	echo go >&7
	for ((i = 0; i < 60000; i++)); do grep -q '^done' "$TMP/out" && break; sleep 0.01; done
	echo go >&7
	exec 7>&-
	wait $prog
	[ -n "$bpf" ] && wait $tracer
	rm -f "$TMP/trace.perf"
	elapsed "$TMP/out"
}

# measure KEY MODE BPF ARGS...: ROUNDS interleaved rounds, untraced then
# traced; medians in u[KEY] and t[KEY] (ns).
declare -A u t
GOAL_ROUNDS=$ROUNDS
measure() {
	local key=$1 mode=$2 bpf=$3 us=() ts=() r; shift 3
	for ((r = 1; r <= ROUNDS; r++)); do
		if [ "$mode" = pid ]; then
			us+=("$(traced_pid "" "$@")")
			ts+=("$(traced_pid "$bpf" "$@")")
		else
			us+=("$(untraced "$@")")
			ts+=("$(traced "$bpf" "$@")")
		fi
	done
	u[$key]=$(median "${us[@]}")
	t[$key]=$(median "${ts[@]}")
	say "$key: untraced $(calc %.3f "${u[$key]} / 1e9") s, traced $(calc %.3f "${t[$key]} / 1e9") s"
}

ratio() { calc %.2f "${t[$1]} / ${u[$1]}"; }
secs() { calc %.3f "$1 / 1e9"; }
# row KEY WHAT GOAL: a table row; GOAL a ratio, or "" for none.
row() {
	local r; r=$(ratio "$1")
	echo "| $2 | $(secs "${u[$1]}") | $(secs "${t[$1]}") | ${r}x | ${3:+≤ $3x: $(met "$r <= $3")} |"
}

BPF=$BUILD/tr2-bpf
say "after: the goals' sizes"
measure spawn-probes cmd "$BPF" spawn 300 "$SHAPES" child
measure spawn-true cmd "$BPF" spawn 300 /bin/true
measure dlopen-cmd cmd "$BPF" dlopen 3000 "$PLUGIN"
measure dlopen-pid pid "$BPF" dlopen 3000 "$PLUGIN"
measure dlopen-plain cmd "$BPF" dlopen 3000 "$PLAIN"
measure dlopen-nop5 cmd "$BPF --probe-nop=5" dlopen 3000 "$PLUGIN"
measure spawn-nop1 cmd "$BPF --probe-nop=1" spawn 300 "$SHAPES" child
measure threads-5k cmd "$BPF" threads 5000
measure threads-20k cmd "$BPF" threads 20000
measure threads-noexit cmd "$BPF" threads 20000 noexit
# once KEY BPF ARGS...: one traced run of -- CMD; the program's elapsed ns in
# t[KEY], the whole command's in w[KEY], and in x[KEY] its summary line and
# the process's timer line (intervals), for the rows that check sums.
declare -A w x
once() {
	local key=$1 bpf=$2 timer; shift 2
	t[$key]=$(traced "$bpf" "$@")
	w[$key]=$(cat "$TMP/wall")
	timer=$(sed -nE 's/.*\| timer +\|.*(intervals:[0-9]+).*/\1/p' "$TMP/trace.perf" | head -n 1)
	x[$key]="$(tail -n 1 "$TMP/err" | sed 's/^tr2-bpf: //'); timer: ${timer:-none}"
	say "$key: traced $(secs "${t[$key]}") s, command $(secs "${w[$key]}") s; ${x[$key]}"
}
if [ -n "$BEFORE" ]; then
	say "before ($BEFORE) and after: the sizes the issue first measured"
	for args in "spawn-probes spawn 200 $SHAPES child" "spawn-true spawn 200 /bin/true" \
		    "dlopen-cmd dlopen 100 $PLUGIN" "threads threads 5000" "noexit-100 threads 100 noexit" \
		    "noexit-40k threads 40000 noexit"; do
		# shellcheck disable=SC2086
		set -- $args
		key=$1
		shift
		u[ba-$key]=$(untraced "$@")
		once "before-$key" "$BEFORE" "$@"
		once "after-$key" "$BPF" "$@"
	done
fi

# A long attach: tr2-bpf's RSS (KiB) and what -v says it keeps, before and
# after 100 000 threads (-p) and 10 000 processes (-- CMD) came and went.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
kept() { sed -nE 's/^tr2-bpf: kept at the end: (.*)$/\1/p' "$1"; }
long_attach() { # NAME -p|cmd ARGS...
	local name=$1 mode=$2 prog tracer i; shift 2
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	exec 7<>"$TMP/fifo"
	if [ "$mode" = -p ]; then
		$SHAPES --wait-stdin "$@" <&7 > "$TMP/out" &
		prog=$!
		for ((i = 0; i < 500; i++)); do grep -q waiting "$TMP/out" && break; sleep 0.01; done
		"$BPF" -v --perf=/dev/null -p $prog 2> "$TMP/$name.err" &
		tracer=$!
		for ((i = 0; i < 2000; i++)); do grep -q "tracing process" "$TMP/$name.err" && break; sleep 0.01; done
	else
		"$BPF" -v --perf=/dev/null -- $SHAPES --wait-stdin "$@" <&7 > "$TMP/out" 2> "$TMP/$name.err" &
		tracer=$!
		for ((i = 0; i < 500; i++)); do grep -q waiting "$TMP/out" && break; sleep 0.01; done
	fi
	sleep 0.5
	rss_before[$name]=$(rss $tracer)
	echo go >&7
	for ((i = 0; i < 60000; i++)); do grep -q '^done' "$TMP/out" && break; sleep 0.01; done
	sleep 0.5
	rss_after[$name]=$(rss $tracer)
	kill -INT $tracer
	wait $tracer
	echo go >&7
	exec 7>&-
	wait
	kept_after[$name]=$(kept "$TMP/$name.err")
	say "$name: RSS ${rss_before[$name]} -> ${rss_after[$name]} KiB; kept: ${kept_after[$name]}"
}
declare -A rss_before rss_after kept_after
say "long attaches"
long_attach threads -p threads 100000 noexit
long_attach procs cmd spawn 10000 /bin/true

per_thread() { calc %.1f "($2 - $1) / $3 / 1000"; }   # µs a thread costs, traced minus untraced
cat <<EOF

## 7. Workload shapes: process trees, dlopen cycles, thread churn

The same program untraced and under \`tr2-bpf --perf=FILE\`, its own elapsed time (the
work alone, from \`tests/progs/tr2_shapes\`: tr2-bpf's start-up is not in it), the median of
$GOAL_ROUNDS interleaved rounds. tr2-bpf stops a process only when it maps an object file it has
not looked at yet (\`-v\` counts the stops): the first exec of a program, its libraries'
first load, a plugin's first dlopen.

| workload | untraced, s | traced, s | traced/untraced | goal |
| --- | ---: | ---: | ---: | --- |
$(row spawn-probes "\`-- CMD\`: fork+exec of 300 instrumented children (\`tr2_shapes child\`, 10 events each), one after another" 1.2)
$(row spawn-true "\`-- CMD\`: fork+exec of 300 \`/bin/true\`" 1.2)
$(row dlopen-cmd "\`-- CMD\`: 3 000 dlopen, call, dlclose of an instrumented plugin (3 events a cycle)" 1.3)
$(row dlopen-pid "\`-p\`: the same, attached before the first dlopen" 1.3)
$(row dlopen-plain "\`-- CMD\`: 3 000 cycles of a plugin without probes: the loader hook alone" 1.3)
$(row dlopen-nop5 "\`-- CMD --probe-nop=5\`: the 3 000 dlopen cycles with the uprobes on the 5-byte nop" "")
$(row spawn-nop1 "\`-- CMD --probe-nop=1\`: the 300 instrumented children with the uprobes on the 1-byte nop" "")
$(row threads-5k "\`-- CMD\`: 5 000 threads one after another, each a timer, a counter, a region, \`trace2_thread_exit()\`" 2)
$(row threads-20k "the same, 20 000 threads" 2)
$(row threads-noexit "the same, 20 000 threads that return without \`trace2_thread_exit()\`" 2)

The instrumented plugin's cycles cost more than the plain one's because the kernel installs
its 3 uprobes in each new mapping of it (about 8 µs a probe site here, and a fixed part:
README, "How it works"); tr2-bpf adds no stop and no walk of its own to a known object.
The \`--probe-nop\` rows show the trade the default makes: on the 5-byte nop each new mapping
of an object (a child's exec, a dlopen) pays, at the first hit of each site, the kernel's
switch of that uprobe to a call, which syncs every CPU; on the 1-byte nop every hit is a trap,
4-5x the cost of a hit on the 5-byte nop (section 2). By default CMD's own program, here also
the children's, keeps the 5-byte nop; a plugin dlopened later gets the 1-byte nop.

A thread costs $(per_thread "${u[threads-5k]}" "${t[threads-5k]}" 5000) µs more traced at 5 000 threads and
$(per_thread "${u[threads-20k]}" "${t[threads-20k]}" 20000) µs at 20 000: linear in the thread count when the two agree.
EOF
if [ -n "$BEFORE" ]; then
ba() { echo "$(secs "${t[before-$1]}") / $(secs "${w[before-$1]}") | $(secs "${t[after-$1]}") / $(secs "${w[after-$1]}")"; }
cat <<EOF

Before and after, the sizes the issue first measured, one run each, in this run ("before":
the tr2-bpf that stopped every process at each exec and each \`_dl_debug_state\` until its
20 ms poll, and walked the whole \`metrics\` map at each \`thread_exit\`). Traced: the
program's own time / the whole \`tr2-bpf -- CMD\` command's, tr2-bpf's start and drain
included, which is what the issue first timed:

| workload | untraced, s | before: traced, s | after: traced, s |
| --- | ---: | ---: | ---: |
| fork+exec of 200 instrumented children | $(secs "${u[ba-spawn-probes]}") | $(ba spawn-probes) |
| fork+exec of 200 \`/bin/true\` | $(secs "${u[ba-spawn-true]}") | $(ba spawn-true) |
| 100 dlopen/dlclose cycles | $(secs "${u[ba-dlopen-cmd]}") | $(ba dlopen-cmd) |
| 5 000 threads with a timer, a counter, \`thread_exit\` | $(secs "${u[ba-threads]}") | $(ba threads) |

| workload | before: summary; the process's \`timer\` line | after |
| --- | --- | --- |
| 5 000 threads with \`thread_exit\` | ${x[before-threads]} | ${x[after-threads]} |
| 100 threads without \`thread_exit\` | ${x[before-noexit-100]} | ${x[after-noexit-100]} |
| 40 000 threads without \`thread_exit\` | ${x[before-noexit-40k]} | ${x[after-noexit-40k]} |
EOF
fi
cat <<EOF

A long attach keeps nothing of what has gone: tr2-bpf's resident memory before the work
and after it, and what \`-v\` says it keeps at the end (SIGINT while the program still runs):

| attach | RSS before, KiB | RSS after, KiB | kept at the end |
| --- | ---: | ---: | --- |
| \`-p\`, 100 000 threads without \`thread_exit\`, one after another | ${rss_before[threads]} | ${rss_after[threads]} | ${kept_after[threads]} |
| \`-- CMD\`, 10 000 \`/bin/true\` children | ${rss_before[procs]} | ${rss_after[procs]} | ${kept_after[procs]} |
EOF
say "done"
