"""karma-report on sample results and on the committed results/: the tables
hold the numbers in the JSON, the plots exist, a write-up is included with its
links working, and bad input writes nothing."""

import json
import os
import re
import shutil

import pytest

from conftest import ROOT, SAMPLES, load_json, tool, write
from karma_tools.report import report
from karma_tools.report import comparison as report_comparison
from karma_tools.report import configs as report_configs
from karma_tools.cli import report as report_cli

A = os.path.join(SAMPLES, "machine-a")
MICRO = os.path.join(SAMPLES, "microbench")


def fom(path, kernel):
    doc = load_json(path)
    return next(k["fom"]["value"] for k in doc["kernels"] if k["name"] == kernel)


@pytest.fixture
def results_dir(tmp_path):
    """A results directory as the suite lays it out: one folder per mini-app,
    stream's with a write-up."""
    root = tmp_path / "results"
    shutil.copytree(A, root / "stream")
    write(str(root / "stream" / "README.md"),
          "# STREAM here\n\nSee [the schema](../SCHEMA.md) and [a run](stream-3d-left.json).\n")
    shutil.copytree(MICRO, root / "microbench")
    return root


@pytest.fixture
def figures(monkeypatch):
    """{file stem: figure} of every plot that karma-report saves in this
    process (figures stay readable after they are closed)."""
    seen = {}
    save = report.Plotter.save

    def keep(self, fig, name):
        seen[name] = fig
        return save(self, fig, name)

    monkeypatch.setattr(report.Plotter, "save", keep)
    return seen


def visible_axes(fig):
    return [a for a in fig.axes if a.get_visible()]


def legend_labels(fig):
    """The texts of the figure's legend (exactly one legend)."""
    assert len(fig.legends) == 1, fig.legends
    return [t.get_text() for t in fig.legends[0].get_texts()]


def legend_handles(fig):
    legend = fig.legends[0]
    return getattr(legend, "legend_handles", None) or legend.legendHandles


