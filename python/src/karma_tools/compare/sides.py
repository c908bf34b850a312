"""A campaign's side-by-side ratio tables (docs/campaigns.md): each `compare:` entry pairs a
numerator with the one denominator of its round whose `match` keys agree. PAIRING_KEYS: what
may be named beside deck keys (mpi.comm: the ranks' path of device data; job.point: the job's
name without its round and process)."""

import csv
import fnmatch
import io
import json
import re
import statistics

from karma_tools.core import ToolError, md_table
from karma_tools.results import resultset
from karma_tools.results.results import field, format_size, format_value, is_number, kernel_energy
from karma_tools.results.cases import values_key
from karma_tools.score.score import fmt_span

PAIRING_KEYS = ("mpi.ranks", "mpi.nodes", "mpi.comm", "job.run", "job.point")


def load_items(result_set):
    """([items], [notes]): one item per kernel of each job's results of a campaign's set."""
    items, notes = [], []
    for entry, run, why in result_set.jobs:
        if run is None:
            notes.append(f"{entry['name']}: {why}")
            continue
        deck = run.deck_values(include_run=True)
        process = entry.get("process") if isinstance(entry.get("process"), int) else None
        point = re.sub(r"\.r[0-9]+$", "", entry["name"])  # without its round (.rN)
        deck.update(zip(PAIRING_KEYS, (run.ranks, run.nodes, run.comm_path, entry.get("run", ""),
                                       point.removesuffix(f".p{process}") if process else point)))
        notes += [f"{entry['name']}: {n}" for n in run.doc.get("notes") or []]  # schema: strings
        rnd = entry.get("round") if isinstance(entry.get("round"), int) else 1
        items += [{"job": entry["name"], "run": entry.get("run", ""), "app": run.app,
                   "device": run.device_kind, "round": rnd, "process": process, "kernel": name,
                   "implementation": k["implementation"], "variant": k["variant"],
                   "entry": k["entry"], "deck": deck, "passed": run.passed, "path": run.path}
                  for name, k in run.kernels.items()]
    return items, notes


def selected(selection, item):
    return all(any(fnmatch.fnmatchcase(str(item[key]), p) for p in selection[key])
               for key in ("run", "implementation", "variant", "kernel") if key in selection) \
        and all(item["deck"].get(k) == v for k, v in (selection.get("deck") or {}).items())


def higher_is_better(spec, item):
    if spec.get("higher_is_better") is not None:
        return spec["higher_is_better"]
    if spec["metric"].startswith("fom."):
        return bool((item["entry"].get("fom") or {}).get("higher_is_better", True))
    return not spec["metric"].startswith("time")


def aggregate(values, how, higher_is_better=True):
    """Repeated values as one: median, mean, best or worst; None of none (the tools' one median)."""
    best, worst = (max, min) if higher_is_better else (min, max)
    pick = {"median": statistics.median, "mean": statistics.fmean, "best": best,
            "worst": worst}.get(how)
    return pick(values) if values and pick else None


def _value(spec, item):
    """The item's figure (of its processes, or its `metric`) where a positive number."""
    value = item["value"] if "value" in item else field(item["entry"], spec["metric"])
    return value if is_number(value) and value > 0 else None


def _same(a, b):
    """One result, whichever side's copy of it."""
    return (a["job"], a["kernel"]) == (b["job"], b["kernel"])


def _one_per_round(spec, items, notes):
    """A side's results of one point, round and kernel (a run's processes) as one item, by
    per_round (best or median); without it they are left out, with a note."""
    groups = {}
    for i in items:
        key = values_key([i["run"], i["deck"]["job.point"], i["round"], i["kernel"],
                          i["implementation"], i["variant"]])
        groups.setdefault(key, []).append(i)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        where = f"{first['deck']['job.point']}/{first['kernel']} (round {first['round']})"
        if not spec.get("per_round"):
            notes.append(f"{where}: {len(group)} results, one a process; the comparison "
                         "needs per_round (best or median) to combine them")
            continue
        values = [_value(spec, g) for g in group]
        if None in values:
            notes.append(f"{where}: a process has no {spec['metric']}")
            continue
        value = aggregate(values, spec["per_round"], higher_is_better(spec, first))
        out.append(dict(group[values.index(value)] if spec["per_round"] == "best" else first,
                        value=value, passed=all(g["passed"] for g in group),
                        job=f"{first['deck']['job.point']}.r{first['round']} "
                        f"({len(group)} processes)"))
    return out


