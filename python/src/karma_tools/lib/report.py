"""karma-report: a results directory -> a Markdown report with plots."""

import json
import os
import re
import textwrap

from .core import ToolError, __version__, unreadable
from .archive import read_json
from . import archive, sides
from .results import find_json, format_size, format_value, is_number
from .cases import case_key, case_values, values_key


# --- grouping ------------------------------------------------------------------


class Config:
    """Runs with the same deck values, device and ranks: one row of a table."""

    def __init__(self, app, values, device, ranks, nodes, concurrency):
        self.app, self.values, self.device = app, values, device
        self.ranks, self.nodes, self.concurrency = ranks, nodes, concurrency
        self.runs = []

    def kernels(self):
        names = []
        for r in self.runs:
            names += [k for k in r.kernels if k not in names]
        return names

    def best(self, kernel):
        """(value, units, higher_is_better) of the best run for kernel."""
        values = [(r.kernels[kernel]["value"], r.kernels[kernel]) for r in self.runs
                  if kernel in r.kernels and r.kernels[kernel]["value"] is not None]
        if not values:
            return None, "", True
        hib = values[0][1]["higher_is_better"]
        v = (max if hib else min)(v for v, _ in values)
        return v, values[0][1]["units"], hib

    def footprint(self):
        f = [r.problem.get("footprint_bytes_per_rank") for r in self.runs]
        f = [x for x in f if is_number(x)]
        return f[0] if f else None

    @property
    def stem(self):
        stems = [r.deck_stem for r in self.runs]
        return max(set(stems), key=stems.count)

    @property
    def kind(self):
        """"gpu", "host" or "" (not recorded): where the runs ran."""
        kinds = sorted(r.device_kind for r in self.runs)
        return max(set(kinds), key=kinds.count)

    def passed(self):
        return sum(1 for r in self.runs if r.passed)


def configs_of(runs):
    out = {}
    for r in runs:
        values = case_values(r)
        # Threads per rank (host) or resident threads (GPU): runs with
        # different thread counts are different configurations.
        concurrency = (r.doc.get("kokkos") or {}).get("concurrency")
        key = case_key(r.app, values, r.device, r.ranks, r.nodes, concurrency)
        if key not in out:
            out[key] = Config(r.app, values, r.device, r.ranks, r.nodes, concurrency)
        out[key].runs.append(r)

    def order(c):
        sizes = []
        for k, v in sorted(c.values.items()):
            if _is_size(v):
                sizes.append(v if isinstance(v, list) else [v])
        return (c.app, c.stem, c.device, _without(c.values, lambda k, v: _is_size(v)), sizes,
                c.ranks, c.concurrency or 0)

    return sorted(out.values(), key=order)


def format_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.4g} {unit}"
        n /= 1024.0


def _is_size(v):
    return (isinstance(v, int) and not isinstance(v, bool)) or \
        (isinstance(v, list) and v and all(isinstance(x, int) for x in v))


def _without(values, drop):
    return values_key({k: v for k, v in values.items() if not drop(k, v)})


def varying_keys(configs):
    keys = sorted({k for c in configs for k in c.values})
    return [k for k in keys if len({json.dumps(c.values.get(k)) for c in configs}) > 1]


# --- Markdown helpers ---------------------------------------------------------------


def _cell(text):
    return str(text).replace("|", "\\|")


