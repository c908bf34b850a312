"""karma-bundle (karma_tools/bundle/bundle.py): pack a finished campaign with its
disclosure and build logs into one bundle, and check a received one without
trusting it. The campaign is the committed contact-gpu run (4 jobs on an
H200), extracted, its results given the run rules' `reportable` record."""

import hashlib
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import tarfile

import pytest

from conftest import ROOT, tool, write
from karma_tools.bundle import bundle, facts
from karma_tools.bundle.disclose import yaml_text
from karma_tools.core import __version__
from karma_tools.score import figure, release
from karma_tools.results import derived
from karma_tools import yamlread

COMMITTED = os.path.join(ROOT, "results", "campaigns", "h200", "contact-gpu.tar.xz")
H100 = os.path.join(ROOT, "results", "procurement", "h100.tar.xz")
CPU_SET = os.path.join(ROOT, "results", "campaigns", "vm", "matvec-cpu.tar.xz")
BABELSTREAM = os.path.join(ROOT, "results", "campaigns", "h200", "stream-vs-babelstream.tar.xz")
TEMPLATE = os.path.join(ROOT, "campaigns", "procurement", "disclosure.yaml")
STREAM = "results/stream-copy.n1x1/karma-stream.json"
LARGE = "results/n126.n1x1/karma-contact.json"
# The committed campaigns ran karma 0.1.0, before releases: valid, never reportable.
NO_RELEASE = "suite.version 0.1.0: no release (campaigns/procurement/release.json or, before " \
    "1.0.0, a commit of that version git keeps)"

# What each result's record says: n126 ran inputs/contact/large.yaml.
RECORDS = {
    "n126.n1x1": ("large", "baseline", []),
    "stream-copy.n1x1": (None, "baseline", ["the deck is not a class deck"]),
    "n32-traced.n1x1": (None, None, ["the deck is not a class deck", "traced"]),
    "tiny-traced.n1x1": (None, None, ["the deck is not a class deck"]),
}

DISCLOSURE = {
    "system": {"name": "vm", "vendor": "Example Computing", "nodes": 1},
    "node": {"cpu_model": "Intel(R) Xeon(R) Processor", "sockets": 1, "cores": 16,
             "memory_GB": 135, "gpu_model": "NVIDIA H200", "gpus_per_node": 1,
             "gpu_memory_GB": 141},
    "interconnect": "none",
    "software": {"os": "Ubuntu 24.04.3 LTS", "compiler": "GCC 13.3.0, nvcc 13.0.88",
                 "mpi": "Open MPI 4.1.6", "kokkos": "4.6.01", "gpu_toolkit": "CUDA 13.0"},
    "tier": "baseline",
    "deviations": [],
    "tester": {"name": "A. Tester", "organisation": "Example Lab", "date": "2026-11-23"},
}

CPU_DISCLOSURE = dict(
    DISCLOSURE, system={"name": "vm", "vendor": "Example Computing", "nodes": 1},
    node={"cpu_model": "AMD EPYC", "sockets": 1, "cores": 2, "memory_GB": 24,
          "gpu_model": "none", "gpus_per_node": 0, "gpu_memory_GB": 0},
    software={"os": "Debian GNU/Linux 12 (bookworm)", "compiler": "GCC 12.2.0",
              "mpi": "Open MPI 4.1.4", "kokkos": "3.4.01", "gpu_toolkit": "none"})


def to_yaml(tree, indent=""):
    lines = []
    for key, value in tree.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.append(to_yaml(value, indent + "  "))
        else:
            lines.append(f"{indent}{key}: {json.dumps(value)}")
    return "\n".join(lines)


def set_key(tree, dotted, value):
    tree = json.loads(json.dumps(tree))
    node, *_ = [tree]
    *parents, last = dotted.split(".")
    for p in parents:
        node = node[p]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return tree


