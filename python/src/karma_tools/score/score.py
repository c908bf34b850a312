"""karma-score's Markdown (docs/score.md), the figure of record in one line for the other
tools, and the tools' one wording of a ratio and the interval its rounds (or runs) span."""

from karma_tools.core import md_table
from karma_tools.score import figure
from karma_tools.results import rules
from karma_tools.results.results import field, format_value
from karma_tools.results.cases import holds_one

PROGRAM = "karma-score"


# A table's measures: (label, field, its interval's field).
MEASURES = (("score", "score", "interval"), ("per watt", "per_watt", "per_watt_interval"))


def fmt_span(span, mark=False):
    """An interval of ratios; mark: ' ~' after one that holds 1 (no measurable difference)."""
    if span is None:
        return "-"
    return f"{span[0]:.3f}-{span[1]:.3f}" + (" ~" if mark and holds_one(span) else "")


def with_span(value, span):
    """A ratio and the interval its rounds span."""
    return "-" if value is None else f"{value:.3f} ({fmt_span(span)})"


def ratio_text(ratio, span):
    """with_span, '~' after an interval that holds 1; the ratio alone without one."""
    if ratio is None or span is None:
        return "-" if ratio is None else f"{ratio:.3f}"
    return with_span(ratio, span) + (" ~" if holds_one(span) else "")


def _reference_lines(reference, path):
    def listed(dotted):
        return ", ".join(field(reference, dotted) or []) or "?"

    lines = [f"Reference: **{reference['name']}** (`{path}`): {reference['device']['kind']} "
             f"{listed('device.names')}; suite {listed('suite.versions')} "
             f"({listed('suite.git_describe')}), Kokkos {listed('kokkos.versions')} "
             f"({listed('kokkos.backends')})"]
    if field(reference, "environment.captures"):
        lines[0] += "; " + ", ".join(f"{what} {listed('environment.' + key)}" for what, key in (
            ("host", "hosts"), ("CPU", "cpu_models"), ("GPU", "gpu_models"),
            ("driver", "drivers"), ("OS", "os")))
    lines[0] += f"; {len(reference['rows'])} rows."
    if len(reference.get("units") or []) > 1:  # a reference of several units
        lines += ["", f"Made of {len(reference['units'])} units: " + "; ".join(
            f"{', '.join(u['ids'])} (board {', '.join(u.get('boards') or ['?'])}"
            + (f", {u['held_back']} run(s) held back" if u.get("held_back") else "") + ")"
            for u in reference["units"]) + "."]
    if not any(r.get("rounds") for r in reference["rows"]):
        lines += ["", "The reference keeps no figures round by round: its side of each "
                  "interval is its median alone."]
    return lines + [""]


def board_line(record):
    """The set's GPU boards against the reference's, where it lacks one or has several; else ''."""
    boards, scores = record["boards"], record["boards"]["scores"]
    other = other_board(record)
    if not boards["reference"] or not boards["set"] or not other and not scores:
        return ""
    text = f"Board {', '.join(boards['set'])}" + (
        f", **a part number none of the reference's units has** ({', '.join(boards['reference'])})"
        if other else "")
    if scores:
        text += "; the reference's units score by board: " + ", ".join(
            f"{b} {v:.3f}" for b, v in scores.items() if v is not None)
    if record.get("board_band"):
        text += f"; its units of this board span {fmt_span(record['board_band'])}"
    return text


def _banded(record, of=""):
    """A figure's (of="per_watt_": its per watt's) rounds, the units' band and what they say."""
    band, words = record[of + "band"], record[of + "verdict"]
    return f"(rounds span {fmt_span(record[of + 'interval'])}" + \
        (f"; the reference's units {fmt_span(band)}" if band else "") + \
        (f": {words})" if words else ")")


def record_line(record):
    """The figure of record in one line (UNOFFICIAL first where it is not), or INCOMPLETE."""
    if not record["complete"]:
        return f"**INCOMPLETE**: {len(record['missing'])} of {record['rows']} scored rows " \
            "have no figure, so no overall is given (missing rows below)."
    text = "**UNOFFICIAL** " * bool(record.get("unofficial")) + \
        f"**{figure.NAME.capitalize()}: {record['figure']:.3f}** " + _banded(record)
    if record["per_watt"] is not None:
        text += f"; per watt {record['per_watt']:.3f} " + (
            _banded(record, "per_watt_") if record["band"]
            else f"({fmt_span(record['per_watt_interval'])})")
    if record["units"] > 1:
        text += f"; the reference is made of {record['units']} units"
    boards = board_line(record)
    text += ". " + boards if boards else ""
    if record["code_changed"]:
        text += f". **{record['code_changed']} of {record['rows']} rows ran other kernel " \
            "code than the reference's**: the figure mixes the code's change with the machine's"
    if record["code_unknown"]:
        text += f". {record['code_unknown']} of {record['rows']} rows have code versions of " \
            "another scheme than the reference's: whether their code is the same is not known"
    return text + "."


