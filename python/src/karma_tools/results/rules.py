"""The run rules' vocabulary (docs/run-rules.md): problem classes, tiers, and which figures
stand for the same work. The mini-apps decide `reportable` and each key's `x-rules`; this
module reads them back and decides nothing the C++ has not."""

import hashlib
import os
import pathlib

from karma_tools.results import kerneltable
from karma_tools.results.results import field

# One problem over any number of ranks, a node's GPUs together (some apps have its deck).
STRONG_CLASS = "strong"
# Fixed sizes, the same work on every machine: inputs/<app>/<class>.yaml.
CLASSES = ("small", "medium", "large", STRONG_CLASS)
# The large deck on more than one rank: per rank the size of `large`.
WEAK_CLASS = "weak"
# The classes whose runs take every GPU of a node, a rank each (docs/run-rules.md#the-node).
NODE_RUN_CLASSES = (WEAK_CLASS, STRONG_CLASS)
# The overall score's; `small` (on a GPU, launch latency that repeats poorly) has its own line.
SCORED_CLASSES = ("medium", "large", WEAK_CLASS)
TIERS = ("baseline", "optimized")


def schema_keys(schema, prefix=""):
    """(dotted path, key schema) for every key of a deck's JSON schema."""
    for name, node in (schema or {}).get("properties", {}).items():
        path = f"{prefix}{name}"
        if node.get("type") == "object" and "properties" in node:
            yield from schema_keys(node, path + ".")
        else:
            yield path, node


def case_of(result):
    """A result's case: the keys both tiers may set (layout, precision...), 'key=value,...'."""
    deck = result.get("deck") or {}
    return ",".join(f"{path.split('.', 1)[-1]}={field(deck.get('resolved'), path)}"
                    for path, node in sorted(schema_keys(deck.get("schema")))
                    if node.get("x-rules") == "axis") or "-"


def reportable(result):
    """The result's {rules, class, tier, reportable, reasons} (none before the run rules)."""
    return result.get("reportable") or {
        "rules": None, "class": None, "tier": None, "reportable": False,
        "reasons": ["written before the run rules (no reportable record)"]}


def counts_in(tier, result, kernel):
    """Whether a kernel stands for its work in `tier` (baseline: a reportable baseline run's
    Kokkos kernels; optimized: every kernel of a reportable run)."""
    record = reportable(result)
    if not record["reportable"]:
        return False
    if tier == "baseline":
        return record["tier"] == "baseline" and kernel.get("implementation") == "kokkos"
    return record["tier"] in TIERS


def row_key(result, kernel):
    """(app, class, case, work): what a figure is compared by."""
    return (result["app"], reportable(result)["class"], case_of(result),
            kerneltable.of(result).work_of(kernel["name"]))


def class_decks(inputs):
    """{sha256: (app, class)} of the class decks under an inputs/ directory."""
    decks = {(app, cls): pathlib.Path(inputs, app, f"{cls}.yaml")
             for app in sorted(os.listdir(inputs)) for cls in CLASSES}
    return {hashlib.sha256(path.read_bytes()).hexdigest(): case
            for case, path in decks.items() if path.is_file()}
