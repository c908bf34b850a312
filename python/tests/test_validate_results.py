"""karma-validate-results on files and directories: schemas/results.schema.json
(a missing field, a wrong type, a value out of range, named by its JSON path),
the checks kept in code (a check's verdict against its error and tolerance,
min <= median <= max, the date's calendar, one entry per rank), its exit codes
(0 valid, 1 not valid, 2 bad usage, unreadable input or a wrong schema file),
and no traceback on any input."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, SRC, build_bin, load_json, tool, write

from karma_tools import APPS
from karma_tools.core import miniapp_folders, miniapps_with_decks
from karma_tools.docgen import SCHEMA_IN_REPO, with_app_names

A = os.path.join(SAMPLES, "machine-a")
GBENCH = os.path.join(os.path.dirname(SAMPLES), "gbench", "microbench.json")
VALID = os.path.join(A, "stream-3d-left.json")
# A committed reference result as the converter of suite 0.1.0 wrote it:
# BabelStream's figures; no date, deck hash, Kokkos version, median or device.
REFERENCE = os.path.join(ROOT, "results", "campaigns", "h200", "stream-vs-babelstream.tar.xz",
                         "results", "babelstream-double-2p25.n1x1.r1", "karma-stream.json")
STREAM_DECK = os.path.join(ROOT, "inputs", "stream", "default.yaml")


def reference_doc():
    from karma_tools.results import archive

    return json.loads(archive.read_bytes(REFERENCE))


def validate(validator, *args, env=None):
    r = subprocess.run([sys.executable, validator, *map(str, args)], capture_output=True,
                       timeout=300, stdin=subprocess.DEVNULL, env=env)
    # Bytes: the messages must stay printable whatever the files hold.
    out, err = r.stdout.decode("ascii"), r.stderr.decode("ascii")
    assert "Traceback" not in err, err
    return r.returncode, out, err


def doc_with(**changes):
    doc = load_json(VALID)
    for path, value in changes.items():
        target = doc
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        target[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    return doc


def test_the_hostile_three_are_not_valid(validator, tmp_path):
    """A check that says passed with its error above its tolerance, a date
    that is not one, an app that is not of the suite: each exit 1."""
    code, out, err = validate(validator, VALID, "--app", "stream", "--result", "PASSED")
    assert (code, err) == (0, "")
    assert out == f"{VALID}: valid karma results\n"
    doc = doc_with(date="yesterday", app="nosuchapp")
    check = doc["verification"]["checks"][0]
    check["error"] = 10 * check["tolerance"]
    path = write(str(tmp_path / "r.json"), json.dumps(doc))
    code, out, err = validate(validator, path)
    assert code == 1 and out == ""
    assert f"{path}: app: no kernel table for 'nosuchapp'" in err, err
    assert f"{path}: date: \"yesterday\" is not an ISO 8601 UTC date-time" in err
    assert re.search(re.escape(path) + r": verification.checks\[0\].passed: true, but error "
                     r"\S+ > tolerance", err), err


def test_a_directory_recursively(validator, tmp_path):
    root = tmp_path / "results"
    os.makedirs(root / "a" / "b")
    os.makedirs(root / ".hidden")
    for i, f in enumerate(sorted(glob.glob(os.path.join(A, "*.json")))[:3]):
        write(str(root / ("a" if i else "a/b") / os.path.basename(f)), open(f).read())
    write(str(root / ".hidden" / "broken.json"), "{")   # hidden: not looked at
    write(str(root / "a" / ".partial.json"), "{")        # a writer's temporary
    write(str(root / "a" / "notes.txt"), "not json")
    write(str(root / "gbench.json"), open(GBENCH).read())
    write(str(root / "environment.json"), '{"karma_environment": 1}')
    # A reference result is checked too, against the reference form.
    write(str(root / "reference.json"), json.dumps(reference_doc()))
    code, out, err = validate(validator, root)
    assert (code, err) == (0, "")
    assert out.count(": valid karma results") == 3
    assert f"{root}/gbench.json: skipped: Google Benchmark JSON" in out
    assert f"{root}/environment.json: skipped: karma-envcapture's environment.json" in out
    assert f"{root}/reference.json: valid reference results" in out
    assert out.endswith("karma-validate-results: 4 valid (3 karma runs, 1 reference "
                        "results), 0 not valid, 0 unreadable, 2 skipped\n")
    write(str(root / "reference.json"), json.dumps(
        {"schema_version": 2, "app": "stream", "reference": {"format": "babelstream"}}))
    code, out, err = validate(validator, root)
    assert code == 1 and f"{root}/reference.json: reference.command: missing" in err
    assert "3 valid (3 karma runs, 0 reference results), 1 not valid" in out
    # Named on the command line, a file is always checked.
    code, _, err = validate(validator, root / "gbench.json")
    assert code == 1 and "schema_version: missing" in err


def test_several_paths_and_the_exit_code_of_the_worst(validator, tmp_path):
    bad = write(str(tmp_path / "bad.json"), json.dumps(doc_with(date="2024-02-30T00:00:00Z")))
    code, out, err = validate(validator, VALID, bad)
    assert code == 1
    assert f"{VALID}: valid karma results" in out and f"{bad}: date: " in err
    assert "1 valid (1 karma runs, 0 reference results), 1 not valid, 0 unreadable, " \
        "0 skipped" in out
    # What cannot be read was not checked: 2 wins over 1.
    code, out, err = validate(validator, VALID, bad, tmp_path / "missing.json")
    assert code == 2
    assert f"karma-validate-results: {tmp_path}/missing.json: no such file or directory" in err
    assert "1 valid (1 karma runs, 0 reference results), 1 not valid, 1 unreadable" in out


@pytest.mark.parametrize("make, message", [
    (lambda d: (d / "empty").mkdir() or d / "empty",
     "no *.json files in this directory or under it"),
    (lambda d: os.mkfifo(d / "fifo.json") or d / "fifo.json", "not a regular file"),
    (lambda d: d / "nothing-here.json", "no such file or directory"),
], ids=["empty directory", "fifo", "missing"])
def test_unreadable_input_is_exit_2(validator, tmp_path, make, message):
    path = make(tmp_path)
    code, out, err = validate(validator, path)
    assert code == 2 and out == ""
    assert err == f"karma-validate-results: {path}: {message}\n"


def test_malformed_json_is_not_valid(validator, tmp_path):
    for i, (text, message) in enumerate([
            (b"", "not JSON"),
            (b'{"app": "\xff\xfe"}', "not JSON"),  # and the message stays ASCII
            (b"[" * 1000000 + b"]" * 1000000, "not JSON: nested too deeply"),
            (b'{"a":' * 100000 + b"1" + b"}" * 100000, "not JSON: nested too deeply"),
            (b"[[1]]", "the document is not a JSON object"),
            (b'{"schema_version": 1e400}', "not JSON"),
            (b'{"schema_version": 18446744073709551616}', "schema_version: 18446744073709551616, "
             "expected one of 1, 2"),
            (b'"just a string"', "the document is not a JSON object")]):
        path = tmp_path / f"r{i}.json"
        path.write_bytes(text)
        code, out, err = validate(validator, path)
        assert code == 1 and out == "", (text[:40], err[:300])
        assert err.startswith(f"{path}: ") and message in err, err[:500]


def _paths(value, prefix=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


@pytest.mark.parametrize("form", ["karma", "reference"])
def test_any_value_anywhere_is_a_problem_not_an_abort(validator, tmp_path, form):
    """Every value of a results file (a karma run's, a reference result's),
    at every depth, replaced by every kind of JSON value: exit 1 (or 0 where
    the replacement is allowed), a summary of every file, never an abort."""
    valid = load_json(VALID) if form == "karma" else reference_doc()
    replacements = [None, True, -1, 2**64 - 1, 1e308, "text", [], [[1]], {}, {"x": {"y": 1}}]
    root = tmp_path / "mutants"
    root.mkdir()
    n = 0
    for path in _paths(valid):
        for value in replacements:
            doc = json.loads(json.dumps(valid))
            target = doc
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
            write(str(root / f"m{n:05d}.json"), json.dumps(doc))
            n += 1
    assert n > 1000
    code, out, err = validate(validator, root)
    assert code == 1
    counts = re.search(r"(\d+) valid \(\d+ karma runs, \d+ reference results\), (\d+) not "
                       r"valid, 0 unreadable, 0 skipped\n$", out)
    assert counts and int(counts.group(1)) + int(counts.group(2)) == n, out[-300:]
    assert int(counts.group(2)) > n // 2  # the rest: free-form parts (deck, problem)


@pytest.mark.parametrize("args, message", [
    ([], "no file or directory given"),
    ([VALID, "--ranks", "abc"], "--ranks 'abc' is not a whole number of ranks >= 1"),
    ([VALID, "--ranks", "0"], "--ranks '0' is not a whole number"),
    ([VALID, "--ranks", "99999999999999999999"], "--ranks '99999999999999999999' is not"),
    ([VALID, "--result", "MAYBE"], "--result 'MAYBE': expected PASSED or FAILED"),
    ([VALID, "--app", "nosuchapp"], "--app 'nosuchapp' is not a mini-app of the suite"),
    ([VALID, "--app"], "argument --app: expected one argument"),
    ([VALID, "--bogus"], "unrecognized arguments: --bogus"),
], ids=["nothing", "ranks a word", "ranks zero", "ranks huge", "result", "app", "no value",
        "unknown option"])
def test_bad_usage_is_exit_2(validator, args, message):
    code, out, err = validate(validator, *args)
    assert code == 2 and out == ""
    # One line, as every tool's usage error (cli.ArgumentParser).
    assert err.startswith(f"karma-validate-results: error: {message}") and \
        err.endswith(" (see karma-validate-results --help)\n") and err.count("\n") == 1, err


def test_a_file_named_like_an_option(validator, tmp_path):
    write(str(tmp_path / "-r.json"), open(VALID).read())
    r = subprocess.run([validator, "--", "-r.json"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "-r.json: valid karma results\n", r.stderr


def test_the_suite_has_one_list_of_mini_apps(validator):
    """The mini-apps that write results (miniapps/*/main.cpp: `App app{"name"`),
    the validator's list (--help) and the tools' (karma_tools.APPS) agree."""
    from karma_tools import APPS

    sources = set()
    for main in glob.glob(os.path.join(ROOT, "miniapps", "*", "main.cpp")):
        m = re.search(r'\bApp app\{\s*"([a-z0-9_]+)"', open(main).read())
        if m:
            sources.add(m.group(1))
    _, out, _ = validate(validator, "--help")
    listed = re.search(r"--app ([a-z0-9_|]+)\]", out).group(1).split("|")
    assert sorted(sources) == sorted(APPS) == sorted(listed)
    assert "microbench" in sources  # a mini-app of the contract, results and all


# The suite's one list of mini-apps (karma_tools.core): the folders of
# miniapps/ (CMake builds each, miniapps/CMakeLists.txt), those of them with
# decks in inputs/ (the ones that write karma results: APPS, the results
# schema's `app`, which karma-docs writes from them); adding a mini-app is
# adding its folder and its decks.

def app_of_main(path):
    """The name a mini-app's main.cpp gives its karma::App, or None."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"\bApp app\{\s*\"([a-z0-9_]+)\"", f.read())
    return m.group(1) if m else None


def test_the_apps_that_write_results_are_the_folders_with_decks():
    with_decks = miniapps_with_decks(ROOT)
    assert "stream" in with_decks and "microbench" in with_decks
    assert sorted(APPS) == with_decks
    # Each is a karma::App of its folder's name; every App has its decks.
    apps = {os.path.basename(os.path.dirname(p)): app_of_main(p)
            for p in glob.glob(os.path.join(ROOT, "miniapps", "*", "main.cpp"))}
    assert {folder for folder, name in apps.items() if name} == set(with_decks)
    assert all(name in (None, folder) for folder, name in apps.items()), apps
    assert set(miniapp_folders(ROOT)) == set(apps)  # every folder with a main.cpp is built


def test_the_schema_s_app_names_are_the_suite_s():
    """What karma-docs writes is what the checkout holds (tools.docs checks
    the file as a whole, test_docs.py its writing)."""
    path = os.path.join(ROOT, SCHEMA_IN_REPO)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert with_app_names(text, miniapps_with_decks(ROOT), path) == text


def test_the_build_makes_every_mini_app():
    """miniapps/CMakeLists.txt adds every folder: each has its karma-<app>."""
    bin_dir = build_bin()
    for app in miniapp_folders(ROOT):
        assert os.path.isfile(os.path.join(bin_dir, f"karma-{app}")), app


def _drop(*path):
    def mutate(doc):
        target = doc
        for k in path[:-1]:
            target = target[k]
        del target[path[-1]]
    return mutate


def _put(value, *path):
    def mutate(doc):
        target = doc
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
    return mutate


def _energy(doc):
    doc["kernels"][0]["energy"] = {"status": "measured", "source": "rapl", "counters": 1,
                                   "executions": 10, "window_s": 0.5, "counter_step_s": 0.001,
                                   "average_power_W": 80.0, "joules_per_execution": 0.01,
                                   "fom_per_watt": {"value": 2.0, "units": "GB/s/W"}}


# (id, change to the valid sample, the one problem line after "FILE: ")
PROBLEMS = [
    ("missing field", _drop("hosts"), "hosts: missing"),
    ("missing nested field", _drop("kernels", 1, "time_s", "median"),
     "kernels[1].time_s.median: missing"),
    ("wrong type", _put("fast", "kernels", 0, "fom", "value"),
     "kernels[0].fom.value: expected a number, got the string 'fast'"),
    ("null error is allowed, a string is not", _put("tiny", "verification", "checks", 0, "error"),
     "verification.checks[0].error: expected a number or null, got the string 'tiny'"),
    ("min above median", _put(1.0, "kernels", 0, "time_s", "min"),
     "kernels[0].time_s: not 0 < min <= median <= max"),
    ("fom not positive", _put(0, "kernels", 0, "fom", "value"),
     "kernels[0].fom.value: must be > 0, got 0"),
    ("count out of range", _put(2**64 - 1, "mpi", "nodes"),
     "mpi.nodes: must be <= 2147483647, got 18446744073709551615"),
    ("no repetitions", _put(0, "kernels", 0, "time_s", "count"),
     "kernels[0].time_s.count: must be >= 1, got 0"),
    ("kernels empty", _put([], "kernels"), "kernels: empty"),
    ("sha256 not hex", _put("x" * 64, "deck", "sha256"), "deck.sha256: \"xxxx"),
    ("version 2 kernel without its variant", _put(2, "schema_version"),
     "kernels[0].variant: missing"),
    ("an impossible date", _put("2023-02-29T12:00:00Z", "date"),
     "date: \"2023-02-29T12:00:00Z\" is not a real UTC date and time of day"),
    ("a leap second not at the end of a day", _put("2016-12-31T12:00:60Z", "date"),
     "date: \"2016-12-31T12:00:60Z\" is not a real UTC date"),
    ("one entry per rank", _put(3, "mpi", "ranks"), "ranks: 1 entries for 3 ranks"),
    ("rank out of order", _put(5, "ranks", 0, "rank"), "ranks[0].rank: 5, out of order"),
    ("gpu without its id", _put("gpu", "ranks", 0, "device", "kind"),
     "ranks[0].device.id: missing"),
    ("verdict against the checks", _put(False, "verification", "passed"),
     "verification.passed disagrees with its checks"),
    ("a failed check with its error within tolerance",
     _put(False, "verification", "checks", 0, "passed"),
     "verification.checks[0].passed: false, but error"),
    ("energy measured without its figures", lambda d: (_energy(d), _drop(
        "kernels", 0, "energy", "average_power_W")(d)),
     "kernels[0].energy.average_power_W: missing"),
    ("energy status unknown", lambda d: (_energy(d), _put("maybe", "kernels", 0, "energy",
                                                          "status")(d)),
     "kernels[0].energy.status: \"maybe\", expected one of \"measured\", \"unavailable\", "
     "\"off\""),
    ("energy window backwards", lambda d: (_energy(d), _put([5, 4], "kernels", 0, "energy",
                                                            "window_unix_s")(d)),
     "kernels[0].energy.window_unix_s: start after end"),
    ("efficiency peak without its fraction",
     _put({"peak_bandwidth_GBps": 100.0, "peak_bandwidth": "x"}, "kernels", 0, "efficiency"),
     "kernels[0].efficiency.fraction_of_peak_bandwidth: missing beside peak_bandwidth_GBps"),
    # Beyond the device's peak (validate.PEAK_TOLERANCE: a host's caches may
    # pass its memory's peak a little, nothing passes it 12 times).
    ("bandwidth beyond physics", _put({"peak_bandwidth_GBps": 100.0,
                                       "fraction_of_peak_bandwidth": 12.6}, "kernels", 0,
                                      "efficiency"),
     "kernels[0].efficiency.fraction_of_peak_bandwidth: 12.6 times the device's peak (more "
     "than 4): not physical"),
    ("flops beyond physics", _put({"peak_GFLOPs": 100.0, "fraction_of_peak_flops": 5.0},
                                  "kernels", 0, "efficiency"),
     "kernels[0].efficiency.fraction_of_peak_flops: 5 times the device's peak"),
]


@pytest.mark.parametrize("change, problem", [c[1:] for c in PROBLEMS],
                         ids=[c[0] for c in PROBLEMS])
def test_each_problem_names_the_file_and_the_json_path(validator, tmp_path, change, problem):
    doc = load_json(VALID)
    change(doc)
    path = write(str(tmp_path / "r.json"), json.dumps(doc))
    code, out, err = validate(validator, path)
    assert code == 1 and out == "", (code, out, err)
    assert f"{path}: {problem}" in err, err


def test_version_two_kernels_name_implementation_and_variant(validator, tmp_path):
    doc = load_json(VALID)
    assert doc["schema_version"] == 1  # the sample: valid without them
    doc["schema_version"] = 2
    for k in doc["kernels"]:
        k["implementation"], k["variant"] = "kokkos", k["name"]
    path = write(str(tmp_path / "v2.json"), json.dumps(doc))
    assert validate(validator, path)[:2] == (0, f"{path}: valid karma results\n")


@pytest.mark.parametrize("text, where", [
    ('{"$schema": "https://json-schema.org/draft/2020-12/schema",\n "type": "object",\n'
     ' "properties": {\n  "app": {"type": "strin"}\n }\n}\n', ":4:19: properties.app.type: "),
    ('{"$schema": "https://json-schema.org/draft/2020-12/schema",\n "type": [\n',
     ":3:1: not JSON"),
    ('{"type": "object"}\n', ":1:1: $schema: expected"),
    ('{\n\t"$schema": "https://json-schema.org/draft/2020-12/schema",\n\t"type": "object",\n'
     '\t"properties": {\n\t\t"app": {"type": "strin"}\n\t}\n}\n', ":5:19: properties.app.type: "),
], ids=["wrong type name", "not JSON", "no draft", "indented with tabs"])
def test_a_wrong_schema_file_is_one_line_and_exit_2(validator, tmp_path, text, where):
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    write(str(schemas / "results.schema.json"), text)
    code, out, err = validate(validator, VALID, env=dict(os.environ, KARMA_SCHEMAS=str(schemas)))
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and \
        err.startswith(f"karma-validate-results: error: {schemas}/results.schema.json{where}"), err


def test_the_schema_lists_the_suite_s_mini_apps():
    from karma_tools import APPS

    schema = load_json(os.path.join(SRC, "karma_tools", "schemas", "results.schema.json"))
    assert tuple(schema["properties"]["app"]["x-karma-apps"]) == APPS


def _without(doc, *paths):
    for path in paths:
        *parents, last = path.split(".")
        target = doc
        for k in parents:
            target = target[int(k)] if k.isdigit() else target[k]
        del target[int(last) if last.isdigit() else last]
    return doc


@pytest.mark.parametrize("change, problems", [
    # What the program cannot give is not asked for.
    (lambda d: _without(d, "kokkos", "notes", "suite.name",
                        "problem.precision"), []),
    # What it can is: the form's required fields, each named.
    (lambda d: _without(d, "reference.exit_status", "reference.output", "deck.resolved",
                        "mpi.nodes", "kernels.0.time_s.mean", "verification"),
     ["reference.exit_status: missing", "reference.output: missing", "deck.resolved: missing",
      "mpi.nodes: missing", "kernels[0].time_s.mean: missing", "verification: missing"]),
    (lambda d: d.update(schema_version=1) or d, ["schema_version: 1, expected 2"]),
    (lambda d: d["reference"].update(format="stream.c", command="stream -s 1") or d,
     ['reference.format: "stream.c", expected one of "babelstream"',
      "reference.command: expected a list, got the string 'stream -s 1'"]),
    (lambda d: _without(d, "kernels.2.variant"), ["kernels[2].variant: missing"]),
    # The rules across fields that apply: the mean between min and max (no
    # median), the verdict, the date where there is one.
    (lambda d: d["kernels"][1]["time_s"].update(mean=1.0) or d,
     ["kernels[1].time_s: not 0 < min <= mean <= max"]),
    (lambda d: d.update(result="FAILED") or d,
     ['result: "FAILED" disagrees with verification.passed']),
    (lambda d: d.update(date="2025-02-29T10:00:00Z") or d,
     ['date: "2025-02-29T10:00:00Z" is not a real UTC date']),
    # Without `reference`, the same figures are a karma run that lacks much.
    (lambda d: _without(d, "reference"),
     ["date: missing", "ranks: missing", "deck.sha256: missing", "kokkos.version: missing",
      "kernels[0].time_s.median: missing", "verification.checks: empty"]),
], ids=["what it cannot know", "what it can", "version 1", "format and command", "variant",
        "mean", "verdict", "date", "no reference"])
def test_a_reference_result_takes_the_reference_form(validator, tmp_path, change, problems):
    """The committed reference result is valid as it is; the form requires
    what a reference run knows and no more, and the karma form still
    requires everything a karma run writes."""
    path = write(str(tmp_path / "r.json"), json.dumps(change(reference_doc())))
    code, out, err = validate(validator, path)
    if not problems:
        assert (code, out, err) == (0, f"{path}: valid reference results\n", "")
    else:
        assert code == 1 and out == "", (code, out, err)
    for p in problems:
        assert f"{path}: {p}" in err, err


def test_the_converter_writes_what_the_form_requires(tmp_path):
    """karma-batch reference-result: the reference form's fields and those it
    also knows (the deck's hash, the command line, the date and host given);
    a date that is not one is one line, exit 2, nothing written."""
    import hashlib

    csv_file = write(str(tmp_path / "out.txt"), "Running kernels 100 times\n"
                     "function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,"
                     "max_runtime,avg_runtime\n"
                     "Copy,100,33554432,8,3.82624e+06,0.000140313,0.000147023,0.000142633\n")
    out = tmp_path / "karma-stream.json"
    args = ["karma-batch", "reference-result", "babelstream", "--input", csv_file, "--app",
            "stream", "--deck", STREAM_DECK, "--set", "stream.shape=[2^25]", "--device", "gpu",
            "--command", "cuda-stream -s 33554432 --csv", "--host", "node7"]
    r = tool(*args, "--date", "2026-03-01T12:00:00Z", "--output", out)
    assert r.returncode == 0, r.stderr
    doc = load_json(out)
    assert (doc["date"], doc["hosts"], doc["command_line"]) == \
        ("2026-03-01T12:00:00Z", ["node7"], "cuda-stream -s 33554432 --csv")
    assert doc["deck"]["sha256"] == hashlib.sha256(open(STREAM_DECK, "rb").read()).hexdigest()
    r = tool("karma-validate-results", out)
    assert (r.returncode, r.stdout) == (0, f"{out}: valid reference results\n"), r.stderr
    r = tool(*args, "--date", "2026-02-30T12:00:00Z", "--output", tmp_path / "x.json")
    assert r.returncode == 2 and not (tmp_path / "x.json").exists()
    assert r.stderr.strip().splitlines() == [
        f"karma-batch: error: {csv_file}: the results would not be valid: date: "
        '"2026-02-30T12:00:00Z" is not a real UTC date and time of day'], r.stderr


def test_the_tools_check_a_loaded_reference_result_too(tmp_path):
    """karma-compare and karma-report load a reference result as they load a
    karma run: checked against the schema (its reference form, requiring
    nothing), so a field of the wrong type stops them, one line, exit 2."""
    from karma_tools import ToolError
    from karma_tools.results import resultset

    good = write(str(tmp_path / "good" / "karma-stream.json"), json.dumps(reference_doc()))
    assert resultset.open(os.path.dirname(good)).runs[0].reference == "babelstream"
    doc = reference_doc()
    doc["kernels"][0]["time_s"]["mean"] = "fast"
    bad = write(str(tmp_path / "bad" / "karma-stream.json"), json.dumps(doc))
    with pytest.raises(ToolError) as e:
        resultset.open(os.path.dirname(bad))
    assert e.value.code == 2 and str(e.value).startswith(
        f"{bad}: kernels[0].time_s.mean: expected a number, got"), str(e.value)


@pytest.mark.parametrize("table", [5, {"kernels": 5}, {"kernels": [{"name": 5}]},
                                   {"fields": [], "kernels": [{"name": "{x}"}]}])
def test_a_wrong_kernel_table_is_a_problem_not_a_crash(validator, tmp_path, table):
    """The schema's problems name a kernel_table of the wrong shape; it is not read."""
    path = write(tmp_path / "r.json", json.dumps(doc_with(kernel_table=table)))
    code, _, err = validate(validator, path)
    assert code == 1 and "kernel_table" in err, err


def test_a_fraction_of_peak_past_a_float_is_a_problem_not_a_crash(validator, tmp_path):
    """An integer too large for a float, as a fraction of the device's peak, is named."""
    doc = doc_with(kernels__0__efficiency={"fraction_of_peak_bandwidth": "HUGE"})
    path = write(tmp_path / "r.json", json.dumps(doc).replace('"HUGE"', "1" + "0" * 400))
    code, _, err = validate(validator, path)
    assert code == 1 and "fraction_of_peak_bandwidth: the number 1000" in err, err
