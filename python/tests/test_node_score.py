"""karma-score's per-node figure (docs/score.md#per-node): a node of two GPUs against a
reference node of one, over the node classes' rows, and the node's GPUs each alone. The
sets are test_score's real H100 results, given classes, ranks and GPUs as a node's runs
would have them."""

import copy
import json
import os
import re

import pytest

from conftest import ROOT, tool
from test_score import JOBS, ROUNDS, cell, close, make_set, original, scale, with_rules, write

PROCUREMENT = os.path.join(ROOT, "results", "procurement")
STRONG = {"mgs.n1x1.layoutleft": "mgs", "contact.n1x1": "contact"}
ALONE = ("stream.n1x1.shape2p25", "hexgrad.n1x1.precisiondouble.layoutleft")


def as_shipped(job, doc):
    """The per-GPU runs of a node: its large decks unchanged, on GPU-a."""
    doc["deck"]["overrides"] = []
    doc["ranks"][0]["device"]["uuid"] = "GPU-a"


def node_doc(job, cls, ranks, factor, uuid=None):
    """A round-1 document of `job` as a run of class `cls` on `ranks` GPUs (or on `uuid`)."""
    doc = with_rules(original(job), JOBS[job], cls=cls)
    as_shipped(job, doc)
    doc["mpi"].update(ranks=ranks, nodes=1)
    doc["ranks"] = [copy.deepcopy(doc["ranks"][0]) for _ in range(ranks)]
    for i, rank in enumerate(doc["ranks"]):
        rank["device"]["uuid"] = uuid or f"GPU-{'ab'[i]}"
    scale(doc, factor)
    return doc


def add_runs(path, name, jobs, cls, ranks, factor, uuid=None):
    """Three rounds of `jobs` as node runs under path/results/<job>.<name>.r<round>."""
    for job in jobs:
        for r, f in enumerate(ROUNDS, 1):
            doc = node_doc(job, cls, ranks, factor * f, uuid)
            write(os.path.join(path, "results", f"{job}.{name}.r{r}", f"karma-{doc['app']}.json"),
                  doc)


@pytest.fixture
def one_gpu_reference(tmp_path):
    """A reference node of one GPU: its per-GPU runs and the strong decks on one rank."""
    ref_set = make_set(tmp_path / "one", edit=as_shipped)
    add_runs(ref_set, "strong", STRONG, "strong", 1, 1.0)
    out = tmp_path / "one.json"
    r = tool("karma-score", "reference", ref_set, "-o", out)
    assert r.returncode == 0, r.stderr
    return str(out)


def two_gpu_node(path, strong=True):
    """A node of two GPUs: per-GPU runs on GPU-a, both GPUs at once (1.9x the work per
    second of one), together on the strong decks (1.8x), GPU-b alone (2% slower)."""
    make_set(path, edit=as_shipped)
    add_runs(path, "weak", [j for j in JOBS if JOBS[j] == "baseline"], "weak", 2, 1.9)
    if strong:
        add_runs(path, "strong", STRONG, "strong", 2, 1.8)
    add_runs(path, "alone", ALONE, "large", 1, 0.98, uuid="GPU-b")
    return str(path)


def scored(tmp_path, reference, path):
    out = tmp_path / "score.json"
    r = tool("karma-score", path, "--reference", reference, "--json", out, "--unofficial")
    return r, json.loads(out.read_text())["sets"][0]


def test_the_reference_node_keeps_its_node_rows(one_gpu_reference):
    doc = json.load(open(one_gpu_reference))
    classes = {(r["app"], r["class"]) for r in doc["node_rows"]}
    assert doc["node_gpus"] == 1
    assert {("mgs", "strong"), ("contact", "strong"), ("stream", "throughput")} <= classes
    assert all(r["class"] != "strong" for r in doc["rows"])  # the per-GPU rows are apart


