"""karma-microbench under Google Benchmark: its flags keep Google Benchmark's
meaning beside the suite's contract (deck, results document, FOM and RESULT
lines, exit codes), and a bad flag is refused before anything runs."""

import json
import os
import subprocess

import pytest

from conftest import ROOT, miniapp

SMALL = os.path.join(ROOT, "inputs", "microbench", "small.yaml")


def run(*args, cwd=None):
    return subprocess.run([miniapp("microbench"), *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd, stdin=subprocess.DEVNULL)


def test_google_benchmarks_flags_choose_and_report_the_runs(tmp_path):
    out, gb = tmp_path / "r.json", tmp_path / "gb.json"
    r = run(SMALL, "--output", out, "--benchmark_filter=^Sum3D/serial/right",
            "--benchmark_repetitions=4", f"--benchmark_out={gb}", "--benchmark_format=json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RESULT: PASSED" in r.stdout
    doc = json.loads(out.read_text())
    names = [k["name"] for k in doc["kernels"]]
    assert names and all(n.startswith("Sum3D/serial/right/") for n in names), names
    assert all(k["time_s"]["count"] == 4 for k in doc["kernels"])
    g = doc["problem"]["google_benchmark"]
    assert g["repetitions"] == 4 and g["version"] and g["random_interleaving"] is True
    assert f"--benchmark_out={gb}" in g["flags"]
    # Google Benchmark's own report: every repetition of every arm, one document.
    report = json.loads(gb.read_text())
    runs = [b for b in report["benchmarks"] if b.get("run_type") == "iteration"]
    assert len(runs) == 4 * len(names)
    assert {b["run_name"] for b in runs} == {f"{n}/real_time" for n in names}
    # --benchmark_format=json: Google Benchmark's display on stdout.
    assert '"benchmarks": [' in r.stdout


def test_the_deck_gives_the_defaults(tmp_path):
    out = tmp_path / "r.json"
    r = run(SMALL, "--output", out, "--set", "microbench.benchmarks=[MatVec]",
            "--set", "run.repetitions=2", "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert all(k["time_s"]["count"] == 2 for k in doc["kernels"])
    assert doc["problem"]["google_benchmark"]["flags"] == []
    assert "Benchmark" not in r.stdout  # --quiet: no display


def test_version_names_google_benchmark():
    r = run("--version")
    assert r.returncode == 0 and "Google Benchmark 1." in r.stdout, r.stdout


@pytest.mark.parametrize("flags, message", [
    (["--benchmark_filtr=Sum3D"], "unknown Google Benchmark flag --benchmark_filtr"),
    (["--benchmark_repetitions=0"], "--benchmark_repetitions: '0' is not a whole number"),
    (["--benchmark_repetitions=99999999999"], "'99999999999' is not a whole number from 1"),
    (["--benchmark_min_time=fast"], "--benchmark_min_time: 'fast' is not a number of seconds"),
    (["--benchmark_format=xml"], "--benchmark_format: 'xml' is not one of its values"),
    (["--benchmark_filter"], "--benchmark_filter: needs a value"),
    (["--benchmark_filter=(["], "--benchmark_filter=([: not a regular expression"),
    (["--benchmark_filter=a", "--benchmark_filter=b"], "--benchmark_filter is given twice"),
    (["--benchmark_list_tests"], "--benchmark_list_tests: not for karma-microbench"),
    (["--benchmark_out=/proc/karma/gb.json"], "--benchmark_out=/proc/karma/gb.json: cannot be "
                                              "written"),
    (["--benchmark_filter=NoSuchBenchmark"], "--benchmark_filter=NoSuchBenchmark matches no arm"),
])
def test_a_bad_flag_is_one_line_and_exit_2(tmp_path, flags, message):
    out = tmp_path / "r.json"
    r = run(SMALL, "--output", out, *flags)
    assert r.returncode == 2, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], r.stderr
    assert not out.exists()
