"""karma-compare --implementations and karma-report's microbenchmark section:
karma-microbench's karma arms against its raw arms within one set, on the
committed sample runs (python/tests/data/results/microbench, made by
make-samples.sh) and on a run of the built mini-app. Every expected value is
read from the results JSON."""

import csv
import io
import json
import os
import shutil
import subprocess
import statistics

import pytest

from conftest import ROOT, SAMPLES, load_json, miniapp, tool, write
from karma_tools.results import kerneltable

MICRO = os.path.join(SAMPLES, "microbench")
RUNS = [os.path.join(MICRO, f) for f in sorted(os.listdir(MICRO))]


def foms(implementation):
    """{benchmark: [each run's figure of merit]} of one implementation."""
    out = {}
    for path in RUNS:
        for k in load_json(path)["kernels"]:
            if k["implementation"] == implementation:
                out.setdefault(k["variant"], []).append(k["fom"]["value"])
    return out


def compare_json(tmp_path, *args, rc=0):
    out = tmp_path / "c.json"
    r = tool("karma-compare", "--implementations", *args, "--json", out)
    assert r.returncode == rc, r.stderr
    return load_json(out)


def test_karma_against_raw_row_by_row(tmp_path):
    doc = compare_json(tmp_path, "karma:raw", MICRO)
    assert doc["karma_compare_implementations"] == 1 and len(doc["comparisons"]) == 1
    result = doc["comparisons"][0]
    assert result["within"] == {"set": "microbench", "path": MICRO, "ours": "karma",
                                "theirs": "raw"}
    assert result["baseline"] == "microbench:raw" and result["record"] == {}
    karma, raw = foms("karma"), foms("raw")
    assert len(karma) == 4 and set(karma) == set(raw)
    assert sorted(r["kernel"] for r in result["rows"]) == sorted(karma)
    ratios = []
    for row in result["rows"]:
        base, other = row["values"]["microbench:raw"], row["values"]["microbench:karma"]
        assert base["value"] == pytest.approx(statistics.median(raw[row["kernel"]]))
        assert other["value"] == pytest.approx(statistics.median(karma[row["kernel"]]))
        assert other["ratio"] == pytest.approx(other["value"] / base["value"])
        assert other["runs"] == 2 and other["code"] is None and other["flags"] == []
        ratios.append(other["ratio"])
    # No figure within one set: no procurement figure, and no mean of its own.
    assert len(ratios) == 4 and "summary" not in result


def test_the_machines_own_spread_is_raw_twin_against_raw(tmp_path):
    result = compare_json(tmp_path, "raw-twin:raw", MICRO)["comparisons"][0]
    twin, raw = foms("raw-twin"), foms("raw")
    for row in result["rows"]:
        ratio = row["values"]["microbench:raw-twin"]["ratio"]
        assert ratio == pytest.approx(statistics.median(twin[row["kernel"]])
                                      / statistics.median(raw[row["kernel"]]))


def test_markdown_names_both_sides_and_no_code_or_procurement(tmp_path):
    r = tool("karma-compare", "--implementations", "karma:raw", MICRO)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.startswith("# karma comparison within microbench: karma against raw\n")
    assert "## The procurement figure" not in text and " code |" not in text
    assert "| microbench:karma/microbench:raw |" in text
    assert "Sum3D/serial/right/static/6x5x4" in text


def test_several_sets_one_comparison_each(tmp_path):
    other = tmp_path / "other"
    shutil.copytree(MICRO, other)
    md, csv_path, js = tmp_path / "c.md", tmp_path / "c.csv", tmp_path / "c.json"
    r = tool("karma-compare", "--implementations", "karma:raw", f"a={MICRO}", f"b={other}",
             "--markdown", md, "--csv", csv_path, "--json", js)
    assert r.returncode == 0, r.stderr
    results = load_json(js)["comparisons"]
    assert [c["within"]["set"] for c in results] == ["a", "b"]
    # The same runs in both: the same ratios.
    assert [r["values"]["a:karma"]["ratio"] for r in results[0]["rows"]] == \
        [r["values"]["b:karma"]["ratio"] for r in results[1]["rows"]]
    text = md.read_text()
    assert text.count("# karma comparison within") == 2
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert {row["set"] for row in rows} == {"a:raw", "a:karma", "b:raw", "b:karma"}
    assert sum(1 for row in rows if row["app"] == "app") == 0  # one header


