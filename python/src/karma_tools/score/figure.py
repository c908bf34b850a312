"""The procurement figure, karma's one figure of record of a machine against a reference
machine (docs/score.md: results -> rows -> figures -> ratios -> aggregate)."""

import functools
import math
import os
import statistics
import sys
from xml.etree import ElementTree

from karma_tools import schemas
from karma_tools.core import APPS, CHECKOUT, ToolError
from karma_tools.results import archive, codeversion, resultset, rules
from karma_tools.results.archive import read_json
from karma_tools.results.results import field, gpu_units, is_number, unit_events
from karma_tools.results.cases import holds_one, rounds_key
from karma_tools.score import node, weights

REFERENCE_FORMAT = 2
# The reference machine's figures that ship with the suite (docs/run-rules.md).
DEFAULT_REFERENCE = os.path.join("campaigns", "procurement", "reference.json")
KINDS = ("gpu", "host")
NAME = "procurement figure"
# The figure of record is this tier's overall.
TIER = "baseline"
# What an app's and an overall score give: each a (weighted) geometric mean.
MEANS = ("score", "interval", "per_watt", "per_watt_interval", "band", "per_watt_band",
         "board_band")


def load_runs(source):
    """(a set's runs, [{file, reasons}] of its jobs without results and its unread files)."""
    result_set = source if isinstance(source, resultset.ResultSet) else resultset.open(source)
    return result_set.runs, [{"file": f"{result_set.manifest_path}: job {name}",
                              "reasons": [why]} for name, why in result_set.missing()] + [
        {"file": f, "reasons": [why]} for f, why in result_set.invalid]


def left_out_reasons(run, kind):
    """Why a run cannot be scored ([] when it can)."""
    record = rules.reportable(run.doc)
    if not record.get("reportable"):
        reasons = ([f"output of a reference program ({run.reference}), not a karma run"]
                   if run.reference else []) + (record.get("reasons") or [])  # schema: strings
        return reasons or ["not reportable"]
    if not run.passed:
        return ["did not pass verification"]
    if kind is not None and run.device_kind != kind:
        return [f"ran on a {run.device_kind or 'unknown'} device; the reference is {kind}"]
    return []


def run_figures(run, tier):
    """{row key: figures}: one run's FOMs (and per watt) of each work, of its `tier` kernels."""
    out = {}
    for name, k in run.kernels.items():
        kernel = {"name": name, "implementation": k["implementation"]}
        if not rules.counts_in(tier, run.doc, kernel) or not is_number(k["value"]) \
                or k["value"] <= 0:
            continue
        key = rules.row_key(run.doc, kernel)
        fig = out.setdefault(key, {"units": k["units"], "higher_is_better": k["higher_is_better"],
                                   "fom": [], "per_watt": [], "per_watt_units": None,
                                   "code_versions": set(), "code_schemes": set(), "codes": {}})
        if (k["units"], k["higher_is_better"]) != (fig["units"], fig["higher_is_better"]):
            continue  # not the same measure of the work: not an alternative
        code, made_of = k["entry"].get("code_version"), k["entry"].get("code")
        if isinstance(code, str):
            scheme = codeversion.scheme_of(made_of)
            fig["code_versions"].add(code)
            fig["code_schemes"].add(scheme)
            # What this scheme's versions are made of, to compute them again from the sources.
            if scheme == codeversion.SCHEME and {"symbols", "launch"} <= made_of.keys():
                fig["codes"][code] = {"symbols": made_of["symbols"], "launch": made_of["launch"]}
        fig["fom"].append(k["value"])
        energy = k["energy"]
        if energy and energy["fom_per_watt"] is not None:
            fig["per_watt"].append(energy["fom_per_watt"])
            fig["per_watt_units"] = energy["fom_per_watt_units"]
    return out


def _best_median(decks, field, hib):
    """{value, runs, rounds} of the decks' best median of their runs' best `field`, or None."""
    best = max if hib else min
    values = (sorted(best(f[field]) for f in figs if f[field]) for figs in decks.values())
    medians = [{"value": statistics.median(v), "runs": len(v), "rounds": v} for v in values if v]
    return best(medians, key=lambda m: m["value"], default=None)


