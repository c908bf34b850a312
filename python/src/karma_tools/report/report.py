"""karma-report: a results directory -> a Markdown report with plots."""

import itertools
import os
import pathlib
import re
import textwrap

from karma_tools.core import ToolError, __version__, md_table, unreadable
from karma_tools.results import archive
from karma_tools.results.results import format_size, format_value
from karma_tools.results.cases import values_key
from karma_tools.report.comparison import comparison_section, side_by_side
from karma_tools.report.configs import (configs_of, format_bytes, group_label, heading_anchor,
                                        is_size, kernels_of, series_label, values_without,
                                        varying_keys)
from karma_tools.report.sections import pairs_section, power_section
from karma_tools.score import score as score_render


def include_markdown(path, out_dir, demote=1):
    """The Markdown at path, headings demoted, relative links made out_dir's."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})", 2) from None
    except OSError as e:
        raise unreadable(path, e) from None
    rel = os.path.relpath(os.path.dirname(os.path.abspath(path)), out_dir)

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


def pyplot(what, hint=""):
    """matplotlib.pyplot, drawing to files, or a ToolError (3) naming `what`."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ToolError(f"matplotlib is needed for {what}: install python3-matplotlib (Debian) "
                        f"or matplotlib (pip){hint}", 3) from None
    return plt


_MARKERS = "osD^v<>pPX*h"


class Plotter:
    def __init__(self, directory, fmt, enabled, rel="."):
        """rel: the plots' folder as the report links it."""
        self.directory, self.fmt, self.enabled, self.rel = directory, fmt, enabled, rel
        self.files = []
        self.plt = pyplot("plots", ", or run with --no-plots") if enabled else None
        if enabled:
            self.plt.rcParams.update({"svg.hashsalt": "karma", "font.size": 9,
                                      "axes.grid": True, "grid.alpha": 0.3})

    def legend_below(self, fig, axes, ncol=3):
        """One legend under the figure, of every axes' labels (each once)."""
        entries = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
        if not entries:
            return
        # As many columns as fit (8 pt text: about 14 characters an inch); labels never widen it.
        fit = int(fig.get_size_inches()[0] * 14) // (max(map(len, entries)) + 6)
        fig.legend(list(entries.values()), list(entries), loc="upper center",
                   bbox_to_anchor=(0.5, 0.0), ncol=max(1, min(ncol, fit, len(entries))),
                   fontsize=8, frameon=False)

    def style(self, i):
        """The marker and colour ("CN": the cycle's) of series i: no two of the first 60 alike."""
        return {"marker": _MARKERS[i % len(_MARKERS)], "color": f"C{i}"}

    def save(self, fig, name):
        """Saves fig as name.<fmt>; returns the file name."""
        file = f"{name}.{self.fmt}"
        metadata = {"Date": None} if self.fmt == "svg" else {"Software": None}
        fig.savefig(os.path.join(self.directory, file), format=self.fmt, metadata=metadata,
                    bbox_inches="tight", dpi=110)
        self.plt.close(fig)
        self.files.append(file)
        return file

    def image(self, fig, name, alt, legend=(), ncol=3):
        """The Markdown lines of fig, saved as name, with one legend below the axes `legend`."""
        self.legend_below(fig, legend, ncol)
        return [f"![{alt}]({self.rel}/{self.save(fig, name)})", ""]

    def grid(self, n, width=3.3, height=2.6):
        cols = min(3, n)
        rows = (n + cols - 1) // cols
        fig, axes = self.plt.subplots(rows, cols, figsize=(width * cols, height * rows),
                                      squeeze=False, constrained_layout=True)
        flat = [a for row in axes for a in row]
        for a in flat[n:]:
            a.set_visible(False)
        return fig, flat[:n]


def runs_table(configs):
    keys = varying_keys(configs)
    kernels = kernels_of(configs)
    units = {k: next(c.best(k)[1] for c in configs if k in c.kernels()) for k in kernels}
    threads = len({c.concurrency for c in configs}) > 1
    head = ["deck"] + [k.split(".")[-1] for k in keys] + ["ranks"] + \
        (["threads"] if threads else []) + ["device", "runs"] + \
        [f"{k} ({units[k]})" if units[k] else k for k in kernels] + ["verified"]
    # A key a configuration has not (BabelStream beside karma-stream): blank.
    rows = [[c.stem] + [format_size(c.values[k]) if k in c.values else "" for k in keys]
            + [c.ranks] + ([c.concurrency if c.concurrency is not None else ""] if threads else [])
            + [c.device, len(c.runs)]
            + [format_value(c.best(k)[0]) if k in c.kernels() else "" for k in kernels]
            + [f"{sum(bool(r.passed) for r in c.runs)}/{len(c.runs)}"] for c in configs]
    return md_table(head, rows)


