"""karma-power-check: each kernel's energy-counter average power (over the window_unix_s
of kernels[].energy) against nvidia-smi's samples inside that window, taken beside the run:

    nvidia-smi --query-gpu=timestamp,power.draw,power.draw.instant \\
        --format=csv,nounits -lms 20 > nvidia-smi.csv

It prints both and their ratio, and exits 1 when a ratio is off by more than --tolerance.
With power.draw alone (a mean over the last second) each window's first second is left
out (--skip)."""

import csv
import datetime
import os

from karma_tools.core import ToolError
from karma_tools.results.archive import read_json
from karma_tools.results.results import is_number

# nvidia-smi's columns, best first, and the seconds of a window each leaves out by default
# (older drivers have only power.draw, a mean over the last second).
POWER_COLUMNS = {"power.draw.instant [W]": 0.0, "power.draw [W]": 1.0}


def read_samples(path, utc_offset_h=0.0):
    """([(unix seconds, watts)], column) of nvidia-smi's CSV, its local times utc_offset_h off."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f, skipinitialspace=True) if r]
    if not rows or rows[0][0] != "timestamp":
        raise ToolError(f"{path}: not nvidia-smi CSV with a timestamp column first", 2)
    column = next((c for c in POWER_COLUMNS if c in rows[0]), None)
    if column is None:
        raise ToolError(f"{path}: no power column ({' or '.join(POWER_COLUMNS)})", 2)
    index = rows[0].index(column)
    zone = datetime.timezone(datetime.timedelta(hours=utc_offset_h))
    samples = []
    for r in rows[1:]:
        try:
            stamp = datetime.datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f")
            samples.append((stamp.replace(tzinfo=zone).timestamp(), float(r[index])))
        except (ValueError, IndexError):
            continue  # the header again, "[N/A]" or a line cut short when the sampler stopped
    if not samples:
        raise ToolError(f"{path}: no power samples", 2)
    return samples, column


def check(results, samples, tolerance=0.10, skip=0.0, min_samples=5):
    """One row per kernel with a measured energy window, its first `skip` seconds left out."""
    rows = []
    for path in results:
        doc = read_json(path)
        kernels = doc.get("kernels") if isinstance(doc, dict) else None
        if not isinstance(kernels, list) or not all(isinstance(k, dict) for k in kernels):
            raise ToolError(f"{path}: no list of kernels; not karma results", 2)
        for i, k in enumerate(kernels):
            e = k.get("energy") or {}
            if not isinstance(e, dict) or e.get("status") != "measured" or \
                    "window_unix_s" not in e:
                continue
            window = e["window_unix_s"]
            if not (isinstance(window, list) and len(window) == 2
                    and all(map(is_number, [*window, e.get("average_power_W")]))):
                raise ToolError(f"{path}: kernels[{i}].energy: a measured window needs "
                                "window_unix_s [start, end] and average_power_W, numbers", 2)
            t0, t1 = window
            inside = [w for t, w in samples if t0 + skip <= t <= t1]
            row = {"file": os.path.basename(path), "app": doc.get("app", "?"),
                   "kernel": k["name"], "window_s": t1 - t0,
                   "counter_W": e["average_power_W"], "samples": len(inside)}
            if len(inside) >= min_samples:
                row["nvidia_smi_W"] = sum(inside) / len(inside)
                row["ratio"] = row["counter_W"] / row["nvidia_smi_W"]
                row["agrees"] = abs(row["ratio"] - 1) <= tolerance
            rows.append(row)
    return rows


def markdown(rows, column, tolerance, skip):
    left_out = f" after its first {skip:g} s" if skip > 0 else ""
    out = [f"Average power of each kernel's energy window: the counter's figure "
           f"(kernels[].energy.average_power_W) against the mean of nvidia-smi's "
           f"`{column}` samples inside the window{left_out}; agreement within "
           f"{tolerance:.0%}.", "",
           "| results | app | kernel | window s | samples | counter W | nvidia-smi W "
           "| counter / nvidia-smi | |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        smi, ratio, verdict = "-", "-", "too few samples"
        if "ratio" in r:
            smi, ratio = f"{r['nvidia_smi_W']:.1f}", f"{r['ratio']:.3f}"
            verdict = "agrees" if r["agrees"] else "**differs**"
        out.append(f"| {r['file']} | {r['app']} | {r['kernel']} | {r['window_s']:.2f} "
                   f"| {r['samples']} | {r['counter_W']:.1f} | {smi} | {ratio} | {verdict} |")
    return "\n".join(out) + "\n"
