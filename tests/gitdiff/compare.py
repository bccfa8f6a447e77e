#!/usr/bin/env python3
r"""Compares tr2-fmt's output with git's own, for the runs made by run.sh.

usage: compare.py TR2FMT OUTDIR

OUTDIR holds one directory per run, NAME.full or NAME.brief, each with
event.json (git's EVENT target: one file, processes interleaved), normal/ and
perf/ (git's NORMAL and PERF targets in directory mode: one file per process,
named after the last component of its sid).  For each run, three checks:

  event   tr2-fmt --event [--brief] < event.json  reproduces event.json byte
          for byte, and every line it writes parses as JSON.
  perf    tr2-fmt --perf [--brief] < event.json  (the whole interleaved file at
          once, so per-process state is exercised) writes one line per event;
          grouped by the sid of their input line, each process's lines equal
          git's PERF file for that process.
  normal  for each process, tr2-fmt --normal [--brief] on its EVENT lines
          equals git's NORMAL file for that process.

Allowed differences, and nothing else:
  - the time-of-day column (each git target stamps its own time);
  - the file:line column where git writes its own target's source file
    (atexit, signal, timer, counter: trace2/tr2_tgt_perf.c:NNN in PERF,
    trace2/tr2_tgt_event.c:NNN in the EVENT line tr2-fmt reads);
  - PERF's t_abs on lines whose EVENT line has none (child_*, exec*,
    thread_*, region_*, printf), which tr2-fmt derives
    (tr2_read_event.h): it must be within a tolerance of git's value, namely
    GITDIFF_TABS_TOL_US (default 200) µs plus the jitter git's own stamps
    show -- the spread of  time - t_abs  over the process's EVENT lines that
    carry both, plus the gap between git's PERF and EVENT stamps of that line
    (milliseconds when git was preempted between writing them), plus how late
    git's own PERF line is stamped after the t_abs it carries, against the
    process's other PERF lines (git preempted before writing any target).  A line
    without time (BRIEF input) may also have it blank.  The derivation rules
    themselves are checked exactly by tests/fmt/cases/derive.
Every other byte must be equal.

Two differences that formatter/ makes on purpose are failures too, unless
named in GITDIFF_ALLOW (comma-separated):
  escapes  NORMAL and PERF write a control byte inside a string as \n, \r or
           \xHH (formatter/tr2_quote.h); git writes it raw, so that, say, a
           multi-line error message spills onto several lines.
  fffd     EVENT writes each invalid UTF-8 sequence as U+FFFD
           (formatter/tr2_json.h); git copies the bytes.

Prints one line per check, details of failures, the largest t_abs deviation
seen, and finally "gitdiff: N passed, M failed"; exits 1 if any check failed.
"""
import calendar
import collections
import datetime
import json
import os
import re
import subprocess
import sys

TOL_US = int(os.environ.get("GITDIFF_TABS_TOL_US", "200"))
DERIVED = {"child_start", "child_exit", "child_ready", "exec", "exec_result",
           "thread_start", "thread_exit", "region_enter", "region_leave", "printf"}
TGT_FL = re.compile(rb"trace2/tr2_tgt_(?:normal|perf|event)\.c:\d+ *")
MAX_DETAILS = 6
ALLOW = set(filter(None, os.environ.get("GITDIFF_ALLOW", "").split(",")))
allowed_used = collections.Counter()

max_dev = 0


def text(b):
    return b.decode("utf-8", errors="surrogateescape")


def time_us(s):
    d = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(d.timetuple()) * 1000000 + d.microsecond


def secs_us(x):
    return round(float(x) * 1e6)


def anchor_spread(evs):
    """Per sid: the spread (µs) of time - t_abs over its lines that carry
    both, which is how much git's own time stamps jitter in that process."""
    lo, hi = {}, {}
    for ev in evs:
        if "t_abs" in ev and "time" in ev:
            est = time_us(ev["time"]) - secs_us(ev["t_abs"])
            sid = ev["sid"]
            lo[sid] = min(lo.get(sid, est), est)
            hi[sid] = max(hi.get(sid, est), est)
    return {sid: hi[sid] - lo[sid] for sid in lo}


