"""karma_tools/schemas/campaign.schema.json, the campaign file's format:
every campaign file under campaigns/ conforms; campaign.py reads its keys,
choices and patterns from it and checks every file against it last; and
campaigns that campaign.py refuses for their shape the schema refuses too,
and the other way round.
karma-batch generate stops on them with exit 2 and one line naming
file:line:col and the key, writing nothing."""

import glob
import json
import os
import re

import pytest

from conftest import DATA, ROOT, stand_in_bin, tool, write
from karma_tools import ToolError
from karma_tools.campaign import campaign
from karma_tools import schemas
from karma_tools import yamlread

SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")
# procurement/disclosure.yaml is karma-bundle's disclosure template, no campaign.
CAMPAIGNS = sorted([p for p in glob.glob(os.path.join(ROOT, "campaigns", "**", "*.yaml"),
                                         recursive=True)
                    if os.path.basename(p) != "disclosure.yaml"]
                   + [os.path.join(DATA, "campaigns", "example.yaml")])


@pytest.fixture(scope="module")
def validator():
    # load() checks the file against draft 2020-12 (exit 2 on a wrong schema).
    return schemas.load("campaign.schema.json")


def read(path_or_text, source="c.yaml"):
    if os.path.isfile(path_or_text):
        with open(path_or_text, encoding="utf-8") as f:
            path_or_text, source = f.read(), path_or_text
    return yamlread.parse(path_or_text, source).plain()


@pytest.mark.parametrize("path", CAMPAIGNS, ids=[os.path.relpath(c, ROOT) for c in CAMPAIGNS])
def test_shipped_campaigns_conform(validator, path):
    assert schemas.problems(validator, read(path)) == []


def test_the_schema_has_the_last_word(tmp_path, monkeypatch):
    """After campaign.py's own checks, the whole file is checked against the
    schema: what only the schema refuses is refused too, at file:line:col."""
    import jsonschema

    strict = json.loads(json.dumps(schemas.load("campaign.schema.json").schema))
    strict["properties"]["name"]["maxLength"] = 3
    validator = jsonschema.Draft202012Validator(strict)
    monkeypatch.setattr(schemas, "load", lambda name: validator)
    path = write(str(tmp_path / "c.yaml"), "name: longer\nscheduler: local\nruns:\n" + RUN)
    with pytest.raises(ToolError) as e:
        campaign.load(path, out_dir=str(tmp_path / "out"), check_keys=False)
    assert str(e.value).startswith(f"{path}:1:7: name: "), str(e.value)
    assert e.value.code == 2 and "\n" not in str(e.value)
    write(path, "name: abc\nscheduler: local\nruns:\n" + RUN)
    assert campaign.load(path, out_dir=str(tmp_path / "out"), check_keys=False).name == "abc"


RUN = f"  - name: a\n    app: stream\n    deck: {SMALL_DECK}\n"
COMPARE = "compare:\n  - name: c\n    numerator: {run: a}\n    denominator: {run: a}\n"

# (what the campaign adds to a correct one, whether it is right); each is
# one of the campaign's own checks that a schema can state.
TOP_CASES = [
    ("time: 30", True), ("time: '1-02:00:00'", True), ("time: '90:00'", True),
    ("time: '1:60'", False), ("time: '1:00:60'", False), ("time: '00:00:00'", False),
    ("time: '1-00:00'", False), ("time: 0", False),
    ("ranks_per_node: [1, 2]", True), ("ranks_per_node: [1, 1]", False),
    ("ranks_per_node: []", False), ("ranks_per_node: 2147483648", False),
    ("gpus_per_rank: 0", True), ("gpus_per_rank: -1", False), ("cpus_per_rank: 0", False),
    ("launcher: 'mpiexec -n {ranks} --map-by {ranks_per_node}'", True),
    ("launcher: foo", False), ("launcher: 'mpiexec -n {rank}'", False),
    ("environment:", True), ("environment: {setup: 'a\\nb', modules: [gcc/12]}", True),
    ("environment: {modules: 'gcc 12'}", False), ("environment: {variables: {1A: x}}", False),
    ("environment: {variables: {A: [1]}}", False), ("environment: []", False),
    ("slurm: {account: 12345, exclusive: true, extra: ['--mail-type=NONE']}", True),
    ("slurm: {extra: x}", False), ("slurm: {exclusive: yes}", False),
    ("slurm: {partition: ''}", False),
    ("pbs: {flavor: torque, place: 'scatter:excl'}", True), ("pbs: {flavor: slurm}", False),
    ("variables: {a: 1}", True), ("variables: {inputs: x}", False), ("variables: {a: }", False),
    ("round_order: random", False), ("results_dir:", True), ("results_dir: ''", False),
    ("name: -x", False), ("compare: []", False),
]
RUN_CASES = [
    ("nodes: [1, 2]", True), ("nodes: [1, 1]", False), ("nodes: 0", False),
    ("repeat: 2", True), ("repeat: '2'", False),
    ("scaling: [weak, strong]", True), ("scaling: [weak, weak]", False), ("scaling: []", False),
    ("scaling_key: scaling", False),
    ("set: ['stream.shape=[2^20]']", True), ("set: {stream.shape: [2^20]}", True),
    ("set: [shape]", False), ("set: {shape: 1}", False), ("set: {stream.shape: }", False),
    ("set:", False), ("set: ['stream.shape= ']", False),
    ("sweep: {run.repetitions: [1, 2]}", True), ("sweep: {run.repetitions: []}", False),
    ("sweep: {}", False), ("sweep: {run.repetitions: [1, 1]}", False),
    ("sweep: {run.repetitions: 1}", False),
    ("args: [-n, 100]", True), ("args: [--output=a]", False), ("args: [-o, a]", False),
    ("args: ['']", False), ("reference: babelstream\n    executable: x", True),
    ("reference: babelstream", False), ("reference: other\n    executable: x", False),
    ("executable: ''", False),
    ("min_ranks: 2", True), ("min_ranks: 0", False),
    ("each_device: 2\n    gpus_per_rank: 0", True),
    ("each_device: '2'", False), ("nodes: '{n'", False), ("nodes: ['{n}']", False),
]
APP_CASES = [("app: mine\n    executable: x", True), ("app: mine", False),
             ("app: Stream\n    executable: x", False)]
