"""Malformed input to every tool: broken JSON, wrong types at every level
(`fom.value` a string, `kernels: null`, lists where objects belong and the
reverse), deeply nested JSON and YAML, out-of-range counts, deck values the
mini-app would refuse. Each is refused with the tool's documented exit code
(2: bad input, nothing written; karma-batch status: 1 for a job whose results
are unreadable), one message naming the file and the key or line, and never a
traceback."""

import copy
import json
import os
import shutil

import pytest

from conftest import ROOT, SAMPLES, load_json, stand_in_bin, stand_ins, tool, write

A = os.path.join(SAMPLES, "machine-a")
B = os.path.join(SAMPLES, "machine-b")
SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")
VICTIM = "stream-1d-2p16-r1.json"  # the file of machine-a each case breaks


def each_case(cases):
    """The test once per case, named by the case's name, so that ctest can run
    parts of this file side by side (KARMA_TEST_SHARD, conftest.py)."""
    return pytest.mark.parametrize("case", cases, ids=[c[0] for c in cases])


def fresh(tmp_path):
    """An empty directory for one case."""
    directory = tmp_path / "case"
    directory.mkdir()
    return directory


def refused(r, program, code=2, *needles):
    """Exit `code`, one error message holding every needle, no traceback."""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count(f"{program}: error: ") == 1, r.stderr
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)


# --- results documents: karma-compare and karma-report ------------------------------------


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _typed(path, value):
    def mutate(doc):
        _set(doc, path, value)
        return json.dumps(doc)
    return mutate


def _deep_problem(doc):
    value = 1
    for _ in range(100):
        value = {"x": value}
    doc["problem"] = value
    return json.dumps(doc)


def _duplicate_kernel(doc):
    doc["kernels"][1]["name"] = doc["kernels"][0]["name"]
    return json.dumps(doc)