def tier_figures(runs, tier):
    """{row key: row} of a tier in the reference's form: the best deck's median of its runs."""
    groups = {}
    for run in runs:
        deck = rounds_key(run, rules.reportable(run.doc).get("tier"))
        for key, fig in run_figures(run, tier).items():
            groups.setdefault(key, {}).setdefault(deck, []).append(fig)
    table = {}
    for key, decks in groups.items():
        first = next(iter(decks.values()))[0]
        units, hib = first["units"], first["higher_is_better"]
        decks = {d: [f for f in figs if (f["units"], f["higher_is_better"]) == (units, hib)]
                 for d, figs in decks.items()}
        figs = [f for fs in decks.values() for f in fs]
        fom, per_watt = _best_median(decks, "fom", hib), _best_median(decks, "per_watt", hib)
        if per_watt:
            per_watt = dict(value=per_watt.pop("value"), units=next(
                f["per_watt_units"] for f in figs if f["per_watt"]), **per_watt)
        codes = {v: c for f in figs for v, c in f["codes"].items()}
        table[key] = {"figure": fom["value"], "units": units, "higher_is_better": hib,
                      "runs": fom["runs"], "rounds": fom["rounds"], "per_watt": per_watt,
                      "code_versions": sorted({v for f in figs for v in f["code_versions"]}),
                      "code_schemes": sorted({x for f in figs for x in f["code_schemes"]}),
                      "codes": [dict(version=v, **codes[v]) for v in sorted(codes)]}
    return table


def _distinct(values):
    return sorted({v for v in values if isinstance(v, str) and v})


def captures(runs):
    """[(path, document)] of the runs' <folder>/environment/environment.json."""
    out = []
    for where in sorted({os.path.dirname(r.path) for r in runs}):
        path = os.path.join(where, "environment", "environment.json")
        try:
            doc = read_json(path) if archive.isfile(path) else None
        except ToolError:
            continue
        out += [(path, doc)] if isinstance(doc, dict) else []
    return out


def environment_summary(runs):
    """Host, CPU, GPU, driver and OS of the runs' captures."""
    captured = [doc for _, doc in captures(runs)]
    systems = [(field(c, "platform.os"), field(c, "platform.release")) for c in captured]
    return {"captures": len(captured),
            "hosts": _distinct(field(c, "hostname") for c in captured),
            "cpu_models": _distinct(field(c, "cpu.Model name") for c in captured),
            "gpu_models": _distinct(p for c in captured for p in field(c, "gpu.products") or []),
            "drivers": _distinct(field(c, "gpu.driver_version") for c in captured),
            "os": _distinct(f"{name} ({release})" if name and release else name
                            for name, release in systems)}


def _baseline_runs(path, kind, runs=None):
    """(kind, the set's reportable baseline runs of that kind): what a reference takes."""
    runs = load_runs(path)[0] if runs is None else runs
    baseline = [r for r in runs if not left_out_reasons(r, None)
                and rules.reportable(r.doc).get("tier") == "baseline"]
    if not baseline:
        # The first reason without the file's path (absolute in an archive): the same anywhere.
        why = next(("; ".join(w) for r in runs if (w := left_out_reasons(r, None))), "")
        raise ToolError(f"{path}: no reportable baseline result among {len(runs)} result(s)"
                        + (f" (e.g. {why})" if why else ""), 2)
    kinds = sorted({r.device_kind or "unknown" for r in baseline})
    if kind is None and len(kinds) > 1:
        raise ToolError(f"{path}: reportable baseline results ran on {' and '.join(kinds)} "
                        "devices; choose one with --kind", 2)
    if kind is not None and kind not in kinds:  # kind: --kind's, or a reference's first set's
        raise ToolError(f"{path}: its reportable baseline results ran on {' and '.join(kinds)} "
                        f"devices, not {kind}", 2)
    kind = kinds[0] if kind is None else kind
    if kind not in KINDS:
        raise ToolError(f"{path}: the reportable baseline results do not say what device "
                        "they ran on (ranks[].device.kind)", 2)
    return kind, [r for r in baseline if r.device_kind == kind]


