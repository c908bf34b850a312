"""karma-score: the reference file of one set, and each set's score against
it. The sets are real H100 results (results/comparisons/h100-versions)
given the run rules' `reportable` record and `x-rules` marks, in three
rounds each, scaled where a test needs another machine."""

import copy
import json
import math
import os
import re
import shutil
import subprocess
import tarfile

import pytest

from conftest import ROOT, build_bin, miniapp, tool
from karma_tools.results import archive
from karma_tools.results import codeversion as cv
from karma_tools.score import figure
from karma_tools.score import release
from karma_tools.score import weights as weights_mod
from karma_tools.core import ToolError, __version__, atomic_write

ARCHIVE = os.path.join(ROOT, "results", "comparisons", "h100-versions", "h100-d60080f.tar.xz")
# job of the archive (round 1): the tier its run is given
JOBS = {
    "stream.n1x1.shape2p25": "baseline",
    "hexgrad.n1x1.precisiondouble.layoutleft": "baseline",
    "hexgrad-native.n1x1.precisiondouble": "optimized",
    "matvec.n1x1.layoutleft.transposefalse": "baseline",  # kokkos kernels and cuBLAS's
    "mgs.n1x1.layoutleft": "baseline",
    "mgs-vendor.n1x1.implementationcublas": "optimized",
    "contact.n1x1": "baseline",
}
# Three rounds: their median is round 1 (neither their mean nor their best).
ROUNDS = (1.0, 0.9, 1.05)
H100_UUID = "GPU-966e9d6a-cf72-5c12-acb0-933ab0150d73"  # the archive's one GPU
AXES = ("layout", "precision", "transpose")
TUNING = ("implementation", "variant", "storage", "kernels")


def original(job):
    folder = os.path.join(ARCHIVE, "results", f"{job}.r1")
    name = next(n for n in archive.listdir(folder) if n.startswith("karma-"))
    return json.loads(archive.read_bytes(os.path.join(folder, name)))


def mark_rules(schema, top=True):
    """x-rules on every key of a deck schema, as the run rules' mini-apps write them."""
    for name, node in schema.get("properties", {}).items():
        if top and name == "run":
            node["x-rules"] = "free"
        elif node.get("type") == "object" and "properties" in node:
            mark_rules(node, top=False)
        else:
            node["x-rules"] = "axis" if name in AXES else "tuning" if name in TUNING \
                else "fixed"


def with_rules(doc, tier, reportable=True, reasons=(), cls="large"):
    doc = copy.deepcopy(doc)
    doc["reportable"] = {"rules": "1", "class": cls, "tier": tier,
                         "reportable": reportable, "reasons": list(reasons)}
    mark_rules(doc["deck"]["schema"])
    return doc


def scale(doc, factor, kernels=None):
    """Every figure of merit (and per watt) of the kernels named (all) times factor."""
    for k in doc["kernels"]:
        if kernels is None or k["name"] in kernels:
            k["fom"]["value"] *= factor
            if (k.get("energy") or {}).get("status") == "measured":
                k["energy"]["fom_per_watt"]["value"] *= factor


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def make_set(path, factor=1.0, edit=None, jobs=JOBS, rounds=ROUNDS):
    """A results tree: results/<job>.r<round>/karma-<app>.json, the first
    round's job with its environment capture. edit(job, doc) changes a
    document after scaling."""
    for job, tier in jobs.items():
        for r, f in enumerate(rounds, 1):
            doc = with_rules(original(job), tier)
            scale(doc, f * factor)
            if edit:
                edit(job, doc)
            write(os.path.join(path, "results", f"{job}.r{r}", f"karma-{doc['app']}.json"), doc)
    env = archive.read_bytes(os.path.join(ARCHIVE, "results", "mgs.n1x1.layoutleft.r1",
                                          "environment", "environment.json"))
    os.makedirs(os.path.join(path, "results", "mgs.n1x1.layoutleft.r1", "environment"))
    with open(os.path.join(path, "results", "mgs.n1x1.layoutleft.r1", "environment",
                           "environment.json"), "wb") as f:
        f.write(env)
    return str(path)


@pytest.fixture
def reference(tmp_path):
    """(reference file, the set it was made from)."""
    ref_set = make_set(tmp_path / "h100")
    out = tmp_path / "h100.json"
    r = tool("karma-score", "reference", ref_set, "-o", out, "--name", "H100 node")
    assert r.returncode == 0, r.stderr
    return str(out), ref_set


def score(tmp_path, reference_file, *args, name="score.json"):
    out = tmp_path / name
    r = tool("karma-score", *args, "--reference", reference_file, "--json", out, "--unofficial")
    doc = json.loads(out.read_text()) if out.exists() else None
    return r, doc


def apps(doc, tier="baseline", field="score", index=0):
    return {a: v[field] for a, v in doc["sets"][index]["tiers"][tier]["apps"].items()}


def close(a, b):
    return a is not None and abs(a - b) < 1e-9


def on_unit(uuid, board, name=None):
    """edit: a set's runs on another GPU unit (of that board; that model, if named)."""
    def edit(job, doc):
        device = doc["ranks"][0]["device"]
        device.update(uuid=uuid, **({"name": name} if name else {}))
        device.setdefault("state_at_start", {})["board_part_number"] = board
    return edit


# Three units of one model: one board -000, two of -001 (3% apart), tight rounds.
UNITS = (("GPU-a", "692-000", 1.0), ("GPU-b", "692-001", 0.97), ("GPU-c", "692-001", 1.02))
TIGHT = (1.0, 0.999, 1.001)


@pytest.fixture
def three_units(tmp_path):
    """(a reference file made of three units' sets, the sets)."""
    sets = [make_set(tmp_path / u, f, on_unit(u, b), rounds=TIGHT) for u, b, f in UNITS]
    out = tmp_path / "units.json"
    r = tool("karma-score", "reference", *sets, "-o", out)
    assert r.returncode == 0 and "of 3 unit(s)" in r.stderr, r.stderr
    return str(out), sets


def test_a_reference_of_several_units(three_units):
    ref = json.loads(open(three_units[0]).read())
    assert [(u["ids"], u["boards"]) for u in ref["units"]] == [([u], [b]) for u, b, _ in UNITS]
    row = next(r for r in ref["rows"] if r["app"] == "hexgrad")
    one = original("hexgrad.n1x1.precisiondouble.layoutleft")["kernels"][0]["fom"]["value"]
    # per row: the median over the units of each one's median of rounds, each unit's
    # rounds scaled to it, each unit's figure and their spread; per board the same
    assert row["per_unit"] == pytest.approx([one, 0.97 * one, 1.02 * one])
    assert row["figure"] == one and row["spread"] == pytest.approx([0.97, 1.02])
    assert row["rounds"] == pytest.approx(sorted(one * f for f in TIGHT * 3))
    assert row["boards"] == {"692-000": {"units": 1, "figure": one, "spread": None},
                             "692-001": {"units": 2, "figure": pytest.approx(0.995 * one),
                                         "spread": pytest.approx([0.97 / 0.995, 1.02 / 0.995])}}
    assert row["per_watt"]["spread"] == pytest.approx([0.97, 1.02])


def test_a_verdict_says_better_or_worse_only_beyond_the_units_band(tmp_path, three_units):
    """The band: the units' spread, widened for three units (docs/score.md)."""
    half = max(math.log(1.02), -math.log(0.97), 2 * math.log(1.02 / 0.97) / 1.6926)
    band = f"{math.exp(-half):.3f}-{math.exp(half):.3f}"
    within = "within the spread of one model's units"
    # 1.0612: the rounds reach across the band's edge, into it
    for factor, words in ((1.04, within), (0.96, within), (1.0612, within),
                          (1.1, "better than the reference"),
                          (0.9, "worse than the reference")):
        one = make_set(tmp_path / f"x{factor}", factor, on_unit("GPU-d", "692-001"), rounds=TIGHT)
        r, doc = score(tmp_path, three_units[0], one, name=f"{factor}.json")
        record = doc["sets"][0]["record"]
        assert record["band"] == pytest.approx([math.exp(-half), math.exp(half)], rel=1e-5)
        assert (record["verdict"], record["per_watt_verdict"], record["units"]) == \
            (words, words, 3)
        assert all(a["verdict"] == words for a in doc["sets"][0]["tiers"]["baseline"]
                   ["apps"].values() if a["of"])
        assert f"the reference's units {band}: {words})" in r.stdout
        # without the band (a reference of one unit) 1.04 read better than the reference
        assert figure.verdict(record["interval"]) != within