K0 = ("kernels", 0)
# (id, the file's text from the valid document, what the message must say)
RESULTS = [
    ("truncated", lambda d: json.dumps(d)[:40], "not valid JSON"),
    ("empty file", lambda d: "", "is empty"),
    ("not UTF-8", lambda d: b'{"app": "\xff"}', "not valid JSON (not UTF-8"),
    ("NaN", lambda d: json.dumps(d).replace('"value": ', '"value": NaN, "x": ', 1),
     "NaN is not a JSON number"),
    ("huge float", lambda d: json.dumps(d).replace('"value": ', '"value": 1e400, "x": ', 1),
     "1e400 is out of range"),
    ("nested JSON", lambda d: "[" * 100000 + "]" * 100000, "nested too deeply"),
    ("deep problem", _deep_problem, "nested more than 64 levels deep"),
    ("fom.value a string", _typed(K0 + ("fom", "value"), "fast"),
     "kernels[0].fom.value: expected a number, got the string 'fast'"),
    ("fom.value true", _typed(K0 + ("fom", "value"), True),
     "kernels[0].fom.value: expected a number, got true"),
    ("fom.value negative", _typed(K0 + ("fom", "value"), -1.5),
     "kernels[0].fom.value: must be > 0, got -1.5"),
    ("fom.value zero", _typed(K0 + ("fom", "value"), 0), "kernels[0].fom.value: must be > 0"),
    ("fom.value huge integer", _typed(K0 + ("fom", "value"), 10**400),
     "kernels[0].fom.value: the number 1000"),
    ("fom a list", _typed(K0 + ("fom",), [1.0]),
     "kernels[0].fom: expected an object, got a list"),
    ("fom.units a number", _typed(K0 + ("fom", "units"), 3),
     "kernels[0].fom.units: expected a string, got the number 3"),
    ("higher_is_better a string", _typed(K0 + ("fom", "higher_is_better"), "yes"),
     "kernels[0].fom.higher_is_better: expected true or false"),
    ("time_s.min a string", _typed(K0 + ("time_s", "min"), "x"),
     "kernels[0].time_s.min: expected a number"),
    ("bytes a list", _typed(K0 + ("bytes",), [1]), "kernels[0].bytes: expected a number"),
    ("kernels null", _typed(("kernels",), None), "kernels: expected a list, got null"),
    ("kernels an object", _typed(("kernels",), {"copy": 1}),
     "kernels: expected a list, got an object"),
    ("kernels empty", _typed(("kernels",), []), "kernels: empty"),
    ("kernel a list", _typed(K0, ["copy"]), "kernels[0]: expected an object, got a list"),
    ("kernel name null", _typed(K0 + ("name",), None), "kernels[0].name: expected a string"),
    ("kernel named twice", _duplicate_kernel, "kernels[1].name: 'copy' is also"),
    ("app a list", _typed(("app",), ["stream"]), "app: expected a string, got a list"),
    ("result null", _typed(("result",), None), 'result: null, expected one of "PASSED", "FAILED"'),
    ("mpi a list", _typed(("mpi",), [2]), "mpi: expected an object, got a list"),
    ("mpi.ranks a string", _typed(("mpi", "ranks"), "2"),
     "mpi.ranks: expected an integer, got the string '2'"),
    ("mpi.ranks zero", _typed(("mpi", "ranks"), 0), "mpi.ranks: must be >= 1, got 0"),
    ("mpi.nodes huge", _typed(("mpi", "nodes"), 10**30),
     "mpi.nodes: must be <= 2147483647, got 1000000000000000000000000000000"),
    ("deck a string", _typed(("deck",), "small.yaml"), "deck: expected an object, got the string"),
    ("deck.resolved a list", _typed(("deck", "resolved"), [1]),
     "deck.resolved: expected an object, got a list"),
    ("problem a list", _typed(("problem",), []), "problem: expected an object, got a list"),
    ("ranks null", _typed(("ranks",), None), "ranks: expected a list, got null"),
    ("ranks an object", _typed(("ranks",), {"rank": 0}), "ranks: expected a list"),
    ("rank a string", _typed(("ranks", 0), "node1"), "ranks[0]: expected an object"),
    ("device name a number", _typed(("ranks", 0, "device", "name"), 5),
     "ranks[0].device.name: expected a string"),
    ("concurrency a string", _typed(("kokkos", "concurrency"), "many"),
     "kokkos.concurrency: expected an integer"),
    ("verification.passed a string", _typed(("verification", "passed"), "yes"),
     "verification.passed: expected true or false"),
    ("schema_version a string", _typed(("schema_version",), "1"),
     "schema_version the string '1', but this tool reads"),
]


def _broken_set(tmp_path, mutate):
    """machine-a with one file replaced by the broken one; returns (dir, file)."""
    root = tmp_path / "broken"
    shutil.copytree(A, root)
    text = mutate(copy.deepcopy(load_json(os.path.join(A, VICTIM))))
    path = root / VICTIM
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(root), str(path)


@each_case(RESULTS)
def test_compare_refuses_malformed_results(tmp_path, case):
    def check(directory, case, mutate, message):
        broken, path = _broken_set(directory, mutate)
        out = directory / "out.md"
        r = tool("karma-compare", B, broken, "--markdown", out)
        refused(r, "karma-compare", 2, f"{path}: ", message)
        assert not out.exists()
    check(fresh(tmp_path), *case)


@each_case(RESULTS)
def test_report_refuses_malformed_results(tmp_path, case):
    def check(directory, case, mutate, message):
        broken, path = _broken_set(directory, mutate)
        out = directory / "report.md"
        r = tool("karma-report", broken, "-o", out, "--no-plots")
        refused(r, "karma-report", 2, f"{path}: ", message)
        assert not out.exists()
    check(fresh(tmp_path), *case)


