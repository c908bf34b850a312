"""karma-compare on the committed sample results (scripts/tests/data/results,
made by make-samples.sh): values, ratios, the weighted geometric mean, flags,
the three output formats, and bad input."""

import csv
import glob
import json
import math
import os
import shutil

import pytest

from conftest import SAMPLES, load_json, tool, write

A = os.path.join(SAMPLES, "machine-a")
B = os.path.join(SAMPLES, "machine-b")


def fom(path, kernel):
    doc = load_json(path)
    return next(k["fom"]["value"] for k in doc["kernels"] if k["name"] == kernel)


def compare_json(tmp_path, *args):
    out = str(tmp_path / "c.json")
    r = tool("karma-compare", *args, "--json", out)
    assert r.returncode == 0, r.stderr
    return load_json(out)


def row(result, case, kernel):
    return next(r for r in result["rows"] if r["case"] == case and r["kernel"] == kernel)


def test_values_ratios_and_flags(tmp_path):
    result = compare_json(tmp_path, f"a={A}", f"b={B}")
    assert result["baseline"] == "a"
    # A case both ran exactly alike: median of one run each, ratio b/a.
    r = row(result, "small (layout=left, shape=[64,64,64])", "triad")
    a, b = fom(f"{A}/stream-3d-left.json", "triad"), fom(f"{B}/stream-3d-left.json", "triad")
    assert r["values"]["a"]["value"] == pytest.approx(a)
    assert r["values"]["b"]["ratio"] == pytest.approx(b / a)
    assert r["values"]["b"]["flags"] == []
    # Two rounds: the median of two is their mean.
    r = row(result, "small (shape=[2^16])", "copy")
    runs = [fom(f"{A}/stream-1d-2p16-r{k}.json", "copy") for k in (1, 2)]
    assert r["values"]["a"]["value"] == pytest.approx(sum(runs) / 2)
    assert r["values"]["a"]["runs"] == 2
    # machine-b ran 2^17 where a ran 2^16: compared, and flagged.
    flags = r["values"]["b"]["flags"]
    assert flags == ["problem size differs: stream.shape [2^16] vs [2^17]"]
    # machine-b's second round failed verification: flagged, its value unused.
    r = row(result, "small", "copy")  # the 1D 2^20 double case
    e = r["values"]["b"]
    assert any(f.startswith("verification FAILED in 1 of 2 run(s)") for f in e["flags"])
    assert e["value"] == pytest.approx(fom(f"{B}/stream-1d-2p20-r1.json", "copy"))
    assert e["runs"] == 1
    # Strong scaling at 2 ranks is a case of its own.
    r = row(result, "small (2 ranks, scaling=strong)", "add")
    assert r["values"]["b"]["ranks"] == 2


def test_weighted_geometric_mean_from_a_weights_file(tmp_path):
    weights = write(str(tmp_path / "weights.txt"), """\
# app, app/kernel, app/case/kernel
stream            1
stream/triad      3      # triad rows share 3
stream/*/dot      0      # dot counts for nothing
other-app         2      # runs nowhere: a note, not an error
""")
    result = compare_json(tmp_path, f"a={A}", f"b={B}", "--weights", weights)
    rows = result["rows"]
    n_triad = sum(1 for r in rows if r["kernel"] == "triad")
    n_rest = sum(1 for r in rows if r["kernel"] not in ("triad", "dot"))
    for r in rows:
        expected = 3 / n_triad if r["kernel"] == "triad" else \
            0 if r["kernel"] == "dot" else 1 / n_rest
        assert r["weight"] == pytest.approx(expected), (r["case"], r["kernel"])
    num = sum(r["weight"] * math.log(r["values"]["b"]["ratio"]) for r in rows
              if r["weight"] > 0)
    den = sum(r["weight"] for r in rows if r["weight"] > 0)
    assert result["summary"]["b"]["geometric_mean"] == pytest.approx(math.exp(num / den))
    assert result["summary"]["a"]["geometric_mean"] == pytest.approx(1.0)
    assert any("'other-app' covers no row" in n for n in result["notes"])


