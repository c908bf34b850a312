"""The weights of a reference's apps: campaigns/procurement/weights.txt, grammar docs/score.md."""

import fnmatch
import math
import os

from karma_tools.core import ToolError, read_input_file

DEFAULT = os.path.join("campaigns", "procurement", "weights.txt")
# The file karma-score read until 1.1.0, merged into DEFAULT.
RETIRED = "score-weights.txt"


def parse(path):
    """[(parts, weight, line)] of a weights file; refused naming FILE:LINE."""
    if os.path.basename(path) == RETIRED and not os.path.lexists(path):
        raise ToolError(f"{path}: no such file; {RETIRED} was merged into {DEFAULT} (one "
                        "grammar for karma-score and karma-compare): give --weights that file", 2)
    try:
        lines = read_input_file(path, "weights file").decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}: the weights file is not UTF-8 text ({e.reason} at byte "
                        f"{e.start})", 2) from None
    rules = []
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != 2:
            raise ToolError(f"{path}:{number}: expected 'PATTERN WEIGHT' (app, app/kernel "
                            f"or app/case/kernel, then a number), got '{text}'", 2)
        parts = tuple(fields[0].split("/"))
        if not 1 <= len(parts) <= 3 or any(not p for p in parts):
            raise ToolError(f"{path}:{number}: '{fields[0]}' is not app, app/kernel or "
                            "app/case/kernel", 2)
        try:
            weight = float(fields[1])
        except ValueError:
            weight = -1
        if not (weight >= 0 and math.isfinite(weight)):
            raise ToolError(f"{path}:{number}: weight '{fields[1]}' is not a number >= 0", 2)
        rules.append((parts, weight, number))
    if not rules:
        raise ToolError(f"{path}: no weights (lines 'PATTERN WEIGHT')", 2)
    return rules


def of_apps(path, apps, kind):
    """{app: weight} of a reference of `kind` and its apps, summing to 1."""
    rules = parse(path)
    weights = {}
    for app in apps:
        taken = [(parts, w) for parts, w, _ in rules if fnmatch.fnmatchcase(app, parts[0])
                 and (len(parts) < 3 or fnmatch.fnmatchcase(f"{kind}:", parts[1]))]
        most = max((len(p) for p, _ in taken), default=0)
        taken = [w for p, w in taken if len(p) == most]
        weights[app] = (taken[-1] if most == 1 else sum(taken)) if taken else 0.0
    for parts, _, number in rules:
        if not any(fnmatch.fnmatchcase(a, parts[0]) for a in apps):
            raise ToolError(f"{path}:{number}: pattern '{parts[0]}' matches no app of the "
                            f"reference ({', '.join(apps)})", 2)
    total = sum(weights.values())
    if total <= 0:
        raise ToolError(f"{path}: the weights of the reference's apps ({kind}) sum to 0", 2)
    return {app: weights[app] / total for app in apps}