def _table(head, rows):
    out = ["| " + " | ".join(_cell(h) for h in head) + " |",
           "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _anchor(title):
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def include_markdown(path, base_dir, out_dir, demote=1):
    """The Markdown file at path, with its headings demoted and its relative
    links rewritten for a file in out_dir."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})", 2) from None
    except OSError as e:
        raise unreadable(path, e) from None
    src_dir = os.path.dirname(os.path.abspath(path))
    rel = os.path.relpath(src_dir, os.path.abspath(out_dir))

    def fix(m):
        target = m.group(2)
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target, re.I):
            return m.group(0)
        path_part, hash_, frag = target.partition("#")
        new = os.path.normpath(os.path.join(rel, path_part)) if path_part else ""
        if path_part.endswith("/"):
            new += "/"
        return f"{m.group(1)}({new}{hash_}{frag})"

    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced:
            if line.startswith("#"):
                line = "#" * demote + line
            line = re.sub(r"(\]|\]\s)\(([^)\s]+)\)", fix, line)
        lines.append(line)
    return lines


# --- plots ---------------------------------------------------------------------------


_MARKERS = "osD^v<>pPX*h"


class Plotter:
    def __init__(self, directory, fmt, enabled):
        self.directory, self.fmt, self.enabled = directory, fmt, enabled
        self.files = []
        self.plt = None
        if enabled:
            try:
                import matplotlib

                matplotlib.use("Agg")
                import matplotlib.pyplot as plt
            except ImportError:
                raise ToolError("matplotlib is needed for plots: install python3-matplotlib "
                                "(Debian) or matplotlib (pip), or run with --no-plots", 3) \
                    from None
            plt.rcParams.update({"svg.hashsalt": "karma", "font.size": 9,
                                 "axes.grid": True, "grid.alpha": 0.3})
            self.plt = plt

    def legend_below(self, fig, axes, ncol=3):
        """One legend for the whole figure, under it, of the labelled
        artists of every axes (each label once)."""
        entries = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
        if not entries:
            return
        # As many columns as fit the figure's width (about 14 characters of
        # 8 pt text an inch), so that long labels do not widen the figure.
        fit = int(fig.get_size_inches()[0] * 14) // (max(map(len, entries)) + 6)
        fig.legend(list(entries.values()), list(entries), loc="upper center",
                   bbox_to_anchor=(0.5, 0.0), ncol=max(1, min(ncol, fit, len(entries))),
                   fontsize=8, frameon=False)

    def style(self, i):
        """(marker, colour) of the i-th series: no two of the first 60 alike,
        so that a colour seen twice still has two markers."""
        colours = self.plt.rcParams["axes.prop_cycle"].by_key()["color"]
        return _MARKERS[i % len(_MARKERS)], colours[i % len(colours)]

    def save(self, fig, name):
        """Saves fig as name.<fmt>; returns the file name."""
        file = f"{name}.{self.fmt}"
        metadata = {"Date": None} if self.fmt == "svg" else {"Software": None}
        fig.savefig(os.path.join(self.directory, file), format=self.fmt, metadata=metadata,
                    bbox_inches="tight", dpi=110)
        self.plt.close(fig)
        self.files.append(file)
        return file

    def grid(self, n, width=3.3, height=2.6):
        cols = min(3, n)
        rows = (n + cols - 1) // cols
        fig, axes = self.plt.subplots(rows, cols, figsize=(width * cols, height * rows),
                                      squeeze=False, constrained_layout=True)
        flat = [a for row in axes for a in row]
        for a in flat[n:]:
            a.set_visible(False)
        return fig, flat[:n]


# --- the report's parts ------------------------------------------------------------------


def series_label(config, keys):
    # A key the configuration has not (an older result's) is left out.
    parts = [f"{k.split('.')[-1]}={format_size(config.values[k])}" for k in keys
             if k in config.values]
    return ", ".join(parts) if parts else config.stem


def group_label(config, keys, members):
    """series_label, after the device kind ("gpu: ...", or the device's
    name where no kind was recorded) where members ran on several devices."""
    label = series_label(config, keys)
    if len({c.device for c in members}) < 2:
        return label
    return f"{config.kind or config.device}: {label}"


def runs_table(configs):
    keys = varying_keys(configs)
    kernels = []
    for c in configs:
        kernels += [k for k in c.kernels() if k not in kernels]
    units = {}
    for c in configs:
        for k in c.kernels():
            units.setdefault(k, c.best(k)[1])
    threads = len({c.concurrency for c in configs}) > 1
    head = ["deck"] + [k.split(".")[-1] for k in keys] + ["ranks"] + \
        (["threads"] if threads else []) + ["device", "runs"] + \
        [f"{k} ({units[k]})" if units[k] else k for k in kernels] + ["verified"]
    rows = []
    for c in configs:
        # A key a configuration has not (BabelStream beside karma-stream): blank.
        row = [c.stem] + [format_size(c.values[k]) if k in c.values else "" for k in keys] + \
            [c.ranks]
        if threads:
            row.append(c.concurrency if c.concurrency is not None else "")
        row += [c.device, len(c.runs)]
        for k in kernels:
            row.append(format_value(c.best(k)[0]) if k in c.kernels() else "")
        row.append(f"{c.passed()}/{len(c.runs)}")
        rows.append(row)
    return _table(head, rows)


# Integer deck keys that tune how a kernel runs rather than how big the
# problem is (team_size, column_blocks, tile, ...): never a size axis.
_TUNING = re.compile(r"team|block|tile|chunk|vector|thread|unroll|batch|league|warp|cache",
                     re.I)


def _size_key(k, v):
    return _is_size(v) and not _TUNING.search(k.split(".")[-1])


def size_series(configs):
    """{series key: [configs at different sizes]}: configurations of one deck
    that differ only in their size keys, at two or more footprints. A series
    in which two configurations have the same footprint is not a size sweep
    and is left out."""
    series = {}
    for c in configs:
        if c.footprint() is None:
            continue
        # Sizes vary along a series; the number of dimensions does not.
        shape = {k: (len(v) if isinstance(v, list) else "n") for k, v in c.values.items()
                 if _size_key(k, v)}
        key = (c.app, c.stem, c.device, c.ranks, c.concurrency,
               _without(c.values, _size_key), values_key(shape))
        series.setdefault(key, []).append(c)
    return {k: sorted(v, key=lambda c: c.footprint()) for k, v in series.items()
            if len(v) >= 2 and len({c.footprint() for c in v}) == len(v)}


def distinct_labels(configs, texts):
    """texts, one per configuration, made distinct: where two read the same,
    each gets its device, then its ranks, threads and deck, until none do."""
    texts = [t or c.stem for t, c in zip(texts, configs)]
    extras = (lambda c: c.device, lambda c: f"{c.ranks} ranks",
              lambda c: f"{c.concurrency} threads", lambda c: f"deck {c.stem}")
    for extra in extras:
        same = {t for t in texts if texts.count(t) > 1}
        if not same:
            break
        texts = [f"{t}, {extra(c)}" if t in same else t for t, c in zip(texts, configs)]
    return texts


def _size_points(configs, kernel):
    return [(c.footprint(), c.best(kernel)[0]) for c in configs
            if c.best(kernel)[0] is not None]


def size_plot(plotter, file_stem, series, names, kernels, kind):
    """One panel per kernel, one line per series (all of one device kind);
    the file's name, or None where no kernel has two sizes."""
    kernels = [k for k in kernels if any(len(_size_points(cs, k)) >= 2 for cs in series.values())]
    if not kernels:
        return None
    fig, axes = plotter.grid(len(kernels))
    for ax, kernel in zip(axes, kernels):
        units = ""
        for i, (key, cs) in enumerate(series.items()):
            pts = _size_points(cs, kernel)
            if len(pts) < 2:
                continue
            marker, colour = plotter.style(i)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                    label=names[key])
            units = units or cs[0].best(kernel)[1]
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{kernel} ({kind} runs)" if kind else kernel, fontsize=9)
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel(units)
    plotter.legend_below(fig, axes)
    return plotter.save(fig, file_stem)


