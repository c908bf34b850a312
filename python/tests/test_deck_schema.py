"""karma-<app> --help=json: a valid draft 2020-12 JSON Schema of the deck,
made from the same keys as --help (karma-batch reads either to the same
types), which the resolved deck of a real run satisfies and which refuses
what the mini-app refuses; karma-batch stops (exit 2, one line) on an executable whose
--help=json is not JSON."""

import json
import os
import stat
import subprocess

import jsonschema

from conftest import ROOT, miniapp, tool, write

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1")
SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")


def run(*argv):
    return subprocess.run(list(map(str, argv)), capture_output=True, text=True, timeout=120,
                          env=ENV, stdin=subprocess.DEVNULL)


def deck_schema(exe):
    r = run(exe, "--help=json")
    assert r.returncode == 0, r.stderr
    schema = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def test_every_key_of_the_schema_has_a_type_the_tools_check(stream_exe):
    """The tools take deck key types from --help=json alone: each is one they
    know, with its range or choices."""
    from karma_tools.campaign.deck import schema_types

    types = schema_types(deck_schema(stream_exe))
    assert len(types) > 5 and all(t is not None for t in types.values()), types
    assert (types["run.repetitions"].kind, types["run.repetitions"].lo) == ("integer", 1)
    assert types["stream.layout"].choices == ("left", "right")


def test_a_real_deck_validates_and_out_of_range_is_refused_by_both(stream_exe, tmp_path):
    validator = jsonschema.Draft202012Validator(deck_schema(stream_exe))
    out = tmp_path / "r.json"
    r = run(stream_exe, SMALL_DECK, "--quiet", "--set", "run.repetitions=2",
            "--set", "run.energy=off", "--output", out)
    assert r.returncode == 0, r.stderr
    resolved = json.load(open(out))["deck"]["resolved"]
    assert list(validator.iter_errors(resolved)) == []
    resolved["run"]["repetitions"] = 0
    assert [e.validator for e in validator.iter_errors(resolved)] == ["minimum"]
    r = run(stream_exe, SMALL_DECK, "--set", "run.repetitions=0")
    assert r.returncode == 2 and "run.repetitions: must be >= 1, got 0" in r.stderr
    resolved["run"]["repetitions"], resolved["stream"]["nosuchkey"] = 2, 1
    assert [e.validator for e in validator.iter_errors(resolved)] == ["additionalProperties"]


def test_microbench_selections_are_refused_by_both(tmp_path):
    """karma-microbench's selections are lists of choices: a real run's deck
    validates, and a family it does not have is refused by the schema and
    by the mini-app alike."""
    exe = miniapp("microbench")
    validator = jsonschema.Draft202012Validator(deck_schema(exe))
    deck, out = os.path.join(ROOT, "inputs", "microbench", "small.yaml"), tmp_path / "r.json"
    r = run(exe, deck, "--quiet", "--set", "microbench.benchmarks=[Sum3D]", "--output", out)
    assert r.returncode == 0, r.stderr
    resolved = json.load(open(out))["deck"]["resolved"]
    assert list(validator.iter_errors(resolved)) == []
    resolved["microbench"]["benchmarks"] = ["Sum4D"]
    assert [e.validator for e in validator.iter_errors(resolved)] == ["enum"]
    r = run(exe, deck, "--set", "microbench.benchmarks=[Sum4D]")
    assert r.returncode == 2 and "microbench.benchmarks: 'Sum4D' is not one of" in r.stderr


def test_batch_stops_on_an_executable_whose_schema_is_not_json(tmp_path):
    fake = write(str(tmp_path / "karma-fake"), "#!/bin/sh\necho 'deck keys: none'\n")
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: x
runs:
  - name: a
    app: stream
    deck: {SMALL_DECK}
    executable: {fake}
    set:
      stream.shape: [2^20]
""")
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "out")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and \
        f"{fake} --help=json: not a deck's JSON Schema" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_every_default_deck_writes_under_results():
    """README: results go under results/; the schema's default (".") would
    put them in the checkout's root."""
    from karma_tools import yamlread
    for app in sorted(os.listdir(os.path.join(ROOT, "inputs"))):
        deck = os.path.join(ROOT, "inputs", app, "default.yaml")
        if os.path.isfile(deck):
            run = yamlread.load(deck).value.get("run")
            value = run.value.get("results_dir") if run is not None else None
            assert value is not None and value.text() == "results", deck
