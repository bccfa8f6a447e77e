#!/usr/bin/env python3
r"""Compares tr2-bpf's lines for git runs with git's own, for tests/git/lines.sh.

usage: compare.py OUTDIR

OUTDIR holds one directory per run, NAME.full, NAME.brief and NAME.prod, each
with git/{normal,perf,event}/ (git's directory targets: one file per process,
empty in .prod) and tr2/{normal,perf,event}/ (tr2-bpf's), and the run's
directory itself (its path is masked as <RUN>).

  full, brief  for each format and each process (paired by the pid in the
               file name, "...-P<pid in hex>"), tr2-bpf's lines equal git's
               but for the time columns;
  prod         tr2-bpf's lines of the run without GIT_TRACE2* equal tr2-bpf's
               lines of NAME.full but for the time columns, sid values and
               the ancestors above tr2-bpf (processes paired by their depth
               and command line).

Time columns: NORMAL's time of day and elapsed/total/min/max values; PERF's
time of day, t_abs and t_rel columns (blank or not must agree) and those
values in its payload; EVENT's time, t_abs, t_rel, t_total, t_min and t_max
(present or not must agree).  Prints each failure with its first differing
lines, a count of the differing lines by event, and last
"gitlines: N passed, M failed"; exits 1 if any failed.
"""
import collections
import json
import os
import re
import sys

FMTS = ("normal", "perf", "event")
MAX_DETAILS = 8
FLOAT = rb"-?[0-9]+\.[0-9]+(?:[eE][-+]?[0-9]+)?"
PAYLOAD_TIMES = re.compile(rb"\b(elapsed|total|min|max):" + FLOAT)
EVENT_TIMES = ("time", "t_abs", "t_rel", "t_total", "t_min", "t_max")
by_event = collections.Counter()


def lines_of(path):
    with open(path, "rb") as f:
        data = f.read()
    out = data.split(b"\n")
    if out and out[-1] == b"":
        out.pop()
    return out


def pid_of(name):
    m = re.search(r"-P([0-9a-f]{8})$", name)
    return int(m.group(1), 16) if m else None


def mask_normal(line, brief):
    if not brief:
        line = b"TIME" + line[15:]
    return PAYLOAD_TIMES.sub(rb"\1:T", line)


def mask_perf(line, brief):
    f = line.split(b" | ")
    i = 0 if brief else 1  # index of the depth column
    if not brief and f:
        f[0] = b"TIME" + f[0][15:]
    for k in (i + 4, i + 5):   # t_abs, t_rel
        if k < len(f) and f[k].strip():
            f[k] = b"T".center(len(f[k]))
    if len(f) > i + 7:
        f[-1] = PAYLOAD_TIMES.sub(rb"\1:T", f[-1])
    return b" | ".join(f)


def mask_event(line, brief, sids):
    try:
        ev = json.loads(line)
    except ValueError:
        return line
    for k in EVENT_TIMES:
        if k in ev:
            ev[k] = "T"
    if sids and "sid" in ev:
        ev["sid"] = "SID"
    return json.dumps(ev).encode()


EVENTS = set(b"""version start exit atexit signal error cmd_path cmd_ancestry cmd_name
cmd_mode alias def_param def_repo worktree child_start child_exit child_ready exec exec_result
thread_start thread_exit region_enter region_leave data data_json printf timer th_timer counter
th_counter too_many_files""".split())


def event_name(line):
    """The event of a line of any format (NORMAL's worktree is def_repo)."""
    m = re.search(rb'"event": ?"([a-z_]+)"', line)
    if m:
        return m.group(1).decode()
    for tok in re.split(rb"[\s|\[]+", line):
        if tok in EVENTS:
            return tok.decode()
    return "?"


def run_pids(run):
    """Every pid of a run's processes, as tr2-bpf's EVENT files name them
    (sid) and as their parents saw them (child_exit, child_ready)."""
    pids = set()
    d = os.path.join(run, "tr2", "event")
    for f in os.listdir(d) if os.path.isdir(d) else []:
        pids.add(pid_of(f))
        for line in lines_of(os.path.join(d, f)):
            pid = json.loads(line).get("pid")
            if pid:
                pids.add(pid)
    pids.discard(None)
    return pids


def mask_pids(line, pids):
    return re.sub(rb"\b[0-9]+\b",
                  lambda m: b"PID" if int(m.group(0)) in pids else m.group(0), line)


