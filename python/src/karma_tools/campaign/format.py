"""A campaign file's format (schemas/campaign.schema.json) and the check that says where a file
departs from it; Python checks only what the schema cannot (unique names, decks, programs)."""

import difflib
import json
import re
from karma_tools import schemas
from karma_tools.core import ToolError, shortened


_SCHEMA = schemas.load("campaign.schema.json").schema
_DEFS, _TOP = _SCHEMA["$defs"], _SCHEMA["properties"]

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?:\[([0-9]+)\])?\}")

TOP_KEYS = tuple(_TOP)
RUN_KEYS = tuple(_DEFS["run"]["properties"])
SCHEDULERS = tuple(_TOP["scheduler"]["enum"])
ENV_KEYS = tuple(_DEFS["environment"]["properties"])

# Counts beyond a C int mean a typo, and the mini-apps and launchers take ints.
INT_MAX = _DEFS["count"]["maximum"]
# More jobs than this is a typo too (repeat: 100000), and would take long to write.
MAX_JOBS = 10000

_WORDS = dict(schemas.TYPE_WORDS, object="a mapping", null="nothing")  # YAML's words


class Checker:
    """fail() raises ToolError (2) "file:line:col: path: message" at node (at_key: its key)."""

    def __init__(self, source):
        self.source = source

    def fail(self, node, path, message, at_key=False):
        line, col = (node.key_line, node.key_col) if at_key else (node.line, node.col)
        raise ToolError(f"{self.source}:{line}:{col}: {path}: {message}", 2)


def conform(check, root, validator):
    """Fails at the first place where root departs from validator's schema (strictly)."""
    found = [p for e in schemas.strict(validator).iter_errors(root.plain())
             for s in _specific(e) for p in _places(root, s)]
    if found:
        _, node, path, message, at_key = min(
            found, key=lambda p: (p[0], (p[1].key_line, p[1].key_col) if p[4] else
                                  (p[1].line, p[1].col)))
        check.fail(node, path, message, at_key)


def _specific(e):
    """The errors that say most of e: of an anyOf, those of the one branch fitting the value."""
    if e.validator not in ("anyOf", "oneOf") or not e.context:
        return [e]
    branches = {}
    for c in e.context:
        branches.setdefault(c.relative_schema_path[0], []).append(c)

    def fitting(kinds):
        return [b for b in branches.values()
                if not any(not c.relative_path and c.validator in kinds for c in b)]

    fit = fitting(("type", "enum", "const")) or fitting(("type",))
    return [s for c in fit[0] for s in _specific(c)] if len(fit) == 1 else [e]


def did_you_mean(word, choices, otherwise=""):
    """" (did you mean 'X'?)" naming the choice nearest word, else otherwise."""
    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else otherwise


def _places(root, e):
    """[(rank, node, path, message, at_key)] of one error: where it is and what."""
    node, path = root, list(e.absolute_path)
    for part in path:
        node = node.value[part]
    where, kind, want = schemas.dotted(path), e.validator, e.validator_value
    if "propertyNames" in e.absolute_schema_path:  # a key's name
        return [(0, node.value[e.instance], schemas.dotted(path + [e.instance]),
                 _message(e, node.value[e.instance], e.instance), True)]
    if kind == "additionalProperties":
        known = list(e.schema.get("properties", {}))
        listed = f" (known keys: {', '.join(known)})"
        return [(0, node.value[key], schemas.dotted(path + [key]),
                 "unknown key" + did_you_mean(key, known, listed), True)
                for key in node.value if key not in known]
    if kind == "required":  # after the rest: an unknown key may be the one missing
        return [(1, node, schemas.dotted(path + [k]), "is required", False)
                for k in want if k not in node.value]
    if kind == "dependentRequired":
        return [(0, node.value[k], schemas.dotted(path + [k]), f"needs `{d}:` beside it", False)
                for k, deps in want.items() if k in node.value for d in deps
                if d not in node.value]
    if kind == "uniqueItems":
        texts = [json.dumps(n.plain()) for n in node.value]
        i = next(i for i, t in enumerate(texts) if t in texts[:i])
        return [(0, node.value[i], f"{where}[{i}]",
                 f"'{shortened(node.value[i].text())}' is listed twice", False)]
    return [(0, node, where, _message(e, node, shortened(node.text())), False)]


def _message(e, node, text):
    kind, want = e.validator, e.validator_value
    if kind == "anyOf":
        types = [c.validator_value for c in e.context if c.validator == "type"]
        if len(types) == len(e.context):
            words = [_WORDS[t] for ts in types for t in (ts if isinstance(ts, list) else [ts])]
            return f"expected {' or '.join(dict.fromkeys(words))}, got {describe_node(node)}"
        return f"'{text}' is not {e.schema.get('description', 'valid here').split(': ')[0]}"
    if kind in ("enum", "const"):
        choices = [str(c) for c in (want if kind == "enum" else [want])]
        # A rule that holds only where another does (if/then) says why.
        why = e.schema.get("description") if "then" in e.absolute_schema_path else None
        return f"'{text}' is not one of: {', '.join(choices)}" + did_you_mean(text, choices) + \
            (f"; {why}" if why else "")
    if kind in ("minItems", "minLength", "minProperties"):
        keys = list(e.schema.get("properties", {}))
        return {"minItems": "the list is empty", "minLength": "must not be empty"}.get(
            kind, "is empty" + (f": name at least one of {', '.join(keys)}" if keys else ""))
    if kind == "not":
        return f"'{text}': {want.get('description', 'not allowed here')}"
    shown = f"'{text}'" if isinstance(node.value, str) else text
    return schemas.what(e, shown, describe_node(node), _WORDS)


def describe_node(node):
    v = node.value
    if isinstance(v, bool):
        return f"the boolean {node.raw}"
    if isinstance(v, (int, float)):
        return f"the number {shortened(node.raw)}"
    if isinstance(v, str):
        return f"the string '{shortened(v)}'"
    return {dict: "a mapping", list: "a list"}.get(type(v), "nothing")


def unique_name(check, node, path, seen):
    """The `name` at path, no other entry's; records it in seen (name -> path)."""
    name = node.text()
    if name in seen:
        check.fail(node, f"{path}.name", f"'{name}' is also the name of {seen[name]}")
    seen[name] = path
    return name


def item(node, i):
    """A list's i-th entry node; the node itself where one value stands for the list."""
    return node.value[i] if isinstance(node.value, list) else node


def strings(node, lines=False):
    """Strings (numbers as written) of a list or one value (lines: one per line)."""
    if isinstance(node.value, list):
        return [n.text() for n in node.value]
    if lines:
        return [line for line in node.text().split("\n") if line.strip()]
    return [node.text()]
