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

import argparse
import json
import math
import re
import statistics
import sys

from . import ToolError, __version__, archive

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


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="karma-microbench-ratios",
        description="Print, for each karma-microbench benchmark, the ratio of its time with "
        "karma's arrays to its time with raw pointers (median over repetitions, with the "
        "spread), and exit 1 if a ratio exceeds the threshold.",
        epilog="Example: karma-microbench --benchmark_repetitions=10 "
        "--benchmark_enable_random_interleaving=true --benchmark_out=mb.json; "
        "karma-microbench-ratios mb.json --threshold 1.03 "
        "--min-static-speedup 1.5")
    p.add_argument("json", metavar="FILE.json", help="Google Benchmark JSON (--benchmark_out)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--threshold", type=float, default=1.03,
                   help="largest acceptable median ratio impl / raw (default: 1.03)")
    p.add_argument("--check", default="karma", metavar="IMPL",
                   help="the impl whose ratios must meet the threshold; the others are "
                   "printed only (default: karma)")
    p.add_argument("--time", choices=("real", "cpu"), default="real",
                   help="which time to compare (default: real, the wall clock)")
    p.add_argument("--filter", default="", metavar="REGEX",
                   help="only benchmarks whose name matches REGEX (re.search)")
    p.add_argument("--min-static-speedup", type=float, default=None, metavar="X",
                   help="also require time(dynamic) / time(static or mixed) >= X for the "
                   "benchmarks matching --static-filter")
    p.add_argument("--static-filter", default=r"^TinyMatrixSum/serial/right/.*/karma$",
                   metavar="REGEX",
                   help="names (with extents static or mixed) the speedup applies to "
                   "(default: %(default)s)")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = p.parse_args(argv)
    if not (args.threshold > 0 and math.isfinite(args.threshold)):
        p.error("--threshold must be a positive number")
    if args.min_static_speedup is not None and not args.min_static_speedup > 0:
        p.error("--min-static-speedup must be a positive number")
    for option in ("filter", "static_filter"):
        try:
            re.compile(getattr(args, option))
        except re.error as e:
            p.error(f"--{option.replace('_', '-')}: bad regular expression: {e}")
    return args


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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        runs, errors = load(args.json, f"{args.time}_time", args.filter)
    except InputError as e:
        print(f"karma-microbench-ratios: {e}", file=sys.stderr)
        return EXIT_INPUT
    rows, unpaired = pair_ratios(runs)
    if not rows and not errors:
        print(f"karma-microbench-ratios: {args.json}: no benchmark has both an impl and a "
              f"'{BASELINE}' version to compare", file=sys.stderr)
        return EXIT_INPUT

    if rows and not any(r["impl"] == args.check for r in rows):
        print(f"karma-microbench-ratios: {args.json}: no '{args.check}' benchmark to check "
              f"(impls: {', '.join(sorted({r['impl'] for r in rows}))})", file=sys.stderr)
        return EXIT_INPUT

    failures = []
    table = []
    for r in rows:
        checked = r["impl"] == args.check
        over = checked and r["ratio"] > args.threshold
        if over:
            failures.append(f"{r['key']}: {r['impl']} / {BASELINE} = {r['ratio']:.3f} "
                            f"> {args.threshold:g}")
        status = "OVER" if over else ("ok" if checked else "info")
        table.append([r["key"], r["impl"], f"{r['reps'][0]}/{r['reps'][1]}",
                      format_time(r["impl_time"]), format_time(r["raw_time"]),
                      f"{r['ratio']:.3f}", f"{r['low']:.3f}-{r['high']:.3f}",
                      format_gbps(r["impl_gbps"]), format_gbps(r["raw_gbps"]), status])
    if table:
        print(f"Ratios impl / {BASELINE}, {args.time} time, median over repetitions "
              f"(threshold {args.threshold:g} on {args.check}):")
        print_table(["benchmark", "impl", "reps", "impl time", "raw time", "ratio", "p25-p75",
                     "impl GB/s", "raw GB/s", "status"], table, args.markdown)

    speedups = static_speedups(runs)
    if args.min_static_speedup is not None and not any(
            re.search(args.static_filter, s["name"]) for s in speedups):
        failures.append(f"no static or mixed benchmark with a dynamic counterpart matches "
                        f"--static-filter {args.static_filter!r}")
    if speedups:
        print()
        print("Static extents: time(dynamic) / time(static or mixed), median over repetitions:")
        speedup_table = []
        for s in speedups:
            required = (args.min_static_speedup is not None and
                        re.search(args.static_filter, s["name"]))
            short = required and s["speedup"] < args.min_static_speedup
            if short:
                failures.append(f"{s['name']}: {s['speedup']:.2f} x faster than dynamic "
                                f"< {args.min_static_speedup:g}")
            status = ("SHORT" if short else "ok") if required else "info"
            speedup_table.append([s["name"], f"{s['speedup']:.2f}",
                                  f"{s['low']:.2f}-{s['high']:.2f}", status])
        print_table(["benchmark", "speedup", "p25-p75", "status"], speedup_table, args.markdown)

    for u in unpaired:
        print(f"karma-microbench-ratios: warning: no pair for {u}", file=sys.stderr)
    for e in errors:
        failures.append(f"error: {e}")
    print()
    if failures:
        print(f"FAILED ({len(failures)}):")
        for f in failures:
            print(f"  {f}")
        return EXIT_OVER
    print(f"PASSED: {sum(r['impl'] == args.check for r in rows)} ratios {args.check} / "
          f"{BASELINE} at most {args.threshold:g}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
