"""karma-score: the procurement score of a machine against a reference
machine, under the run rules (docs/run-rules.md; karma_tools.rules reads
what the mini-apps wrote of them)."""

import argparse
import fnmatch
import json
import math
import os
import sys

from . import APPS, ToolError, __version__, archive, atomic_write, main_wrapper, read_json
from . import codeversion, rules, sides
from .results import format_value, is_number, load_set

PROGRAM = "karma-score"
REFERENCE_FORMAT = 1
DEFAULT_WEIGHTS = os.path.join("campaigns", "procurement", "score-weights.txt")
# The reference machine's figures that ship with the suite (docs/run-rules.md).
DEFAULT_REFERENCE = os.path.join("campaigns", "procurement", "reference-h100.json")
KINDS = ("gpu", "host")

USAGE = """karma-score [-h] [--version] [LABEL=]SET [[LABEL=]SET ...] [--reference FILE]
                   [--weights FILE] [--json OUT] [--allow-partial]
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

Left out, each listed with its file and reasons: results that are not
reportable (results written before the run rules among them), did not pass
verification, or ran on another kind of device than the reference. Rows of
the reference that a set has no figure for are listed, with the coverage
(the share of the reference's rows present) per tier; rows the reference
does not have are listed and left out. Rows whose reference kernels'
code_version is not among the set's are marked and counted: their ratio
mixes a code change with the machine.

Output: Markdown on stdout; --json OUT the same as JSON. A set named
'reference' is given as ./reference."""

EPILOG = "exit status: 0 scored (or reference written); 1 a set covers less than all the " \
    "reference's rows in the baseline tier (without --allow-partial); 2 bad input (one line " \
    "naming the file; nothing written); 3 could not write an output"


# --- loading ------------------------------------------------------------------------


def _campaign_files(path):
    """([results files], [{file, reasons}] of jobs without results) of a
    campaign directory's jobs (its manifest knows where they are, under OUT
    or where the campaign ran), or None when path is not one."""
    if not archive.isfile(os.path.join(path, sides.MANIFEST)):
        return None
    manifest_path, manifest = sides.find_manifest(path)
    files, missing = [], []
    for entry in manifest["jobs"]:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            found = sides._results_file(manifest_path, manifest, entry)
            if found:
                files.append(found)
            else:
                missing.append({"file": f"{manifest_path}: job {entry['name']}",
                                "reasons": [sides.missing_reason(manifest_path, manifest, entry)]})
    return files, missing


def load_runs(path):
    """(the karma runs of a set, [{file, reasons}] of its campaign's jobs
    without results); see DESCRIPTION."""
    campaign = _campaign_files(path)
    if not campaign or not campaign[0]:  # not a campaign, or its results lie in the tree
        return load_set(path).runs, []
    runs = []
    for f in campaign[0]:
        runs += load_set(f, need_runs=False).runs
    return runs, campaign[1]


def left_out_reasons(run, kind):
    """Why a run cannot be scored ([] when it can)."""
    record = rules.reportable(run.doc)
    if not record.get("reportable"):
        reasons = [r for r in record.get("reasons") or [] if isinstance(r, str)]
        if run.reference:
            reasons.insert(0, f"output of a reference program ({run.reference}), not a "
                           "karma run")
        return reasons or ["not reportable"]
    if not run.passed:
        return ["did not pass verification"]
    if kind is not None and run.device_kind != kind:
        return [f"ran on a {run.device_kind or 'unknown'} device; the reference is {kind}"]
    return []


def split_runs(runs, kind):
    """(runs to score, [{file, reasons}] of those left out)."""
    kept, left_out = [], []
    for run in runs:
        reasons = left_out_reasons(run, kind)
        if reasons:
            left_out.append({"file": run.path, "reasons": reasons})
        else:
            kept.append(run)
    return kept, left_out


# --- figures ------------------------------------------------------------------------


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def _better(a, b, higher_is_better):
    if a is None:
        return b
    return max(a, b) if higher_is_better else min(a, b)


