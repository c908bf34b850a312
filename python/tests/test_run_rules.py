"""The run rules as the mini-apps apply them (docs/run-rules.md): every deck
key says what a reportable run may change (x-rules), every mini-app has its
class decks, and each result records its class, its tier and why it is not
reportable."""

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, miniapp, write

from karma_tools import APPS

# The mini-apps under the run rules: every one but microbench, which has no
# classes (it measures karma's arrays against raw pointers, not a machine).
RULED = tuple(app for app in APPS if app != "microbench")

RULES = {"fixed", "axis", "tuning", "free"}
SIZE_KEYS = {"stream": "stream.shape", "hexgrad": "hexgrad.n", "mgs": "mgs.n",
             "matvec": "matvec.m", "contact": "contact.n"}
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
# The small decks leave energy off; on a GPU its windows take over a second a
# kernel, so the runs here that need no figure of it leave it off too.
ENERGY_OFF = "run.energy is off (the rules ask for every kernel's energy)"


def exe(app):
    return miniapp(app)


def deck(app, cls):
    return os.path.join(ROOT, "inputs", app, f"{cls}.yaml")


def run(tmp_path, app, deck_path, *sets, launcher=()):
    out = tmp_path / f"{app}-{len(list(tmp_path.iterdir()))}.json"
    argv = [*launcher, exe(app), str(deck_path), "--output", str(out)]
    for s in sets:
        argv += ["--set", s]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=ENV,
                       stdin=subprocess.DEVNULL)
    assert out.is_file(), r.stdout + r.stderr
    with open(out) as f:
        return r.returncode, json.load(f)


def pinned():
    with open(os.path.join(ROOT, "scripts", "bootstrap.sh")) as f:
        return re.search(r"^KOKKOS_PINNED=(\S+)$", f.read(), re.M).group(1)


def version(text):
    return tuple(int(p) for p in text.split(".")[:3])


def environment_reasons(result):
    """The reasons that come from this build, not from the run."""
    reasons = []
    if version(result["kokkos"]["version"]) < version(pinned()):
        reasons.append(f"Kokkos {result['kokkos']['version']} is older than the pinned {pinned()}")
    if result["build"]["type"] != "Release":
        reasons.insert(0, f"built as '{result['build']['type']}' (the rules ask for Release)")
    return reasons