def test_a_board_the_reference_lacks_is_named_with_the_boards_difference(tmp_path, three_units):
    other = make_set(tmp_path / "d", 1.0, on_unit("GPU-d", "692-002"), rounds=TIGHT)
    r, doc = score(tmp_path, three_units[0], other)
    first = r.stdout.splitlines()[0]  # the first line says it
    assert first.endswith(": d (board 692-002: a part number none of the reference's units has)")
    line = next(x for x in r.stdout.splitlines() if "**Procurement figure:" in x)
    assert "Board 692-002, **a part number none of the reference's units has** (692-000, " \
        "692-001); the reference's units score by board: 692-000 1.000, 692-001 0.995" in line
    page = tmp_path / "page.md"
    r = tool("karma-score", other, "--reference", three_units[0], "--page", page, "--unofficial")
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert text.startswith("# karma: d against GPU-a + GPU-b + GPU-c (board 692-002: a part "
                           "number none of")
    assert "the reference's 3 units" in text and "a part number none of the reference's" in text


@pytest.mark.parametrize("edit, why", [
    (on_unit("GPU-a", "692-000"), "ran on GPU-a, as {a} did: a reference counts each unit once"),
    (on_unit("GPU-e", "692-000", "NVIDIA H200"), "the sets are of 2 machine types (1 x NVIDIA "
     "H100 80GB HBM3; 1 x NVIDIA H200): a reference is of one")])
def test_a_reference_of_one_unit_twice_or_two_machine_types_is_refused(tmp_path, edit, why):
    a = make_set(tmp_path / "a", 1.0, on_unit("GPU-a", "692-000"))
    b = make_set(tmp_path / "b", 1.0, edit)
    out = tmp_path / "ref.json"
    r = tool("karma-score", "reference", a, b, "-o", out)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr == f"karma-score: error: {b}: {why.format(a=a)}\n"


def test_the_reference_file(reference):
    path, _ = reference
    with open(path) as f:
        ref = json.load(f)
    assert ref["karma_score_reference"] == 2 and ref["name"] == "H100 node"
    assert [u["ids"] for u in ref["units"]] == [[H100_UUID]]  # one set: one unit
    assert ref["device"] == {"kind": "gpu", "names": ["NVIDIA H100 80GB HBM3"]}
    assert ref["suite"] == {"versions": ["0.2.0"], "git_describe": ["d60080f3"]}
    assert ref["kokkos"] == {"versions": ["4.6.1"], "backends": ["Cuda"]}
    env = ref["environment"]
    assert env["captures"] == 1 and env["gpu_models"] == ["NVIDIA H100 80GB HBM3"]
    assert env["cpu_models"] and env["drivers"] and env["os"] and env["hosts"]
    rows = {(r["app"], r["case"], r["work"]): r for r in ref["rows"]}
    # baseline Kokkos kernels only: no cuBLAS, no native CUDA rows or figures
    matvec = original("matvec.n1x1.layoutleft.transposefalse")
    kokkos = max(k["fom"]["value"] for k in matvec["kernels"] if k["implementation"] == "kokkos")
    row = rows[("matvec", "layout=left,precision=double,transpose=False", "product")]
    assert row["figure"] == kokkos and row["runs"] == 3  # the median of the rounds
    assert row["units"] == "GB/s" and row["higher_is_better"] is True
    assert row["class"] == "large"
    mdrange = next(k for k in matvec["kernels"] if k["name"] == "mdrange")
    value = mdrange["energy"]["fom_per_watt"]["value"]
    assert row["per_watt"] == {"value": value, "units": "GB/s/W", "runs": 3, "rounds":
                               pytest.approx(sorted(value * f for f in ROUNDS)),
                               "per_unit": [value], "spread": None}
    assert row["per_unit"] == [kokkos] and row["spread"] is None
    # every round's figure, for the intervals of the ratios against it
    assert row["rounds"] == pytest.approx(sorted(kokkos * f for f in ROUNDS))
    hexgrad = rows[("hexgrad", "layout=left,precision=double", "gradients")]
    assert hexgrad["figure"] == original("hexgrad.n1x1.precisiondouble.layoutleft")[
        "kernels"][0]["fom"]["value"]
    assert {r["work"] for r in ref["rows"] if r["app"] == "stream"} == \
        {"copy", "mul", "add", "triad", "dot", "nstream"}
    assert {r["work"] for r in ref["rows"] if r["app"] == "contact"} == {"build", "stats"}
    assert len(ref["rows"]) == 6 + 1 + 1 + 1 + 2


def test_the_same_set_scores_one(reference, tmp_path):
    path, ref_set = reference
    r, doc = score(tmp_path, path, ref_set)
    assert r.returncode == 0, r.stderr
    for field in ("score", "per_watt"):
        assert all(close(v, 1.0) for v in apps(doc, field=field).values()), apps(doc)
        assert close(doc["sets"][0]["tiers"]["baseline"][field], 1.0)
    # the optimized tier: the same but for cuBLAS's matvec, faster than Kokkos's
    assert {a for a, v in apps(doc, "optimized").items() if not close(v, 1.0)} == {"matvec"}
    assert [t["coverage"] for t in doc["sets"][0]["tiers"].values()] == [1.0, 1.0]
    assert set(apps(doc)) == {"stream", "hexgrad", "matvec", "mgs", "contact"}
    # the rounds span 0.9 to 1.05 on both sides: 0.9 / 1.05 to 1.05 / 0.9
    span = "1.000 (0.857-1.167)"
    assert f"| baseline | score | {span} | " + f"{span} | " * 4 + f"**{span}** | 100% (11/11 " \
        "rows) |" in r.stdout
    assert doc["sets"][0]["record"]["verdict"] == "no measurable difference"
    assert "**Procurement figure: 1.000** (rounds span 0.857-1.167: no measurable " \
        "difference)" in r.stdout
    assert r.stdout.startswith("# karma score: UNOFFICIAL (") and "H100 node" in r.stdout


def test_ten_percent_faster_scores_1_1(reference, tmp_path):
    path, _ = reference
    faster = make_set(tmp_path / "faster", factor=1.1)
    r, doc = score(tmp_path, path, faster)
    assert r.returncode == 0, r.stderr
    assert all(close(v, 1.1) for v in apps(doc).values()), apps(doc)
    assert close(doc["sets"][0]["tiers"]["baseline"]["score"], 1.1)
    assert close(doc["sets"][0]["tiers"]["baseline"]["per_watt"], 1.1)
    # 10% faster, but the rounds spread by 15%: the difference is not measurable
    assert "**Procurement figure: 1.100** (rounds span 0.943-1.283: no measurable " \
        "difference)" in r.stdout


def test_a_difference_outside_the_rounds_spread_is_one(tmp_path):
    """Rounds within 1% of each other: 30% faster is better, 0.5% is none."""
    def tight(path, factor):
        return make_set(path, factor=factor, rounds=(1.0, 0.995, 1.005))
    ref = tmp_path / "ref.json"
    assert tool("karma-score", "reference", tight(tmp_path / "ref", 1.0), "-o",
                ref).returncode == 0
    r, doc = score(tmp_path, ref, tight(tmp_path / "fast", 1.3))
    record = doc["sets"][0]["record"]
    assert r.returncode == 0 and record["verdict"] == "better than the reference"
    assert record["interval"][0] > 1.25 and record["interval"][1] < 1.35
    r, doc = score(tmp_path, ref, tight(tmp_path / "same", 1.005))
    assert doc["sets"][0]["record"]["verdict"] == "no measurable difference"
    assert "| no measurable difference |" in r.stdout  # row by row too


