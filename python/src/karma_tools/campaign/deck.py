"""Decks of a campaign's runs, checked and resolved by the mini-apps' deck schemas (`karma-<app>
--help=json`, packaged by karma-docs) and the YAML grammar they state (`x-karma-yaml`)."""

import functools
import json
import math
import os
import re
import shutil
import subprocess
from karma_tools.core import ToolError, shortened
from karma_tools.results import kerneltable


def packaged(app):
    """The deck schema a mini-app of the suite exported (package data), or None."""
    return kerneltable.release(kerneltable.HEAD).get(app)


@functools.lru_cache(maxsize=None)
def grammar():
    """The packaged YAML grammar (one core reads every mini-app's deck)."""
    for schema in kerneltable.release(kerneltable.HEAD).values():
        if schema.get("x-karma-yaml"):
            return schema["x-karma-yaml"]
    raise ToolError(f"{kerneltable.DATA}/head.json: no mini-app's deck grammar "
                    "(run karma-docs)", 3)


class Keys(dict):
    """{deck key: its JSON Schema}; rules: the grammar its values are read by."""
    rules = None


class KeyLister:
    """Deck keys of the runs' mini-apps (keys(), cached; runs: {run: its keys}) from package
    data or `executable --help=json`; output that is no deck schema is a ToolError (2)."""

    def __init__(self):
        self.cache, self.runs, self.warnings = {}, {}, []

    def keys(self, app, executable=None):
        """None where the keys cannot be listed (a warning says so)."""
        source = executable or app
        if source not in self.cache:
            schema = _ask(executable) if executable else packaged(app)
            try:  # a schema of no keys lists none
                keys = self.cache[source] = Keys(_leaves(schema)) or None if schema else None
            except ValueError as e:
                raise ToolError(f"{source} --help=json: not a deck's JSON Schema ({e})",
                                2) from None
            if not keys:
                self.warnings.append(f"could not list the deck keys of {source} (its "
                                     "--help=json failed); set/sweep keys and values are not "
                                     "checked")
            else:
                keys.rules = schema.get("x-karma-yaml") or grammar()
        return self.cache[source]


def _ask(executable):
    """What `executable --help=json` prints, read; None where it fails."""
    path = executable if os.path.isabs(executable) else shutil.which(executable)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        out = subprocess.run([path, "--help=json"], capture_output=True, text=True, timeout=60,
                             env=env, stdin=subprocess.DEVNULL) if path else None
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        return json.loads(out.stdout) if out and out.returncode == 0 else None
    except ValueError as e:
        raise ToolError(f"{path} --help=json: not a deck's JSON Schema ({e})", 2) from None


def _leaves(schema, prefix=""):
    """{dotted key: its schema} of a deck schema's sections (objects)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        raise ValueError(f"{prefix or 'the top'} has no properties")
    out = {}
    for name, spec in schema["properties"].items():
        if not isinstance(spec, dict):
            raise ValueError(f"{prefix}{name} is not a schema")
        if spec.get("type") == "object" or not prefix:
            out.update(_leaves(spec, f"{prefix}{name}."))
        else:
            out[prefix + name] = spec
    return out


def _number(text, rules):
    """The number the grammar reads from text: (value, why not)."""
    m = re.match(rules["pattern"], text)
    if "minimum" not in rules:  # a floating-point number
        value = (float.fromhex if "x" in text.lower() else float)(text) if m else math.inf
        return (value, None) if math.isfinite(value) else (None, "is not a finite number")
    fits = [d for d in (m.groups() if m else ()) if d]
    if not m or any(len(d.lstrip("+-").lstrip("0")) > 19 for d in fits):
        return None, "does not fit a 64-bit integer" if m else "is not an integer"
    base, exponent = int(m.group(1)), int(m.group(2) or 1)
    value = base if m.group(2) is None else \
        base ** exponent if abs(base) < 2 or exponent < 64 else rules["maximum"] + 1
    if not rules["minimum"] <= value <= rules["maximum"] or \
            not rules["minimum"] <= exponent <= rules["maximum"]:
        return None, "does not fit a 64-bit integer"
    return value, None


def value(plain):
    """A deck value as the mini-apps resolve it: base^exponent (2^25) integers become numbers."""
    if isinstance(plain, dict):
        return {k: value(v) for k, v in plain.items()}
    if isinstance(plain, list):
        return [value(v) for v in plain]
    if isinstance(plain, str):
        number, _ = _number(plain, grammar()["integer"])
        return plain if number is None else number
    return plain


def _bound(v):
    return str(int(v)) if float(v).is_integer() and abs(v) < 9.2e18 else repr(v)


def problem(spec, node, rules, what=None):
    """Why the mini-app would refuse this value (a yamlread Node) for this key, or None."""
    what = what or spec.get("x-karma-type") or f"a value of type {spec.get('type')}"
    v, kind = node.value, spec.get("type")
    got = "a list" if isinstance(v, list) else "a mapping" if isinstance(v, dict) else \
        "nothing" if v is None else f"'{shortened(node.text())}'"
    if (kind == "array") != isinstance(v, list) or isinstance(v, dict) or v is None:
        return f"expected {what}, got {got}"  # a list for an array only, else a scalar
    if kind == "array":
        lengths = [(a.get("minItems", 0), a.get("maxItems", len(v))) for a in spec.get("anyOf", [])]
        if not spec.get("minItems", 0) <= len(v) <= spec.get("maxItems", len(v)) or \
                (lengths and not any(lo <= len(v) <= hi for lo, hi in lengths)):
            return f"has {len(v)} entries; expected {what}"
        seen = set()
        for item in v:
            why = problem(spec.get("items", {}), item, rules, what)
            if why or (spec.get("uniqueItems") and item.text() in seen):
                return why or f"'{item.text()}' is listed twice"
            seen.add(item.text())
        return None
    text, read = node.text(), rules.get(kind)
    shown = f"'{shortened(text)}'"
    if read and node.quoted:
        return f"{shown} is in quotes, which make it a string; write {read['what']} without them"
    if kind == "boolean":
        return None if text in read["true"] + read["false"] else f"{shown} is not true or false"
    if "enum" in spec and text not in spec["enum"]:
        return f"{shown} is not one of: {', '.join(spec['enum'])}"
    if kind in ("integer", "number"):
        number, why = _number(text, read)
        if why:
            return f"{shown} {why}"
        if "minimum" in spec and number < spec["minimum"]:
            return f"must be >= {_bound(spec['minimum'])}, got {_bound(number)}"
        if "maximum" in spec and number > spec["maximum"]:
            return f"must be <= {_bound(spec['maximum'])}, got {_bound(number)}"
    return None