def run_figures(run, tier):
    """{row key: {units, higher_is_better, fom, per_watt, per_watt_units}}:
    one run's best figure (and best FOM per watt) of each work, over its
    kernels that count in `tier`."""
    out = {}
    for name, k in run.kernels.items():
        kernel = {"name": name, "implementation": k["implementation"]}
        if not rules.counts_in(tier, run.doc, kernel) or not is_number(k["value"]) \
                or k["value"] <= 0:
            continue
        key = rules.row_key(run.doc, kernel)
        fig = out.setdefault(key, {"units": k["units"], "higher_is_better":
                                   k["higher_is_better"], "fom": None, "per_watt": None,
                                   "per_watt_units": None, "code_versions": set(),
                                   "code_schemes": set()})
        if (k["units"], k["higher_is_better"]) != (fig["units"], fig["higher_is_better"]):
            continue  # not the same measure of the work: not an alternative
        code = k["entry"].get("code_version")
        if isinstance(code, str):
            fig["code_versions"].add(code)
            fig["code_schemes"].add(codeversion.scheme_of(k["entry"].get("code")))
        hib = fig["higher_is_better"]
        fig["fom"] = _better(fig["fom"], k["value"], hib)
        energy = k["energy"]
        if energy and energy["fom_per_watt"] is not None:
            fig["per_watt"] = _better(fig["per_watt"], energy["fom_per_watt"], hib)
            fig["per_watt_units"] = energy["fom_per_watt_units"]
    return out


def _deck_of(run):
    """What makes runs rounds of one another: the same deck (less its run
    section), tier, ranks and nodes."""
    return json.dumps([run.deck_values(), rules.reportable(run.doc).get("tier"), run.ranks,
                       run.nodes], sort_keys=True, default=str)


def _best_median(figs, field, hib):
    """(figure, runs): over decks, the best median of the runs' `field`."""
    best = None
    for runs in figs.values():
        values = [f[field] for f in runs if f[field] is not None]
        if values:
            m = median(values)
            if best is None or (m > best[0] if hib else m < best[0]):
                best = (m, len(values))
    return best or (None, 0)


def tier_figures(runs, tier):
    """{row key: {figure, runs, units, higher_is_better, per_watt,
    per_watt_runs, per_watt_units}} of a tier over a set's runs."""
    groups = {}
    for run in runs:
        deck = _deck_of(run)
        for key, fig in run_figures(run, tier).items():
            groups.setdefault(key, {}).setdefault(deck, []).append(fig)
    table = {}
    for key, decks in groups.items():
        first = next(iter(decks.values()))[0]
        units, hib = first["units"], first["higher_is_better"]
        decks = {d: [f for f in figs if (f["units"], f["higher_is_better"]) == (units, hib)]
                 for d, figs in decks.items()}
        figure, count = _best_median(decks, "fom", hib)
        per_watt, per_watt_count = _best_median(decks, "per_watt", hib)
        pw_units = next((f["per_watt_units"] for figs in decks.values() for f in figs
                         if f["per_watt"] is not None), None)
        code, schemes = ({x for figs in decks.values() for f in figs for x in f[field]}
                         for field in ("code_versions", "code_schemes"))
        table[key] = {"figure": figure, "runs": count, "units": units, "higher_is_better": hib,
                      "per_watt": per_watt, "per_watt_runs": per_watt_count,
                      "per_watt_units": pw_units, "code_versions": sorted(code),
                      "code_schemes": sorted(schemes)}
    return table


# --- the reference --------------------------------------------------------------------


def _distinct(values):
    return sorted({v for v in values if isinstance(v, str) and v})


