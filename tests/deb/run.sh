#!/usr/bin/env bash
# The Debian packages that `make deb` built into DEB_BUILD: their version,
# Depends (dpkg-shlibdeps) and contents, lintian's whole output (explained
# in debian/*.lintian-overrides), and, as root, what a user gets from
#   apt-get install ./tr2_*.deb ./libtr2-0_*.deb ./libtr2-dev_*.deb
# examples/dirscan.c built with pkg-config against the installed package and
# traced by the installed /usr/bin/tr2-bpf, git with tr2's series built
# against it with `make USE_TR2=YesPlease` and traced, the man pages, and
# `apt-get purge`
# leaving nothing behind.  The packages are purged on any exit: make test's
# other suites never see them (it runs last all the same).  The install part
# is skipped when not root, or when a tr2 package was installed before.
#
#   tests/deb/run.sh [DEB_BUILD [BUILD]]   (default build/deb and build)
set -u
cd "$(dirname "$0")/../.."
D=${1:-build/deb}
B=${2:-build}	# where contrib/git/build.sh keeps git's source (git-dl/)
EXP=tests/deb/expected
export LC_ALL=C
T=$(mktemp -d /tmp/tr2-deb.XXXXXX)
PKGS="tr2 libtr2-0 libtr2-dev"
pass=0 fail=0 skip=0
. tests/lib.sh
installed() { for p in $PKGS; do dpkg-query -W -f '${Status} ${Package}\n' "$p" 2> /dev/null; done | grep '^install ok installed'; }
# apt-get waits for the dpkg lock (another apt-get on the machine) rather
# than failing at once.
apt() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q "$@"; }
purge() {
	if [ -e "$T/ours" ] && ! apt purge $PKGS > "$T/purge.out" 2>&1; then
		echo "tests/deb/run.sh: apt-get purge $PKGS failed: $(grep '^E:' "$T/purge.out" | head -1)" >&2
	fi
	rm -f "$T/ours"
}
trap 'purge; rm -rf "$T"' EXIT

V=$(sed -n 's/^TR2_VERSION *:= *//p' usdt/build.mk)
expect_eq "debian/changelog's version is the Makefile's" "$V" "$(dpkg-parsechangelog -S Version)"
for p in $PKGS; do
	deb=$D/${p}_${V}_amd64.deb
	if [ ! -f "$deb" ]; then bad "$p: $deb built"; continue; fi
	dpkg-deb -c "$deb" | awk '{ s = $1 " " $6; if ($7 != "") s = s " " $7 " " $8; print s }' | sort -k2 > "$T/$p.contents"
	same "$p: contents" "$EXP/$p.contents" "$T/$p.contents"
	expect_eq "$p: Depends" "$(cat "$EXP/$p.depends")" "$(dpkg-deb -f "$deb" Depends)"
done

# lintian, every tag down to pedantic ones, overridden ones shown: the whole
# output is in the expected file, so a new tag of any level fails here.
if command -v lintian > /dev/null; then
	lintian -I -E --pedantic --show-overrides "$D"/tr2_${V}_amd64.deb "$D"/libtr2-0_${V}_amd64.deb \
		"$D"/libtr2-dev_${V}_amd64.deb 2>&1 | grep -v '^running with root privileges' > "$T/lintian"
	same "lintian: no error or warning; infos as expected, overrides explained" "$EXP/lintian.txt" "$T/lintian"
else
	skip=$((skip + 1)); echo "SKIP lintian (not installed)"
fi

if [ "$(id -u)" != 0 ]; then
	skip=$((skip + 1)); echo "SKIP apt-get install: not root"
elif [ -n "$(installed)" ]; then
	skip=$((skip + 1)); echo "SKIP apt-get install: already installed, not this test's to purge: $(installed)"
else
	touch "$T/ours"
	(cd "$D" && apt install ./tr2_*.deb ./libtr2-0_*.deb ./libtr2-dev_*.deb) > "$T/apt.out" 2>&1
	expect_eq "apt-get install ./tr2_*.deb ./libtr2-0_*.deb ./libtr2-dev_*.deb" 0: "$?:$(grep '^E:' "$T/apt.out")"
	expect_eq "the three packages are installed" "install ok installed tr2