def test_device_state_at_start_is_read_and_checked(tmp_path):
    """A GPU run's ranks[].device.state_at_start holds `source` (and the
    clocks) or `reason`, never neither: both forms are read, an empty one is
    refused."""
    def with_state(state):
        def mutate(doc):
            doc["ranks"][0].setdefault("device", {})["state_at_start"] = state
            return json.dumps(doc)
        return mutate
    clocks = {"source": "nvml", "sm_MHz": 1980, "sm_max_MHz": 1980, "memory_MHz": 2619,
              "memory_max_MHz": 2619, "power_limit_W": 700.0}
    for i, state in enumerate([clocks, {"reason": "no NVML"}]):
        broken, _ = _broken_set(tmp_path / f"ok{i}", with_state(state))
        r = tool("karma-report", broken, "-o", tmp_path / f"ok{i}.md", "--no-plots")
        assert r.returncode == 0, r.stderr
    broken, path = _broken_set(tmp_path / "empty", with_state({}))
    r = tool("karma-report", broken, "-o", tmp_path / "empty.md", "--no-plots")
    refused(r, "karma-report", 2, f"{path}: ", "state_at_start")


def test_other_malformed_inputs_of_compare_and_report(tmp_path):
    weights = tmp_path / "w.txt"
    weights.write_bytes(b"stream \xff\n")
    r = tool("karma-compare", A, B, "--weights", weights)
    refused(r, "karma-compare", 2, f"{weights}: the weights file is not UTF-8 text")
    r = tool("karma-compare", f"a={A}", f"b={B}", "--system-nodes", "a=" + "9" * 5000)
    refused(r, "karma-compare", 2, "--system-nodes: removed in 1.1.0")
    results = tmp_path / "results"
    shutil.copytree(A, results / "stream")
    (results / "stream" / "README.md").write_bytes(b"# STREAM \xff\n")
    r = tool("karma-report", results, "-o", tmp_path / "r.md", "--no-plots")
    refused(r, "karma-report", 2, "README.md: not UTF-8 text")
    assert not (tmp_path / "r.md").exists()


def test_values_too_far_apart_give_no_ratio(tmp_path):
    tiny = tmp_path / "tiny"
    shutil.copytree(A, tiny)
    single = "stream-3d-left.json"  # a case of one run: its value is the case's
    doc = load_json(os.path.join(A, single))
    doc["kernels"][0]["fom"]["value"] = 5e-324
    write(str(tiny / single), json.dumps(doc))
    out = tmp_path / "c.json"
    r = tool("karma-compare", f"a={A}", f"tiny={tiny}", "--json", out)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr  # flagged, no error
    flagged = [v for row in load_json(out)["rows"] for v in [row["values"]["tiny"]]
               if v and "ratio out of range: the values are too far apart" in v["flags"]]
    assert len(flagged) == 1 and flagged[0]["ratio"] is None


# --- campaigns: karma-batch generate ---------------------------------------------------------


def _run(extra, app="stream", executable=None):
    lines = ["name: x", "runs:", "  - name: a", f"    app: {app}", f"    deck: {SMALL_DECK}"]
    if executable:
        lines.append(f"    executable: {executable}")
    return "\n".join(lines) + "\n" + extra


def _nested_block(depth):
    return "name: x\nruns: []\nenvironment:\n" + "".join(
        " " * (2 * i) + f"k{i}:\n" for i in range(1, depth)) + " " * (2 * depth) + "v: 1\n"


