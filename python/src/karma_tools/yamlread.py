"""The tools' YAML files (campaigns, decks) as Node trees that keep each key's and value's line
and column. Built from ruamel.yaml's parser events: its loaders lose a plain scalar's text as
written (`1e3`, `2^28`), allow duplicate keys and recurse without limit. Refused, with their
position: duplicate keys, anchors, aliases, tags, folded or multi-line scalars, non-scalar keys,
directives, several documents, nesting past MAX_DEPTH. Plain scalars are typed by YAML 1.2's core
schema: `on`, `off`, `yes`, `no` and `00:30:00` stay strings."""

import collections
import re
import sys

from karma_tools.core import MAX_DEPTH, ToolError, shortened


class YamlError(Exception):
    """A syntax error at file:line:col (1-based)."""

    def __init__(self, source, line, col, message):
        super().__init__(f"{source}:{line}:{col}: {message}")
        self.source, self.line, self.col, self.message = source, line, col, message


class Node:
    """A value (dict of str -> Node, list of Nodes, or scalar) with where it came from, its
    mapping key's place (key_line, key_col) and a scalar's source text (raw)."""

    __slots__ = ("value", "line", "col", "key_line", "key_col", "raw", "quoted")

    def __init__(self, value, line, col, raw=None, quoted=False):
        self.value, self.line, self.col, self.raw, self.quoted = value, line, col, raw, quoted
        self.key_line, self.key_col = line, col

    def plain(self):
        """The value with positions stripped (dicts, lists, scalars)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value

    def text(self):
        """The value as a karma command line writes it: [a,b], scalars as in the file."""
        if isinstance(self.value, list):
            return "[" + ",".join(v.text() for v in self.value) + "]"
        if isinstance(self.value, dict):
            return "{" + ",".join(f"{k}: {v.text()}" for k, v in self.value.items()) + "}"
        return str(self.value) if self.quoted or self.raw is None else self.raw


# Decimal without leading zeros, or hex: int(text, 0) reads both.
_INT = re.compile(r"^([-+]?(0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_CONSTANTS = {**dict.fromkeys(("", "~", "null", "Null", "NULL")),
              **dict.fromkeys(("true", "True", "TRUE"), True),
              **dict.fromkeys(("false", "False", "FALSE"), False),
              **{s + t: float(s + "inf") for s in ("", "+", "-") for t in (".inf", ".Inf")}}


def resolve_plain(text):
    """A plain scalar's value by YAML 1.2's core schema, else the text; 010 is no int (1.1: 8)."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if _INT.match(text):
        try:
            return int(text, 0)
        except ValueError:  # beyond Python's digit limit for int(): no count is that long
            return text
    return float(text) if _FLOAT.match(text) else text


