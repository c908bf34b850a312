"""karma-report's comparison sections: karma-compare's JSON, or a campaign's side tables."""

import os
from karma_tools.results import archive, resultset
from karma_tools.compare import sides
from karma_tools.core import ToolError, md_table
from karma_tools.results.results import is_number
from karma_tools.score.score import record_line


def side_by_side(root, out_dir, compare_from=None):
    """Each campaign's ratio tables under root; those named as compare_from use its compare:."""
    lines = []
    found = archive.walk_files(root, ".json")
    for path in [p for p in found if os.path.basename(p) == resultset.MANIFEST]:
        try:
            doc = resultset.read_manifest(path)[1]
        except ToolError:
            continue
        if not doc.get("compare"):
            continue
        specs = compare_from.compare if compare_from is not None and \
            (doc.get("campaign") or {}).get("name") == compare_from.name else None
        name, _, tables, notes = sides.campaign_tables(path, specs)
        # The campaign's folder, inside any archive (two campaigns of one archive read apart).
        holder = archive.archive_of(path)
        where = os.path.relpath(os.path.dirname(path), out_dir)
        link = os.path.relpath(holder, out_dir) if holder != path else f"{where}/campaign.json"
        lines += [f"## Side by side: campaign {name} ({where})", "",
                  f"_From [{link}]({link}); "
                  f"`karma-compare --campaign {where}` prints the same tables._", ""]
        lines += sides.markdown(tables, "###")
        missing = [n for n in notes if "no results" in n]
        if missing:
            lines += [f"{len(missing)} job(s) without results: "
                      + "; ".join(missing[:6]) + ("; ..." if len(missing) > 6 else ""), ""]
    return lines


def read_comparison(path):
    """A karma-compare --json document, checked for the fields read here."""
    doc = archive.read_json(path)

    def need(ok, key, what):
        if not ok:
            raise ToolError(f"{path}: {key}: {what} (write it with karma-compare --json)", 2)

    # Version 2 (1.1.0) dropped version 1's summary and row weights, unread here.
    need(isinstance(doc, dict) and doc.get("karma_compare") in (1, 2), "karma_compare",
         "not a karma-compare document of version 1 or 2")
    need(isinstance(doc.get("baseline"), str), "baseline", "expected a set's label")
    need(isinstance(doc.get("sets"), list) and all(
        isinstance(s, dict) and isinstance(s.get("label"), str) for s in doc["sets"]),
         "sets", "expected a list of sets with labels")
    labels = [s["label"] for s in doc["sets"]]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    need(not twice, "sets", f"two sets have the label '{twice[0]}'" if twice else "")
    need(doc["baseline"] in labels, "baseline", f"'{doc['baseline']}' is no set's label")
    need(isinstance(doc.get("rows"), list), "rows", "expected a list")
    for i, row in enumerate(doc["rows"]):
        need(isinstance(row, dict) and all(isinstance(row.get(k), str)
                                           for k in ("app", "case", "kernel")),
             f"rows[{i}]", "expected app, case and kernel")
        need(isinstance(row.get("values"), dict), f"rows[{i}].values", "expected an object")
        for label, v in row["values"].items():
            need(v is None or isinstance(v, dict) and all(
                v.get(k) is None or is_number(v[k]) for k in ("ratio", "per_watt_ratio")),
                 f"rows[{i}].values.{label}", "expected null or an object with number ratios")
    record = doc.get("record")
    for label, rec in record.items() if isinstance(record, dict) else ():
        try:
            _record_cell(rec, False)
        except (KeyError, TypeError, ValueError, IndexError):
            need(False, f"record.{label}", "expected karma-score's figure of record")
    return doc


def _spans(entries, values):
    """xerr of bars: each ratio's distance to the ends of its `interval`."""
    spans = [e.get("interval") if v else None for e, v in zip(entries, values)]
    spans = [s if isinstance(s, list) and len(s) == 2 and all(map(is_number, s)) else None
             for s in spans]
    return [[max(v - s[0], 0) if s else 0 for s, v in zip(spans, values)],
            [max(s[1] - v, 0) if s else 0 for s, v in zip(spans, values)]]


def ratio_plot(plotter, app, rows, labels, base):
    """A bar per row of one mini-app and set (and per watt); its Markdown lines."""
    fig, ax = plotter.plt.subplots(figsize=(7.5, 0.8 + 0.22 * len(rows) * len(labels)),
                                   constrained_layout=True)
    step = 0.8 / (2 * len(labels))
    for j, label in enumerate(labels):
        for k, (key, text) in enumerate((("ratio", ""), ("per_watt_ratio", " per W"))):
            entries = [r["values"].get(label) or {} for r in rows]
            values = [e.get(key) or 0 for e in entries]
            if any(values):
                ax.barh([y + (2 * j + k) * step - 0.4 + step / 2 for y in range(len(rows))],
                        values, height=step, color=f"C{2 * j + k}",
                        linewidth=0, label=f"{label}/{base}{text}",
                        xerr=_spans(entries, values) if key == "ratio" else None,
                        error_kw={"elinewidth": 0.6, "capsize": 1.5})
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['case']} / {r['kernel']}" for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"ratio to {base} (above 1: better; whiskers: the interval of the runs)")
    ax.set_title(f"{app}: each figure of merit against {base}", fontsize=9)
    return plotter.image(fig, f"compare-{app}", f"{app}: ratios to {base}", [ax], ncol=2)


def _record_cell(record, is_base):
    """The procurement figure karma-compare gave a set, or why there is none."""
    if is_base:
        return "the reference"
    if not isinstance(record, dict):
        return "- (not in this comparison)"
    if "why" in record:
        return "none: no reportable baseline results" if "no reportable" in \
            str(record["why"]) else "none"
    return record_line(record)


def comparison_section(path, out_dir, plotter):
    """A karma-compare document: each set's figure of record; per mini-app, the ratios plotted."""
    doc = read_comparison(path)
    base = doc["baseline"]
    labels = [s["label"] for s in doc["sets"] if s["label"] != base]
    where = os.path.relpath(path, out_dir)
    out = ["## Machines compared", "",
           f"_From [{where}]({where}) (karma-compare --json); baseline **{base}**, ratios "
           "above 1 better than it._", ""]
    rows = [[label, _record_cell((doc.get("record") or {}).get(label), label == base)]
            for label in [base] + labels]
    out += md_table(["set", "procurement figure (rounds)"], rows) + [""]
    if not plotter.enabled:
        return out
    for app in dict.fromkeys(row["app"] for row in doc["rows"]):
        members = [r for r in doc["rows"] if r["app"] == app and
                   any((r["values"].get(label) or {}).get("ratio") for label in labels)]
        if members:
            out += ratio_plot(plotter, app, members, labels, base)
    return out
