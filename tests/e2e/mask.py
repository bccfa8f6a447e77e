#!/usr/bin/env python3
"""Masks what differs between two traces of the same program: wall-clock
times, durations (t_abs, t_rel, elapsed), pids and sids.  Nothing else.

usage: mask.py {normal|perf|event} < trace > masked
Each EVENT line must parse as JSON (Python's json module); a line that does
not is an error (exit 1), as is a line of another format.
"""
import json
import re
import sys

SID_PART = re.compile(r"\d{8}T\d{6}\.\d{6}Z-(?:H[0-9a-f]{8}|Localhost)-P[0-9a-f]{8}")
TIME_OF_DAY = re.compile(r"^\d\d:\d\d:\d\d\.\d{6} ")
SECONDS = re.compile(r"\d+\.\d{6}")


def mask_text(line):
    line = SID_PART.sub("SID", line)
    line = TIME_OF_DAY.sub("HH:MM:SS.uuuuuu ", line)
    line = SECONDS.sub(lambda m: " " * (len(m.group(0)) - 8) + "s.ssssss", line)
    line = re.sub(r"\bpid:-?\d+", "pid:PID", line)
    return line


def mask_event(line, lineno):
    try:
        ev = json.loads(line)
    except json.JSONDecodeError as e:
        sys.exit(f"mask.py: line {lineno}: not JSON: {e}: {line!r}")
    if not isinstance(ev, dict) or "event" not in ev:
        sys.exit(f"mask.py: line {lineno}: not a Trace2 event: {line!r}")
    # Mask in the text, so that key order and escaping stay as written.
    line = SID_PART.sub("SID", line)
    line = re.sub(r'"time":"[^"]*"', '"time":"TIME"', line)
    line = re.sub(r'"(t_abs|t_rel|t_total|t_min|t_max)":[0-9.e+-]+', r'"\1":S', line)
    line = re.sub(r'"pid":-?\d+', '"pid":PID', line)
    return line


def main():
    fmt = sys.argv[1]
    for lineno, line in enumerate(sys.stdin.buffer, 1):
        text = line.decode("utf-8", errors="surrogateescape").rstrip("\n")
        if fmt == "event":
            text = mask_event(text, lineno)
        else:
            text = mask_text(text)
        sys.stdout.buffer.write(text.encode("utf-8", errors="surrogateescape") + b"\n")


if __name__ == "__main__":
    main()
