"""karma-report's power and microbenchmark sections: each kernel's power
over its run, and karma-microbench's times against their baseline."""

import os
import re
from .report_configs import markdown_table, series_label, varying_keys
from .results import format_value


def power_points(configs):
    """{device: [(config, kernel, the kernel's figures)]}: per configuration
    and kernel, the run of the best FOM among those that measured energy."""
    by_device = {}
    for c in configs:
        for kernel in c.kernels():
            measured = [r.kernels[kernel] for r in c.runs if kernel in r.kernels
                        and r.kernels[kernel]["value"] is not None
                        and r.kernels[kernel]["energy"]]
            if not measured:
                continue
            pick = max if measured[0]["higher_is_better"] else min
            best = pick(measured, key=lambda k: k["value"])
            by_device.setdefault(c.device, []).append((c, kernel, best))
    return by_device


def _slug(unit):
    """A unit as part of a file name: GB/s -> GB-s."""
    return re.sub(r"[^A-Za-z0-9]+", "-", unit).strip("-") or "fom"


def power_plot(plotter, file_stem, by_device, unit):
    """FOM of one unit against power: a panel per device, a marker and
    colour per app/kernel (the same on every panel); the file's name."""
    of_unit = {d: [p for p in points if (p[2]["units"] or "") == unit]
               for d, points in by_device.items()}
    devices = sorted(d for d, points in of_unit.items() if points)
    labels = []
    for device in devices:
        for c, k, _ in of_unit[device]:
            if f"{c.app}/{k}" not in labels:
                labels.append(f"{c.app}/{k}")
    fig, axes = plotter.grid(len(devices), width=4.0, height=3.0)
    for ax, device in zip(axes, devices):
        points = of_unit[device]
        for i, label in enumerate(labels):
            pts = [(f["energy"]["average_power_W"], f["value"]) for c, k, f in points
                   if f"{c.app}/{k}" == label]
            if pts:
                marker, colour = plotter.style(i)
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker,
                           color=colour, label=label)
        values = [f["value"] for _, _, f in points]
        # Kernels far apart share the axis on a log scale.
        if max(values) > 100 * min(values):
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, 1.1 * max(values))
        # From zero, so that the power's scale shows; a margin past the last point.
        ax.set_xlim(0, 1.1 * max(f["energy"]["average_power_W"] for _, _, f in points))
        ax.set_title(device, fontsize=8)
        ax.set_xlabel("average power (W)")
        ax.set_ylabel(unit or "figure of merit")
    plotter.legend_below(fig, axes, ncol=2)
    return plotter.save(fig, file_stem)


def power_section(name, configs, plotter):
    by_device = power_points(configs)
    if not by_device:
        return []
    out = [f"### {name}: figure of merit against power", "",
           "Each point is a configuration's kernel: the best FOM among its runs that measured "
           "energy, at that run's average power over the kernel's energy window (the sum "
           "of all ranks' counters); a plot per unit.", ""]
    devices = sorted(by_device)
    if plotter.enabled:
        units = sorted({f["units"] or "" for points in by_device.values() for _, _, f in points})
        for unit in units:
            file = power_plot(plotter, f"{name}-power-{_slug(unit)}", by_device, unit)
            out += [f"![{name}: {unit or 'figure of merit'} against power]"
                    f"({plotter.rel}/{file})", ""]
    # Each configuration is named by the keys that vary among its own app's.
    members = [c for points in by_device.values() for c, _, _ in points]
    keys = {app: varying_keys([c for c in members if c.app == app])
            for app in {c.app for c in members}}
    head = ["device", "configuration", "ranks", "kernel", "FOM", "units", "power (W)",
            "FOM per watt", "J per execution"]
    rows = []
    for device in devices:
        for c, kernel, f in by_device[device]:
            e = f["energy"]
            rows.append([device, series_label(c, keys[c.app]), c.ranks, f"{c.app}/{kernel}",
                         format_value(f["value"]), f["units"],
                         format_value(e["average_power_W"]), format_value(e["fom_per_watt"]),
                         format_value(e["joules_per_execution"])])
    return out + markdown_table(head, rows) + [""]


_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def benchmark_times(files):
    """{run name: seconds}: the median aggregate where repetitions ran, else
    the median of the iteration entries."""
    samples, medians = {}, {}
    for f in files:
        for b in f.benchmarks:
            name = b.get("run_name") or b.get("name")
            t = b.get("real_time")
            if name is None or not isinstance(t, (int, float)):
                continue
            seconds = t * _TIME.get(b.get("time_unit", "ns"), 1e-9)
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    medians[name] = seconds
            elif b.get("error_occurred"):
                continue
            else:
                samples.setdefault(name, []).append(seconds)
    out = {}
    for name, values in samples.items():
        values = sorted(values)
        n = len(values)
        out[name] = values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])
    out.update(medians)
    return out


def benchmark_pairs(times, ours, theirs):
    """[(label, ours name, theirs name)]: names that differ only in the token
    `theirs` -> `ours` (tokens split at non-alphanumerics)."""
    pairs = []
    pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(theirs)}(?![A-Za-z0-9])", re.I)
    for name in sorted(times):
        if not pattern.search(name):
            continue
        partner = pattern.sub(ours, name, count=1)
        if partner in times and partner != name:
            pairs.append((pattern.sub("*", name, count=1), partner, name))
    return pairs


def microbench_section(name, files, plotter, ours, theirs):
    # Pairs are formed within each file: files from different machines (a
    # GPU run and a CPU run) share benchmark names.
    per_file = []
    for f in sorted(files, key=lambda f: f.path):
        times = benchmark_times([f])
        if times:
            per_file.append((os.path.splitext(os.path.basename(f.path))[0], times))
    if not per_file:
        return []
    out = [f"### {name}: microbenchmarks", ""]
    contexts = {f.context.get("host_name", "?") for f in files}
    out += [f"From {len(files)} Google Benchmark file(s) ({', '.join(sorted(contexts))}); "
            "times are medians over repetitions, karma and raw paired within each file.", ""]
    several = len(per_file) > 1
    rows, ratios, unpaired = [], [], []
    for stem, times in per_file:
        pairs = benchmark_pairs(times, ours, theirs)
        if not pairs:
            unpaired += [[f"{stem}: {n}" if several else n, f"{times[n] * 1e6:.4g}"]
                         for n in sorted(times)]
        for label, a, b in pairs:
            shown = f"{stem}: {label}" if several else label
            ratio = times[a] / times[b] if times[b] else None
            ratios.append((shown, ratio))
            rows.append([shown, f"{times[a] * 1e6:.4g}", f"{times[b] * 1e6:.4g}",
                         f"{ratio:.3f}" if ratio else "-"])
    if not rows:
        return out + markdown_table(["benchmark", "time (us)"], unpaired) + [""]
    if plotter.enabled:
        fig, ax = plotter.plt.subplots(figsize=(6.5, 0.28 * len(ratios) + 1.0),
                                       constrained_layout=True)
        ax.barh(range(len(ratios)), [r or 0 for _, r in ratios], color="tab:blue")
        ax.set_yticks(range(len(ratios)))
        ax.set_yticklabels([text for text, _ in ratios], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel(f"time {ours} / time {theirs}")
        file = plotter.save(fig, f"{name}-microbench")
        out += [f"![{name}: {ours} / {theirs}]({plotter.rel}/{file})", ""]
    head = ["benchmark", f"{ours} (us)", f"{theirs} (us)", f"{ours} / {theirs}"]
    return out + markdown_table(head, rows) + [""]
