"""Which runs are the same case, for every tool: a mini-app's resolved deck less the keys that
only select (lists of names), a reference program's name, and what the tool tells cases apart
by (karma-compare: ranks, nodes, device kind; karma-report: device, ranks, nodes, threads)."""

import json


def is_selection(value):
    """Whether a deck value only selects (a non-empty list of names)."""
    return isinstance(value, list) and value and all(isinstance(x, str) for x in value)


def case_values(run, defaults=None, retired=None):
    """{deck key: value} of run's case: values that do not select, `defaults` for keys it
    lacks, less `retired` keys holding their old value, and "reference"."""
    values = {k: v for k, v in run.deck_values().items() if not is_selection(v)}
    values.update((k, v) for k, v in (defaults or {}).items()
                  if k not in values and not is_selection(v))
    retired = retired or {}
    values = {k: v for k, v in values.items() if k not in retired or retired[k] != v}
    if run.reference:
        values["reference"] = run.reference
    return values


def values_key(values):
    """A JSON value as a key: equal values, equal keys, whatever their order."""
    return json.dumps(values, sort_keys=True)


def case_key(app, values, *more):
    """The key of a case: the app, its values and any `more` that tells cases apart."""
    return (app, values_key(values), *more)


def rounds_key(run, tier):
    """What makes runs rounds of one another: deck (no run section), tier, ranks, nodes."""
    return json.dumps([run.deck_values(), tier, run.ranks, run.nodes], sort_keys=True, default=str)


def holds_one(span):
    """Whether an interval of ratios (low, high) holds 1: no difference the rounds tell."""
    return span[0] <= 1 <= span[1]