def extract(tmp_path, committed, records):
    """A committed campaign, extracted, with its campaign file and job
    scripts back, and its results carrying their records: records(job)
    gives (class, tier, reasons)."""
    name = os.path.basename(committed)[:-len(".tar.xz")]
    out = tmp_path / name
    r = tool("karma-archive", "extract", committed, out)
    assert r.returncode == 0, r.stderr
    text = f"name: {name}\n"
    yaml = write(str(tmp_path / f"{name}.yaml"), text)
    manifest = json.loads((out / "campaign.json").read_text())
    manifest["campaign"]["path"] = yaml
    manifest["campaign"]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (out / "campaign.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for job in manifest["jobs"]:
        write(str(out / job["script"]), "#!/bin/bash\n")
        add_record(out / "results" / job["name"] / os.path.basename(job["results_file"]),
                   *records(job["name"]))
    return out


@pytest.fixture
def campaign(tmp_path):
    """The committed contact-gpu campaign (4 jobs on an H200)."""
    out = extract(tmp_path, COMMITTED, RECORDS.get)
    # n126 ran the large deck before the run rules fixed its sweeps: it
    # stands for a run of the class deck as shipped.
    doc = json.loads((out / LARGE).read_text())
    with open(os.path.join(ROOT, "inputs", "contact", "large.yaml"), "rb") as f:
        doc["deck"]["sha256"] = hashlib.sha256(f.read()).hexdigest()
    (out / LARGE).write_text(json.dumps(doc, indent=2) + "\n")
    return out


@pytest.fixture
def cpu_campaign(tmp_path):
    """The committed matvec-cpu campaign: 16 jobs on this project's 2-core
    VM, no GPU, Kokkos with OpenMP; lscpu's Model name is 'AMD EPYC'."""
    return extract(tmp_path, CPU_SET, lambda job: (None, "baseline",
                                                   ["the deck is not a class deck"]))


def add_record(path, cls, tier, reasons):
    doc = json.loads(path.read_text())
    doc["reportable"] = {"rules": "1", "class": cls, "tier": tier,
                         "reportable": not reasons, "reasons": reasons}
    path.write_text(json.dumps(doc, indent=2) + "\n")


def pack(tmp_path, campaign, disclosure=DISCLOSURE, *extra, name="b.tar.xz"):
    d = write(str(tmp_path / "disclosure.yaml"), to_yaml(disclosure) + "\n")
    log = write(str(tmp_path / "build.log"), "cmake --build: ok\n")
    out = tmp_path / name
    r = tool("karma-bundle", "pack", campaign, "-o", out, "--disclosure", d, "--build-log", log,
             "--weights", os.path.join(ROOT, "campaigns", "procurement", "weights.txt"), *extra)
    return r, out


def members(path):
    with tarfile.open(path, "r:xz") as tar:
        return {i.name: tar.extractfile(i).read() for i in tar if i.isfile()}


def rewrite(path, files):
    """A bundle with these members, as an attacker would make one."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(lzma.compress(raw.getvalue(), format=lzma.FORMAT_XZ))


def manifest_for(files):
    return bundle.manifest_text({p: d for p, d in files.items()
                                 if p != bundle.MANIFEST}).encode()


def check(path, *how):
    return tool("karma-bundle", *(how or ("check",)), path)


def refused(r, *words):
    assert r.returncode == 1, r.stdout + r.stderr
    assert all(w in r.stderr for w in words), r.stderr
    assert "NOT VALID" in r.stdout


@pytest.fixture
def packed(tmp_path, campaign):
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 0, r.stderr
    return out


def test_pack_and_check(tmp_path, packed):
    files = members(packed)
    names = sorted(files)
    assert bundle.MANIFEST in names and "disclosure.yaml" in names
    assert {"campaign/campaign.json", "campaign/contact-gpu.yaml", "build-logs/build.log",
            "weights/weights.txt", "campaign/jobs/n126.n1x1.sh", LARGE, STREAM,
            "results/n126.n1x1/exit_code", "results/n126.n1x1/job.out",
            "results/n126.n1x1/environment/environment.json"} <= set(names)
    lines = files[bundle.MANIFEST].decode().splitlines()
    assert [ln.split("  ", 1)[1] for ln in lines] == [n for n in names if n != bundle.MANIFEST]
    for r in (check(packed), check(packed, "--check")):
        # Valid, but one reportable result is no campaign the score can use.
        assert r.returncode == 1 and r.stderr == "", r.stderr
        assert f"karma-bundle: {packed}: valid, not reportable: " in r.stdout
        assert "4 job(s), 4 result(s) (0 reference)" in r.stdout
        assert "reportable (class/tier): large/baseline 1" in r.stdout
        assert f"not reportable: {STREAM}: the deck is not a class deck" in r.stdout
    # The same campaign gives the same bytes.
    r, again = pack(tmp_path, tmp_path / "contact-gpu", name="again.tar.xz")
    assert r.returncode == 0 and again.read_bytes() == packed.read_bytes()


def test_the_tools_read_a_bundle_whose_manifest_holds(tmp_path, packed):
    ref = tmp_path / "ref.json"
    r = tool("karma-score", "reference", packed, "-o", ref)
    assert r.returncode == 0, r.stderr
    assert json.loads(ref.read_text())["source"] == str(packed)
    weights = write(str(tmp_path / "w.txt"), "contact 1\n")
    r = tool("karma-score", packed, "--reference", ref, "--weights", weights, "--unofficial")
    assert r.returncode == 0, r.stderr
    assert "| baseline | score | 1.000 (1.000-1.000) | **1.000 (1.000-1.000)** |" in r.stdout
    files = members(packed)
    files[LARGE] = files[LARGE].replace(b'"pairs"', b'"pears"', 1)
    rewrite(packed, files)
    r = tool("karma-score", packed, "--reference", ref, "--weights", weights, "--unofficial")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"{LARGE}: sha256 differs from MANIFEST.sha256" in r.stderr


def test_a_changed_result_is_named(tmp_path, packed):
    files = members(packed)
    doc = json.loads(files[STREAM])
    doc["kernels"][0]["fom"]["value"] *= 2
    files[STREAM] = json.dumps(doc).encode()
    rewrite(packed, files)
    refused(check(packed), f"{STREAM}: sha256 differs from MANIFEST.sha256")
    # The manifest rewritten too: neither the figure nor a faked record passes.
    doc["reportable"] = {"rules": "1", "class": "small", "tier": "baseline",
                         "reportable": True, "reasons": []}
    files[STREAM] = json.dumps(doc).encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    r = check(packed)
    refused(r, f"{STREAM}: reportable.class: small, but deck.sha256",
            "is not inputs/stream/small.yaml of this suite",
            f"{STREAM}: kernels[0] (copy): fom.value 8000.341, but bytes / time_s.min gives "
            "4000.171")
    assert "sha256 differs" not in r.stderr


def forge(packed, path, change):
    """The bundle with one result changed by change(doc) and the manifest
    made again: what a forger who knows the format hands in."""
    files = members(packed)
    doc = json.loads(files[path])
    change(doc)
    files[path] = json.dumps(doc).encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    return check(packed)


def double(k, *fields):
    for field in fields:
        *parents, last = field.split(".")
        node = k
        for p in parents:
            node = node[p]
        node[last] *= 2


@pytest.mark.parametrize("path, kernel, fields, why", [
    # A figure doubled, and with it every figure the harness derives beside it.
    (STREAM, 0, ("fom.value", "bandwidth_GBps.best"),
     "kernels[0] (copy): fom.value 8000.341, but bytes / time_s.min gives 4000.171"),
    # contact's figures are over the mean time: all the work over all its time.
    (LARGE, 2, ("fom.value",), "kernels[2] (csr-two-pass.build): fom.value 9.251025e+09, but "
     "problem.pairs_all_steps_per_rank * (1 if problem.decomposition.mode == 'partitioned' else "
     "mpi.ranks) / max(deck.resolved.contact.steps, 1) / time_s.mean gives 4.625512e+09"),
    (LARGE, 5, ("fom.value",), "kernels[5] (dynamic-ragged.stats): fom.value 8009.267, but "
     "bytes / time_s.mean gives 4004.633"),
    (LARGE, 5, ("rows_per_s",), "kernels[5] (dynamic-ragged.stats): rows_per_s"),
    (STREAM, 0, ("bandwidth_GBps.worst",), "kernels[0] (copy): bandwidth_GBps.worst"),
])
def test_a_forged_figure_is_refused(tmp_path, packed, path, kernel, fields, why):
    r = forge(packed, path, lambda doc: double(doc["kernels"][kernel], *fields))
    refused(r, f"{path}: {why}")
    assert "sha256 differs" not in r.stderr


@pytest.mark.parametrize("fields, why", [
    (("energy.fom_per_watt.value",), "energy.fom_per_watt.value 14.32559, but fom.value / "
     "energy.average_power_W gives 7.162797"),
    (("energy.joules_per_execution",), "energy.joules_per_execution"),
    (("efficiency.peak_bandwidth_GBps",),
     "efficiency.peak_bandwidth_GBps 6704.64, but the ranks' devices' peak_memory_bandwidth_GBps "
     "gives 3352.32"),
])
def test_a_forged_energy_or_efficiency_is_refused(tmp_path, fields, why):
    """The committed H100 bundle's results measure energy and know the peaks."""
    path = "results/stream-large.n1x1.precisiondouble.r1/karma-stream.json"
    shutil.copy(H100, tmp_path / "h100.tar.xz")
    r = forge(tmp_path / "h100.tar.xz", path, lambda doc: double(doc["kernels"][0], *fields))
    refused(r, f"{path}: kernels[0] (copy): {why}")


def test_a_figure_beyond_the_peak_is_refused(tmp_path):
    """A fraction of the peak doubled past 1 is no measurement, whatever
    the figures beside it say (validate.physics_problems)."""
    path = "results/stream-large.n1x1.precisiondouble.r1/karma-stream.json"
    shutil.copy(H100, tmp_path / "h100.tar.xz")
    r = forge(tmp_path / "h100.tar.xz", path,
              lambda doc: double(doc["kernels"][0], "efficiency.fraction_of_peak_bandwidth"))
    refused(r, f"{path}: kernels[0].efficiency.fraction_of_peak_bandwidth: 1.79 times the "
            "device's peak (more than 1): not physical")


def test_a_zero_peak_is_refused_not_a_crash(tmp_path):
    """Devices whose peaks are forged to 0: the efficiency's peak disagrees with them, and
    the fraction is not divided by zero."""
    path = "results/stream-large.n1x1.precisiondouble.r1/karma-stream.json"
    shutil.copy(H100, tmp_path / "h100.tar.xz")

    def zero(doc):
        for rank in doc["ranks"]:
            rank["device"]["peak_memory_bandwidth_GBps"] = 0

    r = forge(tmp_path / "h100.tar.xz", path, zero)
    refused(r, f"{path}: kernels[0] (copy): efficiency.peak_bandwidth_GBps 3352.32, but the "
            "ranks' devices' peak_memory_bandwidth_GBps gives 0")


def test_a_figure_past_a_float_is_refused_not_a_crash(tmp_path):
    """A FOM of 10^400 (JSON's integers have no bound): named, not an OverflowError."""
    path = "results/stream-large.n1x1.precisiondouble.r1/karma-stream.json"
    shutil.copy(H100, tmp_path / "h100.tar.xz")
    r = forge(tmp_path / "h100.tar.xz", path,
              lambda doc: doc["kernels"][0]["fom"].update(value=10 ** 400))
    refused(r, f"{path}: kernels[0] (copy): a figure past a float's range")


def test_a_reference_programs_figures_are_derived_again():
    """A reference result's rates: BabelStream's bytes over its minimum,
    mean and maximum times."""
    with tarfile.open(BABELSTREAM, "r:xz") as tar:
        doc = json.load(tar.extractfile(
            "results/babelstream-double-2p25.n1x1.r1/karma-stream.json"))
    assert derived.problems(doc) == []
    double(doc["kernels"][3], "fom.value", "bandwidth_GBps.median")
    assert derived.problems(doc) == [
        "kernels[3] (triad): fom.value 8431.38, but bytes / time_s.min gives 4215.69",
        "kernels[3] (triad): bandwidth_GBps.median 8257.054, but bytes / time_s.mean gives "
        "4128.527"]


@pytest.mark.parametrize("path, field, value, why", [
    (STREAM, "count", 49, "kernels[0] (copy): time_s.count 49, but the run timed 50 "
     "repetition(s)"),
    (LARGE, "count", 600, "kernels[0] (linked-list.build): time_s.count 600, but the run timed "
     "30 repetition(s)"),
    (STREAM, "mean", 1.0, "kernels[0] (copy): time_s.mean 1.0 not within min"),
    (STREAM, "stddev", -1e-6, "kernels[0] (copy): time_s.stddev -1e-06 < 0"),
    (STREAM, "stddev", 1.0, "kernels[0] (copy): time_s.stddev 1.0 cannot be of 50 times"),
    (STREAM, "stddev", 0.0, "kernels[0] (copy): time_s.stddev 0.0 cannot be of 50 times"),
])
def test_an_inconsistent_time_statistic_is_refused(tmp_path, packed, path, field, value, why):
    r = forge(packed, path, lambda doc: doc["kernels"][0]["time_s"].update({field: value}))
    refused(r, f"{path}: {why}")


def test_extra_and_missing_files_are_named(tmp_path, packed):
    files = members(packed)
    rewrite(packed, dict(files, **{"results/n126.n1x1/extra.txt": b"x"}))
    refused(check(packed), "results/n126.n1x1/extra.txt: in the bundle but not in MANIFEST")
    del files["build-logs/build.log"]
    rewrite(packed, files)
    refused(check(packed), "build-logs/build.log: in MANIFEST.sha256 but not in the bundle")
    del files[bundle.MANIFEST]
    rewrite(packed, files)
    refused(check(packed), "MANIFEST.sha256: missing")


def test_a_failed_or_unfinished_job_refuses_pack(tmp_path, campaign):
    (campaign / "results" / "n32-traced.n1x1" / "exit_code").write_text("1\n")
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and not out.exists() and r.stderr.count("\n") == 1, r.stderr
    assert "1 job(s) not ended or not passed: n32-traced.n1x1 (failed" in r.stderr
    os.unlink(campaign / "results" / "n32-traced.n1x1" / "exit_code")
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and not out.exists() and "n32-traced.n1x1 (lost" in r.stderr
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]  # no temporary left


