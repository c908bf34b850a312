"""karma-docs: the generated parts of karma's documentation: docs/results-format.md from the
results schema (in a checkout, the schema's `app` from the mini-apps that take decks); each
mini-app README's deck table and the apps' data (APPS_DATA) from `karma-<app> --help=json`."""

import itertools
import json
import os
import pathlib
import re
import shutil
import subprocess
import textwrap

from karma_tools.core import APPS, ToolError, md_cell, miniapps_with_decks
from karma_tools import schemas

PROGRAM = "karma-docs"
BEGIN = "<!-- karma-docs: deck table begin -->"
END = "<!-- karma-docs: deck table end -->"
RESULTS_DOC = "docs/results-format.md"
SCHEMA = "results.schema.json"
SCHEMA_IN_REPO = "python/src/karma_tools/schemas/results.schema.json"
APPS_DATA = "python/src/karma_tools/data/apps/head.json"

# The words of the results schema's `app` description that name the apps.
_NAMED = re.compile(r"^the mini-app: [^(]*?(?= \(|$)")


def named(apps, quote="`"):
    """'`a`, `b` or `c`'."""
    quoted = [f"{quote}{a}{quote}" for a in apps]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def with_app_names(text, apps, where):
    """The results schema's text (at `where`) with `apps` in its `app` list and description."""
    schema = json.loads(text)
    app = schema.get("properties", {}).get("app", {})
    if not isinstance(app.get("x-karma-apps"), list) or \
            not _NAMED.match(app.get("description", "")):
        raise ToolError(f"{where}: properties.app: needs x-karma-apps and a description that "
                        "starts 'the mini-app: '", 2)
    # Known apps in their order, new ones after in name order: adding one moves no other.
    known = app["x-karma-apps"]
    app["x-karma-apps"] = [a for a in known if a in apps] + sorted(set(apps) - set(known))
    app["description"] = _NAMED.sub("the mini-app: " + named(app["x-karma-apps"]),
                                    app["description"])
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def find_root(start):
    """The nearest folder at or above `start` with miniapps/ and python/pyproject.toml."""
    here = pathlib.Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if (folder / "miniapps").is_dir() and (folder / "python" / "pyproject.toml").is_file():
            return str(folder)
    raise ToolError(f"{here} is not inside a karma checkout (no miniapps/ and "
                    "python/pyproject.toml above it): name one with --root", 2)


def cell(text):
    """Text for a Markdown table cell: one line, no bare '|'."""
    return md_cell(" ".join(str(text).split()))


def wrap(markdown, width=78):
    """Markdown's paragraphs filled to `width`; code, headings, tables and lists as they are."""
    out, paragraph, fenced = [], [], False

    def flush():
        if paragraph:
            out.extend(textwrap.wrap(" ".join(paragraph), width, break_long_words=False,
                                     break_on_hyphens=False))
            paragraph.clear()

    for line in markdown.strip().split("\n"):
        if fenced or not line.strip() or line.startswith(("```", "#", "|", "- ", "* ")):
            flush()
            fenced ^= line.startswith("```")
            out.append(line)
        else:
            paragraph.append(line.strip())
    flush()
    return "\n".join(out)


_JSON_KINDS = {bool: "boolean", int: "integer", float: "number", type(None): "null",
               str: "string", list: "array", dict: "object"}


def result_type(sub):
    """The results table's type column: 'integer', 'array of strings', 'object or null'..."""
    kinds = sub.get("type")
    if kinds is None:
        values = sub.get("enum") or ([sub["const"]] if "const" in sub else [])
        kinds = sorted({_JSON_KINDS[type(v)] for v in values})
    kinds = [kinds] if isinstance(kinds, str) else kinds
    item = sub.get("items", {}).get("type") if "array" in kinds else None
    array = f"array of {item}s" if isinstance(item, str) and item != "object" else "array"
    return " or ".join(array if kind == "array" else kind for kind in kinds)


def result_rows(schema, prefix="", parent_text=""):
    """(field, type, meaning) of every property in order, an object's (`name[].field` for
    an array's) after it. One without a description must be named in its parent's."""
    for name, sub in schema.get("properties", {}).items():
        if not isinstance(sub, dict):
            raise ToolError(f"{SCHEMA}: {prefix}{name}: not a schema object", 2)
        text = sub.get("description")
        items = sub.get("items") if sub.get("type") == "array" else None
        nested = isinstance(items, dict) and "properties" in items
        path = prefix + name + ("[]" if nested else "")
        if text is None:
            if not re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", parent_text):
                raise ToolError(f"{SCHEMA}: {path}: no description, and its parent's "
                                "description does not name it", 2)
        elif not isinstance(text, str):
            raise ToolError(f"{SCHEMA}: {path}.description: not a string", 2)
        else:
            yield path, result_type(sub), text
        for child in (sub, items) if nested else (sub,):  # a leaf has no properties to walk
            yield from result_rows(child, path + ".", text or "")