# A reference unit's identity: its key, and the field of results.gpu_units.
UNIT_IDENTITY = {"models": "model", "boards": "board_part_number", "vbios": "vbios_version",
                 "drivers": "driver_version"}


def captured_gpus(run):
    """{uuid: {board_part_number, vbios_version}} of nvidia-smi.xml beside a run ({} without):
    results written before state_at_start held them."""
    path = os.path.join(os.path.dirname(run.path), "environment", "nvidia-smi.xml")
    try:
        root = ElementTree.fromstring(archive.read_bytes(path))
    except (OSError, ElementTree.ParseError):
        return {}
    keys = ("board_part_number", "vbios_version")
    return {gpu.findtext("uuid"): {k: gpu.findtext(k) for k in keys}
            for gpu in root.findall("gpu") if gpu.findtext("uuid")}


def unit_of(path, runs, kind):
    """A reference unit: its set, the GPUs or hosts its runs ran on and how many at once."""
    unit = {"source": path, "results": len(runs),
            "per_run": max(len(r.doc.get("ranks") or [None]) for r in runs),
            "held_back": sum(bool(unit_events(r)) for r in runs)}
    if kind != "gpu":
        return dict(unit, ids=_distinct(k.get("host") for r in runs for k in r.doc["ranks"]))
    gpus = gpu_units(runs, captured_gpus)
    return dict(unit, ids=sorted(gpus), **{key: _distinct(g[k] for g in gpus.values())
                                           for key, k in UNIT_IDENTITY.items()})


def _spread(values, center):
    """[lowest, highest] over the center, of two units or more."""
    return [min(values) / center, max(values) / center] if len(values) > 1 else None


def _pooled(parts, key):
    """The units' median `key`, every unit's rounds scaled to it; each unit's and the spread."""
    values = [p[key] for p in parts]
    median = statistics.median(values)
    return {key: median, "runs": sum(p["runs"] for p in parts),
            "rounds": sorted(x * (median / p[key]) for p in parts for x in p["rounds"]),
            "per_unit": values, "spread": _spread(values, median)}


def _combined(tables, key, units):
    """One row of the units' figures and per watt, pooled; of several boards, each board's."""
    rows = [t[key] for t in tables]
    row, watts = dict(rows[0], **_pooled(rows, "figure")), [r["per_watt"] for r in rows]
    row["per_watt"] = dict(watts[0], **_pooled(watts, "value")) if all(watts) else None
    boards = {b: [r["figure"] for r, u in zip(rows, units) if u.get("boards") == [b]]
              for b in _distinct(b for u in units for b in u.get("boards") or [])}
    boards = {b: mine for b, mine in boards.items() if mine}  # a node's mixed boards: none
    if len(boards) > 1:
        row["boards"] = {b: {"units": len(mine), "figure": statistics.median(mine),
                             "spread": _spread(mine, statistics.median(mine))}
                         for b, mine in boards.items()}
    return row


def _one_machine_type(units):
    """Refuses the same unit twice and units of several machine types (GPU model and count)."""
    seen = {}
    for unit in units:
        for unit_id in unit["ids"]:
            if unit_id in seen:
                raise ToolError(f"{unit['source']}: ran on {unit_id}, as {seen[unit_id]} did: "
                                "a reference counts each unit once", 2)
            seen[unit_id] = unit["source"]
    types = sorted({(u["per_run"], ", ".join(u.get("models", [])) or "?") for u in units})
    if len(types) > 1:
        raise ToolError(f"{units[-1]['source']}: the sets are of {len(types)} machine types ("
                        + "; ".join(f"{n} x {m}" for n, m in types) + "): a reference is of one", 2)


