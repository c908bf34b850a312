"""karma-compare on the committed sample results (python/tests/data/results,
made by make-samples.sh): values, ratios, the figure of record, flags,
the three output formats, and bad input."""

import csv
import glob
import json
import os
import shutil

import pytest

from conftest import SAMPLES, load_json, tool, write
from karma_tools.core import ToolError
from karma_tools.score import figure
from test_campaigns import fakes, rounds_fixture  # noqa: F401 (a fixture and its helper)

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
    r = row(result, "host: small (layout=left, shape=[64,64,64])", "triad")
    a, b = fom(f"{A}/stream-3d-left.json", "triad"), fom(f"{B}/stream-3d-left.json", "triad")
    assert r["values"]["a"]["value"] == pytest.approx(a)
    assert r["values"]["b"]["ratio"] == pytest.approx(b / a)
    assert r["values"]["b"]["flags"] == []
    # Two rounds: the median of two is their mean.
    r = row(result, "host: small (shape=[2^16])", "copy")
    runs = [fom(f"{A}/stream-1d-2p16-r{k}.json", "copy") for k in (1, 2)]
    assert r["values"]["a"]["value"] == pytest.approx(sum(runs) / 2)
    assert r["values"]["a"]["runs"] == 2
    # machine-b ran 2^17 where a ran 2^16: compared, and flagged.
    flags = r["values"]["b"]["flags"]
    assert flags == ["problem size differs: stream.shape [2^16] vs [2^17]"]
    # machine-b's second round failed verification: flagged, its value unused.
    r = row(result, "host: small", "copy")  # the 1D 2^20 double case
    e = r["values"]["b"]
    assert any(f.startswith("verification FAILED in 1 of 2 run(s)") for f in e["flags"])
    assert e["value"] == pytest.approx(fom(f"{B}/stream-1d-2p20-r1.json", "copy"))
    assert e["runs"] == 1
    # Strong scaling at 2 ranks is a case of its own.
    r = row(result, "host: small (2 ranks, scaling=strong)", "add")
    assert r["values"]["b"]["ranks"] == 2


def test_the_weights_go_to_the_figure_of_record(tmp_path):
    """--weights weighs karma-score's figure of record of each set against
    the baseline: compare has no weights of its rows and no mean of its own."""
    weights = write(str(tmp_path / "weights.txt"), "stream 1\n")
    result = compare_json(tmp_path, f"a={A}", f"b={B}", "--weights", weights)
    assert result["weights"] == weights and "summary" not in result
    assert not any("weight" in r for r in result["rows"])
    try:
        expected = figure.score([("b", B)], A, weights)["sets"][0]["record"]
    except ToolError as e:  # the samples are not reportable: no reference of them
        expected = {"name": figure.NAME, "why": str(e)}
    assert result["record"] == {"b": expected}


def test_per_node_and_system_scaling(tmp_path):
    # A copy of machine-b whose runs say they used 2 nodes.
    two = tmp_path / "two-nodes"
    shutil.copytree(B, two)
    for f in glob.glob(str(two / "*.json")):
        doc = load_json(f)
        doc["mpi"]["nodes"] = 2
        write(f, json.dumps(doc))
    plain = compare_json(tmp_path, f"a={A}", f"b={two}")
    per_node = compare_json(tmp_path, f"a={A}", f"b={two}", "--per-node")
    p = row(plain, "host: small (layout=left, shape=[64,64,64])", "copy")["values"]["b"]
    q = row(per_node, "host: small (layout=left, shape=[64,64,64])", "copy")["values"]["b"]
    assert q["ratio"] == pytest.approx(p["ratio"] / 2)
    assert any(f.startswith("scale differs: 2 node(s)/1 rank(s) vs 1/1 (use --per-node")
               for f in p["flags"])
    # The system figure went with compare's own mean (1.1.0).
    r = tool("karma-compare", f"a={A}", f"b={two}", "--system-nodes", "a=100")
    assert r.returncode == 2 and "--system-nodes: removed in 1.1.0" in r.stderr


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
    assert "| app | case | kernel | units | a | b | b/a | b code | flags |" in text
    assert "## Flags" in text and "problem size differs" in text
    assert "## The procurement figure" in text and "geometric mean" not in text
    with open(table) as f:
        rows = list(csv.DictReader(f))
    triad = [x for x in rows if x["case"] == "host: small (layout=left, shape=[64,64,64])"
             and x["kernel"] == "triad"]
    assert {x["set"] for x in triad} == {"a", "b"}
    b = next(x for x in triad if x["set"] == "b")
    assert float(b["value"]) == pytest.approx(fom(f"{B}/stream-3d-left.json", "triad"))
    assert b["verification"] == "PASSED"
    assert not any("geometric mean" in x["kernel"] for x in rows)
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
    ([A, B, "--system-nodes", "machine-a=4"], "--system-nodes: removed in 1.1.0"),
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


