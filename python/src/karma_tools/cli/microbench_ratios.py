"""karma-microbench-ratios: karma-microbench's ratios; its command line and
main (the work is karma_tools.lib.microbench_ratios's)."""

import argparse
import math
import re
import sys
from ..lib.core import __version__
from ..lib.microbench_ratios import (BASELINE, EXIT_INPUT, EXIT_OK, EXIT_OVER, InputError,
                                     format_gbps, format_time, load, pair_ratios, print_table,
                                     static_speedups)


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
