"""A node's runs (docs/score.md#per-node): one GPU's for the per-GPU figure, the node classes'
for the per-node figure, each other GPU's alone. A run's class is its own record's (the
mini-apps decide it); nothing here is an app's. score/figure.py scores them."""

from collections import Counter

from karma_tools.results import rules

NAME = "per-node figure"
# The rows' classes in the per-node figure: all the GPUs at once on the large decks, each
# rank the size of one (the weak class on one node; one GPU's large deck as shipped), and
# all of them on one problem (the strong class).
THROUGHPUT, STRONG = "throughput", rules.STRONG_CLASS
NODE_CLASSES = (THROUGHPUT, STRONG)
AS_NODE_CLASS = {rules.WEAK_CLASS: THROUGHPUT, "large": THROUGHPUT, STRONG: STRONG}


def _uuids(run):
    """Each rank's GPU UUID (None where none is recorded); [None] without ranks."""
    return [(rank.get("device") or {}).get("uuid") for rank in run.doc.get("ranks") or [{}]]


def _class(run):
    return rules.reportable(run.doc).get("class")


def _large_as_shipped(run):
    """A one-rank run of its large deck unchanged but for the run section (no axis set on it)."""
    overrides = (run.doc.get("deck") or {}).get("overrides") or []
    return run.ranks == 1 and _class(run) == "large" \
        and all(o.startswith("run.") for o in overrides)


def split(runs):
    """(the per-GPU GPU's uuid, the per-GPU runs, the node classes' runs, {uuid: one-rank runs}
    of the node's other GPUs): the per-GPU figure is one GPU's, the one most one-rank runs
    ran on."""
    ids = Counter(u for r in runs if r.ranks == 1 for u in _uuids(r) if u)
    main = ids.most_common(1)[0][0] if ids else None
    per_gpu, node_runs, others = [], [], {}
    for run in runs:
        cls, first = _class(run), _uuids(run)[0]
        if cls == STRONG or (cls == rules.WEAK_CLASS and run.nodes == 1):
            node_runs.append(run)
        elif run.ranks == 1 and main and first not in (None, main):
            others.setdefault(first, []).append(run)
        else:
            per_gpu.append(run)
    return main, per_gpu, node_runs, others


def on_all_gpus(per_gpu, node_runs):
    """(G, the runs of the node classes on all G GPUs); a node of one GPU has its throughput
    runs in its large runs as shipped; none without node runs."""
    gpus = max((r.ranks for r in node_runs), default=1)
    runs = [r for r in node_runs if r.ranks == gpus]
    if runs and gpus == 1:
        runs += [r for r in per_gpu if _large_as_shipped(r)]
    return gpus, runs


def each_alone(main, per_gpu, others):
    """{uuid: runs} of each GPU of the node on the large decks as shipped that the other GPUs
    ran alone (the per-GPU GPU's first, from its per-GPU runs); {} for one GPU."""
    apps = {r.app for runs in others.values() for r in runs}
    mine = [r for r in per_gpu if r.app in apps and _large_as_shipped(r)]
    return {main: mine, **others} if others else {}