def test_a_missing_build_log_refuses_pack(tmp_path, campaign):
    r, out = pack(tmp_path, campaign, DISCLOSURE, "--build-log", tmp_path / "nowhere.log")
    assert r.returncode == 2 and not out.exists() and r.stderr.count("\n") == 1
    assert "nowhere.log: build log not found" in r.stderr


@pytest.mark.parametrize("key, value, why", [
    ("node.gpu_model", "FILL IN", "node.gpu_model: empty"),
    ("tester.date", KeyError, "tester.date: missing"),
    ("deviations", KeyError, "deviations: missing"),
    ("system.nodes", "", "system.nodes: empty"),
    ("tier", "fastest", "tier: expected baseline or optimized"),
    ("tester.organization", "typo", "tester.organization: not a field"),
])
def test_an_incomplete_disclosure_is_refused(tmp_path, campaign, packed, key, value, why):
    r, out = pack(tmp_path, campaign, set_key(DISCLOSURE, key, value), name="x.tar.xz")
    assert r.returncode == 2 and not out.exists() and r.stderr.count("\n") == 1, r.stderr
    assert f"disclosure.yaml: {why}" in r.stderr
    files = members(packed)
    files["disclosure.yaml"] = (to_yaml(set_key(DISCLOSURE, key, value)) + "\n").encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    refused(check(packed), f"disclosure.yaml: {why}")


ENV = "results/n126.n1x1/environment/environment.json"
LIBRARY = "'Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023'"


@pytest.mark.parametrize("key, value, file, why", [
    ("node.gpu_model", "NVIDIA H100 80GB HBM3", LARGE,
     "ranks[].device.name 'NVIDIA H200', but the disclosure's node.gpu_model"),
    ("node.gpu_model", "NVIDIA H100 80GB HBM3", ENV, "gpu.products 'NVIDIA H200', but"),
    # Word for word: a part of the model names another GPU.
    ("node.gpu_model", "H200", LARGE,
     "ranks[].device.name 'NVIDIA H200', but the disclosure's node.gpu_model is 'H200'"),
    ("node.gpus_per_node", 4, ENV, "gpu.count 1, but the disclosure's node.gpus_per_node is 4"),
    ("node.gpus_per_node", 0, LARGE, "ranks[].device: 1 GPUs on one host, but the disclosure's "
     "node.gpus_per_node is 0"),
    ("node.cpu_model", "AMD EPYC 9654", ENV, "cpu.Model name 'Intel(R) Xeon(R) Processor' "
     "(lscpu), but the disclosure's node.cpu_model is 'AMD EPYC 9654'"),
    # Truncated: lscpu says more.
    ("node.cpu_model", "Intel(R) Xeon(R)", ENV, "cpu.Model name 'Intel(R) Xeon(R) Processor' "
     "(lscpu), but the disclosure's node.cpu_model is 'Intel(R) Xeon(R)'"),
    ("software.kokkos", "4.5.1", LARGE, "kokkos.version '4.6.1', but"),
    ("software.compiler", "GCC 12.2.0", LARGE, "build.compiler 'GNU 13.3.0 with NVIDIA"),
    # Every compiler the build names, each version exactly.
    ("software.compiler", "GCC 13.3.0", LARGE, "build.compiler 'GNU 13.3.0 with NVIDIA 13.0.88 "
     "(CUDA)', but the disclosure's software.compiler is 'GCC 13.3.0' (it lacks 13.0.88)"),
    ("software.compiler", "GCC 13.3, nvcc 13.0", LARGE, "build.compiler 'GNU 13.3.0 with NVIDIA "
     "13.0.88 (CUDA)', but the disclosure's software.compiler is 'GCC 13.3, nvcc 13.0' (it "
     "lacks 13.0.88, 13.3.0)"),
    ("software.compiler", "GCC 13.3.0 + nvcc 13.0.88 + clang 17.0.1", "disclosure.yaml",
     "software.compiler: 17.0.1 is no version any result's build.compiler gives"),
    ("software.mpi", "Open MPI 4.1.5", LARGE, f"mpi.library_version {LIBRARY}, but the "
     "disclosure's software.mpi is 'Open MPI 4.1.5' (it lacks 4.1.6)"),
    ("software.mpi", "MPICH 4.1.6", LARGE, f"mpi.library_version {LIBRARY}, but the "
     "disclosure's software.mpi is 'MPICH 4.1.6'"),
    ("software.gpu_toolkit", "none", "disclosure.yaml",
     "software.gpu_toolkit: none, but the set has GPUs"),
    ("tier", "optimized", "disclosure.yaml",
     "tier: optimized, but the highest tier among the results is baseline"),
    ("node.gpu_units", ["GPU-0: board 1, VBIOS 2"], "disclosure.yaml",
     "node.gpu_units: the results ran on GPU-"),
])
def test_a_disclosure_the_results_contradict_is_refused(tmp_path, campaign, key, value, file,
                                                        why):
    r, out = pack(tmp_path, campaign, set_key(DISCLOSURE, key, value))
    assert r.returncode == 2 and not out.exists(), r.stderr
    assert f"karma-bundle: error: {file}: {why}" in r.stderr
    assert "more problem" not in r.stderr
    r, out = pack(tmp_path, campaign, DISCLOSURE)
    assert r.returncode == 0, r.stderr
    files = members(out)
    files["disclosure.yaml"] = (to_yaml(set_key(DISCLOSURE, key, value)) + "\n").encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(out, files)
    refused(check(out), f"{file}: {why}")


