#!/usr/bin/env bash
# Every Trace2 target value of seeds/000 "Enabling a Target", for tr2-fmt:
# a file descriptor, an absolute path (appended to), a directory (one file
# per process, named after the last part of its sid; git's file limit and
# sentinel), af_unix stream and dgram sockets (one connection per process),
# each compared whole with what the same run writes to standard output.
#
#   tests/fmt/dest.sh [TR2FMT]
set -uo pipefail
cd "$(dirname "$0")/../.."
fmt=$(realpath "${1:-build/tr2-fmt}")
in=tests/fmt/cases/dest/git-alias.event   # a git alias run: two processes
T=$(mktemp -d /tmp/tr2-dest.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0
check() { if cmp -s "$2" "$3"; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; diff "$2" "$3" | head -5; fi; }

"$fmt" --perf "$in" > "$T/want.perf"
"$fmt" --event "$in" > "$T/want.event"

"$fmt" --perf=3 "$in" 3> "$T/fd3"
check "fd 3" "$T/want.perf" "$T/fd3"

"$fmt" --perf="$T/file" "$in"
"$fmt" --perf="$T/file" "$in"
cat "$T/want.perf" "$T/want.perf" > "$T/want2"
check "absolute path, appended to" "$T/want2" "$T/file"

sids=$(python3 -c 'import json,sys
seen=[]
for l in open(sys.argv[1]):
    s=json.loads(l)["sid"]
    if s not in seen: seen.append(s)
print(" ".join(seen))' "$in")

mkdir "$T/dir"
"$fmt" --event="$T/dir" "$in"
for sid in $sids; do
	grep -F "\"sid\":\"$sid\"" "$T/want.event" > "$T/want.one"
	check "directory: file ${sid##*/}" "$T/want.one" "$T/dir/${sid##*/}"
done

# A process whose file cannot be made (its name and .1 to .9 taken, as git
# tries them): its lines are dropped, counted and said once; the other
# process's file is whole; tr2-fmt exits 2 (the output is not whole).
first=${sids%% *} second=${sids##* }
mkdir "$T/taken"
for suffix in "" .1 .2 .3 .4 .5 .6 .7 .8 .9; do : > "$T/taken/${first##*/}$suffix"; done
"$fmt" --event="$T/taken" "$in" 2> "$T/taken.err"
check "directory, one process's file taken: exit status 2" <(echo 2) <(echo $?)
n=$(grep -cF "\"sid\":\"$first\"" "$T/want.event")
printf "tr2-fmt: cannot open '%s': File exists\ntr2-fmt: '%s': %s lines of 1 process dropped\n" \
	"$T/taken/${first##*/}" "$T/taken" "$n" > "$T/taken.want"
check "directory, one process's file taken: stderr" "$T/taken.want" "$T/taken.err"
grep -F "\"sid\":\"$second\"" "$T/want.event" > "$T/want.one"
check "directory, one process's file taken: the other process's file whole" "$T/want.one" "$T/taken/${second##*/}"

mkdir "$T/full"
"$fmt" --event="$T/full" --max-files=3 "$in"
check "directory at --max-files: git's sentinel" <(echo "$(ls "$T/full" | wc -l) $(ls "$T/full" | grep -c git-trace2-discard)") <(echo "2 1")

# A listener that writes what it receives to a file; stream or dgram.  A
# stream listener writes each connection to OUT.N (N from 1, in the order
# accepted) and stops when they have all ended and none came for 1 s.
listen() { # KIND PATH OUT
	python3 - "$@" <<'PY' &
import os, selectors, socket, sys
kind, path, out = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(10)
with open(out, "wb") as f:
    if kind == "stream":
        s.listen(8)
        open(out + ".ready", "w").close()
        sel = selectors.DefaultSelector()
        sel.register(s, selectors.EVENT_READ)
        n, live = 0, 0
        while True:
            ev = sel.select(timeout=1 if n and not live else 10)
            if not ev:
                break
            for key, _ in ev:
                if key.fileobj is s:
                    c, _ = s.accept()
                    n += 1
                    live += 1
                    sel.register(c, selectors.EVENT_READ, open("%s.%d" % (out, n), "wb"))
                else:
                    b = key.fileobj.recv(65536)
                    if b:
                        key.data.write(b)
                    else:
                        sel.unregister(key.fileobj)
                        key.fileobj.close()
                        key.data.close()
                        live -= 1
    else:
        open(out + ".ready", "w").close()
        try:
            while True:
                f.write(s.recv(65536))
                f.flush()
        except socket.timeout:
            pass
PY
	for _ in $(seq 100); do [ -e "$3.ready" ] && return; sleep 0.05; done
}
# One connection per process, each with that process's lines, as the
# directory's files.
listen stream "$T/sock-s" "$T/stream.out"
"$fmt" --event="af_unix:stream:$T/sock-s" "$in"
wait %1 2>/dev/null
n=0
for sid in $sids; do
	n=$((n + 1))
	grep -F "\"sid\":\"$sid\"" "$T/want.event" > "$T/want.one"
	check "af_unix:stream: connection $n: process ${sid##*/}" "$T/want.one" "$T/stream.out.$n"
done
check "af_unix:stream: one connection per process" <(echo $n) <(ls "$T"/stream.out.[0-9]* | wc -l)

listen dgram "$T/sock-d" "$T/dgram.out"
"$fmt" --perf="af_unix:dgram:$T/sock-d" "$in"
for _ in $(seq 100); do cmp -s "$T/want.perf" "$T/dgram.out" && break; sleep 0.05; done
check "af_unix:dgram:" "$T/want.perf" "$T/dgram.out"
kill %2 2>/dev/null

"$fmt" --perf=af_unix:/nonexistent/sock "$in" 2> "$T/err"
check "af_unix: no listener: one line, status 2" <(echo "2 1") <(echo "$? $(wc -l < "$T/err")")

# The listener goes away after tr2-fmt connected: its processes' lines are
# dropped, reported, counted; exit status 2.
python3 - "$T/sock-g" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(10)
c, _ = s.accept()
open(sys.argv[1] + ".accepted", "w").close()
PY
listener=$!
for _ in $(seq 100); do [ -S "$T/sock-g" ] && break; sleep 0.05; done
mkfifo "$T/fifo"
"$fmt" --event="af_unix:$T/sock-g" < "$T/fifo" 2> "$T/err" &
exec 8> "$T/fifo"
wait $listener
cat "$in" >&8
exec 8>&-
wait $!
check "af_unix: listener gone: status 2, the failure and the count" \
	<(echo "2"; echo "tr2-fmt: cannot connect to socket '$T/sock-g': Connection refused"
	  echo "tr2-fmt: 'af_unix:$T/sock-g': $(wc -l < "$in") lines of 2 processes dropped") \
	<(echo "$?"; cat "$T/err")

echo "dest: $pass passed, $fail failed"
[ $fail = 0 ]