def environment_summary(runs):
    """Host, CPU, GPU, driver and OS of the karma-envcapture captures
    beside the runs' results (results/<job>/environment/environment.json)."""
    captures = []
    for where in sorted({os.path.dirname(r.path) for r in runs}):
        path = os.path.join(where, "environment", "environment.json")
        if not archive.isfile(path):
            continue
        try:
            doc = read_json(path)
        except ToolError:
            continue
        if isinstance(doc, dict):
            captures.append(doc)

    def field(doc, *path):
        for part in path:
            doc = doc.get(part) if isinstance(doc, dict) else None
        return doc

    def os_of(doc):
        name, release = field(doc, "platform", "os"), field(doc, "platform", "release")
        return f"{name} ({release})" if name and release else name

    return {"captures": len(captures),
            "hosts": _distinct(field(c, "hostname") for c in captures),
            "cpu_models": _distinct(field(c, "cpu", "Model name") for c in captures),
            "gpu_models": _distinct(p for c in captures
                                    for p in field(c, "gpu", "products") or []),
            "drivers": _distinct(field(c, "gpu", "driver_version") for c in captures),
            "os": _distinct(os_of(c) for c in captures)}


def _reference_kind(path, runs, kind):
    kinds = sorted({r.device_kind or "unknown" for r in runs})
    if kind is None:
        if len(kinds) > 1:
            raise ToolError(f"{path}: reportable baseline results ran on {' and '.join(kinds)} "
                            "devices; choose one with --kind", 2)
        kind = kinds[0]
    if kind not in KINDS:
        raise ToolError(f"{path}: the reportable baseline results do not say what device "
                        "they ran on (ranks[].device.kind)", 2)
    return kind


def make_reference(path, name=None, kind=None):
    """The reference document of one set (see DESCRIPTION)."""
    runs, _ = load_runs(path)
    baseline = [r for r in runs if not left_out_reasons(r, None)
                and rules.reportable(r.doc).get("tier") == "baseline"]
    if not baseline:
        why = next((f"{r.path}: {'; '.join(left_out_reasons(r, None))}" for r in runs
                    if left_out_reasons(r, None)), "")
        raise ToolError(f"{path}: no reportable baseline result among {len(runs)} result(s)"
                        + (f" (e.g. {why})" if why else ""), 2)
    kind = _reference_kind(path, baseline, kind)
    used = [r for r in baseline if r.device_kind == kind]
    table = tier_figures(used, "baseline")
    if not table:
        raise ToolError(f"{path}: the reportable baseline results have no Kokkos kernel "
                        "with a figure of merit", 2)
    rows = []
    for key in sorted(table, key=_sort_key):
        t = table[key]
        per_watt = None if t["per_watt"] is None else \
            {"value": t["per_watt"], "units": t["per_watt_units"], "runs": t["per_watt_runs"]}
        rows.append(dict(_key_dict(key), figure=t["figure"], units=t["units"],
                         higher_is_better=t["higher_is_better"], runs=t["runs"],
                         per_watt=per_watt, code_versions=t["code_versions"]))
        if max(t["code_schemes"], default=1) > 1:  # absent: scheme 1, as in results
            rows[-1]["code_scheme"] = max(t["code_schemes"])
    docs = [r.doc for r in used]
    return {"karma_score_reference": REFERENCE_FORMAT,
            "name": name or _label(path),
            "source": path,
            "device": {"kind": kind, "names": _distinct(r.device for r in used)},
            "suite": {"versions": _distinct((d.get("suite") or {}).get("version") for d in docs),
                      "git_describe": _distinct((d.get("suite") or {}).get("git_describe")
                                                for d in docs)},
            "kokkos": {"versions": _distinct(r.kokkos_version for r in used),
                       "backends": _distinct(r.backend for r in used)},
            "rules": _distinct(str(rules.reportable(d).get("rules")) for d in docs),
            "results": len(used),
            "environment": environment_summary(used),
            "rows": rows}


def _key_dict(key):
    return dict(zip(("app", "class", "case", "work"), key))


def _sort_key(key):
    app = key[0]
    return (APPS.index(app) if app in APPS else len(APPS), app) + \
        tuple("" if k is None else str(k) for k in key[1:])


def _label(path):
    return os.path.basename(os.path.normpath(path)).removesuffix(archive.SUFFIX) or path


def _bad_reference(path, what):
    raise ToolError(f"{path}: {what}; not a karma-score reference file (karma-score "
                    "reference makes one)", 2)


