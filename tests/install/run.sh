#!/usr/bin/env bash
# README's commands, run as they are written.  First its "Try it" commands
# (see "README's first commands" below), as root with no sudo on PATH and as
# a user with sudo (a user this test adds and removes; skipped without sudo).
# Then its install-and-build steps: the two ```sh
# blocks after "tests/install/run.sh runs this block" comments, each in a
# fresh directory holding README's app.c (its ```c block) and tr2/, this
# checkout.  The system-wide block installs into PREFIX=/usr/local (in the
# dynamic loader's path), then `make uninstall` removes it again: the files,
# and libtr2.so.0 from the loader's cache, so that ./app no longer runs.  The
# private block uses HOME=a temporary directory.  Needs root (README traces
# with sudo; in these blocks a shell function that runs the command as it is)
# and BPF; says so and skips without.  The system-wide block is skipped when
# /usr/local already holds a libtr2 that is not ours to remove.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export LC_ALL=C
T=$(mktemp -d /tmp/tr2-install.XXXXXX)
pass=0 fail=0 skip=0
. tests/lib.sh
SYS=/usr/local
NC=tr2-newcomer	# the user with sudo, for as long as this test runs
cleanup() {
	# A failed run must not leave tr2 in /usr/local for the suites after it.
	[ -e "$T/sys-installed" ] && make -s -C "$ROOT" uninstall PREFIX=$SYS > /dev/null 2>&1
	# Nor the user and its sudo rule.
	[ -e "$T/user-added" ] && { rm -f /etc/sudoers.d/$NC; userdel $NC; }
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

# --- README's first commands -----------------------------------------------
# The indented commands after README's "tests/install/run.sh runs this as it
# is ... (NAME)" comments: try (install the packages, build, trace the
# example), test (make test) and on-call (dirscan --loop in the background,
# tr2-bpf -p $!, then Ctrl-C: SIGINT 3 seconds after tr2-bpf says it traces),
# each run by bash in a session of its own.  As root, in this checkout, with
# a PATH of root's directories with no sudo in them (a fresh Debian machine);
# and as a user with sudo, in a copy of this checkout without build/, with the
# PATH Debian gives a user.  Two commands are stubs that log who ran them
# and with what: apt-get (scripts/install-deps.sh is CI's first step,
# .ci/run; here it would install or upgrade packages) and, for `test`, make
# (this test is part of make test).  A user's sudo finds them through its
# secure_path.

# indented NAME: README's indented lines after its comment ending "(NAME) -->".
indented() {
	awk -v tag="($1) -->" 'index($0, "tests/install/run.sh runs this as it is") && index($0, tag) { grab = 1; next }
		grab == 1 && /^$/ { next }
		grab && /^    / { grab = 2; print substr($0, 5); next }
		grab { exit }' README.md
}
mkdir -p "$T/stub-apt" "$T/stub-make" "$T/nosudo"
for s in stub-apt/apt-get stub-make/make; do
	printf '#!/bin/sh\necho "$(id -u) $(pwd) %s $*" >> %s\n' "${s#*/}" "$T/stub.log" > "$T/$s"
	chmod +x "$T/$s"
done
# Root's PATH with no sudo: each of its commands, the first by that name.
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	ln -s "$d"/* "$T/nosudo/" 2> /dev/null
done
rm -f "$T/nosudo/sudo"
USER_PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games
declare -A stub=([try]=$T/stub-apt: [test]=$T/stub-make: [on-call]="") secs=([try]=600 [test]=60 [on-call]=60)
# The user's Ctrl-C in on-call: this many seconds after tr2-bpf says it
# traces, however long it took to attach (seconds, under load).
ONCALL_BOUND=2
declare -A watch=([on-call]=$((ONCALL_BOUND + 1)))

# newcomer WHO NAME: runs README's NAME commands as WHO (root or user) under
# timeout -s INT, into $T/WHO-NAME.{out,err,status}, and into
# $T/WHO-NAME.arrivals when each line came (tests/install/arrivals.py).
# With a watch[NAME], the timeout ends (SIGALRM: its timer, expired early)
# that many seconds after tr2-bpf's "tracing" line, as a user's Ctrl-C.
# Lists what the commands left running (on-call's dirscan --loop) in
# $T/WHO-NAME.left, then ends it with their session.
newcomer() {
	local f=$T/$1-$2 pid arrivals
	indented "$2" > "$f.sh"
	[ -s "$f.sh" ] || bad "$1: $2: README has no indented command after a '($2) -->' comment"
	mkfifo "$f.out.fifo" "$f.err.fifo"
	python3 tests/install/arrivals.py "$f" &
	arrivals=$!
	if [ "$1" = root ]; then
		(cd "$ROOT" && exec setsid env PATH="${stub[$2]}$T/nosudo" timeout -s INT "${secs[$2]}" bash "$f.sh") \
			< /dev/null > "$f.out.fifo" 2> "$f.err.fifo" &
	else
		(cd "$T/user/tr2" && exec setsid env -i HOME="$T/user" USER=$NC LOGNAME=$NC PATH=$USER_PATH \
			timeout -s INT "${secs[$2]}" setpriv --reuid=$NC --regid=$NC --init-groups bash "$f.sh") \
			< /dev/null > "$f.out.fifo" 2> "$f.err.fifo" &
	fi
	pid=$!
	if [ -n "${watch[$2]:-}" ]; then
		for _ in $(seq $((10 * ${secs[$2]}))); do
			grep -q '^[0-9.]* err tr2-bpf: tracing ' "$f.arrivals" 2> /dev/null && break
			sleep 0.1
		done
		sleep "${watch[$2]}"
		kill -ALRM $pid 2> /dev/null
	fi
	wait $pid
	echo $? > "$f.status"
	ps -o pid=,args= -s $pid > "$f.left"
	kill -- -$pid 2> /dev/null
	wait $arrivals
}

# mainlines: the main thread's version, start, cmd_name and atexit lines of
# PERF lines, masked.
mainlines() { grep -E '\| main +\| (version|start|cmd_name|atexit) ' | python3 tests/e2e/mask.py perf; }

# check_newcomer WHO DIR: what README says its commands do, run by WHO in DIR.
check_newcomer() {
	local f=$T/$1 dir=$2
	: > "$T/stub.log"
	newcomer "$1" try
	expect_eq "$1: try: status 0" 0 "$(cat "$f-try.status")"
	expect_eq "$1: try: scripts/install-deps.sh ran apt-get update and install, as root" \
		"0 $dir apt-get update|0 $dir apt-get install" "$(awk '{ print $1, $2, $3, $4 }' "$T/stub.log" | paste -sd'|')"
	# Against those of README's lines of what the command prints.
	awk '/^The first command prints/ { f = 1 } f && /^```/ { if (g) exit; g = 1; next } g' README.md | mainlines > "$f-try.want"
	mainlines < "$f-try.out" > "$f-try.got"
	if [ -s "$f-try.want" ] && diff -u "$f-try.want" "$f-try.got" > "$T/diff"; then
		ok "$1: try: tr2-bpf traced the example: its version, start, cmd_name and atexit lines as README shows them"
	else
		bad "$1: try: tr2-bpf traced the example: its version, start, cmd_name and atexit lines as README shows them" \
			"$(cat "$T/diff")"
	fi
	expect_eq "$1: try: stderr ends with the summary" "tr2-bpf: N events, 0 lost" \
		"$(tail -1 "$f-try.err" | sed 's/: [1-9][0-9]* events/: N events/')"

	: > "$T/stub.log"
	newcomer "$1" test
	expect_eq "$1: test: make test, run as root in the checkout" "0:0 $dir make test" \
		"$(cat "$f-test.status"):$(cat "$T/stub.log")"

	newcomer "$1" on-call
	expect_eq "$1: on-call: stopped by its Ctrl-C (timeout's status)" 124 "$(cat "$f-on-call.status")"
	local scanner attach delay
	scanner=$(awk '$2 == "build/examples/dirscan" && $3 == "--loop" { print $1 }' "$f-on-call.left")
	expect_eq "$1: on-call: tr2-bpf -p traced the dirscan --loop that README started, left running" \
		"tr2-bpf: tracing process $scanner: N probe sites in N objects; Ctrl-C to stop" \
		"$(grep '^tr2-bpf: tracing ' "$f-on-call.err" | sed -E 's/[0-9]+ probe sites in [0-9]+ objects/N probe sites in N objects/')"
	# README: lines within a second of the attach, whatever the tree holds
	# (dirscan --loop's readers report every 0.1 s); here within
	# ONCALL_BOUND s of tr2-bpf's "tracing process" line, on a loaded VM.
	attach=$(awk '$2 == "err" && $3 == "tr2-bpf:" && $4 == "tracing" { print $1; exit }' "$f-on-call.arrivals")
	delay=$(awk -v a="${attach:-0}" '$2 == "out" && / \| d0 \| / { printf "%.3f\n", $1 - a; exit }' "$f-on-call.arrivals")
	if [ -n "$attach" ] && [ -n "$delay" ] && awk -v d="$delay" -v b=$ONCALL_BOUND 'BEGIN { exit !(d <= b) }'; then
		ok "$1: on-call: the first PERF line came $delay s after tr2-bpf attached (within $ONCALL_BOUND s)"
	else
		bad "$1: on-call: a PERF line within $ONCALL_BOUND s of tr2-bpf's attach" \
			"attached: ${attach:-never}; first PERF line ${delay:-never} s after"
	fi
	# and, within the same bound, a reader's whole 0.1 s batch, from its
	# region_enter to its region_leave (masked: times, thread, counts)
	awk -v a="${attach:-0}" -v b=$ONCALL_BOUND '$2 == "out" && $1 <= a + b { sub(/^[^ ]+ out /, ""); print }' \
		"$f-on-call.arrivals" | python3 tests/e2e/mask.py perf |
		sed -E 's/ th[0-9]+:reader +\|/ thNN:reader              |/; s/\.\.(files|bytes):[0-9]+$/..\1:N/' |
		grep -Fx -f tests/install/expected/on-call.perf | sort -u > "$f-on-call.batch"
	if sort tests/install/expected/on-call.perf | diff -u - "$f-on-call.batch" > "$T/diff"; then
		ok "$1: on-call: within $ONCALL_BOUND s, a reader's batch of lines (tests/install/expected/on-call.perf)"
	else
		bad "$1: on-call: within $ONCALL_BOUND s, a reader's batch of lines (tests/install/expected/on-call.perf)" \
			"$(cat "$T/diff")"
	fi
	# tr2-bpf's last line (dirscan's own lines on stderr aside: as a user,
	# the directories it cannot open)
	expect_eq "$1: on-call: tr2-bpf's last line on stderr is the summary" "tr2-bpf: N events, 0 lost" \
		"$(grep -v '^dirscan: ' "$f-on-call.err" | tail -1 | sed 's/: [1-9][0-9]* events/: N events/')"
}

expect_eq "root: no sudo on the PATH the commands run with" "" "$(env PATH="$T/nosudo" sh -c 'command -v sudo')"
check_newcomer root "$ROOT"

if ! command -v sudo > /dev/null; then
	skip=$((skip + 1))
	echo "SKIP as a user with sudo: sudo is not installed (scripts/install-deps.sh installs it)"
elif getent passwd $NC > /dev/null || [ -e /etc/sudoers.d/$NC ]; then
	skip=$((skip + 1))
	echo "SKIP as a user with sudo: user $NC or /etc/sudoers.d/$NC exists, not this test's to remove"
else
	printf 'Defaults:%s secure_path="%s"\n%s ALL=(ALL:ALL) NOPASSWD: ALL\n' \
		$NC "$T/stub-apt:$T/stub-make:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" $NC > "$T/sudoers"
	touch "$T/user-added"
	useradd --system --home-dir "$T/user" --shell /bin/bash $NC
	visudo -cqf "$T/sudoers" && install -m 440 "$T/sudoers" /etc/sudoers.d/$NC
	mkdir -p "$T/user/tr2"
	tar -c --exclude-vcs --exclude='./build*' . | tar -x -C "$T/user/tr2"
	chown -R $NC: "$T/user"
	chmod 711 "$T"
	expect_eq "user: $NC is not root, and has sudo" "$(id -u $NC) 0" \
		"$(cd "$T/user" && env -i PATH=$USER_PATH setpriv --reuid=$NC --regid=$NC --init-groups \
			sh -c 'echo $(id -u) $(sudo id -u)' < /dev/null)"
	check_newcomer user "$T/user/tr2"
	rm -f /etc/sudoers.d/$NC
	userdel $NC
	rm "$T/user-added"
	expect_eq "user: $NC and its sudo rule removed" "" "$(getent passwd $NC; getent group $NC; ls /etc/sudoers.d/$NC 2> /dev/null)"
fi

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
		"$(ls -d $SYS/bin/tr2-bpf $SYS/bin/tr2-fmt $SYS/include/trace2.h $SYS/include/tr2 $SYS/lib/libtr2* $SYS/lib/pkgconfig/tr2.pc \
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
expect_eq "private: installed under HOME/.local" "bin/tr2-bpf bin/tr2-fmt include/tr2/trace2.h include/trace2.h lib/libtr2.a lib/libtr2.so lib/libtr2.so.0 lib/libtr2.so.0.1.0 lib/pkgconfig/tr2.pc share/man/man1/tr2-bpf.1 share/man/man1/tr2-fmt.1 share/man/man3/trace2.3" \
	"$(cd "$T/private/home/.local" && find . ! -type d | sed 's|^\./||' | sort | paste -sd' ')"
# What git's Makefile does with USE_TR2 (contrib/git/): the header as
# <tr2/trace2.h>, the flags and libtr2.a's directory from pkg-config.  The
# program calls the runtime, as git does: the semaphores alone are a weak
# reference (trace2.h says why), which takes nothing from an archive.
printf '%s\n' '#define TRACE2_RUNTIME_ONLY' '#include <tr2/trace2.h>' \
	'int main(void) { return trace2__new_repo_id() != 1 || TRACE2__ON(start); }' > "$T/private/git-like.c"
(export PKG_CONFIG_PATH=$T/private/home/.local/lib/pkgconfig
 cc -o "$T/private/git-like" "$T/private/git-like.c" $(pkg-config --cflags tr2) \
	"$(pkg-config --variable=libdir tr2)/libtr2.a" -pthread && "$T/private/git-like")
expect_eq "private: <tr2/trace2.h> and libtr2.a found as git's USE_TR2 finds them" 0 "$?"
expect_eq "private: no ldconfig for a private prefix" "" "$(grep '^ldconfig' "$T/private/out")"
expect_eq "private: the program finds libtr2.so.0 through its rpath" "$T/private/home/.local/lib/libtr2.so.0" \
	"$(ldd "$T/private/app" | awk '$1 == "libtr2.so.0" { print $3 }')"
make -s -C "$ROOT" uninstall PREFIX="$T/private/home/.local" > /dev/null
expect_eq "private: make uninstall leaves no file" "" "$(find "$T/private/home/.local" ! -type d)"
# tr2.pc was made for the private prefix: back to the default for the suites after.
make -s -C "$ROOT" build/tr2.pc > /dev/null

echo "install: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