def test_every_disclosure_problem_is_listed_at_once(tmp_path, campaign, packed):
    """The template as it ships: every field but the deviations empty, a
    line each; then three contradictions, each on its lines."""
    template = open(TEMPLATE, "rb").read()
    out = tmp_path / "x.tar.xz"
    lines = [f"karma-bundle: error: disclosure.yaml: {key}: empty (fill it in)"
             for key, _, _ in bundle.FIELDS if key != "deviations"]
    d = write(str(tmp_path / "template.yaml"), template.decode())
    r = tool("karma-bundle", "pack", campaign, "-o", out, "--disclosure", d, "--build-log", d)
    assert r.returncode == 2 and not out.exists() and r.stderr.splitlines() == lines, r.stderr
    files = members(packed)
    files["disclosure.yaml"] = template
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    r = check(packed)
    refused(r)
    assert r.stderr.splitlines() == [line.split(": error: ")[1] for line in lines]
    wrong = set_key(set_key(set_key(DISCLOSURE, "node.gpu_model", "H200"), "node.cpu_model",
                            "Intel(R) Xeon(R)"), "software.kokkos", "4.6")
    r, out = pack(tmp_path, campaign, wrong, name="y.tar.xz")
    assert r.returncode == 2 and not out.exists()
    # Each of the 4 results and its capture says so: 4 x (GPU, capture's
    # GPU, CPU, Kokkos) lines and the unused version 4.6.
    assert len(r.stderr.splitlines()) == 17, r.stderr
    for why in ("node.gpu_model is 'H200'", "node.cpu_model is 'Intel(R) Xeon(R)'",
                "software.kokkos is '4.6'", "software.kokkos: 4.6 is no version"):
        assert why in r.stderr


def test_a_cpu_only_set_discloses_no_gpu(tmp_path, cpu_campaign):
    r, out = pack(tmp_path, cpu_campaign, CPU_DISCLOSURE)
    assert r.returncode == 0, r.stderr
    assert "16 job(s), 16 result(s) (0 reference)" in r.stdout
    r = check(out)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert f"karma-bundle: {out}: valid, not reportable: {NO_RELEASE}; no result is " \
        "reportable" in r.stdout
    gpu = set_key(set_key(set_key(CPU_DISCLOSURE, "node.gpu_model", "NVIDIA H100 80GB HBM3"),
                          "node.gpus_per_node", 4), "software.gpu_toolkit", "CUDA 13.0")
    nothing = "but no result ran on a GPU and no environment capture saw one"
    lines = [f"disclosure.yaml: node.gpu_model: 'NVIDIA H100 80GB HBM3', {nothing} "
             "(node.gpu_model is 'none' without GPUs)",
             f"disclosure.yaml: node.gpus_per_node: 4, {nothing} (node.gpus_per_node is 0 "
             "without GPUs)",
             f"disclosure.yaml: software.gpu_toolkit: 'CUDA 13.0', {nothing} "
             "(software.gpu_toolkit is 'none' without GPUs)"]
    r, bad = pack(tmp_path, cpu_campaign, gpu, name="gpu.tar.xz")
    assert r.returncode == 2 and not bad.exists()
    assert r.stderr.splitlines() == ["karma-bundle: error: " + line for line in lines]
    files = members(out)
    files["disclosure.yaml"] = (to_yaml(gpu) + "\n").encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(out, files)
    r = check(out)
    refused(r)
    assert r.stderr.splitlines() == lines


def test_a_truncated_or_longer_cpu_model_is_refused(tmp_path, cpu_campaign):
    """lscpu on this VM says 'AMD EPYC': the full name of another EPYC is
    not it, and neither is a part of it."""
    for model in ("AMD EPYC 9654 96-Core Processor", "EPYC"):
        r, out = pack(tmp_path, cpu_campaign, set_key(CPU_DISCLOSURE, "node.cpu_model", model))
        assert r.returncode == 2 and not out.exists()
        lines = r.stderr.splitlines()
        assert len(lines) == 16 and all(
            line.startswith("karma-bundle: error: results/") and line.endswith(
                f"/environment/environment.json: cpu.Model name 'AMD EPYC' (lscpu), but the "
                f"disclosure's node.cpu_model is {model!r}") for line in lines), r.stderr


def scored_rows():
    """The rows the procurement score weighs: the shipped reference's of a
    scored class (the score-weights give every app a weight)."""
    with open(os.path.join(ROOT, "campaigns", "procurement", "reference.json")) as f:
        rows = json.load(f)["rows"]
    return [f"{r['app']}/{r['class']}/{r['case']}/{r['work']}" for r in rows
            if r["class"] in ("medium", "large", "weak")]


def missing_rows(path):
    """The rows the figure weighs that a bundle lacks, from the one pipeline."""
    return figure.score([("b", path)])["sets"][0]["record"]["missing"]


def test_an_incomplete_campaign_is_not_reportable(packed):
    """contact-gpu holds one reportable result, contact's large run, from before contact
    timed a step as one (its build and stats rows): the score's other rows have no figure."""
    r = check(packed)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    given = ("contact/large/-/build", "contact/large/-/stats")
    missing = [row for row in scored_rows() if row not in given]
    assert len(missing) == 31 and len(scored_rows()) == 33
    assert r.stdout.endswith(
        f"karma-bundle: {packed}: valid, not reportable: {NO_RELEASE}; 31 row(s) the "
        f"procurement score weighs have no reportable figure: {', '.join(missing)}\n"), r.stdout
    assert missing_rows(str(packed)) == missing


def test_a_bundle_without_a_reportable_result_is_not_reportable(tmp_path, cpu_campaign):
    """The CPU-only set: valid, and all its results are not reportable (no
    class deck), nor of the reference's device kind."""
    r, out = pack(tmp_path, cpu_campaign, CPU_DISCLOSURE)
    assert r.returncode == 0, r.stderr
    r = check(out)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert r.stdout.splitlines()[-1] == (
        f"karma-bundle: {out}: valid, not reportable: {NO_RELEASE}; no result is reportable; "
        "33 row(s) the "
        f"procurement score weighs have no reportable figure: {', '.join(scored_rows())}")


def needs_history(rev):
    """Skip where git cannot show `rev` (a shallow clone): an earlier release's files."""
    if subprocess.run(["git", "-C", ROOT, "cat-file", "-e", rev]).returncode != 0:
        pytest.skip(f"not a whole git checkout: {rev} cannot be read")


