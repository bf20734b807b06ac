#!/usr/bin/env python3
"""Counts of the corpus per pattern and language, and checks of its format."""
import collections
import glob
import json
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import PATTERNS  # noqa: E402

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
by = collections.Counter()
per = collections.defaultdict(collections.Counter)
ids = set()
problems = []
for f in sorted(glob.glob(os.path.join(here, "*.jsonl"))):
    for n, line in enumerate(open(f, encoding="utf-8"), 1):
        s = json.loads(line)
        keys = ["id", "language", "pattern", "project", "break", "command", "exit", "output"]
        if list(s) != keys:
            problems.append(f"{f}:{n}: keys {list(s)}")
        if s["pattern"] not in PATTERNS:
            problems.append(f"{f}:{n}: pattern {s['pattern']}")
        if s["id"] in ids:
            problems.append(f"{f}:{n}: duplicate id {s['id']}")
        ids.add(s["id"])
        if "/tmp/diagcorpus" in s["output"] or "/tmp/diagcorpus" in s["command"]:
            pass  # commands keep the scratch path they really ran with
        if "/tmp/diagcorpus" in s["output"]:
            problems.append(f"{f}:{n}: scratch path in output")
        if len(s["output"]) > 12100:
            problems.append(f"{f}:{n}: output too long")
        by[s["language"]] += 1
        per[s["pattern"]][s["language"]] += 1
langs = sorted(by)
print("pattern".ljust(26) + "".join(l[:6].rjust(8) for l in langs) + "   total")
for p in PATTERNS:
    row = per[p]
    print(p.ljust(26) + "".join(str(row[l] or "").rjust(8) for l in langs) + str(sum(row.values())).rjust(8)
          + ("   <6" if sum(row.values()) < 6 else ""))
print("total".ljust(26) + "".join(str(by[l]).rjust(8) for l in langs) + str(sum(by.values())).rjust(8))
for p in problems:
    print("PROBLEM", p)