def perf_tod_us(git_perf_line):
    """The time of day of a PERF line, µs since midnight (TZ=UTC), or None."""
    m = re.match(rb"(\d\d):(\d\d):(\d\d)\.(\d{6}) ", git_perf_line)
    if not m:
        return None
    h, mi, sec, us = (int(x) for x in m.groups())
    return ((h * 60 + mi) * 60 + sec) * 1000000 + us


def perf_delays(git_perf_lines):
    """Per line of one process's PERF file from git: how much later its
    time - t_abs is than the process's earliest, in µs: git read its clock
    for t_abs, then was held up before it stamped the line (preempted).  0
    for lines without both columns."""
    est = []
    for line in git_perf_lines:
        tod, cols = perf_tod_us(line), line.split(b" | ")
        t_abs = cols[5].strip() if len(cols) > 5 else b""
        est.append(tod - secs_us(float(t_abs)) if tod is not None and t_abs else None)
    known = [e for e in est if e is not None]
    lo = min(known) if known else 0
    return [e - lo if e is not None else 0 for e in est]


def stamp_gap(git_perf_line, ev):
    """µs between git's PERF time of day for an event and its EVENT time:
    the part of the line's own delay that git's two stamps show (TZ=UTC)."""
    perf = perf_tod_us(git_perf_line)
    if perf is None or "time" not in ev:
        return 0
    gap = time_us(ev["time"]) % 86400000000 - perf
    if gap < -43200000000:   # the day ended in between
        gap += 86400000000
    return max(0, gap)


def tr2_escape(b):
    """git's raw bytes as formatter/tr2_quote.c writes them (control bytes
    but tab escaped)."""
    out = bytearray()
    for c in b:
        if c < 0x20 and c != 9:
            out += b"\\n" if c == 10 else b"\\r" if c == 13 else b"\\x%02x" % c
        else:
            out.append(c)
    return bytes(out)


def same_escaped(git, ours):
    """git's record equals ours once its control bytes are escaped, and
    GITDIFF_ALLOW has escapes."""
    if "escapes" in ALLOW and git != ours and tr2_escape(git) == ours:
        allowed_used["escapes"] += 1
        return True
    return False


def split_lines(data):
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


# Where a NORMAL or PERF line starts: git writes multi-line messages (an
# error's msg, say) as they are, so one event can take several lines.
FULL_START = re.compile(rb"\d\d:\d\d:\d\d\.\d{6} ")
PERF_BRIEF_START = re.compile(rb"d\d+ \| ")


def split_records(data, start):
    """One element per event: a line plus the lines that continue it."""
    recs = []
    for line in split_lines(data):
        if recs and not start.match(line):
            recs[-1] += b"\n" + line
        else:
            recs.append(line)
    return recs


