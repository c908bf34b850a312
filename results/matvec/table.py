#!/usr/bin/env python3
"""Markdown tables from karma-matvec results JSON (and karma-stream's copy).

    results/matvec/table.py DIR [DIR ...]

For each matvec JSON in the directories: variant, best and median time,
GB/s, GFLOP/s, and the ratios to the BLAS of the same run (cuBLAS or CBLAS)
and to karma-stream's copy bandwidth measured in the same job (the larger of
the stream_*copy*.json found beside it, if any).
"""
import glob
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def describe(problem):
    if problem["format"] == "csr":
        return "CSR %s, %d x %d, %d entries, %s" % (
            problem["pattern"], problem["m"], problem["n"], problem["entries"], problem["precision"])
    op = problem["operator"]
    return "%s x %s %s %s, y = A%s x (kernels see %s)" % (
        problem["m"], problem["n"], problem["layout"], problem["precision"],
        "^T" if problem["transpose"] else "", op["layout"])


def table(path, copy_gbps):
    doc = load(path)
    kernels = [k for k in doc["kernels"] if not k["name"].startswith(("allgatherv", "allreduce"))]
    blas = [k for k in kernels if "gemv" in k["name"]]
    blas_gbps = blas[0]["fom"]["value"] if blas else None
    lines = ["**%s**: %s, %s" % (os.path.basename(path), describe(doc["problem"]), doc["result"]), "",
             "| kernel | settings | best ms | median ms | GB/s | GFLOP/s | / BLAS | / copy |",
             "|---|---|---|---|---|---|---|---|"]
    for k in kernels:
        settings = []
        for key in ("team_size", "vector_length", "rows_per_thread", "column_blocks", "rows_per_item",
                    "threads"):
            if key in k:
                settings.append("%s=%s" % (key, k[key]))
        gbps = k["fom"]["value"]
        lines.append("| %s | %s | %.4f | %.4f | %.0f | %.0f | %s | %s |" % (
            k["name"], " ".join(settings), k["time_s"]["min"] * 1e3, k["time_s"]["median"] * 1e3, gbps,
            k["GFLOPs"]["best"],
            "%.3f" % (gbps / blas_gbps) if blas_gbps else "",
            "%.3f" % (gbps / copy_gbps) if copy_gbps else ""))
    return "\n".join(lines) + "\n"


def main(dirs):
    for d in dirs:
        copies = [load(p) for p in sorted(glob.glob(os.path.join(d, "stream*copy*.json")))]
        copy_gbps = max((k["fom"]["value"] for c in copies for k in c["kernels"] if k["name"] == "copy"),
                        default=None)
        if copy_gbps:
            print("karma-stream copy in the same job: %.0f GB/s (best of %d runs)\n" % (copy_gbps, len(copies)))
        for path in sorted(glob.glob(os.path.join(d, "matvec*.json"))):
            print(table(path, copy_gbps))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
