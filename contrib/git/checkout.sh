#!/bin/sh
# What a git builder does with the series: a clean checkout of the release
# and `git am` of the series of its release line.
#
#   contrib/git/checkout.sh BUILD VERSION DIR
#
# DIR (new) becomes a git repository of upstream's release tarball from
# BUILD/git-dl/ (contrib/git/build.sh fetch BUILD VERSION gets it), one
# commit tagged vVERSION, with contrib/git/<line>/*.patch applied on it by
# git am (--whitespace=error: a patch that adds a whitespace error fails).
# Exits non-zero if a patch does not apply.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 BUILD VERSION DIR" >&2; exit 2; }
build=$1 version=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
tarball=$build/git-dl/git_$version.orig.tar.xz
[ -f "$tarball" ] || { echo "$0: no $tarball (contrib/git/build.sh fetch $build $version)" >&2; exit 2; }
[ ! -e "$dir" ] || { echo "$0: $dir exists" >&2; exit 2; }

mkdir -p "$dir"
tar -xJf "$tarball" -C "$dir" --strip-components=1
# No configuration of the caller's: the series is applied as it is written.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_COMMITTER_NAME="tr2 checkout" GIT_COMMITTER_EMAIL=checkout@tr2.invalid
git -C "$dir" init -q -b main
# -f: the tarball holds files that the tree's .gitignore names (configure).
git -C "$dir" add -A -f
git -C "$dir" -c user.name="$GIT_COMMITTER_NAME" -c user.email="$GIT_COMMITTER_EMAIL" \
	commit -q -m "v$version"
git -C "$dir" tag "v$version"
git -C "$dir" am -q --whitespace=error "$here/${version%.*}"/*.patch
