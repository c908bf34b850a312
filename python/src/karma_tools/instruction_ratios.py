"""Instruction counts of karma-microbench's kernels, karma / raw, from callgrind.

Timings on a shared machine carry noise; the number of instructions a kernel
executes does not. Run karma-microbench under callgrind with one shape per
family (dynamic kernels are one function for every shape) and one iteration:

  valgrind --tool=callgrind --callgrind-out-file=mb.cg karma-microbench \\
      --benchmark_filter='/serial/.*/(20x20x20|80x80x80|1000000x3x3|20000x1600)/' \\
      --benchmark_min_time=0 --benchmark_out=/dev/null
  karma-instruction-ratios mb.cg

Each serial kernel is a function of its own (KARMA_MICROBENCH_KERNEL in
kernels.hpp), so its inclusive count is its cost; a parallel kernel's is the
sum over its OpenMP outlined functions. Exit status 0, or 2 when nothing
could be read or paired.
"""

import argparse
import re
import subprocess
import sys

from . import __version__, unreadable

KERNEL = re.compile(
    r"karma::microbench::(?P<family>sum3d|stencil3d|tiny_matrix_sum|subspan3d|matvec)"
    r"_(?P<impl>karma_byref|karma|raw)(?P<parallel>_parallel)?<(?P<args>.*)$")
COUNT = re.compile(r"^\s*(?P<count>[\d,]+)\s+\([^)]*\)\s+(?P<name>.*)$")
FAMILIES = {"sum3d": "Sum3D", "stencil3d": "Stencil3D", "tiny_matrix_sum": "TinyMatrixSum",
            "subspan3d": "Subspan3D", "matvec": "MatVec"}


def template_args(text):
    """The top-level template argument list at the start of text (up to its '>')."""
    depth, args, current = 1, [], ""
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                args.append(current.strip())
                return args
        if c == "," and depth == 1:
            args.append(current.strip())
            current = ""
        else:
            current += c
    return None


def describe(impl, args):
    """(layout, extents, shape) of a kernel instantiation, or None."""
    if impl.startswith("karma"):
        view = re.match(r"(?:Kokkos::View|karma::Array)<(?P<type>[^,]+), "
                        r"Kokkos::Layout(?P<layout>Right|Left)", args[0])
        if not view:
            return None
        data = view.group("type").replace(" ", "")
        dims = re.findall(r"\[(\d+)\]", data)
        stars = data.count("*")
        if stars == 0:
            extents, shape = "static", "x".join(dims)
        elif dims:
            extents, shape = "mixed", "x".join(["?"] + dims)
        else:
            extents, shape = "dynamic", "?"
        return view.group("layout").lower(), extents, shape
    layout = re.match(r"Kokkos::Layout(Right|Left)$", args[0])
    if not layout:
        return None
    extents_args = args[2:]
    if not extents_args:  # MatVec: run-time extents only
        return layout.group(1).lower(), "dynamic", "?"
    fixed = [re.fullmatch(r"karma::microbench::Fixed<(\d+)l?>", a) for a in extents_args]
    if all(fixed):
        extents, shape = "static", "x".join(f.group(1) for f in fixed)
    elif not fixed[0] and all(fixed[1:]):
        extents, shape = "mixed", "x".join(["?"] + [f.group(1) for f in fixed[1:]])
    else:
        extents, shape = "dynamic", "?"
    return layout.group(1).lower(), extents, shape


def read_counts(lines):
    """{(family, where, layout, extents, shape): {impl: instructions}}"""
    counts = {}
    for line in lines:
        m = COUNT.match(line)
        if not m:
            continue
        name = m.group("name")
        k = KERNEL.search(name)
        if not k:
            continue
        parallel = bool(k.group("parallel"))
        # Serial: the kernel function itself. Parallel: Kokkos' outlined
        # OpenMP functions of the kernel's lambda.
        if parallel != ("_omp_fn" in name):
            continue
        if not parallel and ("{lambda" in name or "::execute" in name):
            continue
        args = template_args(k.group("args"))
        if not args:
            continue
        described = describe(k.group("impl"), args)
        if not described:
            continue
        key = (FAMILIES[k.group("family")], "parallel" if parallel else "serial") + described
        impls = counts.setdefault(key, {})
        impls[k.group("impl")] = impls.get(k.group("impl"), 0) + int(
            m.group("count").replace(",", ""))
    return counts


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


if __name__ == "__main__":
    sys.exit(main())
