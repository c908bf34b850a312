"""karma-compare's Markdown report (cases side by side, ratios, code versions, energy), its CSV."""

from karma_tools.compare.sides import csv_of
from karma_tools.core import md_cell, md_table
from karma_tools.results.results import format_value
from karma_tools.score.score import ratio_text, record_line

CODE_CELLS = {"same code": "same", "code changed": "**changed**", "code version unknown": "unknown"}


def _fmt(value, spec=".3f"):
    return "-" if value is None else format(value, spec)


def _section(title, lines, intro=None, head=None):
    """A `## title` section: intro, then lines (a table's rows under head); none without lines."""
    if not lines:
        return []
    return [f"## {title}", ""] + ([intro, ""] if intro else []) \
        + (md_table(head, lines) if head else lines) + [""]


def markdown(result):
    base, within = result["baseline"], result.get("within")
    others = [s["label"] for s in result["sets"] if s["label"] != base]
    out = ["# karma comparison" + (f" within {within['set']}: {within['ours']} against "
                                   f"{within['theirs']}" if within else ""), ""]
    out += [f"Baseline: **{base}**. Ratios above 1 are better than the baseline (a higher "
            "figure of merit, or a lower time)" +
            (", per node (x nodes of the baseline run / nodes of the run)" if
             result["per_node"] else "") + "; in parentheses the interval the runs span (each "
            "side's worst run against the other's best), '~' where it holds 1. Repeated runs: "
            f"{result['aggregate']}.", ""]
    if within:
        out += [f"Both sides are `{within['path']}`: its kernels of implementation "
                f"{within['theirs']} against those of {within['ours']}, paired on their variant "
                "(the kernel column), which names the work both do.", ""]
    if energy := _has(result, "per_watt_ratio"):
        out += ["Energy, where both sides measured it: *per W* divides figures of merit per "
                "watt (above 1: better per watt), *energy* divides the joules per execution the "
                f"other way (above 1: the set uses less energy than {base}); '-' where either "
                "side has no measured energy.", ""]
    figures, flags = _figures_markdown(result, base, others, energy,
                                       _has(result, "code") and not within)
    out += _set_table(result) + _record_markdown(result) + figures + _unpaired_markdown(result)
    out += _energy_markdown(result)
    out += _section("Flags", [f"{n}. {md_cell(text)}" for n, text in enumerate(flags, start=1)])
    out += _section("Notes", [f"- {md_cell(n)}" for n in result["notes"]])
    return "\n".join(out)


def _figures_markdown(result, base, others, energy, code):
    """(the figures of merit table, the notes its flags point to)."""
    head = ["app", "case", "kernel", "units", base]
    for label in others:
        head += [label, f"{label}/{base}"] + (
            [f"{label}/{base} per W", f"{label}/{base} energy"] if energy else []) + (
            [f"{label} code"] if code else [])
    rows, flags = [], []
    for r in result["rows"]:
        cells = [r["app"], r["case"], r["kernel"], r["units"], _cell(r["values"][base])]
        for label in others:
            e = r["values"].get(label)
            cells += [_cell(e), ratio_text(e["ratio"], e.get("interval")) if e else "-"]
            if energy:
                cells += [_fmt(e["per_watt_ratio"]), _fmt(e["energy_ratio"])] if e else ["-", "-"]
            if code:
                cells.append(CODE_CELLS.get(e["code"], "-") if e else "unpaired")
        marks = []
        for label in others + [base]:
            e = r["values"].get(label)
            if e and e["flags"]:
                marks.append(f"[{len(flags) + 1}]")
                flags.append(f"{label}, {r['app']}/{r['case']}/{r['kernel']}: "
                             + "; ".join(e["flags"]))
        rows.append(cells + [" ".join(marks)])
    return ["## Figures of merit", ""] + md_table(head + ["flags"], rows) + [""], flags


def _record_markdown(result):
    """Each other set's procurement figure in karma-score's words; none within one set."""
    if result.get("within"):
        return []
    base = next(s["path"] for s in result["sets"] if s["label"] == result["baseline"])
    out = ["## The procurement figure", "",
           f"karma-score's procurement figure (docs/score.md) of each set, with "
           f"{result['baseline']} as the reference machine (its reportable baseline results, as "
           f"`karma-score reference` takes them): what `karma-score SET --reference {base}` "
           "prints for it. A comparison between sets, not a figure of record: that is a "
           "karma-bundle's, scored with the release's reference and weights.", ""]
    for label, rec in result["record"].items():
        out += [f"- {label}: " + (f"none: {rec['why']}" if "why" in rec else record_line(rec)), ""]
    return out


def _set_table(result):
    """Each set's path, runs, suite, devices and Kokkos; a warning where suites differ."""
    out = md_table(["set", "path", "runs", "suite", "git", "devices", "Kokkos backend", "Kokkos"],
                   [[s["label"], f"`{s['path']}`", s["runs"]] + [", ".join(s.get(k, [])) for k in (
                       "suite_versions", "git_describe", "devices", "backends", "kokkos")]
                    for s in result["sets"]]) + [""]
    if result.get("suite_versions_differ"):
        versions = "; ".join(f"{s['label']} {', '.join(s['suite_versions'])}"
                             for s in result["sets"])
        out += [f"**Warning:** the sets ran different suite versions ({versions}): a deck key "
                "an older result lacks is read at the default the newer suite declares, and "
                "the code column says where the kernels' code changed.", ""]
    return out


