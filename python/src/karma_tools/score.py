"""karma-score: the procurement score of a machine against a reference
machine, under the run rules (docs/run-rules.md; karma_tools.rules reads
what the mini-apps wrote of them)."""

import argparse
import json
import os
import sys

from . import ToolError, __version__, atomic_write, main_wrapper, write_all
from . import bundle, figure, page, rules
from .figure import (DEFAULT_REFERENCE, DEFAULT_WEIGHTS, KINDS, default_weights, load_reference,
                     load_weights, make_reference, row_name, score_set, shipped)
from .results import format_value

PROGRAM = "karma-score"

USAGE = """karma-score [-h] [--version] [LABEL=]SET [[LABEL=]SET ...] [--reference FILE]
                   [--weights FILE] [--json OUT] [--page FILE.md]
       karma-score reference SET -o FILE [--name NAME] [--kind {gpu,host}]"""

DESCRIPTION = """\
Scores result sets against a reference machine under the run rules
(docs/run-rules.md). A SET is a directory tree of results, a campaign
directory of karma-batch generate, or a .tar.xz archive of karma-batch
archive.

karma-score reference SET -o FILE: makes the reference file from one set.
Its rows are the (app, class, case, work) of the reportable baseline
results' Kokkos kernels: per run, the best figure of merit among the run's
kernels of that work; the reference figure is the median over the runs (the
rounds), and the same for the FOM per watt where the kernels measured
energy. Runs of the same deck are rounds of one another; where a row has
runs of several decks (tuning), its figure is the best of their medians. The
file also names the machine: devices, suite and Kokkos versions, backend and
the node's environment (from the karma-envcapture captures beside the
results). A set of both GPU and host results needs --kind.

karma-score SET... [--reference FILE]: scores each set on its own (a set's
score never depends on the other sets given) against the reference, by
default the one the suite ships (an H100 node: campaigns/procurement/
reference-h100.json of the checkout, or PREFIX/share/karma/). Per tier: baseline (the
Kokkos kernels of reportable baseline runs) and optimized (every kernel of
every reportable run: the best of the work, vendor libraries included),
each row's figure is found as for the reference, and its ratio is figure /
reference (reference / figure when lower is better): above 1, faster than
the reference. A mini-app's score is the geometric mean of its rows'
ratios; the overall score the weighted geometric mean of the mini-apps'.
Both count the rows of the medium and large classes (and weak); the small
class, sized for tests and launch-bound on a GPU, is scored on its own line
and left out of them. Each class's score is shown apart.
The per-watt score is the same over the FOM per watt, on the rows that
measured energy on both sides (the others are listed).

Weights file: one 'PATTERN WEIGHT' per line, '#' comments; PATTERN is a
shell glob on the app name, the later line wins where two match; the
weights are normalised by their sum. A pattern that matches no app of the
reference is an error (FILE:LINE). Default: campaigns/procurement/
score-weights.txt (of the checkout, or PREFIX/share/karma/).

The figure of record (docs/score.md) is the baseline tier's overall: it
is given only for a set that has a figure for every row the weights give
weight to; otherwise the first line says INCOMPLETE, the missing rows are
listed, only the complete apps' scores are shown, and the exit status is 1.
Every ratio carries the interval its rounds span (the set's worst round over
the reference's best, and its best over the reference's worst; the app and
overall figures combine them bound by bound); a ratio whose interval holds 1
is a "no measurable difference". The optimized tier divides the set's best
of any implementation by the reference's baseline (Kokkos) figure: it shows
what vendor and hand-written code add, so the reference machine itself
scores above 1 there; it is never the figure of record.

Left out, each listed with its file and reasons: results that are not
reportable (results written before the run rules among them), did not pass
verification, or ran on another kind of device than the reference. Rows of
the reference that a set has no figure for are listed, with the coverage
(the share of the reference's rows present) per tier; rows the reference
does not have are listed and left out. Rows whose reference kernels'
code_version is not among the set's are marked and counted: their ratio
mixes a code change with the machine.

Output: Markdown on stdout; --json OUT the same as JSON; --page FILE.md one
page for the decision (the verdict, the figure with its interval, per-app
bars with their spread, per watt and the disclosure of a karma-bundle),
its chart beside it as FILE.png. A set named 'reference' is given as
./reference."""

EPILOG = "exit status: 0 scored (or reference written); 1 a set is INCOMPLETE (it lacks a " \
    "row the weights give weight to: no overall is given); 2 bad input (one line naming the " \
    "file; nothing written); 3 could not write an output"


