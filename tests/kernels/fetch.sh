#!/bin/sh
# tests/kernels/fetch.sh DIR: Debian's own kernels that tr2-bpf is tested on,
# each unpacked into DIR/VERSION/ (vmlinuz, lib/modules/VERSION/ with its
# modules.dep), the newest of each line the archive has today:
#   5.10  bullseye (Debian 11), linux-image-5.10.0-N-amd64
#   6.1   bookworm (Debian 12), linux-image-6.1.0-N-amd64
#   6.12  bookworm (Debian 13's line), linux-image-6.12.N+deb12-amd64
# Prints the directories, one a line.  The packages come from
# deb.debian.org (KERNEL_DEBIAN_MIRROR overrides) through a private apt
# configuration under DIR/apt/, as contrib/git/build.sh fetches git's
# source: nothing is added to the system's apt sources, nothing installed,
# and a kernel unpacked before is not fetched again.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)
mirror=${KERNEL_DEBIAN_MIRROR:-http://deb.debian.org}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt=$dir/apt
lines='5\.10\.0-[0-9]+ 6\.1\.0-[0-9]+ 6\.12\.[0-9]+\+deb12'

[ -r "$keyring" ] || { echo "$0: no $keyring (install debian-archive-keyring)" >&2; exit 1; }
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dir/dl"
cat > "$apt/sources.list" <<EOF
deb [signed-by=$keyring] $mirror/debian bullseye main
deb [signed-by=$keyring] $mirror/debian-security bullseye-security main
deb [signed-by=$keyring] $mirror/debian bookworm main
deb [signed-by=$keyring] $mirror/debian-security bookworm-security main
EOF
: > "$apt/status"
set -- -q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
	-o Dir::State::Lists="$apt/lists" -o Dir::State::Status="$apt/status" -o Dir::Cache="$apt/cache" \
	-o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)"

# The kernels unpacked already, when each line has one: no network needed.
missing=0
for l in $lines; do
	[ -n "$(ls "$dir" | grep -E "^$l-amd64$" || true)" ] || missing=1
done
if [ "$missing" = 1 ]; then
	apt-get "$@" update > "$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; echo "$0: apt-get update failed" >&2; exit 1; }
	for l in $lines; do
		pkg=$(apt-cache "$@" pkgnames linux-image- | grep -E "^linux-image-$l-amd64$" | sort -V | tail -1)
		[ -n "$pkg" ] || { echo "$0: no package linux-image-$l-amd64 in $mirror" >&2; exit 1; }
		ver=${pkg#linux-image-}
		[ -f "$dir/$ver/vmlinuz" ] && continue
		(cd "$dir/dl" && apt-get "$@" download "$pkg") > "$apt/download.log" 2>&1 ||
			{ cat "$apt/download.log" >&2; echo "$0: apt-get download $pkg failed" >&2; exit 1; }
		rm -rf "$dir/$ver.tmp"
		dpkg-deb -x "$dir"/dl/"${pkg}"_*.deb "$dir/$ver.tmp"
		cp "$dir/$ver.tmp"/boot/vmlinuz-* "$dir/$ver.tmp/vmlinuz"
		rm -rf "$dir/$ver.tmp/boot" "$dir/$ver.tmp/usr"
		depmod -b "$dir/$ver.tmp" "$ver"
		mv "$dir/$ver.tmp" "$dir/$ver"
		rm -f "$dir"/dl/"${pkg}"_*.deb
	done
fi
for l in $lines; do
	ls "$dir" | grep -E "^$l-amd64$" | sort -V | tail -1 | sed "s|^|$dir/|"
done
