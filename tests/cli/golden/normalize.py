#!/usr/bin/env python3
"""Record the golden manifest (tests/cli/golden/manifest.txt) from a directory
of kbsim outputs, normalized as tests/cli/golden_test.cpp normalizes them:
host figures dropped, the source directory replaced by <src>. Use it when a
change of results is intended, and say why in the commit.

  normalize.py OUT_DIR SOURCE_DIR > manifest.txt

OUT_DIR holds probe.txt, probe.json, pdp/results.json, pdp/topology.json,
mm/results.json, mm/trace.json, mm/oplog.json, mesh/results.json,
ar/results.json and ar/oplog.json (the commands are listed in
golden_test.cpp)."""
import sys

FILES = ["probe.txt", "probe.json", "pdp/results.json", "pdp/topology.json", "mm/results.json", "mm/trace.json",
         "mm/oplog.json", "mesh/results.json", "ar/results.json", "ar/oplog.json"]
HOST_KEYS = ('"wall_time_s":', '"events_per_s":', '"abi_version":')


def normalize(text, src):
    out, skip = [], False
    for line in text.split("\n"):
        if skip:
            skip = "}" not in line
            continue
        if '"host": {' in line:
            skip = True
            continue
        if any(k in line for k in HOST_KEYS):
            continue
        out.append(line.replace(src, "<src>"))
    return "\n".join(out)


def fnv1a(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


out_dir, src = sys.argv[1], sys.argv[2]
for f in FILES:
    with open(f"{out_dir}/{f}") as fh:
        print(f"{f} {fnv1a(normalize(fh.read(), src)):016x}")
