"""Each class of bad input of docs/running.md's exit-code table, against every
command it applies to: a missing file, a directory, an empty file or a device
where a file is read; an output whose folder is not there or cannot take a
file; an option given twice. Each is exit 2, one line on stderr, no traceback
and nothing written. Every mini-app is refused before its run, so each costs
a start-up."""

import os
import subprocess

import pytest

from conftest import ROOT, SAMPLES, miniapp, tool
from karma_tools.core import APPS

A = os.path.join(SAMPLES, "machine-a")
B = os.path.join(SAMPLES, "machine-b")
CAMPAIGN = os.path.join(ROOT, "python", "tests", "data", "campaigns", "example.yaml")


def deck(app):
    return os.path.join(ROOT, "inputs", app, "small.yaml")


# Where each command reads the file under test (@IN@) and writes (@OUT@).
READERS = {
    **{f"karma-{app}": ["@IN@", "--output", "@OUT@/r.json"] for app in APPS},
    "karma-batch": ["generate", "@IN@", "-o", "@OUT@/jobs"],
    "karma-score weights": ["karma-score", A, "--weights", "@IN@", "--json", "@OUT@/s.json"],
    "karma-score reference": ["karma-score", A, "--reference", "@IN@", "--json", "@OUT@/s.json"],
    "karma-compare weights": ["karma-compare", A, B, "--weights", "@IN@", "--json",
                              "@OUT@/c.json"],
    "karma-bundle answers": ["disclose", "--check-answers", "--answers", "@IN@"],
}
WRITERS = {
    **{f"karma-{app}": [deck(app), "--output", "@OUT@"] for app in APPS},
    "karma-compare": [A, B, "--json", "@OUT@"],
    "karma-report": [A, "--no-plots", "-o", "@OUT@"],
    "karma-score": [A, B, "--json", "@OUT@"],
    "karma-archive": ["write", A, "-o", "@OUT@"],
}
TWICE = {
    **{f"karma-{app}": [deck(app), "--output", "@OUT@/a.json", "--output", "@OUT@/b.json"]
       for app in APPS},
    **{f"karma-{app} --set": [deck(app), "--set", "run.repetitions=2", "--set",
                              "run.repetitions=3", "--output", "@OUT@/a.json"] for app in APPS},
    "karma-compare": [A, B, "--json", "@OUT@/a.json", "--json", "@OUT@/b.json"],
    "karma-report": [A, "-o", "@OUT@/a.md", "-o", "@OUT@/b.md"],
    "karma-score": [A, "--json", "@OUT@/a.json", "--json", "@OUT@/b.json"],
    "karma-batch": ["generate", CAMPAIGN, "-o", "@OUT@/a", "-o", "@OUT@/b"],
    "karma-archive": ["write", A, "-o", "@OUT@/a.tar.xz", "-o", "@OUT@/b.tar.xz"],
    "karma-validate-results": [A, "--app", "stream", "--app", "stream"],
}


def run(name, args, tmp_path):
    """The command `name` (its first word) with @OUT@ the empty folder it may
    write in; the result, after checking that nothing was written there."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    program = name.split()[0]
    if args and args[0].startswith("karma-"):
        program, args = args[0], args[1:]
    args = [a.replace("@OUT@", str(out)) for a in args]
    if program.removeprefix("karma-") in APPS:
        r = subprocess.run([miniapp(program.removeprefix("karma-")), *args], capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path,
                           env=dict(os.environ, OMP_PROC_BIND="false"))
    else:
        r = tool(program, *args, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{program}: " in lines[0], r.stderr
    assert not os.listdir(out), os.listdir(out)
    return lines[0]


def inputs(tmp_path):
    """Each class of unfit input file, with what its message says."""
    (tmp_path / "empty").write_text("")
    (tmp_path / "folder").mkdir()
    return [(str(tmp_path / "missing"), ""), (str(tmp_path / "folder"), "directory"),
            (str(tmp_path / "empty"), "empty"), ("/dev/null", ""), ("/dev/zero", "")]


@pytest.mark.parametrize("name", sorted(READERS))
def test_an_unfit_input_file_is_refused_before_anything_runs(tmp_path, name):
    for path, why in inputs(tmp_path):
        line = run(name, [a.replace("@IN@", path) for a in READERS[name]], tmp_path)
        assert path in line and why in line, (path, line)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_an_output_that_cannot_be_written_is_refused(tmp_path, name):
    for target in (tmp_path / "gone" / "x.json", "/proc/karma/x.json"):
        line = run(name, [a.replace("@OUT@", str(target)) for a in WRITERS[name]],
                   tmp_path)
        assert str(os.path.dirname(target)) in line, line
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize("name", sorted(TWICE))
def test_an_option_given_twice_is_refused(tmp_path, name):
    assert "given twice" in run(name, TWICE[name], tmp_path)


@pytest.mark.parametrize("command", [["karma-compare", "@SET@", A], ["karma-score", "@SET@"],
                                     ["karma-report", "@SET@", "--no-plots", "-o", "@OUT@/r.md"]])
def test_a_result_beyond_the_device_s_peak_is_never_compared_or_scored(tmp_path, command):
    """A kernel at 12.6 times its device's peak bandwidth is no measurement:
    refused (exit 2, naming it), or left out and listed under --skip-invalid."""
    import json
    import shutil
    bad = tmp_path / "set"
    shutil.copytree(A, bad)
    victim = sorted(p for p in os.listdir(bad) if p.endswith(".json"))[0]
    with open(bad / victim) as f:
        doc = json.load(f)
    doc["kernels"][0]["efficiency"] = {"peak_bandwidth_GBps": 100.0,
                                       "fraction_of_peak_bandwidth": 12.6}
    (bad / victim).write_text(json.dumps(doc))
    line = run(command[0], [a.replace("@SET@", str(bad)) for a in command[1:]], tmp_path)
    assert victim in line and "not physical" in line, line
