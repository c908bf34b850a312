"""An error on one rank ends every rank, with that rank's message, in a few
seconds: MPMD launches give one rank other arguments (a deck missing on its
node, another --set), and KARMA_INJECT_FAILURE makes one rank fail where no
argument reaches (Kokkos start-up, the memory check, a timed kernel, the
results file). Each launch has a time limit: a hang fails the test."""

import os
import subprocess
import time

import pytest

from conftest import ROOT, built

SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")
# A hang fails; a clean end takes a few seconds on 2 cores, and up to 30 s on
# a GPU that the rest of the suite shares at the same time.
LIMIT_S = 120


def launch(mpiexec, groups, tmp_path, env=None):
    """mpiexec with one `-n N exe args` group per item of `groups`; returns
    (exit code, stdout + stderr, seconds). Every rank is told to write the
    same results file, which must not exist after a failure."""
    stream = built("KARMA_STREAM", "the karma-stream executable")
    output = str(tmp_path / "out.json")
    command = [mpiexec]
    for i, (ranks, args) in enumerate(groups):
        if i:
            command.append(":")
        command += ["-n", str(ranks), stream, *args, "--quiet", "--output", output]
    full_env = dict(os.environ, OMP_NUM_THREADS="1", **(env or {}))
    start = time.monotonic()
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT_S,
                             env=full_env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after {LIMIT_S} s: {' '.join(command)}\n{e.stdout}{e.stderr}")
    seconds = time.monotonic() - start
    assert not os.path.exists(output), "a failed run wrote its results file"
    assert not [f for f in os.listdir(tmp_path) if ".tmp." in f], "a temporary file was left"
    return run.returncode, run.stdout + run.stderr, seconds


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("case,bad_args,code,message", [
    ("deck missing", ["/nonexistent/deck.yaml"], 2,
     "error on rank {r} ({host}): cannot open deck '/nonexistent/deck.yaml'"),
    ("bad --set", [SMALL_DECK, "--set", "stream.precision=half"], 2,
     "error on rank {r} ({host}): --set stream.precision=half"),
    ("another valid deck", [SMALL_DECK, "--set", "run.repetitions=7"], 2,
     "the ranks did not read the same deck: rank {r} ({host}) has run.repetitions = 7 where "
     "rank 0 ({host}) has 5"),
    ("--help", ["--help"], 2, "rank {r} ({host}) was given --help and rank 0 ({host}) was not"),
])
def test_an_input_error_on_the_last_rank_ends_the_job(mpiexec, tmp_path, ranks, case, bad_args,
                                                      code, message):
    good = ranks - 1
    got, text, seconds = launch(mpiexec, [(good, [SMALL_DECK]), (1, bad_args)], tmp_path)
    assert got == code, text
    assert message.format(r=good, host=os.uname().nodename) in text, text
    assert "RESULT: FAILED reason=bad-input" in text
    assert seconds < LIMIT_S


def test_the_same_error_on_every_rank_is_reported_once(mpiexec, tmp_path):
    got, text, _ = launch(mpiexec, [(3, ["/nonexistent/deck.yaml"])], tmp_path)
    assert got == 2, text
    assert text.count("cannot open deck") == 1 and "error on rank" not in text, text


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("phase", ["start", "allocation", "kernel", "verification"])
def test_a_failure_on_one_rank_mid_run_ends_the_job(mpiexec, tmp_path, ranks, phase):
    failing = ranks - 1
    got, text, seconds = launch(mpiexec, [(ranks, [SMALL_DECK])], tmp_path,
                                env={"KARMA_INJECT_FAILURE": f"{failing}:{phase}"})
    assert got == 3, text
    assert (f"error on rank {failing} ({os.uname().nodename}): injected failure "
            f"(KARMA_INJECT_FAILURE={failing}:{phase}) in phase {phase}") in text, text
    assert "RESULT: FAILED reason=runtime-error" in text


def test_a_results_file_that_cannot_be_written_fails_the_job(mpiexec, tmp_path):
    got, text, _ = launch(mpiexec, [(2, [SMALL_DECK])], tmp_path,
                          env={"KARMA_INJECT_FAILURE": "0:output"})
    assert got == 3 and "injected failure" in text and "RESULT: FAILED reason=runtime-error" \
        in text, text


@pytest.mark.parametrize("value", ["x", "1:nowhere", "1:output", "7:kernel"])
def test_a_malformed_injection_is_bad_input(mpiexec, tmp_path, value):
    got, text, _ = launch(mpiexec, [(2, [SMALL_DECK])], tmp_path,
                          env={"KARMA_INJECT_FAILURE": value})
    assert got == 2 and f"KARMA_INJECT_FAILURE={value}" in text, text


@pytest.mark.parametrize("signal_number,name", [(2, "SIGINT"), (15, "SIGTERM")])
def test_an_interrupted_run_says_so_and_writes_nothing(tmp_path, stream_exe, signal_number, name):
    output = tmp_path / "out.json"
    # Copy alone keeps the values as they are, so a run this long stays valid.
    run = subprocess.Popen([stream_exe, SMALL_DECK, "--set", "stream.kernels=[copy]", "--set",
                            "run.repetitions=100000000", "--output", str(output)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           stdin=subprocess.DEVNULL,
                           env=dict(os.environ, OMP_NUM_THREADS="1"))
    lines = []
    for line in run.stdout:  # until the run has started
        lines.append(line)
        if "rank 0 on" in line:
            break
    run.send_signal(signal_number)
    rest, _ = run.communicate(timeout=LIMIT_S)
    text = "".join(lines) + rest
    assert run.returncode == 128 + signal_number, text
    assert "RESULT: FAILED reason=interrupted" in text and f"by {name}" in text, text
    assert not os.path.exists(output) and os.listdir(tmp_path) == []
