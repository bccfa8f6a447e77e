# shellcheck shell=bash
# bench/lib.sh: what bench/run.sh, shapes.sh, host.sh and git.sh share;
# sourced, never run.  say prints progress on stderr, after SAY (the
# script's name) and the seconds since START.
START=${START:-$(date +%s)}
say() { echo "[${SAY:+$SAY }$(( $(date +%s) - START ))s] $*" >&2; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
range() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }
secs() { calc %.3f "$1 / 1e9"; }    # nanoseconds as seconds
met() { awk "BEGIN { exit !($1) }" && echo "met" || echo "**not met**"; }
why() { awk "BEGIN { exit !($1) }" || echo "$2"; }   # why CONDITION REASON: REASON unless met
word() { echo "$2" | awk -v n="$1" '{ print $n }'; }   # word N "LINE"
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }    # field NAME "tr2bench output line"

# wait_for TEXT FILE [SECONDS]: until FILE holds TEXT (10 s at most, or
# SECONDS).
wait_for() {
	local i
	for ((i = 0; i < ${3:-10} * 100; i++)); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.01; done
	return 1
}

# The processes running program file $1 (a snapshot path is a run's own).
pids_of() {
	local exe
	for exe in /proc/[0-9]*/exe; do
		[ "$(readlink "$exe" 2>/dev/null)" = "$1" ] || continue
		exe=${exe#/proc/}
		echo "${exe%/exe}"
	done
}

# What a tracer keeps: its resident set (KiB), what its -v says it keeps at
# the end (in its stderr file), and the entries of the hash maps it holds
# ("name entries, ..." for the maps that have any).
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
kept() { sed -nE 's/^tr2-bpf: kept at the end: (.*)$/\1/p' "$1"; }
map_entries() {
	local id name n out=""
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^map_id:/ { print $2 }' | sort -un); do
		name=$(bpftool map show id "$id" 2>/dev/null | awk 'NR == 1 && ($2 == "hash" || $2 == "lru_hash") { print $4 }')
		[ -n "$name" ] || continue
		n=$(bpftool -j map dump id "$id" 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' 2>/dev/null)
		[ "${n:-0}" = 0 ] || out+="${out:+, }$name $n"
	done
	echo "${out:-none}"
}
# prog_stats PID: "name run_cnt run_time_ns" of each BPF program process PID
# holds (kernel.bpf_stats_enabled counts while it is 1).
prog_stats() {
	local id
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -un); do
		bpftool prog show id "$id" 2>/dev/null | awk 'NR == 1 { for (i = 1; i <= NF; i++) {
			if ($i == "name") n = $(i + 1); if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
			print n, c + 0, t + 0 }'
	done
}

# all_start OPTION...: tr2-bpf -a ($BPF) with OPTIONS in the background (its
# pid in TRACER, its stderr in $TMP/a.err), returning once it is ready;
# --duration keeps a lost one from running on.  all_stop: SIGTERM, its end,
# and its summary line's "N M" (events, lost) in STOPPED, or "bad: LINE"
# when its last line is not a clean summary.
all_start() {
	rm -f "$TMP/a.err"
	"$BPF" -a --duration=1800 "$@" 2>"$TMP/a.err" &
	TRACER=$!
	wait_for "tracing every process" "$TMP/a.err" || say "tr2-bpf -a not ready: $(tail -1 "$TMP/a.err")"
}
all_stop() {
	kill -TERM "$TRACER"
	wait "$TRACER"
	TRACER=''
	STOPPED=$(tail -1 "$TMP/a.err" | sed -n 's/^tr2-bpf: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p;t;s/^/bad: /p')
}