def add_small_stream(path, factor):
    """STREAM's job again as the small class, its figures times factor."""
    for r, f in enumerate(ROUNDS, 1):
        doc = with_rules(original("stream.n1x1.shape2p25"), "baseline", cls="small")
        scale(doc, f * factor)
        write(os.path.join(path, "results", f"stream-small.r{r}", "karma-stream.json"), doc)
    return path


def test_the_small_class_is_scored_apart(tmp_path):
    ref_set = add_small_stream(make_set(tmp_path / "ref"), 1.0)
    ref = tmp_path / "ref.json"
    assert tool("karma-score", "reference", ref_set, "-o", ref).returncode == 0
    assert {r["class"] for r in json.loads(ref.read_text())["rows"]} == {"small", "large"}
    # small twice as fast, everything else the same: the overall does not move
    faster = add_small_stream(make_set(tmp_path / "set"), 2.0)
    r, doc = score(tmp_path, ref, faster)
    assert r.returncode == 0, r.stderr
    base = doc["sets"][0]["tiers"]["baseline"]
    assert close(base["score"], 1.0) and all(close(v, 1.0) for v in apps(doc).values())
    assert close(base["classes"]["small"]["score"], 2.0)
    assert close(base["classes"]["large"]["score"], 1.0)
    assert [c["in_score"] for c in base["classes"].values()] == [False, True]
    small = [row for row in base["rows"] if row["class"] == "small"]
    assert len(small) == 6 and all(close(row["ratio"], 2.0) and not row["in_score"]
                                   for row in small)
    assert base["coverage"] == 1.0
    assert "| baseline | score | 2.000 (1.714-2.333) | 1.000 (0.857-1.167) | **1.000 " \
        "(0.857-1.167)** |" in r.stdout
    assert "small (not in the overall)" in r.stdout


def test_weights(reference, tmp_path):
    """The overall score is the weighted geometric mean of the apps'."""
    path, _ = reference
    hexgrad_twice = make_set(tmp_path / "fast-hexgrad", edit=lambda job, doc: scale(doc, 2.0)
                             if doc["app"] == "hexgrad" else None)
    weights = tmp_path / "w.txt"
    weights.write_text("# comment\n* 1\nhexgrad 3  # the rest share 1 each\n")
    r, doc = score(tmp_path, path, hexgrad_twice, "--weights", weights)
    assert r.returncode == 0, r.stderr
    assert close(doc["sets"][0]["tiers"]["baseline"]["score"], 2 ** (3 / 7))
    assert close(doc["weights"]["hexgrad"], 3 / 7)
    # the default file: the GPU split of campaigns/procurement/weights.txt
    r, doc = score(tmp_path, path, hexgrad_twice)
    assert doc["weights_file"].endswith(os.path.join("campaigns", "procurement",
                                                     "weights.txt"))
    assert close(doc["weights"]["hexgrad"], 0.24 / 0.80)
    assert close(doc["sets"][0]["tiers"]["baseline"]["score"], 2 ** 0.3)


def test_lower_is_better_is_inverted(tmp_path):
    def times(job, doc):
        if doc["app"] == "mgs":
            for k in doc["kernels"]:
                k["fom"]["higher_is_better"] = False
                k["energy"]["status"] = "unavailable"

    ref = tmp_path / "ref.json"
    assert tool("karma-score", "reference", make_set(tmp_path / "a", edit=times),
                "-o", ref).returncode == 0
    # the set takes 0.8 of the reference's time for mgs: 1.25 times as fast
    faster = make_set(tmp_path / "b", edit=lambda job, doc: (
        times(job, doc), scale(doc, 0.8) if doc["app"] == "mgs" else None))
    r, doc = score(tmp_path, ref, faster)
    assert r.returncode == 0, r.stderr
    assert close(apps(doc)["mgs"], 1.25) and close(apps(doc)["hexgrad"], 1.0)


def test_each_set_scores_on_its_own(reference, tmp_path):
    path, ref_set = reference
    other = make_set(tmp_path / "other", factor=1.3,
                     jobs={k: v for k, v in JOBS.items() if not k.startswith("contact")})
    _, alone = score(tmp_path, path, ref_set, name="alone.json")
    r, together = score(tmp_path, path, "other=" + other, ref_set, name="together.json")
    assert r.returncode == 1  # the other set lacks contact
    assert together["sets"][0]["label"] == "other"
    assert together["sets"][1] == alone["sets"][0]
    assert close(apps(together, index=0)["stream"], 1.3)


def test_unreportable_results_are_left_out_with_their_reasons(reference, tmp_path):
    path, _ = reference

    def spoil(job, doc):
        if job.startswith("hexgrad."):
            doc["reportable"].update(reportable=False,
                                     reasons=["hexgrad.team_size: a tuning key in baseline"])
            scale(doc, 100.0)  # would lift hexgrad, were it counted

    spoiled = make_set(tmp_path / "spoiled", factor=1.1, edit=spoil)
    old = original("mgs.n1x1.layoutleft")  # no reportable record
    write(os.path.join(spoiled, "old", "karma-mgs.json"), old)
    host = with_rules(original("host-mgs.n1x1"), "baseline")
    write(os.path.join(spoiled, "host", "karma-mgs.json"), host)
    r, doc = score(tmp_path, path, spoiled)
    left = {os.path.relpath(i["file"], spoiled): i["reasons"] for i in doc["sets"][0]["left_out"]}
    assert left[os.path.join("results", "hexgrad.n1x1.precisiondouble.layoutleft.r2",
                             "karma-hexgrad.json")] == \
        ["hexgrad.team_size: a tuning key in baseline"]
    assert left[os.path.join("old", "karma-mgs.json")] == \
        ["written before the run rules (no reportable record)"]
    assert left[os.path.join("host", "karma-mgs.json")] == \
        ["ran on a host device; the reference is gpu"]
    assert len(left) == 3 + 2
    # hexgrad lost every round: no figure, coverage below 100%
    assert apps(doc)["hexgrad"] is None and r.returncode == 1
    assert close(apps(doc)["mgs"], 1.1)
    assert "a tuning key in baseline" in r.stdout and "ran on a host device" in r.stdout


def test_partial_coverage(reference, tmp_path):
    path, _ = reference
    partial = make_set(tmp_path / "partial",
                       jobs={k: v for k, v in JOBS.items() if not k.startswith("contact")})
    r, doc = score(tmp_path, path, partial)
    assert r.returncode == 1, r.stderr
    tier = doc["sets"][0]["tiers"]["baseline"]
    assert close(tier["coverage"], 9 / 11)
    assert {(m["app"], m["work"]) for m in tier["missing"]} == {("contact", "build"),
                                                                ("contact", "stats")}
    assert "INCOMPLETE: it lacks 2 of the 11 rows" in r.stderr
    assert "contact/large/-/build: no figure" in r.stdout
    # no overall, no class: the first line says INCOMPLETE; the complete apps keep theirs
    assert r.stdout.splitlines()[0] == "# karma score: INCOMPLETE (partial lacks 2 of 11 " \
        "scored rows): no overall figure"
    assert tier["score"] is None and tier["interval"] is None and tier["per_watt"] is None
    assert all(c["score"] is None for c in tier["classes"].values())
    assert apps(doc)["contact"] is None and close(apps(doc)["mgs"], 1.0)
    assert "| **overall** |" in r.stdout and "**1.000 (" not in r.stdout.split("| mgs")[0]
    assert "| baseline | score | 1.000 (0.857-1.167) |" in r.stdout
    assert "incomplete (0/2 rows) | INCOMPLETE |" in r.stdout
    # whatever the flags: --allow-partial is gone
    r, _ = score(tmp_path, path, partial, "--allow-partial")
    assert r.returncode == 2 and "--allow-partial" in r.stderr


def test_rows_not_in_the_reference_are_left_out(reference, tmp_path):
    path, _ = reference
    extra = make_set(tmp_path / "extra")
    doc = with_rules(original("hexgrad.n1x1.precisiondouble.layoutright"), "baseline")
    write(os.path.join(extra, "right", "karma-hexgrad.json"), doc)
    r, out = score(tmp_path, path, extra)
    assert r.returncode == 0, r.stderr
    assert out["sets"][0]["tiers"]["baseline"]["not_in_reference"] == [
        {"app": "hexgrad", "class": "large", "case": "layout=right,precision=double",
         "work": "gradients"}]
    assert close(apps(out)["hexgrad"], 1.0)