# --- output ---------------------------------------------------------------------------


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"


def fmt_span(span):
    return "-" if span is None else f"{span[0]:.3f}-{span[1]:.3f}"


def _with_span(value, span):
    """A ratio and the interval its rounds span."""
    return "-" if value is None else f"{value:.3f} ({fmt_span(span)})"


def _reference_lines(reference, path):
    device = reference["device"]
    env = reference.get("environment") or {}
    kokkos = reference.get("kokkos") or {}
    suite = reference.get("suite") or {}
    lines = [f"Reference: **{reference['name']}** (`{path}`): {device['kind']} "
             f"{', '.join(device.get('names') or []) or '?'}; suite "
             f"{', '.join(suite.get('versions') or []) or '?'} "
             f"({', '.join(suite.get('git_describe') or []) or '?'}), Kokkos "
             f"{', '.join(kokkos.get('versions') or []) or '?'} "
             f"({', '.join(kokkos.get('backends') or []) or '?'})"]
    if env.get("captures"):
        lines[0] += "; " + ", ".join(
            f"{what} {', '.join(env.get(key) or []) or '?'}" for what, key in
            (("host", "hosts"), ("CPU", "cpu_models"), ("GPU", "gpu_models"),
             ("driver", "drivers"), ("OS", "os")))
    lines[0] += f"; {len(reference['rows'])} rows."
    if not any(r.get("rounds") for r in reference["rows"]):
        lines.append("")
        lines.append("The reference keeps no figures round by round: its side of each "
                     "interval is its median alone.")
    return lines + [""]


def record_line(record):
    """The figure of record in one line, or INCOMPLETE and why."""
    if not record["complete"]:
        return f"**INCOMPLETE**: {len(record['missing'])} of {record['rows']} scored rows " \
            "have no figure, so no overall is given (missing rows below)."
    text = f"**{figure.NAME.capitalize()}: {record['figure']:.3f}** (rounds span " \
        f"{fmt_span(record['interval'])}: {record['verdict']})"
    if record["per_watt"] is not None:
        text += f"; per watt {record['per_watt']:.3f} ({fmt_span(record['per_watt_interval'])})"
    if record["code_changed"]:
        text += f". **{record['code_changed']} of {record['rows']} rows ran other kernel " \
            "code than the reference's**: the figure mixes the code's change with the machine's"
    if record["code_unknown"]:
        text += f". {record['code_unknown']} of {record['rows']} rows have code versions of " \
            "another scheme than the reference's: whether their code is the same is not known"
    return text + "."


def _app_cell(a, field):
    if a["complete"]:
        return _with_span(a[field], a[f"{field}_interval" if field != "score" else "interval"])
    return f"incomplete ({a['rows']}/{a['of']} rows)"


def _summary_table(s, weights):
    apps = list(weights)
    out = ["| tier | measure | " + " | ".join(f"{a} ({weights[a]:.3g})" for a in apps)
           + " | **overall** | coverage |",
           "|---|---|" + "---|" * (len(apps) + 2)]
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        rows = len(t["rows"])
        scored = sum(1 for r in t["rows"] if r["in_score"])
        for measure, field in (("score", "score"), ("per watt", "per_watt")):
            cells = [_app_cell(t["apps"][a], field) for a in apps]
            span = t["interval" if field == "score" else "per_watt_interval"]
            overall = f"**{_with_span(t[field], span)}**" if t["complete"] else "INCOMPLETE"
            coverage = f"{t['coverage']:.0%} ({rows - len(t['missing'])}/{rows} rows)" \
                if field == "score" else f"{sum(a['per_watt_rows'] for a in t['apps'].values())}" \
                f"/{scored} rows scored"
            out.append(f"| {tier} | {measure} | " + " | ".join(cells)
                       + f" | {overall} | {coverage} |")
    out += ["", "Above 1: better than the reference (column heads: the apps' weights); in "
            "parentheses the interval the rounds span. Per watt: over the rows that measured "
            "energy on both sides. Scores and overall: the rows of the "
            f"{', '.join(rules.SCORED_CLASSES)} classes. The figure of record is the baseline "
            "overall. The optimized tier divides the set's best figure of any implementation "
            "(vendor libraries, hand-written code) by the reference's baseline (Kokkos) "
            "figure: it shows what such code adds, and a set of the reference machine itself "
            "scores above 1 there."]
    absent = [a for a in apps if s["tiers"]["baseline"]["apps"][a]["of"] == 0]
    if absent:
        out[-1] += f" The reference has no scored rows for {', '.join(absent)}: the overall " \
            "is over the other apps, their weights normalised again."
    return out + [""]


