#!/usr/bin/env bash
# Git itself, traced (issue 25, point 2): tr2-bpf's lines for a run of the
# patched git (make git) against the lines git's own targets write for the
# same run.
#
#   tests/git/lines.sh [BUILD [GITDIR]] (default build and BUILD/git, what
#                                       make git built; needs root and BPF,
#                                       else SKIP)
#   GITLINES_KEEP=1 keeps the scratch directory; GITLINES_ONLY=NAME,...
#   runs only those cases.
#
# Each case runs once as
#   GIT_TRACE2=G/normal/ GIT_TRACE2_PERF=G/perf/ GIT_TRACE2_EVENT=G/event/ \
#   tr2-bpf --normal=T/normal/ --perf=T/perf/ --event=T/event/ -- bash -c CMD
# (directory targets on both sides: one file per process), so that git and
# tr2-bpf write the same processes of the same run; once so with the BRIEF
# variants (GIT_TRACE2*_BRIEF, --brief); and once as production runs it, with
# no GIT_TRACE2* set (tr2-bpf alone), compared with the first run.
# compare.py pairs the processes by pid and requires equal lines but for the
# time columns (and, in production, the sid values).  Exits non-zero on any
# difference; the last line is "gitlines: N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
tr2bpf=$build/tr2-bpf
gitdir=$(cd "${2:-$build/git}" && pwd)
git=$gitdir/bin/git
testtool=$gitdir/src/t/helper/test-tool
for f in "$tr2bpf" "$git" "$testtool"; do
	[ -x "$f" ] || { echo "gitlines: no $f (make && make git)" >&2; exit 2; }
done
. "$here/../lib.sh"
need_bpf gitlines "$tr2bpf"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gitlines.XXXXXX")
if [ -n "${GITLINES_KEEP:-}" ]; then echo "gitlines: keeping $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi

# The patched git first in PATH (its dashed commands through its exec
# path); the scratch repositories of tests/gitdiff, and a bare clone of $src
# as $work's remote "bare" (each run has its own copies, ../bare.git).
export PATH="$gitdir/bin:$PATH"
suite=gitlines
. "$here/../gitdiff/scratch.sh"
bare="$scratch/bare.git"
git clone -q --bare "$src" "$bare" && git -C "$work" remote add bare ../bare.git ||
	{ echo "gitlines: could not make the bare repository" >&2; exit 2; }

# name|shell command, run in a copy of $work (RUN/repo), so that every run of
# a case starts from the same state.
cases=(
	"rev-parse|git rev-parse --git-dir"
	"status|git status --porcelain"
	"fail|git rev-parse nosuch"
	"alias-git|git -c alias.st=status st --short"
	"alias-shell|git -c alias.x='!git rev-parse HEAD' x"
	"def-param|GIT_TRACE2_CONFIG_PARAMS='core.*,user.*' GIT_TRACE2_ENV_VARS='HOME,LC_ALL' git -c core.abbrev=9 log -1 --oneline"
	"clone|git clone -q file://$src ../clone"
	"fetch|git init -q ../fetch && git -C ../fetch fetch -q file://$src main"
	"push|git commit -q --allow-empty -m p && git push -q bare HEAD:refs/heads/p"
	"hook|GIT_EDITOR=true git commit -q --allow-empty --amend"
	"gc|git -c pack.threads=2 gc -q"
	"grep-threads|git grep --threads=2 -n -e 'line 1' -- d"
	"index-pack|git index-pack --threads=2 -o ../copy.idx $scratch/copy.pack"
	"checkout-preload|git -c core.preloadIndex=true -c index.threads=2 checkout -q -b tmp && git checkout -q - && git branch -q -D tmp"
	"sigpipe|git log -p | head -1"
	"tt-child|$testtool trace2 004child $testtool trace2 001return 0"
	"tt-exec|$testtool trace2 005exec version"
	"tt-data|$testtool trace2 006data cat k1 v1 cat k2 v2"
	"tt-bug|$testtool trace2 007bug"
	"tt-timer|$testtool trace2 100timer 3 1"
	"tt-timer-threads|$testtool trace2 101timer 2 1 3"
	"tt-counter|$testtool trace2 200counter 5 7"
	"tt-counter-threads|$testtool trace2 201counter 5 7 3"
)

out="$scratch/out"
run() {   # run DIR VARIANT CMD
	local d=$1 variant=$2 cmd=$3 env=() brief=()
	mkdir -p "$d/git/normal" "$d/git/perf" "$d/git/event" "$d/tr2/normal" "$d/tr2/perf" "$d/tr2/event"
	cp -a "$work" "$d/repo" && cp -a "$bare" "$d/bare.git" || exit 2
	case $variant in
	full|brief) env=(GIT_TRACE2="$d/git/normal" GIT_TRACE2_PERF="$d/git/perf"
			 GIT_TRACE2_EVENT="$d/git/event" GIT_TRACE2_EVENT_NESTING=100) ;;
	esac
	if [ "$variant" = brief ]; then
		env+=(GIT_TRACE2_BRIEF=1 GIT_TRACE2_PERF_BRIEF=1 GIT_TRACE2_EVENT_BRIEF=1)
		brief=(--brief)
	fi
	(cd "$d/repo" && env "${env[@]}" "$tr2bpf" "${brief[@]}" --event-nesting=100 \
		--normal="$d/tr2/normal" --perf="$d/tr2/perf" --event="$d/tr2/event" \
		-- bash -c "$cmd") > "$d/stdout" 2> "$d/stderr"
	echo "$cmd" > "$d/command"
}

# How far git log gets before its SIGPIPE varies from run to run: no
# production run to compare with another run.
once=",sigpipe,"
only=",${GITLINES_ONLY:-},"
for c in "${cases[@]}"; do
	name=${c%%|*} cmd=${c#*|}
	[ "$only" = ",," ] || [[ "$only" == *",$name,"* ]] || continue
	variants="full brief prod"
	[[ "$once" == *",$name,"* ]] && variants="full brief"
	for variant in $variants; do
		run "$out/$name.$variant" "$variant" "$cmd"
	done
done

python3 "$here/compare.py" "$out"