def test_an_unmatched_weights_pattern_is_an_error(reference, tmp_path):
    path, ref_set = reference
    weights = tmp_path / "w.txt"
    weights.write_text("stream 1\n# a typo below\nhexgrd 2\n")
    r, doc = score(tmp_path, path, ref_set, "--weights", weights)
    assert r.returncode == 2 and doc is None and r.stdout == ""
    assert r.stderr.count("\n") == 1 and f"{weights}:3: pattern 'hexgrd'" in r.stderr
    weights.write_text("stream one\n")
    r, doc = score(tmp_path, path, ref_set, "--weights", weights)
    assert r.returncode == 2 and f"{weights}:1:" in r.stderr and doc is None


def test_per_watt(reference, tmp_path):
    path, _ = reference

    def energy(job, doc):
        for k in doc["kernels"]:
            if doc["app"] == "contact":
                k["energy"]["status"] = "unavailable"
            elif k.get("energy"):
                k["energy"]["fom_per_watt"]["value"] *= 1.25

    set_ = make_set(tmp_path / "greener", edit=energy)
    r, doc = score(tmp_path, path, set_)
    assert r.returncode == 0, r.stderr
    assert all(close(v, 1.0) for v in apps(doc).values())
    per_watt = apps(doc, field="per_watt")
    assert per_watt["contact"] is None
    assert all(close(v, 1.25) for a, v in per_watt.items() if a != "contact"), per_watt
    assert close(doc["sets"][0]["tiers"]["baseline"]["per_watt"], 1.25)
    lacking = doc["sets"][0]["tiers"]["baseline"]["no_energy"]
    assert {(x["app"], x["work"], x["no_energy"]) for x in lacking} == \
        {("contact", "build", "set"), ("contact", "stats", "set")}
    assert "contact/large/-/build: not measured by the set" in r.stdout


def test_optimized_takes_the_best_of_the_work(reference, tmp_path):
    """A cuBLAS kernel faster than Kokkos's lifts the optimized tier only."""
    path, _ = reference
    matvec = original("matvec.n1x1.layoutleft.transposefalse")
    kokkos = max(k["fom"]["value"] for k in matvec["kernels"] if k["implementation"] == "kokkos")
    cublas = next(k["fom"]["value"] for k in matvec["kernels"] if k["name"] == "cublas-dgemv")
    faster = make_set(tmp_path / "cublas", edit=lambda job, doc: scale(doc, 2.0, ["cublas-dgemv"])
                      if doc["app"] == "matvec" else None)
    r, doc = score(tmp_path, path, faster)
    assert r.returncode == 0, r.stderr
    assert close(apps(doc)["matvec"], 1.0)
    assert close(apps(doc, "optimized")["matvec"], 2 * cublas / kokkos)
    # an optimized run (native CUDA) only counts in the optimized tier
    assert close(apps(doc)["hexgrad"], 1.0)
    native = make_set(tmp_path / "native", edit=lambda job, doc: scale(doc, 3.0)
                      if job.startswith(("hexgrad-native", "mgs-vendor")) else None)
    _, doc = score(tmp_path, path, native, name="native.json")
    assert close(apps(doc)["hexgrad"], 1.0) and close(apps(doc)["mgs"], 1.0)
    hexgrad = original("hexgrad-native.n1x1.precisiondouble")["kernels"][0]["fom"]["value"] / \
        original("hexgrad.n1x1.precisiondouble.layoutleft")["kernels"][0]["fom"]["value"]
    assert close(apps(doc, "optimized")["hexgrad"], 3 * hexgrad)


def test_reference_from_an_archive_and_refusals(reference, tmp_path):
    path, ref_set = reference
    packed = tmp_path / "h100.tar.xz"
    assert tool("karma-archive", "write", ref_set, "-o", packed).returncode == 0
    out = tmp_path / "from-archive.json"
    r = tool("karma-score", "reference", packed, "-o", out, "--name", "H100 node")
    assert r.returncode == 0, r.stderr
    with open(path) as f:
        rows = json.load(f)["rows"]
    assert json.loads(out.read_text())["rows"] == rows
    # the committed campaign archive predates the run rules: no reportable result
    out = tmp_path / "none.json"
    r = tool("karma-score", "reference", ARCHIVE, "-o", out)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.count("\n") == 1 and "no reportable baseline result" in r.stderr
    assert "written before the run rules" in r.stderr
    # a file that is not a reference
    notref = tmp_path / "notref.json"
    notref.write_text('{"karma_score_reference": 2}')
    r, doc = score(tmp_path, notref, ref_set)
    assert r.returncode == 2 and doc is None and r.stderr.count("\n") == 1
    assert "not a karma-score reference file" in r.stderr
    # a set as the reference: made one as `karma-score reference` makes it
    r, doc = score(tmp_path, ref_set, ref_set)
    assert r.returncode == 0 and doc["reference"]["rows"] == rows
    assert doc["sets"][0]["record"]["figure"] == pytest.approx(1.0)
    bad = tmp_path / "bad.json"
    bad.write_text('{"karma_score_reference": 1, "device": {"kind": "gpu"}, "rows": [{}]}')
    r, doc = score(tmp_path, bad, ref_set)
    assert r.returncode == 2 and f"{bad}: rows[0]" in r.stderr


