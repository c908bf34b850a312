"""One result set's two implementations as a comparison's sides (--implementations OURS:THEIRS):
THEIRS's kernels the baseline, each under its variant, which names the work both do."""

import copy

from karma_tools.compare.compare import compare
from karma_tools.core import ToolError
from karma_tools.results.resultset import ResultSet


def parse_pair(text, option):
    """(ours, theirs) of OPTION's OURS:THEIRS."""
    ours, sep, theirs = text.partition(":")
    if not sep or not ours or not theirs or ":" in theirs or ours == theirs:
        raise ToolError(f"{option} {text}: expected OURS:THEIRS, two different "
                        "implementations (e.g. karma:raw)", 2)
    return ours, theirs


def _side(run, implementation):
    """The run with only its kernels of `implementation`, each under its variant, or None."""
    kernels = {}
    for name, k in run.kernels.items():
        if k["implementation"] != implementation:
            continue
        if k["variant"] in kernels:
            raise ToolError(f"{run.path}: two kernels of implementation {implementation} have "
                            f"the variant '{k['variant']}' ({name} and another): they cannot "
                            "stand for one row", 2)
        kernels[k["variant"]] = k
    side = copy.copy(run)
    side.kernels = kernels
    return side if kernels else None


def compare_within(result_set, ours, theirs, **options):
    """compare() of sets LABEL:IMPLEMENTATION of one set's runs, THEIRS's the baseline."""
    sides = []
    for implementation in (theirs, ours):
        side = ResultSet(f"{result_set.label}:{implementation}", result_set.path)
        runs = (_side(r, implementation) for r in result_set.runs if not r.reference)
        side.runs = [r for r in runs if r is not None]
        if not side.runs:
            found = sorted({k["implementation"] for r in result_set.runs
                            for k in r.kernels.values()})
            raise ToolError(f"{result_set.path}: no kernel of implementation {implementation} "
                            f"(its implementations: {', '.join(found) or 'none'})", 2)
        sides.append(side)
    sides[0].skipped, sides[0].invalid = result_set.skipped, result_set.invalid  # once
    within = {"set": result_set.label, "path": result_set.path, "ours": ours, "theirs": theirs}
    return compare(sides, sides[0].label, within=within, **options)