# Integer deck keys that tune a kernel, not the problem's size (team_size, tile...): no size axis.
_TUNING = re.compile(r"(?i)team|block|tile|chunk|vector|thread|unroll|batch|league|warp|cache")


def _size_key(k, v):
    return is_size(v) and not _TUNING.search(k.split(".")[-1])


def size_series(configs):
    """{series key: [configs]}: of one deck, differing only in size keys, at distinct footprints."""
    series = {}
    for c in configs:
        if c.footprint() is None:
            continue
        # Sizes vary along a series; the number of dimensions does not.
        shape = {k: (len(v) if isinstance(v, list) else "n") for k, v in c.values.items()
                 if _size_key(k, v)}
        key = (c.app, c.stem, c.device, c.ranks, c.concurrency,
               values_without(c.values, _size_key), values_key(shape))
        series.setdefault(key, []).append(c)
    return {k: sorted(v, key=lambda c: c.footprint()) for k, v in series.items()
            if len(v) >= 2 and len({c.footprint() for c in v}) == len(v)}


def distinct_labels(configs, texts):
    """texts, one per configuration, made distinct by device, ranks, threads and deck in turn."""
    texts = [t or c.stem for t, c in zip(texts, configs)]
    for extra in ("{c.device}", "{c.ranks} ranks", "{c.concurrency} threads", "deck {c.stem}"):
        same = {t for t in texts if texts.count(t) > 1}
        if not same:
            break
        texts = [f"{t}, {extra.format(c=c)}" if t in same else t for t, c in zip(texts, configs)]
    return texts


def _size_points(configs, kernel):
    return [(c.footprint(), c.best(kernel)[0]) for c in configs if c.best(kernel)[0] is not None]


def size_plot(plotter, title, stem, series, names, kernels, kind):
    """A panel per kernel, a line per series of that kind; its Markdown lines, if any."""
    series = {key: cs for key, cs in series.items() if cs[0].kind == kind}
    kernels = [k for k in kernels if any(len(_size_points(cs, k)) >= 2 for cs in series.values())]
    if not kernels:
        return []
    fig, axes = plotter.grid(len(kernels))
    for ax, kernel in zip(axes, kernels):
        units = ""
        for i, (key, cs) in enumerate(series.items()):
            pts = _size_points(cs, kernel)
            if len(pts) < 2:
                continue
            ax.plot(*zip(*pts), label=names[key], **plotter.style(i))
            units = units or cs[0].best(kernel)[1]
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{kernel} ({kind} runs)" if kind else kernel, fontsize=9)
        ax.set(xlabel="bytes per rank", ylabel=units)
    alt = f"{title}: figure of merit against size" + (f", {kind} runs" if kind else "")
    return plotter.image(fig, f"{stem}-size" + (f"-{kind}" if kind else ""), alt, axes)


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
    kernels = kernels_of(members)
    out = [f"### {title}: figure of merit against problem size", ""]
    if plotter.enabled:
        # GPU and host runs are orders of magnitude apart: a figure each.
        for kind in sorted({c.kind for c in firsts}):
            out += size_plot(plotter, title, stem, series, names, kernels, kind)
    head = ["series", "device", "bytes per rank"] + kernels
    rows = [[names[key], c.device, format_bytes(c.footprint())]
            + [format_value(c.best(k)[0]) for k in kernels]
            for key, cs in series.items() for c in cs]
    return out + md_table(head, rows) + [""]


def layout_pairs(configs):
    """[{layout: config}] of configs that differ only in their layout."""
    groups = {}
    for c in configs:
        layout_keys = [k for k in c.values if k.endswith(".layout")]
        # A layout is a name; anything else in the deck is not compared.
        if len(layout_keys) != 1 or not isinstance(c.values[layout_keys[0]], str):
            continue
        key = (c.app, c.device, c.ranks, c.concurrency,
               values_without(c.values, lambda k, v: k.endswith(".layout")))
        groups.setdefault(key, {})[c.values[layout_keys[0]]] = c
    return [v for v in groups.values() if len(v) >= 2]