def node_line(record):
    """The per-node figure in one line, or why there is none."""
    gpus = f"{record['gpus']} GPU{'s' * (record['gpus'] > 1)}"
    if not record["scored"]:
        return f"Per node ({gpus}): not scored, {record['why']}."
    if not record["complete"]:
        return f"**Per node ({gpus}): INCOMPLETE**: {len(record['missing'])} of " \
            f"{record['rows']} node rows have no figure ({', '.join(record['missing'][:4])})."
    text = f"**Per node, {gpus} against the reference's {record['reference_gpus']}: " \
        f"{record['figure']:.3f}** " + _banded(record)
    if record["per_watt"] is not None:
        text += f"; per watt {record['per_watt']:.3f} " + _banded(record, "per_watt_")
    apps = [f"{app} {a['score']:.3f}" for app, a in record["apps"].items() if a["score"]]
    return text + "; by app: " + ", ".join(apps) + "."


def gpus_alone_lines(gpus):
    """The node's GPUs, each alone on the large decks: a table, and those outside the band."""
    if not gpus:
        return []
    scores = [g["score"] for g in gpus if g["score"]]
    outside = [f"`{g['uuid']}`" for g in gpus if g["band"] and g["verdict"] != figure.WITHIN]
    spread = f"the best {max(scores) / min(scores) - 1:.1%} above the slowest" if scores \
        else "no score"
    band = f"outside the reference's unit band: {', '.join(outside)}" if outside else \
        "none outside the reference's unit band" if any(g["band"] for g in gpus) else \
        "the reference has no unit band (one unit)"
    table = md_table(["GPU", "board", "rows", "score (rounds)", "units' band", "difference"], [
        [f"`{g['uuid']}`" + " (per GPU)" * g["per_gpu"], g["board"] or "?", g["rows"],
         with_span(g["score"], g["interval"]), fmt_span(g["band"]), g["verdict"] or "-"]
        for g in gpus])
    return table + ["", f"The node's {len(gpus)} GPUs, each alone: {spread}; {band}.", ""]


def _tier_table(s, heads, cells):
    """A table of a row per tier and measure, its cells(t, field, span) under heads."""
    return md_table(["tier", "measure", *heads], [
        [tier, measure, *cells(s["tiers"][tier], field, span)]
        for tier in rules.TIERS for measure, field, span in MEASURES])


def _summary_table(s, weights):
    apps = list(weights)

    def cells(t, field, span):
        rows, scored = len(t["rows"]), sum(1 for r in t["rows"] if r["in_score"])
        coverage = f"{t['coverage']:.0%} ({rows - len(t['missing'])}/{rows} rows)" \
            if field == "score" else f"{sum(a['per_watt_rows'] for a in t['apps'].values())}" \
            f"/{scored} rows scored"
        return [with_span(a[field], a[span]) if a["complete"] else
                f"incomplete ({a['rows']}/{a['of']} rows)" for a in map(t["apps"].get, apps)] \
            + [f"**{with_span(t[field], t[span])}**" if t["complete"] else "INCOMPLETE", coverage]

    absent = [a for a in apps if s["tiers"]["baseline"]["apps"][a]["of"] == 0]
    return _tier_table(s, [f"{a} ({weights[a]:.3g})" for a in apps]
                       + ["**overall**", "coverage"], cells) + [
        "", "Above 1: better than the reference (column heads: the apps' weights); in "
        "parentheses the interval the rounds span. Per watt: over the rows that measured "
        "energy on both sides. Scores and overall: the rows of the "
        f"{', '.join(rules.SCORED_CLASSES)} classes. The figure of record is the baseline "
        "overall. The optimized tier divides the set's best figure of any implementation "
        "(vendor libraries, hand-written code) by the reference's baseline (Kokkos) "
        "figure: it shows what such code adds, and a set of the reference machine itself "
        "scores above 1 there." + (
            f" The reference has no scored rows for {', '.join(absent)}: the overall is over "
            "the other apps, their weights normalised again." if absent else ""), ""]


def _class_table(s):
    """The overall score of each class on its own."""
    classes = s["tiers"]["baseline"]["classes"]

    def cells(t, field, span):
        shown = [with_span(c[field], c[span]) if c["complete"] else "INCOMPLETE"
                 for c in [*map(t["classes"].get, classes), t]]
        return shown[:-1] + [f"**{shown[-1]}**"]  # the overall in bold

    return _tier_table(s, [c if classes[c]["in_score"] else f"{c} (not in the overall)"
                           for c in classes] + ["**overall**"], cells) + [
        "", "Each class's score: the weighted geometric mean over the apps of their rows "
        "of that class alone. The small class is sized for tests: on a GPU its figures are "
        "launch latency (docs/run-rules.md), reported here and left out of the overall.", ""]


