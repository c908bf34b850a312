"""karma-score --page: one set against the reference for a manager, its chart beside it."""

import io
import os

from karma_tools.core import md_table
from karma_tools.report.report import pyplot
from karma_tools.score import figure
from karma_tools.score.score import (MEASURES, board_line, fmt_span, gpus_alone_lines,
                                     node_line, other_board, with_span)


def _yes_no(flag, why):
    return ("yes" if flag else "**no**") + (f" ({why})" if why else "")


def _short(reason, most=120):
    """A reason cut to a line (karma-bundle check gives it whole)."""
    return reason if len(reason) <= most else reason[:most].rsplit(",", 1)[0] + ", ..."


def verdict_line(record, reportable):
    """Complete? Reportable (karma-bundle check's (bool, [why]); None: no bundle)? Same code?"""
    present = record["rows"] - len(record["missing"])
    complete = _yes_no(record["complete"], f"{present} of {record['rows']} scored rows")
    report = "**no** (not a karma-bundle: `karma-bundle pack` makes one)" if reportable is None \
        else _yes_no(reportable[0], "; ".join(_short(r) for r in reportable[1]) or
                     "karma-bundle check: valid and reportable")
    changed, unknown = record["code_changed"], record["code_unknown"]
    code = f"not known ({unknown} of {present} rows have code versions of another scheme " \
        "than the reference's)" if unknown else "not known (no scored row)" if not present \
        else _yes_no(not changed, f"{changed} of {present} rows ran other kernel code: the "
                     "figure mixes the code's change with the machine's" if changed else "")
    off = record["unofficial"]  # bundle.mark_official's
    return f"**Verdict.** Complete: {complete}. Reportable: {report}. Code the same as the " \
        f"reference's: {code}. Of record: " + (
            f"**no, UNOFFICIAL** ({'; '.join(map(_short, off))})." if off else "yes.")


def figure_lines(record):
    if not record["complete"]:
        shown = record["missing"][:8]
        more = len(record["missing"]) - len(shown)
        return [f"**INCOMPLETE**: no overall figure. {len(record['missing'])} missing rows: "
                + ", ".join(f"`{r}`" for r in shown)
                + (f" and {more} more (karma-score lists them all)." if more else ".")]
    band, pw_band = record["band"], record["per_watt_band"]
    out = ["**UNOFFICIAL** " * bool(record.get("unofficial")) +
           f"**{figure.NAME.capitalize()}: {record['figure']:.3f}**, the "
           f"rounds spanning {record['interval'][0]:.3f} to {record['interval'][1]:.3f}" +
           (f", the reference's {record['units']} units {band[0]:.3f} to {band[1]:.3f}"
            if band else "") + f": {record['verdict']}."]
    if record["per_watt"] is not None:
        pw = record["per_watt_interval"]
        out.append(f"Per watt: {record['per_watt']:.3f} ({pw[0]:.3f} to {pw[1]:.3f}" + (
            f"; its units {pw_band[0]:.3f} to {pw_band[1]:.3f}: {record['per_watt_verdict']}"
            if pw_band else "") + ").")
    boards = board_line(record)
    return [" ".join(out + ([boards + "."] if boards else []))]


def app_table(scored, weights):
    """Per app: weight, score and per watt with their rounds; of several units, their band."""
    t = scored["tiers"][figure.TIER]
    banded = t["band"] is not None

    def cells(a):
        if not a["complete"]:
            return ["incomplete", "-"] + ["-"] * (2 * banded)
        spans = [with_span(a[field], a[span]) for _, field, span in MEASURES]
        return spans + ([fmt_span(a["band"]), a["verdict"]] if banded else [])

    return md_table(["mini-app", "weight", "score (rounds)", "per watt (rounds)"]
                    + ["units' band", "difference"] * banded + ["rows"],
                    [[app, f"{w:.3g}", *cells(a), f"{a['rows']}/{a['of']}"]
                     for app, w in weights.items() for a in [t["apps"][app]]])


def disclosure_lines(disclosure):
    """A few lines of a karma-bundle's disclosure ({dotted key: value})."""
    if not disclosure:
        return ["No disclosure: the set is not a karma-bundle."]

    def get(key):
        value = disclosure.get(key)
        return "?" if value is None else str(value)

    return [f"- **System:** {get('system.name')} by {get('system.vendor')}, "
            f"{get('system.nodes')} node(s); interconnect {get('interconnect')}.",
            f"- **Node:** {get('node.gpus_per_node')} x {get('node.gpu_model')} "
            f"({get('node.gpu_memory_GB')} GB each); {get('node.sockets')} x "
            f"{get('node.cpu_model')}, {get('node.cores')} cores, "
            f"{get('node.memory_GB')} GB.",
            f"- **Software:** {get('software.os')}; {get('software.compiler')}; "
            f"{get('software.mpi')}; Kokkos {get('software.kokkos')}; "
            f"{get('software.gpu_toolkit')}.",
            f"- **Tier** {get('tier')}; deviations: "
            f"{', '.join(disclosure.get('deviations') or []) or 'none'}; tested by "
            f"{get('tester.name')} ({get('tester.organisation')}), {get('tester.date')}."]


