#!/usr/bin/env bash
# The man pages (man/): each renders with `man -l` without a warning, at
# 200 columns and at man's default width (80 columns), passes
# `mandoc -T lint` and gives lexgrog (mandb's parser) its NAME line, where
# those tools are installed; and the pages of tr2-bpf and tr2-fmt document
# exactly the options their --help lists: the OPTIONS section's items (.TP
# tags) against the option column of --help, so that an option added to one
# and not the other fails here.
#
#   tests/man/run.sh [BUILD]     (default build: BUILD/tr2-bpf, BUILD/tr2-fmt)
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
export LC_ALL=C
T=$(mktemp -d /tmp/tr2-man.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0
. tests/lib.sh
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }

declare -A name=(
	[man/tr2-bpf.1]="tr2-bpf - trace a program's Trace2 events through its USDT probes with eBPF"
	[man/tr2-fmt.1]="tr2-fmt - convert Trace2 EVENT lines, or a tr2-bpf recording, to git's NORMAL, PERF or EVENT format, a Chrome trace, folded stacks or a summary"
	[man/trace2.3]="trace2 - Git's Trace2 API as zero-cost USDT probes"
)
for page in man/tr2-bpf.1 man/tr2-fmt.1 man/trace2.3; do
	if command -v man > /dev/null; then
		MANWIDTH=200 man --warnings -l "$page" > "$T/out" 2> "$T/err"
		expect_eq "$page: man -l renders it, no warning" "0:" "$?:$(cat "$T/err")"
		expect_eq "$page: rendered NAME line" "       ${name[$page]}" "$(sed -n '/^NAME$/{n;p;q}' "$T/out")"
		# What a reader gets: man's own width, 80 columns when its output
		# is not a terminal and neither MANWIDTH nor COLUMNS is set (lines
		# of 78), where a line too long to break is a troff warning on
		# stderr; plain, and with --warnings.
		for opt in "" --warnings; do
			env -u MANWIDTH -u COLUMNS man ${opt:+"$opt"} -l "$page" > "$T/out" 2> "$T/err"
			expect_eq "$page: man $opt${opt:+ }-l at the default width prints no warning" "0:" "$?:$(cat "$T/err")"
		done
		expect_eq "$page: the default width: a header line of 78" 78 "$(head -1 "$T/out" | awk '{ print length }')"
	else
		skipped "$page: man -l (man-db not installed)"
	fi
	if command -v mandoc > /dev/null; then
		expect_eq "$page: mandoc -T lint -W warning" "" "$(mandoc -T lint -W warning "$page" 2>&1)"
	else
		skipped "$page: mandoc -T lint (mandoc not installed)"
	fi
	if command -v lexgrog > /dev/null; then
		expect_eq "$page: lexgrog" "$page: \"${name[$page]}\"" "$(lexgrog "$page" 2>&1)"
	else
		skipped "$page: lexgrog (man-db not installed)"
	fi
done

# help_options PROG: the options of PROG --help, one a line, sorted: every
# -x and --long in the first column of the lines that start with an option.
help_options() {
	"$1" --help | sed -n 's/^ *\(-[^ ].*\)$/\1/p' | sed 's/   .*//' |
		grep -oE '(^|[ ,[|])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,[|]//' | sort -u
}
# page_options PAGE: the options that head an item (.TP tag) of its OPTIONS
# section, with roff's \- read as -, one a line, sorted.
page_options() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | sed -n '/^\.TP/{n;p}' | sed 's/\\-/-/g; s/\\f[BIRP]//g' |
		grep -oE '(^|[ ,[|])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,[|]//' | sort -u
}
for prog in tr2-bpf tr2-fmt; do
	help_options "$B/$prog" > "$T/help"
	page_options "man/$prog.1" > "$T/page"
	# --help fits a screen or two, 80 columns; the page is the reference.
	expect_eq "$prog --help: at most 60 lines of at most 80 columns" "yes 0" \
		"$( [ "$("$B/$prog" --help | wc -l)" -le 60 ] && echo yes || echo no) $("$B/$prog" --help | awk 'length > 80' | wc -l)"
	# A sanity floor: the parser found the options at all.
	expect_eq "$prog --help: options found" yes "$( [ "$(wc -l < "$T/help")" -ge 6 ] && echo yes || echo no)"
	if diff "$T/help" "$T/page" > "$T/diff"; then
		ok "$prog: the man page documents every option of --help, and no other ($(paste -sd' ' "$T/help"))"
	else
		bad "$prog: options of --help (<) and of man/$prog.1 (>) differ" "$(cat "$T/diff")"
	fi
done

echo "man: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