def test_help_and_version():
    r = tool("karma-score", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: karma-score")
    assert "exit status" in r.stdout and "karma-score reference SET [SET ...] -o FILE" in r.stdout
    r = tool("karma-score", "--version")
    assert r.returncode == 0 and r.stdout.startswith("karma-score ")


def test_a_campaign_directory(reference, tmp_path):
    """Its manifest says where each job's results are, and which have none."""
    path, ref_set = reference
    results = os.path.join(ref_set, "results")
    jobs = [{"name": name, "round": 1, "results_dir": os.path.join(results, name),
             "results_file": os.path.join(results, name, archive.listdir(
                 os.path.join(results, name))[-1])} for name in sorted(os.listdir(results))]
    jobs.append({"name": "contact.n1x1.r4", "round": 4,
                 "results_dir": os.path.join(results, "contact.n1x1.r4"),
                 "results_file": os.path.join(results, "contact.n1x1.r4", "karma-contact.json")})
    write(os.path.join(ref_set, "campaign.json"),
          {"karma_batch_manifest": 1, "results_dir": results, "jobs": jobs})
    out = tmp_path / "from-campaign.json"
    r = tool("karma-score", "reference", ref_set, "-o", out, "--name", "H100 node")
    assert r.returncode == 0, r.stderr
    with open(path) as f:
        assert json.loads(out.read_text())["rows"] == json.load(f)["rows"]
    r, doc = score(tmp_path, path, ref_set)
    assert r.returncode == 0, r.stderr
    assert doc["sets"][0]["left_out"] == [
        {"file": f"{os.path.join(ref_set, 'campaign.json')}: job contact.n1x1.r4",
         "reasons": ["no results: not run, or stopped before it ended"]}]


def test_one_weights_file_for_score_and_compare(tmp_path):
    """karma-score reads weights.txt, karma-compare's file: its GPU split
    for a GPU reference (1.0.0's weights), its host split for a host one;
    the retired score-weights.txt is refused in a line naming its heir."""
    path = os.path.join(ROOT, "campaigns", "procurement", "weights.txt")
    apps = ["stream", "hexgrad", "contact", "matvec", "mgs"]
    gpu = {"stream": 0.12, "hexgrad": 0.24, "contact": 0.16, "matvec": 0.14, "mgs": 0.14}
    host = {"stream": 0.04, "hexgrad": 0.06, "contact": 0.04, "matvec": 0.03, "mgs": 0.03}
    for kind, split in (("gpu", gpu), ("host", host)):
        got = weights_mod.of_apps(path, apps, kind)
        assert all(close(got[a], split[a] / sum(split.values())) for a in apps), got
    # the old one-part grammar: the later of two lines wins
    old = tmp_path / "w.txt"
    old.write_text("st* 1\nstream 2\nhexgrad 2\n")
    assert weights_mod.of_apps(str(old), ["stream", "hexgrad"], "gpu") == \
        {"stream": 0.5, "hexgrad": 0.5}
    with pytest.raises(ToolError, match="score-weights.txt was merged into"):
        weights_mod.parse(str(tmp_path / "score-weights.txt"))


PROCUREMENT = os.path.join(ROOT, "results", "procurement")
SHIPPED = os.path.join(ROOT, "campaigns", "procurement", "reference.json")


def test_the_shipped_reference_is_the_committed_release_bundles(tmp_path):
    """The shipped reference is `karma-score reference` of the committed bundles it names
    (`source`): the release's reportable campaign on its units, each from a fresh clone of
    the release's code."""
    with open(SHIPPED) as f:
        shipped = json.load(f)
    out = tmp_path / "ref.json"
    r = tool("karma-score", "reference", *shipped["source"].split(", "), "-o", out,
             "--name", shipped["name"], cwd=ROOT)
    assert r.returncode == 0, r.stderr
    made = json.loads(out.read_text())
    if shipped["karma_score_reference"] == 1:
        # 1.0.0's, one unit: what 1.1 adds to a reference (its units, each row's per unit
        # figures and their spread) aside, the file is 1.0.0's, byte for byte in its values.
        assert made.pop("units")[0]["ids"] == ["GPU-4273fee1-9d5c-2c22-893b-6b4ec3a3cc6a"]
        for row in made["rows"]:
            for part in filter(None, (row, row["per_watt"])):
                assert part.pop("per_unit") == [part.get("figure", part.get("value"))]
                assert part.pop("spread") is None
        made["karma_score_reference"] = 1
    assert made == shipped


def test_the_procurement_readme_gives_the_committed_scores(tmp_path):
    """results/procurement/README.md's score tables, made again from the
    committed bundles against 1.0.0's reference as git keeps it."""
    ref = released_reference(tmp_path, "1.0.0")
    sets = {"h100-0.2.0": "h100.tar.xz", "h200-0.2.0": "h200.tar.xz",
            "h200-1.0.0-again": "h200-1.0.0-again.tar.xz",
            "h200-1.0.0-third": "h200-1.0.0-third.tar.xz",
            "h200-1.1.0-dev-91524dc8": "h200-1.1.0-dev-91524dc8.tar.xz",
            "h200-1.1.0-dev-1b66883b": "h200-1.1.0-dev-1b66883b.tar.xz",
            "h200-1.1.0-dev-54b4912c": "h200-1.1.0-dev-54b4912c.tar.xz",
            "h200-1.1.0-dev-0ab1f3b8": "h200-1.1.0-dev-0ab1f3b8.tar.xz"}
    r, doc = score(tmp_path, ref, *(f"{k}={os.path.join(PROCUREMENT, v)}" for k, v in sets.items()))
    assert r.returncode == 0, r.stderr
    text = open(os.path.join(PROCUREMENT, "README.md"), encoding="utf-8").read()
    for s in doc["sets"]:
        for tier in ("baseline", "optimized"):
            t = s["tiers"][tier]
            line = f"| {s['label']} | {tier} | " + " | ".join(
                f"{t[f]:.3f}" for f in ("score", "per_watt")) + " | " + " | ".join(
                f"{t['classes'][c]['score']:.3f}" for c in ("small", "medium", "large")) + " |"
            assert line in text, line
    # The pages that quote the second H200's figure against 1.0.0's reference.
    record = next(s["record"] for s in doc["sets"] if s["label"] == "h200-1.0.0-again")
    assert_pages_quote(record, "README.md", "results/README.md", "docs/score.md",
                       "results/procurement/README.md")


@pytest.mark.parametrize("unit, others", [("A", "BC"), ("B", "AC"), ("C", "AB"),
                                          ("D", "EF"), ("E", "DF"), ("F", "DE"), ("G", "DEF"),
                                          ("H", "DEF"), ("J", "KL"), ("K", "JL"), ("L", "JK"),
                                          ("M", "JKL"), ("N", "JKL")])
def test_the_procurement_readme_gives_each_unit_against_the_others(tmp_path, unit, others):
    """Leave-one-out: each unit of one code (1.0.0's; 1.1.0-dev's; 1.1.0's reference units)
    against a reference of the other two, and G and H (GPU 0 of a node of two), units outside
    them, against D, E and F, and M, 1.1.0's proof, and N (GPU 0 of 1.1.0's node of two) against
    J, K and L, as the README's tables give it
    (figure, rounds, band, words, the apps outside the band; per watt the same)."""
    bundles = dict(zip("ABCDEFGHJKLMN", (
        "h200-1.0.0", "h200-1.0.0-again", "h200-1.0.0-third", "h200-1.1.0-dev-91524dc8",
        "h200-1.1.0-dev-1b66883b", "h200-1.1.0-dev-54b4912c", "h200-1.1.0-dev-0ab1f3b8",
        "h200x2-1.1.0-dev-af001311", "h200-1.1.0-141bbcbf", "h200-1.1.0-2b92b403",
        "h200-1.1.0-1fdbb3e3", "h200-1.1.0-70cf3e9e", "h200x2-1.1.0-a132b1b7")))
    ref = tmp_path / "ref.json"
    r = tool("karma-score", "reference", *(os.path.join(PROCUREMENT, bundles[u] + ".tar.xz")
                                           for u in others), "-o", ref)
    assert r.returncode == 0, r.stderr
    r, doc = score(tmp_path, ref, f"{unit}={os.path.join(PROCUREMENT, bundles[unit])}.tar.xz")
    record = doc["sets"][0]["record"]

    def cells(value, span, band, words):
        return [cell(value, span), figure_span(band),
                "within" if words.startswith("within") else f"**{words.split()[0]}**"]

    apps = doc["sets"][0]["tiers"]["baseline"]["apps"]
    outside = [f"{app} {a['score']:.3f}" for app, a in apps.items()
               if not a["verdict"].startswith("within")]
    row = cells(record["figure"], record["interval"], record["band"], record["verdict"]) + \
        [", ".join(outside) or "none"] + \
        cells(record["per_watt"], record["per_watt_interval"], record["per_watt_band"],
              record["per_watt_verdict"])
    text = open(os.path.join(PROCUREMENT, "README.md"), encoding="utf-8").read()
    assert re.search(rf"\| {unit} (\(-00\d\) )?\| [^|]+ \| " + re.escape(" | ".join(row)) + r" \|",
                     text), row


def test_a_reference_is_refused_with_the_set_that_breaks_it(tmp_path):
    """--kind host of a GPU bundle, and a unit that ran other kernel code (the second of
    three given): exit 2, one line naming that set, no traceback."""
    d, e, f = (os.path.join(PROCUREMENT, f"h200-1.1.0-dev-{u}.tar.xz")
               for u in ("91524dc8", "1b66883b", "54b4912c"))
    r = tool("karma-score", "reference", f, "--kind", "host", "-o", tmp_path / "r.json")
    assert r.returncode == 2 and r.stderr == f"karma-score: error: {f}: its reportable " \
        "baseline results ran on gpu devices, not host\n", r.stderr
    other = tmp_path / "other"
    with tarfile.open(e) as t:
        t.extractall(other)
    for path in other.glob("results/hexgrad-*/karma-hexgrad.json"):
        doc = json.loads(path.read_text())
        for k in doc["kernels"]:
            k["code_version"] = "0123456789abcdef"
        path.write_text(json.dumps(doc))
    r = tool("karma-score", "reference", d, other, f, "-o", tmp_path / "r.json")
    assert r.returncode == 2 and r.stderr.startswith(f"karma-score: error: {other}: hexgrad/") \
        and "ran other code than on " in r.stderr and not (tmp_path / "r.json").exists()


def test_apps_of_no_weight_make_no_interval():
    """A class whose scored apps all weigh 0 has no overall and no interval: no crash."""
    assert figure.span_mean([[0.9, 1.1]], [0]) is None
    row = {"app": "stream", "ratio": 1.0, "interval": [0.9, 1.1], "per_watt": None,
           "band": None, "board_band": None}
    apps, overall = figure.app_scores([row], {"stream": 0})
    assert apps["stream"]["score"] == 1.0 and overall["score"] is None
    assert overall["interval"] is None and overall["verdict"] is None


def test_a_unit_on_two_boards_counts_for_neither():
    """A unit (a node) whose GPUs are of two part numbers pools into the row, and into no
    board's figure: no board is then left without units."""
    tables = [{"k": {"figure": f, "runs": 3, "rounds": [f] * 3, "per_watt": None}}
              for f in (2.0, 2.2)]
    row = figure._combined(tables, "k", [{"boards": ["-000", "-001"]}, {"boards": ["-000"]}])
    assert math.isclose(row["figure"], 2.1) and "boards" not in row


def figure_span(span):
    return f"{span[0]:.3f}-{span[1]:.3f}"


def cell(value, span):
    """A figure with its rounds' interval, as the READMEs' tables write it."""
    return f"{value:.3f} ({figure_span(span)})"


def assert_pages_quote(record, *pages, words_too=()):
    """Each page quotes the record's figure with its rounds' interval (line
    breaks free), and the words given."""
    quoted = (f"{record['figure']:.3f}", f"{record['interval'][0]:.3f}-"
              f"{record['interval'][1]:.3f}", *words_too)
    for page in pages:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            words = " ".join(f.read().split())
        assert all(q in words for q in quoted), page


def score_default(tmp_path, *sets):
    out = tmp_path / "score.json"
    r = tool("karma-score", *sets, "--json", out, "--unofficial")
    return r, (json.loads(out.read_text()) if out.exists() else None)


def test_rows_of_other_code_than_the_reference_are_marked(reference, tmp_path):
    path, _ = reference

    def other_code(job, doc):
        if doc["app"] == "hexgrad":
            for k in doc["kernels"]:
                k["code_version"] = "0123456789abcdef"

    changed = make_set(tmp_path / "changed", edit=other_code)
    r, doc = score(tmp_path, path, changed)
    assert r.returncode == 0, r.stderr
    base = doc["sets"][0]["tiers"]["baseline"]
    marked = [(row["app"], row["work"]) for row in base["code_changed"]]
    assert marked == [("hexgrad", "gradients")]
    assert "0123456789abcdef" in base["code_changed"][0]["code_changed"]
    assert close(base["score"], 1.0)  # marked, not left out
    assert "**1 of 11 rows ran other kernel code than the reference's**" in r.stdout
    # the optimized tier's vendor kernels, absent from the reference, mark nothing
    r, doc = score(tmp_path, path, reference[1], name="same.json")
    assert all(not t["code_changed"] for t in doc["sets"][0]["tiers"].values())


@pytest.fixture
def h100_reference(tmp_path):
    """karma 0.2.0's reference, made from its H100 bundle."""
    out = tmp_path / "h100-reference.json"
    r = tool("karma-score", "reference", os.path.join(PROCUREMENT, "h100.tar.xz"), "-o", out,
             "--name", "H100 node")
    assert r.returncode == 0, r.stderr
    return str(out)


def test_karma_compare_gives_karma_score_s_figure_for_a_pair(tmp_path, h100_reference):
    """The committed H100 and H200 bundles of 0.2.0: karma-score of the H200
    against a reference made from the H100 bundle and karma-compare of the
    pair print one procurement figure, and compare no other aggregate."""
    h100, h200 = (os.path.join(PROCUREMENT, f"{n}.tar.xz") for n in ("h100", "h200"))
    r, doc = score(tmp_path, h100_reference, f"h200={h200}")
    assert r.returncode == 0, r.stderr
    record = doc["sets"][0]["record"]
    assert record["complete"] and record["verdict"] == "better than the reference"
    out, md = tmp_path / "c.json", tmp_path / "c.md"
    c = tool("karma-compare", f"h100={h100}", f"h200={h200}", "--json", out, "--markdown", md)
    assert c.returncode == 0, c.stderr
    theirs = json.loads(out.read_text())["record"]["h200"]
    assert theirs["figure"] == pytest.approx(record["figure"], rel=1e-12)
    assert theirs["interval"] == pytest.approx(record["interval"], rel=1e-12)
    line = next(x for x in r.stdout.splitlines() if "**Procurement figure: " in x)
    assert f"**Procurement figure: {record['figure']:.3f}**" in line and "per watt" in line
    line = line.removeprefix("**UNOFFICIAL** ")  # a comparison says so once
    text = md.read_text()
    assert f"- h200: {line}" in text.splitlines()
    assert "geometric mean" not in text
    # the pages that quote a figure for the pair quote this one, with its interval
    assert_pages_quote(record, "README.md", "results/README.md", "results/procurement/README.md",
                       "results/comparisons/h100-vs-h200/README.md",
                       words_too=("procurement figure",))


def test_part_of_a_set_gets_no_overall(tmp_path, h100_reference):
    """The stream results alone of the H200 bundle: INCOMPLETE in the first
    line, the missing rows listed, stream's score and no overall, exit 1."""
    import tarfile
    with tarfile.open(os.path.join(PROCUREMENT, "h200.tar.xz")) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(
            "results/stream")]
        tar.extractall(tmp_path / "stream-only", members=members)
    r, doc = score(tmp_path, h100_reference, f"h200={tmp_path / 'stream-only'}")
    assert r.returncode == 1, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("# karma score: INCOMPLETE (h200 lacks ") and \
        first.endswith("scored rows): no overall figure")
    base = doc["sets"][0]["tiers"]["baseline"]
    assert base["score"] is None and base["apps"]["stream"]["score"] > 1.3
    assert all(base["apps"][a]["score"] is None for a in ("hexgrad", "matvec", "mgs", "contact"))
    assert "**INCOMPLETE**" in r.stdout and "Classes: not scored" in r.stdout
    assert "- hexgrad/" in r.stdout  # the missing rows, listed
    # no bold figure anywhere but the column heading
    assert "**1." not in r.stdout and "**0." not in r.stdout