PROCUREMENT = os.path.join(ROOT, "results", "procurement")
BUNDLES = sorted(f for f in os.listdir(PROCUREMENT) if f.endswith(".tar.xz"))


def test_a_bundle_is_complete_by_its_own_release_s_reference(monkeypatch):
    """The rows a bundle must have are those its release's reference weighs (from git for an
    earlier release), not the shipped reference's: 1.0.0's bundles lack 1.1's contact rows."""
    real = facts.release_reasons

    def with_a_row_more(karma, campaign_file):
        reasons, notes, reference = real(karma, campaign_file)
        row = next(r for r in reference["rows"] if r["class"] == "large")
        reference = dict(reference, rows=reference["rows"] + [dict(row, work="not-measured")])
        return reasons, notes, reference

    path = os.path.join(PROCUREMENT, "h200-1.0.0.tar.xz")
    assert bundle.examine(path)[2] == []
    monkeypatch.setattr(facts, "release_reasons", with_a_row_more)
    reasons = bundle.examine(path)[2]
    assert len(reasons) == 1 and "1 row(s) the procurement score weighs have no reportable " \
        "figure: " in reasons[0] and reasons[0].endswith("/not-measured"), reasons


@pytest.mark.parametrize("name", BUNDLES)
def test_the_committed_bundles_are_valid_and_reportable(name):
    """Every bundle under results/procurement, each unit's as committed: one
    added there is checked without being named here."""
    if name in ("h100.tar.xz", "h200.tar.xz"):
        needs_history("111ea86a")  # karma 0.2.0's commit: its campaign
    path = os.path.join(PROCUREMENT, name)
    r = check(path)
    # A node of two: its node classes too; one GPU at 1.1.0: its strong decks on one rank.
    jobs = 93 if name.startswith("h200x2-") else 72 if "-1.1.0-" in name and \
        "-dev-" not in name else 66
    assert f"{jobs} job(s), {jobs} result(s) (0 reference)" in r.stdout
    # A development version's, as HEAD makes them, or the release's being made (its version
    # raised, its release file not yet written: docs/run-rules.md#releases): no release.
    making = release.released(ROOT)["version"] != __version__
    if "-dev-" in name or making and f"-{__version__}-" in name:
        assert r.returncode == 1 and "valid, not reportable" in r.stdout, r.stdout
        assert re.search(r"suite\.version \S+: no release", r.stdout), r.stdout
        return
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.endswith(f"karma-bundle: {path}: valid and reportable\n")
    # The shipped reference's rows: the release's bundles have them all; an earlier
    # release's, those of its own reference.
    if release.released(ROOT)["version"] in name:
        assert missing_rows(path) == []


def test_the_tier_is_the_highest_among_the_results(tmp_path, campaign):
    add_record(campaign / LARGE, "large", "optimized", [])
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and "tier: baseline, but the highest tier among the results is " \
        "optimized" in r.stderr, r.stderr
    r, out = pack(tmp_path, campaign, set_key(DISCLOSURE, "tier", "optimized"))
    assert r.returncode == 0, r.stderr
    assert "large/optimized 1" in check(out).stdout


def test_a_class_the_deck_does_not_have_is_refused(tmp_path, campaign):
    add_record(campaign / STREAM, "small", "baseline", [])
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and not out.exists()
    assert f"{STREAM}: reportable.class: small, but deck.sha256 3c895b23d272..." in r.stderr
    assert "(it is no class deck of this suite)" in r.stderr
    add_record(campaign / STREAM, None, "baseline", ["the deck is not a class deck"])
    add_record(campaign / LARGE, "weak", "baseline", [])
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and "weak on 1 rank(s)" in r.stderr, r.stderr
    add_record(campaign / LARGE, "medium", "baseline", [])
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and "(it is inputs/contact/large.yaml)" in r.stderr, r.stderr
    doc = json.loads((campaign / LARGE).read_text())
    del doc["reportable"]
    (campaign / LARGE).write_text(json.dumps(doc))
    r, out = pack(tmp_path, campaign)
    assert r.returncode == 2 and f"{LARGE}: reportable: missing" in r.stderr, r.stderr


def test_a_result_off_the_schema_is_refused(tmp_path, packed):
    files = members(packed)
    doc = json.loads(files[LARGE])
    del doc["kernels"][0]["time_s"]
    files[LARGE] = json.dumps(doc).encode()
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    refused(check(packed), f"{LARGE}: kernels[0].time_s: missing")


@pytest.mark.parametrize("edit, where", [
    (lambda doc: doc["deck"].update(sha256=["not", "a", "digest"]), "deck.sha256"),
    (lambda doc: doc.update(ranks=5), "ranks"),
    (lambda doc: doc.update(mpi="x"), "mpi"),
    (lambda doc: doc["ranks"][0]["device"].update(uuid=["GPU-1", "GPU-2"]), "ranks[0].device"),
    (lambda doc: doc["ranks"][0]["device"].update(state_at_start="on"), "ranks[0].device")],
    ids=["deck digest a list", "ranks a number", "mpi a string", "uuid a list", "state a string"])
def test_a_result_of_other_types_is_refused_not_a_crash(tmp_path, edit, where):
    """A result the schema refuses is named with its schema problems; the facts are held
    against the results it accepts only, so no field of another type crashes the check."""
    def change(files):
        doc = json.loads(files[HEX + "/karma-hexgrad.json"])
        edit(doc)
        files[HEX + "/karma-hexgrad.json"] = json.dumps(doc).encode()
    r = doctored(tmp_path, change)
    refused(r, f"{HEX}/karma-hexgrad.json: {where}")
    assert "Traceback" not in r.stderr, r.stderr


def test_a_failed_job_in_a_bundle_is_refused(tmp_path, packed):
    files = members(packed)
    files["results/n32-traced.n1x1/exit_code"] = b"1\n"
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    refused(check(packed), "results/n32-traced.n1x1/exit_code: job n32-traced.n1x1 did not "
            "pass (exit code 1)")
    del files["results/n32-traced.n1x1/exit_code"]
    files[bundle.MANIFEST] = manifest_for(files)
    rewrite(packed, files)
    refused(check(packed), "n32-traced.n1x1 did not pass (exit code missing)")


