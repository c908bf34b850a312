"""Progress lines of a mini-app run (rank 0, stderr), forced on with
KARMA_PROGRESS=0,0 (from the first repetition, every repetition), and off
under --quiet and KARMA_PROGRESS=off. The timing policy itself is unit-tested
in common/tests/test_progress.cpp."""

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")


def run(exe, tmp_path, progress, *extra, ranks=1):
    env = dict(os.environ, KARMA_PROGRESS=progress)
    launcher = []
    if ranks > 1:
        mpiexec = shutil.which("mpiexec")
        if mpiexec is None:
            pytest.fail("mpiexec not found (Debian: openmpi-bin)")
        launcher = [mpiexec, "-n", str(ranks)]
    return subprocess.run(launcher + [exe, DECK, "--set", "run.repetitions=4", "--set",
                                      "run.warmup=1", "--output", str(tmp_path / "r.json"),
                                      *extra],
                          capture_output=True, text=True, env=env, timeout=120)


def progress_lines(text):
    return [line for line in text.splitlines() if line.startswith("progress: ")]


def test_every_repetition_when_forced(stream_exe, tmp_path):
    r = run(stream_exe, tmp_path, "0,0")
    assert r.returncode == 0, r.stderr
    lines = progress_lines(r.stderr)
    assert [line.split(",")[0] for line in lines] == [
        f"progress: repetition {k} of 5 ({100 * k // 5}%)" for k in range(1, 6)]
    assert progress_lines(r.stdout) == []  # stdout stays the table and FOM lines


def test_rank_zero_only(stream_exe, tmp_path):
    r = run(stream_exe, tmp_path, "0,0", ranks=2)
    assert r.returncode == 0, r.stderr
    assert len(progress_lines(r.stderr)) == 5


@pytest.mark.parametrize("setting, extra", [("0,0", ["--quiet"]), ("off", [])])
def test_silent(stream_exe, tmp_path, setting, extra):
    r = run(stream_exe, tmp_path, setting, *extra)
    assert r.returncode == 0, r.stderr
    assert progress_lines(r.stderr + r.stdout) == []


def test_malformed_setting_is_reported(stream_exe, tmp_path):
    r = run(stream_exe, tmp_path, "soon")
    assert r.returncode == 0
    assert "KARMA_PROGRESS='soon' is not 'off' or DELAY[,INTERVAL]" in r.stderr


def test_quiet_silences_kokkos_warnings(stream_exe, tmp_path):
    """--quiet is quiet: without OMP_PROC_BIND Kokkos warns at start-up in four
    lines (ctest sets it; a user often does not)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_PROC_BIND", "OMP_PLACES"))}
    r = subprocess.run([stream_exe, DECK, "--set", "run.repetitions=2", "--set", "run.energy=off",
                        "--output", str(tmp_path / "r.json"), "--quiet"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
