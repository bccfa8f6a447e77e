#!/usr/bin/env python3
"""Helpers of tests/e2e/inproc.sh.

inproc_check.py cut < trace > cut
    Writes the trace as tr2-bpf would have written it: tr2-bpf reads at most
    4095 bytes of a string and marks a string it cut "...(truncated)"
    (loader/tr2_decode.h); the in-process targets write strings whole, as
    git. Runs of 4095 or more of one byte become its first 4095 bytes and the
    mark. Nothing else changes.

inproc_check.py tree EVENT_FILE PARENT_EXE CHILD_HIERARCHY
    Checks that EVENT_FILE holds one session tree of two processes: the
    parent (its "version" event's exe is PARENT_EXE) and a child whose sid is
    the parent's sid, "/", and one sid component of its own; that both
    processes' lines are there, the child's between the parent's child_start
    and child_exit; and that the child's cmd_name hierarchy is
    CHILD_HIERARCHY. Prints "ok" or what is wrong (exit 1).
"""
import json
import re
import sys

SID_PART = re.compile(r"\d{8}T\d{6}\.\d{6}Z-(?:H[0-9a-f]{8}|Localhost)-P[0-9a-f]{8}")
LONG_RUN = re.compile(rb"(.)\1{4094,}")


def cut():
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(LONG_RUN.sub(lambda m: m.group(0)[:4095] + b"...(truncated)", line))


def tree(path, parent_exe, hierarchy):
    events = [json.loads(line) for line in open(path, encoding="utf-8")]
    parents = [e["sid"] for e in events if e["event"] == "version" and e["exe"] == parent_exe]
    if len(parents) != 1:
        return f"want one version event with exe {parent_exe!r}, got {len(parents)}"
    parent = parents[0]
    sids = {e["sid"] for e in events}
    children = sids - {parent}
    if len(children) != 1:
        return f"want one child session besides {parent}, got {sorted(children)}"
    child = children.pop()
    if not child.startswith(parent + "/") or not SID_PART.fullmatch(child[len(parent) + 1:]):
        return f"child sid {child!r} is not the parent's {parent!r} + '/' + a sid component"
    order = [(e["sid"] == child, e["event"]) for e in events]
    try:
        start = order.index((False, "child_start"))
        end = order.index((False, "child_exit"))
    except ValueError:
        return "the parent's child_start or child_exit is missing"
    inside = [i for i, (is_child, _) in enumerate(order) if is_child]
    if not inside or inside[0] < start or inside[-1] > end:
        return "the child's lines are not between the parent's child_start and child_exit"
    for want in ("version", "start", "cmd_name", "exit", "atexit"):
        if (True, want) not in order or (False, want) not in order:
            return f"a process lacks its {want} event"
    names = [e.get("hierarchy") for e in events if e["sid"] == child and e["event"] == "cmd_name"]
    if names != [hierarchy]:
        return f"child's cmd_name hierarchy {names}, want [{hierarchy!r}]"
    return None


def main():
    if sys.argv[1:2] == ["cut"]:
        cut()
        return 0
    if sys.argv[1:2] == ["tree"] and len(sys.argv) == 5:
        why = tree(*sys.argv[2:])
        print(why or "ok")
        return 1 if why else 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