def ratio_table(spec, items):
    """One comparison: {name, title, metric, rows: [...], rounds, notes}."""
    notes, sides = [], ("numerator", "denominator")
    nums, dens = (_one_per_round(spec, [i for i in items if selected(spec[side], i)], notes)
                  for side in sides)
    notes += [f"no result matches the {side}" for side, found in zip(sides, (nums, dens))
              if not found]
    # The same work on the same kind of device (or one that does not say); a numerator with no
    # such denominator is outside the table, not an error. A denominator naming its run
    # (hexgrad's GB/s over karma-stream's copy) was chosen on purpose: any app's.
    any_app = "run" in spec["denominator"]

    def same_work(a, b):
        return (any_app or a["app"] == b["app"]) and \
            (a["device"] == b["device"] or "" in (a["device"], b["device"]))

    rows = {}
    for n in nums:
        if not any(same_work(n, d) for d in dens):
            continue
        match = [n["deck"].get(k) for k in spec["match"]]
        candidates = [d for d in dens if not _same(d, n) and d["round"] == n["round"]
                      and same_work(n, d)
                      and [d["deck"].get(k) for k in spec["match"]] == match
                      and (not spec["same_variant"] or d["variant"] == n["variant"])
                      and (not spec.get("same_kernel") or d["kernel"] == n["kernel"])]
        if not candidates and any(_same(d, n) for d in dens):
            continue  # a result the denominator selects too has nothing to be paired with
        if len(candidates) != 1:
            names = sorted(c["job"] + "/" + c["kernel"] for c in candidates)
            others = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if names[3:] else "")
            notes.append(f"{n['job']}/{n['kernel']}: " + (
                f"{len(candidates)} denominators could pair with it ({others}); add a match "
                "key or narrow the selections" if candidates else
                "no denominator of the same round and " + ", ".join(spec["match"] or ["deck"])))
            continue
        d = candidates[0]
        a, b = _value(spec, n), _value(spec, d)
        if a is None or b is None:
            lacking = n if a is None else d
            notes.append(f"{lacking['job']}/{lacking['kernel']}: no {spec['metric']}")
            continue
        hib = higher_is_better(spec, n)
        row = {"match": match, "label": [n["deck"].get(k) for k in spec["label"]],
               "numerator": n["kernel"], "numerator_implementation": n["implementation"],
               "denominator": d["kernel"], "denominator_implementation": d["implementation"],
               "higher_is_better": hib, "rounds": {}, "values": {}, "failed": []}
        row = rows.setdefault(_pair_key(row), row)
        if n["round"] in row["rounds"]:
            notes.append(f"{n['job']}/{n['kernel']}: a second result for round {n['round']} "
                         "of the same row; add a label key")
            continue
        row["rounds"][n["round"]] = a / b if hib else b / a
        row["values"][n["round"]] = (a, b)
        shares = comm_shares(n["entry"])
        if shares is not None:
            row.setdefault("comm", {})[n["round"]] = shares
        row["failed"] += [f"{s['job']} (round {s['round']})" for s in (n, d) if not s["passed"]]
    out_rows = list(rows.values())  # in the order of the jobs and their kernels
    for row in out_rows:
        row["aggregates"] = {how: aggregate(list(row["rounds"].values()), how)
                             for how in spec["aggregate"]}
        for key in row.keys() & {"rounds", "values", "comm"}:
            row[key] = {str(k): v for k, v in sorted(row[key].items())}
    return {"name": spec["name"], "title": spec.get("title") or spec["name"],
            "metric": spec["metric"], "match": spec["match"], "label": spec["label"],
            "aggregate": spec["aggregate"], "per_round": spec.get("per_round"),
            "numerator": spec["numerator"], "denominator": spec["denominator"],
            "rounds": sorted({int(r) for row in out_rows for r in row["rounds"]}),
            "rows": out_rows, "notes": notes}


def _pair_key(row):
    """What names a row of a ratio table."""
    return values_key([row["match"], row["label"], row["numerator"], row["denominator"]])