def size_section(title, stem, configs, plotter):
    series = size_series(configs)
    if not series:
        return []
    members = [c for v in series.values() for c in v]
    keys = [k for k in varying_keys(members) if not _size_key(k, members[0].values.get(k))]
    dims = [k for k in varying_keys(members) if _size_key(k, members[0].values.get(k)) and
            len({len(c.values[k]) if isinstance(c.values.get(k), list) else 0
                 for c in members}) > 1]

    def label(c):
        extra = [f"{len(c.values[k])}-D {k.split('.')[-1]}" for k in dims
                 if isinstance(c.values.get(k), list)]
        return ", ".join(extra + ([series_label(c, keys)] if keys else []))
    firsts = [cs[0] for cs in series.values()]
    names = dict(zip(series, distinct_labels(firsts, [label(c) for c in firsts])))
    kernels = []
    for c in members:
        kernels += [k for k in c.kernels() if k not in kernels]
    out = [f"### {title}: figure of merit against problem size", ""]
    if plotter.enabled:
        # GPU and host runs are orders of magnitude apart: a figure each.
        for kind in sorted({c.kind for c in firsts}):
            of_kind = {k: cs for k, cs in series.items() if cs[0].kind == kind}
            file = size_plot(plotter, f"{stem}-size" + (f"-{kind}" if kind else ""), of_kind,
                             names, kernels, kind)
            if file:
                out += [f"![{title}: figure of merit against size"
                        f"{f', {kind} runs' if kind else ''}]({plotter.rel}/{file})", ""]
    head = ["series", "device", "bytes per rank"] + kernels
    rows = []
    for key, cs in series.items():
        for c in cs:
            rows.append([names[key], c.device, format_bytes(c.footprint())]
                        + [format_value(c.best(k)[0]) for k in kernels])
    return out + _table(head, rows) + [""]