def test_a_node_of_two_gpus_against_a_node_of_one(tmp_path, one_gpu_reference):
    r, s = scored(tmp_path, one_gpu_reference, two_gpu_node(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    assert close(s["record"]["figure"], 1.0)  # per GPU: GPU-a's runs alone
    node = s["node"]
    assert node["complete"] and node["gpus"] == 2 and node["reference_gpus"] == 1
    assert close(node["apps"]["stream"]["score"], 1.9)
    assert close(node["apps"]["mgs"]["score"], (1.9 * 1.8) ** 0.5)
    assert 1.8 < node["figure"] < 1.9
    assert "**Per node, 2 GPUs against the reference's 1:" in r.stdout
    alone = {g["uuid"]: g for g in s["gpus_alone"]}
    assert alone["GPU-a"]["per_gpu"] and close(alone["GPU-a"]["score"], 1.0)
    assert close(alone["GPU-b"]["score"], 0.98)
    assert "the best 2.0% above the slowest" in r.stdout


def test_a_node_without_its_strong_runs_is_incomplete_per_node(tmp_path, one_gpu_reference):
    r, s = scored(tmp_path, one_gpu_reference, two_gpu_node(tmp_path / "two", strong=False))
    assert r.returncode == 1
    assert not s["node"]["complete"] and "mgs/strong" in " ".join(s["node"]["missing"])
    assert "per node is INCOMPLETE" in r.stderr
    assert s["record"]["complete"]  # the per-GPU figure stands


def test_no_node_rows_in_the_reference_no_per_node_figure(tmp_path):
    ref = tmp_path / "plain.json"
    assert tool("karma-score", "reference", make_set(tmp_path / "p"), "-o", ref).returncode == 0
    r, s = scored(tmp_path, str(ref), two_gpu_node(tmp_path / "two"))
    assert r.returncode == 0 and not s["node"]["scored"]
    assert "Per node (2 GPUs): not scored, the reference has no node rows" in r.stdout


def node_run(cls, uuids):
    return {"reportable": {"class": cls}, "mpi": {"ranks": len(uuids)},
            "ranks": [{"host": "h", "device": {"kind": "gpu", "uuid": u, "name": "X"}}
                      for u in uuids]}


@pytest.mark.parametrize("cls, uuids, wrong", [
    ("strong", ["GPU-a", "GPU-b"], False), ("weak", ["GPU-a", "GPU-b"], False),
    ("strong", ["GPU-a"], True),  # one GPU of two
    ("weak", ["GPU-a", "GPU-a"], True),  # two ranks sharing a GPU
    ("large", ["GPU-a"], False)])
def test_the_bundle_check_wants_each_node_run_on_every_gpu(cls, uuids, wrong):
    from karma_tools.bundle import bundle
    found = bundle._gpu_problems({"node.gpus_per_node": 2, "node.gpu_model": "X"},
                                 [("r.json", node_run(cls, uuids))], [])
    assert any("a node class runs one rank on each GPU" in why for _, why in found) == wrong


def readme_section(title):
    """results/procurement/README.md's section `title`, its whitespace made single spaces."""
    text = open(os.path.join(PROCUREMENT, "README.md"), encoding="utf-8").read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start:end if end > 0 else None].split())


def assert_gives_the_node(s, section, per_gpu, names):
    """The section's figures of a node of two: per GPU and per node (with per watt), the
    per-node apps, and each GPU alone (named in `names`)."""
    record, node = s["record"], s["node"]
    assert node["gpus"] == 2 and node["complete"] and node["rows"] == 16
    for what, r in ((per_gpu, record), ("**per node**", node)):
        figure = cell(r["figure"], r["interval"])
        figure = f"**{figure}**" if what.startswith("**") else figure
        row = f"| {figure} | {cell(r['per_watt'], r['per_watt_interval'])} |"
        assert re.search(rf"\| {re.escape(what)}[^|]* {re.escape(row)}", section), (what, row)
    for app, a in node["apps"].items():
        assert f"{app} {a['score']:.3f}" in section, app
    for g, name in zip(s["gpus_alone"], names):
        alone = cell(g["score"], g["interval"])
        assert f"{name} scores {alone}" in section or f"{name} {alone}" in section, name


def test_the_procurement_readme_gives_the_node_s_figures(tmp_path):
    """results/procurement/README.md's node of two H200s, made again: its per-GPU and per-node
    figures against the reference of its own one-GPU runs, and its GPUs each alone."""
    ref, out = tmp_path / "one.json", tmp_path / "s.json"
    r = tool("karma-score", "reference", os.path.join(PROCUREMENT, "node",
                                                      "h200-1.1.0-dev-af001311-one-gpu.tar.xz"),
             "-o", ref)
    assert r.returncode == 0, r.stderr
    r = tool("karma-score", f"node={os.path.join(PROCUREMENT, 'h200x2-1.1.0-dev-af001311')}"
             ".tar.xz", "--reference", ref, "--json", out, "--unofficial")
    assert r.returncode == 0, r.stderr
    s = json.loads(out.read_text())["sets"][0]
    assert_gives_the_node(s, readme_section("A node of two H200s: per GPU and per node "
                                            "(issue 94)"), "per GPU (GPU 0)", "HI")


def test_the_procurement_readme_gives_the_release_s_node(tmp_path):
    """Issue 99: karma 1.1.0's node of two (N and O) against the reference of J, K and L, the
    per-node figure from their one-GPU node rows, as results/procurement/README.md gives it."""
    ref, out = tmp_path / "jkl.json", tmp_path / "s.json"
    r = tool("karma-score", "reference", *(os.path.join(PROCUREMENT, f"h200-1.1.0-{u}.tar.xz")
                                           for u in ("141bbcbf", "2b92b403", "1fdbb3e3")),
             "-o", ref)
    assert r.returncode == 0, r.stderr
    r = tool("karma-score", f"N={os.path.join(PROCUREMENT, 'h200x2-1.1.0-a132b1b7.tar.xz')}",
             "--reference", ref, "--json", out, "--unofficial")
    assert r.returncode == 0, r.stderr
    s = json.loads(out.read_text())["sets"][0]
    assert s["node"]["reference_gpus"] == 1 and s["node"]["verdict"] == "better than the reference"
    assert_gives_the_node(s, readme_section("A node of two H200s of karma 1.1.0: units N and O "
                                            "(issue 99)"), "per GPU (N), against J, K and L",
                          "NO")