def campaign_tables(path, specs=None, how=None, energy=False):
    """(campaign name, manifest path, [tables], [notes]) of a campaign directory; specs (checked)
    replace its manifest's, how the tables' aggregate; energy adds rows' energy ratios."""
    result_set = resultset.open(path, need_runs=False)
    if result_set.manifest is None:
        resultset.read_manifest(path)  # says why it is not a campaign
    manifest_path, manifest = result_set.manifest_path, result_set.manifest
    specs = manifest.get("compare") or [] if specs is None else specs
    if not isinstance(specs, list):
        raise ToolError(f"{manifest_path}: compare: not a list (edit the campaign and generate "
                        "again rather than this file)", 2)
    items, notes = load_items(result_set)
    most = manifest.get("max_ranks_per_node")
    if most is not None:
        notes.insert(0, f"generated with --max-ranks-per-node {most}: the campaign's jobs of "
                     "more ranks a node were left out, and no table has their rows")
    few = [j for j in manifest.get("left_out", []) if j["by"] == "min_ranks"]
    if few:
        notes.insert(0, f"generated without {len(few)} job(s) of fewer ranks than their run's "
                     f"min_ranks ({', '.join(dict.fromkeys(j['run'] for j in few))}): no "
                     "table has their rows")
    energy = energy and any(kernel_energy(item["entry"]) for item in items)
    tables = []
    for i, spec in enumerate(specs):
        try:
            spec = dict(spec, aggregate=[how]) if how else spec
            tables.append(ratio_table(spec, items))
            if energy:
                _add_energy(spec, tables[-1], items)
        except (KeyError, TypeError, AttributeError, ValueError):
            raise ToolError(f"{manifest_path}: compare[{i}] is not what karma-batch generate "
                            "writes (edit the campaign and generate again rather than this "
                            "file)", 2) from None
    return (manifest.get("campaign") or {}).get("name", "?"), manifest_path, tables, notes


def _add_energy(spec, table, items):
    """Adds per_watt and energy (as the row's rounds, values...) where a pair measured energy."""
    fom, by_field = {"metric": "fom.value"}, {}
    for key, figure in (("per_watt", "fom_per_watt"), ("energy", "joules_per_execution")):
        # Items with an energy figure as their FOM: per watt in the FOM's sense, J as a cost.
        stand_ins = [dict(item, entry={"fom": {
            "value": (kernel_energy(item["entry"]) or {}).get(figure),
            "higher_is_better": figure == "fom_per_watt" and higher_is_better(fom, item)}})
            for item in items]
        by_field[key] = {_pair_key(row): row for row in ratio_table(
            dict(spec, metric="fom.value", higher_is_better=None), stand_ins)["rows"]}
    if not any(by_field.values()):
        return
    none = {"rounds": {}, "values": {}, "higher_is_better": True,
            "aggregates": {how: None for how in table["aggregate"]}}
    for row in table["rows"]:
        for name, rows in by_field.items():
            e = rows.get(_pair_key(row))
            row[name] = {k: e[k] for k in none} if e else dict(none)


def csv_of(rows):
    """The rows as CSV text (csv writes None as an empty cell)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _selection_text(selection):
    return ", ".join(part for key, value in selection.items() for part in (
        [f"{k}={format_size(v)}" for k, v in value.items()] if key == "deck"
        else [f"{key} {'|'.join(value)}"]))


def comm_shares(kernel):
    """(largest share, largest waiting share) of a kernel's ranks (kernels[].comm), or None."""
    share, waiting = (field(kernel, f"comm.{key}") or [] for key in ("share", "waiting_share"))
    return (max(share), max(waiting, default=0.0)) if share else None


def _comm_text(row):
    """The numerator's largest communication share in any round, and waiting; '-' for none."""
    rounds = (row.get("comm") or {}).values()
    return f"{100 * max(r[0] for r in rounds):.0f}% (wait {100 * max(r[1] for r in rounds):.0f}%)" \
        if rounds else "-"


def _pair_cells(row):
    """A row's match and label values, its numerator and denominator."""
    return [format_size(v) for v in row["match"] + row["label"]] + [
        f"{row['numerator']} ({row['numerator_implementation']})",
        f"{row['denominator']} ({row['denominator_implementation']})"]