# The two differences docs/git.md documents, masked on both sides.
# 1. Git writes the process-level events that no caller's line makes
#    (atexit, signal, the timer and counter summaries) with the file and line
#    of its own target's code, one per format (trace2/tr2_tgt_perf.c:216 for
#    PERF's atexit, ...); tr2-bpf writes the site the series calls its runtime
#    from, one for all formats.  Masked only where git's line names a target.
# 2. test-tool passes a repository it never defined (repo id 0): git writes
#    "r0" / "repo":0, tr2's runtime has no repository there (0 is none).
TARGET_SITE_EVENTS = ("atexit", "signal", "timer", "th_timer", "counter", "th_counter")
TARGET_FILE = re.compile(rb"trace2/tr2_tgt_(?:normal|perf|event)\.c:[0-9]+")
SITE = re.compile(rb"^(TIME )(\S+:[0-9]+)( *)")


def mask_documented(fmt, line, git):
    """line (masked already) with the documented differences masked: the site
    of a target-site event and test-tool's repo 0."""
    ev = event_name(line)
    if fmt == "event":
        try:
            obj = json.loads(line)
        except ValueError:
            return line
        if ev in TARGET_SITE_EVENTS and "file" in obj and \
                (not git or TARGET_FILE.fullmatch(("%s:%s" % (obj["file"], obj.get("line"))).encode())):
            obj["file"], obj["line"] = "SITE", 0
        if git and obj.get("repo") == 0:
            del obj["repo"]
        return json.dumps(obj).encode()
    if ev in TARGET_SITE_EVENTS:
        m = SITE.match(line)
        if m and (not git or TARGET_FILE.fullmatch(m.group(2))):
            width = len(m.group(2)) + len(m.group(3))
            line = m.group(1) + b"SITE".ljust(width) + line[m.end():]
    if fmt == "perf" and git:
        line = re.sub(rb"\| r0  \|", b"|     |", line)
    return line


def masked(fmt, path, brief, run_dir, sids=False, pids=(), git=False):
    out = []
    for line in lines_of(path):
        line = line.replace(run_dir.encode(), b"<RUN>")
        if fmt == "normal":
            line = mask_normal(line, brief)
        elif fmt == "perf":
            line = mask_perf(line, brief)
        else:
            line = mask_event(line, brief, sids)
        line = mask_documented(fmt, line, git)
        out.append(mask_pids(line, pids) if pids else line)
    return out


def diff(fmt, a, b):
    """The first differing lines, as text; counts them by event."""
    details = []
    n = max(len(a), len(b))
    for k in range(n):
        x = a[k] if k < len(a) else b"<none>"
        y = b[k] if k < len(b) else b"<none>"
        if x != y:
            by_event[(fmt, event_name(x if x != b"<none>" else y))] += 1
            if len(details) < MAX_DETAILS:
                details.append("      git: %s\n      tr2: %s" % (x.decode(errors="replace"),
                                                              y.decode(errors="replace")))
    return details


def thread_of(fmt, line):
    """The thread column of a PERF or EVENT line, None for NORMAL."""
    if fmt == "event":
        m = re.search(rb'"thread": ?"([^"]*)"', line)
        return m.group(1) if m else None
    if fmt == "perf":
        f = line.split(b" | ")
        k = 1 if re.match(rb"d\d+$", f[0].strip()) else 2
        return f[k].strip() if len(f) > k else None
    return None


def processes_in(lines):
    """How many processes wrote a file: its atexit and signal lines.  More
    than one where a child forked without exec went on in its parent's file
    (git maintenance --detach): git's child writes into the file descriptor
    it inherited, and tr2-bpf puts it in the same file."""
    return sum(1 for x in lines if event_name(x) in ("atexit", "signal"))


def diff_threads(fmt, a, b):
    """diff(), thread by thread: lines of different threads may come in
    either order (git writes them as its threads run; tr2-bpf as their
    records come in).  NORMAL has no thread column: its lines may be in
    another order as long as they are the same lines; nor has a file that
    two processes wrote at once any order between their lines (both are
    "main"), which is a race in git's own file too."""
    if fmt == "normal" or max(processes_in(a), processes_in(b)) > 1:
        return [] if sorted(a) == sorted(b) else diff(fmt, sorted(a), sorted(b))
    out = []
    for t in sorted(set(thread_of(fmt, x) or b"" for x in a + b)):
        out += diff(fmt, [x for x in a if (thread_of(fmt, x) or b"") == t],
                    [y for y in b if (thread_of(fmt, y) or b"") == t])
    return out


def processes(d):
    """pid -> file name, of one directory target."""
    if not os.path.isdir(d):
        return {}
    return {pid_of(f): f for f in sorted(os.listdir(d))}


def first_sid(run, side, f):
    for line in lines_of(os.path.join(run, side, "event", f)):
        return json.loads(line).get("sid")


