"""The deck keys of a campaign's runs: each mini-app's deck schema read as
the keys a run may set (KeyLister), and the values those keys take
(DeckType)."""

import json
import os
import re
import shutil
import subprocess
from karma_tools.campaign import deckvalues
from karma_tools.campaign.format import shortened
from karma_tools.core import ToolError


class KeyLister:
    """Deck keys of a mini-app and their types, from the JSON Schema that
    `karma-<app> --help=json` prints (cached): {key: DeckType or None (a
    type this tool does not know)}. Output that is not JSON is a ToolError
    (exit 2): the executable is not the mini-app it should be."""

    def __init__(self):
        self.cache = {}
        self.warnings = []

    def keys(self, executable):
        if executable in self.cache:
            return self.cache[executable]
        keys = None
        path = executable if os.path.isabs(executable) else shutil.which(executable)
        if path and os.access(path, os.X_OK):
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            try:
                out = subprocess.run([path, "--help=json"], capture_output=True, text=True,
                                     timeout=60, env=env, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                out = None
            if out is not None and out.returncode == 0:
                try:
                    keys = schema_types(json.loads(out.stdout))
                except ValueError as e:
                    raise ToolError(f"{path} --help=json: not a deck's JSON Schema ({e})",
                                    2) from None
            if not keys:
                self.warnings.append(f"could not list the deck keys of {path} (its --help=json "
                                     "failed); set/sweep keys and values are not checked")
                keys = None
        self.cache[executable] = keys
        return keys


def schema_types(schema):
    """{deck key: DeckType or None} from a mini-app's --help=json (deck.cpp's
    Schema::json_schema): a section per object, a key per other property.
    ValueError for a document of another shape."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        raise ValueError("no properties at the top")
    types = {}
    for section, body in schema["properties"].items():
        keys = body.get("properties") if isinstance(body, dict) else None
        if not isinstance(keys, dict):
            raise ValueError(f"section {section} has no properties")
        for key, spec in keys.items():
            if not isinstance(spec, dict):
                raise ValueError(f"{section}.{key} is not a schema")
            types[f"{section}.{key}"] = DeckType.from_schema(spec)
    return types


class DeckType:
    """A deck key's type as the mini-app's --help describes it, and the
    mini-app's own reading of a value (deck.cpp's convert), so a campaign's
    `run.repetitions: lots` is refused before any job is written."""

    def __init__(self, text, kind, lo=None, hi=None, choices=(), lengths=()):
        self.text, self.kind, self.lo, self.hi = text, kind, lo, hi
        self.choices, self.lengths = tuple(choices), tuple(lengths)

    @classmethod
    def from_schema(cls, spec):
        """From one key's JSON Schema (--help=json); the text is what
        describe_type says of it, for the same messages. None for a schema
        it does not know."""
        def bound(v):
            return str(int(v)) if float(v).is_integer() and abs(v) < 9.2e18 else repr(v)

        def described(of):
            lo, hi = of.get("minimum"), of.get("maximum")
            text = f" >= {bound(lo)}" if lo is not None else ""
            if hi is not None:
                text += ("," if text else "") + f" <= {bound(hi)}"
            return text, lo, hi

        kind = spec.get("type")
        if kind in ("integer", "number"):
            text, lo, hi = described(spec)
            return cls(("an integer" if kind == "integer" else "a number") + text, kind, lo, hi)
        if kind == "boolean":
            return cls("true or false", "boolean")
        if kind == "string":
            if "enum" in spec:
                return cls("one of " + "|".join(spec["enum"]), "choice", choices=spec["enum"])
            return cls("a string", "string")
        if kind != "array" or not isinstance(spec.get("items"), dict):
            return None
        items = spec["items"]
        if "anyOf" in spec:
            lengths = [a.get("minItems") for a in spec["anyOf"]]
        elif "maxItems" in spec:
            lengths = [spec["maxItems"]]
        else:
            lengths = []
        head = "a list of" + "".join(f"{' or ' if i else ' '}{n}" for i, n in enumerate(lengths))
        if items.get("type") == "integer":
            text, lo, hi = described(items)
            return cls(head + " integers" + text, "integer_list", lo, hi, lengths=lengths)
        if "enum" in items:
            return cls(head + (" of " if lengths else " ") + "|".join(items["enum"]),
                       "choice_list", choices=items["enum"], lengths=lengths)
        return None

    def problem(self, node):
        """Why the mini-app would refuse this value (a yamlread Node of the
        text it will be given), or None."""
        v = node.value
        if self.kind in ("integer_list", "choice_list"):
            if not isinstance(v, list):
                got = "a mapping" if isinstance(v, dict) else "nothing" if v is None else \
                    f"'{shortened(self._text(node))}'"
                return f"expected {self.text}, got {got}"
            if (self.lengths and len(v) not in self.lengths) or not v:
                return f"has {len(v)} entries; expected {self.text}"
            seen = set()
            for item in v:
                why = self._scalar_problem(item, "integer" if self.kind == "integer_list"
                                           else "choice")
                if why:
                    return why
                text = self._text(item)
                if self.kind == "choice_list" and text in seen:
                    return f"'{text}' is listed twice"
                seen.add(text)
            return None
        return self._scalar_problem(node, self.kind)

    @staticmethod
    def _text(node):
        return str(node.value) if node.quoted or node.raw is None else node.raw

    def _scalar_problem(self, node, kind):
        if isinstance(node.value, (list, dict)) or node.value is None:
            got = "a list" if isinstance(node.value, list) else \
                "a mapping" if isinstance(node.value, dict) else "nothing"
            return f"expected {self.text}, got {got}"
        text = self._text(node)
        shown = f"'{shortened(text)}'"
        if kind == "integer":
            value = deckvalues.deck_integer(text)
            if value is None:
                return shown + (" does not fit a 64-bit integer" if _looks_like_integer(text)
                                else " is not an integer")
            return self._range_problem(value)
        if kind == "number":
            value = _deck_number(text)
            if value is None:
                return f"{shown} is not a finite number"
            return self._range_problem(value)
        if kind == "boolean":
            if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
                return None
            return f"{shown} is not true or false"
        if kind == "choice" and text not in self.choices:
            return f"{shown} is not one of: {', '.join(self.choices)}"
        return None

    def _range_problem(self, value):
        if self.lo is not None and value < self.lo:
            return f"must be >= {self.lo:g}, got {value:g}"
        if self.hi is not None and value > self.hi:
            return f"must be <= {self.hi:g}, got {value:g}"
        return None


def _looks_like_integer(text):
    base, caret, exponent = text.partition("^")
    if not caret:
        return bool(deckvalues.DECIMAL.match(text))
    return bool(deckvalues.DECIMAL.match(base) and re.match(r"^[0-9]+$", exponent))


def _deck_number(text):
    """strtod over the whole text, finite (deck.cpp's parse_number)."""
    try:
        value = float(text)
    except ValueError:
        try:
            value = float.fromhex(text)  # strtod reads hexadecimal too
        except (ValueError, OverflowError):
            return None
    except OverflowError:
        return None
    return value if value == value and abs(value) != float("inf") else None
