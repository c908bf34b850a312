"""karma-instruction-ratios: instruction counts' ratios; its command line and
main (the work is karma_tools.lib.instruction_ratios's)."""

import argparse
import subprocess
import sys
from ..lib.core import __version__, unreadable
from ..lib.instruction_ratios import FAMILIES, read_counts


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="karma-instruction-ratios",
                                description="karma / raw instruction counts of "
                                "karma-microbench's kernels from a callgrind output file.")
    p.add_argument("file", help="callgrind.out file, or with --annotated the text of "
                   "callgrind_annotate --inclusive=yes --threshold=100")
    p.add_argument("--annotated", action="store_true",
                   help="FILE is already callgrind_annotate's output")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8", errors="replace") as f:
            text = f.read() if args.annotated else ""  # else callgrind_annotate reads it
    except OSError as e:
        error = unreadable(args.file, e)
        print(f"karma-instruction-ratios: error: {error}", file=sys.stderr)
        return error.code
    try:
        if not args.annotated:
            text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                                   args.file], capture_output=True, text=True,
                                  check=True).stdout
    except OSError as e:  # no callgrind_annotate here: the system's, not the file's
        print(f"karma-instruction-ratios: error: cannot run callgrind_annotate ({e.strerror})",
              file=sys.stderr)
        return 3
    except subprocess.CalledProcessError as e:
        print(f"karma-instruction-ratios: error: {args.file}: callgrind_annotate cannot read it "
              f"({(e.stderr or '').strip()[:200]})", file=sys.stderr)
        return 2
    counts = read_counts(text.splitlines())
    rows = []
    for key in sorted(counts, key=lambda k: (list(FAMILIES.values()).index(k[0]), k[1] != "serial",
                                             k[2] != "right", ("static", "mixed",
                                                               "dynamic").index(k[3]))):
        impls = counts[key]
        if "raw" not in impls or "karma" not in impls:
            continue
        raw = impls["raw"]
        byref = impls.get("karma_byref")
        rows.append(["/".join(key), f"{impls['karma']:,}", f"{raw:,}",
                     f"{impls['karma'] / raw:.3f}",
                     "-" if byref is None else f"{byref / raw:.3f}"])
    if not rows:
        print(f"karma-instruction-ratios: {args.file}: no karma and raw kernel pairs found",
              file=sys.stderr)
        return 2
    header = ["kernel", "karma instructions", "raw instructions", "karma / raw",
              "karma_byref / raw"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(header, *rows)]
        for r in [header] + rows:
            print("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())
    return 0
