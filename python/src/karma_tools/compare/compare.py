"""karma-compare: machines' results side by side, per figure of merit: values, ratios to a
baseline, flags; the figure of record is karma-score's with the baseline as the reference."""

import math
import os
import re
import statistics

from karma_tools.core import ToolError, __version__
from karma_tools.results import codeversion
from karma_tools.score import figure, weights
from karma_tools.compare.sides import aggregate
from karma_tools.results.results import field, flatten, format_size
from karma_tools.results.cases import case_key, case_values, values_key
from karma_tools.results.codestatus import code_info, code_status


class Group:
    """Runs of one case: one set's runs of the same deck values, ranks and nodes."""

    def __init__(self, key, app, values):
        self.key, self.app, self.values, self.runs = key, app, values, []

    @property
    def stem(self):
        """The deck most of the runs ran (of a tie, the first by name)."""
        return statistics.mode(sorted(r.deck_stem for r in self.runs))

    def kernels(self):
        return list(dict.fromkeys(k for r in self.runs for k in r.kernels))


def schema_defaults(schema, prefix=""):
    """{'stream.policy_3d': 'auto', ...}: the defaults a deck's JSON schema declares."""
    out = {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    for key, sub in (properties if isinstance(properties, dict) else {}).items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(sub, dict) and "default" in sub:
            out.update(flatten(sub["default"], name))
        elif isinstance(sub, dict) and "properties" in sub:
            out.update(schema_defaults(sub, name))
    return {k: v for k, v in out.items() if not k.startswith("run.")}


def schema_retired(schema):
    """{'matvec.corrupt': False, ...}: a deck schema's retired keys (x-retired), each at the
    value that ran the work the suite now runs by default."""
    retired = schema.get("x-retired") if isinstance(schema, dict) else None
    return {k: v["same_work"] for k, v in (retired if isinstance(retired, dict) else {}).items()
            if isinstance(v, dict) and "same_work" in v}


def newest_schemas(sets):
    """{app: deck schema} of the newest suite version that recorded one, over every set: an
    older result's missing key reads as the newer default, a retired one as the same work."""
    def rank(r):
        return tuple(map(int, re.findall(r"[0-9]+", field(r.doc, "suite.version") or ""))), r.path

    runs = [r for s in sets for r in s.runs
            if not r.reference and isinstance(field(r.doc, "deck.schema"), dict)]
    return {r.app: r.doc["deck"]["schema"] for r in sorted(runs, key=rank)}  # the newest last


def group_runs(runs, schemas):
    groups = {}
    for r in runs:
        schema = schemas.get(r.app)
        values = dict(case_values(r, schema_defaults(schema), schema_retired(schema)),
                      ranks=r.ranks, nodes=r.nodes)
        # A node's host CPU runs are cases of their own beside its GPU runs.
        if r.device_kind:
            values["device"] = r.device_kind
        key = case_key(r.app, values)
        groups.setdefault(key, Group(key, r.app, values)).runs.append(r)
    return groups


def loose_identity(group):
    """What two cases must share to be compared: the app, non-numeric settings but precision."""
    # device is matched apart: a result that does not say (older reference runs) pairs with either.
    return (group.app, tuple((k, v) for k, v in sorted(group.values.items())
                             if k not in ("ranks", "nodes", "device")
                             and not k.endswith(".precision") and isinstance(v, (str, bool))))


def _same_device(a, b):
    """Both groups ran on the same kind of device, or one does not say."""
    kinds = (a.values.get("device"), b.values.get("device"))
    return None in kinds or kinds[0] == kinds[1]


def _category(key, a, b):
    if key.endswith(".precision"):
        return "precision"
    if key in ("ranks", "nodes"):
        return "scale"
    if all(type(x) is int or isinstance(x, list) and all(type(v) is int for v in x)
           for x in (a, b)):
        return "problem size"
    return "parameter"


def differences(base, other):
    """[(category, key, baseline value, other value)] between two groups."""
    return [(_category(k, a, b), k, a, b) for k in sorted(set(base.values) | set(other.values))
            for a, b in [(base.values.get(k), other.values.get(k))] if a != b]


def case_labels(groups):
    """A distinct label per group: its kind of device, its deck, and each setting in which it
    departs from the most common among that deck's groups."""
    by_stem = {}
    for g in groups:
        by_stem.setdefault((g.app, g.stem), []).append(g)
    labels = {}
    for (_, stem), members in by_stem.items():
        keys = sorted({k for g in members for k in g.values} - {"device"})
        # Most common; ties go to the first in order, so labels are stable.
        mode = {k: statistics.mode(values_key(g.values.get(k)) for g in members) for k in keys}
        for g in members:
            parts = [f"{v} {k.split('.')[-1]}" if k in ("ranks", "nodes") else
                     f"{k.split('.')[-1]}={format_size(v)}"
                     for k in keys for v in [g.values.get(k)] if values_key(v) != mode[k]]
            label = f"{stem} ({', '.join(parts)})" if parts else stem
            labels[g.key] = f"{g.values.get('device', '?')}: {label}"
    return labels


def _shown(value):
    return "(absent)" if value is None else format_size(value)


def _why(diffs):
    """The differing keys of a pair, as 'key a vs b; ...'."""
    return "; ".join(f"{k} {_shown(a)} vs {_shown(b)}" for _, k, a, b in diffs)


def _closest(group, candidates):
    """(candidate, differences) with the fewest differing keys (ties: the first key)."""
    pairs = [(h, differences(group, h)) for h in sorted(candidates, key=lambda h: h.key)]
    return min(pairs, key=lambda pair: len(pair[1]))


def _why_not(group, others, none):
    """How group differs from the closest of others of its app and device, else `none`."""
    near = [h for h in others if h.app == group.app and _same_device(h, group)]
    return _why(_closest(group, near)[1]) if near else none


def _match_set(s, base_groups, theirs, labels_by_key, notes):
    """{baseline key: (group, differences)} of one other set: exact pairs, else loose, 1:1."""
    matches = {g.key: (theirs[g.key], []) for g in base_groups if g.key in theirs}
    taken = set(matches)
    for g in [g for g in base_groups if g.key not in theirs]:
        candidates = [h for h in theirs.values()
                      if h.key not in taken and loose_identity(h) == loose_identity(g)
                      and _same_device(h, g)]
        for narrower in (lambda h: h.stem == g.stem,
                         lambda h: h.values.get("ranks") == g.values.get("ranks")):
            if len(candidates) > 1:
                candidates = [h for h in candidates if narrower(h)] or candidates
        if candidates:
            h, diffs = _closest(g, candidates)
            if len(candidates) > 1:
                notes.append(f"{s.label}: {len(candidates)} runs could stand for "
                             f"{g.app}/{labels_by_key[g.key]}; chose the closest, "
                             f"{h.stem} ({len(diffs)} differing key(s)"
                             + (f": {_why(diffs)}" if diffs else "") + ")")
            taken.add(h.key)
            matches[g.key] = (h, diffs)
    return matches


def _pair(e, b, diffs, hib, per_node):
    """Gives a paired entry e its flags, ratio and interval against the baseline's b."""
    flags = e["flags"] + [f"{d[0]} differs: {_why([d])}" for d in diffs if d[0] != "scale"]
    if e["nodes"] != b["nodes"] or e["ranks"] != b["ranks"]:
        flags.append(f"scale differs: {e['nodes']} node(s)/{e['ranks']} rank(s) vs "
                     f"{b['nodes']}/{b['ranks']}"
                     + ("" if per_node else " (use --per-node to compare per node)"))
    flags += [f"{what} differs: {'/'.join(e[key])} vs {'/'.join(b[key])}"
              for key, what in (("backends", "backend"), ("kokkos", "Kokkos")) if e[key] != b[key]]
    if e["units"] != b["units"]:
        flags.append(f"units differ: {e['units']} vs {b['units']}")
    ratio = None
    if b["ratio"] and e["value"] and b["value"] and e["units"] == b["units"]:
        scale = b["nodes"] / e["nodes"] if per_node else 1
        ratio = _ratio(e["value"], b["value"], hib, scale)
        if ratio is None:
            flags.append("ratio out of range: the values are too far apart")
        else:
            e["interval"] = [x * scale for x in figure.interval(e["run_values"],
                                                                b["run_values"], hib)]
    e["ratio"], e["flags"] = ratio, flags


def _row(g, case, kernel, base, matched, how, per_node, sources, code):
    """One row: the baseline's entry and each matched set's (None: unpaired, see 'unpaired')."""
    b = _entry(g, kernel, how)
    b["ratio"] = 1.0 if b["value"] is not None and not b["failed"] else None
    row = {"app": g.app, "case": case, "kernel": kernel, "units": b["units"],
           "higher_is_better": b["higher_is_better"], "values": {base.label: b}, "unpaired": {}}
    for s, matches, theirs in matched:
        m = matches.get(g.key)
        e = _entry(m[0], kernel, how) if m else None
        row["values"][s.label] = e if e and e["value"] is not None else None
        if row["values"][s.label] is None:
            row["unpaired"][s.label] = f"no run of {kernel}" if m else \
                _why_not(g, theirs.values(), "no run")
            continue
        h, diffs = m
        _pair(e, b, diffs, row["higher_is_better"], per_node)
        e["code"], e["code_detail"] = None, ""  # another program's, or by design another
        if code and not g.values.get("reference") and not h.values.get("reference"):
            e["code"], e["code_detail"] = code_status(
                g.app, (code_info(g, kernel), sources.get(base.label)),
                (code_info(h, kernel), sources.get(s.label)))
        if e["code"] == "code changed":
            e["flags"].append(f"code changed: {e['code_detail']}")
    if not row["unpaired"]:
        del row["unpaired"]
    return row


def _only_in_other(s, theirs, matches, base_groups, how):
    """What another set ran that no baseline row stands for: untaken cases, unknown kernels."""
    out = []
    labels = case_labels(list(theirs.values()))
    paired = {matches[g.key][0].key: g for g in base_groups if g.key in matches}
    for h in sorted(theirs.values(), key=lambda h: (h.app, labels[h.key])):
        if h.key in paired:
            kernels = [k for k in h.kernels() if k not in paired[h.key].kernels()]
            reason = "kernel not in the baseline's runs"
        else:
            kernels, reason = h.kernels(), _why_not(h, base_groups, "no baseline run")
        for kernel in kernels:
            e = _entry(h, kernel, how)
            out.append({"set": s.label, "app": h.app, "case": labels[h.key], "kernel": kernel,
                        **{k: e[k] for k in ("units", "higher_is_better", "value", "runs",
                                             "failed")}, "reason": reason, "files": e["files"]})
    return out


def compare(sets, baseline_label, how="median", per_node=False, weights_path=None,
            sources=None, within=None):
    """The comparison as a plain dict (what --json writes). weights_path: the figure of record's;
    sources: {label: SourceAt} of sets whose results lack code versions; within: {set, path, ours,
    theirs} where the sets are one set's implementations (no code status nor record)."""
    labels = [s.label for s in sets]
    if len(set(labels)) != len(labels):
        raise ToolError("two result sets have the same label; name them LABEL=DIR", 2)
    if baseline_label not in labels:
        raise ToolError(f"--baseline {baseline_label}: no set of that label (sets: "
                        f"{', '.join(labels)})", 2)
    base = next(s for s in sets if s.label == baseline_label)
    others = [s for s in sets if s is not base]
    if weights_path:
        weights.parse(weights_path)  # a malformed file is bad input, not a missing figure
    schemas = newest_schemas(sets)
    grouped = {s.label: group_runs(s.runs, schemas) for s in sets}
    labels_by_key = case_labels(list(grouped[base.label].values()))
    base_groups = sorted(grouped[base.label].values(),
                         key=lambda g: (g.app, g.stem, labels_by_key[g.key]))
    notes = []
    for s in sets:
        if s.label in (sources or {}) and all(
                isinstance(k["entry"].get("code_version"), str) and
                codeversion.scheme_of(k["entry"].get("code")) == codeversion.SCHEME
                for r in s.runs if not r.reference for k in r.kernels.values()):
            notes.append(f"--source {s.label}={sources[s.label].revision}: every result of "
                         f"{s.label} records its code versions; the revision is not used (name "
                         "the set whose results lack them, or made them by an older scheme)")
    matched = [(s, _match_set(s, base_groups, grouped[s.label], labels_by_key, notes),
                grouped[s.label]) for s in others]
    only = [o for s, matches, theirs in matched
            for o in _only_in_other(s, theirs, matches, base_groups, how)]
    out_rows = [_row(g, labels_by_key[g.key], kernel, base, matched, how, per_node,
                     sources or {}, within is None)
                for g in base_groups for kernel in g.kernels()]
    _energy_ratios(out_rows, base.label)
    entries = [_set_entry(s) for s in sets]
    return {"karma_compare": 2, "karma_version": __version__, "baseline": base.label,
            "sets": entries,
            "suite_versions_differ": len({tuple(e["suite_versions"]) for e in entries}) > 1,
            "aggregate": how, "per_node": per_node, "weights": weights_path, "rows": out_rows,
            "only_in_other_sets": only, "left_out": [{"set": s.label, "path": f, "error": why}
                                                     for s in sets for f, why in s.invalid],
            "notes": notes, "record": {} if within else _records(base, others, weights_path),
            "within": within}


def _records(base, others, weights_path):
    """{label: figure of record} as `karma-score SET --reference BASELINE` gives it, or why."""
    try:
        report = figure.score([(s.label, s) for s in others], base, weights_path)
    except ToolError as e:
        return {s.label: {"name": figure.NAME, "why": str(e)} for s in others}
    return {s["label"]: s["record"] for s in report["sets"]}


def _set_entry(s):
    own = [r for r in s.runs if not r.reference]
    return {"label": s.label, "path": s.path, "runs": len(s.runs),
            "suite_versions": sorted({str(field(r.doc, "suite.version") or "?") for r in own}),
            "git_describe": sorted({str(field(r.doc, "suite.git_describe") or "?")
                                    for r in own}),
            "devices": sorted({r.device for r in s.runs}),
            "backends": sorted({r.backend for r in s.runs}),
            "kokkos": sorted({r.kokkos_version for r in own}),
            "skipped_files": len(s.skipped), "invalid_files": len(s.invalid)}


def _entry(group, kernel, how):
    runs = [r for r in group.runs if kernel in r.kernels and r.kernels[kernel]["value"] is not None]
    passed, failed = [r for r in runs if r.passed], [r for r in runs if not r.passed]
    k0 = runs[0].kernels[kernel] if runs else {"units": "", "higher_is_better": True}
    use = passed or failed
    kernels = [r.kernels[kernel] for r in use]
    values = [k["value"] for k in kernels]
    flags = [f"verification FAILED in {len(failed)} of {len(runs)} run(s): "
             + ", ".join(os.path.basename(r.path) for r in failed[:3])] if failed else []
    flags += filter(None, [figure.unsteady(values)])
    entry = {"value": aggregate(values, how, k0["higher_is_better"]), "units": k0["units"],
             "higher_is_better": k0["higher_is_better"], "runs": len(use),
             "failed": not passed and bool(failed), "run_values": sorted(values),
             "nodes": group.values.get("nodes"), "ranks": group.values.get("ranks"),
             "backends": sorted({r.backend for r in group.runs}),
             "devices": sorted({r.device for r in group.runs}),
             "kokkos": sorted({r.kokkos_version for r in group.runs if not r.reference}),
             "files": [r.path for r in use], "flags": flags}
    # Energy of the same runs, aggregated as the FOM is ("best": more FOM per watt, fewer J, W).
    measured = [k["energy"] for k in kernels if k["energy"]]
    if measured:
        def of(key, higher_is_better=False):
            return aggregate([m[key] for m in measured if m[key] is not None], how,
                             higher_is_better)
        entry["energy"] = {"runs": len(measured), "average_power_W": of("average_power_W"),
                           "fom_per_watt": of("fom_per_watt", k0["higher_is_better"]),
                           "fom_per_watt_units": measured[0]["fom_per_watt_units"] or
                           (k0["units"] + "/W" if k0["units"] else ""),
                           "joules_per_execution": of("joules_per_execution")}
    efficiency = {key: aggregate(fractions, how)
                  for key in ("fraction_of_peak_bandwidth", "fraction_of_peak_flops")
                  for fractions in [[k["efficiency"][key] for k in kernels
                                     if key in k["efficiency"]]] if fractions}
    if efficiency:
        entry["efficiency"] = efficiency
    return entry


def _ratio(numerator, denominator, higher_is_better, scale=1):
    """numerator/denominator, above 1 better, times scale; None if missing or out of range."""
    if not numerator or not denominator:
        return None
    ratio = (numerator / denominator if higher_is_better else denominator / numerator) * scale
    return ratio if 0 < ratio < math.inf else None


def _energy_ratios(rows, base):
    """Gives every entry its per_watt_ratio and energy_ratio where some entry measured energy."""
    if not any(e and "energy" in e for r in rows for e in r["values"].values()):
        return
    for r in rows:
        b = r["values"][base]
        b_energy = b.get("energy") if b["ratio"] else None  # a baseline figure to divide by
        for e in filter(None, r["values"].values()):
            energy = e.get("energy") if b_energy and e["units"] == b["units"] else None
            e["per_watt_ratio"] = energy and _ratio(energy["fom_per_watt"],
                                                    b_energy["fom_per_watt"], r["higher_is_better"])
            e["energy_ratio"] = energy and _ratio(energy["joules_per_execution"],
                                                  b_energy["joules_per_execution"], False)