def make_reference(paths, name=None, kind=None, runs=None):
    """The reference of one set, or of several units of one machine type (runs: one set's)."""
    used = []
    for path in paths:
        kind, mine = _baseline_runs(path, kind, runs)
        used.append(mine)
    units = [unit_of(path, mine, kind) for path, mine in zip(paths, used)]
    _one_machine_type(units)
    parts = [node.split(mine)[1:3] for mine in used]
    tables = [tier_figures(per_gpu, "baseline") for per_gpu, _ in parts]
    if not all(tables):
        raise ToolError(f"{paths[tables.index({})]}: the reportable baseline results have no "
                        "Kokkos kernel with a figure of merit", 2)
    nodes = [node_figures(*part) for part in parts]
    rows = _reference_rows(paths, tables, units)
    node_rows = _reference_rows(paths, [t for _, t in nodes], units) if all(
        t for _, t in nodes) else []
    every = [r for mine in used for r in mine]
    return {"karma_score_reference": REFERENCE_FORMAT,
            "name": name or " + ".join(map(label_of, paths)), "source": ", ".join(paths),
            "device": {"kind": kind, "names": _distinct(r.device for r in every)},
            "suite": {k: _distinct(field(r.doc, f"suite.{v}") for r in every)
                      for k, v in (("versions", "version"), ("git_describe", "git_describe"))},
            "kokkos": {"versions": _distinct(r.kokkos_version for r in every),
                       "backends": _distinct(r.backend for r in every)},
            "rules": _distinct(str(rules.reportable(r.doc).get("rules")) for r in every),
            "results": len(every), "environment": environment_summary(every),
            "units": units, "rows": rows,
            **({"node_gpus": nodes[0][0], "node_rows": node_rows} if node_rows else {})}


def _reference_rows(paths, tables, units):
    """The reference's rows: each key's figures of the units, pooled; one campaign, one code."""
    for path, table in zip(paths, tables):
        lacks = sorted(set(tables[0]).symmetric_difference(table), key=sort_key)
        if lacks:
            raise ToolError(f"{path}: its rows differ from {paths[0]}'s, e.g. "
                            f"{'/'.join(map(str, lacks[0]))}: a reference's units ran one "
                            "campaign", 2)
    rows = []
    for key in sorted(tables[0], key=sort_key):
        codes = [t[key]["code_versions"] for t in tables]
        other = next((p for p, c in zip(paths, codes) if c != codes[0]), None)
        if other:
            raise ToolError(f"{other}: {'/'.join(map(str, key))} ran other code than on "
                            f"{paths[0]}: a reference's units run one release", 2)
        row = dict(_key_dict(key), **_combined(tables, key, units))
        schemes, codes = row.pop("code_schemes"), row.pop("codes")
        if max(schemes, default=1) > 1:  # absent: scheme 1, as in results
            row["code_scheme"] = max(schemes)
        rows.append(dict(row, codes=codes) if codes else row)
    return rows


def _key_dict(key):
    return dict(zip(("app", "class", "case", "work"), key))


def sort_key(key):
    app = key[0]
    return (APPS.index(app) if app in APPS else len(APPS), app) + \
        tuple("" if k is None else str(k) for k in key[1:])


def label_of(path):
    return os.path.basename(os.path.normpath(path)).removesuffix(archive.SUFFIX) or path


def load_reference(path):
    """The reference document at path, checked against its schema."""
    if not os.path.lexists(path):
        raise ToolError(f"{path}: no such file", 2)
    doc = read_json(path)
    found = schemas.problems(schemas.load("reference.schema.json"), doc)
    if found:
        raise ToolError(f"{path}: {found[0]}; not a karma-score reference file (karma-score "
                        "reference makes one)", 2)
    doc.setdefault("name", label_of(path))
    return doc


def shipped(rel, what, flag):
    """A file the suite ships: PREFIX/share/karma/REL, or in this checkout."""
    tools = os.path.dirname(os.path.abspath(sys.argv[0]))
    for base in (os.path.join(tools, "..", "share", "karma"), CHECKOUT):
        path = os.path.normpath(os.path.join(base, rel))
        if os.path.isfile(path):
            return path
    raise ToolError(f"no {what} ({rel} of the checkout or PREFIX/share/karma); give {flag} FILE", 2)


def geomean(values, weights=None):
    """The (weighted) geometric mean of values not None, or None (statistics weighs from 3.11)."""
    pairs = [(v, w) for v, w in zip(values, weights or [1.0] * len(values)) if v is not None]
    total = sum(w for _, w in pairs)
    return math.exp(sum(w * math.log(v) for v, w in pairs) / total) if total > 0 else None


