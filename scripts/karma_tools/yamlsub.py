"""A strict reader for the subset of YAML that karma's campaign files use.

Python's standard library has no YAML parser, and the tools must run on a
login node with nothing but Python 3. This reader keeps the line and column of
every key and value, so every error can say "campaign.yaml:12:5: runs[0].nodes:
...". It accepts:

  * block mappings (``key: value``) and block sequences (``- item``), nested
    by indentation with spaces; a sequence may sit at its parent key's indent;
  * flow sequences ``[a, b, [c, d]]`` and flow mappings ``{a: 1, b: 2}``,
    which may span lines;
  * plain scalars, 'single-quoted' and "double-quoted" strings;
  * literal block scalars (``key: |``) for multi-line shell text;
  * ``#`` comments and one optional ``---`` document start.

Anything else (anchors, aliases, tags, folded ``>`` scalars, ``?`` keys,
several documents, tabs in indentation, duplicate keys, nesting deeper than
MAX_DEPTH) is refused with its position, never silently misread. Plain
scalars become int, float, bool or None the way YAML 1.2's core schema says;
``00:30:00`` stays a string.
"""

import re

from . import MAX_DEPTH

__all__ = ["Node", "YamlError", "parse", "parse_value", "load"]


class YamlError(Exception):
    """A syntax error at file:line:col."""

    def __init__(self, source, line, col, message):
        super().__init__(f"{source}:{line}:{col}: {message}")
        self.source, self.line, self.col, self.message = source, line, col, message


class Node:
    """A value with where it came from. ``value`` is a dict (str -> Node),
    a list of Nodes, or a scalar. ``key_line``/``key_col`` locate the key
    of a mapping entry; ``raw`` keeps a scalar's source text."""

    __slots__ = ("value", "line", "col", "key_line", "key_col", "raw", "quoted")

    def __init__(self, value, line, col, raw=None, quoted=False):
        self.value, self.line, self.col = value, line, col
        self.key_line, self.key_col = line, col
        self.raw, self.quoted = raw, quoted

    def plain(self):
        """The value with positions stripped (dicts, lists, scalars)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value

    def text(self):
        """The value as it would be written on a karma command line: flow
        lists as [a,b], scalars as written in the file."""
        if isinstance(self.value, list):
            return "[" + ",".join(v.text() for v in self.value) + "]"
        if isinstance(self.value, dict):
            return "{" + ",".join(f"{k}: {v.text()}" for k, v in self.value.items()) + "}"
        if self.quoted or self.raw is None:
            return str(self.value)
        return self.raw

    def __repr__(self):
        return f"Node({self.value!r} @{self.line}:{self.col})"


_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


def _resolve_plain(text):
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    try:
        if _INT.match(text):
            return int(text)
        if _HEX.match(text):
            return int(text, 16)
    except ValueError:  # beyond Python's digit limit for int(): no count is that long
        return text
    if _FLOAT.match(text):
        return float(text)
    if text in (".inf", "+.inf", ".Inf", "+.Inf"):
        return float("inf")
    if text in ("-.inf", "-.Inf"):
        return float("-inf")
    return text


class _Lines:
    """The document as (line number, indent, content) with comments and blank
    lines removed; content keeps its column."""

    def __init__(self, text, source):
        self.source = source
        self.raw = text.split("\n")
        self.items = []  # (lineno, indent, stripped text without comment)
        seen_content = False
        for number, line in enumerate(self.raw, start=1):
            if line.endswith("\r"):
                line = line[:-1]
            body = _strip_comment(line, source, number)
            if not body.strip():
                continue
            indent = len(body) - len(body.lstrip(" "))
            if body[indent:indent + 1] == "\t":
                raise YamlError(source, number, indent + 1,
                                "a tab in indentation; YAML indents with spaces")
            stripped = body.strip()
            if stripped == "---" and indent == 0:
                if seen_content:
                    raise YamlError(source, number, 1,
                                    "a second document ('---'): one campaign per file")
                continue
            if stripped == "..." and indent == 0:
                continue
            if stripped.startswith("%"):
                raise YamlError(source, number, indent + 1, "YAML directives are not supported")
            seen_content = True
            self.items.append((number, indent, body.rstrip()))


def _strip_comment(line, source, number):
    """The line without a trailing comment ('#' at the start or after a
    space, outside quotes)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                if quote == "'" and line[i + 1:i + 2] == "'":
                    i += 2
                    continue
                quote = None
        elif c in "'\"":
            # A quote only opens a string at the start of a scalar.
            before = line[:i].rstrip()
            if not before or before[-1] in ":-[{,?":
                quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
        i += 1
    return line


