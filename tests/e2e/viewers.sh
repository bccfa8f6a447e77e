#!/usr/bin/env bash
# The viewer formats in a real viewer: traces the bundled example with
# tr2-bpf --perf --chrome --folded, checks the chrome trace's structure
# against the PERF stream of the same run (tests/e2e/chrome_check.py), then
# loads the chrome trace and the folded stacks into speedscope (the npm
# package's offline page, build/npm/) in Debian's headless Chromium and
# checks, in the page speedscope drew, that it imported the three threads
# and the regions by name, without a complaint on its console.  Keeps
# screenshots in build/viewers/ for a human to look at.
#
#   tests/e2e/viewers.sh                 run
#   tests/e2e/viewers.sh --screenshot    also copy the timeline screenshot to
#                                        docs/dirscan-timeline.png (README)
#
# Needs root and BPF, Chromium (Debian's chromium package) and npm, which
# scripts/install-deps.sh installs; says so and skips where one is missing.
set -u
cd "$(dirname "$0")/../.."
B=${TR2_BUILD:-build}
OUT=$B/viewers
NPM_DIR=$B/npm
SPEEDSCOPE_VERSION=1.25.0
pass=0 fail=0

. tests/lib.sh
skip() { echo "viewers: SKIP: $1"; echo "viewers: $pass passed, $fail failed, 1 skipped"; exit $(( fail > 0 )); }

[ "$(id -u)" = 0 ] || skip "not root; tr2-bpf loads BPF programs"
mkdir -p "$OUT"
OUT=$(realpath "$OUT")   # a path DEST is absolute, and appended to
rm -f "$OUT"/dirscan.*
T=$(mktemp -d /tmp/tr2-viewers.XXXXXX)
trap 'rm -rf "$T"' EXIT

# --- trace the example --------------------------------------------------
mkdir -p "$T/tree/a/b" "$T/tree/c"
for i in 1 2 3; do echo "file $i" > "$T/tree/a/f$i"; done
echo x > "$T/tree/a/b/g"; echo y > "$T/tree/c/h"
if ! $B/tr2-bpf --perf="$T/d.perf" --chrome="$OUT/dirscan.trace.json" --folded="$OUT/dirscan.folded" \
	-- $B/examples/dirscan -j 2 "$T/tree" > /dev/null 2> "$T/err"; then
	case "$(cat "$T/err")" in
	*"Operation not permitted"*|*"Function not implemented"*|*BTF*) skip "BPF unavailable: $(tail -1 "$T/err")";;
	esac
	bad "tr2-bpf traces dirscan" "$(cat "$T/err")"
fi
expect_eq "dirscan: nothing lost" " 0 lost" "$(tail -1 "$T/err" | sed 's/.*,//')"
if out=$(python3 tests/e2e/chrome_check.py "$OUT/dirscan.trace.json" "$T/d.perf"); then
	ok "chrome trace: B/E pairs nest per thread, pid/tid/ts everywhere, names as PERF's ($out)"
else
	bad "chrome trace: structure" "$out"
fi
# folded: the same regions, one line per stack of process;thread;frames and
# a count of µs; read_dir recurses into a/ and a/b/
if awk '!/^dirscan;(main|th0[12]:reader)(;[a-z_]+:[a-z_]+)+ [0-9]+$/ { bad = 1; print } END { exit bad }' \
	"$OUT/dirscan.folded" > "$T/badlines"; then
	ok "folded: every line is dirscan;<thread>;<category:label>... <µs>"
else
	bad "folded: lines" "$(cat "$T/badlines")"
fi
expect_eq "folded: the stacks of the main thread" \
	"dirscan;main;scan:pass dirscan;main;scan:pass;scan:check dirscan;main;scan:pass;scan:read dirscan;main;scan:pass;scan:walk dirscan;main;scan:pass;scan:walk;walk:read_dir dirscan;main;scan:pass;scan:walk;walk:read_dir;walk:read_dir dirscan;main;scan:pass;scan:walk;walk:read_dir;walk:read_dir;walk:read_dir" \
	"$(grep '^dirscan;main;' "$OUT/dirscan.folded" | sed 's/ [0-9]*$//' | tr '\n' ' ' | sed 's/ $//')"

