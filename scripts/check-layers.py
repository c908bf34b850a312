#!/usr/bin/env python3
"""scripts/check-layers.py - the core's layers include only downwards (the
test core.layers).

usage: check-layers.py [--root DIR]

The core (common/) is in layers, each a folder common/LAYER with
include/karma/*.hpp and src/*.cpp (and src/*.hpp, its own); their order,
lowest first, is the order in which common/CMakeLists.txt adds them
(add_subdirectory). A module is a file's name without its extension:
karma/deck.hpp and src/deck.cpp are the module deck. It finds:

  - an include of a higher layer's header ("karma/NAME.hpp" where NAME
    lives in a layer above the including file's);
  - modules of one layer that include each other, directly (a two-way
    include) or through others (a cycle);
  - a folder of common/ with include/karma/ that common/CMakeLists.txt
    does not add, and a header in two layers.

Only `#include "..."` lines count; <...> are other libraries'. Prints one
line per finding; exit status 1 when there was one, 2 for bad usage."""

import os
import re
import sys

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_SUBDIR = re.compile(r"^\s*add_subdirectory\(\s*([A-Za-z0-9_]+)\s*\)", re.M)


def layers_of(root):
    """The layers, lowest first, and the findings about them."""
    common = os.path.join(root, "common")
    with open(os.path.join(common, "CMakeLists.txt"), encoding="utf-8") as f:
        added = _SUBDIR.findall(f.read())
    present = sorted(d for d in os.listdir(common)
                     if os.path.isdir(os.path.join(common, d, "include", "karma")))
    layers = [d for d in added if d in present]
    problems = [f"common/{d}: has include/karma/ but common/CMakeLists.txt does not add it"
                for d in present if d not in added]
    return layers, problems


def files_of(root, layer):
    """{path relative to root: module} of a layer's headers and sources."""
    out = {}
    for sub, exts in (("include/karma", (".hpp",)), ("src", (".cpp", ".hpp"))):
        folder = os.path.join(root, "common", layer, sub)
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.endswith(exts):
                    out[f"common/{layer}/{sub}/{name}"] = os.path.splitext(name)[0]
    return out


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check(root):
    """The findings, and how many files were read in how many layers."""
    layers, problems = layers_of(root)
    rank = {layer: i for i, layer in enumerate(layers)}
    files = {layer: files_of(root, layer) for layer in layers}
    home = {}  # public header name -> its layer
    for layer in layers:
        for path, module in files[layer].items():
            if "/include/karma/" not in path:
                continue
            if module in home:
                problems.append(f"{path}: karma/{module}.hpp is in layers {home[module]} "
                                f"and {layer}")
            home.setdefault(module, layer)
    count = 0
    for layer in layers:
        graph, why = {}, {}
        for path, module in files[layer].items():
            count += 1
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for target in _INCLUDE.findall(text):
                if target.startswith("karma/") and target.endswith(".hpp"):
                    name = target[len("karma/"):-len(".hpp")]
                    other = home.get(name)
                elif "/" not in target and target.endswith(".hpp"):
                    name, other = target[:-len(".hpp")], layer  # the layer's own src/
                else:
                    continue
                if other is None:
                    continue  # not the core's (e.g. a generated header)
                if rank[other] > rank[layer]:
                    below = ", ".join(layers[:rank[layer]]) or "no other layer"
                    problems.append(f"{path}: includes {target} of the higher layer {other} "
                                    f"({layer} may include only its own and {below})")
                elif other == layer and name != module:
                    graph.setdefault(module, set()).add(name)
                    why.setdefault((module, name), path)
        for component in cycles(graph):
            if len(component) == 2:
                a, b = component
                problems.append(f"common/{layer}: {a} and {b} include each other "
                                f"({why[(a, b)]} includes {b}, {why[(b, a)]} includes {a})")
            else:
                problems.append(f"common/{layer}: the modules {', '.join(component)} "
                                "include each other in a cycle")
    return problems, count, len(layers)


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if argv[:1] == ["--root"] and len(argv) == 2:
        root = argv[1]
    elif argv:
        print("usage: check-layers.py [--root DIR]", file=sys.stderr)
        return 2
    problems, count, layers = check(root)
    for p in problems:
        print(f"check-layers: {p}")
    if problems:
        print(f"check-layers: FAILED: {len(problems)} finding(s)")
        return 1
    print(f"check-layers: {count} files in {layers} layers clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
