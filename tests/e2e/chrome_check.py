#!/usr/bin/env python3
"""Structural checks of tr2's --chrome output against the PERF stream of the
same run (tests/e2e/viewers.sh).

    chrome_check.py TRACE.json PERF.txt

TRACE.json is parsed with Python's json module.  Checked:
  - the file is one JSON array of objects, each with "name", "ph", "pid",
    "tid" (integers) and "ts" (a number);
  - per thread (pid, tid): every "B" has its "E", with the same name, and
    the slices ("B"/"E" pairs and "X") nest: none overlaps another partly;
  - per thread name (its thread_name metadata; the threads of that name in
    every process, as PERF names them), the event names in file order are
    those the PERF lines of that thread name give, line for line:
    region_enter and region_leave "<category>:<label>", data and data_json
    "<category>/<key>",
    timer and counter "<category>/<name>", child_exit a "child:" slice, every
    other line its event name;
  - thread-state tracks ("X" slices of "cat" "thread_state", on tracks of
    their own, left out of the above): one of the four names, and none
    overlaps the next (within 0.5 us: a float64 of ~1.8e15 us holds quarters);
  - a region's split ("E" or "X" args "<state>_us") adds up to its
    duration within 1 % or 100 us (from the enter; "split_since_trace"
    ones from the counting's start, no more than the duration).
Prints one line per problem and exits 1 when there is any; prints
"chrome_check: ok, N events, M threads" otherwise.
"""
import json
import sys


def fail(problems, msg):
    problems.append(msg)


def perf_names(path):
    """{thread name: [expected chrome name, ...]} from PERF lines."""
    want = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        cols = line.rstrip("\n").split(" | ", 8)
        if len(cols) != 9:
            continue
        thread, event, category, msg = cols[2].strip(), cols[3].strip(), cols[7].strip(), cols[8].lstrip(".")
        if event in ("region_enter", "region_leave"):
            label = msg.split(" ", 1)[0]
            assert label.startswith("label:"), line
            name = category + ":" + label[len("label:"):]
        elif event in ("data", "data_json"):
            name = category + "/" + msg.split(":", 1)[0]
        elif event in ("timer", "th_timer", "counter", "th_counter"):
            name = category + "/" + msg.split(" ", 1)[0][len("name:"):]
        elif event == "child_exit":
            name = "child:"
        else:
            name = event
        want.setdefault(thread, []).append(name)
    return want


STATES = ("Running", "Runnable", "Uninterruptible Sleep", "Sleeping")
SPLIT = ("on_cpu_us", "runnable_us", "blocked_us", "asleep_us")


def check_split(problems, where, args, dur):
    """A region's split adds up to its duration dur (us)."""
    if not any(k in args for k in SPLIT):
        return
    if not all(k in args for k in SPLIT):
        fail(problems, where + ": a split without all four states")
        return
    total = sum(args[k] for k in SPLIT)
    if args.get("split_since_trace"):
        if total > dur + 0.01:
            fail(problems, where + ": split %.3f us, more than its %.3f us" % (total, dur))
    elif abs(total - dur) > max(0.01 * dur, 100):
        fail(problems, where + ": split %.3f us, duration %.3f us" % (total, dur))


def main():
    trace_path, perf_path = sys.argv[1:3]
    problems = []
    with open(trace_path, encoding="utf-8") as f:
        events = json.load(f)
    if not isinstance(events, list):
        print("chrome_check: not a JSON array")
        return 1

    thread_names = {}
    states = {}        # (pid, tid) -> [(start, end, name)] of a thread-state track
    stacks = {}        # (pid, tid) -> [(name, start, its args)]
    slices = {}        # (pid, tid) -> [(start, end, name)]
    got = {}           # thread name -> [name], all processes' threads of that name in file order
    for i, ev in enumerate(events):
        where = "event %d (%s)" % (i, json.dumps(ev)[:120])
        if not isinstance(ev, dict):
            fail(problems, where + ": not an object")
            continue
        for key in ("name", "ph", "pid", "tid", "ts"):
            if key not in ev:
                fail(problems, where + ": no " + key)
        if problems:
            continue
        if not isinstance(ev["pid"], int) or not isinstance(ev["tid"], int):
            fail(problems, where + ": pid or tid not an integer")
        if not isinstance(ev["ts"], (int, float)):
            fail(problems, where + ": ts not a number")
        key = (ev["pid"], ev["tid"])
        ph = ev["ph"]
        if ph == "M":
            if ev["name"] == "thread_name":
                thread_names[key] = ev["args"]["name"]
            continue
        if ph in ("s", "f"):
            continue
        if ph == "X" and ev.get("cat") == "thread_state":
            if ev["name"] not in STATES:
                fail(problems, where + ": not a thread state")
            states.setdefault(key, []).append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
            continue
        if ph == "B":
            stacks.setdefault(key, []).append((ev["name"], ev["ts"]))
        elif ph == "E":
            st = stacks.get(key)
            if not st:
                fail(problems, where + ": E without B")
                continue
            name, start = st.pop()
            if name != ev["name"]:
                fail(problems, where + ": E of %r closes B of %r" % (ev["name"], name))
            slices.setdefault(key, []).append((start, ev["ts"], name))
            check_split(problems, where, ev.get("args", {}), ev["ts"] - start)
        elif ph == "X":
            slices.setdefault(key, []).append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
            check_split(problems, where, ev.get("args", {}), ev["dur"])
        name = ev["name"]
        if ph == "X" and name.startswith("child:"):
            name = "child:"
        got.setdefault(thread_names.get(key, "?"), []).append(name)

    for key, st in stacks.items():
        for name, _ in st:
            fail(problems, "thread %s: B of %r has no E" % (key, name))
    for key, sl in slices.items():
        sl.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for start, end, name in sl:
            while open_ends and open_ends[-1][0] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1][0]:
                fail(problems, "thread %s: %r overlaps %r partly" % (key, name, open_ends[-1][1]))
            open_ends.append((end, name))

    for key, sl in states.items():
        sl.sort()
        for (_, end, name), (start, _, next_name) in zip(sl, sl[1:]):
            if start < end - 0.5:
                fail(problems, "state track %s: %r overlaps %r" % (key, name, next_name))

    want = perf_names(perf_path)
    for thread in sorted(set(want) | set(got)):
        w, g = want.get(thread, []), got.get(thread, [])
        if w != g:
            fail(problems, "thread %s: names differ from PERF's:\n  PERF:   %s\n  chrome: %s" % (thread, w, g))

    for p in problems:
        print("chrome_check: " + p)
    if problems:
        return 1
    print("chrome_check: ok, %d events, %d threads" % (len(events), len(slices.keys() | thread_names.keys())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