def _wrapped(text, width=48):
    """A panel title wrapped, not to print over its neighbours'."""
    return textwrap.fill(text, width, break_on_hyphens=False)


def layout_section(title, stem, configs, plotter):
    pairs = layout_pairs(configs)
    if not pairs:
        return []
    members = [c for by in pairs for c in by.values()]
    keys = [k for k in varying_keys(members) if not k.endswith(".layout")]
    labels = [group_label(next(iter(by.values())), keys, members) for by in pairs]
    layouts = sorted({lay for by in pairs for lay in by})
    out = [f"### {title}: layouts", ""]
    kernels = kernels_of(members)
    head = ["configuration", "kernel"] + layouts + ([f"{layouts[0]} / {layouts[1]}"]
                                                    if len(layouts) == 2 else [])
    rows = []
    for label, by in zip(labels, pairs):
        for k in kernels:
            vals = [by[lay].best(k)[0] if lay in by else None for lay in layouts]
            row = [label, k] + [format_value(v) for v in vals]
            if len(layouts) == 2:
                row.append(f"{vals[0] / vals[1]:.3f}" if vals[0] and vals[1] else "-")
            rows.append(row)
    if plotter.enabled:
        fig, axes = plotter.grid(len(pairs), width=4.2, height=3.0)
        width = 0.8 / len(layouts)
        for ax, label, by in zip(axes, labels, pairs):
            shown = [k for k in kernels if any(c.best(k)[0] for c in by.values())]
            for i, lay in enumerate(layouts):
                vals = [by[lay].best(k)[0] or 0 if lay in by else 0 for k in shown]
                ax.bar([x + i * width for x in range(len(shown))], vals, width, label=lay,
                       color=f"C{i}")
            ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shown))])
            ax.set_xticklabels(shown, rotation=30, ha="right", fontsize=7)
            units = sorted({c.best(k)[1] for c in by.values() for k in shown if c.best(k)[1]})
            values = [c.best(k)[0] for c in by.values() for k in shown if c.best(k)[0]]
            # Kernels of different units, or far apart, share the axis on a log scale.
            if len(units) > 1 or (values and max(values) > 100 * min(values)):
                ax.set_yscale("log")
            ax.set_title(_wrapped(label), fontsize=7)
            ax.set_ylabel(", ".join(units))
        out += plotter.image(fig, f"{stem}-layout", f"{title}: layouts", axes)
    return out + md_table(head, rows) + [""]


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


def _scaling_cell(base, config, kernel):
    e = efficiency(base, config, kernel)
    return f"{format_value(config.best(kernel)[0])} ({e:.0%})" if e is not None else "-"


def scaling_section(title, stem, configs, plotter):
    by_case = {}
    for c in configs:
        by_case.setdefault((c.app, c.device, c.concurrency, values_key(c.values)), []).append(c)
    groups = [sorted(v, key=lambda c: c.ranks) for v in by_case.values()
              if len({c.ranks for c in v}) >= 2]
    if not groups:
        return []
    out = [f"### {title}: scaling", "",
           "Efficiency: the FOM at N ranks over N/N0 times the FOM at the fewest ranks N0 "
           "(for rates; for times, T0 N0 / (T N) strong and T0 / T weak).", ""]
    members = [c for g in groups for c in g]
    keys = varying_keys(members)
    kernels = kernels_of(members)
    if plotter.enabled:
        fig, axes = plotter.grid(len(groups))
        for ax, g in zip(axes, groups):
            for k in kernels:
                pts = [(c.ranks, e) for c in g if (e := efficiency(g[0], c, k)) is not None]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=k)
            ax.set_xscale("log", base=2)
            ax.set_xticks([c.ranks for c in g])
            ax.set_xticklabels([str(c.ranks) for c in g])
            ax.minorticks_off()
            ax.set_ylim(0, max(1.2, ax.get_ylim()[1]))
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set(xlabel="ranks", ylabel="efficiency")
            ax.set_title(_wrapped(group_label(g[0], keys, members)), fontsize=8)
        out += plotter.image(fig, f"{stem}-scaling", f"{title}: scaling", axes)
    for g in groups:
        head = ["ranks", "nodes"] + [f"{k} ({g[0].best(k)[1]})" for k in kernels]
        rows = [[c.ranks, c.nodes] + [_scaling_cell(g[0], c, k) for k in kernels] for c in g]
        out += [f"{series_label(g[0], keys)}, {g[0].device}:", ""]
        out += md_table(head, rows) + [""]
    return out