def tr2fmt(exe, args, data):
    p = subprocess.run([exe] + args, input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def last_component(sid):
    return sid.rsplit("/", 1)[-1]


def mask_normal(line, brief):
    if brief:
        return line
    # "HH:MM:SS.uuuuuu file:line<pad>payload"
    rest = line[15:]
    rest = TGT_FL.sub(b"FL ", rest, count=1) if rest.startswith(b" trace2/tr2_tgt_") else rest
    return b"TIME" + rest


def perf_fields(line, brief):
    """[time+file:line,] depth, thread, event, repo, t_abs, t_rel, category, payload"""
    f = line.split(b" | ", 7 if brief else 8)
    if not brief and len(f) == 9:
        head = f[0][15:]
        if head.startswith(b" trace2/tr2_tgt_"):
            head = b" FL"
        f[0] = b"TIME" + head
    return f


def compare_perf_line(git, ours, ev, tol, brief):
    """None when equal (within what is allowed), else a reason; tol is the
    distance allowed between a derived t_abs and git's."""
    global max_dev
    fg, fo = perf_fields(git, brief), perf_fields(ours, brief)
    if len(fg) != len(fo):
        return "different number of columns"
    i = 4 if brief else 5
    if fg[:i] + fg[i + 1:-1] != fo[:i] + fo[i + 1:-1]:
        return "columns differ"
    if fg[-1] != fo[-1] and not same_escaped(fg[-1], fo[-1]):
        return "message differs"
    if ev["event"] not in DERIVED or "t_abs" in ev:
        return None if fg[i] == fo[i] else "t_abs differs"
    if fo[i].strip() == b"":
        return None if "time" not in ev else "no t_abs derived although the line has a time"
    try:
        dev = abs(secs_us(fo[i]) - secs_us(fg[i]))
    except ValueError:
        return "derived t_abs is not a number"
    max_dev = max(max_dev, dev)
    if dev > tol:
        return f"derived t_abs off by {dev} us (tolerance {tol} us)"
    return None


def show(label, a, b):
    return f"    {label}\n      git:     {text(a)!r}\n      tr2-fmt: {text(b)!r}"


def check_event(exe, run, brief, data):
    args = ["--event"] + (["--brief"] if brief else [])
    rc, out, err = tr2fmt(exe, args, data)
    problems = []
    if rc or err:
        problems.append(f"    exit {rc}, stderr {text(err)!r}")
    for n, line in enumerate(split_lines(out), 1):
        try:
            json.loads(text(line))
        except ValueError as e:
            problems.append(f"    output line {n} is not JSON: {e}")
            break
    if out != data:
        g, o = split_lines(data), split_lines(out)
        for n, (a, b) in enumerate(zip(g, o), 1):
            if a != b and "fffd" in ALLOW and a.decode("utf-8", "replace").encode() == b:
                allowed_used["fffd"] += 1
            elif a != b:
                problems.append(show(f"line {n}", a, b))
                break
        if len(g) != len(o):
            problems.append(f"    {len(g)} lines from git, {len(o)} from tr2-fmt")
    return problems


def check_perf(exe, run, brief, data, evs, sids):
    args = ["--perf"] + (["--brief"] if brief else [])
    rc, out, err = tr2fmt(exe, args, data)
    problems = []
    if rc or err:
        problems.append(f"    exit {rc}, stderr {text(err)!r}")
    ours = split_records(out, PERF_BRIEF_START if brief else FULL_START)
    evs = [ev for ev in evs if ev["event"] != "too_many_files"]   # EVENT only
    if len(ours) != len(evs):
        return problems + [f"    {len(evs)} EVENT lines but {len(ours)} PERF lines"]
    spread = anchor_spread(evs)
    by_sid = {}
    for line, ev in zip(ours, evs):
        by_sid.setdefault(ev["sid"], []).append((line, ev))
    for sid in sids:
        path = os.path.join(run, "perf", last_component(sid))
        try:
            git = split_records(open(path, "rb").read(), PERF_BRIEF_START if brief else FULL_START)
        except OSError as e:
            problems.append(f"    no PERF file from git for {sid}: {e}")
            continue
        mine = by_sid[sid]
        if len(git) != len(mine):
            problems.append(f"    {last_component(sid)}: {len(git)} lines from git, {len(mine)} from tr2-fmt")
        delays = perf_delays(git)
        for n, (g, (o, ev)) in enumerate(zip(git, mine), 1):
            tol = TOL_US + spread.get(sid, 0) + stamp_gap(g, ev) + delays[n - 1]
            why = compare_perf_line(g, o, ev, tol, brief)
            if why:
                problems.append(show(f"{last_component(sid)} line {n}: {why}", g, o))
    return problems


def normal_brief_escaped(git, out):
    """BRIEF NORMAL lines have no prefix to find where an event starts in
    git's output: match git's lines to each of ours, escaped."""
    if "escapes" not in ALLOW:
        return False
    g, used = split_lines(git), 0
    for line in split_lines(out):
        for k in range(1, len(g) + 1):
            if tr2_escape(b"\n".join(g[:k])) == line:
                used += k > 1 or g[0] != line
                g = g[k:]
                break
        else:
            return False
    if g:
        return False
    allowed_used["escapes"] += used
    return True


def check_normal(exe, run, brief, lines, evs, sids):
    args = ["--normal"] + (["--brief"] if brief else [])
    problems = []
    for sid in sids:
        mine = b"".join(l + b"\n" for l, ev in zip(lines, evs) if ev["sid"] == sid)
        rc, out, err = tr2fmt(exe, args, mine)
        if rc or err:
            problems.append(f"    {last_component(sid)}: exit {rc}, stderr {text(err)!r}")
        path = os.path.join(run, "normal", last_component(sid))
        try:
            git = open(path, "rb").read()
        except OSError as e:
            problems.append(f"    no NORMAL file from git for {sid}: {e}")
            continue
        if brief:
            # nothing to mask: the whole file must be equal
            if git != out and not normal_brief_escaped(git, out):
                g, o = split_lines(git), split_lines(out)
                n = next((i for i, (a, b) in enumerate(zip(g, o)) if a != b), min(len(g), len(o)))
                problems.append(show(f"{last_component(sid)} line {n + 1}",
                                     g[n] if n < len(g) else b"", o[n] if n < len(o) else b""))
            continue
        git, ours = split_records(git, FULL_START), split_records(out, FULL_START)
        if len(git) != len(ours):
            problems.append(f"    {last_component(sid)}: {len(git)} lines from git, {len(ours)} from tr2-fmt")
        for n, (g, o) in enumerate(zip(git, ours), 1):
            if mask_normal(g, brief) != mask_normal(o, brief) and \
               not same_escaped(mask_normal(g, brief), mask_normal(o, brief)):
                problems.append(show(f"{last_component(sid)} line {n}", g, o))
    return problems


def main():
    exe, outdir = sys.argv[1], sys.argv[2]
    passed = failed = 0
    for name in sorted(os.listdir(outdir)):
        run = os.path.join(outdir, name)
        brief = name.endswith(".brief")
        data = open(os.path.join(run, "event.json"), "rb").read()
        lines = split_lines(data)
        evs = [json.loads(text(l)) for l in lines]
        sids = list(dict.fromkeys(ev["sid"] for ev in evs))
        files = set(os.listdir(os.path.join(run, "perf"))) | set(os.listdir(os.path.join(run, "normal")))
        extra = files - {last_component(s) for s in sids}
        checks = [
            ("event", check_event(exe, run, brief, data)),
            ("perf", check_perf(exe, run, brief, data, evs, sids)),
            ("normal", check_normal(exe, run, brief, lines, evs, sids)),
        ]
        if not lines or extra:
            checks.append(("processes", [f"    {len(lines)} EVENT lines; processes without EVENT lines: {sorted(extra)}"]))
        for check, problems in checks:
            label = f"{name}/{check}"
            if problems:
                failed += 1
                print(f"FAIL {label} ({len(sids)} processes)")
                for p in problems[:MAX_DETAILS]:
                    print(p)
                if len(problems) > MAX_DETAILS:
                    print(f"    ... and {len(problems) - MAX_DETAILS} more")
            else:
                passed += 1
                print(f"ok   {label} ({len(sids)} processes, {len(lines)} events)")
    print(f"largest derived t_abs deviation: {max_dev} us (tolerance {TOL_US} us)")
    if ALLOW:
        used = ", ".join(f"{k}: {allowed_used[k]} lines" for k in sorted(ALLOW))
        print(f"differences allowed by GITDIFF_ALLOW: {used}")
    print(f"gitdiff: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