def test_a_figure_of_record_only_for_a_valid_bundle_with_the_release_s_reference(tmp_path):
    """A karma-bundle that checks valid and reportable, scored with the release's reference
    and weights, has a figure of record; any other score says UNOFFICIAL on its first line,
    its figure's line, its JSON and its page, and why, and exits 1 (--unofficial: 0)."""
    version = release.released(ROOT)["version"]
    path = os.path.join(PROCUREMENT, f"h200-{version}-2b92b403.tar.xz")  # unit K
    bundle = f"c={path}"
    out = tmp_path / "s.json"
    r = tool("karma-score", bundle, "--json", out)
    assert r.returncode == 0 and "UNOFFICIAL" not in r.stdout, r.stderr
    assert json.loads(out.read_text())["sets"][0]["record"]["unofficial"] == []
    doctored = json.loads(open(SHIPPED).read())  # every figure 5% low, the same name
    for row in doctored["rows"]:
        row["figure"] *= 0.95
        row["rounds"] = [x * 0.95 for x in row["rounds"]]
    (tmp_path / "ref.json").write_text(json.dumps(doctored))
    (tmp_path / "w.txt").write_text("hexgrad 1\n")
    reference = f"the reference ({{}}) is not karma {version}'s"
    weights = f"the weights ({{}}) are not karma {version}'s"
    for args, whys in ((["--reference", tmp_path / "ref.json"], [reference]),
                       (["--weights", tmp_path / "w.txt"], [weights]),
                       (["--reference", make_set(tmp_path / "set")], [reference])):
        page = tmp_path / "page.md"
        r = tool("karma-score", bundle, *args, "--json", out, "--page", page)
        record = json.loads(out.read_text())["sets"][0]["record"]
        reasons = [w.format(a) for w, a in zip(whys, args[1:])]
        assert r.returncode == 1 and [x.split(" (")[0] for x in record["unofficial"]] == \
            [x.split(" (")[0] for x in reasons], (r.stderr, record["unofficial"])
        lines = r.stdout.splitlines()
        assert lines[0].startswith("# karma score: UNOFFICIAL (c: " + reasons[0].split(" (")[0])
        assert any(x.startswith("**UNOFFICIAL** **Procurement figure: ") for x in lines)
        assert "c is UNOFFICIAL" in r.stderr and "exit 1 (--unofficial: 0)" in r.stderr
        assert "Of record: **no, UNOFFICIAL**" in page.read_text()
    r = tool("karma-score", bundle, "--weights", tmp_path / "w.txt", "--unofficial")
    assert r.returncode == 0 and r.stdout.startswith("# karma score: UNOFFICIAL (c: the weights")
    with tarfile.open(path) as tar:
        tar.extractall(tmp_path / "tree")  # its results as a tree: no bundle
    r = tool("karma-score", tmp_path / "tree" / "results")
    assert r.returncode == 1 and "not a karma-bundle (karma-bundle pack makes one)" in \
        r.stdout.splitlines()[0]