def _rows_table(s):
    def cells(r, *verdict):
        return [format_value(r["figure"]), with_span(r["ratio"], r["interval"]), *verdict,
                ratio_text((r["per_watt"] or {}).get("ratio"), None)]

    rows = [[figure.row_name(b), b["units"], format_value(b["reference"]),
             *cells(b, figure.verdict(b["interval"], b.get("band")) or "-"), *cells(o)]
            for b, o in zip(s["tiers"]["baseline"]["rows"], s["tiers"]["optimized"]["rows"])]
    return md_table(["row", "units", "reference", "baseline", "ratio (rounds)", "difference",
                     "per W", "optimized", "ratio (rounds)", "per W"], rows) + [""]


# The lists of rows under a set's tables: (key, heading, item), str.format'ed.
_LISTS = (
    ("missing", "Rows of the reference without a figure in the {tier} tier ({n}):",
     "- {name}: {why}"),
    ("no_energy", "Rows without energy in the {tier} per-watt score:",
     "- {name}: not measured by the {why}"),
    ("code_changed", "Rows whose kernels ran other code than the reference's ({tier}): their "
     "ratios include the code's change, not the machine's alone ({n}):", "- {name}: {why}"),
    ("code_unknown", "Rows whose code versions another scheme made than the reference's, not "
     "compared ({tier}; a reference of this suite's compares them) ({n}):", "- {name}: {why}"),
    ("not_in_reference", "Rows not in the reference, left out ({tier}):", "- {name}"),
)


def _lists(s):
    out = []
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        for key, head, item in _LISTS:
            if t[key]:
                out += [head.format(tier=tier, n=len(t[key])), ""]
                out += [item.format(name=figure.row_name(r), why=r.get(key)) for r in t[key]] + [""]
    return out + ([f"Results left out ({len(s['left_out'])}):", ""] + [
        f"- `{item['file']}`: {'; '.join(item['reasons'])}" for item in s["left_out"]] + [""]
        if s["left_out"] else [])


def other_board(record):
    """' (board B: a part number none of the reference's units has)', or ''."""
    boards = record["boards"]
    other = [b for b in boards["set"] if boards["reference"] and b not in boards["reference"]]
    return f" (board {', '.join(other)}: a part number none of the reference's units has)" \
        if other else ""


def title(sets):
    """The first line: the sets INCOMPLETE, UNOFFICIAL or of a board the reference lacks."""
    short = [s for s in sets if not s["record"]["complete"]]
    off = [s for s in sets if s["record"]["complete"] and s["record"].get("unofficial")]
    boards = [s["label"] + other_board(s["record"]) for s in sets
              if s["record"]["complete"] and other_board(s["record"])]
    return "# karma score" + (": INCOMPLETE (" + "; ".join(
        f"{s['label']} lacks {len(s['record']['missing'])} of {s['record']['rows']} scored "
        "rows" for s in short) + "): no overall figure" if short else "") + (
        ": UNOFFICIAL (" + "; ".join(f"{s['label']}: {'; '.join(s['record']['unofficial'])}"
                                     for s in off) + ")" if off else "") + (
        ": " + "; ".join(boards) if boards else "")


def section(report):
    """Each set's figure of record as a section of karma-report's document."""
    lines = ["## The procurement figure", "",
             *_reference_lines(report["reference"], report["reference_file"])]
    for s in report["sets"]:
        lines += [f"`{s['path']}`: {s['scored']} of {s['results']} results scored; "
                  + record_line(s["record"]), ""]
    return lines + [f"Weights: `{report['weights_file']}`. `karma-score` gives the rows, "
                    "apps and classes behind the figure (docs/score.md).", ""]


def markdown(report):
    lines = [title(report["sets"]), "",
             *_reference_lines(report["reference"], report["reference_file"]),
             f"Weights: `{report['weights_file']}`.", ""]
    for s in report["sets"]:
        lines += [f"## {s['label']}", "",
                  f"`{s['path']}`: {s['scored']} of {s['results']} results scored"
                  + (f" ({', '.join(s['devices'])})" if s["devices"] else "") + ".", "",
                  record_line(s["record"]), "", node_line(s["node"]), "",
                  *gpus_alone_lines(s["gpus_alone"])]
        if s["record"].get("unofficial"):
            lines += ["Not a figure of record (docs/score.md#official-or-not):", ""] + \
                [f"- {why}" for why in s["record"]["unofficial"]] + [""]
        lines += _summary_table(s, report["weights"])
        lines += _class_table(s) if s["record"]["complete"] else [
            "Classes: not scored, the set is incomplete.", ""]
        lines += _rows_table(s) + _lists(s)
    return "\n".join(lines)