def load_reference(path):
    """The reference document at path, its fields checked."""
    if not os.path.isfile(path):
        raise ToolError(f"{path}: no such file", 2)
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("karma_score_reference") != REFERENCE_FORMAT:
        _bad_reference(path, f"no karma_score_reference: {REFERENCE_FORMAT}")
    device = doc.get("device")
    if not isinstance(device, dict) or device.get("kind") not in KINDS:
        _bad_reference(path, "device.kind is not gpu or host")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        _bad_reference(path, "rows: not a non-empty list")
    for i, row in enumerate(rows):
        ok = isinstance(row, dict) and all(isinstance(row.get(k), str)
                                           for k in ("app", "case", "work", "units")) \
            and (row.get("class") is None or isinstance(row.get("class"), str)) \
            and is_number(row.get("figure")) and row["figure"] > 0 \
            and isinstance(row.get("higher_is_better"), bool)
        code = row.get("code_versions") if isinstance(row, dict) else None
        if ok and code is not None:
            ok = isinstance(code, list) and all(isinstance(c, str) for c in code)
        if ok and "code_scheme" in row:
            ok = isinstance(row["code_scheme"], int) and row["code_scheme"] >= 1
        pw = row.get("per_watt") if isinstance(row, dict) else None
        if ok and pw is not None:
            ok = isinstance(pw, dict) and is_number(pw.get("value")) and pw["value"] > 0
        if not ok:
            _bad_reference(path, f"rows[{i}]: expected app, class, case, work, units, a "
                           "positive figure, higher_is_better and per_watt (null or {value})")
    if not isinstance(doc.get("name"), str):
        doc["name"] = _label(path)
    return doc


# --- weights --------------------------------------------------------------------------


def shipped(rel, what, flag):
    """A file the suite ships: installed (PREFIX/share/karma/REL) or in the
    checkout this package is in."""
    here = os.path.dirname(os.path.abspath(__file__))
    tools = os.path.dirname(os.path.abspath(sys.argv[0]))
    for base in (os.path.join(tools, "..", "share", "karma"),
                 os.path.join(here, "..", "..", "..")):
        path = os.path.normpath(os.path.join(base, rel))
        if os.path.isfile(path):
            return path
    raise ToolError(f"no {what} ({rel} of the checkout or PREFIX/share/karma); give "
                    f"{flag} FILE", 2)


def default_weights():
    return shipped(DEFAULT_WEIGHTS, "default weights file", "--weights")


