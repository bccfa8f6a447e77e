#!/usr/bin/env bash
# Issue 34, point 4: each series applies to a clean checkout of its release
# with git am, and reads as git's Documentation/SubmittingPatches asks.
#
#   tests/git/am.sh BUILD VERSION...    (the releases' tarballs in
#                                       BUILD/git-dl/: make test-git-am)
#
# Per release, contrib/git/checkout.sh makes the checkout and applies the
# series (git am --whitespace=error); then each commit: its subject, the
# files it touches and its trailers, as one line, against
# tests/git/expected/am-VERSION (one topic a commit, no unrelated change);
# a subject "area: what" with no full stop; a body that says why; every
# line of the message at most 72 columns; every line it adds to C, shell
# and Makefile code at most 80 columns (tabs of 8), as git's
# CodingGuidelines ask.  The last line is "gitam: N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd); shift
T=$(mktemp -d "${TMPDIR:-/tmp}/gitam.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
. "$here/../lib.sh"

for v in "$@"; do
	repo=$T/git-$v
	if ! "$here/../../contrib/git/checkout.sh" "$build" "$v" "$repo" > "$T/am.out" 2>&1; then
		bad "$v: git am applies the series to a clean checkout" "$(cat "$T/am.out")"
		continue
	fi
	ok "$v: git am applies the series to a clean checkout"
	commits=$(git -C "$repo" rev-list --reverse "v$v..HEAD")
	for c in $commits; do
		echo "$(git -C "$repo" log -1 --format=%s "$c") |" \
			$(git -C "$repo" diff-tree --no-commit-id --name-status -r "$c" | tr '\t' ' ') \
			"| $(git -C "$repo" log -1 --format=%B "$c" | grep -E '^[A-Za-z-]+: ' | grep -v "^$(git -C "$repo" log -1 --format=%s "$c")$" | paste -sd ';')"
	done > "$T/commits"
	same "$v: each commit's subject, files and trailers (tests/git/expected/am-$v)" \
		"$here/expected/am-$v" "$T/commits"
	for c in $commits; do
		subject=$(git -C "$repo" log -1 --format=%s "$c")
		msg=$(git -C "$repo" log -1 --format=%B "$c")
		problems=$(
			[[ $subject =~ ^[a-zA-Z0-9/._-]+:\ [a-z] ]] || echo "subject is not \"area: what\""
			[[ $subject == *. ]] && echo "subject ends with a full stop"
			body=$(echo "$msg" | sed '1,2d' | grep -v '^Signed-off-by: ' | grep -c .)
			[ "$body" -ge 3 ] || echo "no body that says why ($body lines)"
			echo "$msg" | grep -q "^Signed-off-by: $(git -C "$repo" log -1 --format='%an <%ae>' "$c")$" ||
				echo "no Signed-off-by of its author"
			echo "$msg" | grep -v '^Signed-off-by: ' |
				awk 'length > 72 { print "message line over 72 columns: " $0 }'
			git -C "$repo" diff "$c~" "$c" -- '*.c' '*.h' '*.sh' Makefile | grep '^+' | grep -v '^+++ ' |
				cut -c2- | expand -t 8 | awk 'length > 80 { print "code line over 80 columns: " $0 }'
		)
		expect_eq "$v: $subject: as SubmittingPatches asks" "" "$problems"
	done
done
echo "gitam: $pass passed, $fail failed"
[ "$fail" = 0 ]
