"""Ratios karma / raw pointer from karma-microbench's Google Benchmark JSON.

karma-microbench names its benchmarks Family/where/layout/extents/shape/impl
(Google Benchmark may append /real_time and similar). Benchmarks whose names
differ only in impl are paired: every impl other than "raw" is divided by
"raw". With --benchmark_repetitions the JSON holds one entry per repetition;
the ratio is median(impl) / median(raw) and its spread the 25th-75th
percentiles of the ratios of every impl repetition to every raw repetition.

Exit status: 0 when every checked ratio is at most the threshold (and every
static-extents speedup asked for is reached); 1 when one is not, or when a
benchmark reported an error (a wrong answer, say); 2 for unreadable or
malformed input and bad usage.
"""

import json
import math
import re
import statistics

from .core import ToolError
from . import archive

EXIT_OK, EXIT_OVER, EXIT_INPUT = 0, 1, 2
BASELINE = "raw"
EXTENTS = ("static", "mixed", "dynamic")
# Suffixes Google Benchmark appends to a registered name.
RUN_SUFFIX = re.compile(
    r"^(real_time|process_time|manual_time|repeats:\d+|threads:\d+|iterations:\d+|"
    r"min_time:[0-9.e+-]+s?|min_warmup_time:[0-9.e+-]+s?)$")
IMPL = re.compile(r"^(raw\w*|karma\w*)$")
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


class InputError(Exception):
    """The JSON is not what karma-microbench writes."""


def split_name(run_name):
    """(tokens of the registered name, index of the impl token) or None."""
    tokens = run_name.split("/")
    while tokens and RUN_SUFFIX.match(tokens[-1]):
        tokens.pop()
    impl = [i for i, t in enumerate(tokens) if IMPL.match(t)]
    if len(impl) != 1:
        return None
    return tokens, impl[0]


def number(entry, key, where):
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: '{key}' is {value!r}, not a finite number")
    return float(value)


def load(path, time_key, name_filter):
    """{run_name: {"seconds": [...], "bytes_per_second": [...]}} and the errors."""
    try:
        # A file inside a results archive too (results/microbench/runs.tar.xz/...).
        doc = json.loads(archive.read_bytes(path).decode("utf-8"))
    except ToolError as e:
        raise InputError(str(e)) from e
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path}: not Google Benchmark JSON: no 'benchmarks' list")
    runs, medians, errors = {}, {}, []
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"{path}: benchmarks[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{where}: not an object with a 'name'")
        name = entry["name"]
        run_name = entry.get("run_name", name)
        if not isinstance(run_name, str):
            raise InputError(f"{where}: 'run_name' is not a string")
        if name_filter and not re.search(name_filter, run_name):
            continue
        if entry.get("error_occurred"):
            errors.append(f"{run_name}: {entry.get('error_message', 'error')}")
            continue
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate" and entry.get("aggregate_name") != "median":
            continue
        unit = entry.get("time_unit", "ns")
        if unit not in UNIT_SECONDS:
            raise InputError(f"{where}: unknown time_unit {unit!r}")
        seconds = number(entry, time_key, where) * UNIT_SECONDS[unit]
        bandwidth = entry.get("bytes_per_second")
        target = runs if run_type == "iteration" else medians
        record = target.setdefault(run_name, {"seconds": [], "bytes_per_second": []})
        record["seconds"].append(seconds)
        if isinstance(bandwidth, (int, float)) and not isinstance(bandwidth, bool):
            record["bytes_per_second"].append(float(bandwidth))
    # Only aggregates (--benchmark_report_aggregates_only): the median stands alone.
    for run_name, record in medians.items():
        runs.setdefault(run_name, record)
    if not runs and not errors:
        raise InputError(f"{path}: no benchmark results" +
                         (f" match --filter {name_filter!r}" if name_filter else ""))
    return runs, errors


