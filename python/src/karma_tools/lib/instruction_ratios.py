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

import re


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