def test_a_missing_arm_leaves_its_row_unpaired(tmp_path):
    folder = tmp_path / "set"
    shutil.copytree(MICRO, folder)
    for path in folder.iterdir():
        doc = load_json(path)
        gone = "MatVec/serial/right/dynamic/13x7/karma"
        doc["kernels"] = [k for k in doc["kernels"] if k["name"] != gone]
        write(str(path), json.dumps(doc))
    out = tmp_path / "c.json"
    r = tool("karma-compare", "--implementations", "karma:raw", folder, "--json", out)
    assert r.returncode == 0, r.stderr
    result = load_json(out)["comparisons"][0]
    row = next(r for r in result["rows"] if r["kernel"] == "MatVec/serial/right/dynamic/13x7")
    assert row["values"]["set:karma"] is None and row["unpaired"] == {"set:karma": "no run of "
                                                                      f"{row['kernel']}"}
    assert all(r["values"]["set:karma"] for r in result["rows"] if r is not row)


def test_a_failed_run_is_flagged(tmp_path):
    folder = tmp_path / "set"
    shutil.copytree(MICRO, folder)
    path = folder / os.path.basename(RUNS[0])
    doc = load_json(path)
    doc["verification"]["checks"][0].update(error=1.0, passed=False)
    doc["verification"]["passed"], doc["result"] = False, "FAILED"
    write(str(path), json.dumps(doc))
    result = compare_json(tmp_path, "karma:raw", folder)["comparisons"][0]
    flags = [f for r in result["rows"] for e in r["values"].values() if e for f in e["flags"]]
    assert any(f.startswith("verification FAILED in 1 of 2 run(s)") for f in flags), flags


@pytest.mark.parametrize("args,message", [
    (["karma", MICRO], "--implementations karma: expected OURS:THEIRS"),
    (["karma:karma", MICRO], "two different implementations"),
    (["karma:cublas", MICRO], f"{MICRO}: no kernel of implementation cublas (its "
     "implementations: karma, raw, raw-twin)"),
    (["karma:raw"], "give at least one result set"),
    (["karma:raw", MICRO, "--baseline", "x"], "--baseline does not go with --implementations"),
    (["karma:raw", MICRO, "--per-node"], "--per-node does not go with --implementations"),
    (["karma:raw", MICRO, "--weights", "w.txt"], "--weights does not go with --implementations"),
    (["karma:raw", f"a={MICRO}", f"a={MICRO}"], "two result sets have the same label"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = tool("karma-compare", "--implementations", *args)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_the_report_pairs_them_as_compare_does(tmp_path):
    root = tmp_path / "results"
    shutil.copytree(MICRO, root / "microbench")
    shutil.copytree(os.path.join(SAMPLES, "machine-a"), root / "stream")
    gbench = os.path.join(SAMPLES, "..", "gbench", "microbench.json")
    shutil.copy(gbench, root / "microbench" / "old-google-benchmark.json")
    out = tmp_path / "report.md"
    r = tool("karma-report", root, "-o", out, "--no-plots")
    assert r.returncode == 0, r.stderr
    assert "skipped 1 Google Benchmark JSON (karma-microbench before it took a deck)" in r.stderr
    text = out.read_text()
    section = text.split("### microbench: microbenchmarks")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| host")]
    result = compare_json(tmp_path, "karma:raw", root / "microbench")["comparisons"][0]
    assert len(rows) == len(result["rows"]) == 4
    for cells, row in zip(rows, result["rows"]):
        assert cells[1] == row["kernel"]
        assert cells[4].split()[0] == f"{row['values']['microbench:karma']['ratio']:.3f}"
    # microbench has no table of every configuration; stream keeps its own.
    assert "### microbench: every configuration" not in text
    assert "### stream: every configuration" in text
    r = tool("karma-report", root, "-o", out, "--no-plots", "--microbench-pair", "karma")
    assert r.returncode == 2 and "--microbench-pair karma: expected OURS:THEIRS" in r.stderr


def test_a_run_of_the_small_deck(tmp_path):
    """The built mini-app: every kernel it writes is one its kernel table
    (the head's data, and the result's own) declares, every benchmark has
    its karma and raw arms, and each pair's ratio is the quotient of the
    run's own figures."""
    exe = miniapp("microbench")
    out = tmp_path / "set" / "run.json"
    out.parent.mkdir()
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    done = subprocess.run([exe, os.path.join(ROOT, "inputs", "microbench", "small.yaml"),
                           "--quiet", "--output", str(out)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = load_json(out)
    for table in (kerneltable.of_app("microbench"), kerneltable.of(doc)):
        for k in doc["kernels"]:
            assert k["name"] == f"{k['variant']}/{k['implementation']}"
            declared = table.find(k["name"], k["implementation"])
            assert declared and declared["variant"] == k["variant"], k["name"]
    fom = {k["name"]: k["fom"]["value"] for k in doc["kernels"]}
    variants = {k["variant"] for k in doc["kernels"]}
    result = compare_json(tmp_path, "karma:raw", out.parent)["comparisons"][0]
    assert {r["kernel"] for r in result["rows"]} == variants
    for row in result["rows"]:
        ratio = row["values"]["set:karma"]["ratio"]
        assert ratio == pytest.approx(fom[row["kernel"] + "/karma"] / fom[row["kernel"] + "/raw"])
