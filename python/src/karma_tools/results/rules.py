"""The run rules' vocabulary (docs/run-rules.md): problem classes, tiers, and
which figures of a result stand for the same work (the work its kernel
table gives each kernel: kernels of one work are alternatives, and a tier's
figure for the work is the best of those it allows).

The mini-apps decide whether a run is reportable and write it into their
results (`reportable`); the deck schema each result carries says of every
key what the rules allow (`x-rules`: fixed, axis, tuning or free). This
module reads those two things back; it decides nothing the C++ has not.
"""

import hashlib
import os
import pathlib

from karma_tools.results import kerneltable
from karma_tools.results.results import field

# Fixed sizes, the same work on every machine: inputs/<app>/<class>.yaml.
CLASSES = ("small", "medium", "large")
# The large deck on more than one rank: per rank the size of `large`.
WEAK_CLASS = "weak"
# The classes of the overall score. `small` is sized for tests: on a GPU its
# kernels last a few microseconds, so its figures are launch latency, which
# repeats poorly (docs/run-rules.md); it is scored on a line of its own.
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


def axes(result):
    """The result's values of the keys that both tiers may set (layout,
    precision, transpose): {path: value}."""
    deck = result.get("deck") or {}
    return {path: field(deck.get("resolved"), path)
            for path, node in schema_keys(deck.get("schema"))
            if node.get("x-rules") == "axis"}


def case_of(result):
    """The case a result's rows belong to: its axes, as 'key=value,...'."""
    return ",".join(f"{path.split('.', 1)[-1]}={value}"
                    for path, value in sorted(axes(result).items())) or "-"


def reportable(result):
    """The result's own record: {rules, class, tier, reportable, reasons}
    (absent in results written before the run rules: not reportable)."""
    return result.get("reportable") or {
        "rules": None, "class": None, "tier": None, "reportable": False,
        "reasons": ["written before the run rules (no reportable record)"]}


def counts_in(tier, result, kernel):
    """Whether a kernel of a reportable result stands for its work in
    `tier`: baseline counts the Kokkos kernels of baseline runs; optimized
    every kernel of any reportable run."""
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
