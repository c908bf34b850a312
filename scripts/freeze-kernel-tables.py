#!/usr/bin/env python3
"""scripts/freeze-kernel-tables.py - the kernel tables of a release made
before the mini-apps declared them (docs/results-format.md, *Kernel tables*).

usage: freeze-kernel-tables.py RELEASE [--root DIR] [--output FILE]

Writes python/src/karma_tools/data/apps/RELEASE.json from data/apps/head.json
(what karma-docs writes from today's mini-apps) and the committed results
under results/: each app's table is today's declarations restricted to the
kernels, and their implementations, that results written by RELEASE or
earlier contain, one concrete entry each (no fields); its deck schema is the
one RELEASE's own results carry (deck.schema), where results/ holds one.
Nothing old is built. Run once, when the table first ships; the file is then
frozen (tools.results_tree reads every committed result with it)."""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "src"))

from karma_tools.results import archive, kerneltable  # noqa: E402


def found_kernels(results, release):
    """({app: {name: {implementation or None}}}, {app: deck schema}) of the
    results written by `release` or earlier (deck schemas: `release`'s own)."""
    limit = kerneltable._version(release)
    kernels, decks = {}, {}
    for path in archive.walk_files(results, ".json"):
        doc = json.loads(archive.read_bytes(path))
        if not isinstance(doc, dict) or "schema_version" not in doc or "kernel_table" in doc:
            continue
        version = (doc.get("suite") or {}).get("version")
        if kerneltable._version(version) > limit:
            continue
        for k in doc["kernels"]:
            kernels.setdefault(doc["app"], {}).setdefault(k["name"], set()).add(
                k.get("implementation"))
        if version == release and "reference" not in doc:
            decks.setdefault(doc["app"], doc["deck"]["schema"])
    return kernels, decks


def frozen(app, head, found, deck):
    """An app's frozen --help=json: one entry per kernel name found, its
    variant's fields (hexgrad's {layout}-{extents}) kept where the name
    alone does not fix it."""
    kernels = head.get("x-karma-kernels") or {}
    table = kerneltable.Table(kernels)
    entries, fields = [], {}
    for name, implementations in sorted(found.items()):
        declared = table.declared.get(name)
        if not declared:
            sys.exit(f"{app}: kernel {name!r} of the committed results is not declared today")
        k = declared[0]
        listed = {i for d in declared for i in d["implementation"]}
        known = sorted(i for i in implementations if i) or k["implementation"]
        if set(known) - listed:
            sys.exit(f"{app}: {name!r}: implementations {known} are not all declared today")
        variant = k["variant"] if len({d["variant"] for d in declared}) == 1 else \
            k["entry"]["variant"]
        for field in kerneltable.FIELD.findall(variant):
            fields[field] = kernels["fields"][field]
        entries.append(dict(k["entry"], name=name, variant=variant, work=k["work"],
                            implementation=known))
    out = dict(deck or {"x-karma-deck": "no committed result of this release holds its schema"})
    out["x-karma-kernels"] = {"fields": fields, "kernels": entries}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("release")
    p.add_argument("--root", default=ROOT)
    p.add_argument("--output", help="write here instead (to check the frozen file is made again)")
    args = p.parse_args()
    head = kerneltable.release(kerneltable.HEAD)
    kernels, decks = found_kernels(os.path.join(args.root, "results"), args.release)
    apps = {app: frozen(app, head[app], kernels[app], decks.get(app))
            for app in sorted(kernels)}
    path = args.output or os.path.join(kerneltable.DATA, f"{args.release}.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"apps": apps}, indent=1, sort_keys=True) + "\n")
    print(f"freeze-kernel-tables: wrote {os.path.relpath(path, args.root)}: "
          + ", ".join(f"{a} {len(t['x-karma-kernels']['kernels'])}" for a, t in apps.items()))


if __name__ == "__main__":
    main()
