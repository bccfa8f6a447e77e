#!/usr/bin/env bash
# bench/git_releases.sh BUILD VERSION...: the end of section 10 of
# BENCHMARKS.md, what tr2's series costs each release of git it exists for,
# detached (markdown on stdout, progress on stderr).  Per release, the
# patched git (make git GIT_VERSION=V: the series and USE_TR2) against the
# same release built stock with the same flags (make git-stock
# GIT_VERSION=V):
#
# - wall time of `git rev-parse --git-dir` start-ups, GITREL_BLOCKS blocks
#   of GITREL_BLOCK each, the two gits in turn first, from copies of the two
#   binaries written just before (bench/git.sh says why); the ratio of the
#   totals.  Small blocks: this machine's exec time drifts by several per
#   cent over seconds, which rounds of 1000 start-ups read as a difference
#   (2.39.5's came to 1.174x and 1.026x on trees whose instructions differ
#   by 0.2 %; blocks of 20 gave 0.991x and 1.007x);
# - instructions (valgrind --tool=callgrind, "Collected") of one
#   `git rev-parse --git-dir` and one `git status` in a worktree of
#   GITREL_FILES files; the median of 3 runs each.
#
# Goals (issue 34): at most 1.02x wall, at most 1.01x instructions; goal
# rows are appended to $TR2_GOALS when set.  Needs valgrind.
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd); shift
BLOCKS=${GITREL_BLOCKS:-100}
BLOCK=${GITREL_BLOCK:-20}
STARTUPS=$((BLOCKS * BLOCK))
FILES=${GITREL_FILES:-1000}
GOALS=${TR2_GOALS:-/dev/null}
TMP=$(mktemp -d /tmp/tr2-git-releases.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
SAY=git-releases START=$(date +%s)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || { echo "bench/git_releases.sh: no valgrind" >&2; exit 1; }

# Git's own configuration and targets stay out.
for v in $(env | sed -n 's/^\(GIT_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export HOME=$TMP/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"

# startups GIT: BLOCK start-ups in the current directory; prints the wall
# nanoseconds.
startups() {
	local i t0=${EPOCHREALTIME/./}
	for ((i = 0; i < BLOCK; i++)); do "$1" rev-parse --git-dir; done >/dev/null
	echo $(( (${EPOCHREALTIME/./} - t0) * 1000 ))
}
# instructions GIT ARGS...: the median of 3 callgrind counts of one command.
instructions() {
	local n=() i
	for i in 1 2 3; do
		n+=("$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p')")
	done
	median "${n[@]}"
}

rows="" goal_rows=""
for v in "$@"; do
	suffix=; [ "$v" = 2.39.5 ] || suffix=-$v
	patched=$BUILD/git$suffix/bin/git stock=$BUILD/git-stock$suffix/bin/git
	for g in "$patched" "$stock"; do
		[ -x "$g" ] || { echo "bench/git_releases.sh: no $g: make git git-stock GIT_VERSION=$v" >&2; exit 1; }
	done
	wt=$TMP/wt-$v
	mkdir -p "$wt"
	for ((i = 0; i < FILES; i++)); do echo "$i" >"$wt/f$i"; done
	"$stock" -C "$wt" init -q && "$stock" -C "$wt" add -A &&
		"$stock" -C "$wt" -c user.name=a -c user.email=a@example.com commit -qm files || exit 1
	cd "$wt" || exit 1
	# Copies written now, alike in the page cache (bench/git.sh: a binary
	# read back by exec's page faults starts slower than one just written).
	mkdir -p "$TMP/p-$v" "$TMP/s-$v"
	cp "$patched" "$TMP/p-$v/git" && cp "$stock" "$TMP/s-$v/git" || exit 1
	say "$v: $BLOCKS blocks of $BLOCK start-ups, patched and stock"
	wp=0 ws=0
	for ((r = 1; r <= BLOCKS; r++)); do
		if ((r % 2)); then
			((wp += $(startups "$TMP/p-$v/git"), ws += $(startups "$TMP/s-$v/git")))
		else
			((ws += $(startups "$TMP/s-$v/git"), wp += $(startups "$TMP/p-$v/git")))
		fi
	done
	wall=$(calc %.3f "$wp / $ws")
	say "$v: callgrind, rev-parse and status"
	ip=$(instructions "$patched" rev-parse --git-dir) is=$(instructions "$stock" rev-parse --git-dir)
	sp=$(instructions "$patched" status) ss=$(instructions "$stock" status)
	ir=$(calc %.4f "$ip / $is") sr=$(calc %.4f "$sp / $ss")
	cd / || exit 1
	rows+="| $v | $(secs "$wp") | $(secs "$ws") | ${wall}x | $(met "$wall <= 1.02") | $ip | $is | ${ir}x | $sp | $ss | ${sr}x | $(met "$ir <= 1.01 && $sr <= 1.01") |"$'\n'
	goal_rows+="| git $v detached: $STARTUPS \`git rev-parse --git-dir\` start-ups, patched against stock ≤ 1.02x (issue 34) | ${wall}x | $(met "$wall <= 1.02") | $(why "$wall <= 1.02" "a start-up of the patched git runs tr2's runtime (its TLS, its initialization) beside stock git's code; section 10") |"$'\n'
	goal_rows+="| git $v detached: instructions of \`rev-parse --git-dir\` and \`status\`, patched against stock ≤ 1.01x (issue 34) | ${ir}x, ${sr}x | $(met "$ir <= 1.01 && $sr <= 1.01") | $(why "$ir <= 1.01 && $sr <= 1.01" "the runtime's start-up instructions, a fixed count per process") |"$'\n'
done
printf '%s' "$goal_rows" >>"$GOALS"

cat <<EOF

### Each release of the series, detached

Each release the series exists for (\`contrib/git/<line>/\`), patched (\`make git
GIT_VERSION=V\`) against the same release built stock with the same flags (\`make git-stock
GIT_VERSION=V\`), no tracer (\`bench/git_releases.sh\`): the wall time of $STARTUPS
\`git rev-parse --git-dir\` start-ups each, in $BLOCKS blocks of $BLOCK, the two in turn first, from
copies of the two binaries written just before (the ratio of the totals; small blocks, as the
machine's exec time drifts); and the instructions
(\`valgrind --tool=callgrind\`, "Collected", the median of 3 runs) of one \`git rev-parse
--git-dir\` and one \`git status\` in a worktree of $FILES files. Goals: ≤ 1.02x wall, ≤ 1.01x
instructions.

| release | start-ups patched, s | stock, s | ratio | ≤ 1.02x | rev-parse instructions, patched | stock | ratio | status instructions, patched | stock | ratio | ≤ 1.01x |
| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
$rows
EOF
say "done"
