#!/usr/bin/env python3
"""Compares a partitioned karma-contact run's results with a replicated run's.

Usage: compare_decompositions.py REPLICATED.json PARTITIONED.json

The whole mesh's figures must be equal, step by step: pairs, entries,
longest row, empty rows, pair and row-statistics checksums (reduced over
the ranks), and every storage's checksums. Exit 1 on any difference, 2 when
a file is missing or is not what is expected.
"""
import json
import sys

STEP_KEYS = ("step", "pairs", "entries", "max_row", "empty_rows", "pair_checksum", "stats_checksum")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read {path}: {e}")
        sys.exit(2)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    rep, part = load(sys.argv[1]), load(sys.argv[2])
    mode = part["problem"].get("decomposition", {}).get("mode")
    if "decomposition" in rep["problem"] or mode != "partitioned":
        print("expected a replicated run, then a partitioned one")
        return 2
    wrong = []
    a, b = rep["problem"]["per_step"], part["problem"]["per_step"]
    if len(a) != len(b):
        wrong.append(f"{len(a)} steps against {len(b)}")
    for x, y in zip(a, b):
        for k in STEP_KEYS:
            if x[k] != y[k]:
                wrong.append(f"step {x['step']}: {k} {x[k]} (replicated) != {y[k]} (partitioned)")
    for name, s in rep["problem"]["storages"].items():
        t = part["problem"]["storages"].get(name)
        for k in ("pair_checksums", "stats_checksums"):
            if t is None or s[k] != t[k]:
                wrong.append(f"{name}: {k} differ")
    ranks = part["problem"]["decomposition"]["ranks"]
    for w in wrong:
        print(w)
    pairs = sum(s["pairs"] for s in b)
    print(f"{ranks} rank(s): {len(b)} step(s), {pairs:.0f} pairs in all: "
          + ("all equal to the replicated run's" if not wrong else f"{len(wrong)} difference(s)"))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