def percentile(sorted_values, q):
    """Linear interpolation between closest ranks."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def compare(a, b):
    """Median ratio a / b and the 25th-75th percentiles of all pairwise ratios."""
    ratio = statistics.median(a) / statistics.median(b)
    pairwise = sorted(x / y for x in a for y in b)
    return ratio, percentile(pairwise, 0.25), percentile(pairwise, 0.75)


def pair_ratios(runs):
    """Rows impl vs raw, in the order of the JSON."""
    groups = {}
    for run_name in runs:
        parsed = split_name(run_name)
        if parsed is None:
            continue
        tokens, i = parsed
        key = "/".join(tokens[:i] + tokens[i + 1:])
        groups.setdefault(key, {})[tokens[i]] = runs[run_name]
    rows, unpaired = [], []
    for key, impls in groups.items():
        if BASELINE not in impls:
            unpaired.extend(f"{key} ({impl})" for impl in impls)
            continue
        raw = impls[BASELINE]
        others = [impl for impl in impls if impl != BASELINE]
        if not others:
            unpaired.append(f"{key} ({BASELINE})")
        for impl in others:
            ratio, low, high = compare(impls[impl]["seconds"], raw["seconds"])
            rows.append({
                "key": key, "impl": impl, "ratio": ratio, "low": low, "high": high,
                "reps": (len(impls[impl]["seconds"]), len(raw["seconds"])),
                "impl_time": statistics.median(impls[impl]["seconds"]),
                "raw_time": statistics.median(raw["seconds"]),
                "impl_gbps": median_or_none(impls[impl]["bytes_per_second"]),
                "raw_gbps": median_or_none(raw["bytes_per_second"]),
            })
    rows.sort(key=lambda r: (sort_key(r["key"]), r["impl"] != "karma", r["impl"]))
    return rows, unpaired


def static_speedups(runs):
    """Rows time(dynamic) / time(static or mixed), same everything else."""
    groups = {}
    for run_name in runs:
        parsed = split_name(run_name)
        if parsed is None:
            continue
        tokens, _ = parsed
        extents = [i for i, t in enumerate(tokens) if t in EXTENTS]
        if len(extents) != 1:
            continue
        e = extents[0]
        key = tuple(tokens[:e] + ["{extents}"] + tokens[e + 1:])
        groups.setdefault(key, {})[tokens[e]] = runs[run_name]
    rows = []
    for key, kinds in groups.items():
        if "dynamic" not in kinds:
            continue
        for kind in ("static", "mixed"):
            if kind in kinds:
                speedup, low, high = compare(kinds["dynamic"]["seconds"], kinds[kind]["seconds"])
                name = "/".join(key).replace("{extents}", kind)
                rows.append({"name": name, "speedup": speedup, "low": low, "high": high})
    rows.sort(key=lambda r: sort_key(r["name"]))
    return rows


FAMILIES = ("Sum3D", "Stencil3D", "TinyMatrixSum", "Subspan3D", "MatVec")
TOKEN_ORDER = {"serial": 0, "parallel": 1, "right": 0, "left": 1, "static": 0, "mixed": 1,
               "dynamic": 2, "{extents}": 0, "karma": 0, "raw": 1}


def sort_key(name):
    """The paper's order of families, then serial before parallel, right before
    left, static before mixed before dynamic, smaller shapes first."""
    tokens = name.split("/")
    family = FAMILIES.index(tokens[0]) if tokens[0] in FAMILIES else len(FAMILIES)
    rest = []
    for t in tokens[1:]:
        if re.fullmatch(r"\d+(x\d+)*", t):
            rest.append((1, math.prod(int(x) for x in t.split("x")), t))
        else:
            rest.append((0, TOKEN_ORDER.get(t, 9), t))
    return (family, tokens[0], rest)


def median_or_none(values):
    return statistics.median(values) if values else None


def format_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.4g} ns"


def format_gbps(value):
    if value is None:
        return "-"
    gbps = value / 1e9
    return f"{gbps:.0f}" if gbps >= 100 else f"{gbps:.3g}"


def print_table(header, rows, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