# --- energy ---------------------------------------------------------------------------

# Made-up energy figures (kernels[].energy as the mini-apps write it) for the
# 3D LayoutLeft case: per watt, b beats a 1.5x on copy, 2x on triad and ties
# elsewhere; b uses half a's energy per execution throughout.
PER_WATT_A = 2.0
PER_WATT_B = {"copy": 3.0, "triad": 4.0}


def measured(per_watt, watts, joules, units="GB/s"):
    return {"status": "measured", "source": "nvml", "counters": 1, "window_s": 0.6,
            "executions": 120, "counter_step_s": 0.02, "average_power_W": watts,
            "joules_per_execution": joules,
            "fom_per_watt": {"value": per_watt, "units": units + "/W"}}


def with_energy(src, dst, energy, efficiency=None):
    """src with each kernel's energy set to energy(kernel name), and a
    top-level energy section; written to dst."""
    doc = load_json(src)
    for k in doc["kernels"]:
        k["energy"] = energy(k["name"])
        if efficiency and k["name"] in efficiency:
            k["efficiency"] = efficiency[k["name"]]
    doc["energy"] = {"window_s": 0.5, "ranks": [{"status": "measured", "source": "nvml",
                                                 "idle_power_W": 40.0,
                                                 "power_limit_W": 700.0}]}
    write(str(dst), json.dumps(doc))


@pytest.fixture
def energy_sets(tmp_path):
    """Sets a and b: the 3D LayoutLeft case with energy measured on both
    sides; LayoutRight measured on a, unavailable on b."""
    a, b = tmp_path / "ea", tmp_path / "eb"
    with_energy(f"{A}/stream-3d-left.json", a / "left.json",
                lambda name: measured(PER_WATT_A, 100.0, 0.5),
                efficiency={"triad": {"peak_bandwidth_GBps": 200.0,
                                      "fraction_of_peak_bandwidth": 0.8}})
    with_energy(f"{B}/stream-3d-left.json", b / "left.json",
                lambda name: measured(PER_WATT_B.get(name, PER_WATT_A), 50.0, 0.25))
    with_energy(f"{A}/stream-3d-right.json", a / "right.json",
                lambda name: measured(PER_WATT_A, 100.0, 0.5))
    with_energy(f"{B}/stream-3d-right.json", b / "right.json",
                lambda name: {"status": "unavailable", "reason": "NVML: no such device"})
    return str(a), str(b)


def md_table(text, heading):
    """The header and rows (without the rule) of the first table after heading."""
    lines = []
    for line in text.split(heading, 1)[1].splitlines():
        if line.startswith("|"):
            lines.append([c.strip() for c in line.strip("|").split("|")])
        elif lines:
            break
    return lines[:1] + lines[2:]


LEFT = "host: small"  # the case labels karma-compare gives them
RIGHT = "host: small (layout=right)"


def test_per_watt_and_energy_ratios(tmp_path, energy_sets):
    a, b = energy_sets
    result = compare_json(tmp_path, f"a={a}", f"b={b}")
    cases = {r["case"] for r in result["rows"]}
    assert cases == {LEFT, RIGHT}, cases
    for kernel, per_watt in (("copy", 1.5), ("triad", 2.0), ("dot", 1.0)):
        e = row(result, LEFT, kernel)["values"]
        assert e["b"]["per_watt_ratio"] == pytest.approx(per_watt)
        # Joules per execution: a's 0.5 over b's 0.25.
        assert e["b"]["energy_ratio"] == pytest.approx(2.0)
        assert e["a"]["per_watt_ratio"] == pytest.approx(1.0)
        assert e["b"]["energy"]["average_power_W"] == pytest.approx(50.0)
        # The FOM ratio is still the FOMs'.
        assert e["b"]["ratio"] == pytest.approx(fom(f"{B}/stream-3d-left.json", kernel) /
                                                fom(f"{A}/stream-3d-left.json", kernel))
    assert row(result, LEFT, "triad")["values"]["a"]["efficiency"] == {
        "fraction_of_peak_bandwidth": pytest.approx(0.8)}
    # b measured nothing for LayoutRight: no ratios there.
    e = row(result, RIGHT, "copy")["values"]["b"]
    assert e["per_watt_ratio"] is None and e["energy_ratio"] is None and "energy" not in e

    md = str(tmp_path / "e.md")
    assert tool("karma-compare", f"a={a}", f"b={b}", "--markdown", md).returncode == 0
    text = open(md).read()
    header, *rows = md_table(text, "## Figures of merit")
    assert header == ["app", "case", "kernel", "units", "a", "b", "b/a", "b/a per W",
                      "b/a energy", "b code", "flags"]
    cells = {(r[1], r[2]): r for r in rows}
    assert cells[(LEFT, "triad")][7:9] == ["2.000", "2.000"]
    assert cells[(LEFT, "copy")][7:9] == ["1.500", "2.000"]
    assert cells[(RIGHT, "triad")][6] != "-" and cells[(RIGHT, "triad")][7:9] == ["-", "-"]
    # The energy table: each set's figures, the peak fraction where known.
    energy = text.split("## Energy and efficiency", 1)[1]
    assert "| app | case | kernel | set | code | power (W) | FOM per watt | J per execution | " \
        "of peak bandwidth |" in energy
    assert f"| stream | {LEFT} | triad | a | - | 100 | 2 GB/s/W | 0.5 | 80% |" in energy
    assert f"| stream | {LEFT} | triad | b | unknown | 50 | 4 GB/s/W | 0.25 | - |" in energy
    assert f"| stream | {RIGHT} | triad | b |" not in energy

    table = str(tmp_path / "e.csv")
    assert tool("karma-compare", f"a={a}", f"b={b}", "--csv", table).returncode == 0
    with open(table) as f:
        lines = list(csv.DictReader(f))
    triad = next(x for x in lines if x["case"] == LEFT and x["kernel"] == "triad"
                 and x["set"] == "b")
    assert float(triad["per_watt_ratio"]) == pytest.approx(2.0)
    assert float(triad["energy_ratio"]) == pytest.approx(2.0)
    assert float(triad["average_power_W"]) == pytest.approx(50.0)
    right = next(x for x in lines if x["case"] == RIGHT and x["kernel"] == "triad"
                 and x["set"] == "b")
    assert right["per_watt_ratio"] == right["energy_ratio"] == right["average_power_W"] == ""