def _class_table(s):
    """The overall score of each class on its own, those outside the
    overall marked; a class lacking a weighted row has none."""
    classes = list(s["tiers"]["baseline"]["classes"])
    out = ["| tier | measure | " + " | ".join(
        c if s["tiers"]["baseline"]["classes"][c]["in_score"] else f"{c} (not in the overall)"
        for c in classes) + " | **overall** |", "|---|---|" + "---|" * (len(classes) + 1)]
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        for measure, field in (("score", "score"), ("per watt", "per_watt")):
            cells = []
            for c in classes:
                cls = t["classes"][c]
                span = cls["interval" if field == "score" else "per_watt_interval"]
                cells.append(_with_span(cls[field], span) if cls["complete"] else "INCOMPLETE")
            overall = _with_span(t[field], t["interval" if field == "score" else
                                             "per_watt_interval"])
            out.append(f"| {tier} | {measure} | " + " | ".join(cells)
                       + f" | **{overall if t['complete'] else 'INCOMPLETE'}** |")
    out += ["", "Each class's score: the weighted geometric mean over the apps of their rows "
            "of that class alone. The small class is sized for tests: on a GPU its figures are "
            "launch latency (docs/run-rules.md), reported here and left out of the overall."]
    return out + [""]


def _difference(row):
    return figure.verdict(row["interval"]) or "-"


def _rows_table(s):
    base, opt = s["tiers"]["baseline"]["rows"], s["tiers"]["optimized"]["rows"]
    out = ["| row | units | reference | baseline | ratio (rounds) | difference | per W | "
           "optimized | ratio (rounds) | per W |", "|---|---|---|---|---|---|---|---|---|---|"]
    for b, o in zip(base, opt):
        cells = [row_name(b), b["units"], format_value(b["reference"])]
        for r in (b, o):
            cells += [format_value(r["figure"]), _with_span(r["ratio"], r["interval"])]
            if r is b:
                cells.append(_difference(b))
            cells.append(_fmt((r["per_watt"] or {}).get("ratio")))
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out + [""]


def _lists(s):
    out = []
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        if t["missing"]:
            out += [f"Rows of the reference without a figure in the {tier} tier "
                    f"({len(t['missing'])}):", ""]
            out += [f"- {row_name(r)}: {r['missing']}" for r in t["missing"]] + [""]
        if t["no_energy"]:
            out += [f"Rows without energy in the {tier} per-watt score:", ""]
            out += [f"- {row_name(r)}: not measured by the {r['no_energy']}"
                    for r in t["no_energy"]] + [""]
        if t["code_changed"]:
            out += [f"Rows whose kernels ran other code than the reference's ({tier}): their "
                    "ratios include the code's change, not the machine's alone "
                    f"({len(t['code_changed'])}):", ""]
            out += [f"- {row_name(r)}: {r['code_changed']}" for r in t["code_changed"]] + [""]
        if t["code_unknown"]:
            out += [f"Rows whose code versions another scheme made than the reference's, not "
                    f"compared ({tier}; a reference of this suite's compares them) "
                    f"({len(t['code_unknown'])}):", ""]
            out += [f"- {row_name(r)}: {r['code_unknown']}" for r in t["code_unknown"]] + [""]
        if t["not_in_reference"]:
            out += [f"Rows not in the reference, left out ({tier}):", ""]
            out += [f"- {row_name(r)}" for r in t["not_in_reference"]] + [""]
    if s["left_out"]:
        out += [f"Results left out ({len(s['left_out'])}):", ""]
        out += [f"- `{item['file']}`: {'; '.join(item['reasons'])}" for item in s["left_out"]]
        out.append("")
    return out


def title(sets):
    """The first line: INCOMPLETE, naming the sets, when any set is."""
    short = [s for s in sets if not s["record"]["complete"]]
    if not short:
        return "# karma score"
    return "# karma score: INCOMPLETE (" + "; ".join(
        f"{s['label']} lacks {len(s['record']['missing'])} of {s['record']['rows']} scored "
        "rows" for s in short) + "): no overall figure"