# A trace cut short: tr2-bpf killed (-9) while dirscan scans on.  What it
# wrote is whole lines of one unclosed array; with the closing bracket the
# format lets readers add, it is JSON.
$B/examples/dirscan --loop --interval 10 "$T/tree" > /dev/null &
scan=$!
$B/tr2-bpf --chrome="$T/killed.json" -p $scan 2> "$T/killed.err" &
tracer=$!
for _ in $(seq 100); do [ -s "$T/killed.json" ] && grep -q '"E"' "$T/killed.json" && break; sleep 0.1; done
kill -9 $tracer; wait $tracer 2> /dev/null
kill $scan; wait $scan 2> /dev/null
if out=$(python3 -c 'import json, sys
text = open(sys.argv[1]).read()
assert text.startswith("[{") and text.endswith("}\n") and "]" not in text[-3:], "not an unclosed array of whole lines"
print(len(json.loads(text + "]")), "events")' "$T/killed.json" 2>&1); then
	ok "killed trace: an unclosed array that parses once ']' is added ($out)"
else
	bad "killed trace" "$out"
fi

# --- speedscope in Chromium ---------------------------------------------
# CHROMIUM set (to a browser, or empty to see the skip) overrides the search
CHROMIUM=${CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || skip "no chromium (Debian package chromium; scripts/install-deps.sh installs it)"
SS=$NPM_DIR/node_modules/speedscope/dist/release
if [ ! -f "$SS/index.html" ]; then
	command -v npm > /dev/null || skip "no npm (scripts/install-deps.sh installs it)"
	if ! npm install --no-save --no-audit --no-fund --prefix "$NPM_DIR" "speedscope@$SPEEDSCOPE_VERSION" \
		> "$T/npm.log" 2>&1; then
		skip "npm could not install speedscope@$SPEEDSCOPE_VERSION: $(tail -1 "$T/npm.log")"
	fi
fi
SS=$(realpath "$SS")

# view FILE NAME VIEW EXTRA...: loads FILE into speedscope as NAME (speedscope
# picks its importer by content, and by name for a few suffixes), in view
# VIEW (time-ordered, left-heavy, sandwich); EXTRA are chromium's output
# options (a later --window-size wins).  The console goes to $T/console.
view() {
	local file=$1 name=$2 mode=$3; shift 3
	python3 -c 'import base64, json, sys
print("speedscope.loadFileFromBase64(%s, %s)" % (json.dumps(sys.argv[1]),
      json.dumps(base64.b64encode(open(sys.argv[2], "rb").read()).decode())))' "$name" "$file" > "$T/profile.js"
	rm -rf "$T/profile-dir"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/profile-dir" --enable-logging=stderr --v=0 --hide-scrollbars \
		--window-size=1280,640 --virtual-time-budget=10000 "$@" \
		"file://$SS/index.html#localProfilePath=$T/profile.js&view=$mode" 2> "$T/chromium.err"
	grep -o 'INFO:CONSOLE[^"]*"[^"]*' "$T/chromium.err" | sed 's/^[^"]*"//' > "$T/console"
}

# text DOM: the words the page shows, one per line
text() { python3 -c 'import html, re, sys
s = re.sub(r"<(style|script)\b.*?</\1>", "", sys.stdin.read(), flags=re.S)
print("\n".join(html.unescape(t).strip() for t in re.split(r"<[^>]+>", s) if t.strip()))'; }

# complaints: speedscope's console lines that mean it did not take the input
# as it is.  But one: an "E" whose args are its "B"'s and a region's split
# by scheduler state (tr2-bpf(1), WHERE THE TIME WENT), which Perfetto and
# chrome://tracing merge into the slice's args, and speedscope, which
# matches an "E" to its "B" by name and args, ends as that "B" (as it says).
complaints() {
	python3 - "$T/chromium.err" <<-'PY' | grep -E 'Tried to end|still open|Failed|rror' | grep -v WebGL
	import re, sys
	split = re.compile(r',"on_cpu_us":[0-9.]+,"runnable_us":[0-9.]+,"blocked_us":[0-9.]+,"asleep_us":[0-9.]+'
	                   r'(,"split_since_trace":true)?')
	for line in open(sys.argv[1], errors="replace"):
	    m = re.search(r'INFO:CONSOLE[^"]*"(.*)", source:', line)
	    if not m:
	        continue
	    e = re.fullmatch(r'ts=[0-9.]+: Tried to end "(.*)" when "(.*)" was on the top of the stack\. Ending (.*) instead\.',
	                     m.group(1))
	    if e and split.sub("", e.group(1)) == e.group(2) == e.group(3):
	        continue
	    print(m.group(1))
	PY
}

# sandwich FILE NAME IMPORTER WHAT: loads FILE as NAME into speedscope's
# sandwich view (a table of every frame, and the list of profiles); checks
# that speedscope imported it as IMPORTER and complained about nothing.
# The page's text goes to $T/WHAT.txt.
sandwich() {
	view "$1" "$2" sandwich --dump-dom | text > "$T/$4.txt"
	if grep -qx "Importing as $3" "$T/console"; then
		ok "speedscope: imports the $4 output as $3"
	else
		bad "speedscope: imports the $4 output" "$(head -5 "$T/console")"
	fi
	expect_eq "speedscope: no complaint on its console ($4)" "" "$(complaints)"
}

sandwich "$OUT/dirscan.trace.json" dirscan.trace.json "Trace Event Format profile" chrome
expect_eq "speedscope: one profile per thread, named by process_name and thread_name" \
	"dirscan main|dirscan th01:reader|dirscan th02:reader|" \
	"$(sed -nE 's/^(dirscan) \(.*-P[0-9a-f]{8}\) \(pid [0-9]+\), ([a-z0-9:]+) \(tid [0-9]+\)$/\1 \2/p' "$T/chrome.txt" | sort -u | tr '\n' '|')"
expect_eq "speedscope: the main thread's slices (sandwich view)" \
	"child:check|scan:check|scan:pass|scan:read|scan:walk|walk:read_dir|" \
	"$(grep -oE '^(scan|walk|child):[a-z_]+' "$T/chrome.txt" | sort -u | tr '\n' '|')"

sandwich "$OUT/dirscan.folded" dirscan.folded "collapsed stack format" folded
# the frames of the stacks that weigh something: speedscope leaves out a
# stack of weight 0 (a reader done in under 1 us: "th02:reader;read:files 0")
expect_eq "speedscope: the frames of the folded stacks" \
	"$(awk '$NF > 0 { NF--; gsub(";", "\n"); print }' "$OUT/dirscan.folded" | sort -u | tr '\n' '|')" \
	"$(grep -xE 'dirscan|main|th0[12]:reader|[a-z]+:[a-z_]+' "$T/folded.txt" | sort -u | tr '\n' '|')"

# screenshots for a human: the main thread's timeline, and the flame graph
view "$OUT/dirscan.trace.json" dirscan.trace.json time-ordered --screenshot="$OUT/dirscan-timeline.png" \
	--window-size=1100,230
view "$OUT/dirscan.folded" dirscan.folded left-heavy --screenshot="$OUT/dirscan-flame.png" --window-size=1100,300
for png in dirscan-timeline dirscan-flame; do
	if [ "$(head -c 8 "$OUT/$png.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
		ok "screenshot $OUT/$png.png"
	else
		bad "screenshot $OUT/$png.png" "$(tail -3 "$T/chromium.err")"
	fi
done
if [ "${1:-}" = --screenshot ]; then
	cp "$OUT/dirscan-timeline.png" docs/dirscan-timeline.png && echo "viewers: wrote docs/dirscan-timeline.png"
fi

echo "viewers: $pass passed, $fail failed"
[ "$fail" = 0 ]
