"""The campaign files' YAML reader: what it accepts, and where it says a
mistake is."""

import pytest

from karma_tools import yamlsub


def test_block_flow_and_scalars():
    doc = yamlsub.parse("""\
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
    with pytest.raises(yamlsub.YamlError) as e:
        yamlsub.parse(text, "bad.yaml")
    assert str(e.value).startswith(f"bad.yaml:{where}"), str(e.value)
    assert message in str(e.value)
