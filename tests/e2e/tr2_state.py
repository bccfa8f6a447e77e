#!/usr/bin/env python3
"""tr2_state.py PID: the words of a running process's tr2 runtime that its
trace2 calls test (usdt/trace2.h, struct trace2_state), read from
/proc/PID/mem, as one line:

    on=0x<hex> sem=<sum of the 28 trace2 probe semaphores>

on's low 16 bits are tr2-bpf's semaphore (tr2:enable), bits 16-23 the
in-process targets.  The runtime is found by the symbol trace2__state in the
objects the process maps (nm); exit status 1 when there is none."""
import re
import struct
import subprocess
import sys

pid = sys.argv[1]
maps = open(f"/proc/{pid}/maps").read().splitlines()
paths = []
for line in maps:
    f = line.split()
    if len(f) >= 6 and f[5].startswith("/") and f[5] not in paths:
        paths.append(f[5])
for path in paths:
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) \w trace2__state$", out, re.M)
    if not m:
        continue
    # The object's load base: its mapping at file offset 0 (the first
    # PT_LOAD of a position-independent object starts at vaddr 0).
    base = None
    for line in maps:
        f = line.split()
        if len(f) >= 6 and f[5] == path and int(f[2], 16) == 0:
            base = int(f[0].split("-")[0], 16)
            break
    etype = open(path, "rb").read(18)[16]   # ELF e_type: 2 EXEC, 3 DYN
    addr = int(m.group(1), 16) + (base if etype == 3 else 0)
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(addr)
        words = struct.unpack("<I28H", mem.read(4 + 2 * 28))
    print(f"on={words[0]:#x} sem={sum(words[1:])}")
    sys.exit(0)
sys.exit(1)
