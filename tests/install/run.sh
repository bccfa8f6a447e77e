#!/usr/bin/env bash
# README's install-and-build steps, run as they are written: the two ```sh
# blocks after "tests/install/run.sh runs this block" comments, each in a
# fresh directory holding README's app.c (its ```c block) and tr2/, this
# checkout.  The system-wide block installs into PREFIX=/usr/local (in the
# dynamic loader's path), then `make uninstall` removes it again: the files,
# and libtr2.so.0 from the loader's cache, so that ./app no longer runs.  The
# private block uses HOME=a temporary directory.  Needs root (README traces
# with sudo; sudo, absent on CI's machine, runs the command as it is) and BPF;
# says so and skips without.  The system-wide block is skipped when
# /usr/local already holds a libtr2 that is not ours to remove.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export LC_ALL=C
T=$(mktemp -d /tmp/tr2-install.XXXXXX)
pass=0 fail=0 skip=0
. tests/lib.sh
SYS=/usr/local
cleanup() {
	# A failed run must not leave tr2 in /usr/local for the suites after it.
	[ -e "$T/sys-installed" ] && make -s -C "$ROOT" uninstall PREFIX=$SYS > /dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT

if [ "$(id -u)" != 0 ]; then
	echo "install: SKIP: not root; README's steps trace with sudo tr2-bpf"
	echo "install: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

# block N: README's Nth ```sh block after a "runs this block" comment.
block() {
	awk -v want="$1" '/tests\/install\/run.sh runs this block/ { n++; grab = 0; next }
		n == want && /^```sh$/ { grab = 1; next }
		grab && /^```$/ { exit }
		grab { print }' README.md
}
awk '/^```c$/ { grab = 1; next } grab && /^```$/ { exit } grab { print }' README.md > "$T/app.c"

# run_block NAME N: runs block N in $T/NAME with app.c and tr2/, stdout and
# stderr apart; `set -e`: a failing step fails the block.
run_block() {
	local dir=$T/$1
	mkdir -p "$dir/home"
	cp "$T/app.c" "$dir/"
	ln -s "$ROOT" "$dir/tr2"
	block "$2" > "$dir/steps.sh"
	(cd "$dir" && HOME=$dir/home bash -c 'set -e; sudo() { "$@"; }; . ./steps.sh' > "$dir/out" 2> "$dir/err")
	echo $? > "$dir/status"
}

# check NAME: what README promises for either block: the installed tr2-bpf's
# PERF lines of the program, masked (tests/e2e/mask.py), and on stderr only
# the summary (./app itself prints nothing).
check() {
	local dir=$T/$1
	expect_eq "$1: README's steps run, status 0" 0 "$(cat "$dir/status")"
	grep ' | d0 | ' "$dir/out" | python3 tests/e2e/mask.py perf > "$dir/perf.m"
	if diff -u tests/install/expected/app.perf "$dir/perf.m" > "$dir/diff"; then
		ok "$1: the installed tr2-bpf traced the program built against the installed libtr2"
	else
		bad "$1: the installed tr2-bpf traced the program built against the installed libtr2" "$(cat "$dir/diff")"
	fi
	expect_eq "$1: stderr: the summary alone" "tr2-bpf: 9 events, 0 lost" "$(cat "$dir/err")"
}

# --- a prefix in the dynamic loader's path --------------------------------
if [ -e $SYS/lib/libtr2.so.0 ] || [ -e $SYS/include/trace2.h ]; then
	skip=$((skip + 1))
	echo "SKIP system-wide: $SYS already holds a libtr2, not this test's to remove"
else
	sysdirs() { ls -d $SYS/lib/pkgconfig $SYS/share/man/man1 $SYS/share/man/man3 2> /dev/null; }
	sysdirs > "$T/dirs-before"
	touch "$T/sys-installed"
	run_block sys 1
	check sys
	expect_eq "sys: make install ran ldconfig" "ldconfig    # $SYS/lib is in the dynamic loader's path" \
		"$(grep '^ldconfig ' "$T/sys/out")"
	expect_eq "sys: libtr2.so.0 is in the loader's cache" "$SYS/lib/libtr2.so.0" \
		"$(ldconfig -p | awk '$1 == "libtr2.so.0" { print $NF }')"
	make -s -C "$ROOT" uninstall PREFIX=$SYS > "$T/uninstall.out" 2>&1
	expect_eq "sys: make uninstall" "0" "$?"
	rm "$T/sys-installed"
	expect_eq "sys: uninstall removed every installed file" "" \
		"$(ls $SYS/bin/tr2-bpf $SYS/bin/tr2-fmt $SYS/include/trace2.h $SYS/lib/libtr2* $SYS/lib/pkgconfig/tr2.pc \
			$SYS/share/man/man1/tr2-*.1 $SYS/share/man/man3/trace2.3 2> /dev/null)"
	expect_eq "sys: and the directories it made" "$(cat "$T/dirs-before")" "$(sysdirs)"
	expect_eq "sys: and libtr2.so.0 from the loader's cache" "" "$(ldconfig -p | grep libtr2)"
	"$T/sys/app" > /dev/null 2> "$T/noload"
	expect_eq "sys: so the program no longer loads" \
		"127:$T/sys/app: error while loading shared libraries: libtr2.so.0: cannot open shared object file: No such file or directory" \
		"$?:$(cat "$T/noload")"
fi

# --- a private prefix -----------------------------------------------------
run_block private 2
check private
expect_eq "private: installed under HOME/.local" "bin/tr2-bpf bin/tr2-fmt include/trace2.h lib/libtr2.a lib/libtr2.so lib/libtr2.so.0 lib/libtr2.so.0.1.0 lib/pkgconfig/tr2.pc share/man/man1/tr2-bpf.1 share/man/man1/tr2-fmt.1 share/man/man3/trace2.3" \
	"$(cd "$T/private/home/.local" && find . ! -type d | sed 's|^\./||' | sort | paste -sd' ')"
expect_eq "private: no ldconfig for a private prefix" "" "$(grep '^ldconfig' "$T/private/out")"
expect_eq "private: the program finds libtr2.so.0 through its rpath" "$T/private/home/.local/lib/libtr2.so.0" \
	"$(ldd "$T/private/app" | awk '$1 == "libtr2.so.0" { print $3 }')"
make -s -C "$ROOT" uninstall PREFIX="$T/private/home/.local" > /dev/null
expect_eq "private: make uninstall leaves no file" "" "$(find "$T/private/home/.local" ! -type d)"
# tr2.pc was made for the private prefix: back to the default for the suites after.
make -s -C "$ROOT" build/tr2.pc > /dev/null

echo "install: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