def _figure_cells(figures, t, *between):
    """'a / b = ratio' of each round as divided ('-' of none), `between`, the aggregates."""
    def cell(r):
        a, b = figures["values"][r][::1 if figures["higher_is_better"] else -1]
        return f"{format_value(a)} / {format_value(b)} = {figures['rounds'][r]:.3f}"

    cells = [cell(r) if r in figures["rounds"] else "-" for r in map(str, t["rounds"])]
    aggregates = [figures["aggregates"].get(how) for how in t["aggregate"]]
    return cells + list(between) + ["-" if x is None else f"**{x:.3f}**" for x in aggregates]


def _heads(t, middle, end):
    """A table's head: its keys, then middle, its rounds, end, its aggregates."""
    return [k.split(".")[-1] for k in t["match"] + t["label"]] + ["numerator", "denominator"] \
        + middle + [f"r{r}" for r in t["rounds"]] + end + [f"**{how}**" for how in t["aggregate"]]


def markdown(tables, heading="###"):
    """The ratio tables as Markdown lines, each with its energy ratios where it has them."""
    out = []
    for t in tables:
        comm = any(row.get("comm") for row in t["rows"])
        out += [f"{heading} {t['title']}", "",
                f"Ratio of `{t['metric']}`: {_selection_text(t['numerator'])} over "
                f"{_selection_text(t['denominator'])}, paired within each round"
                + (f" on {', '.join(t['match'])}" if t["match"] else "")
                + (f"; each side's {t['per_round']} of its processes in a round"
                   if t.get("per_round") else "")
                + "; above 1: the numerator is better. "
                + ", ".join(f"{how} of rounds" for how in t["aggregate"])
                + "; range: the rounds' lowest and highest ratio, '~' where it holds 1 (no "
                "measurable difference)."
                + (" comm share: the numerator's largest share of a rank's timed time spent "
                   "communicating and waiting for peers, in any round, and of it the largest "
                   "part spent waiting (kernels[].comm)." if comm else ""), ""]
        if not t["rows"]:
            out += ["No pairs." + (" " + "; ".join(t["notes"][:4]) if t["notes"] else ""), ""]
            continue
        rows = []
        for row in t["rows"]:
            span = min(row["rounds"].values()), max(row["rounds"].values())
            cells = _pair_cells(row) + _figure_cells(row, t, fmt_span(span, mark=True))
            if row["failed"]:
                cells[-1] += " (verification FAILED: " + ", ".join(row["failed"][:3]) + ")"
            rows.append(cells + ([_comm_text(row)] if comm else []))
        out += md_table(_heads(t, [], ["range"]) + (["comm share (wait)"] if comm else []), rows)
        out.append("")
        if t["notes"]:
            more = len(t["notes"]) - 10
            out += [f"- {n}" for n in t["notes"][:10]] + (
                [f"- ... and {more} more"] if more > 0 else []) + [""]
        if "per_watt" in t["rows"][0]:
            out += [f"{heading}# {t['title']}: energy", "",
                    "The same pairs, round by round, where both sides measured energy: *per W* "
                    "divides figures of merit per watt (above 1: the numerator is better per "
                    "watt), *energy* the denominator's joules per execution by the numerator's "
                    "(above 1: the numerator uses less energy); '-' where either side did not "
                    "measure it.", ""]
            out += md_table(_heads(t, ["ratio"], []), [
                _pair_cells(row) + [text] + _figure_cells(row[name], t) for row in t["rows"]
                for name, text in (("per_watt", "per W"), ("energy", "energy"))]) + [""]
    return out


def csv_text(tables):
    """One CSV row per table, pair and round; per-watt and energy ratios where measured."""
    energy = any("per_watt" in row for t in tables for row in t["rows"])
    rows = [["comparison", "match", "label", "numerator", "denominator", "round",
             "numerator_value", "denominator_value", "ratio"]
            + (["per_watt_ratio", "energy_ratio"] if energy else [])]
    for t in tables:
        for row in t["rows"]:
            for rnd, ratio in row["rounds"].items():
                rows.append([t["name"], json.dumps(row["match"]), json.dumps(row["label"]),
                             row["numerator"], row["denominator"], rnd, *row["values"][rnd],
                             ratio] + [row.get(name, {"rounds": {}})["rounds"].get(rnd)
                                       for name in ("per_watt", "energy") if energy])
    return csv_of(rows)