def layout_pairs(configs):
    """[(config label, {layout: config})] for configs that differ only in
    their layout key."""
    groups = {}
    for c in configs:
        layout_keys = [k for k in c.values if k.endswith(".layout")]
        # A layout is a name; anything else in the deck is not compared.
        if len(layout_keys) != 1 or not isinstance(c.values[layout_keys[0]], str):
            continue
        key = (c.app, c.device, c.ranks, c.concurrency,
               _without(c.values, lambda k, v: k.endswith(".layout")))
        groups.setdefault(key, {})[c.values[layout_keys[0]]] = c
    return [(k, v) for k, v in groups.items() if len(v) >= 2]


def _wrapped(text, width=48):
    """A panel title on lines of at most width characters: long titles of
    neighbouring panels would print over each other."""
    return textwrap.fill(text, width, break_on_hyphens=False)


def layout_plot(plotter, file_stem, pairs, keys, layouts, kernels, members):
    """A panel per configuration (three to a row), a bar per kernel and
    layout; the file's name."""
    fig, axes = plotter.grid(len(pairs), width=4.2, height=3.0)
    colours = plotter.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (_, by) in zip(axes, pairs):
        first = next(iter(by.values()))
        shown = [k for k in kernels if any(c.best(k)[0] for c in by.values())]
        width = 0.8 / len(layouts)
        for i, lay in enumerate(layouts):
            vals = [by[lay].best(k)[0] or 0 if lay in by else 0 for k in shown]
            ax.bar([x + i * width for x in range(len(shown))], vals, width, label=lay,
                   color=colours[i % len(colours)])
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shown))])
        ax.set_xticklabels(shown, rotation=30, ha="right", fontsize=7)
        units = sorted({c.best(k)[1] for c in by.values() for k in shown if c.best(k)[1]})
        values = [c.best(k)[0] for c in by.values() for k in shown if c.best(k)[0]]
        # Kernels of different units, or far apart, share the axis on a log scale.
        if len(units) > 1 or (values and max(values) > 100 * min(values)):
            ax.set_yscale("log")
        ax.set_title(_wrapped(group_label(first, keys, members)), fontsize=7)
        ax.set_ylabel(", ".join(units))
    plotter.legend_below(fig, axes)
    return plotter.save(fig, file_stem)


def layout_section(title, stem, configs, plotter):
    pairs = layout_pairs(configs)
    if not pairs:
        return []
    members = [c for _, v in pairs for c in v.values()]
    keys = [k for k in varying_keys(members) if not k.endswith(".layout")]
    layouts = sorted({lay for _, v in pairs for lay in v})
    out = [f"### {title}: layouts", ""]
    kernels = []
    for c in members:
        kernels += [k for k in c.kernels() if k not in kernels]
    head = ["configuration", "kernel"] + layouts + ([f"{layouts[0]} / {layouts[1]}"]
                                                    if len(layouts) == 2 else [])
    rows = []
    for _, by in pairs:
        label = group_label(next(iter(by.values())), keys, members)
        for k in kernels:
            vals = [by[lay].best(k)[0] if lay in by else None for lay in layouts]
            row = [label, k] + [format_value(v) for v in vals]
            if len(layouts) == 2:
                row.append(f"{vals[0] / vals[1]:.3f}" if vals[0] and vals[1] else "-")
            rows.append(row)
    if plotter.enabled:
        file = layout_plot(plotter, f"{stem}-layout", pairs, keys, layouts, kernels,
                           members)
        out += [f"![{title}: layouts]({plotter.rel}/{file})", ""]
    return out + _table(head, rows) + [""]


