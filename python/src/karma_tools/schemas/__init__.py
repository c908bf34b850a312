"""The suite's JSON Schema files: loaded (ToolError 2 at file:line for a bad one), and
documents checked with python3-jsonschema, a "path: what" line per problem."""

import functools
import json
import os
import re

from karma_tools.core import PACKAGE, ToolError, describe, shortened

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
# What may stand between two tokens of JSON: spaces and at most one ':' or ','.
_GAP = re.compile(r"[ \t\r\n]*[:,]?[ \t\r\n]*")


def locate(text, path):
    """(line, column) of the value at `path` in JSON text that parsed, or of its deepest part."""
    decoder, pos = json.JSONDecoder(), _GAP.match(text).end()
    for key in path:
        if text[pos] not in "{[":
            break
        start, index = pos, 0
        pos = _GAP.match(text, pos + 1).end()
        while text[pos] not in "}]":
            if text[start] == "{":
                name, pos = json.decoder.scanstring(text, pos + 1)
                pos = _GAP.match(text, pos).end()  # past the ':'
            else:
                name, index = index, index + 1
            if name == key:
                break
            pos = _GAP.match(text, decoder.raw_decode(text, pos)[1]).end()  # past a ','
        else:
            pos = start  # the key is missing: point at its object
            break
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def dotted(path):
    """kernels[0].time_s.min from ('kernels', 0, 'time_s', 'min')."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@functools.cache
def load(name):
    """The Draft202012Validator of schemas/<name>, cached; ToolError (2) if wrong."""
    import jsonschema

    # $KARMA_SCHEMAS: a folder of schemas being written (tests).
    path = os.path.join(os.environ.get("KARMA_SCHEMAS") or os.path.join(PACKAGE, "schemas"), name)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        schema = json.loads(text)
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(f"{path}: cannot read the schema ({e})", 2) from None
    except json.JSONDecodeError as e:
        raise ToolError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}", 2) from None
    if not isinstance(schema, dict) or schema.get("$schema") != _DRAFT:
        line, col = locate(text, ["$schema"])
        raise ToolError(f"{path}:{line}:{col}: $schema: expected \"{_DRAFT}\"", 2)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        line, col = locate(text, list(e.path))
        raise ToolError(f"{path}:{line}:{col}: {dotted(e.path) or '(top)'}: not a valid "
                        f"schema: {e.message}", 2) from None
    return jsonschema.Draft202012Validator(schema)


def strict(validator, part=None):
    """A validator of validator's schema (or its $defs[part]) whose integers are ints:
    not 1.0, nor the 010 YAML 1.2 reads as a number."""
    import jsonschema

    base, schema = type(validator), validator.schema
    if part:
        schema = {"$ref": f"#/$defs/{part}", "$defs": schema["$defs"]}
    return jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine(
        "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool)))(schema)


def lenient(schema):
    """The schema with no `required` or `dependentRequired` (but inside `if`, `not`, `oneOf`
    and `anyOf`, whose meaning they carry): nothing need be present."""
    if isinstance(schema, list):
        return [lenient(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: v if k in ("if", "not", "oneOf", "anyOf", "const", "enum", "default")
            else lenient(v)
            for k, v in schema.items() if k not in ("required", "dependentRequired")}


SIGNS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string", "number": "a number",
              "integer": "an integer", "boolean": "true or false", "null": "null"}


def _short(value):
    return shortened(json.dumps(value))


def problems(validator, doc):
    """Every way doc departs from the schema, one "path: what" line each."""
    out = []
    for e in validator.iter_errors(doc):
        path, kind, want, got = list(e.absolute_path), e.validator, e.validator_value, e.instance
        if kind == "required":
            out += [f"{dotted(path + [k])}: missing" for k in want
                    if isinstance(got, dict) and k not in got]
        elif kind == "dependentRequired":
            out += [f"{dotted(path + [d])}: missing beside {k}" for k, deps in want.items()
                    if k in got for d in deps if d not in got]
        elif kind == "type" and not path:
            out.append("the document is not a JSON object")
        elif kind == "not" and list(want) == ["required"] and len(e.schema_path) >= 2:
            beside = e.schema_path[-2]  # dependentSchemas' key
            out.append(f"{dotted(path + [want['required'][0]])}: not allowed beside {beside}")
        else:
            out.append(f"{dotted(path)}: {what(e, _short(got), describe(got))}")
    return list(dict.fromkeys(out))


def what(e, shown, got, words=TYPE_WORDS):
    """What is wrong with error e's value, in words: shown is it as written, got described."""
    kind, want = e.validator, e.validator_value
    if kind == "type":
        kinds = want if isinstance(want, list) else [want]
        return f"expected {' or '.join(words[k] for k in kinds)}, got {got}"
    if kind == "const":
        return f"{shown}, expected {_short(want)}"
    if kind == "enum":
        return f"{shown}, expected one of {', '.join(map(_short, want))}"
    if kind in SIGNS:
        return f"must be {SIGNS[kind]} {want}, got {shown}"
    if kind in ("minItems", "maxItems"):
        return "empty" if want == 1 and kind == "minItems" else f"{len(e.instance)} entries, " \
            f"expected at {'least' if kind == 'minItems' else 'most'} {want}"
    if kind == "minLength":
        return "empty"
    if kind == "pattern":  # the description says in words what the pattern wants
        return f"{shown} is not " + e.schema.get("description", f"of the form {want}") \
            .split(": ")[0]
    return e.message
