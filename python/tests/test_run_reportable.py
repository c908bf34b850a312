"""scripts/run-reportable.sh, the README's third command, on this machine's
build (its bin/, given as --bin-dir so that no set-up runs): a small
campaign end to end (run, disclosure, bundle, check, score, the verdict
page), resumed after an interruption without running finished jobs again,
and bad input refused at once with exit 2."""

import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, built, tool, write
from test_batch import FAKE_SBATCH, FAKE_SQUEUE

SCRIPT = os.path.join(ROOT, "scripts", "run-reportable.sh")
ANSWERS = ("--system-name", "Kestrel", "--system-vendor", "Example Computing",
           "--interconnect", "none", "--tester", "A. Tester", "--organisation", "Example Lab")


def run(*args, timeout=300, env=None):
    return subprocess.run(["bash", SCRIPT, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT,
                          env=dict(os.environ, **(env or {})))


@pytest.fixture
def bin_dir():
    return os.path.join(built("KARMA_BUILD_DIR", "the build folder"), "bin")


def gpu_build(bin_dir):
    """Whether the mini-apps of bin_dir run on a GPU (their --version names CUDA or HIP)."""
    version = subprocess.run([os.path.join(bin_dir, "karma-stream"), "--version"],
                             capture_output=True, text=True).stdout
    return re.search(r"\b(cuda|hip)\b", version, re.IGNORECASE) is not None


@pytest.fixture
def small(tmp_path):
    """Two small decks, two rounds each, one thread: seconds on a CPU."""
    return write(str(tmp_path / "small.yaml"), """\
name: small
scheduler: local
gpus_per_rank: 0
launcher: none
environment:
  variables: {OMP_NUM_THREADS: 1, OMP_PROC_BIND: "false"}
runs:
  - {name: stream-small, app: stream, deck: "{inputs}/stream/small.yaml", repeat: 2,
     set: {run.energy: "on"}}
  - {name: hexgrad-small, app: hexgrad, deck: "{inputs}/hexgrad/small.yaml", repeat: 2}
""")


def test_a_campaign_end_to_end_and_resumed(tmp_path, bin_dir, small):
    out = tmp_path / "node"
    r = run("-o", out, "--campaign", small, "--bin-dir", bin_dir, *ANSWERS)
    # A CPU build on Debian's Kokkos against the shipped GPU reference: the
    # bundle is valid but not reportable and the score INCOMPLETE: exit 1.
    assert r.returncode == 1, r.stdout + r.stderr
    # Said before the jobs ran, on a CPU build only (run-reportable.sh's test).
    assert ("the shipped reference is a GPU node's" in r.stderr) != gpu_build(bin_dir), r.stderr
    assert re.search(r"\[4/4\] \S+: passed; 4 of 4 jobs done, \d:\d\d:\d\d elapsed", r.stdout)
    assert f"bundle: {out}/bundle.tar.xz" in r.stdout
    assert f"verdict: {out}/verdict.md" in r.stdout
    assert "valid, not reportable: " in r.stdout
    assert r.stdout.count("**Verdict.** Complete: **no**") == 1
    page = (out / "verdict.md").read_text()
    assert page.startswith("# karma: node against ") and "- **System:** Kestrel by " \
        "Example Computing, 1 node(s); interconnect none." in page
    assert (out / "verdict.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((out / "score.json").read_text())["sets"][0]["record"]["complete"] is False
    # The small class weighs nothing: acceptance of this bid would be said of no row.
    one = write(str(tmp_path / "one.txt"), "stream 1\n")
    r = tool("karma-score", "accept", out / "bundle.tar.xz", out / "campaign", "--weights", one)
    assert r.returncode == 2 and r.stderr.endswith("no row the weights give weight to: "
                                                   "nothing to accept\n"), r.stdout + r.stderr
    # An interrupted job (no exit code: lost) runs again; the passed ones do not.
    manifest = json.loads((out / "campaign" / "campaign.json").read_text())
    victim = manifest["jobs"][1]
    os.unlink(out / "campaign" / victim["results_dir"] / "exit_code")  # relative to it
    r = run("-o", out, "--campaign", small, "--bin-dir", bin_dir)
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.findall(r"\] running (\S+)", r.stdout) == [victim["name"]]
    assert "resuming" in r.stderr and f"bundle: {out}/bundle.tar.xz" in r.stdout


def test_on_a_cluster_submit_then_collect(tmp_path, bin_dir, small):
    """--scheduler slurm generates and submits (a stand-in sbatch runs each
    job at once), then stops; --collect waits for the jobs and finishes."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    for name, text in (("sbatch", FAKE_SBATCH), ("squeue", FAKE_SQUEUE)):
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    env = {"PATH": f"{fake}:{os.environ['PATH']}", "FAKE_DIR": str(tmp_path)}
    out = tmp_path / "cluster"
    r = run("-o", out, "--campaign", small, "--bin-dir", bin_dir, "--scheduler", "slurm",
            *ANSWERS, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[4/4] submitted " in r.stdout and "--scheduler slurm --collect" in r.stderr
    assert not (out / "bundle.tar.xz").exists()
    manifest = json.loads((out / "campaign" / "campaign.json").read_text())
    assert manifest["scheduler"] == "slurm"
    r = run("-o", out, "--scheduler", "slurm", "--collect", env=env)
    assert r.returncode == 1, r.stdout + r.stderr  # CPU results: not reportable
    assert f"bundle: {out}/bundle.tar.xz" in r.stdout and "4 job(s): 4 passed" in r.stdout


def test_bad_input_is_refused_at_once(tmp_path, bin_dir, small):
    for args, words in (
            (("--frobnicate",), "unknown argument '--frobnicate'"),
            (("-o", tmp_path / "a", "--output", tmp_path / "b"), "-o given twice"),
            (("--system-name", "a", "--system-name", "b"), "--system-name given twice"),
            (("--scheduler", "lsf"), "--scheduler lsf: slurm or pbs"),
            (("--campaign", tmp_path / "none.yaml"), "none.yaml: no such file"),
            (("--answers", tmp_path / "none.yaml"), "--answers"),
            (("-o", tmp_path / "fresh", "--collect"), "--collect finishes a campaign"),
            (("--gpus", "0"), "--gpus 0: a number of GPUs, 1 or more"),
            (("--gpus", "two"), "--gpus two: a number of GPUs"),
            (("-o", tmp_path / "x", "--campaign", small, "--bin-dir", bin_dir),
             "the disclosure needs what no capture knows")):
        r = run(*args, timeout=60)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_every_input_is_checked_before_anything_is_written(tmp_path, bin_dir, small):
    """A misspelt answer, an install that is not there, --collect with no
    campaign submitted, more GPUs than there are: exit 2 naming it, and no
    folder made (the default one is in the checkout)."""
    (tmp_path / "answers.yaml").write_text("vendr: Example\n")
    out = tmp_path / "node"
    # A GPU build is shown one GPU, so that the refusal is the same on every node.
    more_gpus = ("--gpus 2: this node shows 1 GPU(s)" if gpu_build(bin_dir)
                 else "--gpus 2: this is a CPU build")
    for args, words in (
            (("--answers", tmp_path / "answers.yaml", "--bin-dir", bin_dir),
             "answers.yaml:1:1: vendr: not one of"),
            (("--bin-dir", tmp_path / "none", *ANSWERS), "--bin-dir"),
            (("--scheduler", "slurm", "--collect", "--bin-dir", bin_dir, *ANSWERS),
             f"{out}/campaign has none"),
            (("--gpus", "2", "--bin-dir", bin_dir, *ANSWERS), more_gpus)):
        r = run("-o", out, "--campaign", small, *args, timeout=60,
                env={"CUDA_VISIBLE_DEVICES": "0"})
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
        assert not out.exists(), args


def test_an_interrupt_says_so_and_how_to_resume(tmp_path, bin_dir, small):
    import signal
    out = tmp_path / "node"
    p = subprocess.Popen(["bash", SCRIPT, "-o", str(out), "--campaign", small, "--bin-dir",
                          bin_dir, *ANSWERS], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, stdin=subprocess.DEVNULL, start_new_session=True)
    for line in p.stdout:
        if "] running " in line:
            break
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "interrupted" in err and "run the same command again to resume" in err, err
    assert "did not pass" not in err, err
    r = run("--help", timeout=60)
    assert r.returncode == 0 and "--scheduler S" in r.stdout and "--collect" in r.stdout
