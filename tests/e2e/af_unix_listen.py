#!/usr/bin/env python3
"""A Trace2 collector's side of an af_unix DEST, for tests/e2e/af_unix.sh.

  af_unix_listen.py stream PATH OUT
      listens on PATH (writes OUT.ready once it does), takes every
      connection as one process, as trace2receiver does: connection N's
      bytes go to OUT.N (N from 1, in the order accepted), and when it ends
      "N" is appended to OUT.ended.  Stops once OUT.stop exists and every
      connection has ended (or after 120 s).
  af_unix_listen.py dgram PATH OUT
      binds PATH; each datagram goes to OUT.dgrams as one JSON string a
      line.  Stops as above.
  af_unix_listen.py streams OUT
  af_unix_listen.py dir DIR
  af_unix_listen.py dgrams OUT
      one line per process, sorted: its lines, how many sids they carry,
      its first and last events, and whether it ended in a whole line:
          "<n> lines, <k> sid, version .. atexit, whole"
      for the connections OUT.N, the files of a directory DEST (the same
      processes' lines as a file gets them), or the datagrams of OUT.dgrams
      grouped by sid (there "whole" means each datagram was one whole line);
      and last "<n> processes, <d> distinct sids".
"""
import json
import os
import selectors
import socket
import sys
import time


def serve(kind, path, out):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
    s.bind(path)
    if kind == "stream":
        s.listen(64)
    open(out + ".ready", "w").close()
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ)
    n, live, deadline = 0, 0, time.time() + 120
    dgrams = open(out + ".dgrams", "w") if kind == "dgram" else None
    while time.time() < deadline and (live or not os.path.exists(out + ".stop")):
        for key, _ in sel.select(timeout=0.1):
            if key.fileobj is s and kind == "dgram":
                dgrams.write(json.dumps(s.recv(1 << 20).decode("utf-8", "surrogateescape")) + "\n")
                dgrams.flush()
            elif key.fileobj is s:
                c, _ = s.accept()
                n += 1
                live += 1
                sel.register(c, selectors.EVENT_READ, (n, open("%s.%d" % (out, n), "wb")))
            else:
                b = key.fileobj.recv(65536)
                num, f = key.data
                if b:
                    f.write(b)
                    continue
                sel.unregister(key.fileobj)
                key.fileobj.close()
                f.close()
                live -= 1
                with open(out + ".ended", "a") as e:
                    e.write("%d\n" % num)


def describe(text, whole=True):
    """The canonical line of one process's lines (text: str), and its sids."""
    lines = text.split("\n")
    whole = whole and lines[-1] == ""
    if lines[-1] == "":
        lines.pop()
    events, sids = [], set()
    for line in lines:
        try:
            ev = json.loads(line)
            events.append(ev["event"])
            sids.add(ev["sid"])
        except (ValueError, KeyError):
            events.append("<not an event line>")
    return ("%d lines, %d sid, %s .. %s, %s" %
            (len(lines), len(sids), events[0] if events else "-", events[-1] if events else "-",
             "whole" if whole else "partial")), sids


def report(texts):
    """texts: the lines of each process, or (lines, whole) pairs."""
    rows, all_sids = [], []
    for t in texts:
        row, sids = describe(*t) if isinstance(t, tuple) else describe(t)
        rows.append(row)
        all_sids += sorted(sids)
    for r in sorted(rows):
        print(r)
    print("%d processes, %d distinct sids" % (len(rows), len(set(all_sids))))


def main():
    cmd = sys.argv[1]
    if cmd in ("stream", "dgram"):
        serve(cmd, sys.argv[2], sys.argv[3])
    elif cmd == "streams":
        out = sys.argv[2]
        d, base = os.path.dirname(out), os.path.basename(out) + "."
        names = [n for n in os.listdir(d) if n.startswith(base) and n[len(base):].isdigit()]
        report(open(os.path.join(d, n), encoding="utf-8", errors="surrogateescape").read() for n in names)
    elif cmd == "dir":
        d = sys.argv[2]
        report(open(os.path.join(d, n), encoding="utf-8", errors="surrogateescape").read()
               for n in sorted(os.listdir(d)))
    elif cmd == "dgrams":
        by_sid = {}
        for line in open(sys.argv[2] + ".dgrams"):
            dg = json.loads(line)
            try:
                sid = json.loads(dg)["sid"]
            except (ValueError, KeyError):
                sid = None
            text, whole = by_sid.get(sid, ("", True))
            by_sid[sid] = (text + dg, whole and dg.endswith("\n") and dg.count("\n") == 1)
        report(by_sid.values())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
