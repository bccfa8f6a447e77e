#!/usr/bin/env python3
"""How long an event takes to reach tr2-bpf's DEST file (BENCHMARKS.md).

usage: latency.py cmd|pid sleep|spin DEST TR2BPF PROG [TASKSET_CPU_TRACER TASKSET_CPU_PROG]

Runs tests/progs/tr2_batch (PROG) in mode sleep or spin, 1 s, traced by
TR2BPF --event=DEST: under `-- CMD` (cmd), or attached with -p while the
program waits before its region (pid).  The program prints "entered" right
after its region_enter, then sleeps or computes without a call.  Prints the
milliseconds from the moment "entered" is read to the moment the
region_enter line of category "live" is in DEST (DEST polled every 0.2 ms),
and exits 0; on failure a one-line reason on stderr and exit 1.
"""
import os
import subprocess
import sys
import time

LIMIT = 10.0   # seconds to wait for anything


def fail(why):
    sys.stderr.write(f"latency.py: {why}\n")
    sys.exit(1)


def read_until(stream, text):
    """Reads lines of stream until one is text; False at the end."""
    for line in stream:
        if line.strip() == text:
            return True
    return False


def wait_for_file_text(path, text, limit):
    """Polls path until it holds text; the monotonic time it was seen, or None."""
    end = time.monotonic() + limit
    seen = b""
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                f.seek(len(seen))
                seen += f.read()
        except FileNotFoundError:
            pass
        if text in seen:
            return time.monotonic()
        time.sleep(0.0002)
    return None


def main():
    if len(sys.argv) not in (6, 8) or sys.argv[1] not in ("cmd", "pid") or sys.argv[2] not in ("sleep", "spin"):
        fail("usage: latency.py cmd|pid sleep|spin DEST TR2BPF PROG [CPU_TRACER CPU_PROG]")
    mode, what, dest, tr2bpf, prog = sys.argv[1:6]
    pin_tracer, pin_prog = ([], [])
    if len(sys.argv) == 8:
        pin_tracer, pin_prog = (["taskset", "-c", sys.argv[6]], ["taskset", "-c", sys.argv[7]])
    line = b'"event":"region_enter"'
    err = open(dest + ".err", "wb")
    if mode == "cmd":
        tracer = subprocess.Popen(pin_tracer + [tr2bpf, f"--event={dest}", "--"] + pin_prog + [prog, what, "1"],
                                  stdout=subprocess.PIPE, stderr=err, text=True)
        out = tracer.stdout
        procs = [tracer]
    else:
        p = subprocess.Popen(pin_prog + [prog, "--wait-stdin", what, "1"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        if not read_until(p.stdout, "waiting"):
            fail("the program did not wait")
        tracer = subprocess.Popen(pin_tracer + [tr2bpf, f"--event={dest}", "-p", str(p.pid)],
                                  stdout=subprocess.DEVNULL, stderr=err)
        if wait_for_file_text(dest + ".err", b"tracing process", LIMIT) is None:
            fail("tr2-bpf -p did not start")
        p.stdin.write("go\n")
        p.stdin.flush()
        out = p.stdout
        procs = [p, tracer]
    if not read_until(out, "entered"):
        fail("the program did not enter its region")
    t0 = time.monotonic()
    t1 = wait_for_file_text(dest, b'"category":"live"', LIMIT)
    for proc in procs:
        if proc.wait(timeout=60) != 0:
            fail(f"{proc.args[0]} exited with {proc.returncode}")
    if t1 is None:
        fail(f"no region_enter line in {dest} within {LIMIT} s")
    with open(dest, "rb") as f:
        if not any(line in l and b'"category":"live"' in l for l in f):
            fail(f"the live line in {dest} is no region_enter")
    print(f"{(t1 - t0) * 1000:.1f}")


if __name__ == "__main__":
    main()
