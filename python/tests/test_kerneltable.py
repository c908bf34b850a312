"""A kernel table's expressions (karma/kernel_table.hpp, kerneltable.evaluate):
what derived.py derives a result's count, repetitions and further figures
again from, over a grammar too small to do anything but read the result.
The results are committed ones written before the table, read with their
release's data (data/apps/1.0.0.json) and the head's (data/apps/head.json)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from karma_tools.core import ToolError
from karma_tools.results import archive, derived, kerneltable

SET = os.path.join(ROOT, "results", "procurement", "h200-1.0.0-again.tar.xz", "results")
HEXGRAD = os.path.join(SET, "hexgrad-large-native.n1x1.r1", "karma-hexgrad.json")
CONTACT = os.path.join(SET, "contact-large.n1x1.r1", "karma-contact.json")
# A development version's, its storages' whole steps timed as one (head.json).
STEPPED = os.path.join(ROOT, "results", "campaigns", "h200x2", "contact-growth-aba4b7e1.tar.xz",
                       "results", "strong-new.n1x1.r1", "karma-contact.json")
DOC = {"problem": {"n": 6, "mode": "partitioned"}, "mpi": {"ranks": 4},
       "kernels": [{"name": "a.build", "variant": "a", "time_s": {"mean": 2.0}}]}


def load(path):
    doc = json.loads(archive.read_bytes(path))
    assert "kernel_table" not in doc and derived.problems(doc) == []
    return doc


@pytest.mark.parametrize("text", [
    "__import__('os')", "problem.n ** 2", "[problem.n]", "lambda: 1", "len(problem)",
    "max(1, key=2)", "1 < problem.n < 3", "problem.n and 1", "-problem.n", "True", "None",
    "kernels[0:1]", "problem.n +", ""])
def test_an_expression_outside_the_grammar_is_refused(text):
    with pytest.raises(ToolError, match="not an expression the tables allow"):
        kerneltable.evaluate(text, DOC)


def test_a_result_whose_table_holds_one_is_refused():
    doc = dict(DOC, kernel_table={"fields": {}, "kernels": [
        {"name": "a.build", "implementation": ["kokkos"], "variant": "a", "work": "build",
         "units": "pairs/s", "per": "pairs", "time": "mean", "higher_is_better": True,
         "scored": True, "figures": {"x": "open('/etc/passwd')"}}]})
    assert derived.problems(doc) == [
        "kernels[0] (a.build): kernel table: \"open('/etc/passwd')\" is not an expression "
        "the tables allow (Call)"]


@pytest.mark.parametrize("text, value", [
    ("problem.n * (1 if problem.mode == 'partitioned' else mpi.ranks) / max(2, 1)", 3.0),
    ("problem.n * (1 if problem.mode == 'replicated' else mpi.ranks)", 24),
    ("kernels[kernel.variant + '.build'].time_s.mean * 1e6", 2e6),
    ("min(problem.n, 4) - 1 >= 3", True),
    # What the result does not record, or cannot be computed, is no figure.
    ("max(deck.resolved.contact.steps, 1)", None), ("kernels['b.build'].time_s.mean", None),
    ("problem.n / 0", None), ("problem.mode * 2", None), ("problem.mode < 1", None),
    ("problem.n.__class__", None)])
def test_an_expression_reads_the_result(text, value):
    assert kerneltable.evaluate(text, DOC, DOC["kernels"][0]) == value


def forged(path, kernel, *fields):
    doc = load(path)
    for field in fields:
        *parents, last = field.split(".")
        node = doc["kernels"][kernel]
        for p in parents:
            node = node[p]
        node[last] *= 2
    return derived.problems(doc)


@pytest.mark.parametrize("path, kernel, field, why", [
    (HEXGRAD, 0, "elements_per_second.best", "elements_per_second.best 2.121274e+10, but "
     "problem.elements_global / kernel.time_s.min gives 1.060637e+10"),
    (HEXGRAD, 0, "elements_per_second.median", "elements_per_second.median"),
    (HEXGRAD, 0, "time_per_launch_us.min", "time_per_launch_us.min 3163.612, but "
     "kernel.time_s.min * 1e6 gives 1581.806"),
    (HEXGRAD, 0, "time_per_launch_us.median", "time_per_launch_us.median"),
    (CONTACT, 2, "speedup_vs_linked_list", "speedup_vs_linked_list 8.350803, but "
     "kernels['linked-list.build'].time_s.mean / kernel.time_s.mean gives 4.175401"),
    (CONTACT, 2, "rebuild_s_mean", "rebuild_s_mean"),
    (CONTACT, 2, "step_s_mean", "step_s_mean"),
    (CONTACT, 3, "time_per_sweep_s", "time_per_sweep_s"),
    (STEPPED, 0, "step_s_mean", "step_s_mean"),
    (STEPPED, 6, "step_s_mean", "step_s_mean"),
    (STEPPED, 6, "step_s_mean_of_kernels", "step_s_mean_of_kernels"),
])
def test_a_forged_figure_of_the_table_is_refused(path, kernel, field, why):
    name = json.loads(archive.read_bytes(path))["kernels"][kernel]["name"]
    assert any(p.startswith(f"kernels[{kernel}] ({name}): {why}")
               for p in forged(path, kernel, field)), forged(path, kernel, field)


def test_a_forged_count_of_a_whole_step_is_refused():
    doc = load(STEPPED)
    doc["kernels"][6]["time_s"]["count"] += 1
    assert any("time_s.count" in p and "but the run timed" in p for p in derived.problems(doc))


def test_the_frozen_table_of_1_0_0_is_made_again(tmp_path):
    """scripts/freeze-kernel-tables.py, run again on the committed results,
    writes 1.0.0's frozen tables byte for byte."""
    out = tmp_path / "1.0.0.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "freeze-kernel-tables.py"),
                        "1.0.0", "--output", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == open(os.path.join(kerneltable.DATA, "1.0.0.json"), "rb").read()