def scaling_groups(configs):
    groups = {}
    for c in configs:
        key = (c.app, c.device, c.concurrency, values_key(c.values))
        groups.setdefault(key, []).append(c)
    return [sorted(v, key=lambda c: c.ranks) for v in groups.values()
            if len({c.ranks for c in v}) >= 2]


def efficiency(base, config, kernel):
    """Parallel efficiency of config against base (fewest ranks)."""
    b, _, hib = base.best(kernel)
    v = config.best(kernel)[0]
    if not b or not v:
        return None
    n = config.ranks / base.ranks
    if hib:  # a rate of the whole problem: perfect scaling multiplies it by n
        return v / (b * n)
    strong = any(str(x) == "strong" for k, x in config.values.items() if k.endswith(".scaling"))
    return b / (v * n) if strong else b / v


def scaling_section(title, stem, configs, plotter):
    groups = scaling_groups(configs)
    if not groups:
        return []
    out = [f"### {title}: scaling", "",
           "Efficiency: the FOM at N ranks over N/N0 times the FOM at the fewest ranks N0 "
           "(for rates; for times, T0 N0 / (T N) strong and T0 / T weak).", ""]
    members = [c for g in groups for c in g]
    keys = varying_keys(members)
    kernels = []
    for c in members:
        kernels += [k for k in c.kernels() if k not in kernels]
    if plotter.enabled:
        fig, axes = plotter.grid(len(groups))
        for ax, g in zip(axes, groups):
            for k in kernels:
                pts = [(c.ranks, efficiency(g[0], c, k)) for c in g]
                pts = [p for p in pts if p[1] is not None]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=k)
            ax.set_xscale("log", base=2)
            ax.set_xticks([c.ranks for c in g])
            ax.set_xticklabels([str(c.ranks) for c in g])
            ax.minorticks_off()
            ax.set_ylim(0, max(1.2, ax.get_ylim()[1]))
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_xlabel("ranks")
            ax.set_ylabel("efficiency")
            ax.set_title(_wrapped(group_label(g[0], keys, members) or g[0].stem),
                         fontsize=8)
        plotter.legend_below(fig, axes)
        file = plotter.save(fig, f"{stem}-scaling")
        out += [f"![{title}: scaling]({plotter.rel}/{file})", ""]
    for g in groups:
        head = ["ranks", "nodes"] + [f"{k} ({g[0].best(k)[1]})" for k in kernels]
        rows = []
        for c in g:
            cells = []
            for k in kernels:
                e = efficiency(g[0], c, k)
                cells.append(f"{format_value(c.best(k)[0])} ({e:.0%})" if e is not None else "-")
            rows.append([c.ranks, c.nodes] + cells)
        out += [f"{series_label(g[0], keys) or g[0].stem}, {g[0].device}:", ""]
        out += _table(head, rows) + [""]
    return out


# --- energy -------------------------------------------------------------------------------


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
    return out + _table(head, rows) + [""]


# --- microbenchmarks -------------------------------------------------------------------


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
        return out + _table(["benchmark", "time (us)"], unpaired) + [""]
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
    return out + _table(head, rows) + [""]


# --- the whole report --------------------------------------------------------------------