def test_the_energy_option_changes_nothing(tmp_path, energy_sets):
    """--energy asked for compare's per-watt mean, gone with its mean
    (1.1.0): accepted, the same output; per-watt ratios show without it."""
    a, b = energy_sets
    plain = compare_json(tmp_path, f"a={a}", f"b={b}")
    assert compare_json(tmp_path, f"a={a}", f"b={b}", "--energy") == plain
    assert plain["karma_compare"] == 2 and "summary" not in plain  # 1.1.0's format
    assert row(plain, LEFT, "triad")["values"]["b"]["per_watt_ratio"] == pytest.approx(2.0)
    for flag in ("--energy", "--allow-unmatched"):
        r = tool("karma-compare", f"a={a}", f"b={b}", flag)
        assert r.returncode == 0 and r.stderr.strip() == \
            f"karma-compare: note: {flag} changes nothing since 1.1.0 (CHANGELOG.md)", r.stderr


def test_results_without_energy_keep_their_output(tmp_path):
    """No energy in the results: no energy columns, keys or tables, as
    before."""
    result = compare_json(tmp_path, f"a={A}", f"b={B}")
    for r in result["rows"]:
        for e in r["values"].values():
            assert e is None or not {"energy", "efficiency", "per_watt_ratio",
                                     "energy_ratio"} & set(e), e
    md, table = str(tmp_path / "c.md"), str(tmp_path / "c.csv")
    assert tool("karma-compare", f"a={A}", f"b={B}", "--markdown", md, "--csv",
                table).returncode == 0
    text = open(md).read()
    assert "per W" not in text and "Energy" not in text and "energy" not in text
    with open(table) as f:
        assert f.readline().strip() == "app,case,kernel,units,higher_is_better,set," \
            "value,ratio,runs,nodes,ranks,verification,flags,code"
    # A side that measured energy against one that has none: '-' cells.
    energy_only = tmp_path / "ea"
    with_energy(f"{A}/stream-3d-left.json", energy_only / "left.json",
                lambda name: measured(PER_WATT_A, 100.0, 0.5))
    plain = tmp_path / "plain"
    os.makedirs(plain)
    shutil.copy(f"{B}/stream-3d-left.json", plain)
    result = compare_json(tmp_path, f"a={energy_only}", f"b={plain}")
    assert all(r["values"]["b"]["per_watt_ratio"] is None for r in result["rows"])
    r = tool("karma-compare", f"a={energy_only}", f"b={plain}")
    header, *rows = md_table(r.stdout, "## Figures of merit")
    assert header[6:9] == ["b/a", "b/a per W", "b/a energy"]
    assert all(x[6] != "-" and x[7:9] == ["-", "-"] for x in rows)