def results_doc(schema):
    """The text of docs/results-format.md for the schema (a dict)."""
    title, text = schema.get("title"), schema.get("description")
    if not isinstance(title, str) or not isinstance(text, str):
        raise ToolError(f"{SCHEMA}: needs a title and a description (strings) at the top", 2)
    at = re.search(r"^## ", text, re.M)
    intro, rest = (text[:at.start()], text[at.start():]) if at else (text, "")
    lines = [f"<!-- Generated by {PROGRAM} from {SCHEMA_IN_REPO}: edit the schema, then run "
             f"{PROGRAM}. -->", "", f"# {title}", "", wrap(intro), "",
             wrap(f"The one definition of this document is the JSON Schema "
                  f"[{SCHEMA}](../{SCHEMA_IN_REPO}) (draft 2020-12), shipped with the tools "
                  f"(`karma_tools/schemas`); `{PROGRAM}` makes this page from it."), "",
             "## Fields", "", "| field | type | meaning |", "|---|---|---|"]
    lines += [f"| `{path}` | {cell(kind)} | {cell(meaning)} |"
              for path, kind, meaning in result_rows(schema)]
    if rest.strip():
        lines += ["", wrap(rest)]
    return "\n".join(lines) + "\n"


def executable(app, bin_dir):
    """karma-<app> in bin_dir (a bin/ or a build folder holding bin/), else in PATH."""
    name = f"karma-{app}"
    if bin_dir is None:
        found = shutil.which(name)
        if not found:
            raise ToolError(f"{name} is not in PATH: name a build's bin/ or an installed "
                            "one with --bin-dir (or use --only results)", 2)
        return found
    for path in (os.path.join(bin_dir, name), os.path.join(bin_dir, "bin", name)):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise ToolError(f"--bin-dir {bin_dir}: no executable {name} there nor in its bin/", 2)


def deck_schema(exe):
    """The JSON Schema `exe --help=json` prints."""
    try:
        run = subprocess.run([exe, "--help=json"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{exe} --help=json: no answer within 60 s", 3) from None
    except OSError as e:
        raise ToolError(f"{exe}: cannot run ({e.strerror})", 3) from None
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"{exe} --help=json: exit {run.returncode}: {last}", 3)
    try:
        doc = json.loads(run.stdout)
    except ValueError as e:
        raise ToolError(f"{exe} --help=json: not JSON ({e})", 2) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("properties"), dict):
        raise ToolError(f"{exe} --help=json: not a deck schema (no properties)", 2)
    return doc


def deck_value(value):
    """A default (or a bound) as a deck would write it."""
    if isinstance(value, list):
        return "[" + ", ".join(deck_value(v) for v in value) + "]"
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, (dict, bool)):
        return json.dumps(value)
    # Sizes as the decks write them: 2^25 rather than 33554432.
    if isinstance(value, int) and value >= 2 ** 20 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    return str(value)


def _lengths(sub):
    choices = [a for a in sub.get("anyOf", []) if isinstance(a, dict)]
    if choices and all(a.get("minItems") == a.get("maxItems") is not None for a in choices):
        return named([a["minItems"] for a in choices], quote="")
    low, high = sub.get("minItems"), sub.get("maxItems")
    if low is None:
        return "any number of" if high is None else f"at most {high}"
    if high is None:
        return f"{low} or more"
    return str(low) if low == high else f"{low} to {high}"


