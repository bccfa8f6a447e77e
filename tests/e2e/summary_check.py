#!/usr/bin/env python3
"""Checks of tr2-bpf --summary output for tests/e2e/summary.sh.

  summary_check.py counts JSON
      the last JSON document as canonical lines, one per row:
      "<name> region <category> <label> count=C open=O before=B" and
      "<name> data <category> <key> count=C sum=S min=m max=M last=L",
      processes in pid order; per program (--summary-by=program) each
      program's rows after a line "program <name>: <N> process[es]"
  summary_check.py perf JSON PERF...
      compares the last document with the PERF stream of the same run (files,
      or directories of one file per process named ...-P<pid in hex>):
      per process and (category, label) the number of region_leave lines with
      a t_rel (count), without one (before), region_enter lines not left
      (open), the sum, min and max of t_rel (the summary's ns, truncated to
      microseconds as PERF's t_rel is); per (category, key) of integer data
      lines, count, sum, min, max and last exactly.  Per program, the PERF
      files (a directory's) of the processes of one name (their cmd_name)
      add up first.  Prints the differences; exit status 1 if any.
  summary_check.py table JSON TEXT
      every text table of TEXT shows the numbers of the JSON document of the
      same rank: each row's count, total, mean, min, max, p50, p99, open,
      before, data values; regions sorted by total, largest first; with --hist,
      each histogram's counts sum to the row's count and match the JSON's;
      each block's title "pid <pid> <name>", or per program
      "program <name>: <N> process[es]"; where regions have a split by
      scheduler state, the split table after a blank line: its header, then
      per region (in the table's order) a row of its "split" (since "enter")
      and one of its "split_before" (since "attach"), whole lines.
"""
import json
import os
import re
import sys
from collections import defaultdict