install ok installed libtr2-0
install ok installed libtr2-dev" "$(installed)"
	expect_eq "pkg-config finds tr2 in the system's directories" "-ltr2" "$(pkg-config --cflags --libs tr2 | sed 's/ *$//')"
	cc -o "$T/dirscan" examples/dirscan.c $(pkg-config --cflags --libs tr2) -pthread
	expect_eq "examples/dirscan.c built against the package" 0 "$?"
	expect_eq "it loads libtr2.so.0 from the package" "/lib/x86_64-linux-gnu/libtr2.so.0" \
		"$(ldd "$T/dirscan" | awk '$1 == "libtr2.so.0" { print $3 }')"
	# git with tr2's series, built as a git builder builds it against the
	# package (docs/git.md): a clean checkout of 2.39.5 with the series
	# applied by git am, then `make USE_TR2=YesPlease git` and nothing
	# else (tr2 found by pkg-config); the installed tr2-bpf then writes the
	# EVENT lines that git's own target writes for the same run (but the
	# times, and the site of atexit, which git writes from its target).
	if contrib/git/checkout.sh "$B" 2.39.5 "$T/git" > "$T/git-checkout.out" 2>&1; then
		make -C "$T/git" -j"$(nproc)" USE_TR2=YesPlease git > "$T/git-make.out" 2>&1
		expect_eq "git 2.39.5 with the series: make USE_TR2=YesPlease git against the package" 0 "$?"
		expect_eq "git links libtr2.a, not libtr2.so" "" "$(ldd "$T/git/git" | grep libtr2)"
		(cd "$T/git" && GIT_TRACE2_EVENT="$T/git.event" /usr/bin/tr2-bpf --event="$T/tr2.event" \
			-- ./git rev-parse --git-dir > /dev/null 2> "$T/git-bpf.err")
		expect_eq "the installed tr2-bpf traced git: the summary alone, nothing lost" "tr2-bpf: N events, 0 lost" \
			"$(sed 's/: [1-9][0-9]* events/: N events/' "$T/git-bpf.err")"
		for f in git tr2; do
			python3 tests/e2e/mask.py event < "$T/$f.event" |
				sed '/"event": *"atexit"/s/"file": *"[^"]*", *"line": *[0-9]*/"file": "F", "line": L/' > "$T/$f.m"
		done
		same "the installed tr2-bpf: git's EVENT lines, as git's own target writes them" "$T/git.m" "$T/tr2.m"
	else
		bad "contrib/git/checkout.sh: git 2.39.5 with the series" "$(cat "$T/git-checkout.out")"
	fi
	mkdir -p "$T/tree/a/b" "$T/tree/c"
	for i in 1 2 3; do echo "file $i" > "$T/tree/a/f$i"; done
	echo x > "$T/tree/a/b/g"; echo y > "$T/tree/c/h"
	/usr/bin/tr2-bpf --perf="$T/x.p" -- "$T/dirscan" -j 2 "$T/tree" > /dev/null 2> "$T/x.err"
	expect_eq "the installed tr2-bpf: dirscan's exit status" 0 "$?"
	expect_eq "the installed tr2-bpf: the summary alone, nothing lost" "tr2-bpf: N events, 0 lost" \
		"$(sed 's/: [1-9][0-9]* events/: N events/' "$T/x.err")"
	grep -E '\| main +\| (version|start|cmd_name|exit|atexit) ' "$T/x.p" | python3 tests/e2e/mask.py perf |
		sed "s|$T/dirscan|build/examples/dirscan|; s|$T|TMP|g" > "$T/x.m"
	same "the installed tr2-bpf: dirscan's main-thread lines (tests/e2e/expected/dirscan-main.perf)" \
		tests/e2e/expected/dirscan-main.perf "$T/x.m"
	unit=/usr/share/doc/tr2/examples/tr2-host.service
	expect_eq "the example unit is shipped, not enabled" "$unit" \
		"$(ls $unit /etc/systemd/system/*/tr2-host.service /lib/systemd/system/tr2-host.service 2> /dev/null)"
	if command -v systemd-analyze > /dev/null && [ -e /usr/share/man/man1/tr2-bpf.1.gz ]; then
		expect_eq "systemd-analyze verify: the example unit's command and man page exist" "" \
			"$(systemd-analyze verify "$unit" 2>&1)"
	else
		skip=$((skip + 1)); echo "SKIP systemd-analyze verify: no systemd-analyze, or no man pages here"
	fi
	# Images that leave out /usr/share/man (dpkg path-exclude) have no pages.
	if [ -e /usr/share/man/man1/tr2-bpf.1.gz ]; then
		expect_eq "man finds the installed pages" \
			"/usr/share/man/man1/tr2-bpf.1.gz /usr/share/man/man1/tr2-fmt.1.gz /usr/share/man/man3/trace2.3.gz" \
			"$(man -w tr2-bpf tr2-fmt trace2 | paste -sd' ')"
	else
		skip=$((skip + 1)); echo "SKIP man -w: this system does not install /usr/share/man"
	fi
	purge
	expect_eq "apt-get purge removes the three packages" "" "$(installed)"
	expect_eq "and libtr2.so.0 from the loader's cache" "" "$(ldconfig -p | grep libtr2)"
	expect_eq "and every file" "" "$(ls -d /usr/bin/tr2-bpf /usr/bin/tr2-fmt /usr/include/trace2.h /usr/include/tr2 \
		/usr/lib/x86_64-linux-gnu/libtr2* /usr/lib/x86_64-linux-gnu/pkgconfig/tr2.pc 2> /dev/null)"
fi

echo "deb: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