# Rounds of one case further apart than this are no measurement of it (a broken
# run, a machine that changed): flagged in compare, never scored (docs/score.md)
ROUNDS_FACTOR = 10


def unsteady(rounds):
    """Why the rounds of one figure are no measurement, or None."""
    values = [v for v in rounds or [] if v]
    if values and max(values) > ROUNDS_FACTOR * min(values):
        return f"rounds differ {max(values) / min(values):.3g}x (more than {ROUNDS_FACTOR}x): " \
            "not scored"
    return None


def _ratio(figure, reference, hib):
    return figure / reference if hib else reference / figure


def interval(figures, references, hib):
    """[low, high]: the set's worst round over the reference's best, and best over worst (a
    side of one value, a reference made before rounds were kept, is a point)."""
    worst, best = (min, max) if hib else (max, min)
    return [_ratio(worst(figures), best(references), hib),
            _ratio(best(figures), worst(references), hib)]


def span_mean(spans, weights=None):
    """The (weighted) geometric mean of intervals, bound by bound; None of none (or weights 0)."""
    bounds = [geomean([None if s is None else s[i] for s in spans], weights) for i in (0, 1)]
    return None if None in bounds else bounds


def verdict(span, band=None):
    """What an interval of ratios says; holding 1 or touching the units' band: no difference."""
    if span is None:
        return None
    if band is not None:
        if band[0] <= span[1] and span[0] <= band[1]:
            return WITHIN
    elif holds_one(span):
        return "no measurable difference"
    return "better than the reference" if span[0] > 1 else "worse than the reference"


WITHIN = "within the spread of one model's units"
# The unit band (docs/score.md): +-BAND_SIGMAS deviations of the units' log figures, from
# their range; never narrower than their own figures nor BAND_FLOOR (one board: 0.5%).
BAND_SIGMAS = 2
BAND_FLOOR = 0.005


@functools.cache
def expected_range(n):
    """d2(n): the expected range of n standard normal draws (1.128 for 2, 1.693 for 3)."""
    cdf = [0.5 * (1 + math.erf(i / 100 / math.sqrt(2))) for i in range(-800, 801)]
    return sum(1 - p ** n - (1 - p) ** n for p in cdf) / 100


def unit_band(spread, units):
    """[low, high] one model's units span about the reference, from N units' spread (or None)."""
    if not spread or units < 2:
        return None
    low, high = math.log(spread[0]), math.log(spread[1])
    half = max(BAND_FLOOR, -low, high, BAND_SIGMAS * (high - low) / expected_range(units))
    return [math.exp(-half), math.exp(half)]


def row_ratio(ref, fig, units=0, board=None):
    """One row of a tier: the set's figure against the reference's, or why not; units' bands."""
    row = dict(_key_dict(ref_key(ref)), reference=ref["figure"], units=ref["units"],
               figure=None, runs=0, ratio=None, interval=None, per_watt=None, missing=None)
    hib = ref["higher_is_better"]
    if fig is None:
        return dict(row, missing="no figure")
    if (fig["units"], fig["higher_is_better"]) != (ref["units"], hib):
        return dict(row, missing=f"measured in {fig['units']}, the reference in {ref['units']}")
    row.update(figure=fig["figure"], runs=fig["runs"], missing=unsteady(fig["rounds"]))
    if row["missing"]:
        return row
    row.update(ratio=_ratio(fig["figure"], ref["figure"], hib),
               interval=interval(fig["rounds"], ref.get("rounds") or [ref["figure"]], hib),
               band=unit_band(ref.get("spread"), units))
    mine = (ref.get("boards") or {}).get(board)
    if mine and (half := unit_band(mine["spread"], mine["units"])):
        at = _ratio(mine["figure"], ref["figure"], hib)
        row["board_band"] = [at * half[0], at * half[1]]
    # The reference's (baseline) kernels must be among the set's; vendor ones add.
    theirs, ours = ref.get("code_versions") or [], fig["code_versions"]
    gone, scheme = sorted(set(theirs) - set(ours)), ref.get("code_scheme", 1)
    if theirs and ours and set(fig["code_schemes"]) - {scheme}:
        row["code_unknown"] = f"the reference's code versions are of scheme {scheme}, this " \
            f"set's of {', '.join(map(str, fig['code_schemes']))}"
    elif theirs and ours and gone:
        row["code_changed"] = f"the reference's code_version {', '.join(gone)} is not among " \
            f"this set's ({', '.join(ours)})"
    ref_pw, pw = ref.get("per_watt"), fig["per_watt"]
    if ref_pw and pw:
        row["per_watt"] = {"figure": pw["value"], "reference": ref_pw["value"],
                           "units": pw["units"], "ratio": _ratio(pw["value"], ref_pw["value"], hib),
                           "interval": interval(pw["rounds"], ref_pw.get("rounds")
                                                or [ref_pw["value"]], hib),
                           "band": unit_band(ref_pw.get("spread"), units)}
    else:
        row["no_energy"] = " and ".join(side for side, value in
                                        (("set", pw), ("reference", ref_pw)) if not value)
    return row