def test_campaign_ratio_tables_gain_energy_pairs(tmp_path, fakes):  # noqa: F811
    """The campaign of test_campaigns' rounds_fixture (karma's copy 300, 240,
    330 GB/s in rounds 1-3, BabelStream's 300) with energy: karma at 150 W
    and 1.5 J per execution, BabelStream at 200 W and 2 J; karma's round 3
    at 2^20 and BabelStream at 2^22 measured none."""
    out = rounds_fixture(tmp_path, fakes)
    plain = tool("karma-compare", "--campaign", out).stdout
    for entry in load_json(os.path.join(out, "campaign.json"))["jobs"]:
        doc = load_json(os.path.join(out, entry["results_file"]))  # relative to out
        k = doc["kernels"][0]
        bs = entry["run"] == "bs"
        if (bs and "2p22" in entry["name"]) or (not bs and "2p20" in entry["name"] and
                                                entry["round"] == 3):
            k["energy"] = {"status": "unavailable", "reason": "no counter"}
        else:
            watts = 200.0 if bs else 150.0
            k["energy"] = measured(k["fom"]["value"] / watts, watts, 2.0 if bs else 1.5)
        write(os.path.join(out, entry["results_file"]), json.dumps(doc))
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json", "--csv",
             tmp_path / "t.csv", "--markdown", tmp_path / "t.md")
    assert r.returncode == 0, r.stderr
    small, large = load_json(tmp_path / "t.json")["tables"][0]["rows"]
    # Per watt: (karma / 150) / (300 / 200); round 3 unmeasured.
    assert small["per_watt"]["rounds"] == {"1": pytest.approx(300 / 150 / 1.5),
                                           "2": pytest.approx(240 / 150 / 1.5)}
    assert small["per_watt"]["aggregates"] == {"worst": pytest.approx(240 / 150 / 1.5),
                                               "best": pytest.approx(300 / 150 / 1.5),
                                               "median": pytest.approx(0.5 * (2 + 1.6) / 1.5)}
    assert small["energy"]["rounds"] == {"1": pytest.approx(2 / 1.5),
                                         "2": pytest.approx(2 / 1.5)}
    # The FOM ratios are as before.
    assert small["rounds"] == {"1": pytest.approx(1.0), "2": pytest.approx(0.8),
                               "3": pytest.approx(1.1)}
    assert large["per_watt"]["rounds"] == {} and large["energy"]["rounds"] == {}
    assert large["per_watt"]["aggregates"]["worst"] is None

    text = (tmp_path / "t.md").read_text()
    # The FOM table first, as without energy, then its energy pairs.
    assert text.split("### karma-vs-bs: energy")[0] == plain.split("## Notes")[0]
    energy = text.split("### karma-vs-bs: energy", 1)[1]
    line = next(x for x in energy.splitlines() if x.startswith("| [2^20] | double |")
                and "| per W |" in x)
    assert line.endswith("| 2 / 1.5 = 1.333 | 1.6 / 1.5 = 1.067 | - | **1.067** | **1.333** "
                         "| **1.200** |"), line
    line = next(x for x in energy.splitlines() if x.startswith("| [2^20] | double |")
                and "| energy |" in x)
    assert "| 2 / 1.5 = 1.333 | 2 / 1.5 = 1.333 | - | **1.333** |" in line
    line = next(x for x in energy.splitlines() if x.startswith("| [2^22] | double |")
                and "| per W |" in x)
    assert line.endswith("| - | - | - | - | - | - |"), line
    with open(tmp_path / "t.csv") as f:
        lines = list(csv.DictReader(f))
    first = next(x for x in lines if x["round"] == "1" and "1048576" in x["match"])
    assert float(first["per_watt_ratio"]) == pytest.approx(300 / 150 / 1.5)
    assert float(first["energy_ratio"]) == pytest.approx(2 / 1.5)
    assert all(x["per_watt_ratio"] == "" for x in lines if "4194304" in x["match"])
    # --energy is accepted and changes nothing (the pairs show without it).
    r = tool("karma-compare", "--campaign", out, "--energy")
    assert r.returncode == 0 and r.stdout == tool("karma-compare", "--campaign", out).stdout


def test_campaign_without_energy_keeps_its_output(tmp_path, fakes):  # noqa: F811
    out = rounds_fixture(tmp_path, fakes)
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json", "--csv",
             tmp_path / "t.csv", "--markdown", tmp_path / "t.md")
    assert r.returncode == 0, r.stderr
    assert "energy" not in (tmp_path / "t.md").read_text()
    assert not {"per_watt", "energy"} & set(load_json(tmp_path / "t.json")["tables"][0]["rows"][0])
    with open(tmp_path / "t.csv") as f:
        assert f.readline().strip() == "comparison,match,label,numerator,denominator,round," \
            "numerator_value,denominator_value,ratio"


def test_a_setting_of_booleans_is_a_parameter_not_a_size():
    from karma_tools.compare import compare
    assert compare._category("mgs.n", 4096, 8192) == "problem size"
    assert compare._category("hexgrad.n", [8, 8, 8], [16, 16, 16]) == "problem size"
    assert compare._category("run.flags", [True, False], [False, False]) == "parameter"
    assert compare._category("run.check", True, False) == "parameter"