def sections_of(result_set):
    """[(name, directory or None, runs, benchmark files)] per top-level
    subdirectory of the results directory (files at the top: 'other')."""
    root = result_set.path
    by_dir = {}

    def top(path):
        rel = os.path.relpath(path, root)
        parts = rel.split(os.sep)
        return parts[0] if len(parts) > 1 else None

    for r in result_set.runs:
        by_dir.setdefault(top(r.path), ([], []))[0].append(r)
    for b in result_set.benchmarks:
        by_dir.setdefault(top(b.path), ([], []))[1].append(b)
    if archive.split(root) is None and os.path.isdir(root):
        for d in sorted(os.listdir(root)):
            if os.path.isfile(os.path.join(root, d, "README.md")):
                by_dir.setdefault(d, ([], []))
    out = []
    for d in sorted(by_dir, key=lambda x: (x is None, x or "")):
        runs, benches = by_dir[d]
        name = d or os.path.basename(os.path.abspath(root))
        out.append((name, d, runs, benches))
    return out


def build(result_set, out_path, plotter, title, intro, ours, theirs, command,
          comparisons=(), compare_from=None):
    out_dir = os.path.dirname(os.path.abspath(out_path))
    lines = [f"# {title}", ""]
    if intro:
        lines += include_markdown(intro, os.path.dirname(intro), out_dir, demote=0)
        lines.append("")
    runs = result_set.runs
    lines += [f"_Made by `{command}` (karma-report {__version__}) from {len(runs)} karma "
              f"result file(s) and {len(result_set.benchmarks)} Google Benchmark file(s) "
              "under this directory; do not edit it by hand: edit the write-ups it "
              "includes and run that command again._", ""]
    if result_set.invalid:
        lines += [f"**Left out:** {len(result_set.invalid)} file(s) that are not well-formed "
                  "results (--skip-invalid):", ""]
        lines += [f"- {error}" for _, error in result_set.invalid] + [""]
    sections = sections_of(result_set)
    index = []
    for name, d, rs, bs in sections:
        devices = sorted({r.device for r in rs})
        passed = sum(1 for r in rs if r.passed)
        readme = os.path.join(result_set.path, d, "README.md") if d else None
        writeup = f"[{d}/README.md]({os.path.relpath(readme, out_dir)})" \
            if readme and os.path.isfile(readme) else ""
        index.append([f"[{name}](#{_anchor(name)})", len(rs), len(bs), ", ".join(devices),
                      f"{passed}/{len(rs)}" if rs else "", writeup])
    lines += _table(["results", "karma runs", "benchmark files", "devices", "verified",
                     "write-up"], index) + [""]
    for path in comparisons:
        lines += comparison_section(path, out_dir, plotter)
    lines += side_by_side(result_set.path, out_dir, compare_from)

    for name, d, rs, bs in sections:
        lines += [f"## {name}", ""]
        readme = os.path.join(result_set.path, d, "README.md") if d else None
        if readme and os.path.isfile(readme):
            lines += [f"_From [{d}/README.md]({os.path.relpath(readme, out_dir)}):_", ""]
            lines += include_markdown(readme, d, out_dir, demote=2) + [""]
        if rs:
            configs = configs_of(rs)
            lines += [f"### {name}: every configuration", "",
                      "Best figure of merit over the runs of each configuration (each run's "
                      "FOM comes from its own fastest repetition).", ""]
            apps = sorted({c.app for c in configs})
            for app in apps:
                if len(apps) > 1:
                    lines += [f"karma-{app}:", ""]
                lines += runs_table([c for c in configs if c.app == app]) + [""]
            # Each mini-app's plots and tables name only its own deck keys.
            for app in apps:
                cs = [c for c in configs if c.app == app]
                title, stem = (name, name) if len(apps) == 1 else \
                    (f"{name}, karma-{app}", f"{name}-{app}")
                lines += size_section(title, stem, cs, plotter)
                lines += layout_section(title, stem, cs, plotter)
                lines += scaling_section(title, stem, cs, plotter)
            lines += power_section(name, configs, plotter)
            failed = [r for r in rs if not r.passed]
            if failed:
                lines += [f"**Verification failed** in {len(failed)} run(s): " +
                          ", ".join(f"`{os.path.relpath(r.path, out_dir)}`" for r in failed),
                          ""]
        if bs:
            lines += microbench_section(name, bs, plotter, ours, theirs)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def side_by_side(root, out_dir, compare_from=None):
    """The ratio tables of every campaign directory under root; compare_from
    (a loaded campaign file) gives those of its name their compare: section."""
    lines = []
    for path in find_json(root):
        if os.path.basename(path) != sides.MANIFEST:
            continue
        try:
            doc = read_json(path)
        except ToolError:
            continue
        if not sides.is_manifest(doc) or not doc.get("compare"):
            continue
        specs = None
        if compare_from is not None and \
                (doc.get("campaign") or {}).get("name") == compare_from.name:
            specs = compare_from.compare
        name, _, tables, notes = sides.campaign_tables(path, specs)
        # A campaign in an archive: the link goes to the archive.
        # The campaign's folder, inside its archive where it has one (two
        # campaigns of one archive read apart); the link goes to the archive.
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
    """A karma-compare --json document, checked for the fields the report
    reads (ToolError 2 naming the file and the key otherwise)."""
    doc = read_json(path)

    def need(ok, key, what):
        if not ok:
            raise ToolError(f"{path}: {key}: {what} (write it with karma-compare --json)", 2)

    need(isinstance(doc, dict) and doc.get("karma_compare") == 1, "karma_compare",
         "not a karma-compare document of version 1")
    need(isinstance(doc.get("baseline"), str), "baseline", "expected a set's label")
    need(isinstance(doc.get("summary"), dict), "summary", "expected an object")
    need(isinstance(doc.get("rows"), list), "rows", "expected a list")
    for i, row in enumerate(doc["rows"]):
        need(isinstance(row, dict) and all(isinstance(row.get(k), str)
                                           for k in ("app", "case", "kernel")),
             f"rows[{i}]", "expected app, case and kernel")
        need(row.get("weight") is None or is_number(row["weight"]), f"rows[{i}].weight",
             "expected null or a number")
        need(isinstance(row.get("values"), dict), f"rows[{i}].values", "expected an object")
        for label, v in row["values"].items():
            need(v is None or isinstance(v, dict) and
                 all(v.get(k) is None or is_number(v.get(k))
                     for k in ("ratio", "per_watt_ratio")),
                 f"rows[{i}].values.{label}", "expected null or an object with number ratios")
    return doc