def _unpaired_markdown(result):
    """Unpaired rows and why, what only other sets ran, the files --skip-invalid left out."""
    unpaired = [[label, r["app"], r["case"], r["kernel"], why] for r in result["rows"]
                for label, why in (r.get("unpaired") or {}).items()]
    only = [[o["set"], o["app"], o["case"], o["kernel"], f"{_cell(o)} {o['units']}", o["reason"]]
            for o in result["only_in_other_sets"]]
    left = [f"- {md_cell(x['set'])}: {md_cell(x['error'])}" for x in result["left_out"]]
    return _section("Unpaired rows", unpaired, "Baseline rows a set has no run for: the reason "
                    "is the key and the two values of the closest run of that set (baseline vs "
                    "set), or no run.", ["set", "app", "case", "kernel", "reason"]) \
        + _section("Only in other sets", only, "Runs of a set that no baseline row stands for: "
                   "the reason is the key and the two values of the closest baseline case (set "
                   "vs baseline).", ["set", "app", "case", "kernel", "value", "reason"]) \
        + _section("Files left out", left, "Not well-formed results (--skip-invalid):")


def _has(result, key, within=None):
    """Whether some entry has `key` (in its object `within`)."""
    return any(e and key in ((e.get(within) or {}) if within else e)
               for r in result["rows"] for e in r["values"].values())


def _energy_markdown(result):
    """Each set's measured energy and known efficiency, one line per row and set with any."""
    names = {"fraction_of_peak_bandwidth": "of peak bandwidth",
             "fraction_of_peak_flops": "of peak FLOP/s"}
    energy, fractions = _has(result, "energy"), [k for k in names if _has(result, k, "efficiency")]
    rows = []
    for r in result["rows"]:
        for s in result["sets"]:
            e = r["values"].get(s["label"])
            if not e or ("energy" not in e and "efficiency" not in e):
                continue
            cells = [r["app"], r["case"], r["kernel"], s["label"],
                     CODE_CELLS.get(e.get("code"), "-")]
            if energy:
                m = e.get("energy") or {}
                per_watt = format_value(m.get("fom_per_watt"))
                if m.get("fom_per_watt") is not None and m["fom_per_watt_units"]:
                    per_watt += " " + m["fom_per_watt_units"]
                cells += [format_value(m.get("average_power_W")), per_watt,
                          format_value(m.get("joules_per_execution"))]
            rows.append(cells + [_fmt(e.get("efficiency", {}).get(k), ".0%") for k in fractions])
    head = ["app", "case", "kernel", "set", "code"] + (
        ["power (W)", "FOM per watt", "J per execution"] if energy else [])
    return _section("Energy and efficiency", rows, energy and (
        "Average power over each kernel's energy window (all ranks' counters), its figure of "
        "merit per watt and the energy of one execution, aggregated over repeated runs as the "
        f"figures of merit are ({result['aggregate']})."), head + [names[k] for k in fractions])


def _cell(e):
    return "-" if e is None else format_value(e["value"]) + (" FAILED" if e["failed"] else "") \
        + (f" (n={e['runs']})" if e["runs"] > 1 else "")


# Columns the CSV gains when some result has energy or efficiency figures.
ENERGY_COLUMNS = ["average_power_W", "fom_per_watt", "joules_per_execution", "per_watt_ratio",
                  "energy_ratio", "fraction_of_peak_bandwidth", "fraction_of_peak_flops"]


def csv_text(results):
    """One or more comparisons' rows under one header."""
    extra = any(_has(r, "energy") or _has(r, "efficiency") for r in results)
    blanks = [""] * len(ENERGY_COLUMNS) if extra else []
    out = [["app", "case", "kernel", "units", "higher_is_better", "set", "value", "ratio", "runs",
            "nodes", "ranks", "verification", "flags", "code"] + (ENERGY_COLUMNS if extra else [])]
    for result in results:
        for r in result["rows"]:
            row = [r["app"], r["case"], r["kernel"], r["units"], int(r["higher_is_better"])]
            for s in result["sets"]:
                e = r["values"].get(s["label"])
                if e is None:  # an other set's, unpaired: compare says why
                    out.append(row + [s["label"], "", "", 0, "", "", "missing",
                                      f"unpaired: {r['unpaired'][s['label']]}", ""] + blanks)
                    continue
                figures = {**e, **(e.get("energy") or {}), **(e.get("efficiency") or {})}
                out.append(row + [s["label"], e["value"], e["ratio"], e["runs"], e["nodes"],
                                  e["ranks"], "FAILED" if e["failed"] else "PASSED",
                                  "; ".join(e["flags"]), e.get("code") or ""]
                           + ([figures.get(k) for k in ENERGY_COLUMNS] if extra else []))
        out += [[o["app"], o["case"], o["kernel"], o["units"], int(o["higher_is_better"]),
                 o["set"], o["value"], "", o["runs"], "", "", "FAILED" if o["failed"] else
                 "PASSED", f"only in {o['set']}: {o['reason']}", ""] + blanks
                for o in result.get("only_in_other_sets") or []]
    return csv_of(out)