@pytest.mark.parametrize("args", [
    (), ("pack",), ("check",), ("frobnicate",), ("check", "a", "--check", "b"),
    ("pack", "dir", "-o", "b.tar.xz", "--disclosure", "d.yaml"),
])
def test_bad_arguments_are_one_line(tmp_path, args):
    r = tool("karma-bundle", *args, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == "", r.stderr
    assert r.stderr.startswith("karma-bundle: error: ")


def test_unreadable_bundles_and_refused_outputs(tmp_path, campaign):
    for path, data in (("junk.tar.xz", b"not xz"), ("empty.tar.xz", b"")):
        write(str(tmp_path / path), data.decode())
        r = check(tmp_path / path)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a readable" in r.stderr
    r = check(tmp_path / "absent.tar.xz")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r, out = pack(tmp_path, campaign, DISCLOSURE, name="b.zip")
    assert r.returncode == 2 and "ends in .tar.xz" in r.stderr and not out.exists()
    r, out = pack(tmp_path, tmp_path, DISCLOSURE)
    assert r.returncode == 2 and "campaign.json not found" in r.stderr and not out.exists()
    # A disclosure that is not YAML: one line, its line and column.
    d = write(str(tmp_path / "broken.yaml"), "system:\n  name: [vm\n")
    r = tool("karma-bundle", "pack", campaign, "-o", out, "--disclosure", d, "--build-log", d)
    assert r.returncode == 2 and not out.exists() and r.stderr == (
        "karma-bundle: error: disclosure.yaml: not YAML: disclosure.yaml:2:9: unclosed '['\n")


def test_the_template_has_exactly_the_fields():
    root = yamlread.load(TEMPLATE)
    assert sorted(yamlread.leaves(root)) == sorted(key for key, _, _ in bundle.FIELDS)
    values, problems = bundle.read_disclosure(open(TEMPLATE, "rb").read())
    # Unfilled, every field but the deviations is empty.
    assert problems == [f"{key}: empty (fill it in)" for key, _, _ in bundle.FIELDS
                        if key != "deviations"]
    assert values == {"deviations": []}


def test_help_and_version():
    r = tool("karma-bundle", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: karma-bundle")
    assert "exit status" in r.stdout
    for answer in ("valid and reportable", "valid, not reportable: REASONS"):
        assert answer in r.stdout
    assert tool("karma-bundle", "--version").stdout.startswith("karma-bundle ")


ASKED = ("--system-name", "Kestrel", "--system-vendor", "Example Computing",
         "--interconnect", "none", "--tester", "A. Tester", "--organisation", "Example Lab")


@pytest.mark.parametrize("which", ["campaign", "cpu_campaign"])
def test_disclose_fills_in_what_the_captures_say(tmp_path, request, which):
    """karma-bundle disclose: every field from the results and captures,
    the asked ones from flags, and the bundle packed with it checks valid;
    on the CPU-only set it discloses no GPU and lscpu's model word for word."""
    out = request.getfixturevalue(which)
    d = tmp_path / "d.yaml"
    r = tool("karma-bundle", "disclose", out, "-o", d, *ASKED, "--no-input")
    assert r.returncode == 0, r.stderr
    values, problems = bundle.read_disclosure(d.read_bytes())
    assert problems == []
    if which == "campaign":
        assert (values["node.gpu_model"], values["node.gpus_per_node"]) == ("NVIDIA H200", 1)
        assert values["software.gpu_toolkit"] == "CUDA 13.0"
        assert values["software.mpi"] == "Open MPI 4.1.6"
        [unit] = values["node.gpu_units"]  # 'UUID: board ?, VBIOS ?' before 1.1 said them
        assert unit.startswith("GPU-") and unit.endswith(": board ?, VBIOS ?"), unit
    else:
        assert values["node.gpu_units"] == []
        assert (values["node.gpu_model"], values["node.gpus_per_node"]) == ("none", 0)
        assert values["node.cpu_model"] == "AMD EPYC" and values["node.cores"] == 2
    assert values["system.name"] == "Kestrel" and values["tester.organisation"] == "Example Lab"
    log = write(str(tmp_path / "build.log"), "cmake --build: ok\n")
    r = tool("karma-bundle", "pack", out, "-o", tmp_path / "b.tar.xz", "--disclosure", d,
             "--build-log", log)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_disclosure_s_text_reads_back_as_written():
    """disclose writes what read_disclosure reads back, quotes and backslashes in a list's
    items as in a single value."""
    values, why = bundle.read_disclosure(members(AGAIN)[bundle.DISCLOSURE])
    assert why == []
    values.update({"deviations": ['OMP_PROC_BIND="close"', "C:\\karma"],
                   "system.name": 'the "Kestrel" node', "node.gpu_units": ["GPU-1: board ?"]})
    assert bundle.read_disclosure(yaml_text(values).encode()) == (values, [])


def test_disclose_takes_answers_and_names_what_is_missing(tmp_path, campaign):
    answers = write(str(tmp_path / "a.yaml"), "system:\n  name: Kestrel\ninterconnect: none\n")
    d = tmp_path / "d.yaml"
    r = tool("karma-bundle", "disclose", campaign, "-o", d, "--answers", answers, "--no-input")
    assert r.returncode == 2 and not d.exists()
    assert "system.vendor (--system-vendor or --answers FILE)" in r.stderr
    assert "tester.name (--tester" in r.stderr and "system.name" not in r.stderr
    bad = write(str(tmp_path / "bad.yaml"), "system:\n  nam: Kestrel\n")
    r = tool("karma-bundle", "disclose", campaign, "-o", d, "--answers", bad, "--no-input")
    assert r.returncode == 2 and f"{bad}:2:3: system.nam: not one of" in r.stderr
    r = tool("karma-bundle", "disclose", campaign, "-o", d, "--answers", answers,
             "--system-vendor", "V", "--tester", "T", "--organisation", "O", "--no-input")
    assert r.returncode == 0, r.stderr
    assert bundle.read_disclosure(d.read_bytes())[0]["system.name"] == "Kestrel"


# --- The facts held together (issue 93): each attack an edit of a committed bundle, its
# MANIFEST.sha256 made again, as a bidder who knows the format would hand it in.
AGAIN = os.path.join(ROOT, "results", "procurement", "h200-1.0.0-again.tar.xz")
FIRST = os.path.join(ROOT, "results", "procurement", "h200-1.0.0.tar.xz")
HEX = "results/hexgrad-large.n1x1.layoutleft.r2"


def doctored(tmp_path, change, source=AGAIN):
    """check's answer on the committed bundle edited by change(files) ({path: bytes})."""
    files = members(source)
    change(files)
    files[bundle.MANIFEST] = manifest_for(files)
    out = tmp_path / "doctored.tar.xz"
    rewrite(out, files)
    return check(out)


def each_result(files, change, where="results/"):
    """change(doc) of every result under `where`."""
    for path in [p for p in files if p.startswith(where) and "/karma-" in p]:
        doc = json.loads(files[path])
        change(doc)
        files[path] = json.dumps(doc).encode()


def faster(doc, by=1.1):
    """Every time of the result divided by `by`, every figure from them scaled with it."""
    for k in doc["kernels"]:
        for name, part in list(k.items()):
            scale = 1 / by if name in ("time_s", "time_per_launch_us") else by
            if name in ("time_s", "time_per_launch_us", "bandwidth_GBps", "GFLOPs",
                        "elements_per_second"):
                k[name] = {s: v if s == "count" else v * scale for s, v in part.items()}
        k["fom"]["value"] *= by
        for s in ("fraction_of_peak_bandwidth", "fraction_of_peak_flops"):
            k["efficiency"][s] *= by
        k["energy"]["fom_per_watt"]["value"] *= by
        k["energy"]["joules_per_execution"] /= by


def test_a_faster_result_than_its_job_printed_is_refused(tmp_path):
    """hexgrad 10% faster, every figure scaled with its times: the figures hold together,
    but job.out prints the true FOM."""
    r = doctored(tmp_path, lambda files: each_result(files, faster, "results/hexgrad-"))
    refused(r, f"{HEX}/job.out: prints 'FOM: app=hexgrad kernel=gradients value=10571.6 "
            "units=Melements/s higher_is_better=1 ranks=1' where its result gives 'FOM: "
            "app=hexgrad kernel=gradients value=11628.8 units=Melements/s higher_is_better=1 "
            "ranks=1'")
    assert "but bytes" not in r.stderr and "NOT VALID (15 problem(s))" in r.stdout, r.stderr


def test_jobs_from_other_units_are_refused(tmp_path):
    """hexgrad's 15 jobs taken from the other H200's bundle, folders whole: two GPUs on a
    node of one."""
    def mix(files):
        other = members(FIRST)
        for path in [p for p in files if p.startswith("results/hexgrad-")]:
            files[path] = other[path]

    r = doctored(tmp_path, mix)
    refused(r, "disclosure.yaml: node.gpus_per_node: the jobs' nvidia-smi captures list 2 GPUs "
            "(GPU-641f4934-4178-644f-55cf-855154c93b92: 51 job(s), "
            "GPU-4273fee1-9d5c-2c22-893b-6b4ec3a3cc6a: 15 job(s)), more than the disclosure's "
            "1 node(s) of 1: the jobs ran on other units")


def test_a_quiet_runs_log_holds_its_figures(tmp_path):
    """--quiet prints no build and ranks lines: the FOM and RESULT lines are held."""
    def quiet(files):
        for path in [p for p in files if p.endswith("/job.out")]:
            files[path] = b"".join(ln for ln in files[path].splitlines(True)
                                   if not ln.startswith((b"karma-contact 1", b"karma-hexgrad 1",
                                                         b"karma-matvec 1", b"karma-mgs 1",
                                                         b"karma-stream 1", b"  rank ")))

    r = doctored(tmp_path, quiet)
    assert r.returncode == 0 and r.stdout.endswith("valid and reportable\n"), r.stderr


def drop_rounds(files, keep="r1"):
    manifest = json.loads(files["campaign/campaign.json"])
    gone = {j["name"] for j in manifest["jobs"] if not j["name"].endswith(keep)}
    manifest["jobs"] = [j for j in manifest["jobs"] if j["name"] not in gone]
    files["campaign/campaign.json"] = json.dumps(manifest).encode()
    for path in [p for p in files if p.split("/")[1:2] in ([g] for g in gone) or
                 p.split("/")[-1][:-3] in gone]:
        del files[path]


def copy_round(files, job="hexgrad-large.n1x1.layoutleft"):
    for path in [p for p in files if p.startswith(f"results/{job}.r1/")]:
        for r in ("r2", "r3"):
            files[path.replace(".r1/", f".{r}/")] = files[path]


@pytest.mark.parametrize("change, why", [
    # Only the first round: 22 of 66 jobs.
    (drop_rounds, "campaign/campaign.json: 44 job(s) of campaign/reportable.yaml missing: "
     "contact-large.n1x1.r2, contact-large.n1x1.r3,"),
    # The best round copied into the other two.
    (copy_round, f"{HEX}/karma-hexgrad.json: kernels' time_s: "
     "results/hexgrad-large.n1x1.layoutleft.r1/karma-hexgrad.json's, number for number"),
    (copy_round, "round 1 started 2026-11-28T09:51:57Z, after results/hexgrad-large.n1x1."
     "layoutleft.r2/karma-hexgrad.json of round 2 (2026-11-28T09:50:24Z): the rounds did not run "
     "in the campaign's order"),
])
def test_a_campaign_short_of_rounds_or_copied_is_refused(tmp_path, change, why):
    refused(doctored(tmp_path, change), why)


def test_rounds_out_of_order_are_refused(tmp_path):
    """A first round's result dated after the second round began."""
    path = "results/stream-small.n1x1.r1/karma-stream.json"
    r = doctored(tmp_path, lambda files: each_result(
        files, lambda doc: doc.update(date="2026-11-28T23:00:00Z"), path))
    refused(r, f"{path}: round 1 started 2026-11-28T23:00:00Z, after results/")


def disclose(key, value):
    def change(files):
        values = yamlread.leaves(yamlread.parse(files["disclosure.yaml"].decode(), "d"))
        tree = {}
        for dotted, node in values.items():
            *parents, last = dotted.split(".")
            at = tree
            for p in parents:
                at = at.setdefault(p, {})
            at[last] = value if dotted == key else node.value if not isinstance(
                node.value, list) else []
        files["disclosure.yaml"] = (to_yaml(tree) + "\n").encode()
    return change


@pytest.mark.parametrize("key, value, why", [
    ("system.nodes", 4, "disclosure.yaml: system.nodes: 4, but the results ran on 1 node(s) at "
     "most (mpi.nodes)"),
    ("node.gpu_memory_GB", 282, "results/stream-small.n1x1.r1/environment/nvidia-smi.xml: FB "
     "Memory Usage Total 143771 MiB, but the disclosure's node.gpu_memory_GB is 282 (a size in "
     "GB lies between the capture's in GiB rounded down and in GB rounded up)"),
    ("node.memory_GB", 270, "/environment/environment.json: memory.MemTotal 135148564480 bytes "
     "(meminfo), but the disclosure's node.memory_GB is 270"),
    ("interconnect", "InfiniBand NDR", "disclosure.yaml: interconnect: 'InfiniBand NDR', but no "
     "capture lists a network adapter"),
    ("software.os", "RHEL 9.4", "/environment/environment.json: platform.os 'Ubuntu 24.04.3 "
     "LTS', but the disclosure's software.os is 'RHEL 9.4'"),
    ("software.gpu_toolkit", "CUDA 12.4", "disclosure.yaml: software.gpu_toolkit: 'CUDA 12.4', "
     "but the captures' CUDA (nvidia-smi, ranks[].device.runtime_version) is 13.0"),
    ("node.cores", 32, "/environment/environment.json: cpu: lscpu gives 16 for node.cores, the "
     "disclosure 32"),
])
def test_a_disclosure_its_captures_contradict_is_refused(tmp_path, key, value, why):
    refused(doctored(tmp_path, disclose(key, value)), why)


@pytest.mark.parametrize("gb", [141, 150])
def test_gpu_memory_as_the_vendor_or_the_device_gives_it(tmp_path, gb):
    """nvidia-smi's 143771 MiB: 141 GB as NVIDIA sells the H200, 150 as disclose writes the
    device's memory_bytes; both pass."""
    r = doctored(tmp_path, disclose("node.gpu_memory_GB", gb))
    assert r.returncode == 0 and r.stdout.endswith("valid and reportable\n"), r.stderr


def b200(files):
    """The GPU renamed in environment.json and the results (and the disclosure with them)."""
    for path in [p for p in files if p.endswith("/environment.json")]:
        files[path] = files[path].replace(b'"NVIDIA H200"', b'"NVIDIA B200"')
    each_result(files, lambda doc: doc["ranks"][0]["device"].update(name="NVIDIA B200"))
    files["disclosure.yaml"] = files["disclosure.yaml"].replace(b'"NVIDIA H200"',
                                                                b'"NVIDIA B200"')


def test_a_gpu_renamed_against_its_captures_is_refused(tmp_path):
    r = doctored(tmp_path, b200)
    job = "results/contact-large.n1x1.r1"
    refused(r, f"{job}/environment/environment.json: gpu.products: ['NVIDIA B200'], but "
            "nvidia-smi.txt gives ['NVIDIA H200']",
            f"{job}/karma-contact.json: ranks[0].device.name 'NVIDIA B200', but nvidia-smi "
            "gives 'NVIDIA H200'",
            f"{job}/job.out: prints '  rank 0 on vm: NVIDIA H200 (Cuda)' where its result gives "
            "'  rank 0 on vm: NVIDIA B200 (Cuda)'")


def test_a_unit_claimed_as_another_board_is_refused(tmp_path):
    """1.1's results name the board (from NVML); nvidia-smi's capture says which it is."""
    path = "results/mgs-small.n1x1.r1/karma-mgs.json"
    r = doctored(tmp_path, lambda files: each_result(files, lambda doc: doc["ranks"][0][
        "device"]["state_at_start"].update(board_part_number="692-2G520-0282-000"), path))
    refused(r, f"{path}: ranks[0].device.state_at_start.board_part_number '692-2G520-0282-000', "
            "but nvidia-smi gives '692-2G520-0282-001'")


def other_build(files, version=b"0.9.9", dirty=True, logs=False):
    each_result(files, lambda doc: doc["suite"].update(version=version.decode(),
                                                       git_dirty=dirty))
    for path in [p for p in files if p.endswith("/job.out")] if logs else []:
        files[path] = files[path].replace(b" 1.0.0 (e2cbe0bc)", b" %s (e2cbe0bc)" % version)


def test_another_build_is_refused_or_not_reportable(tmp_path):
    """suite.version 0.9.9 and git_dirty: job.out's first line says otherwise; with it
    edited too, valid but of no release and a modified tree: not reportable."""
    refused(doctored(tmp_path, other_build), "results/contact-large.n1x1.r1/job.out: prints "
            "'karma-contact 1.0.0 (e2cbe0bc), Kokkos 4.6.1, 1 rank(s) on 1 node(s)' where its "
            "result gives 'karma-contact 0.9.9 (e2cbe0bc), ")
    r = doctored(tmp_path, lambda files: other_build(files, logs=True))
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert "valid, not reportable: 66 result(s) made from a modified tree (suite.git_dirty); " \
        "suite.version 0.9.9: no release" in r.stdout


def test_kernel_code_other_than_the_releases_is_not_reportable(tmp_path):
    path = "results/stream-medium.n1x1.r2/karma-stream.json"
    r = doctored(tmp_path, lambda files: each_result(
        files, lambda doc: doc["kernels"][0].update(code_version="0123456789abcdef"), path))
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert r.stdout.endswith("valid, not reportable: 1 kernel result(s) ran code other than "
                             f"release 1.0.0's (code_version; {path}: copy 0123456789abcdef)\n"), \
        r.stdout


def test_a_campaign_other_than_the_releases_is_not_reportable(tmp_path):
    def edit(files):
        files["campaign/reportable.yaml"] += b"# one round is enough\n"
        manifest = json.loads(files["campaign/campaign.json"])
        manifest["campaign"]["sha256"] = hashlib.sha256(
            files["campaign/reportable.yaml"]).hexdigest()
        files["campaign/campaign.json"] = json.dumps(manifest).encode()

    r = doctored(tmp_path, edit)
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert "valid, not reportable: campaign/reportable.yaml: not release 1.0.0's campaign of " \
        "that name, byte for byte" in r.stdout


def test_an_earlier_release_is_read_from_git(monkeypatch):
    """Without the checkout's release file (as after the next release), 1.0.0's file and
    reference are read where git keeps them."""
    needs_history("b682d273")
    monkeypatch.setattr(facts, "_shipped", lambda rel: None)
    assert facts.release_of("1.0.0", "e2cbe0bc")[1].startswith("b682d273")
    problems, summary, reasons = bundle.examine(AGAIN)
    assert (problems, reasons) == ([], []) and summary[-1].startswith("made at e2cbe0bc, not ")


def test_results_off_the_release_commit_name_it():
    """h200-1.0.0-again ran karma 1.0.0's kernels at e2cbe0bc: accepted, the commit named
    (on the page too)."""
    note = "made at e2cbe0bc, not at release 1.0.0's commit or a commit its reference ran " \
        "(714c33ac, 1c4d884a): its kernels' code versions are the release's"
    assert note in check(AGAIN).stdout.splitlines()
    record = figure.score([("b", AGAIN)])["sets"][0]["record"]
    assert bundle.page_facts(AGAIN, record)[0] == (True, [note])
    needs_history("111ea86a")
    assert "release 0.2.0 has no release file: its campaigns as of the results' commit " \
        "111ea86a" in check(H100).stdout


def test_results_of_the_release_commit_name_none():
    """A fresh clone of the release's commit (Spack's: the last to write its release file)
    is the release: unit M ran 1.1.0 at c0b215ee, where no reference unit ran."""
    needs_history("714c33ac")
    assert [facts.release_commit(v)[:8] for v in ("1.0.0", "1.1.0")] == ["714c33ac", "c0b215ee"]
    path = os.path.join(PROCUREMENT, "h200-1.1.0-70cf3e9e.tar.xz")
    r = check(path)
    assert r.returncode == 0 and facts.MADE_AT not in r.stdout, r.stdout


@pytest.mark.parametrize("bid, uuid", [
    ("h200-1.1.0-dev-0ab1f3b8", "GPU-0ab1f3b8-029c-2230-0a0b-7cfb68ec3a02"),
    ("h200-1.1.0-70cf3e9e", "GPU-70cf3e9e-e4a2-9063-329d-8d16786cf4d1")])
def test_acceptance_passes_two_runs_of_one_unit(bid, uuid):
    """Issues 93 and 99: the reportable campaign and one more round of it, made on one H200 in
    one lease (unit G; M, 1.1.0's proof), are accepted app by app; both ran on that unit
    alone."""
    delivered = os.path.join(PROCUREMENT, "acceptance", f"{bid}-delivered.tar.xz")
    bid = os.path.join(PROCUREMENT, f"{bid}.tar.xz")
    units = [figure.unit_of(p, figure.load_runs(p)[0], "gpu")["ids"] for p in (bid, delivered)]
    assert units == [[uuid]] * 2
    r = tool("karma-score", "accept", bid, delivered)
    accepted = [line for line in r.stdout.splitlines() if line.endswith(": accepted")]
    assert r.returncode == 0 and len(accepted) == 5, r.stdout + r.stderr
    assert r.stdout.endswith(f"{delivered} against {bid}: ACCEPTED\n")


def test_acceptance_passes_a_unit_of_the_bid_s_model_and_catches_a_consistent_forgery(tmp_path):
    """karma-score accept: the third H200 (board -001) delivered for a bid of the second
    (-001) is accepted; a bid whose hexgrad was made 10% faster in every file, job.out
    included (karma-bundle check finds it valid), is not, naming hexgrad."""
    third = os.path.join(ROOT, "results", "procurement", "h200-1.0.0-third.tar.xz")
    r = tool("karma-score", "accept", AGAIN, third)
    assert r.returncode == 0 and r.stdout.endswith(f"{third} against {AGAIN}: ACCEPTED\n"), \
        r.stdout + r.stderr

    def forge(files):
        each_result(files, faster, "results/hexgrad-")
        for path in [p for p in files if p.startswith("results/hexgrad-") and "/karma-" in p]:
            kernels = {k["name"].encode(): k for k in json.loads(files[path])["kernels"]}
            out = os.path.join(os.path.dirname(path), "job.out")

            def printed(m):  # the line as the mini-app prints it, of the forged figure
                k = kernels[m[2]]
                value = k["fom"]["value"] if m[1] == b"FOM" else \
                    k["energy"]["fom_per_watt"]["value"]
                return m[1] + b": app=hexgrad kernel=" + m[2] + b" value=%.6g" % value

            files[out] = re.sub(rb"(FOM|FOM_PER_WATT): app=hexgrad kernel=(\S+) value=\S+",
                                printed, files[out])

    assert doctored(tmp_path, forge).returncode == 0  # the facts hold together
    r = tool("karma-score", "accept", tmp_path / "doctored.tar.xz", third)
    assert r.returncode == 1 and "hexgrad: 0.9" in r.stdout and "**NOT ACCEPTED** (hexgrad/" \
        in r.stdout and r.stdout.endswith("NOT ACCEPTED (hexgrad)\n"), r.stdout + r.stderr
