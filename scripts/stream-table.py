#!/usr/bin/env python3
"""Markdown table of karma-stream against BabelStream, from the files of one
side-by-side run: karma-stream JSON and BabelStream --csv output, matched by
name (stream_<DEVICE>_<precision>-2p<k>-r<round>.json against
babelstream/<precision>-2p<k>-r<round>.csv).

usage: scripts/stream-table.py DIR
"""
import csv
import glob
import json
import os
import re
import sys

KERNELS = ["copy", "mul", "add", "triad", "dot", "nstream"]


def babelstream(path):
    """GB/s per kernel from BabelStream's --csv output (max_MB_per_sec / 1000)."""
    with open(path) as f:
        rows = [line for line in f if re.match(r"^(Copy|Mul|Add|Triad|Dot|Nstream),", line)]
    return {r[0].lower(): float(r[4]) / 1000 for r in csv.reader(rows)}


def main(directory):
    runs = sorted(glob.glob(os.path.join(directory, "stream_*-2p*-r*.json")))
    by_size = {}
    for path in runs:
        m = re.search(r"_(float|double)-2p(\d+)-r(\d+)\.json$", path)
        reference = os.path.join(directory, "babelstream", f"{m[1]}-2p{m[2]}-r{m[3]}.csv")
        if not os.path.exists(reference):
            continue
        if set(babelstream(reference)) != set(KERNELS):
            print(f"(skipped {os.path.basename(path)}: {reference} has no figures for every kernel)")
            continue
        doc = json.load(open(path))
        karma = {k["name"]: k["fom"]["value"] for k in doc["kernels"]}
        by_size.setdefault((m[1], int(m[2])), []).append((int(m[3]), karma, babelstream(reference), doc))
    if not by_size:
        sys.exit("stream-table: no matching karma/BabelStream pairs in " + directory)
    for (precision, k), rounds in sorted(by_size.items()):
        print(f"\n{precision}, 2^{k} elements per array: karma GB/s / BabelStream GB/s = ratio\n")
        print("| round | " + " | ".join(KERNELS) + " | result |")
        print("|---|" + "---|" * (len(KERNELS) + 1))
        worst = {n: float("inf") for n in KERNELS}
        for r, karma, ref, doc in sorted(rounds, key=lambda x: x[0]):
            cells = []
            for n in KERNELS:
                ratio = karma[n] / ref[n]
                worst[n] = min(worst[n], ratio)
                cells.append(f"{karma[n]:.0f} / {ref[n]:.0f} = {ratio:.3f}")
            print(f"| {r} | " + " | ".join(cells) + f" | {doc['result']} |")
        print("| **worst** | " + " | ".join(f"**{worst[n]:.3f}**" for n in KERNELS) + " | |")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    main(sys.argv[1])