# (id, campaign text ({exe}: karma-stream), what the message must say)
CAMPAIGNS = [
    ("app misspelt", _run("", app="streem"),
     "c.yaml:4:10: runs[0].app: 'streem' is not one of: stream, hexgrad, matvec, mgs, contact, "
     "microbench (did you mean 'stream'?); a mini-app of your own needs `executable:`"),
    ("app unknown", _run("", app="nosuchapp"),
     "c.yaml:4:10: runs[0].app: 'nosuchapp' is not one of"),
    ("nodes huge", _run("    nodes: [99999999999999999999999]\n"),
     "c.yaml:6:13: runs[0].nodes[0]: must be <= 2147483647, got 99999999999999999999999"),
    ("nodes beyond Python's int digits", _run("    nodes: " + "9" * 5000 + "\n"),
     "c.yaml:6:12: runs[0].nodes: '99999999999999999999999999999999999999999999999999999999...' "
     "is not an integer, a list or {NAME}"),
    ("nodes null", _run("    nodes:\n"),
     "runs[0].nodes: expected an integer or a string or a list, got nothing"),
    ("nodes a float", _run("    nodes: 1.5\n"),
     "c.yaml:6:12: runs[0].nodes: expected an integer or a string or a list, got the number 1.5"),
    ("ranks_per_node huge", "name: x\nranks_per_node: 2147483648\nruns: []\n",
     "c.yaml:2:17: ranks_per_node: must be <= 2147483647"),
    ("too many ranks", _run("    nodes: 65536\n    ranks_per_node: 65536\n", executable="{exe}"),
     "nodes x ranks_per_node = 65536 x 65536 ranks, more than 2147483647"),
    ("too many jobs", _run("    repeat: 100000\n", executable="{exe}"),
     "runs[0]: makes 100000 jobs (0 before it); a campaign makes at most 10000"),
    ("repetitions: lots", _run("    set: {{run.repetitions: lots}}\n", executable="{exe}"),
     "c.yaml:7:28: runs[0].set.run.repetitions: run.repetitions=lots: 'lots' is not an integer"),
    ("repetitions: lots in a sweep",
     _run("    sweep:\n      run.repetitions: [3, lots]\n", executable="{exe}"),
     "runs[0].sweep.run.repetitions[1]: run.repetitions=lots: 'lots' is not an integer"),
    ("warmup below its minimum", _run('    set: ["run.warmup=-1"]\n', executable="{exe}"),
     "runs[0].set[0]: run.warmup=-1: must be >= 0, got -1"),
    ("shape zero", _run('    set: ["stream.shape=[0]"]\n', executable="{exe}"),
     "runs[0].set[0]: stream.shape=[0]: must be >= 1, got 0"),
    ("shape of two extents", _run("    set: {{stream.shape: [4, 4]}}\n", executable="{exe}"),
     "stream.shape=[4,4]: has 2 entries; expected a list of 1 or 3 integers >= 1"),
    ("shape beyond 64 bits", _run("    set: {{stream.shape: [2^99]}}\n", executable="{exe}"),
     "'2^99' does not fit a 64-bit integer"),
    ("shape a scalar", _run("    set: {{stream.shape: 1024}}\n", executable="{exe}"),
     "stream.shape=1024: expected a list of 1 or 3 integers >= 1, got '1024'"),
    ("layout not a choice", _run("    sweep:\n      stream.layout: [left, diagonal]\n",
                                 executable="{exe}"),
     "'diagonal' is not one of: left, right"),
    ("kernel listed twice", _run("    set: {{stream.kernels: [copy, copy]}}\n",
                                 executable="{exe}"),
     "'copy' is listed twice"),
    ("scaling not of the key's choices", _run("    scaling: [weak]\n    scaling_key: "
                                              "stream.layout\n", executable="{exe}"),
     "runs[0].scaling: stream.layout=weak: 'weak' is not one of: left, right"),
    ("deep block YAML", _nested_block(200),
     "c.yaml:67:129: YAML syntax error: nested more than 64 levels deep"),
    ("deep flow YAML", "name: x\nruns: " + "[" * 100000 + "]" * 100000 + "\n",
     "c.yaml:2:70: YAML syntax error: nested more than 64 levels deep"),
    ("not UTF-8", b"name: \xff\nruns: []\n", "c.yaml:1:1: not UTF-8 text"),
    ("runs an object", "name: x\nruns: {{a: 1}}\n",
     "c.yaml:2:7: runs: expected a list, got a mapping"),
    ("run a list", "name: x\nruns:\n  - [a, b]\n",
     "c.yaml:3:5: runs[0]: expected a mapping, got a list"),
    ("environment a list", "name: x\nenvironment: [a]\nruns: []\n",
     "c.yaml:2:14: environment: expected a mapping or nothing, got a list"),
    ("set a number", _run("    set: 5\n"), "c.yaml:6:10: runs[0].set: expected a string or a list "
     "or a mapping, got the number 5"),
    ("sweep values not a list", _run("    sweep: {{run.repetitions: 5}}\n"),
     "c.yaml:6:30: runs[0].sweep.run.repetitions: expected a list, got the number 5"),
]