def test_the_decision_page_of_the_committed_h200_bundle(tmp_path, h100_reference):
    """karma-score --page: the verdict, the figure with its interval, a
    chart beside the page, the apps' table and the disclosure."""
    page = tmp_path / "page.md"
    r, doc = score(tmp_path, h100_reference, f"h200={os.path.join(PROCUREMENT, 'h200.tar.xz')}",
                   "--page", page)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    record = doc["sets"][0]["record"]
    lines = text.splitlines()
    assert lines[0].startswith("# karma: h200 against H100 node")
    assert lines[2].startswith("**Verdict.** Complete: yes (31 of 31 scored rows). "
                               "Reportable: yes (karma-bundle check: valid and reportable). "
                               "Code the same as the reference's: yes.")
    assert f"**Procurement figure: {record['figure']:.3f}**, the rounds spanning " \
        f"{record['interval'][0]:.3f} to {record['interval'][1]:.3f}: better than the " \
        "reference." in text
    assert "![per-app scores and their rounds](page.png)" in text
    png = (tmp_path / "page.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000
    for app in ("stream", "hexgrad", "matvec", "mgs", "contact"):
        assert f"| {app} | " in text
    assert "- **Node:** 1 x NVIDIA H200" in text and "## Disclosure" in text
    # one set a page, and its name ends in .md; nothing written on refusal
    r = tool("karma-score", "a=x", "b=y", "--page", tmp_path / "two.md")
    assert r.returncode == 2 and not (tmp_path / "two.md").exists()
    r = tool("karma-score", os.path.join(PROCUREMENT, "h200.tar.xz"), "--page",
             tmp_path / "page.html")
    assert r.returncode == 2 and "ends in .md" in r.stderr


def unit_state(power_s, corrected):
    return {"source": "nvml", "board_part_number": "692-2G520-0282-001", "vbios_version": "96",
            "power_limit_W": 700.0, "persistence_mode": True, "ecc_enabled": True,
            "ecc_errors": {"corrected": corrected, "uncorrected": 0},
            "clocks_event_ns": {"power": int(power_s * 1e9), "thermal": 0}}


def test_the_page_names_the_units_and_the_runs_they_held_back(reference, tmp_path):
    """A run that power held back for over 1% of it, or whose ECC counts grew, is named
    on the page with its unit; a run that stayed within is not."""
    def edit(job, doc):
        device = doc["ranks"][0]["device"]
        device["state_at_start"] = unit_state(100.0, 5)
        seconds = doc["duration_s"]
        held, erred = job == JOB_HELD, job == JOB_ERRED
        device["state_at_end"] = unit_state(100.0 + (0.5 if held else 0.001) * seconds,
                                            5 + 2 * erred)
        if job == JOB_ONE_END:  # a counter only one end has grew by nothing known
            del device["state_at_start"]["clocks_event_ns"]

    JOB_HELD, JOB_ERRED, JOB_ONE_END = list(JOBS)[:3]
    page = tmp_path / "units.md"
    r, doc = score(tmp_path, reference[0], make_set(tmp_path / "held", edit=edit),
                   "--page", page)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    uuid = original(JOB_HELD)["ranks"][0]["device"]["uuid"]
    assert f"- **GPU units (1):** `{uuid}` NVIDIA H100 80GB HBM3, board 692-2G520-0282-001, " \
        "VBIOS 96, 700.0 W, persistence on, ECC on" in text, text
    held = [h["file"] for h in doc["sets"][0]["held_back"]]
    assert len(held) == 2 * len(ROUNDS), held
    assert f"{JOB_HELD}.r1/" in text and ": power held the clocks down" in text
    assert f"{JOB_ERRED}.r1/" in text and ": 2 corrected ECC error(s) during the run" in text
    assert f"{JOB_ONE_END}.r1/" not in text
    # a reference of that unit and another records and says how many runs each held back
    other = make_set(tmp_path / "other", 1.0, on_unit("GPU-b", "692-2G520-0282-001"))
    r = tool("karma-score", "reference", tmp_path / "held", other, "-o", tmp_path / "two.json")
    assert r.returncode == 0 and f"held: {2 * len(ROUNDS)} run(s) that power or heat held " \
        "back, or whose ECC errors grew" in r.stderr, r.stderr
    units = json.loads((tmp_path / "two.json").read_text())["units"]
    assert [u["held_back"] for u in units] == [2 * len(ROUNDS), 0]
    # results of before state_at_end: not known, never "none"
    r, _ = score(tmp_path, reference[0], reference[1], "--page", page)
    assert "grew:** not known (the results record no state_at_end)" in page.read_text()


def test_versions_of_another_scheme_than_the_references_are_not_compared(reference, tmp_path):
    """The reference's code versions are of scheme 1 (suite 0.2.0's first
    rules); a set of this suite's scheme has other versions of the same
    code: unknown, not changed."""
    path, _ = reference

    def newer_scheme(job, doc):
        for k in doc["kernels"]:
            if "code_version" in k:
                k["code_version"] = "0123456789abcdef"
                k["code"]["scheme"] = 2

    r, doc = score(tmp_path, path, make_set(tmp_path / "newer", edit=newer_scheme))
    assert r.returncode == 0, r.stderr
    base = doc["sets"][0]["tiers"]["baseline"]
    assert not base["code_changed"] and len(base["code_unknown"]) == 11
    assert "of scheme 1, this set's of 2" in base["code_unknown"][0]["code_unknown"]
    assert "Rows whose code versions another scheme made than the reference's" in r.stdout
    ref = json.loads(open(path).read())
    assert all("code_scheme" not in row for row in ref["rows"])


# --- the release (karma-score release) ---------------------------------------------------
# The checkout is the release its release file records (docs/run-rules.md#releases),
# and any change to what a score is made of is named, with what such a change needs.

_HASHES = {}


def head_hashes(app):
    if app not in _HASHES:
        _HASHES[app] = cv.source_hashes(cv.app_sources(ROOT, app))
    return _HASHES[app]


def as_of_head(job, doc):
    """The kernels' code of this scheme, their versions as this checkout's
    sources give them (the archive's results are of an older scheme)."""
    hashes = head_hashes(doc["app"])
    for k in doc["kernels"]:
        if "code_version" not in k:
            continue
        symbols = [s for s in k["code"]["symbols"] if s in hashes] or \
            [min(s for s in hashes if s.startswith(f"karma::{doc['app']}::"))]
        source, version = cv.combine([hashes[s] for s in symbols], k["code"]["launch"])
        k["code"] = {"scheme": cv.SCHEME, "symbols": symbols, "launch": k["code"]["launch"],
                     "source": source}
        k["code_version"] = version


def copy_of_checkout(dest):
    """What the release check reads, copied: sources, decks, campaigns."""
    for part in ("common", "miniapps", "inputs", "campaigns"):
        shutil.copytree(os.path.join(ROOT, part), dest / part,
                        ignore=shutil.ignore_patterns("build*", "tests"))
    lib = dest / "python" / "src" / "karma_tools" / "results"
    lib.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "python", "src", "karma_tools", "results", "rules.py"), lib)
    return dest


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def released_versions():
    """{version: commit} of the releases Spack's recipe names."""
    with open(os.path.join(ROOT, "scripts", "spack", "package.py")) as f:
        return dict(re.findall(r'version\("([0-9.]+)", commit="([0-9a-f]{40})"', f.read()))


