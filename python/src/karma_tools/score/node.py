"""The per-node figure (docs/score.md#per-node): a node of G GPUs against the reference's
node over the node classes' rows, and the node's own GPUs, each alone, against the reference's
units. A run's class is its own record's (the mini-apps decide it); nothing here is an app's."""

from collections import Counter

from karma_tools.results import rules
from karma_tools.score import figure

NAME = "per-node figure"
# The rows' classes in the per-node figure: all the GPUs at once on the large decks, each
# rank the size of one (the weak class on one node; one GPU's large deck as shipped), and
# all of them on one problem (the strong class).
THROUGHPUT, STRONG = "throughput", "strong"
NODE_CLASSES = (THROUGHPUT, STRONG)
_AS = {rules.WEAK_CLASS: THROUGHPUT, "large": THROUGHPUT, STRONG: STRONG}


def _uuids(run):
    """Each rank's GPU UUID (None where none is recorded); [None] without ranks."""
    return [(rank.get("device") or {}).get("uuid") for rank in run.doc.get("ranks") or [{}]]


def _class(run):
    return rules.reportable(run.doc).get("class")


def _as_shipped(run):
    """A run of its deck unchanged but for the run section (no axis set on it)."""
    return not [o for o in (run.doc.get("deck") or {}).get("overrides") or []
                if not o.startswith("run.")]


def split(runs):
    """(the per-GPU GPU's uuid, the per-GPU runs, the node classes' runs, {uuid: one-rank runs}
    of the node's other GPUs): the per-GPU figure is one GPU's, the one most one-rank runs
    ran on."""
    ids = Counter(u for r in runs if r.ranks == 1 for u in _uuids(r) if u)
    main = ids.most_common(1)[0][0] if ids else None
    per_gpu, node_runs, others = [], [], {}
    for run in runs:
        if _class(run) == STRONG or (_class(run) == rules.WEAK_CLASS and run.nodes == 1):
            node_runs.append(run)
        elif run.ranks == 1 and main and _uuids(run)[0] not in (None, main):
            others.setdefault(_uuids(run)[0], []).append(run)
        else:
            per_gpu.append(run)
    return main, per_gpu, node_runs, others


def node_figures(per_gpu, node_runs):
    """(G, {row key: row}) of the node classes on all G GPUs; a node of one GPU has its
    throughput rows in its large runs as shipped."""
    gpus = max((r.ranks for r in node_runs), default=1)
    runs = [r for r in node_runs if r.ranks == gpus]
    if not runs:
        return gpus, {}
    if gpus == 1:
        runs += [r for r in per_gpu if r.ranks == 1 and _class(r) == "large" and _as_shipped(r)]
    table = figure.tier_figures(runs, figure.TIER)
    return gpus, {(k[0], _AS[k[1]], *k[2:]): row for k, row in table.items() if k[1] in _AS}


def score(per_gpu, node_runs, reference, weights, board):
    """The set's per-node figure against the reference's node rows (none: why not)."""
    gpus, figs = node_figures(per_gpu, node_runs)
    theirs = reference.get("node_rows") or []
    if not theirs:
        return {"name": NAME, "gpus": gpus, "scored": False, "why": "the reference has no "
                "node rows (its sets ran no node classes)"}
    t = figure.score_tier(figs, {"rows": theirs, "units": reference.get("units")}, weights,
                          board, NODE_CLASSES)
    return {"name": NAME, "gpus": gpus, "scored": True,
            "reference_gpus": reference.get("node_gpus", 1), "complete": t["complete"],
            "figure": t["score"], "rows": len(t["rows"]), "apps": t["apps"],
            "missing": [figure.row_name(r) for r in t["incomplete"]],
            **{k: t[k] for k in ("interval", "verdict", "per_watt", "per_watt_interval", "band",
                                 "per_watt_band", "per_watt_verdict")}}


def gpus_alone(main, per_gpu, others, reference, weights, units):
    """[{uuid, board, score, interval, band, verdict}] of each GPU of the node on its own runs
    of the large decks as shipped (the per-GPU GPU's among its runs), against the reference."""
    if not others:
        return []
    apps = {r.app for runs in others.values() for r in runs}
    mine = [r for r in per_gpu if r.app in apps and r.ranks == 1 and _class(r) == "large"
            and _as_shipped(r)]
    out = []
    for uuid, runs in {main: mine, **others}.items():
        figs = figure.tier_figures(runs, figure.TIER)
        count = len(reference.get("units") or [])
        rows = [figure.row_ratio(ref, figs[key], count) for ref in reference["rows"]
                if (key := figure.ref_key(ref)) in figs]
        overall = figure.app_scores(rows, weights)[1]
        out.append({"uuid": uuid, "board": (units.get(uuid) or {}).get("board_part_number"),
                    "per_gpu": uuid == main, "rows": len(rows),
                    **{k: overall[k] for k in ("score", "interval", "band", "verdict")}})
    return out