COMPARE_CASES = [
    ("metric: bandwidth_GBps.best", True), ("metric: 1x", False),
    ("higher_is_better: 1", False), ("match: stream.shape", True), ("match: [shape]", False),
    ("same_kernel: no", False), ("aggregate: [worst, median]", True), ("aggregate: []", False),
    ("aggregate: [mean]", False), ("title: ''", False),
    ("numerator: {}", False), ("numerator: {run: []}", False),
    ("numerator: {kernel: copy, deck: {stream.shape: '[2^20]'}}", True),
    ("numerator: {deck: {}}", False), ("numerator: {deck: {shape: 1}}", False),
]


def agreement_cases():
    for text, ok in TOP_CASES:
        head = "" if text.startswith("name:") else "name: x\n"  # a key twice is a YAML error
        yield text, f"{head}{text}\nruns:\n{RUN}", ok
    for text, ok in RUN_CASES:
        yield "runs[0]." + text, f"name: x\nruns:\n{RUN}    {text}\n", ok
    for text, ok in APP_CASES:
        yield "runs[0]." + text, f"name: x\nruns:\n  - name: a\n    deck: {SMALL_DECK}\n" \
            f"    {text}\n", ok
    for text, ok in COMPARE_CASES:
        body = COMPARE.replace("    numerator: {run: a}\n", "") if text.startswith(
            "numerator") else COMPARE
        yield "compare[0]." + text, f"name: x\nruns:\n{RUN}{body}    {text}\n", ok


def test_schema_and_campaign_py_accept_and_refuse_alike(validator, tmp_path):
    path = str(tmp_path / "c.yaml")
    wrong = []
    for label, text, ok in agreement_cases():
        write(path, text)
        try:
            campaign.load(path, out_dir=str(tmp_path / "out"), check_keys=False)
            tool_ok, why = True, ""
        except ToolError as e:
            tool_ok, why = False, str(e)
        problems = schemas.problems(validator, read(text))
        if tool_ok != ok or (not problems) != ok:
            wrong.append(f"{label}: expected {'right' if ok else 'wrong'}; campaign.py: "
                         f"{why or 'right'}; schema: {problems or 'right'}")
    assert wrong == []
    assert not os.path.exists(tmp_path / "out")  # load() writes nothing


# Wrong campaigns through karma-batch generate: (text, the line:col and key
# karma-batch names).
BAD = [
    ("unknown key", "name: x\nrunz: 1\nruns:\n{run}", "2:1", "runz"),
    ("unknown run key", "name: x\nruns:\n{run}    nodez: 2\n", "6:5", "runs[0].nodez"),
    ("wrong type", "name: x\ngpus_per_rank: two\nruns:\n{run}", "2:16", "gpus_per_rank"),
    ("bad enum", "name: x\nscheduler: lsf\nruns:\n{run}", "2:12", "scheduler"),
    ("bad aggregate", "name: x\nruns:\n{run}compare:\n  - name: c\n    numerator: {{run: a}}\n"
     "    denominator: {{run: a}}\n    aggregate: [worst, mean]\n", "10:24",
     "compare[0].aggregate[1]"),
    ("repeat 0", "name: x\nruns:\n{run}    repeat: 0\n", "6:13", "runs[0].repeat"),
]


def names(problem, key):
    """Whether the schema's problem line is about key: at it, or an unknown
    key named in its mapping's line."""
    key = re.sub(r"\[[0-9]+\]$", "", key)  # the schema names the list, karma-batch the entry
    parent, _, leaf = key.rpartition(".")
    return problem.startswith(f"{key}:") or \
        (problem.startswith(f"{parent}:") and f"'{leaf}'" in problem)


@pytest.mark.parametrize("case, text, line_col, key", BAD, ids=[b[0] for b in BAD])
def test_wrong_campaigns_are_refused_by_schema_and_karma_batch(
        validator, tmp_path, case, text, line_col, key):
    text = text.format(run=RUN.replace("{", "{{").replace("}", "}}"))
    campaign_file = write(str(tmp_path / "c.yaml"), text)
    problems = schemas.problems(validator, read(text))
    assert any(names(p, key) for p in problems), problems

    r = tool("karma-batch", "generate", campaign_file, "-o", tmp_path / "out", "--no-key-check",
             "--bin-dir", stand_in_bin())
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"karma-batch: error: {campaign_file}:{line_col}: {key}: "), \
        r.stderr
    assert sorted(os.listdir(tmp_path)) == ["c.yaml"]  # nothing written
