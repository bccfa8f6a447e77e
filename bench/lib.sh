# shellcheck shell=bash
# bench/lib.sh: what bench/run.sh, bench/shapes.sh and bench/host.sh share;
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