def ref_key(row):
    return (row["app"], row["class"], row["case"], row["work"])


def row_name(row):
    return f"{row['app']}/{row['class']}/{row['case']}/{row['work']}"


def _class_order(cls):
    order = rules.CLASSES + (rules.WEAK_CLASS,)  # then any other class, by name
    return (order.index(cls), "") if cls in order else (len(order), str(cls))


def _app_score(rows):
    """One app's score over its rows, only where every row has a ratio."""
    scored = [r for r in rows if r["ratio"] is not None]
    watts = [r["per_watt"] for r in scored if r["per_watt"]]
    complete = len(scored) == len(rows)
    means = [geomean([r["ratio"] for r in scored]), span_mean([r["interval"] for r in scored]),
             geomean([w["ratio"] for w in watts]), span_mean([w["interval"] for w in watts]),
             *(span_mean([r.get(k) for r in rs])
               for k, rs in (("band", scored), ("band", watts), ("board_band", scored)))]
    return _verdicts(dict(zip(MEANS, means if complete else [None] * len(MEANS)),
                          rows=len(scored), of=len(rows), complete=complete,
                          per_watt_rows=len(watts)))


def _verdicts(score):
    """A score with the words of its interval and per-watt interval (that only against a band)."""
    return dict(score, verdict=verdict(score["interval"], score["band"]),
                per_watt_verdict=score["per_watt_band"] and verdict(
                    score["per_watt_interval"], score["per_watt_band"]))


def app_scores(rows, weights):
    """({app: its rows' geomean}, the apps' weighted geomean unless a weighted row has no ratio)."""
    apps = {app: _app_score([r for r in rows if r["app"] == app]) for app in weights}
    missing = [r for r in rows if r["ratio"] is None and weights.get(r["app"], 0) > 0]
    overall = {"complete": not missing, "missing": missing}
    names = [a for a in apps if apps[a]["score"] is not None]
    ws = [weights[a] for a in names]
    for name in MEANS:
        mean = geomean if name in ("score", "per_watt") else span_mean
        overall[name] = None if missing else mean([apps[a][name] for a in names], ws)
    return apps, _verdicts(overall)


def score_tier(figures, reference, weights, board=None, scored=rules.SCORED_CLASSES):
    """A tier's rows, per-app, overall (the scored classes) and per-class scores, and coverage."""
    units = len(reference.get("units") or [])
    rows = [dict(row_ratio(ref, figures.get(ref_key(ref)), units, board),
                 in_score=ref["class"] in scored) for ref in reference["rows"]]
    known = {ref_key(ref) for ref in reference["rows"]}
    apps, overall = app_scores([r for r in rows if r["in_score"]], weights)
    classes = {cls: dict(app_scores([r for r in rows if r["class"] == cls], weights)[1],
                         in_score=cls in scored)
               for cls in sorted({r["class"] for r in rows}, key=_class_order)}
    return dict(overall, rows=rows, apps=apps, classes=classes,
                coverage=sum(r["ratio"] is not None for r in rows) / len(rows),
                missing=[r for r in rows if r["ratio"] is None], incomplete=overall["missing"],
                **{why: [r for r in rows if r.get(why)]
                   for why in ("no_energy", "code_changed", "code_unknown")},
                not_in_reference=[_key_dict(k) for k in sorted(figures, key=sort_key)
                                  if k not in known])