def docs(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def secs(ns):
    """ns as PERF and the table print it: truncated to us, 6 decimals."""
    us = ns // 1000
    return "%d.%06d" % (us // 1000000, us % 1000000)


def tables_of(d):
    """The tables of a document: its processes, or its programs."""
    return d["programs"] if "programs" in d else d["processes"]


def title(p):
    """A table's title line, without "pid " / "program " for processes."""
    if "processes" in p:
        return "%s: %d process%s" % (p["name"], p["processes"], "" if p["processes"] == 1 else "es")
    return "%d %s" % (p["pid"], p["name"])


def counts(path):
    d = docs(path)[-1]
    for p in tables_of(d):
        if "processes" in p:
            print("program " + title(p))
        for r in sorted(p["regions"], key=lambda r: (r["category"], r["label"])):
            print("%s region %s %s count=%d open=%d before=%d" %
                  (p["name"], r["category"], r["label"], r["count"], r["open"], r["before"]))
        for r in sorted(p["data"], key=lambda r: (r["category"], r["key"])):
            print("%s data %s %s count=%d sum=%d min=%d max=%d last=%d" %
                  (p["name"], r["category"], r["key"], r["count"], r["sum"], r["min"], r["max"], r["last"]))


def perf_files(paths):
    """(pid or None, path) of each PERF file."""
    for p in paths:
        if os.path.isdir(p):
            for n in sorted(os.listdir(p)):
                m = re.search(r"-P([0-9a-f]{8})$", n)
                yield (int(m.group(1), 16) if m else None), os.path.join(p, n)
        else:
            yield None, p


def from_perf(path, reg=None, data=None):
    """Regions and integer data of one PERF file, as the summary counts them
    (added to reg and data when given), and the process's cmd_name."""
    reg = reg if reg is not None else defaultdict(lambda: {"count": 0, "before": 0, "enter": 0, "us": []})
    data = data if data is not None else {}
    name = None
    with open(path) as f:
        for line in f:
            col = [c.strip() for c in line.rstrip("\n").split("|")]
            if len(col) < 9:
                continue
            event, t_rel, cat, msg = col[3], col[6], col[7], "|".join(col[8:]).lstrip(".")
            if event == "cmd_name":
                name = msg.split(" ")[0]
            if event in ("region_enter", "region_leave"):
                label = msg[len("label:"):] if msg.startswith("label:") else msg
                r = reg[(cat, label)]
                if event == "region_enter":
                    r["enter"] += 1
                elif t_rel:
                    r["count"] += 1
                    r["us"].append(round(float(t_rel) * 1e6))
                else:
                    r["before"] += 1
            elif event == "data":
                key, _, val = msg.partition(":")
                if not re.fullmatch(r"-?[0-9]+", val):
                    continue
                v = int(val)
                d = data.setdefault((cat, key), {"count": 0, "sum": 0, "min": v, "max": v, "last": v})
                d["count"] += 1
                d["sum"] += v
                d["min"] = min(d["min"], v)
                d["max"] = max(d["max"], v)
                d["last"] = v
    return reg, data, name


def perf_tables(procs, files, bad):
    """(table, reg, data) per table of the summary, from the PERF files."""
    if procs and "processes" in procs[0]:   # per program: its processes' files added up
        by_name = {}
        for _, f in files:
            reg, data, name = from_perf(f)
            r, d, n = by_name.setdefault(name, (defaultdict(lambda: {"count": 0, "before": 0, "enter": 0, "us": []}),
                                                {}, 0))
            for k, v in reg.items():
                for x in ("count", "before", "enter"):
                    r[k][x] += v[x]
                r[k]["us"] += v["us"]
            for k, v in data.items():
                if k in d:
                    v = {"count": d[k]["count"] + v["count"], "sum": d[k]["sum"] + v["sum"],
                         "min": min(d[k]["min"], v["min"]), "max": max(d[k]["max"], v["max"]), "last": v["last"]}
                d[k] = v
            by_name[name] = (r, d, n + 1)
        if len(by_name) != len(procs):
            bad.append("%d programs in the PERF files, %d in the summary" % (len(by_name), len(procs)))
        for p in procs:
            if p["name"] not in by_name:
                bad.append("program %s: not in the PERF files" % p["name"])
                continue
            r, d, n = by_name[p["name"]]
            if n != p["processes"]:
                bad.append("program %s: %d PERF files, %d processes in the summary" % (p["name"], n, p["processes"]))
            yield p, r, d
        return
    if len(files) != len(procs):
        bad.append("%d PERF files, %d processes in the summary" % (len(files), len(procs)))
    for pid, f in files:
        ps = [p for p in procs if pid is None or p["pid"] == pid]
        if len(ps) != 1:
            bad.append("%s: no process %s in the summary" % (f, pid))
            continue
        reg, data, _ = from_perf(f)
        yield ps[0], reg, data


def perf(path, perf_paths):
    bad = []
    procs = tables_of(docs(path)[-1])
    for p, reg, data in perf_tables(procs, list(perf_files(perf_paths)), bad):
        who = "pid %d" % p["pid"] if "pid" in p else "program " + p["name"]
        got = {(r["category"], r["label"]): r for r in p["regions"]}
        for k in sorted(set(reg) | set(got)):
            want, s = reg.get(k), got.get(k)
            if not want or not s:
                bad.append("%s %s: only in %s" % (who, k, "PERF" if want else "the summary"))
                continue
            w = {"count": want["count"], "before": want["before"], "open": want["enter"] - want["count"]}
            g = {"count": s["count"], "before": s["before"], "open": s["open"]}
            # The summary sums ns, PERF truncates each to us: 0 <= total - sum(PERF) < count us.
            if not 0 <= s["total_ns"] / 1000 - sum(want["us"]) < max(s["count"], 1):
                bad.append("%s %s: total %d ns, PERF's t_rel sum %d us" %
                           (who, k, s["total_ns"], sum(want["us"])))
            if s["count"]:
                w["min"], w["max"] = min(want["us"]), max(want["us"])
                g["min"], g["max"] = s["min_ns"] // 1000, s["max_ns"] // 1000
            if w != g:
                bad.append("%s %s: PERF %s, summary %s" % (who, k, w, g))
        gotd = {(r["category"], r["key"]): {x: r[x] for x in ("count", "sum", "min", "max", "last")}
                for r in p["data"]}
        if data != gotd:
            bad.append("%s data: PERF %s, summary %s" % (who, data, gotd))
    for b in bad:
        print(b)
    return 1 if bad else 0


STATES = ("on_cpu", "runnable", "blocked", "asleep")


def split_rows(regions, catw):
    """The split table's lines for a block's regions (none: no split)."""
    rows = []
    for r in regions:
        for key, since in (("split", "enter"), ("split_before", "attach")):
            sp = r.get(key)
            if not sp:
                continue
            cols = ["%10s" % secs(sp["total_ns"])] + ["%10s" % secs(sp[s + "_ns"]) for s in STATES]
            cols += ["%13s" % secs(sp[s + "_ns"] // sp["count"]) for s in STATES]
            rows.append("%9d %s  %-6s  %-*s %s" % (sp["count"], " ".join(cols), since, catw, r["category"],
                                                   r["label"]))
    if not rows:
        return []
    return ["    count      total     on_cpu   runnable    blocked     asleep   on_cpu/call runnable/call"
            "  blocked/call   asleep/call  since   %-*s label" % (catw, "category")] + rows


def table(path, text_path):
    bad = []
    ds = docs(path)
    with open(text_path) as f:
        text = f.read()
    tables = re.split(r"^(?=\S+ tr2-bpf summary after )", text, flags=re.M)
    tables = [t for t in tables if t.strip()]
    if len(tables) != len(ds):
        bad.append("%d tables, %d JSON documents" % (len(tables), len(ds)))
    for t, d in zip(tables, ds):
        kind = "program" if "programs" in d else "pid"
        blocks = re.split(r"^\n%s " % kind, t, flags=re.M)[1:]
        if len(blocks) != len(tables_of(d)):
            bad.append("%d %s blocks, %d in JSON" % (len(blocks), kind, len(tables_of(d))))
        for b, p in zip(blocks, tables_of(d)):
            lines = b.split("\n")
            if lines[0] != title(p):
                bad.append("block title %r, JSON %s %s" % (lines[0], kind, title(p)))
            want = []
            if p["regions"]:
                want.append("    count      total       mean        min        max        p50        p99"
                            "  open before  category label")
            catw = max([8] + [len(r["category"]) for r in p["regions"] + p["data"]])
            totals = [r["total_ns"] for r in p["regions"]]
            if totals != sorted(totals, reverse=True):
                bad.append("%s: regions not sorted by total: %s" % (title(p), totals))
            for r in p["regions"]:
                if r["count"]:
                    cols = [secs(r["total_ns"]), "%.6f" % r["mean"], secs(r["min_ns"]), secs(r["max_ns"]),
                            "%.6f" % r["p50"], "%.6f" % r["p99"]]
                else:
                    cols = ["-"] * 6
                want.append("%9d %s %5d %6d  %-*s %s" % (r["count"], " ".join("%10s" % c for c in cols),
                                                         r["open"], r["before"], catw, r["category"], r["label"]))
            if p["data"]:
                want.append("    count        sum        min        max       last  category key")
            for r in p["data"]:
                want.append("%9d %10d %10d %10d %10d  %-*s %s" % (r["count"], r["sum"], r["min"], r["max"],
                                                                  r["last"], catw, r["category"], r["key"]))
            splits = split_rows(p["regions"], catw)
            if splits:
                want += [""] + splits
            if lines[1:1 + len(want)] != want:
                bad.append("%s: table\n%s\nwant\n%s" % (title(p), "\n".join(lines[1:1 + len(want)]),
                                                             "\n".join(want)))
            # --hist: "<category> <label>", then bcc's layout.
            rest = "\n".join(lines[1 + len(want):])
            for r in p["regions"]:
                m = re.search(r"^%s %s\n     nsecs               : count    distribution\n((?: *\d+ -> \d+ *: \d+ *\|[* ]*\|\n)+)"
                              % (re.escape(r["category"]), re.escape(r["label"])), rest + "\n", re.M)
                if not m:
                    if "distribution" in rest and r["count"]:
                        bad.append("%s %s %s: no histogram" % (title(p), r["category"], r["label"]))
                    continue
                rows = [tuple(int(x) for x in re.match(r" *(\d+) -> (\d+) *: (\d+)", l).groups())
                        for l in m.group(1).splitlines()]
                got = [{"low": lo, "high": hi, "count": n} for lo, hi, n in rows if n]
                if got != r["hist"] or sum(n for _, _, n in rows) != r["count"]:
                    bad.append("%s %s %s: histogram %s, JSON %s" % (title(p), r["category"], r["label"],
                                                                      got, r["hist"]))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "counts":
        counts(sys.argv[2])
    elif cmd == "perf":
        sys.exit(perf(sys.argv[2], sys.argv[3:]))
    elif cmd == "table":
        sys.exit(table(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("usage: summary_check.py counts|perf|table ...")
