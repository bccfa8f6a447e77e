# Sourced by tests/gitdiff/run.sh and tests/git/lines.sh, with $scratch (an
# empty directory) and $suite (the name for messages) set: a git that sees
# none of the caller's configuration or tracing (HOME in $scratch), and the
# scratch repositories both run their commands in: $src (300 + 300 files,
# 13 commits, tag v1, then 8 more commits for fetch to bring over), $work (a
# clone of $src before those 8, with a submodule "sub" and a pre-commit hook
# that runs git), and $scratch/copy.pack (a pack with deltas, for index-pack).
# A git that sees none of the caller's configuration or tracing.
for v in $(env | sed -n 's/^\(GIT_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config" GIT_CONFIG_NOSYSTEM=1
export LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
mkdir -p "$HOME"
git config --global protocol.file.allow always
git config --global init.defaultBranch main
git config --global advice.detachedHead false

# --- scratch repositories (not traced) -------------------------------------
src="$scratch/src" work="$scratch/work"
(
	set -e
	git init -q "$src" && cd "$src"
	mkdir -p d/a d/b
	for i in $(seq 1 300); do echo "line $i" > "d/a/f$i"; echo "other $i" > "d/b/g$i"; done
	seq 1 3000 > big.txt
	git add -A && git commit -q -m init
	for i in $(seq 1 12); do
		sed -i "${i}00s/.*/changed $i/" big.txt
		echo "v$i" >> "d/a/f$i"
		git commit -q -a -m "change $i"
	done
	git tag v1
	git init -q "$scratch/subsrc" && git -C "$scratch/subsrc" commit -q --allow-empty -m sub
	git clone -q "$src" "$work"
	cd "$work"
	git submodule add -q "$scratch/subsrc" sub >/dev/null 2>&1
	git commit -q -m "add sub"
	mkdir -p .git/hooks
	printf '#!/bin/sh\ngit rev-parse -q --verify HEAD >/dev/null\n' > .git/hooks/pre-commit
	chmod +x .git/hooks/pre-commit
	# new history in src for fetch to bring over
	cd "$src"
	for i in $(seq 13 20); do
		sed -i "${i}0s/.*/again $i/" big.txt
		git commit -q -a -m "more $i"
	done
) || { echo "$suite: could not build the scratch repositories" >&2; exit 2; }
# index-pack wants a pack with deltas: make one
git -C "$src" repack -q -a -d
cp "$(ls "$src"/.git/objects/pack/*.pack | head -1)" "$scratch/copy.pack"