def test_per_node_and_system_scaling(tmp_path):
    # A copy of machine-b whose runs say they used 2 nodes.
    two = tmp_path / "two-nodes"
    shutil.copytree(B, two)
    for f in glob.glob(str(two / "*.json")):
        doc = load_json(f)
        doc["mpi"]["nodes"] = 2
        write(f, json.dumps(doc))
    plain = compare_json(tmp_path, f"a={A}", f"b={two}")
    per_node = compare_json(tmp_path, f"a={A}", f"b={two}", "--per-node",
                            "--system-nodes", "a=100", "--system-nodes", "b=300")
    p = row(plain, "small (layout=left, shape=[64,64,64])", "copy")["values"]["b"]
    q = row(per_node, "small (layout=left, shape=[64,64,64])", "copy")["values"]["b"]
    assert q["ratio"] == pytest.approx(p["ratio"] / 2)
    assert any(f.startswith("scale differs: 2 node(s)/1 rank(s) vs 1/1 (use --per-node")
               for f in p["flags"])
    s = per_node["summary"]["b"]
    assert s["system_figure"] == pytest.approx(s["geometric_mean"] * 3)


def test_precision_and_backend_mismatches_are_flagged(tmp_path):
    base, other = tmp_path / "base", tmp_path / "other"
    base.mkdir()
    other.mkdir()
    shutil.copy(f"{A}/stream-1d-2p20-r1.json", base)
    doc = load_json(f"{B}/stream-1d-2p20-float.json")
    doc["kokkos"]["default_execution_space"] = "Cuda"
    write(str(other / "float.json"), json.dumps(doc))
    result = compare_json(tmp_path, f"x={base}", f"y={other}")
    flags = result["rows"][0]["values"]["y"]["flags"]
    assert "precision differs: stream.precision double vs float" in flags
    assert "backend differs: Cuda vs OpenMP" in flags


def test_markdown_and_csv(tmp_path):
    md, table = str(tmp_path / "c.md"), str(tmp_path / "c.csv")
    r = tool("karma-compare", f"a={A}", f"b={B}", "--markdown", md, "--csv", table)
    assert r.returncode == 0, r.stderr
    text = open(md).read()
    assert "| app | case | kernel | units | weight | a | b | b/a | flags |" in text
    assert "## Flags" in text and "problem size differs" in text
    assert "| b | 0." in text or "| b | 1." in text  # the summary line
    with open(table) as f:
        rows = list(csv.DictReader(f))
    triad = [x for x in rows if x["case"] == "small (layout=left, shape=[64,64,64])"
             and x["kernel"] == "triad"]
    assert {x["set"] for x in triad} == {"a", "b"}
    b = next(x for x in triad if x["set"] == "b")
    assert float(b["value"]) == pytest.approx(fom(f"{B}/stream-3d-left.json", "triad"))
    assert b["verification"] == "PASSED"
    assert any(x["kernel"] == "weighted geometric mean" for x in rows)
    # Markdown on stdout without output files.
    r = tool("karma-compare", A, B)
    assert r.stdout.startswith("# karma comparison") and "machine-b/machine-a" in r.stdout


@pytest.mark.parametrize("args, message", [
    ([A, os.path.join(SAMPLES, "schema-v3")],
     "schema_version 3, but this tool reads karma results of schema_version 1 or 2"),
    ([A, "@EMPTY@"], "no karma results found (no JSON files)"),
    ([A, "@NOTKARMA@"], "no karma results found (1 JSON file(s), none of them karma results)"),
    ([A, "/no/such/dir"], "/no/such/dir: no such file or directory"),
    ([A], "give at least two result sets"),
    ([A, B, "--baseline", "c"], "--baseline c: no set of that label"),
    ([f"x={A}", f"x={B}"], "two result sets have the same label"),
    ([A, B, "--weights", "@BADWEIGHTS@"], "w.txt:2: weight 'heavy' is not a number >= 0"),
    ([A, B, "--system-nodes", "machine-a=4"], "--system-nodes must name every set exactly"),
    ([A, "@BROKEN@"], "not valid JSON"),
])
def test_bad_input_writes_nothing(tmp_path, args, message):
    empty = tmp_path / "empty"
    empty.mkdir()
    notkarma = tmp_path / "notkarma"
    notkarma.mkdir()
    write(str(notkarma / "x.json"), '{"hello": 1}')
    broken = tmp_path / "broken"
    broken.mkdir()
    write(str(broken / "x.json"), '{"schema_version": 1, ')
    weights = write(str(tmp_path / "w.txt"), "stream 1\nstream/copy heavy\n")
    subst = {"@EMPTY@": str(empty), "@NOTKARMA@": str(notkarma), "@BROKEN@": str(broken),
             "@BADWEIGHTS@": weights}
    args = [subst.get(a, a) for a in args]
    out = tmp_path / "out.md"
    r = tool("karma-compare", *args, "--markdown", out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr, r.stderr
    assert not out.exists()