class _Parser:
    def __init__(self, text, source):
        self.source = source
        self.lines = _Lines(text, source)
        self.items = self.lines.items
        self.pos = 0
        self.depth = 0  # collections open around the one being read

    def error(self, line, col, message):
        raise YamlError(self.source, line, col, message)

    def enter(self, line, col):
        """One level deeper; refused past MAX_DEPTH, before Python's own
        recursion limit could turn a hostile file into a traceback."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error(line, col, f"nested more than {MAX_DEPTH} levels deep")

    # -- block structure ------------------------------------------------------

    def parse_document(self):
        if not self.items:
            return Node({}, 1, 1)
        number, indent, _ = self.items[0]
        node = self.parse_block(indent)
        if self.pos < len(self.items):
            number, indent, body = self.items[self.pos]
            self.error(number, indent + 1, "unexpected text (check the indentation)")
        return node

    def parse_block(self, indent):
        number, ind, body = self.items[self.pos]
        content = body[ind:]
        if content.startswith("- ") or content == "-":
            return self.parse_sequence(ind)
        return self.parse_mapping(ind)

    def parse_sequence(self, indent):
        number, _, _ = self.items[self.pos]
        self.enter(number, indent + 1)
        node = Node([], number, indent + 1)
        while self.pos < len(self.items):
            number, ind, body = self.items[self.pos]
            if ind < indent:
                break
            if ind > indent:
                self.error(number, ind + 1, "unexpected indentation inside a sequence")
            content = body[ind:]
            if not (content.startswith("- ") or content == "-"):
                break
            rest = content[1:]
            offset = ind + 1 + (len(rest) - len(rest.lstrip(" ")))
            rest = rest.strip()
            if not rest:
                self.pos += 1
                node.value.append(self.parse_nested(ind, number, offset))
                continue
            # "- key: value" starts a mapping whose keys sit at `offset`.
            if rest[0] not in "[{" and _mapping_key(rest) is not None:
                self.items[self.pos] = (number, offset, " " * offset + rest)
                node.value.append(self.parse_mapping(offset))
                continue
            self.pos += 1
            node.value.append(self.parse_inline_value(rest, number, offset + 1, ind))
        self.depth -= 1
        return node

    def parse_mapping(self, indent):
        number, _, _ = self.items[self.pos]
        self.enter(number, indent + 1)
        node = Node({}, number, indent + 1)
        while self.pos < len(self.items):
            number, ind, body = self.items[self.pos]
            if ind < indent:
                break
            if ind > indent:
                self.error(number, ind + 1, "unexpected indentation (a key indented deeper "
                           "than its neighbours?)")
            content = body[ind:]
            if content.startswith("- ") or content == "-":
                break
            if content.startswith("? "):
                self.error(number, ind + 1, "complex keys ('? ') are not supported")
            split = _mapping_key(content)
            if split is None:
                self.error(number, ind + 1,
                           f"expected 'key: value', got '{content}'")
            key_text, rest_at = split
            key = self.scalar_key(key_text, number, ind + 1)
            if key in node.value:
                first = node.value[key]
                self.error(number, ind + 1, f"duplicate key '{key}' (first at line "
                           f"{first.key_line})")
            rest = content[rest_at:]
            value_col = ind + rest_at + 1 + (len(rest) - len(rest.lstrip(" ")))
            rest = rest.strip()
            self.pos += 1
            if rest:
                value = self.parse_inline_value(rest, number, value_col, ind)
            else:
                value = self.parse_nested(ind, number, value_col, allow_same_indent_sequence=True)
            value.key_line, value.key_col = number, ind + 1
            node.value[key] = value
        self.depth -= 1
        return node

    def parse_nested(self, parent_indent, number, col, allow_same_indent_sequence=False):
        """The block value under a key or '-' with nothing after it."""
        if self.pos < len(self.items):
            n, ind, body = self.items[self.pos]
            content = body[ind:]
            is_seq = content.startswith("- ") or content == "-"
            if ind > parent_indent or (allow_same_indent_sequence and ind == parent_indent
                                       and is_seq):
                return self.parse_block(ind)
        return Node(None, number, col, raw="")

    def scalar_key(self, text, line, col):
        if text[0] in "'\"":
            value, end = _quoted(text, 0, self.source, line, col)
            if text[end:].strip():
                self.error(line, col, f"unexpected text after the quoted key {text!r}")
            return value
        if text[0] in "&*!|>[{":
            self.error(line, col, f"a key may not start with '{text[0]}'")
        return text

    def parse_inline_value(self, text, line, col, indent):
        first = text[0]
        if first in "&*":
            self.error(line, col, "anchors and aliases (& and *) are not supported")
        if first == "!":
            self.error(line, col, "tags ('!') are not supported")
        if first == ">":
            self.error(line, col, "folded scalars ('>') are not supported; use '|' or a list")
        if first == "|":
            if text not in ("|", "|-", "|+"):
                self.error(line, col, "block indicators after '|' are not supported")
            return self.block_literal(text, line, col, indent)
        if first in "[{":
            # A flow collection may continue on the following lines.
            full, lines_used = self.gather_flow(text, line, col)
            node, end = _Flow(full, self.source, line, col, self.depth).parse()
            if full[end:].strip():
                self.error(line, col + end, f"unexpected text after the closing bracket: "
                           f"'{full[end:].strip()}'")
            return node
        if first in "'\"":
            value, end = _quoted(text, 0, self.source, line, col)
            if text[end:].strip():
                self.error(line, col + end, "unexpected text after the closing quote")
            return Node(value, line, col, raw=text[:end], quoted=True)
        if ": " in text or text.endswith(":"):
            self.error(line, col, "a mapping cannot start on the same line as its key; "
                       "put it on the next lines, indented, or use { }")
        return Node(_resolve_plain(text), line, col, raw=text)

    def gather_flow(self, text, line, col):
        full = text
        used = 0
        while True:
            _, _, closed = _flow_depth(full)
            if closed:
                return full, used
            if self.pos >= len(self.items):
                self.error(line, col, f"unclosed '{text[0]}'")
            number, ind, body = self.items[self.pos]
            full += " " + body.strip()
            self.pos += 1
            used += 1

    def block_literal(self, indicator, line, col, indent):
        # Raw lines, comments included: a block scalar's text is verbatim.
        raw = self.lines.raw
        out = []
        block_indent = None
        last_line = line
        index = line  # raw is 0-based, `line` is the 1-based header
        while index < len(raw):
            text = raw[index].rstrip("\r")
            if text.strip() == "":
                out.append("")
                index += 1
                continue
            ind = len(text) - len(text.lstrip(" "))
            if ind <= indent:
                break
            if block_indent is None:
                block_indent = ind
            if ind < block_indent:
                break
            out.append(text[block_indent:])
            last_line = index + 1
            index += 1
        while self.pos < len(self.items) and self.items[self.pos][0] <= last_line:
            self.pos += 1
        while out and out[-1] == "":
            out.pop()
        value = "\n".join(out)
        if indicator != "|-" and out:
            value += "\n"
        return Node(value, line, col, raw=value, quoted=True)


def _flow_depth(text):
    depth, quote, i = 0, None, 0
    started = False
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
            started = True
        elif c in "]}":
            depth -= 1
            if depth == 0 and started:
                return depth, quote, True
        i += 1
    return depth, quote, False


def _mapping_key(content):
    """(key text, index after ':') when content is 'key: ...' or 'key:'."""
    if content[0] in "'\"":
        quote = content[0]
        i = 1
        while i < len(content):
            if content[i] == "\\" and quote == '"':
                i += 2
                continue
            if content[i] == quote:
                if quote == "'" and content[i + 1:i + 2] == "'":
                    i += 2
                    continue
                break
            i += 1
        rest = content[i + 1:]
        stripped = rest.lstrip(" ")
        if stripped.startswith(":") and (len(stripped) == 1 or stripped[1] == " "):
            colon = i + 1 + (len(rest) - len(stripped))
            return content[:i + 1], colon + 1
        return None
    if content[0] in "[{":
        return None
    m = re.search(r":( |$)", content)
    if not m:
        return None
    return content[:m.start()].rstrip(), m.start() + 1


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/",
            " ": " ", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}


def _quoted(text, start, source, line, col):
    """(string, index after the closing quote) for a quoted scalar at start."""
    quote = text[start]
    out = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if quote == "'" and c == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        if quote == '"' and c == '"':
            return "".join(out), i + 1
        if quote == '"' and c == "\\":
            e = text[i + 1:i + 2]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                i += 2
                continue
            if e in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[e]
                digits = text[i + 2:i + 2 + width]
                if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                    out.append(chr(int(digits, 16)))
                    i += 2 + width
                    continue
            raise YamlError(source, line, col + i, f"unknown escape '\\{e}' in a double-quoted "
                            "string")
        out.append(c)
        i += 1
    raise YamlError(source, line, col + start, f"unclosed {quote} quote")


class _Flow:
    """Flow collections: [a, b] and {k: v}, nested, on one logical line."""

    def __init__(self, text, source, line, col, depth=0):
        self.text, self.source, self.line, self.col = text, source, line, col
        self.depth = depth  # block collections around this one

    def enter(self, i):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error(i, f"nested more than {MAX_DEPTH} levels deep")

    def error(self, i, message):
        raise YamlError(self.source, self.line, self.col + i, message)

    def skip(self, i):
        while i < len(self.text) and self.text[i] == " ":
            i += 1
        return i

    def parse(self):
        return self.value(0)

    def value(self, i):
        i = self.skip(i)
        if i >= len(self.text):
            self.error(i, "a value is missing")
        c = self.text[i]
        if c == "[":
            return self.sequence(i)
        if c == "{":
            return self.mapping(i)
        if c in "'\"":
            s, end = _quoted(self.text, i, self.source, self.line, self.col)
            return Node(s, self.line, self.col + i, raw=self.text[i:end], quoted=True), end
        if c in "&*!|>":
            self.error(i, f"'{c}' is not supported here")
        j = i
        while j < len(self.text) and self.text[j] not in ",]}":
            if self.text[j] == ":" and self.text[j + 1:j + 2] in (" ", ",", "]", "}", ""):
                break
            j += 1
        raw = self.text[i:j].rstrip()
        if not raw:
            self.error(i, "an empty entry")
        return Node(_resolve_plain(raw), self.line, self.col + i, raw=raw), j

    def sequence(self, i):
        self.enter(i)
        node = Node([], self.line, self.col + i)
        i = self.skip(i + 1)
        if i < len(self.text) and self.text[i] == "]":
            self.depth -= 1
            return node, i + 1
        while True:
            item, i = self.value(i)
            node.value.append(item)
            i = self.skip(i)
            if i >= len(self.text):
                self.error(i, "unclosed '['")
            if self.text[i] == ",":
                i = self.skip(i + 1)
                if i < len(self.text) and self.text[i] == "]":
                    self.depth -= 1
                    return node, i + 1
                continue
            if self.text[i] == "]":
                self.depth -= 1
                return node, i + 1
            self.error(i, f"expected ',' or ']', got '{self.text[i]}'")

    def mapping(self, i):
        self.enter(i)
        node = Node({}, self.line, self.col + i)
        i = self.skip(i + 1)
        if i < len(self.text) and self.text[i] == "}":
            self.depth -= 1
            return node, i + 1
        while True:
            key_node, i = self.value(i)
            if isinstance(key_node.value, (list, dict)):
                self.error(i, "a key must be a scalar")
            key = key_node.raw if not key_node.quoted else key_node.value
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != ":":
                self.error(i, f"expected ':' after the key '{key}'")
            value, i = self.value(i + 1)
            value.key_line, value.key_col = key_node.line, key_node.col
            if key in node.value:
                self.error(key_node.col - self.col, f"duplicate key '{key}'")
            node.value[key] = value
            i = self.skip(i)
            if i >= len(self.text):
                self.error(i, "unclosed '{'")
            if self.text[i] == ",":
                i = self.skip(i + 1)
                continue
            if self.text[i] == "}":
                self.depth -= 1
                return node, i + 1
            self.error(i, f"expected ',' or '}}', got '{self.text[i]}'")


def parse_value(text, source="<value>", line=1, col=1):
    """One value as written after a key: a flow collection, a quoted or a
    plain scalar (how a mini-app reads the text of `--set key=text`)."""
    text = text.strip()
    if not text:
        return Node(None, line, col, raw="")
    return _Parser("", source).parse_inline_value(text, line, col, -1)


def parse(text, source="<string>"):
    """The document in `text` as a Node tree; `source` names it in errors."""
    return _Parser(text, source).parse_document()


def load(path):
    """The document in the file at `path` as a Node tree."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise YamlError(path, 1, 1, f"not UTF-8 text ({e.reason})") from None
    return parse(text, path)
