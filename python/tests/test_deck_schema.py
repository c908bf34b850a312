"""karma-<app> --help=json: a valid draft 2020-12 JSON Schema of the deck,
made from the same keys as --help (karma-batch reads either to the same
types), which the resolved deck of a real run satisfies and which refuses
what the mini-app refuses; karma-batch stops (exit 2, one line) on an executable whose
--help=json is not JSON."""

import json
import os
import shutil
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


def test_the_packaged_deck_schemas_are_the_mini_apps_own(stream_exe):
    """The tools take deck keys from the schema each mini-app exports, kept
    as package data: the packaged copy is what --help=json prints now, and
    every key has the words the reader's messages use."""
    from karma_tools.campaign import deck

    schema = deck_schema(stream_exe)
    assert deck.packaged("stream") == schema
    keys = deck.KeyLister().keys("stream")
    assert len(keys) > 5 and all(spec.get("x-karma-type") for spec in keys.values()), keys
    assert (keys["run.repetitions"]["type"], keys["run.repetitions"]["minimum"]) == ("integer", 1)
    assert keys["stream.layout"]["enum"] == ["left", "right"]
    assert keys.rules == schema["x-karma-yaml"]


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


def _without_mini_apps():
    """PATH without any folder that holds a karma-<app>."""
    from karma_tools import APPS

    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if not any(os.path.exists(os.path.join(p, f"karma-{a}")) for a in APPS)]
    return os.pathsep.join(keep)


def test_a_campaign_resolves_its_decks_with_no_mini_app_at_hand(tmp_path):
    """No karma-<app> in PATH and only stand-ins in --bin-dir (whose
    --help=json fails): generate still checks set/sweep keys and values
    against the packaged deck schemas (nested keys too), and writes a job's
    {KEY[i]} as the mini-app resolves it."""
    from conftest import stand_ins

    path = _without_mini_apps()
    assert shutil.which("karma-stream", path=path) is None
    bin_dir = stand_ins(tmp_path / "bin")

    def generate(stream_set, hexgrad_set):
        campaign = write(str(tmp_path / "c.yaml"), f"""\
name: x
scheduler: local
runs:
  - name: a
    app: stream
    deck: {SMALL_DECK}
    set: {stream_set}
    args: ["--tag={{stream.shape[0]}}"]
  - name: b
    app: hexgrad
    deck: {os.path.join(ROOT, "inputs", "hexgrad", "small.yaml")}
    set: {hexgrad_set}
""")
        return tool("karma-batch", "generate", campaign, "-o", tmp_path / "out", "--force",
                    "--bin-dir", bin_dir, env={"PATH": path})

    r = generate("{stream.shape: [2^20], run.energy: off}", "{hexgrad.point.xi: 0.5}")
    assert r.returncode == 0 and "could not list" not in r.stderr, r.stderr
    script = (tmp_path / "out" / "jobs" / "a.n1x1.sh").read_text()
    assert "--tag=1048576" in script and "'stream.shape=[2^20]'" in script, script
    for stream_set, hexgrad_set, message in [
            ("{stream.shape: [0]}", "{}", "c.yaml:7:25: runs[0].set.stream.shape: "
             "stream.shape=[0]: must be >= 1, got 0 (karma-stream --help)"),
            ("{stream.shape: [2^64]}", "{}", "'2^64' does not fit a 64-bit integer"),
            ("{stream.shaep: [8]}", "{}", "stream.shaep: not a deck key of karma-stream (did "
             "you mean 'stream.shape'?)"),
            ("{stream.shape: [8]}", "{hexgrad.point.xi: 2}",
             "runs[1].set.hexgrad.point.xi: hexgrad.point.xi=2: must be <= 1, got 2"),
            ("{stream.shape: [8]}", '["hexgrad.point.xi=\'0.5\'"]',
             "'0.5' is in quotes, which make it a string; write a number without them")]:
        r = generate(stream_set, hexgrad_set)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert message in r.stderr, r.stderr


# Texts that the deck reader takes or refuses, by what the grammar says.
GRAMMAR_CASES = [
    ("stream", "run.warmup", ["5", "+5", "-1", "2^10", "2^+3", "2^-1", "-2^3", "2^62", "2^63",
                              "-2^63", "9223372036854775807", "9223372036854775808",
                              "1" + "0" * 25, "0^0", "1^99", "00012", "1e3", "1.5", "0x10",
                              "1_000", "'5'", "abc", "2^", "^2"]),
    ("stream", "run.energy_window", ["0.5", ".5", "5.", "1e-1", "1E1", "0x1p-2", "0x.8",
                                     "1e999", "inf", "nan", "1_0", "'0.5'", "1e", "0x", "3601",
                                     "0.001", "+0.5", "2^1"]),
    ("stream", "stream.shape", ["[8]", "[2^10, 4, 4]", "[8, 8]", "[]", "8", "[0]", "[a]"]),
    ("matvec", "matvec.transpose", ["true", "True", "TRUE", "tRue", "yes", "on", "'true'", "1"]),
]


def test_the_packaged_grammar_agrees_with_the_mini_apps(tmp_path):
    """What the tools make of a --set value from the packaged schema alone is
    what the mini-app makes of it: taken or refused alike."""
    from karma_tools import yamlread
    from karma_tools.campaign import deck

    missing = str(tmp_path / "missing" / "r.json")
    disagree = []
    for app, key, texts in GRAMMAR_CASES:
        exe, keys = miniapp(app), deck.KeyLister().keys(app)
        for text in texts:
            taken = deck.problem(keys[key], yamlread.parse_value(text), keys.rules) is None
            r = run(exe, os.path.join(ROOT, "inputs", app, "small.yaml"), "--set",
                    f"{key}={text}", "--output", missing)
            assert r.returncode == 2, r.stderr  # the deck read, --output refused
            if taken != ("does not exist" in r.stderr):
                disagree.append(f"{key}={text}: tools {taken}, {r.stderr.strip()}")
    assert not disagree, "\n".join(disagree)