def _weighted(row):
    """Whether a row counts in the summary: weight 0 rows (a vendor's figure
    of the same work, say) do not; a row without a weight does."""
    return row.get("weight") is None or row["weight"] > 0


def _spans(entries, values):
    """xerr of bars: each ratio's distance to the ends of the interval its
    runs span (karma-compare's `interval`), none where it has none."""
    low, high = [], []
    for e, v in zip(entries, values):
        span = e.get("interval")
        ok = v and isinstance(span, list) and len(span) == 2 and all(map(is_number, span))
        low.append(max(v - span[0], 0) if ok else 0)
        high.append(max(span[1] - v, 0) if ok else 0)
    return [low, high]


def ratio_plot(plotter, app, members, labels, base):
    """Per row of one mini-app, a bar of each set's ratio (and per-watt
    ratio) to the baseline: weighted rows first, then, under a rule, the
    rows of weight 0 in grey and hatched; the file's name."""
    weighted = [r for r in members if _weighted(r)]
    rest = [r for r in members if not _weighted(r)]
    rows = [(r, i) for i, r in enumerate(weighted)] + \
        [(r, len(weighted) + 1 + i) for i, r in enumerate(rest)]
    fig, ax = plotter.plt.subplots(
        figsize=(7.5, 0.8 + 0.22 * (len(rows) + (1 if rest else 0)) * len(labels)),
        constrained_layout=True)
    colours = plotter.plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.8 / (2 * len(labels))
    for j, label in enumerate(labels):
        for k, (key, text) in enumerate((("ratio", ""), ("per_watt_ratio", " per W"))):
            for counts, colour, hatch, note in ((True, colours[(2 * j + k) % len(colours)],
                                                 None, ""),
                                                (False, ("0.45", "0.75")[k], "//",
                                                 " (weight 0)")):
                at = [y for r, y in rows if _weighted(r) == counts]
                entries = [r["values"].get(label) or {} for r, _ in rows
                           if _weighted(r) == counts]
                values = [e.get(key) or 0 for e in entries]
                if any(values):
                    ax.barh([y + (2 * j + k) * step - 0.4 + step / 2 for y in at], values,
                            height=step, color=colour, hatch=hatch, edgecolor="white",
                            linewidth=0, label=f"{label}/{base}{text}{note}",
                            xerr=_spans(entries, values) if key == "ratio" else None,
                            error_kw={"elinewidth": 0.6, "capsize": 1.5})
    if rest:
        ax.axhline(len(weighted), color="grey", linewidth=0.8, linestyle="--")
        ax.text(0.99, len(weighted), "weight 0: not in the summary",
                transform=ax.get_yaxis_transform(), ha="right", va="center", fontsize=7,
                color="0.3", bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks([y for _, y in rows])
    ax.set_yticklabels([f"{r['case']} / {r['kernel']}" for r, _ in rows], fontsize=7)
    for tick, (r, _) in zip(ax.get_yticklabels(), rows):
        if not _weighted(r):
            tick.set_color("0.4")
    ax.set_ylim(len(weighted) + (1 + len(rest) if rest else 0) - 0.5, -0.5)
    ax.set_xlabel(f"ratio to {base} (above 1: better; whiskers: the interval of the runs)")
    ax.set_title(f"{app}: each figure of merit against {base}", fontsize=9)
    plotter.legend_below(fig, [ax], ncol=2)
    return plotter.save(fig, f"compare-{app}")


def _with_interval(value, span):
    if value is None:
        return "-"
    if not (isinstance(span, list) and len(span) == 2 and all(map(is_number, span))):
        return format_value(value)
    return f"{format_value(value)} ({span[0]:.3f}-{span[1]:.3f})"


def _record_cell(record, is_base):
    """The procurement figure karma-compare gave a set (docs/score.md), or
    why there is none."""
    if is_base:
        return "the reference"
    if not isinstance(record, dict):
        return "- (not in this comparison)"
    if "why" in record:
        return "none: no reportable baseline results" if "no reportable" in \
            str(record["why"]) else "none"
    if not record.get("complete"):
        return "INCOMPLETE"
    return _with_interval(record.get("figure"), record.get("interval"))


def comparison_section(path, out_dir, plotter):
    """The machines of a karma-compare document side by side: its summary,
    and per mini-app a plot of each row's ratio to the baseline (and per
    watt, where both sides measured energy)."""
    doc = read_comparison(path)
    base = doc["baseline"]
    labels = [label for label in doc["summary"] if label != base]
    where = os.path.relpath(path, out_dir)
    out = ["## Machines compared", "",
           f"_From [{where}]({where}) (karma-compare --json); baseline **{base}**, ratios "
           "above 1 better than it._", ""]
    head = ["set", "procurement figure (rounds)", "weighted geometric mean of paired ratios, "
            "not the procurement figure (rounds)", "per watt", "rows used"]
    rows = []
    for label in [base] + labels:
        v = doc["summary"][label] if isinstance(doc["summary"].get(label), dict) else {}
        mean = "INCOMPLETE" if v.get("coverage") is not None and v.get("geometric_mean") is None \
            else _with_interval(v.get("geometric_mean"), v.get("interval"))
        rows.append([label, _record_cell((doc.get("record") or {}).get(label), label == base),
                     mean, format_value(v.get("per_watt_geometric_mean")),
                     f"{v.get('rows_used', '?')} of {v.get('rows_weighted', '?')}"])
    out += _table(head, rows) + [""]
    if not plotter.enabled:
        return out
    apps = []
    for row in doc["rows"]:
        if row["app"] not in apps:
            apps.append(row["app"])
    for app in apps:
        members = [r for r in doc["rows"] if r["app"] == app and
                   any((r["values"].get(label) or {}).get("ratio") for label in labels)]
        if members:
            file = ratio_plot(plotter, app, members, labels, base)
            out += [f"![{app}: ratios to {base}]({plotter.rel}/{file})", ""]
    return out