def load_weights(path, apps):
    """{app: weight} for the reference's apps, normalised by their sum."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ToolError(f"{path}: cannot read ({e.strerror})", 2) from None
    except UnicodeDecodeError:
        raise ToolError(f"{path}: not UTF-8 text", 2) from None
    weights = {}
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        value = None
        if len(parts) == 2:
            try:
                value = float(parts[1])
            except ValueError:
                pass
        if value is None or not math.isfinite(value) or value < 0:
            raise ToolError(f"{path}:{number}: expected 'PATTERN WEIGHT' with a weight >= 0, "
                            f"got '{text}'", 2)
        matched = [a for a in apps if fnmatch.fnmatchcase(a, parts[0])]
        if not matched:
            raise ToolError(f"{path}:{number}: pattern '{parts[0]}' matches no app of the "
                            f"reference ({', '.join(apps)})", 2)
        for app in matched:
            weights[app] = value
    total = sum(weights.values())
    if total <= 0:
        raise ToolError(f"{path}: the weights of the reference's apps sum to 0", 2)
    return {app: weights.get(app, 0.0) / total for app in apps}


# --- scoring --------------------------------------------------------------------------


def geomean(values, weights=None):
    """The (weighted) geometric mean; None of nothing."""
    pairs = [(v, 1.0 if weights is None else w) for v, w in
             zip(values, weights or [None] * len(values)) if v is not None]
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return None
    return math.exp(sum(w * math.log(v) for v, w in pairs) / total)


def _ratio(figure, reference, hib):
    return figure / reference if hib else reference / figure


def _row_ratio(ref, fig):
    """One row of a tier: the set's figure against the reference's, or the
    reason there is none."""
    row = dict(_key_dict(_ref_key(ref)), reference=ref["figure"], units=ref["units"],
               figure=None, runs=0, ratio=None, per_watt=None, missing=None)
    if fig is None or fig["figure"] is None:
        row["missing"] = "no figure"
        return row
    if (fig["units"], fig["higher_is_better"]) != (ref["units"], ref["higher_is_better"]):
        row["missing"] = f"measured in {fig['units']}, the reference in {ref['units']}"
        return row
    hib = ref["higher_is_better"]
    row.update(figure=fig["figure"], runs=fig["runs"],
               ratio=_ratio(fig["figure"], ref["figure"], hib))
    # The reference's kernels (baseline) must be among the set's; the
    # optimized tier's vendor kernels come on top.
    theirs, ours = ref.get("code_versions") or [], fig.get("code_versions") or []
    gone = sorted(set(theirs) - set(ours))
    schemes = sorted(set(fig.get("code_schemes") or []) | {ref.get("code_scheme", 1)})
    if theirs and ours and len(schemes) > 1:
        row["code_unknown"] = f"the reference's code versions are of scheme " \
            f"{ref.get('code_scheme', 1)}, this set's of {', '.join(map(str, fig['code_schemes']))}"
    elif theirs and ours and gone:
        row["code_changed"] = f"the reference's code_version {', '.join(gone)} is not among " \
            f"this set's ({', '.join(ours)})"
    ref_pw = (ref.get("per_watt") or {}).get("value")
    if ref_pw is not None and fig["per_watt"] is not None:
        row["per_watt"] = {"figure": fig["per_watt"], "reference": ref_pw,
                           "units": fig["per_watt_units"],
                           "ratio": _ratio(fig["per_watt"], ref_pw, hib)}
    else:
        row["no_energy"] = " and ".join(side for side, value in
                                        (("set", fig["per_watt"]), ("reference", ref_pw))
                                        if value is None)
    return row


def _ref_key(row):
    return (row["app"], row["class"], row["case"], row["work"])


def _class_order(cls):
    order = rules.CLASSES + (rules.WEAK_CLASS,)
    return (order.index(cls), "") if cls in order else (len(order), str(cls))


def app_scores(rows, weights):
    """Per app, the geometric mean of its rows' ratios (and per watt); then
    the weighted geometric mean over the apps."""
    apps = {}
    for app in weights:
        mine = [r for r in rows if r["app"] == app]
        scored = [r["ratio"] for r in mine if r["ratio"] is not None]
        per_watt = [r["per_watt"]["ratio"] for r in mine if r["per_watt"]]
        apps[app] = {"score": geomean(scored), "rows": len(scored), "of": len(mine),
                     "per_watt": geomean(per_watt), "per_watt_rows": len(per_watt)}
    names = list(apps)
    return apps, {field: geomean([apps[a][field] for a in names], [weights[a] for a in names])
                  for field in ("score", "per_watt")}


def score_tier(figures, reference, weights):
    """A tier's rows, per-app scores, overall scores (the scored classes'
    rows), the same per class, and coverage."""
    rows = [_row_ratio(ref, figures.get(_ref_key(ref))) for ref in reference["rows"]]
    for r in rows:
        r["in_score"] = r["class"] in rules.SCORED_CLASSES
    known = {_ref_key(ref) for ref in reference["rows"]}
    apps, overall = app_scores([r for r in rows if r["in_score"]], weights)
    classes = {}
    for cls in sorted({r["class"] for r in rows}, key=_class_order):
        classes[cls] = app_scores([r for r in rows if r["class"] == cls], weights)[1]
        classes[cls]["in_score"] = cls in rules.SCORED_CLASSES
    present = sum(1 for r in rows if r["ratio"] is not None)
    return {"rows": rows,
            "apps": apps,
            "score": overall["score"],
            "per_watt": overall["per_watt"],
            "classes": classes,
            "coverage": present / len(rows),
            "missing": [r for r in rows if r["ratio"] is None],
            "no_energy": [r for r in rows if r.get("no_energy")],
            "code_changed": [r for r in rows if r.get("code_changed")],
            "code_unknown": [r for r in rows if r.get("code_unknown")],
            "not_in_reference": [_key_dict(k) for k in sorted(figures, key=_sort_key)
                                 if k not in known]}


def score_set(path, label, reference, weights):
    """One set scored against the reference: nothing of another set enters."""
    runs, no_results = load_runs(path)
    kept, left_out = split_runs(runs, reference["device"]["kind"])
    left_out += no_results
    tiers = {tier: score_tier(tier_figures(kept, tier), reference, weights)
             for tier in rules.TIERS}
    return {"label": label, "path": path, "results": len(runs), "scored": len(kept),
            "devices": _distinct(r.device for r in kept), "tiers": tiers,
            "left_out": left_out}


# --- output ---------------------------------------------------------------------------


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"


def _row_name(row):
    return f"{row['app']}/{row['class']}/{row['case']}/{row['work']}"


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
    return lines + [""]


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
            cells = [_fmt(t["apps"][a][field]) for a in apps]
            coverage = f"{t['coverage']:.0%} ({rows - len(t['missing'])}/{rows} rows)" \
                if field == "score" else f"{sum(a['per_watt_rows'] for a in t['apps'].values())}" \
                f"/{scored} rows scored"
            out.append(f"| {tier} | {measure} | " + " | ".join(cells)
                       + f" | **{_fmt(t[field])}** | {coverage} |")
    out += ["", "Above 1: better than the reference (column heads: the apps' weights). "
            "Per watt: over the rows that measured energy on both sides. Scores and overall: "
            f"the rows of the {', '.join(_scored_here(s))} classes."]
    absent = [a for a in apps if s["tiers"]["baseline"]["apps"][a]["score"] is None]
    if absent:
        out[-1] += f" Overall: over the apps with a score, their weights normalised again " \
            f"(none for {', '.join(absent)})."
    changed = s["tiers"]["baseline"]["code_changed"]
    if changed:
        out += ["", f"**{len(changed)} of {len(s['tiers']['baseline']['rows'])} rows ran other "
                "kernel code than the reference's**: their ratios mix the code's change with "
                "the machine's (listed below; a reference made with this suite's code "
                "compares machines alone)."]
    return out + [""]


def _scored_here(s):
    classes = s["tiers"]["baseline"]["classes"]
    return [c for c in classes if classes[c]["in_score"]] or list(rules.SCORED_CLASSES)


def _class_table(s):
    """The overall score of each class on its own, those outside the
    overall marked."""
    classes = list(s["tiers"]["baseline"]["classes"])
    out = ["| tier | measure | " + " | ".join(
        c if s["tiers"]["baseline"]["classes"][c]["in_score"] else f"{c} (not in the overall)"
        for c in classes) + " | **overall** |", "|---|---|" + "---|" * (len(classes) + 1)]
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        for measure, field in (("score", "score"), ("per watt", "per_watt")):
            out.append(f"| {tier} | {measure} | " + " | ".join(
                _fmt(t["classes"][c][field]) for c in classes) + f" | **{_fmt(t[field])}** |")
    out += ["", "Each class's score: the weighted geometric mean over the apps of their rows "
            "of that class alone. The small class is sized for tests: on a GPU its figures are "
            "launch latency (docs/run-rules.md), reported here and left out of the overall."]
    return out + [""]


def _rows_table(s):
    base, opt = s["tiers"]["baseline"]["rows"], s["tiers"]["optimized"]["rows"]
    out = ["| row | units | reference | baseline | ratio | per W | optimized | ratio | per W |",
           "|---|---|---|---|---|---|---|---|---|"]
    for b, o in zip(base, opt):
        cells = [_row_name(b), b["units"], format_value(b["reference"])]
        for r in (b, o):
            cells += [format_value(r["figure"]), _fmt(r["ratio"]),
                      _fmt((r["per_watt"] or {}).get("ratio"))]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out + [""]


def _lists(s):
    out = []
    for tier in rules.TIERS:
        t = s["tiers"][tier]
        if t["missing"]:
            out += [f"Rows of the reference without a figure in the {tier} tier "
                    f"({len(t['missing'])}):", ""]
            out += [f"- {_row_name(r)}: {r['missing']}" for r in t["missing"]] + [""]
        if t["no_energy"]:
            out += [f"Rows without energy in the {tier} per-watt score:", ""]
            out += [f"- {_row_name(r)}: not measured by the {r['no_energy']}"
                    for r in t["no_energy"]] + [""]
        if t["code_changed"]:
            out += [f"Rows whose kernels ran other code than the reference's ({tier}): their "
                    "ratios include the code's change, not the machine's alone "
                    f"({len(t['code_changed'])}):", ""]
            out += [f"- {_row_name(r)}: {r['code_changed']}" for r in t["code_changed"]] + [""]
        if t["code_unknown"]:
            out += [f"Rows whose code versions another scheme made than the reference's, not "
                    f"compared ({tier}; a reference of this suite's compares them) "
                    f"({len(t['code_unknown'])}):", ""]
            out += [f"- {_row_name(r)}: {r['code_unknown']}" for r in t["code_unknown"]] + [""]
        if t["not_in_reference"]:
            out += [f"Rows not in the reference, left out ({tier}):", ""]
            out += [f"- {_row_name(r)}" for r in t["not_in_reference"]] + [""]
    if s["left_out"]:
        out += [f"Results left out ({len(s['left_out'])}):", ""]
        out += [f"- `{item['file']}`: {'; '.join(item['reasons'])}" for item in s["left_out"]]
        out.append("")
    return out


def markdown(report):
    lines = ["# karma score", ""]
    lines += _reference_lines(report["reference"], report["reference_file"])
    lines += [f"Weights: `{report['weights_file']}`.", ""]
    for s in report["sets"]:
        lines += [f"## {s['label']}", "",
                  f"`{s['path']}`: {s['scored']} of {s['results']} results scored"
                  + (f" ({', '.join(s['devices'])})" if s["devices"] else "") + ".", ""]
        lines += _summary_table(s, report["weights"])
        lines += _class_table(s)
        lines += _rows_table(s)
        lines += _lists(s)
    return "\n".join(lines)


# --- the command line -----------------------------------------------------------------


def _parse_set(text):
    label, sep, path = text.partition("=")
    if sep and label and not os.path.exists(text):
        return label, path
    return _label(text), text


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
    p.add_argument("--allow-partial", action="store_true",
                   help="exit 0 although a set lacks rows of the reference")
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    args = p.parse_args(argv)

    def run():
        reference_file = args.reference or shipped(DEFAULT_REFERENCE, "shipped reference",
                                                   "--reference")
        reference = load_reference(reference_file)
        apps = sorted({r["app"] for r in reference["rows"]}, key=lambda a: _sort_key((a,)))
        weights_file = args.weights or default_weights()
        weights = load_weights(weights_file, apps)
        sets = [score_set(path, label, reference, weights)
                for label, path in map(_parse_set, args.sets)]
        report = {"karma_score": 1, "reference_file": reference_file, "reference": reference,
                  "weights_file": weights_file, "weights": weights, "sets": sets}
        if args.json:
            atomic_write(args.json, json.dumps(report, indent=2) + "\n")
        sys.stdout.write(markdown(report) + "\n")
        return _status(sets, args.allow_partial)

    return main_wrapper(PROGRAM, run)


def _status(sets, allow_partial):
    short = [s for s in sets if s["tiers"]["baseline"]["coverage"] < 1]
    for s in short:
        print(f"{PROGRAM}: {s['label']} covers {s['tiers']['baseline']['coverage']:.1%} of the "
              "reference's rows in the baseline tier"
              + ("" if allow_partial else "; exit 1 (--allow-partial: exit 0)"), file=sys.stderr)
    return 1 if short and not allow_partial else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "reference":
        return reference_main(argv[1:])
    return score_main(argv)
