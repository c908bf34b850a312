"""A mini-app the tools have never seen (issue 91): its results carry its
kernel table, and the tools check, score, compare and report it from that
alone. The fixture is a committed bundle's reportable STREAM results,
renamed into `toyapp` with kernels of other names and a table of its own."""

import json
import os
import tarfile

import pytest

from conftest import ROOT, tool

BUNDLES = os.path.join(ROOT, "results", "procurement")
RENAMED = {"copy": "move", "mul": "scale", "add": "sum", "triad": "axpy", "dot": "inner",
           "nstream": "update"}


def toy_table():
    """toyapp's table, as its C++ would declare it: each kernel its own work."""
    return {"fields": {"kernel": sorted(RENAMED.values())},
            "kernels": [{"name": "{kernel}", "implementation": ["kokkos"],
                         "variant": "{kernel}", "work": "{kernel}", "units": "GB/s",
                         "per": "bytes", "time": "best", "higher_is_better": True,
                         "scored": True}]}


def toy_set(dest, bundle, table=True):
    """The bundle's karma-stream results as toyapp's, one folder a run."""
    with tarfile.open(os.path.join(BUNDLES, bundle)) as tar:
        for member in tar.getmembers():
            if not member.name.endswith("/karma-stream.json"):
                continue
            doc = json.load(tar.extractfile(member))
            doc["app"] = "toyapp"
            doc["deck"]["schema"]["title"] = "karma-toyapp deck"
            doc["deck"]["resolved"]["toyapp"] = doc["deck"]["resolved"].pop("stream")
            for kernel in doc["kernels"]:
                kernel["name"] = kernel["variant"] = RENAMED[kernel["name"]]
            if table:
                doc["kernel_table"] = toy_table()
            run = os.path.join(dest, os.path.basename(os.path.dirname(member.name)))
            os.makedirs(run)
            with open(os.path.join(run, "karma-toyapp.json"), "w", encoding="utf-8") as f:
                json.dump(doc, f)
    return str(dest)


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    base = tmp_path_factory.mktemp("toyapp")
    weights = base / "weights.txt"
    weights.write_text("toyapp 1\n")
    return (toy_set(base / "a", "h200-1.0.0.tar.xz"),
            toy_set(base / "b", "h200-1.0.0-again.tar.xz"), str(weights))


def test_an_unknown_app_validates_from_its_table(sets):
    r = tool("karma-validate-results", sets[0])
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_unknown_app_without_a_table_is_refused(tmp_path):
    r = tool("karma-validate-results", toy_set(tmp_path / "bare", "h200-1.0.0.tar.xz", False))
    assert r.returncode != 0 and "toyapp" in r.stdout + r.stderr, r.stdout + r.stderr


def test_an_unknown_app_scores_and_compares_alike(sets):
    a, b, weights = sets
    score = tool("karma-score", a, "--reference", b, "--weights", weights, "--unofficial")
    assert score.returncode == 0, score.stdout + score.stderr
    figure = [line for line in score.stdout.splitlines() if "figure" in line.lower()]
    assert figure, score.stdout
    compare = tool("karma-compare", b, a, "--weights", weights)
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert figure[0].strip().removeprefix("**UNOFFICIAL** ") in compare.stdout, \
        (figure[0], compare.stdout)
    for kernel in ("axpy", "inner"):
        assert kernel in compare.stdout, compare.stdout


def test_an_unknown_app_is_reported(sets, tmp_path):
    out = tmp_path / "report.md"
    r = tool("karma-report", sets[0], "-o", str(out), "--no-plots", "--score",
             "--reference", sets[1], "--weights", sets[2])
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    assert "toyapp" in text and "axpy" in text, text[:2000]
    score = tool("karma-score", sets[0], "--reference", sets[1], "--weights", sets[2],
                 "--unofficial")
    figure = [line for line in score.stdout.splitlines() if "figure" in line.lower()]
    assert figure and figure[0].strip() in text, (figure, text[:3000])


def test_an_unknown_apps_two_implementations_are_reported_as_pairs(tmp_path):
    """Runs that measure both implementations of --microbench-pair are paired
    whatever their app (no app is named in the tools); the others list their
    configurations."""
    dest = toy_set(tmp_path / "pairs", "h200-1.0.0.tar.xz")
    for path in sorted(str(p) for p in (tmp_path / "pairs").glob("*/karma-toyapp.json"))[:1]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        hand = [dict(k, name=k["name"] + "-hand", implementation="hand",
                     fom=dict(k["fom"], value=k["fom"]["value"] / 2)) for k in doc["kernels"]]
        for k in doc["kernels"]:
            k["implementation"] = "kokkos"
        doc["kernels"] += hand
        doc["kernel_table"]["kernels"].append(dict(
            toy_table()["kernels"][0], name="{kernel}-hand", implementation=["hand"]))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
    out = tmp_path / "report.md"
    r = tool("karma-report", dest, "-o", str(out), "--no-plots", "--microbench-pair",
             "kokkos:hand")
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    pairs = text.split(": microbenchmarks")[1].split("\n## ")[0]
    assert "From 1 karma-toyapp run(s)" in pairs, pairs[:2000]
    assert "| axpy | " in pairs and "| 2.000 (2.000-2.000) |" in pairs, pairs[:2000]
    assert ": every configuration" in text