def markdown(report):
    lines = [title(report["sets"]), ""]
    lines += _reference_lines(report["reference"], report["reference_file"])
    lines += [f"Weights: `{report['weights_file']}`.", ""]
    for s in report["sets"]:
        lines += [f"## {s['label']}", "",
                  f"`{s['path']}`: {s['scored']} of {s['results']} results scored"
                  + (f" ({', '.join(s['devices'])})" if s["devices"] else "") + ".", "",
                  record_line(s["record"]), ""]
        lines += _summary_table(s, report["weights"])
        if s["record"]["complete"]:
            lines += _class_table(s)
        else:
            lines += ["Classes: not scored, the set is incomplete.", ""]
        lines += _rows_table(s)
        lines += _lists(s)
    return "\n".join(lines)


# --- the command line -----------------------------------------------------------------


def _parse_set(text):
    label, sep, path = text.partition("=")
    if sep and label and not os.path.exists(text):
        return label, path
    return figure.label_of(text), text


def reference_main(argv):
    p = argparse.ArgumentParser(prog=f"{PROGRAM} reference", epilog=EPILOG,
                                description="Makes a reference file from one result set "
                                "(see karma-score --help).")
    p.add_argument("set", metavar="SET", help="results directory, campaign directory or "
                   "archive of the reference machine")
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="the reference file to write (JSON)")
    p.add_argument("--name", help="the reference machine's name (default: the set's)")
    p.add_argument("--kind", choices=KINDS, help="the device kind, where the set has both")
    args = p.parse_args(argv)

    def run():
        doc = make_reference(args.set, args.name, args.kind)
        atomic_write(args.output, json.dumps(doc, indent=2) + "\n")
        print(f"{PROGRAM}: wrote {args.output} ({len(doc['rows'])} rows from "
              f"{doc['results']} results)", file=sys.stderr)
        return 0

    return main_wrapper(PROGRAM, run)


def score_main(argv):
    p = argparse.ArgumentParser(prog=PROGRAM, usage=USAGE, description=DESCRIPTION,
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sets", nargs="+", metavar="[LABEL=]SET", help="a result set to score")
    p.add_argument("--reference", metavar="FILE",
                   help="the reference file (karma-score reference; default the shipped "
                   f"H100 node's, {DEFAULT_REFERENCE})")
    p.add_argument("--weights", metavar="FILE", help=f"app weights (default {DEFAULT_WEIGHTS})")
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON")
    p.add_argument("--page", metavar="FILE.md", help="also write the decision page of the "
                   "one set given (Markdown; its chart beside it as FILE.png)")
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    args = p.parse_args(argv)

    def run():
        if args.page and (len(args.sets) != 1 or not args.page.endswith(".md")):
            raise ToolError(f"--page {args.page}: a page is of one set and its name ends in "
                            ".md", 2)
        reference_file = args.reference or shipped(DEFAULT_REFERENCE, "shipped reference",
                                                   "--reference")
        reference = load_reference(reference_file)
        apps = sorted({r["app"] for r in reference["rows"]},
                      key=lambda a: figure.sort_key((a,)))
        weights_file = args.weights or default_weights()
        weights = load_weights(weights_file, apps)
        sets = [score_set(path, label, reference, weights)
                for label, path in map(_parse_set, args.sets)]
        for s in sets:
            s["record"] = figure.of_record(s)
        report = {"karma_score": 1, "reference_file": reference_file, "reference": reference,
                  "weights_file": weights_file, "weights": weights, "sets": sets}
        outputs = []
        if args.json:
            outputs.append((args.json, json.dumps(report, indent=2) + "\n"))
        if args.page:
            text, png = page.render(sets[0], weights, reference, args.page,
                                    *_bundle_facts(sets[0]["path"]))
            outputs += [(args.page, text + "\n"), (args.page[:-3] + ".png", png)]
        write_all(outputs)
        sys.stdout.write(markdown(report) + "\n")
        return _status(sets)

    return main_wrapper(PROGRAM, run)


def _bundle_facts(path):
    """(reportable, disclosure) of a set for its page: karma-bundle check's
    answer ((bool, [reasons])) and the disclosure of a bundle; (None, None)
    for a set that is no bundle."""
    if not bundle.is_bundle(path):
        return None, None
    return bundle.reportable(path), bundle.disclosure_of(path)


def _status(sets):
    short = [s for s in sets if not s["record"]["complete"]]
    for s in short:
        print(f"{PROGRAM}: {s['label']} is INCOMPLETE: it lacks {len(s['record']['missing'])} "
              f"of the {s['record']['rows']} rows the weights give weight to; no overall "
              "figure; exit 1", file=sys.stderr)
    return 1 if short else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "reference":
        return reference_main(argv[1:])
    return score_main(argv)