def score_set(source, label, reference, weights):
    """One set scored against the reference: nothing of another set enters."""
    runs, no_results = load_runs(source)
    path = getattr(source, "path", source)
    why = [left_out_reasons(run, reference["device"]["kind"]) for run in runs]
    kept = [r for r, w in zip(runs, why) if not w]
    left_out = [{"file": r.path, "reasons": w} for r, w in zip(runs, why) if w]
    units = gpu_units(kept, captured_gpus)
    boards = _distinct(u["board_part_number"] for u in units.values())
    board = boards[0] if len(boards) == 1 else None
    main, per_gpu, node_runs, others = node.split(kept)
    tiers = {tier: score_tier(tier_figures(per_gpu, tier), reference, weights, board)
             for tier in rules.TIERS}
    scored = {"label": label, "path": path, "results": len(runs), "scored": len(kept),
              "devices": _distinct(r.device for r in kept), "tiers": tiers, "boards": boards,
              "node": node_score(per_gpu, node_runs, reference, weights, board),
              "gpus_alone": gpus_alone(node.each_alone(main, per_gpu, others), reference,
                                       weights, units),
              "suite_versions": _distinct(field(r.doc, "suite.version") for r in kept),
              "left_out": left_out + no_results, "units": units,
              "held_back": [{"file": r.path, "why": w} for r in kept if (w := unit_events(r))]}
    return dict(scored, record=of_record(scored, reference, weights))


def node_figures(per_gpu, node_runs):
    """(G, {row key: row}) of the node classes on all G GPUs (docs/score.md#per-node)."""
    gpus, runs = node.on_all_gpus(per_gpu, node_runs)
    table = tier_figures(runs, TIER)
    return gpus, {(k[0], node.AS_NODE_CLASS[k[1]], *k[2:]): row for k, row in table.items()
                  if k[1] in node.AS_NODE_CLASS}


def node_score(per_gpu, node_runs, reference, weights, board):
    """The set's per-node figure against the reference's node rows (none: why not)."""
    gpus, figs = node_figures(per_gpu, node_runs)
    theirs = reference.get("node_rows") or []
    if not theirs:
        return {"name": node.NAME, "gpus": gpus, "scored": False, "why": "the reference has "
                "no node rows (its sets ran no node classes)"}
    t = score_tier(figs, {"rows": theirs, "units": reference.get("units")}, weights, board,
                   node.NODE_CLASSES)
    return {"name": node.NAME, "gpus": gpus, "scored": True,
            "reference_gpus": reference.get("node_gpus", 1), "complete": t["complete"],
            "figure": t["score"], "rows": len(t["rows"]), "apps": t["apps"],
            "missing": [row_name(r) for r in t["incomplete"]],
            **{k: t[k] for k in ("interval", "verdict", "per_watt", "per_watt_interval", "band",
                                 "per_watt_band", "per_watt_verdict")}}


def gpus_alone(alone, reference, weights, units):
    """[{uuid, board, score, interval, band, verdict}] of each GPU's runs alone (node.each_alone)
    against the reference's rows they have."""
    out, count = [], len(reference.get("units") or [])
    for uuid, runs in alone.items():
        figs = tier_figures(runs, TIER)
        rows = [row_ratio(ref, figs[key], count) for ref in reference["rows"]
                if (key := ref_key(ref)) in figs]
        overall = app_scores(rows, weights)[1]
        out.append({"uuid": uuid, "board": (units.get(uuid) or {}).get("board_part_number"),
                    "per_gpu": uuid == next(iter(alone)), "rows": len(rows),
                    **{k: overall[k] for k in ("score", "interval", "band", "verdict")}})
    return out


def board_scores(reference, weights):
    """{board part number: its units' score against the reference}: the boards' difference."""
    boards = {b for r in reference["rows"] for b in r.get("boards") or {}}
    scored = [r for r in reference["rows"] if r["class"] in rules.SCORED_CLASSES]
    return {b: app_scores([{"app": r["app"], "interval": None, "per_watt": None, "ratio": _ratio(
        r["boards"][b]["figure"], r["figure"], r["higher_is_better"])} for r in scored],
        weights)[1]["score"] for b in sorted(boards)}


