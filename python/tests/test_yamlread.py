"""The tools' YAML reader (ruamel.yaml underneath): what it accepts, what it
refuses and where it says a mistake is, and that YAML 1.1's spellings (on,
yes, 1:30, 010) keep the meaning they had in campaigns and decks."""

import os
import sys

import pytest
from conftest import ROOT, TOOLS_BIN, write

from karma_tools import ToolError
from karma_tools.campaign import campaign
from karma_tools.campaign import reference
from karma_tools import yamlread

DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")


def test_block_flow_and_scalars():
    doc = yamlread.parse("""\
# comment
---
name: x            # trailing comment
time: 00:30:00     # a string, not YAML 1.1's sexagesimal number
n: 4
f: 1.5e3
yes_: true
none:
quoted: "a # b"
single: 'it''s'
shape: [2^28]
nested: [[1, 2], [3]]
flow: {a: 1, b: [x, y]}
multi: [1,
  2]
runs:
- name: a
  set:
    - stream.shape=[2^28]
- name: b
setup: |
  module load x   # kept verbatim
  echo done
""", "c.yaml")
    assert doc.plain() == {
        "name": "x", "time": "00:30:00", "n": 4, "f": 1500.0, "yes_": True, "none": None,
        "quoted": "a # b", "single": "it's", "shape": ["2^28"], "nested": [[1, 2], [3]],
        "flow": {"a": 1, "b": ["x", "y"]}, "multi": [1, 2],
        "runs": [{"name": "a", "set": ["stream.shape=[2^28]"]}, {"name": "b"}],
        "setup": "module load x   # kept verbatim\necho done\n"}
    # Positions: line and column of values and keys, 1-based.
    assert (doc.value["n"].line, doc.value["n"].col) == (5, 4)
    runs = doc.value["runs"].value
    assert (runs[1].value["name"].key_line, runs[1].value["name"].key_col) == (20, 3)
    # Flow lists keep their text for --set: [2^28], not ['2^28'].
    assert doc.value["shape"].text() == "[2^28]"
    assert doc.value["nested"].text() == "[[1,2],[3]]"


@pytest.mark.parametrize("text, where, message", [
    ("a: 1\na: 2\n", "2:1", "duplicate key 'a' (first at line 1)"),
    ("a: {b: 1, c: 2, b: 3}\n", "1:17", "duplicate key 'b' (first at line 1)"),
    ("runs:\n  - name: a\n    app: x\n\n    name: b\n", "5:5",
     "duplicate key 'name' (first at line 2)"),
    ("a: x\n  y\n", "2:3", "unexpected indentation: this line would continue"),
    ("- a\n  - b\n", "2:3", "unexpected indentation"),
    ("a: 'x\n  y'\n", "1:4", "unclosed ' quote"),
    ("a: [1, 2\nb: 3\n", "1:8", "a ',' or the ']' closing the '[' at 1:4 is missing"),
    ("a:\n  b: 1\n c: 2\n", "3:2", "unexpected text (check the indentation)"),
    ("%YAML 1.1\n---\na: on\n", "1:1", "YAML directives are not supported"),
    ("{[a]: 1}\n", "1:2", "a key must be a scalar"),
    ("a: x\x01\n", "1:5", "a character YAML does not allow (U+0001)"),
    ("a:\n\t- x\n", "2:1", "a tab in indentation"),
    ("a: &anchor 1\n", "1:4", "anchors and aliases"),
    ("a: *alias\n", "1:4", "anchors and aliases"),
    ("a: !tag 1\n", "1:4", "tags"),
    ("a: >\n  folded\n", "1:4", "folded scalars"),
    ("a: b: c\n", "1:4", "a mapping cannot start on the same line"),
    ("a: 1\n  b: 2\n", "2:3", "unexpected indentation"),
    ("a: 'open\n", "1:4", "unclosed ' quote"),
    ("a: [1,,2]\n", "1:7", "an empty entry"),
    ("a: [1, 2\n", "1:", "unclosed"),
    ("a: 1\n---\nb: 2\n", "2:1", "a second document"),
    ('a: "\\q"\n', "1:", "unknown escape"),
    ("just text\n", "1:1", "expected 'key: value'"),
])
def test_errors_name_file_line_and_column(text, where, message):
    with pytest.raises(yamlread.YamlError) as e:
        yamlread.parse(text, "bad.yaml")
    assert str(e.value).startswith(f"bad.yaml:{where}"), str(e.value)
    assert message in str(e.value)


def test_yaml_1_1_spellings_keep_their_meaning():
    doc = yamlread.parse("""\
energy: on          # a deck's run.energy: the string a mini-app reads
off_: off
flags: [yes, no, Y, On, OFF]
time: 1:30          # MM:SS, not YAML 1.1's sexagesimal 90
day: 2024-01-01     # no timestamp
big: 1_000          # no digit separators
octal: 0o17
leading_zero: 010
exp: 1e3
hex: 0x1F
""", "d.yaml").plain()
    assert doc["energy"] == "on" and doc["off_"] == "off"
    assert doc["flags"] == ["yes", "no", "Y", "On", "OFF"]
    assert (doc["time"], doc["day"], doc["big"], doc["octal"]) == \
        ("1:30", "2024-01-01", "1_000", "0o17")
    assert not isinstance(doc["leading_zero"], int)  # neither 8 (1.1) nor 10 (1.2)
    assert (doc["exp"], doc["hex"]) == (1000.0, 31)


