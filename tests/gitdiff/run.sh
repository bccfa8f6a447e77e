#!/usr/bin/env bash
# The differential test: tr2-fmt against the installed git (2.39) as the oracle.
#
#   tests/gitdiff/run.sh [TR2FMT]      (default build/tr2-fmt)
#   GITDIFF_KEEP=1 keeps the scratch directory; GITDIFF_TABS_TOL_US sets the
#   derived-t_abs tolerance (compare.py).
#
# Builds scratch repositories, runs real git commands with all three Trace2
# targets at once (NORMAL and PERF into directories, one file per process;
# EVENT into one file, where the processes of a command interleave), once
# plain and once with the BRIEF variants, then compare.py feeds each EVENT file
# to tr2-fmt and requires its NORMAL, PERF and EVENT output to equal git's.
# The allowed differences are listed in compare.py.  Exits non-zero on any
# difference; the last line is "gitdiff: N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tr2fmt=$(realpath "${1:-build/tr2-fmt}")
[ -x "$tr2fmt" ] || { echo "gitdiff: no tr2-fmt at $tr2fmt" >&2; exit 2; }
command -v git >/dev/null || { echo "gitdiff: git not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "gitdiff: python3 not installed" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gitdiff.XXXXXX")
# GITDIFF_KEEP=1 keeps the scratch directory (repositories and traces) for a look.
if [ -n "${GITDIFF_KEEP:-}" ]; then echo "gitdiff: keeping $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi

suite=gitdiff
. "$here/scratch.sh"

# --- the commands ------------------------------------------------------------
# name|shell command, run in $work.  Among them: git children at depth 1 and 2
# (aliases, fetch, gc, clone, hooks, submodules), processes that run at the same
# time (fetch, a pipe of two gits), multi-threaded commands (grep, index-pack,
# pack-objects, status with index.threads; git 2.39 on Linux emits no
# thread_start/thread_exit, only its fsmonitor and simple-ipc threads would), a
# failure (exit 128 with an error event), def_param, cmd_mode, a pager, a
# SIGPIPE death (signal event), and arguments that need quoting, hold a
# control byte or are not UTF-8.
cases=(
	"status|git status"
	"alias-git|git -c alias.st=status st"
	"alias-shell|git -c alias.x='!git status --short' x"
	"alias-depth2|git -c alias.y='!git -c alias.z=\"!git rev-parse HEAD\" z' y"
	"fetch|git init -q ../fetch-\$\$ && git -C ../fetch-\$\$ fetch -q $src main"
	"fetch-origin|git fetch -q origin"
	"gc|git -c pack.threads=2 gc -q"
	"grep-threads|git grep --threads=2 -n -e 'line 1' -- d"
	"status-index-threads|git -c index.threads=2 -c core.preloadIndex=true status --porcelain"
	"index-pack|git index-pack --threads=2 -o $scratch/copy.idx $scratch/copy.pack"
	"pack-objects|git rev-list --objects --all | git pack-objects --threads=2 -q $scratch/pk"
	"fail|git rev-parse nosuch"
	"def-param|GIT_TRACE2_CONFIG_PARAMS='core.*,user.*' GIT_TRACE2_ENV_VARS='HOME,LC_ALL' git -c core.abbrev=9 log -1 --oneline"
	"checkout-mode|git checkout -q -b tmp-\$\$ && git checkout -q - && git branch -q -D tmp-\$\$"
	"commit-hook-editor|GIT_EDITOR=true git commit -q --allow-empty --amend"
	"pager|script -qec \"GIT_PAGER='cat -u' git -p log -3 --oneline\" /dev/null"
	"submodule-cd|git submodule status"
	"sigpipe|git log -p | head -1"
	"odd-argv|git log -1 --format=%H -- \$'caf\\xe9' \$'a\\x01b' \"it's\" 'sp ace' '\\back'"
	"diff|git diff --stat HEAD~3"
	"clone|git clone -q --no-local $src $scratch/clone-\$\$"
)

out="$scratch/out"
for c in "${cases[@]}"; do
	name=${c%%|*} cmd=${c#*|}
	for variant in full brief; do
		d="$out/$name.$variant"
		mkdir -p "$d/normal" "$d/perf"
		brief=()
		[ "$variant" = brief ] && brief=(GIT_TRACE2_BRIEF=1 GIT_TRACE2_PERF_BRIEF=1 GIT_TRACE2_EVENT_BRIEF=1)
		(cd "$work" && env GIT_TRACE2="$d/normal" GIT_TRACE2_PERF="$d/perf" \
			GIT_TRACE2_EVENT="$d/event.json" GIT_TRACE2_EVENT_NESTING=100 "${brief[@]}" \
			bash -c "$cmd") >"$d/stdout" 2>"$d/stderr"
		echo "$cmd" > "$d/command"
	done
done

# git's "too_many_files" event: directory targets that already hold
# GIT_TRACE2_MAX_FILES entries send a process's lines to a sentinel file,
# the EVENT one with that event after "version".  Renamed to what compare.py reads.
for variant in full brief; do
	d="$out/too-many-files.$variant"
	mkdir -p "$d/normal" "$d/perf" "$d/event"
	touch "$d/normal/x" "$d/perf/x" "$d/event/x"
	brief=()
	[ "$variant" = brief ] && brief=(GIT_TRACE2_BRIEF=1 GIT_TRACE2_PERF_BRIEF=1 GIT_TRACE2_EVENT_BRIEF=1)
	(cd "$work" && env GIT_TRACE2="$d/normal" GIT_TRACE2_PERF="$d/perf" GIT_TRACE2_EVENT="$d/event" \
		GIT_TRACE2_MAX_FILES=1 "${brief[@]}" git rev-parse HEAD) >"$d/stdout" 2>"$d/stderr"
	mv "$d/event/git-trace2-discard" "$d/event.json" && rm -r "$d/event" || exit 2
	sid=$(sed -n '1s/.*"sid":"\([^"]*\)".*/\1/p' "$d/event.json")
	for t in normal perf; do
		rm "$d/$t/x" && mv "$d/$t/git-trace2-discard" "$d/$t/${sid##*/}" || exit 2
	done
done

python3 "$here/compare.py" "$tr2fmt" "$out"
