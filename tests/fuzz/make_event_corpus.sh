#!/usr/bin/env bash
# Rewrites tests/fuzz/corpus/event/, the seeds of fuzz_read_event: real EVENT
# lines, one per file, up to two per event kind and writer (the installed git
# on a scratch repository: status, log, fetch, pull, gc, an alias, a failing
# checkout, SIGPIPE, BRIEF; and tr2-bpf on tests/progs/tr2_allapi, plain,
# --hostile and --brief, which needs root), plus a few whole traces of one
# command, so that the reader's per-process state has something to work on.
#
#   tests/fuzz/make_event_corpus.sh [BUILD]     (default build; run make first)
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build}
OUT=tests/fuzz/corpus/event
T=$(mktemp -d /tmp/tr2-fuzz-corpus.XXXXXX)
trap 'rm -rf "$T"' EXIT

(
	cd "$T"
	unset GIT_TRACE2 GIT_TRACE2_PERF GIT_TRACE2_EVENT GIT_TRACE2_BRIEF GIT_TRACE2_EVENT_BRIEF
	export GIT_CONFIG_NOSYSTEM=1 HOME=$T GIT_AUTHOR_NAME=n GIT_AUTHOR_EMAIL=n@x \
		GIT_COMMITTER_NAME=n GIT_COMMITTER_EMAIL=n@x
	git init -q src
	for i in 1 2 3; do echo "$i" > src/f$i; git -C src add f$i; git -C src commit -qm "c$i"; done
	git clone -q src dst
	echo 4 > src/f4; git -C src add f4; git -C src commit -qm c4
	cd dst
	export GIT_TRACE2_EVENT_NESTING=10 GIT_TRACE2_CONFIG_PARAMS='core.*,user.name'
	GIT_TRACE2_EVENT=$T/status.json git status > /dev/null
	export GIT_TRACE2_EVENT=$T/git.json
	git log --oneline > /dev/null
	git fetch -q
	git pull -q --rebase=false
	git -c alias.st=status st > /dev/null
	git gc -q
	git checkout -q no-such-branch 2> /dev/null || true
	git -c alias.sh='!echo hi' sh > /dev/null
	seq 200000 > big; git add big; git commit -qm big   # enough for SIGPIPE below
	git -c core.pager=cat log -p --no-color | head -1 > /dev/null
	GIT_TRACE2_EVENT_BRIEF=1 git status > /dev/null
)

if [ "$(id -u)" = 0 ] && [ -x "$B/tr2-bpf" ]; then
	P=$B/tests/progs/tr2_allapi
	timeout -k 5 60 "$B/tr2-bpf" --event="$T/allapi.json" --event-nesting=10 -- $P 2> /dev/null || true
	timeout -k 5 60 "$B/tr2-bpf" --event="$T/bpf.json" --event-nesting=10 -- $P --hostile 2> /dev/null || true
	timeout -k 5 60 "$B/tr2-bpf" --event="$T/bpf.json" --brief -- $P 2> /dev/null || true
	cat "$T/allapi.json" >> "$T/bpf.json"
else
	echo "make_event_corpus: not root or no $B/tr2-bpf: no tr2-bpf lines" >&2
fi

rm -f "$OUT"/*
mkdir -p "$OUT"
python3 - "$T" "$OUT" <<'EOF'
import hashlib, json, os, sys
tmp, out = sys.argv[1], sys.argv[2]
def save(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
for src in ("git", "bpf"):
    path = os.path.join(tmp, src + ".json")
    if not os.path.exists(path):
        continue
    seen = {}
    for line in open(path, "rb"):
        line = line.rstrip(b"\n")
        obj = json.loads(line.decode("utf-8", "surrogateescape"))
        ev, shape = obj["event"], tuple(sorted(obj))
        shapes = seen.setdefault(ev, [])
        if len(shapes) >= 2 or shape in shapes:
            continue
        shapes.append(shape)
        save("%s-%s-%s" % (src, ev, hashlib.sha1(line).hexdigest()[:8]), line)
# many processes in one stream, some ending while others go on, so that the
# reader's process table grows and deletes (synthetic, in git's layout)
lines = []
def fnv1a(text):   # tr2_read_event.c's hash_str
    h = 0xcbf29ce484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
# the first 12 sids share one home slot, so that deleting shifts the others back
same = [n for n in ("P%x" % k for k in range(0x1000, 0x40000)) if fnv1a(n) & 127 == 5][:12]
sids = same + ["P%x" % (0x1000 + i) for i in range(28)]
def ev(i, name, extra):
    lines.append('{"event":"%s","sid":"%s","thread":"main"%s}' % (name, sids[i], extra))
for i in range(40):
    ev(i, "version", ',"evt":"3","exe":"2.39.5"')
    ev(i, "start", ',"t_abs":0.000%03d,"argv":["git"]' % i)
for i in range(40):
    ev(i, "region_enter", ',"nesting":1,"category":"index","label":"r"')
    if i % 3 == 0:
        ev(i, "atexit", ',"t_abs":0.001%03d,"code":0' % i)
for i in range(40):
    if i % 3:
        ev(i, "region_leave", ',"t_rel":0.000100,"nesting":1,"category":"index","label":"r"')
        ev(i, "atexit", ',"t_abs":0.002010,"code":%d' % (i % 4))
save("run-many-sids", ("\n".join(lines) + "\n").encode())
# whole traces: one git command, one tr2-bpf run
for name in ("status", "allapi"):
    path = os.path.join(tmp, name + ".json")
    if os.path.exists(path):
        save("run-" + name, open(path, "rb").read())
EOF
echo "make_event_corpus: $(ls "$OUT" | wc -l) seeds, $(cat "$OUT"/* | wc -c) bytes in $OUT"