class _Builder:
    """Node trees from ruamel's parser events; `at`: a 0-based mark's 1-based (line, col)."""

    def __init__(self, text, source, at):
        self.text, self.source, self.at = text, source, at
        self.lines = text.split("\n")
        # Open collections, innermost last: [node, pending (key, line, col) or None, flow?].
        self.stack, self.root = [], None

    def error(self, mark, message):
        raise YamlError(self.source, *self.at(mark), message)

    def run(self):
        try:
            import ruamel.yaml as ruamel_yaml
        except ImportError:
            raise ToolError(f"reading YAML needs the Python module ruamel.yaml, which "
                            f"{sys.executable} lacks: install python3-ruamel.yaml (Debian) or "
                            "ruamel.yaml (pip)", 3) from None
        try:
            for event in ruamel_yaml.YAML(typ="rt", pure=True).parse(self.text):
                self.event(event, ruamel_yaml.events)
        except ruamel_yaml.error.MarkedYAMLError as e:
            self.syntax_error(e)
        except ruamel_yaml.reader.ReaderError as e:
            # A character YAML does not allow (control characters), by index.
            before = self.text[:e.position]
            self.error(_Mark(before.count("\n"), e.position - (before.rfind("\n") + 1)),
                       f"a character YAML does not allow (U+{e.character:04X})")
        except ruamel_yaml.error.YAMLError as e:
            self.error(_Mark(0, 0), " ".join(str(e).split()))
        return self.root

    def event(self, event, ev):
        if isinstance(event, ev.DocumentStartEvent):
            if self.root is not None:  # every document has a node, an empty one too
                self.error(event.start_mark, "a second document ('---'): a karma file holds one")
            if event.version is not None or event.tags:
                first = next(i for i, t in enumerate(self.lines) if t.startswith("%"))
                self.error(_Mark(first, 0), "YAML directives are not supported")
            return
        if isinstance(event, ev.AliasEvent) or getattr(event, "anchor", None) is not None:
            self.error(event.start_mark, "anchors and aliases (& and *) are not supported")
        if isinstance(event, ev.NodeEvent) and event.tag is not None:
            self.error(event.start_mark, "tags ('!') are not supported")
        if isinstance(event, ev.ScalarEvent):
            self.attach(self.scalar(event), event)
        elif isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
            if len(self.stack) >= MAX_DEPTH:
                self.error(event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
            line, col = self.at(event.start_mark)
            node = Node({} if isinstance(event, ev.MappingStartEvent) else [], line, col)
            self.attach(node, event)
            self.stack.append([node, None, bool(event.flow_style)])
        elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
            self.stack.pop()

    def scalar(self, event):
        line, col = self.at(event.start_mark)
        style = event.style
        if style == ">":
            self.error(event.start_mark, "folded scalars ('>') are not supported; use '|' or "
                       "a list")
        if style == "|":
            return Node(event.value, line, col, raw=event.value, quoted=True)
        if event.end_mark.line != event.start_mark.line:
            if style:
                self.error(event.start_mark, f"unclosed {style} quote (a quoted value ends on "
                           "its line)")
            # YAML joins the lines; a slip or a missing bracket is likelier than intent.
            flows = [node for node, _, flow in self.stack if flow]
            if flows:
                pair = "{}" if isinstance(flows[-1].value, dict) else "[]"
                self.error(event.start_mark, f"the value '{shortened(event.value, 40)}' runs "
                           f"over lines {line}-{self.at(event.end_mark)[0]}: a ',' or the "
                           f"'{pair[1]}' closing the '{pair[0]}' at {flows[-1].line}:"
                           f"{flows[-1].col} is missing")
            below = event.start_mark.line + 1
            text = self.lines[below]
            self.error(_Mark(below, len(text) - len(text.lstrip())),
                       f"unexpected indentation: this line would continue the value of line "
                       f"{line} ('{shortened(event.value, 40)}'); indent it like its "
                       "neighbours, or quote the value on one line")
        raw = self.text[event.start_mark.index:event.end_mark.index] if style else event.value
        value = event.value if style else resolve_plain(event.value)
        return Node(value, line, col, raw=raw, quoted=bool(style))

    def attach(self, node, event):
        if not self.stack:
            self.root = node
            return
        parent, pending, _ = entry = self.stack[-1]
        if isinstance(parent.value, list):
            parent.value.append(node)
        elif pending is None:
            if isinstance(node.value, (dict, list)):
                self.error(event.start_mark, "a key must be a scalar")
            key = node.value if node.quoted else node.raw
            if key == "":
                self.error(event.start_mark, "a key is missing before ':'")
            if key in parent.value:
                self.error(event.start_mark, f"duplicate key '{key}' (first at line "
                           f"{parent.value[key].key_line})")
            entry[1] = (key, node.line, node.col)
        else:
            key, node.key_line, node.key_col = pending
            parent.value[key] = node
            entry[1] = None

    def syntax_error(self, e):
        """ruamel's error as one line at its position, in plain words for usual mistakes."""
        problem, context = e.problem or "", e.context or ""
        mark, context_mark = e.problem_mark or e.context_mark, e.context_mark
        if mark is None:
            self.error(_Mark(0, 0), problem or context)
        line_text = self.lines[mark.line] if mark.line < len(self.lines) else ""
        indent = _Mark(mark.line, len(line_text) - len(line_text.lstrip()))
        if "'\\t' that cannot start any token" in problem and not line_text[:mark.column].strip():
            self.error(mark, "a tab in indentation; YAML indents with spaces")
        if "quoted scalar" in context and "end of stream" in problem and context_mark:
            quote = self.lines[context_mark.line][context_mark.column]
            self.error(context_mark, f"unclosed {quote} quote")
        if "unknown escape character" in problem:
            self.error(mark, "unknown escape '\\" + problem.split("'")[1] + "' in a "
                       "double-quoted string")
        if "mapping values are not allowed here" in problem:
            # `a: b: c` has a key before the value; `  b: 2` under `a: 1` not.
            key = re.match(r"^(.*?:) +", line_text[:mark.column])
            if key:
                self.error(_Mark(mark.line, key.end()), "a mapping cannot start on the same "
                           "line as its key; put it on the next lines, indented, or use { }")
            self.error(indent, "unexpected indentation (a key indented deeper than its "
                       "neighbours?)")
        if "expected the node content, but found ','" in problem:
            self.error(mark, "an empty entry")
        flows = [node for node, _, flow in self.stack if flow]
        if "<stream end>" in problem and flows:
            raise YamlError(self.source, flows[-1].line, flows[-1].col, "unclosed '"
                            + ("{" if isinstance(flows[-1].value, dict) else "[") + "'")
        if problem.startswith("expected <block end>"):
            self.error(indent, "unexpected text (check the indentation)")
        if problem and context and context_mark is not None and context_mark is not mark:
            problem = "{} ({} at {}:{})".format(problem, context, *self.at(context_mark))
        self.error(mark, problem or context)


# A 0-based position, as ruamel's marks give one.
_Mark = collections.namedtuple("_Mark", "line column")


def parse(text, source="<string>"):
    """The document in `text` as a Node tree (empty: a mapping); `source` names it."""
    root = _Builder(text, source, lambda m: (m.line + 1, m.column + 1)).run()
    if root is None or (root.value is None and root.raw == ""):
        return Node({}, 1, 1)
    if not isinstance(root.value, (dict, list)):
        raise YamlError(source, root.line, root.col,
                        f"expected 'key: value', got '{shortened(root.text(), 40)}'")
    return root


def leaves(node, prefix=""):
    """{dotted key: Node} of a parsed mapping's leaves (a list is a leaf)."""
    out = {}
    for key, child in node.value.items():
        path = f"{prefix}{key}"
        if isinstance(child.value, dict) and child.value:
            out.update(leaves(child, path + "."))
        else:
            out[path] = child
    return out


def parse_value(text, source="<value>", line=1, col=1):
    """One value as written after a key (`--set key=text`), errors placed at `line`:`col`."""
    text = text.strip()
    prefix = "value: "  # the text as the value of a one-key document

    def at(mark):
        if mark.line == 0:
            return line, col + max(mark.column - len(prefix), 0)
        return line + mark.line, mark.column + 1

    root = _Builder(prefix + text, source, at).run()
    if len(root.value) != 1:
        extra = list(root.value.values())[1]
        raise YamlError(source, extra.key_line, extra.key_col, "unexpected text after the value")
    return root.value["value"]


def load(path):
    """The document in the file at `path` as a Node tree."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise YamlError(path, 1, 1, f"not UTF-8 text ({e.reason})") from None
    return parse(text, path)
