"""Which runs are the same case, defined once for every tool.

A case is a mini-app's deck as the run resolved it, less the keys that
only select (lists of names: which kernels, which implementations), and,
for a reference program's run (BabelStream beside karma-stream), that
program: never the same case as karma's own. A tool adds the dimensions it
tells cases apart by (karma-compare: ranks, nodes and the kind of device;
karma-report: the device, ranks, nodes and threads), and two runs are the
same case when their keys (case_key) are equal. The rounds of one figure
are runs of the same deck, tier, ranks and nodes (rounds_key).

The rounds of a ratio span an interval; one that holds 1 (holds_one) is a
difference the rounds cannot tell from none."""

import json


def is_selection(value):
    """Whether a deck value only selects (a non-empty list of names)."""
    return isinstance(value, list) and value and all(isinstance(x, str) for x in value)


def case_values(run, defaults=None, retired=None):
    """{deck key: value} of run's case: its deck values that do not select;
    the schema's `defaults` ({key: value}) of keys the run does not give
    (an older run before the key existed); less `retired` keys ({key:
    value}) where the run holds the value they always had; "reference" for
    a reference program's run."""
    values = {k: v for k, v in run.deck_values().items() if not is_selection(v)}
    for k, v in (defaults or {}).items():
        if k not in values and not is_selection(v):
            values[k] = v
    for k, v in (retired or {}).items():
        if k in values and values[k] == v:
            del values[k]
    if run.reference:
        values["reference"] = run.reference
    return values


def values_key(values):
    """A JSON value as a key: equal values, equal keys, whatever their order."""
    return json.dumps(values, sort_keys=True)


def case_key(app, values, *more):
    """The key of a case: the app, its values (case_values and what the
    tool adds) and any `more` that tells cases apart."""
    return (app, values_key(values), *more)


def rounds_key(run, tier):
    """What makes runs rounds of one another (the figures' rows): the same
    deck (less its run section), tier, ranks and nodes."""
    return json.dumps([run.deck_values(), tier, run.ranks, run.nodes], sort_keys=True,
                      default=str)


def holds_one(span):
    """Whether an interval of ratios (low, high) holds 1: no difference the
    rounds can tell."""
    return span[0] <= 1 <= span[1]
