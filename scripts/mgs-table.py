#!/usr/bin/env python3
"""Markdown tables from karma-mgs results: scripts/mgs-table.py DIR...

Groups the JSON files (mgs_<device>_<tag>-r<round>.json, as scripts/mgs-gpu.sh
and scripts/mgs-scaling.sh write them) by problem, prints one table per
problem (variant, time, GFLOP/s, GB/s, launches, orthogonality, residual),
then the ratios the issue's goals are about, round by round: only runs of one
round of one job are compared.
"""
import glob
import json
import os
import re
import sys
from collections import defaultdict


def load(dirs):
    runs = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            with open(path) as f:
                doc = json.load(f)
            if doc.get("app") != "mgs":
                continue
            p, k = doc["problem"], doc["kernels"][0]
            m = re.search(r"-r(\d+)\.json$", path)
            checks = {c["name"]: c for c in doc["verification"]["checks"]}
            runs.append({
                "round": int(m.group(1)) if m else 1,
                "variant": k["name"] + ("" if p["reductions"] == "device" or doc["mpi"]["ranks"] > 1
                                        else " (host reductions)"),
                "algorithm": p["algorithm"], "implementation": p["implementation"],
                "reductions": p["reductions"],
                "problem": (p["precision"], p["n"], p["m"], p["layout"], p["matrix"],
                            p["condition"], doc["mpi"]["ranks"], p["scaling"]),
                "rows_per_rank": max(p["rows_per_rank"]),
                "ranks": doc["mpi"]["ranks"],
                "time": k["time_s"]["min"], "median": k["time_s"]["median"],
                "gflops": k["fom"]["value"], "gbps": k["bandwidth_GBps"]["best"],
                "launches": k["launches_per_factorization"],
                "allreduces": k["allreduces_per_factorization"],
                "orth": checks["orthogonality"]["error"],
                "orth_tol": checks["orthogonality"]["tolerance"],
                "res": checks["residual"]["error"], "result": doc["result"],
                "file": os.path.basename(path)})
    return runs


def describe(problem):
    precision, n, m, layout, matrix, condition, ranks, scaling = problem
    text = f"{precision}, N = {n} (2^{n.bit_length() - 1})" if n & (n - 1) == 0 else f"{precision}, N = {n}"
    text += f", m = {m}, layout {layout}"
    if matrix == "conditioned":
        text += f", condition {condition:g}"
    if ranks > 1 or scaling == "weak":
        text += f", {ranks} rank(s) ({scaling} scaling)"
    return text


def main(dirs):
    runs = load(dirs)
    by_problem = defaultdict(list)
    for r in runs:
        by_problem[r["problem"]].append(r)
    order = ["mgs", "mgs-native-cuda", "mgs-cublas", "mgs (host reductions)", "mgs-fused", "cgs2"]
    for problem in sorted(by_problem, key=lambda p: (p[6], p[4], p[0] != "double", p[1], p[3])):
        rs = by_problem[problem]
        print(f"\n### {describe(problem)}\n")
        print("| variant | round | time ms (min) | median ms | GFLOP/s | GB/s | launches | allreduces "
              "| ‖QᵀQ−I‖_F | ‖A−QR‖/‖A‖ | result |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        rs.sort(key=lambda r: (order.index(r["variant"]) if r["variant"] in order else 99,
                               r["round"]))
        for r in rs:
            print(f"| {r['variant']} | {r['round']} | {r['time'] * 1e3:.3f} | {r['median'] * 1e3:.3f} "
                  f"| {r['gflops']:.1f} | {r['gbps']:.0f} | {r['launches']} | {r['allreduces']} "
                  f"| {r['orth']:.2e} | {r['res']:.2e} | {r['result']} |")

        # Ratios within one round of this problem.
        rounds = sorted({r["round"] for r in rs})
        pick = lambda v, rd: next((r for r in rs if r["variant"] == v and r["round"] == rd), None)
        lines = []
        for rd in rounds:
            k = pick("mgs", rd)
            if not k:
                continue
            cells = []
            for ref in ("mgs-native-cuda", "mgs-cublas"):
                o = pick(ref, rd)
                if o:
                    cells.append(f"Kokkos mgs / {ref[4:]} = {o['time'] / k['time']:.3f}")
            f = pick("mgs-fused", rd)
            if f:
                cells.append(f"mgs-fused speed-up = {k['time'] / f['time']:.2f}x, "
                             f"orthogonality fused / mgs = {f['orth'] / k['orth']:.2f}")
            c = pick("cgs2", rd)
            if c:
                cells.append(f"cgs2 speed-up = {k['time'] / c['time']:.2f}x")
            h = pick("mgs (host reductions)", rd)
            if h:
                cells.append(f"device-resident / host reductions speed-up = {h['time'] / k['time']:.2f}x")
            lines.append(f"- round {rd}: " + "; ".join(cells))
        if lines:
            print("\nPerformance ratios (time of the other / time of Kokkos mgs; > 1: Kokkos faster):\n")
            print("\n".join(lines))

    # Weak scaling: efficiency = t(1 rank) / t(K ranks), same rows per rank; the
    # one-rank reference keeps its reductions on the device, as it runs.
    weak = [r for r in runs if r["problem"][7] == "weak"]
    if weak:
        print("\n### Weak scaling (rows per rank fixed)\n")
        print("| algorithm | round | rows per rank | 1 rank ms | ranks | time ms | efficiency |")
        print("|---|---|---|---|---|---|---|")
        for alg in ("mgs-fused", "cgs2", "mgs"):
            for rd in sorted({r["round"] for r in weak}):
                base = [r for r in weak if r["algorithm"] == alg and r["round"] == rd
                        and r["ranks"] == 1 and r["reductions"] == "device"]
                if not base:
                    continue
                b = base[0]
                for r in sorted((r for r in weak if r["algorithm"] == alg and r["round"] == rd
                                 and r is not b), key=lambda r: (r["ranks"], r["reductions"])):
                    ranks = f"{r['ranks']}" + (" (host reductions)" if r["ranks"] == 1 else "")
                    print(f"| {alg} | {rd} | {r['rows_per_rank']} | {b['time'] * 1e3:.3f} | {ranks} "
                          f"| {r['time'] * 1e3:.3f} | {b['time'] / r['time']:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