def deck_type(sub):
    """A deck table's type column: "integer >= 1", "one of `a`, `b`", "list of 1 or 3 ..."."""
    if "enum" in sub:
        return "one of " + ", ".join(f"`{deck_value(v)}`" for v in sub["enum"])
    kind = sub.get("type")
    if kind == "boolean":
        return "`true` or `false`"
    if kind == "array":
        item = sub.get("items") if isinstance(sub.get("items"), dict) else {}
        if "enum" in item:
            what = "of " + ", ".join(f"`{deck_value(v)}`" for v in item["enum"])
        else:
            words = deck_type(item).split(" ", 1)
            what = " ".join([words[0] + "s"] + words[1:]) if item.get("type") else "values"
        text = f"list of {_lengths(sub)} {what}"
        return text + (", no repeats" if sub.get("uniqueItems") else "")
    bounds = [f"{sign} {deck_value(sub[k])}" for k, sign in schemas.SIGNS.items() if k in sub]
    if kind in ("integer", "number") and "minimum" in sub and "maximum" in sub:
        return f"{kind} from {deck_value(sub['minimum'])} to {deck_value(sub['maximum'])}"
    if kind in ("integer", "number") and len(bounds) == 2:
        return f"{kind} {bounds[0]} and {bounds[1]}"
    return " ".join([kind if isinstance(kind, str) else "value"] + bounds)


def deck_rows(schema, app, where):
    """(key, type, default, rule, meaning) of each deck key, dotted; the app's first, run last."""
    def walk(sub, path):
        if not isinstance(sub, dict):
            raise ToolError(f"{where}: {path}: not a schema object", 2)
        if sub.get("type") == "object" and isinstance(sub.get("properties"), dict):
            for name, child in sub["properties"].items():
                yield from walk(child, f"{path}.{name}")
        elif not isinstance(sub.get("description"), str) or "default" not in sub:
            raise ToolError(f"{where}: {path}: a key needs a description and a default", 2)
        else:
            yield (path, deck_type(sub), deck_value(sub["default"]), sub.get("x-rules", "fixed"),
                   sub["description"])

    order = sorted(schema["properties"], key=lambda s: (s == "run") - (s == app))
    return [row for section in order for row in walk(schema["properties"][section], section)]


def deck_table(app, schema, where):
    """The lines between BEGIN and END."""
    lines = ["", f"Generated from `karma-{app} --help=json` by `{PROGRAM}`, which a test runs "
             f"with `--check`; `karma-{app} --help` prints the same keys.", "",
             "The column *rules* says what a reportable run may change "
             "([run rules](../../docs/run-rules.md)): fixed, nothing; axis, any value in either "
             "tier; tuning, any value in the optimized tier; free, changes no figure.", "",
             "| key | type | default | rules | meaning |", "|---|---|---|---|---|"]
    lines += [f"| `{key}` | {cell(kind)} | `{cell(default)}` | {rule} | {cell(meaning)} |"
              for key, kind, default, rule, meaning in deck_rows(schema, app, where)]
    return lines + [""]


def with_table(path, text, table):
    """The README's text with `table` between its markers."""
    lines = text.split("\n")
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ToolError(f"{path}: needs one line '{BEGIN}' and, after it, one line "
                        f"'{END}' (found {len(begins)} and {len(ends)})", 2)
    return "\n".join(lines[:begins[0] + 1] + table + lines[ends[0]:])


def read_text(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e})", 2) from None


def wanted(args, root):
    """{path: text} of every generated file."""
    out = {}
    if args.only in (None, "results"):
        schema = schemas.load(SCHEMA).schema
        source = os.path.join(root, SCHEMA_IN_REPO)
        text = read_text(source)
        if text is not None:  # a checkout of the tools' sources too: the app names are ours
            out[source] = with_app_names(text, miniapps_with_decks(root), source)
            schema = json.loads(out[source])
        out[os.path.join(root, RESULTS_DOC)] = results_doc(schema)
    if args.only in (None, "decks"):
        helps = {}
        for app in APPS:
            readme = os.path.join(root, "miniapps", app, "README.md")
            text = read_text(readme)
            if text is None:
                raise ToolError(f"{readme}: missing", 2)
            exe = executable(app, args.bin_dir)
            helps[app] = deck_schema(exe)
            out[readme] = with_table(readme, text, deck_table(app, helps[app], exe))
        data = os.path.join(root, APPS_DATA)
        if os.path.isdir(os.path.dirname(data)):  # a checkout of the tools' sources too
            out[data] = json.dumps({"apps": helps}, indent=1, sort_keys=True) + "\n"
    return out


def first_difference(old, new):
    """'LINE: expected ..., found ...' for the first line that differs."""
    pairs = itertools.zip_longest(old.split("\n"), new.split("\n"), fillvalue=None)
    number, (a, b) = next((n, p) for n, p in enumerate(pairs, 1) if p[0] != p[1])
    a, b = ("the end of the file" if x is None else repr(x[:80]) for x in (a, b))
    return f"{number}: expected {b}, found {a}"
