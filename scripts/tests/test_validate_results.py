"""karma-validate-results on files and directories: the checks
results/SCHEMA.md defines (a check's verdict against its error and
tolerance, the date, the app), its exit codes (0 valid, 1 not valid, 2 bad
usage or unreadable input), and no abort on any input."""

import glob
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, SAMPLES, load_json, write

A = os.path.join(SAMPLES, "machine-a")
GBENCH = os.path.join(os.path.dirname(SAMPLES), "gbench", "microbench.json")
VALID = os.path.join(A, "stream-3d-left.json")


def validate(validator, *args):
    r = subprocess.run([validator, *map(str, args)], capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    # Bytes: the messages must stay printable whatever the files hold.
    out, err = r.stdout.decode("ascii"), r.stderr.decode("ascii")
    assert "terminate called" not in err, err
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
    assert f"{path}: app: \"nosuchapp\" is not a mini-app of the suite (stream, hexgrad, " \
           "matvec, mgs, contact)" in err
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
    write(str(root / "reference.json"), json.dumps(
        {"schema_version": 2, "app": "stream", "reference": {"format": "babelstream"}}))
    code, out, err = validate(validator, root)
    assert (code, err) == (0, "")
    assert out.count(": valid karma results") == 3
    assert f"{root}/gbench.json: skipped: Google Benchmark JSON" in out
    assert f"{root}/environment.json: skipped: karma-envcapture's environment.json" in out
    assert f"{root}/reference.json: skipped: a reference result" in out
    assert out.endswith("karma-validate-results: 3 valid, 0 not valid, 0 unreadable, "
                        "3 skipped\n")
    # Named on the command line, a file is always checked.
    code, _, err = validate(validator, root / "gbench.json")
    assert code == 1 and "schema_version: missing" in err


def test_several_paths_and_the_exit_code_of_the_worst(validator, tmp_path):
    bad = write(str(tmp_path / "bad.json"), json.dumps(doc_with(date="2024-02-30T00:00:00Z")))
    code, out, err = validate(validator, VALID, bad)
    assert code == 1
    assert f"{VALID}: valid karma results" in out and f"{bad}: date: " in err
    assert "1 valid, 1 not valid, 0 unreadable, 0 skipped" in out
    # What cannot be read was not checked: 2 wins over 1.
    code, out, err = validate(validator, VALID, bad, tmp_path / "missing.json")
    assert code == 2
    assert f"karma-validate-results: {tmp_path}/missing.json: no such file or directory" in err
    assert "1 valid, 1 not valid, 1 unreadable" in out


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
            (b"[" * 1000000 + b"]" * 1000000, "the document is not a JSON object"),
            (b'{"a":' * 100000 + b"1" + b"}" * 100000, "schema_version: missing"),
            (b'{"schema_version": 1e400}', "not JSON"),
            (b'{"schema_version": 18446744073709551616}', "schema_version: expected an integer"),
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


def test_any_value_anywhere_is_a_problem_not_an_abort(validator, tmp_path):
    """Every value of a results file, at every depth, replaced by every kind
    of JSON value: exit 1 (or 0 where the replacement is allowed), a summary
    of every file, never an abort."""
    valid = load_json(VALID)
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
    counts = re.search(r"(\d+) valid, (\d+) not valid, 0 unreadable, 0 skipped\n$", out)
    assert counts and int(counts.group(1)) + int(counts.group(2)) == n, out[-300:]
    assert int(counts.group(2)) > n // 2  # the rest: free-form parts (deck, problem)


@pytest.mark.parametrize("args, message", [
    ([], "no file or directory given"),
    ([VALID, "--ranks", "abc"], "--ranks 'abc' is not a whole number of ranks >= 1"),
    ([VALID, "--ranks", "0"], "--ranks '0' is not a whole number"),
    ([VALID, "--ranks", "99999999999999999999"], "--ranks '99999999999999999999' is not"),
    ([VALID, "--result", "MAYBE"], "--result 'MAYBE': expected PASSED or FAILED"),
    ([VALID, "--app", "nosuchapp"], "--app 'nosuchapp' is not a mini-app of the suite"),
    ([VALID, "--app"], "--app needs a value"),
    ([VALID, "--bogus"], "unknown option '--bogus'"),
], ids=["nothing", "ranks a word", "ranks zero", "ranks huge", "result", "app", "no value",
        "unknown option"])
def test_bad_usage_is_exit_2(validator, args, message):
    code, out, err = validate(validator, *args)
    assert code == 2 and out == ""
    assert err.startswith(f"karma-validate-results: {message}") and "\nusage: " in err, err


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
    assert "microbench" not in sources  # Google Benchmark JSON, not a results document