def check_same_run(run, brief):
    failures = []
    for fmt in FMTS:
        g, t = processes(os.path.join(run, "git", fmt)), processes(os.path.join(run, "tr2", fmt))
        for pid in sorted(set(g) | set(t), key=lambda p: p or 0):
            if pid not in t:
                failures.append("  %s: process %s: git wrote %s, tr2-bpf nothing" % (fmt, pid, g[pid]))
                continue
            if pid not in g:
                failures.append("  %s: process %s: tr2-bpf wrote %s, git nothing" % (fmt, pid, t[pid]))
                continue
            a = masked(fmt, os.path.join(run, "git", fmt, g[pid]), brief, run, True, git=True)
            b = masked(fmt, os.path.join(run, "tr2", fmt, t[pid]), brief, run, True)
            if fmt == "event" and g[pid] != t[pid]:
                failures.append("  sid of process %d: git %s, tr2-bpf %s"
                                % (pid, first_sid(run, "git", g[pid]), first_sid(run, "tr2", t[pid])))
                by_event[("event", "sid")] += 1
            dd = diff_threads(fmt, a, b)
            if dd:
                failures.append("  %s: process %d (%s):\n%s" % (fmt, pid, g[pid], "\n".join(dd)))
    return failures


def start_key(run, f, pids):
    """(depth, masked argv) of a process's EVENT file, to pair two runs."""
    for line in lines_of(f):
        ev = json.loads(line)
        if ev.get("event") == "start":
            argv = json.dumps(ev.get("argv")).replace(run, "<RUN>").encode()
            return (ev["sid"].count("/"), mask_pids(argv, pids).decode())
    return (0, "")


def paired(run, fmt, keys):
    d = os.path.join(run, "tr2", fmt)
    out = collections.defaultdict(list)
    for pid, f in processes(d).items():
        out[keys.get(pid, (0, ""))].append(os.path.join(d, f))
    return out


# A process's ancestors above tr2-bpf are those of whoever ran the suite,
# and two runs need not see the same ones: an ancestor that exits between
# them (a shell whose wait ended) leaves the rest to a subreaper or init.
# Two runs' cmd_ancestry lines are compared up to tr2-bpf.
ABOVE_TRACER = {
    "normal": (re.compile(rb"(tr2-bpf)(?: <- .*)?$"), rb"\1 <- ..."),
    "perf": (re.compile(rb"(tr2-bpf)[^\]]*\]"), rb"\1 ...]"),
    "event": (re.compile(rb'("tr2-bpf")[^\]]*\]'), rb'\1, "..."]'),
}


def above_tracer_masked(fmt, lines):
    pat, repl = ABOVE_TRACER[fmt]
    return [pat.sub(repl, x, count=1) if event_name(x) == "cmd_ancestry" else x for x in lines]


def check_prod(run, full):
    failures = []
    keys = {}
    # Either run's pids, masked in both: pids wrap (pid_max 32768), and a
    # number of one run's lines (a line number, an object count) may be a
    # pid of the other run's.
    both = run_pids(run) | run_pids(full)
    pids = {run: both, full: both}
    for r in (run, full):
        for pid, f in processes(os.path.join(r, "tr2", "event")).items():
            keys[(r, pid)] = start_key(r, os.path.join(r, "tr2", "event", f), pids[r])
    for fmt in FMTS:
        a = paired(full, fmt, {p: k for (r, p), k in keys.items() if r == full})
        b = paired(run, fmt, {p: k for (r, p), k in keys.items() if r == run})
        for key in sorted(set(a) | set(b)):
            fa, fb = a.get(key, []), b.get(key, [])
            if len(fa) != len(fb):
                failures.append("  %s: %d processes %s with GIT_TRACE2*, %d without"
                                % (fmt, len(fa), key, len(fb)))
                continue
            for x, y in zip(fa, fb):
                dd = diff_threads(fmt, above_tracer_masked(fmt, masked(fmt, x, False, full, True, pids[full])),
                                  above_tracer_masked(fmt, masked(fmt, y, False, run, True, pids[run])))
                if dd:
                    failures.append("  %s: %s:\n%s" % (fmt, key[1], "\n".join(dd)))
    return failures


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    passed = failed = 0
    for name in sorted(os.listdir(out)):
        run = os.path.join(out, name)
        case, variant = name.rsplit(".", 1)
        if variant == "prod":
            failures = check_prod(run, os.path.join(out, case + ".full"))
        else:
            failures = check_same_run(run, variant == "brief")
        with open(os.path.join(run, "stderr"), "rb") as f:
            summary = (f.read().decode(errors="replace").strip().splitlines() or ["?"])[-1]
        if not re.match(r"tr2-bpf: \d+ events, 0 lost$", summary):
            failures.append("  tr2-bpf: %s" % summary)
        if failures:
            failed += 1
            print("FAIL %s" % name)
            print("\n".join(failures))
        else:
            passed += 1
            print("ok   %s" % name)
    if by_event:
        print("differing lines by format and event:")
        for (fmt, ev), n in sorted(by_event.items()):
            print("  %-6s %-14s %d" % (fmt, ev, n))
    print("gitlines: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