def whole_history_or_skip(commit):
    shown = subprocess.run(["git", "-C", ROOT, "cat-file", "-e", f"{commit}^{{commit}}"],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip(f"not a whole git checkout: {commit} cannot be read")


def released_reference(tmp_path, version):
    """The reference file a release shipped, as git keeps it at the release's commit."""
    commit = released_versions()[version]
    whole_history_or_skip(commit)
    ref = tmp_path / f"ref-{version}.json"
    shown = subprocess.run(["git", "-C", ROOT, "show", f"{commit}:{figure.DEFAULT_REFERENCE}"],
                           capture_output=True, check=True)
    ref.write_bytes(shown.stdout)
    return ref


def test_each_release_is_intact_at_its_own_commit():
    """A release stays as frozen in git: at its commit, its class decks,
    campaigns, classes, weights, rules and kernels are what its release file
    records, whatever HEAD has become (the deck keys need a build of it)."""
    releases = released_versions()
    assert "1.0.0" in releases
    for version, commit in releases.items():
        whole_history_or_skip(commit)
        r = tool("karma-score", "release", "--at", commit)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"commit {commit} is karma {version}'s release" in r.stdout
        assert "deck keys are not compared" in r.stdout


def test_the_checkout_claims_only_a_written_release():
    """HEAD between releases says -dev everywhere, and the release check names what differs
    from the last release without failing. While a release is made (docs/run-rules.md#releases,
    its version raised, its release file not yet written) the check fails; once written, it
    passes."""
    r = tool("karma-score", "release", "--bin-dir", build_bin())
    out = subprocess.run([miniapp("stream"), "--version"], capture_output=True, text=True)
    assert __version__ in out.stdout, out.stdout
    with open(os.path.join(ROOT, "python", "pyproject.toml")) as f:  # PEP 440's spelling
        assert f'version = "{__version__.replace("-dev", ".dev0")}"' in f.read()
    if __version__.endswith("-dev"):
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"this checkout is karma {__version__}, a development version that claims " \
            "no release" in r.stdout
        r = tool("karma-score", "release", "--write", "--bin-dir", build_bin())
        assert r.returncode == 2 and "is a development version, no release" in r.stderr
    elif release.released(ROOT)["version"] != __version__:
        assert r.returncode == 1 and f"this checkout says karma {__version__}, but " \
            f"{release.RELEASE_FILE} is karma" in r.stderr, r.stdout + r.stderr
    else:
        assert r.returncode == 0 and f"this checkout is karma {__version__}'s release" \
            in r.stdout, r.stdout + r.stderr


def test_a_reference_records_what_its_code_versions_are_made_of(tmp_path):
    out = tmp_path / "ref.json"
    r = tool("karma-score", "reference", make_set(tmp_path / "set", edit=as_of_head), "-o", out)
    assert r.returncode == 0, r.stderr
    ref = figure.load_reference(str(out))
    assert all(row["code_versions"] == [c["version"] for c in row["codes"]]
               for row in ref["rows"])
    assert release.kernel_drift(ref, ROOT) == []
    # The same reference against sources whose stream Copy changed.
    root = copy_of_checkout(tmp_path / "checkout")
    edit(root / "miniapps" / "stream" / "stream_basics.hpp", "c = in[0]; }",
         "c = in[0] + T(0); }")
    drift = release.kernel_drift(ref, str(root))
    assert drift and all(line.startswith("stream/") and "karma::stream::Copy" in line
                         for line in drift), drift
    ref["rows"][0].pop("codes")
    assert "does not record" in release.kernel_drift(ref, ROOT)[0]


def test_what_differs_from_the_release_is_named(tmp_path):
    root = copy_of_checkout(tmp_path / "checkout")
    # This checkout's own record as its release file (HEAD claims no release).
    atomic_write(str(root / release.RELEASE_FILE), json.dumps(release.record(
        str(root), build_bin(), release.shipped_reference(str(root)))))
    # What HEAD's kernels already differ from the shipped reference's.
    version, drift = release.check(str(root), build_bin())
    assert version == __version__ and all(line.count("/") >= 3 for line in drift), drift
    edit(root / "inputs" / "mgs" / "large.yaml", "32", "33")
    edit(root / "campaigns" / "procurement" / "weights.txt", "0.24", "0.25")
    edit(root / "common" / "runtime" / "src" / "run_rules.cpp", '"weak"', '"weaker"')
    edit(root / "python" / "src" / "karma_tools" / "results" / "rules.py",
         "# The large deck on", "# The large deck, run on")  # a comment: no change
    version, found = release.check(str(root), build_bin())
    found = [line for line in found if line not in drift]
    assert version == __version__
    where = {line.split(":")[0] for line in found}
    weights = {w for w in where if w.startswith("weights.")}
    assert len(weights) == 5  # normalised by their sum: every app's moves
    assert where - weights == {"class_decks.inputs/mgs/large.yaml",
                               "rules.code.common/runtime/src/run_rules.cpp"}, found
    # Such a checkout is not written as the same version's release.
    with pytest.raises(ToolError, match=f"karma {__version__} is released and this checkout"):
        release.same_version_unchanged(
            str(root), release.record(str(root), build_bin(), release.shipped_reference(str(root))))


def test_python_code_hashes_the_same_under_every_python():
    """The shapes one line of code parses to under different Pythons hash
    alike: 3.12 adds an empty type_params to a function and empty literals
    to f-strings, 3.13 gives a plain format spec as a Constant."""
    import ast
    name = ast.Name("w", ast.Load())

    def spec(*values):
        return ast.FormattedValue(name, -1, ast.JoinedStr(list(values)))
    shapes = [
        [ast.FunctionDef("f", ast.arguments(), [ast.Pass()], [], None, None),
         ast.FunctionDef("f", ast.arguments(), [ast.Pass()], [], None, None, type_params=[])],
        [ast.FormattedValue(name, -1, ast.JoinedStr([ast.Constant(".3")])),
         ast.FormattedValue(name, -1, ast.Constant(".3"))],
        [ast.JoinedStr([ast.Constant('"'), spec(), ast.Constant('"')]),
         ast.JoinedStr([ast.Constant('"'), spec(ast.Constant("")), ast.Constant('"')])],
        [ast.JoinedStr([ast.Constant("a b")]),
         ast.JoinedStr([ast.Constant("a"), ast.Constant(" b"), ast.Constant("")])],
    ]
    for one, other in shapes:
        assert release.tree_text(one) == release.tree_text(other)
    assert release.tree_text(shapes[1][0]) != release.tree_text(spec(ast.Constant(".4")))


def test_rounds_far_apart_are_flagged_and_never_scored(reference, tmp_path):
    """A round 2000 times another's (as a small CPU campaign's matvec once
    gave) is no measurement: compare flags the row, score leaves it out
    and is INCOMPLETE (figure.ROUNDS_FACTOR)."""
    path, ref_set = reference
    wild = make_set(tmp_path / "wild", rounds=(1.0, 0.9, 2000.0))
    r, doc = score(tmp_path, path, wild)
    assert r.returncode == 1, r.stderr
    assert doc["sets"][0]["record"]["complete"] is False
    assert "rounds differ 2.22e+03x (more than 10x): not scored" in r.stdout, r.stdout
    r = tool("karma-compare", ref_set, wild, "--markdown", tmp_path / "c.md")
    assert "rounds differ 2.22e+03x" in (tmp_path / "c.md").read_text(), r.stderr


def test_an_app_without_per_watt_leaves_the_others_weights_as_they_are():
    """The overall per-watt interval pairs each app's interval with its own
    weight when an app measured no energy (it once took the first weights)."""
    from karma_tools.score import figure

    def row(app, ratio, watt):
        return {"app": app, "ratio": ratio, "interval": [ratio, ratio],
                "per_watt": None if watt is None else {"ratio": watt, "interval": [watt, watt]},
                "class": "large", "scored": True}
    rows = [row("a", 1.0, None), row("b", 1.0, 2.0), row("c", 1.0, 8.0)]
    apps, overall = figure.app_scores(rows, {"a": 1.0, "b": 3.0, "c": 1.0})
    assert apps["a"]["per_watt_interval"] is None
    expect = math.exp((3 * math.log(2.0) + math.log(8.0)) / 4)
    assert overall["per_watt"] == pytest.approx(expect)
    assert overall["per_watt_interval"] == pytest.approx([expect, expect])