@each_case(CAMPAIGNS)
def test_generate_refuses_malformed_campaigns(tmp_path, stream_exe, case):
    def check(directory, case, text, message):
        path = directory / "c.yaml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text.format(exe=stream_exe))
        r = tool("karma-batch", "generate", path, "-o", directory / "out")
        refused(r, "karma-batch", 2, str(path), message)
        assert sorted(os.listdir(directory)) == ["c.yaml"]  # nothing written
    check(fresh(tmp_path), *case)


def test_deck_values_are_checked_only_where_the_mini_app_runs(tmp_path):
    """A karma-stream that lists no deck keys (a stand-in whose --help=json
    fails) leaves the values to the job's start, and says so."""
    stand_ins(tmp_path, ["stream"])
    campaign = write(str(tmp_path / "c.yaml"), _run("    set: {run.repetitions: lots}\n",
                                                    executable=str(tmp_path / "karma-stream")))
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "out")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "set/sweep keys and values are not checked" in r.stderr, r.stderr


# --- manifests and job results: karma-batch status ----------------------------------------


def generate(directory):
    campaign = write(str(directory / "c.yaml"), _run("    nodes: [1, 2]\n"))
    out = directory / "out"
    r = tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check", "--bin-dir",
             stand_in_bin())
    assert r.returncode == 0, r.stderr
    return out


def _without_name(manifest):
    del manifest["jobs"][0]["name"]
    return json.dumps(manifest)


MANIFESTS = [
    ("truncated", lambda m: json.dumps(m)[:30], "campaign.json: not valid JSON"),
    ("not UTF-8", lambda m: b'{"jobs": "\xff"}', "campaign.json: not valid JSON (not UTF-8"),
    ("nested", lambda m: "[" * 100000 + "]" * 100000, "nested too deeply"),
    ("a list", lambda m: json.dumps([m]), "not a karma-batch manifest of version 1"),
    ("version 2", _typed(("karma_batch_manifest",), 2), "not a karma-batch manifest"),
    ("scheduler unknown", _typed(("scheduler",), "lsf"),
     "campaign.json: scheduler: \"lsf\", expected one of \"slurm\", \"pbs\", \"local\""),
    ("jobs null", _typed(("jobs",), None), "campaign.json: jobs: expected a list, got null"),
    ("jobs an object", _typed(("jobs",), {"a": 1}), "jobs: expected a list, got an object"),
    ("job a list", _typed(("jobs", 0), []), "jobs[0]: expected an object, got a list"),
    ("job name missing", _without_name, "jobs[0].name: missing"),
    ("results_dir null", _typed(("jobs", 1, "results_dir"), None),
     "jobs[1].results_dir: expected a string, got null"),
    ("nodes a string", _typed(("jobs", 0, "nodes"), "2"), "jobs[0].nodes: expected an "
     "integer, got the string '2'"),
    ("nodes zero", _typed(("jobs", 0, "nodes"), 0), "jobs[0].nodes: must be >= 1, got 0"),
    ("job_id a number", _typed(("jobs", 0, "job_id"), 5),
     "jobs[0].job_id: expected a string or null, got the number 5"),
]