def leaves(schema, prefix=""):
    for name, node in schema["properties"].items():
        if node.get("type") == "object" and "properties" in node:
            yield from leaves(node, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", node


@pytest.mark.parametrize("app", RULED)
def test_every_key_says_what_a_reportable_run_may_change(app):
    r = subprocess.run([exe(app), "--help=json"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    rules = {path: node.get("x-rules") for path, node in leaves(json.loads(r.stdout))}
    assert set(rules.values()) <= RULES, rules
    assert rules[SIZE_KEYS[app]] == "fixed"
    assert rules["run.energy"] == "free" and rules["run.results_dir"] == "free"
    assert rules["run.inject_fault"] == "fixed" and rules["run.energy_window"] == "fixed"
    for key in (f"{app}.layout", f"{app}.precision"):
        assert rules.get(key, "axis") == "axis", key


@pytest.mark.parametrize("app", RULED)
def test_each_class_deck_runs_as_its_class(app, tmp_path):
    """small runs here: a working set of at most 64 MiB, class small, tier
    baseline; medium and large are too big for a test machine, but exist."""
    for cls in ("small", "medium", "large"):
        assert os.path.isfile(deck(app, cls)), cls
    rc, result = run(tmp_path, app, deck(app, "small"))
    assert rc == 0
    record = result["reportable"]
    assert (record["class"], record["tier"], record["rules"]) == ("small", "baseline", "1")
    assert record["reasons"] == environment_reasons(result) + [ENERGY_OFF]
    assert not record["reportable"]
    if app != "contact":  # contact's 20k elements report no footprint
        assert result["problem"]["footprint_bytes_per_rank"] <= 64 << 20


def test_what_a_run_sets_decides_its_tier(tmp_path):
    small = deck("stream", "small")
    _, shipped = run(tmp_path, "stream", small)
    assert shipped["reportable"]["reasons"] == environment_reasons(shipped) + [ENERGY_OFF]
    # With energy on, the build is all that can keep a class deck's run
    # from counting.
    _, axis = run(tmp_path, "stream", small, "run.energy=on", "stream.layout=left",
                  "stream.precision=float")
    assert axis["reportable"]["tier"] == "baseline"
    assert axis["reportable"]["reasons"] == environment_reasons(axis)
    assert axis["reportable"]["reportable"] == (environment_reasons(axis) == [])
    _, tuned = run(tmp_path, "hexgrad", deck("hexgrad", "small"), "hexgrad.extents=dynamic")
    assert tuned["reportable"]["tier"] == "optimized"
    assert tuned["reportable"]["reasons"] == environment_reasons(tuned) + [ENERGY_OFF]
    _, resized = run(tmp_path, "stream", small, "stream.shape=[1000]")
    assert resized["reportable"]["tier"] is None
    assert resized["reportable"]["reasons"] == [
        "stream.shape was set by --set: no tier lets a run change it"] + \
        environment_reasons(resized) + [ENERGY_OFF]
    assert not resized["reportable"]["reportable"]


def test_a_class_is_the_deck_text_not_its_path(tmp_path):
    copy = tmp_path / "decks" / "mine.yaml"
    copy.parent.mkdir()
    shutil.copy(deck("mgs", "small"), copy)
    _, same = run(tmp_path, "mgs", copy)
    assert same["reportable"]["class"] == "small"
    write(copy, open(deck("mgs", "small")).read() + "# one more line\n")
    _, edited = run(tmp_path, "mgs", copy)
    assert edited["reportable"]["class"] is None
    assert edited["reportable"]["reasons"][0] == (
        f"the deck {copy} is not one of karma-mgs's class decks "
        "(inputs/mgs/small|medium|large|strong.yaml as shipped)")


def test_a_failed_check_is_not_reportable(tmp_path):
    rc, result = run(tmp_path, "stream", deck("stream", "small"), "run.inject_fault=dot")
    assert rc == 1 and result["result"] == "FAILED"
    assert result["reportable"]["tier"] is None  # inject_fault is fixed
    assert "a check failed" in result["reportable"]["reasons"]


def test_small_on_two_ranks_is_no_class_of_several(tmp_path):
    mpiexec = os.environ.get("KARMA_MPIEXEC")
    if not mpiexec:
        pytest.skip("a build without MPI")
    _, result = run(tmp_path, "stream", deck("stream", "small"), launcher=(mpiexec, "-n", "2"))
    assert result["mpi"]["ranks"] == 2
    assert result["reportable"]["class"] == "small"
    assert ("class small runs on one rank (on several: the strong deck, or the large deck as "
            "the weak class)" in result["reportable"]["reasons"])


@pytest.mark.parametrize("app, size", (("mgs", "mgs.n=4096"), ("contact", "contact.n=16")))
def test_the_strong_deck_is_its_class_on_any_ranks(app, size, tmp_path):
    """One problem split over the ranks, on one rank as on several (here at
    a test's size, which --set makes unreportable)."""
    mpiexec = os.environ.get("KARMA_MPIEXEC")
    for ranks in (1, 2) if mpiexec else (1,):
        launcher = (mpiexec, "-n", str(ranks)) if ranks > 1 else ()
        rc, result = run(tmp_path, app, deck(app, "strong"), size, "run.energy=off",
                         launcher=launcher)
        assert rc == 0 and result["mpi"]["ranks"] == ranks
        record = result["reportable"]
        assert (record["class"], record["tier"]) == ("strong", None)
        assert record["reasons"] == [
            f"{size.split('=')[0]} was set by --set: no tier lets a run change it"] + \
            environment_reasons(result) + [ENERGY_OFF]