def test_values_keep_their_text_and_position():
    doc = yamlread.parse("set: {run.tolerance: 1.50, run.energy: off, n: 1e3}\n")
    entries = doc.value["set"].value
    assert [v.text() for v in entries.values()] == ["1.50", "off", "1e3"]
    assert (entries["run.energy"].key_line, entries["run.energy"].key_col) == (1, 28)
    assert (entries["n"].line, entries["n"].col) == (1, 48)
    # A --set value read at its place in the campaign: positions stay the file's.
    value = yamlread.parse_value("[2^28, 4]", "c.yaml", 7, 20)
    assert value.text() == "[2^28,4]" and (value.value[1].line, value.value[1].col) == (7, 27)
    with pytest.raises(yamlread.YamlError) as e:
        yamlread.parse_value("{a: 1, a: 2}", "c.yaml", 7, 20)
    assert str(e.value) == "c.yaml:7:27: duplicate key 'a' (first at line 7)"
    with pytest.raises(yamlread.YamlError) as e:
        yamlread.parse_value("[1, 2", "c.yaml", 7, 20)
    assert str(e.value) == "c.yaml:7:20: unclosed '['"


def _campaign(tmp_path, text):
    path = str(tmp_path / "c.yaml")
    write(path, "name: x\nscheduler: local\n" + text)
    return campaign.load(path, out_dir=str(tmp_path / "out"), check_keys=False,
                         tool_dir=TOOLS_BIN)


def _refused(tmp_path, text):
    with pytest.raises(ToolError) as e:
        _campaign(tmp_path, text)
    assert e.value.code == 2
    assert "\n" not in str(e.value)
    return str(e.value)


def test_campaigns_read_yaml_1_1_spellings_as_before(tmp_path):
    run = f"runs:\n  - name: a\n    app: stream\n    deck: {DECK}\n"
    camp = _campaign(tmp_path, "time: 1:30\nenvironment: {variables: {FLAG: yes}}\n" + run
                     + "    set: {run.energy: off}\n    sweep: {stream.layout: [on, no]}\n"
                     "compare:\n  - name: c\n    numerator: {deck: {run.energy: on}}\n"
                     "    denominator: {run: a}\n")
    job = camp.jobs[0]
    assert job.time == "00:01:30"  # not 90 minutes
    assert job.environment.variables == {"FLAG": "yes"}
    assert [j.overrides for j in camp.jobs] == [["run.energy=off", "stream.layout=on"],
                                                ["run.energy=off", "stream.layout=no"]]
    assert camp.compare[0]["numerator"]["deck"] == {"run.energy": "on"}
    # Where a value must be a boolean or a count, 1.1's spellings are refused.
    assert _refused(tmp_path, "slurm: {exclusive: yes}\n" + run) == \
        f"{tmp_path}/c.yaml:3:20: slurm.exclusive: expected true or false, got the string 'yes'"
    assert _refused(tmp_path, run + "    nodes: 010\n").endswith(
        ":7:12: runs[0].nodes: expected an integer or a string or a list, got the number 010")


def test_campaign_syntax_errors_are_one_line_at_their_place(tmp_path):
    run = f"runs:\n  - name: a\n    app: stream\n    deck: {DECK}\n"
    assert _refused(tmp_path, run + "    app: mgs\n") == \
        f"{tmp_path}/c.yaml:7:5: YAML syntax error: duplicate key 'app' (first at line 5)"
    assert _refused(tmp_path, run + "    set: &s [a=1]\n").endswith(
        ":7:10: YAML syntax error: anchors and aliases (& and *) are not supported")


def test_decks_read_by_reference_runs(tmp_path):
    deck = str(tmp_path / "deck.yaml")
    write(deck, "run:\n  energy: on\n  repetitions: 5\nstream:\n  shape: [2^10]\n")
    resolved = reference.resolve_deck(deck, ["run.energy=off", "stream.layout=left"])
    assert resolved == {"run": {"energy": "off", "repetitions": 5},
                        "stream": {"shape": [1024], "layout": "left"}}
    write(deck, "run:\n  energy: on\n  energy: off\n")
    with pytest.raises(ToolError) as e:
        reference.resolve_deck(deck, [])
    assert "deck.yaml:3:3: duplicate key 'energy' (first at line 2)" in str(e.value)


def test_a_python_without_ruamel_is_told_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ruamel.yaml", None)  # import fails
    with pytest.raises(ToolError) as e:
        yamlread.parse("a: 1\n")
    assert e.value.code == 3 and "install python3-ruamel.yaml" in str(e.value)
