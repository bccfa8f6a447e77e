#!/usr/bin/env python3
"""When each line of a command's output reached its reader.

usage: arrivals.py PREFIX
Opens the FIFOs PREFIX.out.fifo and PREFIX.err.fifo, in that order (the
order in which a shell's `> PREFIX.out.fifo 2> PREFIX.err.fifo` opens them),
and until every writer has closed both copies what arrives to PREFIX.out
and PREFIX.err, and each line to PREFIX.arrivals as

    SECONDS out|err LINE

SECONDS being the monotonic clock's seconds when the line's newline arrived
(a last line without one: at the end), written as it arrives.  For
tests/install/run.sh: when README's commands showed a user their lines,
timed without touching the commands.
"""
import os
import select
import sys
import time


def main():
    prefix = sys.argv[1]
    streams = {}
    for name in ("out", "err"):
        fd = os.open(f"{prefix}.{name}.fifo", os.O_RDONLY)
        streams[fd] = (name.encode(), open(f"{prefix}.{name}", "wb"), bytearray())
    with open(f"{prefix}.arrivals", "wb") as arrivals:
        while streams:
            for fd in select.select(list(streams), [], [])[0]:
                name, copy, pending = streams[fd]
                data = os.read(fd, 65536)
                now = time.monotonic()
                copy.write(data)
                pending += data
                *lines, rest = pending.split(b"\n")
                if not data and rest:
                    lines.append(rest)
                for line in lines:
                    arrivals.write(b"%.6f %s %s\n" % (now, name, line))
                pending[:] = rest
                arrivals.flush()
                if not data:
                    copy.close()
                    os.close(fd)
                    del streams[fd]


if __name__ == "__main__":
    main()
