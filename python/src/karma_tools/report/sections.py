"""karma-report's power section and its pairs of implementations."""

import re
from karma_tools.core import ToolError, md_table
from karma_tools.compare.implementations import compare_within
from karma_tools.report.configs import series_label, varying_keys
from karma_tools.results.results import format_value
from karma_tools.results.resultset import ResultSet
from karma_tools.score.score import ratio_text


def power_points(configs):
    """{device: [(config, kernel, figures)]}: the best run that measured energy."""
    by_device = {}
    for c in configs:
        for kernel in c.kernels():
            best = c.best_result(kernel, measured=True)
            if best:
                by_device.setdefault(c.device, []).append((c, kernel, best))
    return by_device


def _slug(unit):
    """A unit as part of a file name: GB/s -> GB-s."""
    return re.sub(r"[^A-Za-z0-9]+", "-", unit).strip("-") or "fom"


def power_plot(plotter, name, by_device, unit):
    """FOM of one unit against power, a panel per device; its Markdown lines."""
    of_unit = {d: [p for p in points if (p[2]["units"] or "") == unit]
               for d, points in by_device.items()}
    devices = sorted(d for d, points in of_unit.items() if points)
    labels = list(dict.fromkeys(f"{c.app}/{k}" for d in devices for c, k, _ in of_unit[d]))
    fig, axes = plotter.grid(len(devices), width=4.0, height=3.0)
    for ax, device in zip(axes, devices):
        points = of_unit[device]
        for i, label in enumerate(labels):
            pts = [(f["energy"]["average_power_W"], f["value"]) for c, k, f in points
                   if f"{c.app}/{k}" == label]
            if pts:
                ax.scatter(*zip(*pts), label=label, **plotter.style(i))
        values = [f["value"] for _, _, f in points]
        # Kernels far apart share the axis on a log scale.
        if max(values) > 100 * min(values):
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, 1.1 * max(values))
        # From zero, so that the power's scale shows; a margin past the last point.
        ax.set_xlim(0, 1.1 * max(f["energy"]["average_power_W"] for _, _, f in points))
        ax.set_title(device, fontsize=8)
        ax.set(xlabel="average power (W)", ylabel=unit or "figure of merit")
    return plotter.image(fig, f"{name}-power-{_slug(unit)}",
                         f"{name}: {unit or 'figure of merit'} against power", axes, ncol=2)


def power_section(name, configs, plotter):
    by_device = power_points(configs)
    if not by_device:
        return []
    out = [f"### {name}: figure of merit against power", "",
           "Each point is a configuration's kernel: the best FOM among its runs that measured "
           "energy, at that run's average power over the kernel's energy window (the sum "
           "of all ranks' counters); a plot per unit.", ""]
    if plotter.enabled:
        units = sorted({f["units"] or "" for points in by_device.values() for _, _, f in points})
        for unit in units:
            out += power_plot(plotter, name, by_device, unit)
    # Each configuration is named by the keys that vary among its own app's.
    members = [c for points in by_device.values() for c, _, _ in points]
    keys = {app: varying_keys([c for c in members if c.app == app])
            for app in {c.app for c in members}}
    head = ["device", "configuration", "ranks", "kernel", "FOM", "units", "power (W)",
            "FOM per watt", "J per execution"]
    rows = [[device, series_label(c, keys[c.app]), c.ranks, f"{c.app}/{kernel}",
             format_value(f["value"]), f["units"]]
            + [format_value(f["energy"][k]) for k in ("average_power_W", "fom_per_watt",
                                                      "joules_per_execution")]
            for device in sorted(by_device) for c, kernel, f in by_device[device]]
    return out + md_table(head, rows) + [""]


def pairs_section(name, runs, plotter, ours, theirs):
    """Runs' `ours` against `theirs` as karma-compare --implementations pairs them, plotted."""
    result_set = ResultSet(name, name)
    result_set.runs = runs
    out = [f"### {name}: microbenchmarks", ""]
    try:
        result = compare_within(result_set, ours, theirs)
    except ToolError as e:
        return out + [f"No pairs of {ours} and {theirs}: {e}.", ""]
    base, other = (s["label"] for s in result["sets"])
    apps = ", ".join(f"karma-{a}" for a in sorted({r.app for r in runs}))
    out += [f"From {len(runs)} {apps} run(s): each benchmark's figure of merit with {ours} and "
            f"with {theirs}, from the same runs, as `karma-compare --implementations "
            f"{ours}:{theirs}` pairs them (repeated runs: their median). The ratio is {ours}'s "
            f"figure over {theirs}'s (time: {theirs}'s over {ours}'s): above 1 {ours} is faster; "
            "in parentheses the interval the runs span, '~' where it holds 1.", ""]
    rows, ratios = [], []
    for r in result["rows"]:
        b, e = r["values"][base], r["values"].get(other)
        ratio = e and e["ratio"]
        ratios.append((f"{r['case']}: {r['kernel']}", ratio))
        rows.append([r["case"], r["kernel"], format_value(e["value"]) if e else "-",
                     format_value(b["value"]), ratio_text(ratio, e and e.get("interval"))])
    if plotter.enabled and any(ratio for _, ratio in ratios):
        fig, ax = plotter.plt.subplots(figsize=(6.5, 0.28 * len(ratios) + 1.0),
                                       constrained_layout=True)
        ax.barh(range(len(ratios)), [r or 0 for _, r in ratios], color="tab:blue")
        ax.set_yticks(range(len(ratios)))
        ax.set_yticklabels([text for text, _ in ratios], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel(f"bandwidth {ours} / bandwidth {theirs} (time {theirs} / time {ours})")
        out += plotter.image(fig, f"{name}-microbench", f"{name}: {ours} against {theirs}")
    head = ["case", "benchmark", f"{ours} (GB/s)", f"{theirs} (GB/s)", f"{ours} / {theirs}"]
    return out + md_table(head, rows) + [""]