@each_case(MANIFESTS)
def test_status_refuses_malformed_manifests(tmp_path, case):
    def check(directory, case, mutate, message):
        out = generate(directory)
        path = out / "campaign.json"
        text = mutate(load_json(path))
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        r = tool("karma-batch", "status", out)
        refused(r, "karma-batch", 2, str(path), message)
    check(fresh(tmp_path), *case)


# A job that ended (exit_code 0) but left results the tool cannot read: the
# job failed (exit 1, "a job failed"), and status says why.
JOB_RESULTS = [
    ("a list", "[1, 2]", "0", "exit 0, results unreadable results"),
    ("nested", "[" * 100000 + "]" * 100000, "0", "exit 0, results unreadable results"),
    ("not UTF-8", b"\xff\xfe", "0", "exit 0, results unreadable results"),
    ("result a list", '{"schema_version": 1, "result": ["PASSED"]}', "0",
     "exit 0, results malformed results"),
    ("exit code not a number", '{"schema_version": 1, "result": "PASSED"}', "zero",
     "unreadable"),
]


@each_case(JOB_RESULTS)
def test_status_of_a_job_with_malformed_results(tmp_path, case):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text("#!/bin/sh\nexit 0\n")  # has forgotten every job
    (bin_dir / "squeue").chmod(0o755)

    def check(directory, case, results, code, detail):
        out = generate(directory)
        manifest = load_json(out / "campaign.json")
        job = manifest["jobs"][0]
        job["job_id"] = "7"
        write(str(out / "campaign.json"), json.dumps(manifest))
        job_dir = os.path.join(out, job["results_dir"])  # manifest paths: relative to out
        os.makedirs(job_dir)
        with open(os.path.join(out, job["results_file"]), "wb") as f:
            f.write(results if isinstance(results, bytes) else results.encode())
        write(os.path.join(job_dir, "exit_code"), code + "\n")
        r = tool("karma-batch", "status", out, env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
        assert "Traceback" not in r.stderr, r.stderr
        assert r.returncode == 1, (r.stdout, r.stderr)
        line = next(x for x in r.stdout.splitlines() if x.startswith(job["name"]))
        assert " failed " in line and detail in line, line
    check(fresh(tmp_path), *case)


# --- karma-envcapture ------------------------------------------------------------------------


ENVCAPTURE = [
    ("timeout NaN", ["--timeout", "nan"], "--timeout nan: expected a number of seconds > 0"),
    ("timeout negative", ["--timeout", "-1"], "--timeout -1: expected"),
    ("timeout infinite", ["--timeout", "inf"], "--timeout inf: expected"),
    ("timeout a word", ["--timeout", "soon"], "invalid float value: 'soon'"),
    ("output a file", ["-o", "@FILE@"], "exists and is not a directory"),
]


@each_case(ENVCAPTURE)
def test_envcapture_refuses_bad_arguments(tmp_path, case):
    def check(directory, case, args, message):
        existing = write(str(directory / "afile"), "keep me\n")
        args = [existing if a == "@FILE@" else a for a in args]
        r = tool("karma-envcapture", *args, "--quiet", cwd=directory)
        refused(r, "karma-envcapture", 2, message)
        assert sorted(os.listdir(directory)) == ["afile"]
        assert open(existing).read() == "keep me\n"
    check(fresh(tmp_path), *case)


def test_envcapture_records_variables_that_are_not_utf8(tmp_path):
    # Python hands undecodable bytes of the environment over as lone surrogates.
    env = {"SLURM_JOB_NAME": "job\udcff", "LOADEDMODULES": "gcc\udcfe:cuda"}
    r = tool("karma-envcapture", "-o", tmp_path / "env", "--quiet", "--timeout", "5", env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    doc = load_json(tmp_path / "env" / "environment.json")  # valid UTF-8 JSON
    assert doc["scheduler"]["variables"]["SLURM_JOB_NAME"] == "job\ufffd"
    assert doc["modules"]["loaded"] == ["gcc\ufffd", "cuda"]