def _readme(root, d):
    """The write-up of the results folder d, d/README.md, where it has one."""
    path = os.path.join(root, d, "README.md") if d else None
    return path if path and os.path.isfile(path) else None


def sections_of(result_set):
    """[(name, folder or None, runs, README.md or None)] per top-level folder."""
    root = result_set.path
    by_dir = {}
    for r in result_set.runs:
        parts = os.path.relpath(r.path, root).split(os.sep)
        by_dir.setdefault(parts[0] if len(parts) > 1 else None, []).append(r)
    if archive.split(root) is None and os.path.isdir(root):
        for d in sorted(filter(lambda d: _readme(root, d), os.listdir(root))):
            by_dir.setdefault(d, [])
    return [(d or os.path.basename(os.path.abspath(root)), d, by_dir[d], _readme(root, d))
            for d in sorted(by_dir, key=lambda x: (x is None, x or ""))]


def build(result_set, out_path, plotter, title, intro, ours, theirs, command,
          comparisons=(), compare_from=None, scored=None):
    """The report's text; scored: the set's score (figure.score), if any."""
    out_dir = os.path.dirname(os.path.abspath(out_path))
    lines = [f"# {title}", ""]
    if intro:
        lines += include_markdown(intro, out_dir, demote=0) + [""]
    lines += [f"_Made by `{command}` (karma-report {__version__}) from {len(result_set.runs)} "
              "karma result file(s) under this directory; do not edit it by hand: edit the "
              "write-ups it includes and run that command again._", ""]
    if result_set.invalid:
        lines += [f"**Left out:** {len(result_set.invalid)} file(s) that are not well-formed "
                  "results (--skip-invalid):", ""]
        lines += [f"- {error}" for _, error in result_set.invalid] + [""]
    sections = sections_of(result_set)
    index = [[f"[{name}](#{heading_anchor(name)})", len(rs),
              ", ".join(sorted({r.device for r in rs})),
              f"{sum(bool(r.passed) for r in rs)}/{len(rs)}" if rs else "",
              f"[{d}/README.md]({os.path.relpath(readme, out_dir)})" if readme else ""]
             for name, d, rs, readme in sections]
    lines += md_table(["results", "karma runs", "devices", "verified", "write-up"], index) + [""]
    if scored:
        lines += score_render.section(scored)
    for path in comparisons:
        lines += comparison_section(path, out_dir, plotter)
    lines += side_by_side(result_set.path, out_dir, compare_from)

    for name, d, rs, readme in sections:
        lines += [f"## {name}", ""]
        if readme:
            lines += [f"_From [{d}/README.md]({os.path.relpath(readme, out_dir)}):_", ""]
            lines += include_markdown(readme, out_dir, demote=2) + [""]
        # Runs that measure `ours` beside `theirs` (karma-microbench's) are pairs, not configs.
        both = {ours, theirs}
        paired = [r for r in rs if both <= {k["implementation"] for k in r.kernels.values()}]
        mine = [r for r in rs if r not in paired]
        if mine:
            configs = configs_of(mine)
            lines += [f"### {name}: every configuration", "",
                      "Best figure of merit over the runs of each configuration (each run's "
                      "FOM comes from its own fastest repetition).", ""]
            # configs_of sorts by app first.
            apps = {app: list(cs) for app, cs in itertools.groupby(configs, lambda c: c.app)}
            for app, cs in apps.items():
                if len(apps) > 1:
                    lines += [f"karma-{app}:", ""]
                lines += runs_table(cs) + [""]
            # Each mini-app's plots and tables name only its own deck keys.
            for app, cs in apps.items():
                title, stem = (name, name) if len(apps) == 1 else \
                    (f"{name}, karma-{app}", f"{name}-{app}")
                for section in (size_section, layout_section, scaling_section):
                    lines += section(title, stem, cs, plotter)
            lines += power_section(name, configs, plotter)
        if paired:
            lines += pairs_section(name, paired, plotter, ours, theirs)
        failed = [r for r in rs if not r.passed]
        if failed:
            lines += [f"**Verification failed** in {len(failed)} run(s): " +
                      ", ".join(f"`{os.path.relpath(r.path, out_dir)}`" for r in failed), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
