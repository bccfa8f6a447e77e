#!/bin/sh
# Builds git from Debian's source package of a release, with tr2's patch
# series for its release line (contrib/git/<line>/*.patch) and
# USE_TR2=YesPlease, or as Debian ships it.
#
#   contrib/git/build.sh tr2 BUILD [VERSION]    patched, linked with
#                                      BUILD/libtr2.a; installed into
#                                      BUILD/git/
#   contrib/git/build.sh stock BUILD [VERSION]  the same source unpatched,
#                                      the same flags; into BUILD/git-stock/
#   contrib/git/build.sh off BUILD [VERSION]    patched, without USE_TR2,
#                                      into BUILD/git-off/ (the knob off)
#   contrib/git/build.sh fetch BUILD [VERSION]  the download alone
#
# VERSION is 2.39.5 (Debian 12's, the default) or 2.55.0 (git's newest
# release, Debian sid's); a release other than 2.39.5 lands in
# BUILD/git-VERSION/, BUILD/git-stock-VERSION/ and BUILD/git-off-VERSION/.
# Each lands in DIR/bin/git, DIR/libexec/git-core/ and DIR/share/, and
# DIR/src/ is the built tree (git's t/ runs there).  The source comes with
# apt-get source from deb.debian.org (GIT_DEBIAN_MIRROR overrides), through a
# private apt configuration under BUILD/git-apt-SUITE/: deb-src entries of
# the release's suite, signed with Debian's archive keyring.  Nothing is
# added to the system's apt sources and nothing is installed; root is not
# needed.  The download is kept in BUILD/git-dl/, so later builds need no
# network.  A tree is made again when the series, the flags or the source
# change; otherwise make runs in it as it is (incremental), relinking git
# when libtr2.a or trace2.h changed.
set -eu

usage() { echo "usage: $0 tr2|stock|off|fetch BUILD [VERSION]" >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
variant=$1
build=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
git_version=${3:-2.39.5}
# The Debian suites whose source package is this release, and the series
# of its release line.
case $git_version in
2.39.5) suites="debian:bookworm debian-security:bookworm-security" ;;
2.55.0) suites="debian:sid" ;;
*) echo "$0: no series for git $git_version (2.39.5, 2.55.0)" >&2; exit 2 ;;
esac
series=$here/${git_version%.*}
suffix=
[ "$git_version" = 2.39.5 ] || suffix=-$git_version
case $variant in
tr2) out=$build/git$suffix ;;
stock) out=$build/git-stock$suffix ;;
off) out=$build/git-off$suffix ;;
fetch) ;;
*) usage ;;
esac

mirror=${GIT_DEBIAN_MIRROR:-http://deb.debian.org}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# The flags of every variant, so that they differ in the series and the knob
# only.  No http (curl, expat), no translations, no Tcl/Perl/Python parts,
# no Rust (git 2.52 and later; an older git ignores the knob).
flags="NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 NO_RUST=1"
jobs=${GIT_JOBS:-$(nproc)}

fetch() {
	dl=$build/git-dl
	if ls "$dl"/git_$git_version-*.dsc > /dev/null 2>&1; then
		return
	fi
	[ -r "$keyring" ] || { echo "$0: no $keyring (install debian-archive-keyring)" >&2; exit 1; }
	first=${suites%% *}
	apt=$build/git-apt-${first#*:}
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dl"
	for s in $suites; do
		echo "deb-src [signed-by=$keyring] $mirror/${s%%:*} ${s#*:} main"
	done > "$apt/sources.list"
	echo "build.sh: apt-get source git, with these deb-src entries (in $apt/sources.list, not the system's):"
	sed 's/^/    /' "$apt/sources.list"
	set -- -q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)"
	apt-get "$@" update > "$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; echo "$0: apt-get update failed" >&2; exit 1; }
	(cd "$dl" && apt-get "$@" source --download-only git) > "$apt/source.log" 2>&1 ||
		{ cat "$apt/source.log" >&2; echo "$0: apt-get source git failed" >&2; exit 1; }
	ls "$dl"/git_$git_version-*.dsc > /dev/null 2>&1 || {
		echo "$0: Debian's git source is not $git_version: $(ls "$dl")" >&2; exit 1; }
}

# What a tree is made from: the Debian source, the series and the flags.
recipe() {
	ls "$build"/git-dl/git_$git_version-*.dsc
	echo "$variant $flags"
	[ "$variant" = stock ] || cat "$series"/*.patch
}

make_tree() {
	dsc=$(ls "$build"/git-dl/git_$git_version-*.dsc | sort -V | tail -1)
	rm -rf "$out"
	mkdir -p "$out"
	# apt checked the files against the signed index; dpkg-source applies
	# Debian's own patches (debian/patches).
	dpkg-source --no-check -x "$dsc" "$out/src" > "$out/dpkg-source.log" 2>&1 ||
		{ cat "$out/dpkg-source.log" >&2; exit 1; }
	rm -f "$out"/*.orig.tar.*
	if [ "$variant" != stock ]; then
		for p in "$series"/*.patch; do
			echo "build.sh: applying $(basename "$p")"
			patch -d "$out/src" -p1 --forward --quiet < "$p"
		done
	fi
	recipe | sha256sum > "$out/recipe"
}

fetch
[ "$variant" != fetch ] || exit 0
if [ ! -f "$out/recipe" ] || ! recipe | sha256sum | cmp -s - "$out/recipe"; then
	make_tree
fi

set -- $flags prefix="$out"
if [ "$variant" = tr2 ]; then
	# tr2's header under the name git's tree does not shadow (git compiles
	# with -I., and has its own trace2.h), and its runtime, from the build
	# tree: copies, so that a change to either is seen and git relinked.
	inc=$out/tr2/include
	mkdir -p "$inc/tr2"
	if ! cmp -s "$here/../../usdt/trace2.h" "$inc/tr2/trace2.h" ||
	   ! cmp -s "$build/libtr2.a" "$out/tr2/libtr2.a"; then
		cp "$here/../../usdt/trace2.h" "$inc/tr2/trace2.h"
		cp "$build/libtr2.a" "$out/tr2/libtr2.a"
		touch "$out/src/trace2/tr2_usdt.c"
	fi
	libs=$out/tr2/libtr2.a
	set -- "$@" USE_TR2=YesPlease TR2_CFLAGS="-I$inc" TR2_LIBS="$libs"
fi
echo "build.sh: make -C $out/src -j$jobs $* all install"
${MAKE:-make} -C "$out/src" -j"$jobs" "$@" all > "$out/make.log" 2>&1 &&
	${MAKE:-make} -C "$out/src" "$@" install > "$out/install.log" 2>&1 ||
	{ tail -30 "$out/make.log" "$out/install.log" >&2 2> /dev/null; echo "$0: building git failed (logs in $out)" >&2; exit 1; }
"$out/bin/git" version --build-options | sed -n 1p