def png_size(path):
    """(width, height) in pixels from a PNG's header."""
    head = open(path, "rb").read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def table_rows(text, heading, header=False):
    """The rows of the first table after a heading, as lists of cells (with
    header: the header row first)."""
    part = text.split(heading, 1)[1]
    rows = []
    for line in part.splitlines()[1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[:1] + rows[2:] if header else rows[2:]  # no rule


def test_report_of_a_results_directory(results_dir):
    out = results_dir / "README.md"
    r = tool("karma-report", results_dir, "-o", out, "--title", "Sample results")
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith("# Sample results\n")
    # The write-up, included with its headings demoted and links still right.
    assert "### STREAM here" in text
    assert "[the schema](SCHEMA.md)" in text and "[a run](stream/stream-3d-left.json)" in text
    # Every configuration with its best FOM per kernel: 2 rounds of 2^16 -> the better one.
    rows = table_rows(text, "### stream: every configuration")
    best = max(fom(f"{A}/stream-1d-2p16-r{k}.json", "copy") for k in (1, 2))
    row = next(r for r in rows if r[4] == "[2^16]")
    assert row[9] == f"{best:.4g}" if best < 1000 else f"{best:.0f}"
    assert row[-1] == "2/2"
    # Layouts: left / right from the two 3D runs.
    rows = table_rows(text, "### stream: layouts")
    left, right = (fom(f"{A}/stream-3d-{side}.json", "triad") for side in ("left", "right"))
    triad = next(r for r in rows if r[1] == "triad")
    assert triad[4] == f"{left / right:.3f}"
    # Scaling: strong, 2 ranks against 1.
    part = text.split("scaling=strong, shape=[2^20]", 1)[1]
    one, two = (fom(f"{A}/stream-strong-{n}.json", "nstream") for n in (1, 2))
    eff = two / (2 * one)
    assert f"({eff:.0%})" in part.split("scaling=weak")[0]
    # Microbenchmarks: each benchmark's karma against its raw, medians of the two runs.
    rows = table_rows(text, "### microbench: microbenchmarks")
    karma, raw = (microbench_medians(impl) for impl in ("karma", "raw"))
    assert sorted(r[1] for r in rows) == sorted(karma)
    for r in rows:
        assert r[2:4] == [f"{karma[r[1]]:.4g}", f"{raw[r[1]]:.4g}"]
        assert r[4].startswith(f"{karma[r[1]] / raw[r[1]]:.3f} (")
    # Plots: linked and present, as SVG.
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert sorted(os.path.basename(link) for link in links) == [
        "microbench-microbench.svg", "stream-layout.svg", "stream-scaling.svg",
        "stream-size-host.svg"]
    for link in links:
        with open(results_dir / link) as f:
            assert "<svg" in f.read(2000)
    # No energy in these results: no power section.
    assert "against power" not in text


def test_plots_are_reproducible_and_replaced_whole(results_dir, tmp_path):
    out = tmp_path / "r.md"
    plots = tmp_path / "plots"
    assert tool("karma-report", results_dir, "-o", out).returncode == 0
    first = {f: (plots / f).read_bytes() for f in os.listdir(plots)}
    (plots / "stale.svg").write_text("<svg/>")
    assert tool("karma-report", results_dir, "-o", out).returncode == 0
    second = {f: (plots / f).read_bytes() for f in os.listdir(plots)}
    assert first == second  # same input, same bytes; the stale plot is gone


def test_png_and_no_plots(results_dir, tmp_path):
    r = tool("karma-report", results_dir, "-o", tmp_path / "p.md", "--format", "png",
             "--plots-dir", tmp_path / "png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "png" / "stream-size-host.png").read_bytes()[:4] == b"\x89PNG"
    assert "](png/stream-size-host.png)" in (tmp_path / "p.md").read_text()
    r = tool("karma-report", results_dir, "-o", tmp_path / "n.md", "--plots-dir",
             tmp_path / "none", "--no-plots")
    assert r.returncode == 0 and not (tmp_path / "none").exists()
    assert "![" not in (tmp_path / "n.md").read_text()


def test_plots_dir_naming_a_file_is_refused(results_dir, tmp_path):
    """--plots-dir replaces a folder whole, never a file: the file is kept, nothing written."""
    (tmp_path / "notes.txt").write_text("mine\n")
    r = tool("karma-report", results_dir, "-o", tmp_path / "r.md", "--plots-dir",
             tmp_path / "notes.txt")
    assert r.returncode == 2, r.stderr
    assert f"{tmp_path / 'notes.txt'}: a file, not a plots folder (--plots-dir)" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "results"]
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_nothing_to_plot_says_so_and_makes_no_folder(tmp_path):
    """One run has no size to plot against: the report says so, and leaves
    no empty plots/ beside it."""
    (tmp_path / "set").mkdir()
    shutil.copy(os.path.join(A, "stream-3d-left.json"), tmp_path / "set")
    r = tool("karma-report", tmp_path / "set", "-o", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert "nothing to plot, no plots folder" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["r.md", "set"]


def test_committed_results(tmp_path):
    """The report of the repository's own results/ reproduces the numbers of
    the STREAM write-up's 3D table from the committed JSON."""
    results = os.path.join(ROOT, "results")
    out = tmp_path / "README.md"
    r = tool("karma-report", results, "--committed-only", "--no-plots", "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    writeup = open(os.path.join(results, "stream", "README.md")).read()
    m = re.search(r"#+ 3D arrays.*?\n(\| shape, layout.*?)\n\n", writeup, re.S)
    assert m, "the 3D table of results/stream/README.md"
    # The generated table leaves out columns whose value never changes, so
    # its columns are found by name.
    header, *generated = table_rows(text, "### stream: every configuration", header=True)
    names = ("copy", "mul", "add", "triad", "dot", "nstream")
    kernels = [header.index(f"{k} (GB/s)") for k in names]
    for line in m.group(1).splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        size, layout = re.match(r"(\d+)\^3, (\w+)", cells[0]).groups()
        shape = f"[{size},{size},{size}]"
        row = next(r for r in generated if r[header.index("layout")] == layout
                   and r[header.index("shape")] == shape)
        assert [row[k] for k in kernels] == cells[1:7], (cells, row)


@pytest.mark.parametrize("case, message", [
    ("schema", "schema_version 3, but this tool reads karma results of schema_version 1 or 2"),
    ("empty", "no karma results found"),
    ("missing", "not a directory"),
])
def test_bad_input_writes_nothing(tmp_path, case, message):
    src = {"schema": os.path.join(SAMPLES, "schema-v3"), "empty": str(tmp_path / "empty"),
           "missing": str(tmp_path / "missing")}[case]
    os.makedirs(tmp_path / "empty", exist_ok=True)
    out = tmp_path / "out" / "report.md"
    os.makedirs(out.parent)
    r = tool("karma-report", src, "-o", out)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert os.listdir(out.parent) == []


def microbench_medians(implementation):
    """{benchmark: median FOM over the sample runs} of one implementation."""
    values = {}
    for name in sorted(os.listdir(MICRO)):
        for k in load_json(os.path.join(MICRO, name))["kernels"]:
            if k["implementation"] == implementation:
                values.setdefault(k["variant"], []).append(k["fom"]["value"])
    return {b: sum(v) / len(v) for b, v in values.items()}  # the median of two


def test_microbench_pair_names_the_implementations(results_dir):
    """--microbench-pair raw-twin:raw: the machine's own spread instead."""
    out = results_dir / "README.md"
    r = tool("karma-report", results_dir, "-o", out, "--no-plots", "--microbench-pair",
             "raw-twin:raw")
    assert r.returncode == 0, r.stderr
    rows = table_rows(out.read_text(), "### microbench: microbenchmarks")
    twin, raw = (microbench_medians(impl) for impl in ("raw-twin", "raw"))
    assert rows and {r[1]: r[4].split()[0] for r in rows} == {
        b: f"{twin[b] / raw[b]:.3f}" for b in raw}


def add_energy(path, watts, device=None):
    """The results file at path with every kernel's energy measured at
    `watts` (and its first rank on `device`)."""
    doc = load_json(path)
    for k in doc["kernels"]:
        value = k["fom"]["value"]
        k["energy"] = {"status": "measured", "source": "nvml", "counters": 1, "window_s": 0.6,
                       "executions": 100, "counter_step_s": 0.02, "average_power_W": watts,
                       "joules_per_execution": watts * 0.001,
                       "fom_per_watt": {"value": value / watts, "units": "GB/s/W"}}
    doc["energy"] = {"window_s": 0.5, "ranks": [{"status": "measured", "source": "nvml",
                                                 "idle_power_W": 50.0}]}
    if device:
        doc["ranks"][0]["device"]["name"] = device
    write(str(path), json.dumps(doc))


def test_figure_of_merit_against_power(results_dir, tmp_path, figures):
    """Runs that measured energy, on two devices, in two units: a plot per
    unit with a panel per device, and a table of the points; runs without
    energy are not in it."""
    stream = results_dir / "stream"
    add_energy(stream / "stream-3d-left.json", 100.0)
    add_energy(stream / "stream-3d-right.json", 120.0)
    shutil.copy(stream / "stream-3d-right.json", stream / "gpu.json")
    add_energy(stream / "gpu.json", 250.0, device="NVIDIA H100")
    # The GPU's dot in a unit of its own: a plot of its own.
    doc = load_json(stream / "gpu.json")
    next(k for k in doc["kernels"] if k["name"] == "dot")["fom"]["units"] = "Gdots/s"
    write(str(stream / "gpu.json"), json.dumps(doc))
    # Measured on no rank: not a point.
    doc = load_json(stream / "stream-weak-1.json")
    for k in doc["kernels"]:
        k["energy"] = {"status": "unavailable", "reason": "no counter"}
    write(str(stream / "stream-weak-1.json"), json.dumps(doc))
    out = results_dir / "README.md"
    assert report_cli.main([str(results_dir), "-o", str(out)]) == 0
    text = out.read_text()
    assert "### stream: figure of merit against power" in text
    assert "![stream: GB/s against power](plots/stream-power-GB-s.svg)" in text
    assert "![stream: Gdots/s against power](plots/stream-power-Gdots-s.svg)" in text
    with open(results_dir / "plots" / "stream-power-GB-s.svg") as f:
        svg = f.read()
    assert "<svg" in svg[:2000] and "NVIDIA H100" in svg and "AMD EPYC" in svg
    # Each plot: one unit on its y axes, a panel per device that has it, a
    # legend whose entries differ in colour or marker.
    gbs, dots = figures["stream-power-GB-s"], figures["stream-power-Gdots-s"]
    assert [a.get_title() for a in visible_axes(gbs)] == ["AMD EPYC", "NVIDIA H100"]
    assert [a.get_title() for a in visible_axes(dots)] == ["NVIDIA H100"]
    assert {a.get_ylabel() for a in visible_axes(gbs)} == {"GB/s"}
    assert {a.get_ylabel() for a in visible_axes(dots)} == {"Gdots/s"}
    assert legend_labels(dots) == ["stream/dot"]
    labels = legend_labels(gbs)
    assert sorted(labels) == sorted(f"stream/{k}" for k in
                                    ("copy", "mul", "add", "triad", "dot", "nstream"))
    styles = [(h.get_paths()[0].vertices.tobytes(), tuple(h.get_facecolor()[0]))
              for h in legend_handles(gbs)]
    assert len(set(styles)) == len(styles)
    header, *rows = table_rows(text, "### stream: figure of merit against power", header=True)
    assert header == ["device", "configuration", "ranks", "kernel", "FOM", "units",
                      "power (W)", "FOM per watt", "J per execution"]
    assert len(rows) == 18  # 6 kernels of 3 runs
    triad = {(r[0], r[1]): r for r in rows if r[3] == "stream/triad"}
    left = fom(f"{A}/stream-3d-left.json", "triad")
    right = fom(f"{A}/stream-3d-right.json", "triad")
    assert sorted(triad) == [("AMD EPYC", "layout=left"), ("AMD EPYC", "layout=right"),
                             ("NVIDIA H100", "layout=right")]
    assert triad[("AMD EPYC", "layout=left")][2:] == [
        "1", "stream/triad", f"{left:.4g}", "GB/s", "100", f"{left / 100:.4g}", "0.1"]
    assert triad[("NVIDIA H100", "layout=right")][4:8] == [
        f"{right:.4g}", "GB/s", "250", f"{right / 250:.4g}"]
    # The other plots are as before.
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert sorted(os.path.basename(link) for link in links) == [
        "microbench-microbench.svg", "stream-layout.svg", "stream-power-GB-s.svg",
        "stream-power-Gdots-s.svg", "stream-scaling.svg", "stream-size-host.svg"]
    # Without plots, the table alone.
    r = tool("karma-report", results_dir, "-o", tmp_path / "n.md", "--no-plots")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "n.md").read_text()
    assert "### stream: figure of merit against power" in text and "stream-power" not in text


def test_skip_invalid_reports_the_rest(tmp_path):
    d = tmp_path / "runs"
    shutil.copytree(A, d)
    broken = write(str(d / "broken.json"), '{"schema_version": 2, "app": 1}')
    out = tmp_path / "r.md"
    r = tool("karma-report", d, "--no-plots", "-o", out)
    assert r.returncode == 2 and "broken.json" in r.stderr and not out.exists()
    r = tool("karma-report", d, "--no-plots", "-o", out, "--skip-invalid")
    assert r.returncode == 0, r.stderr
    assert f"karma-report: left out {broken}" in r.stderr
    text = open(out).read()
    assert "**Left out:** 1 file(s)" in text and f"- {broken}" in text
    assert "11 karma result file(s)" in text


def test_the_score_reads_the_set_as_the_report_opened_it(tmp_path):
    """--score --skip-invalid scores the runs the report read, the invalid file
    left out and named (the set is opened once), with the bundle's figure."""
    from karma_tools.core import write_folder
    from karma_tools.results import archive, resultset
    from karma_tools.score import figure
    unit = os.path.join(ROOT, "results", "procurement", "h200-1.1.0-2b92b403.tar.xz")
    d = tmp_path / "unit"
    write_folder(str(d), archive.open_archive(unit).files)
    broken = write(str(d / "results" / "broken.json"), '{"schema_version": 2, "app": 1}')
    r = tool("karma-report", d, "--score", "--skip-invalid", "--no-plots", "-o", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert "Procurement figure: 1.000" in (tmp_path / "r.md").read_text()
    opened = resultset.open(str(d), skip_invalid=True)
    scored = figure.score([("unit", opened)])["sets"][0]
    assert scored["record"] == figure.score([("unit", unit)])["sets"][0]["record"]
    assert [x["file"] for x in scored["left_out"]] == [broken]


def test_the_files_skipped_are_named(tmp_path):
    """JSON files that are no karma results are skipped, each named with
    why; those of other karma tools (a campaign's environment captures, one
    a job) are counted by kind."""
    d = tmp_path / "runs"
    shutil.copytree(A, d)
    other = write(str(d / "other" / "summary.json"), '{"rows": []}')
    for job in ("a", "b"):
        write(str(d / job / "environment" / "environment.json"), '{"karma_environment": 1}')
    r = tool("karma-report", d, "--no-plots", "-o", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert f"karma-report: skipped {other} (not karma results)\n" in r.stderr, r.stderr
    assert "karma-report: skipped 2 karma-envcapture's environment.json: other karma " \
        "tools' files\n" in r.stderr, r.stderr
    assert "; skipped 3 file(s), listed above)" in r.stderr, r.stderr


def as_app(src, dst, app, values, kind=None, device=None):
    """The results file src as a run of another app (its deck's keys
    replaced by values) or on another device."""
    doc = load_json(src)
    doc["app"] = app
    if values is not None:
        doc["deck"]["resolved"] = {"run": doc["deck"]["resolved"]["run"], app: values}
    if kind:
        doc["ranks"][0]["device"]["kind"] = kind
    if device:
        doc["ranks"][0]["device"]["name"] = device
    write(str(dst), json.dumps(doc))


def test_layouts_per_app_with_its_own_keys(tmp_path, figures):
    """Two mini-apps in one folder: each its own layout table and plot,
    naming only its own keys; panel titles of long configurations are
    wrapped, so that the figure stays three panels wide and no title runs
    into its neighbour's."""
    root = tmp_path / "results"
    os.makedirs(root / "mixed")
    for side in ("left", "right"):
        shutil.copy(f"{A}/stream-3d-{side}.json", root / "mixed" / f"stream-{side}.json")
        for i in range(4):
            values = {"layout": side, "n": 4096, "implementation": "kokkos",
                      "note": f"a long description of a configuration, number {i}, "
                      "as decks of real mini-apps have many keys"}
            as_app(f"{A}/stream-3d-{side}.json", root / "mixed" / f"hex-{side}-{i}.json",
                   "hexgrad", values)
    out = tmp_path / "report.md"
    assert report_cli.main([str(root), "-o", str(out), "--format", "png"]) == 0
    text = out.read_text()
    assert "None" not in text
    rows = table_rows(text, "### mixed, karma-hexgrad: layouts")
    assert len(rows) == 4 * 6 and {r[0] for r in rows} == {
        f"note=a long description of a configuration, number {i}, as decks of real mini-apps "
        "have many keys" for i in range(4)}
    rows = table_rows(text, "### mixed, karma-stream: layouts")
    assert [r[0] for r in rows] == ["small"] * 6  # nothing varies but the layout
    for app, panels in (("hexgrad", 4), ("stream", 1)):
        fig = figures[f"mixed-{app}-layout"]
        assert len(visible_axes(fig)) == panels
        assert legend_labels(fig) == ["left", "right"]
        width, _ = png_size(tmp_path / "plots" / f"mixed-{app}-layout.png")
        assert width <= 110 * 4.2 * min(3, panels) + 60, width
    fig = figures["mixed-hexgrad-layout"]
    # A closed figure may have lost its Agg canvas (newer matplotlib): give it one.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = [a.title.get_window_extent(renderer) for a in visible_axes(fig)]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all("None" not in a.get_title() for a in visible_axes(fig))


def test_size_plots_per_device_kind_with_a_legend(results_dir, figures):
    """Host and GPU runs of one size sweep: a figure each, every panel of a
    single kind, and a legend whose labels tell the lines apart (here only
    by their device)."""
    stream = results_dir / "stream"
    sweep = [f"stream-1d-2p{n}-r{r}.json" for n in (16, 20) for r in (1, 2)]
    for gpu, scale in (("NVIDIA H100", 10), ("NVIDIA H200", 20)):
        for name in sweep:
            dst = stream / f"{gpu[-4:]}-{name}"
            as_app(stream / name, dst, "stream", None, kind="gpu", device=gpu)
            doc = load_json(dst)
            for k in doc["kernels"]:
                k["fom"]["value"] *= scale
            write(str(dst), json.dumps(doc))
    out = results_dir / "README.md"
    assert report_cli.main([str(results_dir), "-o", str(out)]) == 0
    text = out.read_text()
    assert "](plots/stream-size-gpu.svg)" in text and "](plots/stream-size-host.svg)" in text
    host, gpu = figures["stream-size-host"], figures["stream-size-gpu"]
    assert {a.get_title() for a in visible_axes(gpu)} == {
        f"{k} (gpu runs)" for k in ("copy", "mul", "add", "triad", "dot", "nstream")}
    assert all(a.get_title().endswith("(host runs)") for a in visible_axes(host))
    labels = legend_labels(gpu)
    assert len(labels) == 2 and labels[0] != labels[1]
    assert "NVIDIA H100" in labels[0] + labels[1] and "NVIDIA H200" in labels[0] + labels[1]
    assert legend_labels(host) and all(legend_labels(host))
    # The GPU panels hold GPU values only: 10 and 20 times the host's.
    host_copy = max(max(line.get_ydata()) for line in visible_axes(host)[0].get_lines())
    gpu_copy = sorted(max(line.get_ydata()) for line in visible_axes(gpu)[0].get_lines())
    assert gpu_copy == pytest.approx([10 * host_copy, 20 * host_copy])
    rows = table_rows(text, "### stream: figure of merit against problem size")
    assert {(r[0], r[1]) for r in rows if r[1].startswith("NVIDIA")} == {
        (labels[0], "NVIDIA H100"), (labels[1], "NVIDIA H200")}


def comparison_doc(kernels):
    """A karma-compare --json document of sets a (baseline) and b: a stream
    row per kernel, b 1.2 times a, 1.1 per watt."""
    rows = [{"app": "stream", "case": "gpu: default", "kernel": kernel,
             "values": {"a": {"ratio": 1.0, "per_watt_ratio": 1.0},
                        "b": {"ratio": 1.2, "per_watt_ratio": 1.1}}} for kernel in kernels]
    return {"karma_compare": 1, "baseline": "a", "rows": rows,
            "sets": [{"label": "a"}, {"label": "b"}], "record": {}}


def test_ratio_bars_one_per_row_and_measure(tmp_path, figures):
    """Each row of an app, in order, a bar of b's ratio and one of its
    per-watt ratio to the baseline."""
    path = tmp_path / "cmp.json"
    kernels = ["copy", "mul", "add", "triad", "dot"]
    write(str(path), json.dumps(comparison_doc(kernels)))
    plotter = report.Plotter(str(tmp_path), "png", True)
    plotter.rel = "."
    lines = report_comparison.comparison_section(str(path), str(tmp_path), plotter)
    assert "![stream: ratios to a](./compare-stream.png)" in lines
    assert "| b | - (not in this comparison) |" in lines
    fig = figures["compare-stream"]
    ax = visible_axes(fig)[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == [f"gpu: default / {k}" for k in kernels]
    assert legend_labels(fig) == ["b/a", "b/a per W"]
    widths = sorted(round(bar.get_width(), 3) for bar in ax.patches)
    assert widths == [1.1] * 5 + [1.2] * 5


def test_comparison_without_sets_is_refused(results_dir, tmp_path):
    path = tmp_path / "cmp.json"
    doc = comparison_doc(["copy"])
    del doc["sets"]
    write(str(path), json.dumps(doc))
    out = tmp_path / "out" / "report.md"
    os.makedirs(out.parent)
    r = tool("karma-report", results_dir, "--comparison", path, "-o", out)
    assert r.returncode == 2, r.stderr
    assert f"{path}: sets: expected a list of sets with labels" in r.stderr
    assert os.listdir(out.parent) == []


def test_a_comparison_of_an_unknown_version_is_refused(results_dir, tmp_path):
    path = tmp_path / "cmp.json"
    write(str(path), json.dumps(dict(comparison_doc(["copy"]), karma_compare=3)))
    r = tool("karma-report", results_dir, "--comparison", path, "-o", tmp_path / "r.md")
    assert r.returncode == 2 and not (tmp_path / "r.md").exists(), r.stderr
    assert f"{path}: karma_compare: not a karma-compare document of version 1 or 2" in r.stderr


@pytest.mark.parametrize("change, why", [
    ({"sets": [{"label": "a"}, {"label": "a"}]}, "sets: two sets have the label 'a'"),
    ({"baseline": "c"}, "baseline: 'c' is no set's label")])
def test_a_comparison_of_ambiguous_labels_is_refused(results_dir, tmp_path, change, why):
    path = tmp_path / "cmp.json"
    write(str(path), json.dumps(dict(comparison_doc(["copy"]), **change)))
    r = tool("karma-report", results_dir, "--comparison", path, "-o", tmp_path / "r.md")
    assert r.returncode == 2 and not (tmp_path / "r.md").exists(), r.stderr
    assert f"{path}: {why}" in r.stderr


@pytest.mark.parametrize("record", [{}, {"complete": True}, {"complete": False, "missing": 3},
                                    {"complete": True, "figure": "x"}])
def test_a_comparison_of_a_malformed_record_is_refused(results_dir, tmp_path, record):
    """A figure of record karma-score did not write is bad input, not a traceback."""
    path = tmp_path / "cmp.json"
    write(str(path), json.dumps(dict(comparison_doc(["copy"]), record={"b": record})))
    r = tool("karma-report", results_dir, "--comparison", path, "-o", tmp_path / "r.md")
    assert r.returncode == 2 and not (tmp_path / "r.md").exists(), r.stderr
    assert f"{path}: record.b: expected karma-score's figure of record" in r.stderr


def test_committed_comparison_report(tmp_path):
    """The report of results/comparisons/h100-vs-h200 as its README makes
    it: no cell names another app's key (=None), a layout plot per mini-app,
    size plots per device kind, a power plot per unit, no plot wider than
    three panels."""
    where = os.path.join(ROOT, "results", "comparisons", "h100-vs-h200")
    cmp = tmp_path / "comparison.json"
    r = tool("karma-compare", f"h100={where}/h100.tar.xz", f"h200={where}/h200.tar.xz",
             "--weights", os.path.join(ROOT, "campaigns", "procurement", "weights.txt"),
             "--energy", "--json", cmp)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report.md"
    r = tool("karma-report", where, "--comparison", cmp, "--compare-from",
             os.path.join(ROOT, "campaigns", "procurement", "gpu-node.yaml"),
             "--format", "png", "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "=None" not in text and "| None |" not in text
    # The two campaigns of the H100 archive are told apart.
    sides = re.findall(r"^## Side by side: .*$", text, re.M)
    assert len(sides) == 3 and len(set(sides)) == 3, sides
    assert any(s.endswith("h100.tar.xz/babelstream-float-rerun)") for s in sides), sides
    # Host and GPU configurations of one layout table say which they are.
    rows = table_rows(text, "### h100.tar.xz, karma-hexgrad: layouts")
    assert sorted(r[0] for r in rows) == ["gpu: n=2^24, precision=double",
                                          "gpu: n=2^24, precision=float",
                                          "host: n=2^22, precision=double"]
    plots = set(os.listdir(tmp_path / "plots"))
    for s in ("h100", "h200"):
        stem = f"{s}.tar.xz"
        for app in ("hexgrad", "matvec", "mgs", "stream"):
            assert f"{stem}-{app}-layout.png" in plots
        assert {f"{stem}-stream-size-gpu.png", f"{stem}-stream-size-host.png"} <= plots
        powers = {p for p in plots if p.startswith(f"{stem}-power-")}
        assert powers == {f"{stem}-power-{u}.png"
                          for u in ("GB-s", "GFLOP-s", "Melements-s", "pairs-s")}
    for p in plots:
        width, _ = png_size(tmp_path / "plots" / p)
        assert width <= 110 * 4.2 * 3 + 60, (p, width)
        assert f"](plots/{p})" in text


def test_long_legend_labels_do_not_widen_the_figure(tmp_path):
    plotter = report.Plotter(str(tmp_path), "png", True)
    fig, axes = plotter.grid(3)
    for i, ax in enumerate(axes):
        ax.plot([1, 2], [i, i + 1], label=f"series {i}: " + "a long deck key=value, " * 4)
    plotter.legend_below(fig, axes)
    plotter.save(fig, "wide")
    width, _ = png_size(tmp_path / "wide.png")
    assert width <= 110 * 3.3 * 3 + 60, width


def test_a_key_a_configuration_has_not_is_left_out_of_its_label():
    """An older result lacks a key that newer ones have: its label does not
    say key=None."""
    old = report_configs.Config("matvec", {"matvec.n": 16384}, "gpu", 1, 1, None)
    new = report_configs.Config("matvec", {"matvec.n": 16384, "matvec.block_rows": 0}, "gpu",
                                1, 1, None)
    keys = report_configs.varying_keys([old, new])
    assert keys == ["matvec.block_rows"]
    assert report_configs.series_label(new, keys) == "block_rows=0"
    old.runs = [type("Run", (), {"deck_stem": "default"})()]
    assert report_configs.series_label(old, keys) == "default"