def unit_lines(scored, most=8):
    """The set's GPU units, and its runs a unit held back or whose ECC errors grew."""
    def on(flag):
        return {True: "on", False: "off"}.get(flag, "?")

    units = [f"`{uuid}` {u['model']}, board {u['board_part_number'] or '?'}, VBIOS "
             f"{u['vbios_version'] or '?'}, {u['power_limit_W'] or '?'} W, persistence "
             f"{on(u['persistence_mode'])}, ECC {on(u['ecc_enabled'])}"
             for uuid, u in sorted(scored["units"].items())]
    held = [f"`{h['file']}`: {'; '.join(h['why'])}" for h in scored["held_back"]]
    more = f" and {len(held) - most} more (karma-score --json lists them)" \
        if len(held) > most else ""
    recorded = any(u["ends_recorded"] for u in scored["units"].values())
    return [f"- **GPU units ({len(units)}):** " + ("; ".join(units) or "none (no GPU run)"),
            "- **Runs held back by power or heat, or whose ECC errors grew:** "
            + ("; ".join(held[:most]) + more if held else "none" if recorded else
               "not known (the results record no state_at_end)")]


def chart(scored, weights, reference_name):
    """PNG bytes: per app, the score and per watt as bars with their rounds."""
    plt = pyplot("the page's chart")
    t, record = scored["tiers"][figure.TIER], scored["record"]
    apps = [a for a in weights if t["apps"][a]["complete"] and t["apps"][a]["score"]]
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 0.45 * max(len(apps), 3) + 1.6),
                             sharey=True, constrained_layout=True)
    for ax, (what, field, span) in zip(axes, MEASURES):
        values = [t["apps"][a][field] or 0 for a in apps]
        lows = [v - (t["apps"][a][span] or [v, v])[0] for a, v in zip(apps, values)]
        highs = [(t["apps"][a][span] or [v, v])[1] - v for a, v in zip(apps, values)]
        ax.barh(range(len(apps)), values, xerr=[lows, highs], color="tab:blue",
                error_kw={"capsize": 3, "ecolor": "black"})
        ax.axvline(1.0, color="tab:red", linewidth=1)
        band = record.get("band" if field == "score" else "per_watt_band")
        if band:  # the spread of the reference's units
            ax.axvspan(*band, color="tab:red", alpha=0.12, linewidth=0)
        for i, v in enumerate(values):
            ax.text(v, i + 0.3, f" {v:.3f}", fontsize=8, va="center")
        ax.set_title(what, fontsize=10)
        ax.set_xlim(0, max(values + [1.0]) * 1.25)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(apps)))
    axes[0].set_yticklabels(apps)
    axes[0].invert_yaxis()
    head = f"{scored['label']} against {reference_name}: " + (with_span(
        record["figure"], record["interval"]) if record["complete"] else "INCOMPLETE, no overall")
    fig.suptitle(head, fontsize=11)
    fig.supxlabel("ratio to the reference (above 1: better); bars: the rounds' interval",
                  fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


# Which figure is which, for a reader who decides.
WHICH = "Two figures of record. The procurement figure is **per GPU**: one GPU of this node " \
    "against one of the reference's, on every problem size. The **per-node** figure is the " \
    "whole node against the reference's node: all its GPUs at once, each on a problem of " \
    "the large size, and all together on one fixed problem; 2.0 is twice the reference " \
    "node's work in the same time."


def render(scored, weights, reference, page_path, reportable, disclosure):
    """(Markdown text, PNG bytes) of the page; the PNG goes beside it."""
    record = scored["record"]
    png_name = os.path.splitext(os.path.basename(page_path))[0] + ".png"
    lines = [f"# karma: {scored['label']} against {reference['name']}" + other_board(record), "",
             verdict_line(record, reportable), "", *figure_lines(record), "",
             node_line(scored["node"]), "", WHICH, "",
             f"![per-app scores and their rounds]({png_name})", "",
             *app_table(scored, weights), "",
             "The figure is the baseline tier's overall (docs/score.md): per row the best "
             "Kokkos kernel of each run, the median over the rounds, over the reference's; "
             "the geometric mean per app over the medium, large and weak classes; the "
             "weighted geometric mean of the apps. " + (
                 f"A range of the rounds that reaches into the band the reference's "
                 f"{record['units']} units span (their spread, widened for few units: "
                 "docs/score.md) is within the spread of one model's units." if record["band"]
                 else "A range that holds 1 is no measurable difference."), "",
             *gpus_alone_lines(scored["gpus_alone"]),
             "## Disclosure", "", *disclosure_lines(disclosure), *unit_lines(scored), "",
             f"Set: `{scored['path']}` ({scored['scored']} of {scored['results']} results "
             f"scored); the reference: {reference['name']}.", ""]
    return "\n".join(lines), chart(scored, weights, reference["name"])