def of_record(scored, reference, weights):
    """A scored set's figure of record: the baseline overall, the units' bands, the boards."""
    t = scored["tiers"][TIER]
    ref_boards = _distinct(b for u in reference.get("units") or [] for b in u.get("boards", []))
    return {"name": NAME, "tier": TIER, "complete": t["complete"], "figure": t["score"],
            **{k: t[k] for k in ("interval", "verdict", "per_watt", "per_watt_interval", "band",
                                 "per_watt_band", "per_watt_verdict", "board_band")},
            "units": len(reference.get("units") or []),
            "boards": {"set": scored["boards"], "reference": ref_boards,
                       "scores": board_scores(reference, weights)},
            "missing": [row_name(r) for r in t["incomplete"]],
            "rows": len([r for r in t["rows"] if r["in_score"]]),
            # of the rows the figure counts, as `rows` and `missing` are
            "code_changed": sum(r["in_score"] for r in t["code_changed"]),
            "code_unknown": sum(r["in_score"] for r in t["code_unknown"])}


def reference_of(source=None):
    """(where, reference) of --reference: shipped (None), a file, a set (GPU rows of both),
    or a reference already read (a release's, its sha256 checked: karma-bundle check)."""
    if isinstance(source, dict):
        return source["name"], source
    if source is None:
        source = shipped(DEFAULT_REFERENCE, "shipped reference", "--reference")
    path = getattr(source, "path", source)
    if not isinstance(source, resultset.ResultSet) and not archive.isdir(source) \
            and not archive.is_archive_name(source):
        return source, load_reference(source)
    runs, _ = load_runs(source)
    kinds = {r.device_kind for r in runs if not left_out_reasons(r, None)}
    return path, make_reference([path], kind="gpu" if "gpu" in kinds else None, runs=runs)


def score(sets, reference=None, weights_file=None):
    """Every tool's scoring, what --json writes: sets [(label, path or ResultSet)], each alone."""
    reference_file, doc = reference_of(reference)
    weights_file = weights_file or shipped(weights.DEFAULT, "default weights file", "--weights")
    apps = sorted({r["app"] for r in doc["rows"]}, key=lambda a: sort_key((a,)))
    weighed = weights.of_apps(weights_file, apps, doc["device"]["kind"])
    return {"karma_score": 1, "reference_file": reference_file, "reference": doc,
            "weights_file": weights_file, "weights": weighed,
            "sets": [score_set(path, label, doc, weighed) for label, path in sets]}


# What an app may fall short of the bid's without a unit band (docs/run-rules.md#acceptance):
# above the 2.0% two H200 boards differ by, below any difference of machine types.
ACCEPT_TOLERANCE = 0.03


def accept(bid, delivered, reference=None, weights_file=None):
    """The delivered set scored against the bid's bundle; per app whether its rounds reach the
    bid's figure widened by `reference`'s unit band, else by ACCEPT_TOLERANCE (floor, accepted)."""
    report = score([("delivered", delivered)], bid, weights_file)
    bands = {}
    if reference is not None:
        theirs = score([("bid", bid)], reference, weights_file)["sets"][0]
        bands = {a: s["band"] for a, s in theirs["tiers"][TIER]["apps"].items() if s["band"]}
    t = report["sets"][0]["tiers"][TIER]
    t["apps"] = {app: a for app, a in t["apps"].items() if a["of"]}  # apps the bid scores
    if not t["apps"]:  # else "accepted" would be said of nothing
        raise ToolError(f"{bid}: no row the weights give weight to: nothing to accept", 2)
    for app, a in t["apps"].items():
        a["floor"] = bands[app][0] if app in bands else 1 - ACCEPT_TOLERANCE
        a["accepted"] = a["complete"] and a["interval"][1] >= a["floor"]
        a["short"] = [row_name(r) for r in t["rows"] if r["app"] == app and r["in_score"] and (
            r["interval"] is None or r["interval"][1] < a["floor"])]
    return report
