"""A result's kernel table: what its mini-app can measure, as it declares it (karma/
kernel_table.hpp): the result's own, else its release's (data/apps/<release>.json), else the
head's (data/apps/head.json, karma-docs'). The tools know nothing of the apps beyond these."""

import ast
import functools
import itertools
import json
import operator
import os
import re

from karma_tools.core import PACKAGE, ToolError

DATA = os.path.join(PACKAGE, "data", "apps")
HEAD = "head"
FIELD = re.compile(r"\{([^{}]+)\}")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Eq: operator.eq, ast.NotEq: operator.ne,
        ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        "max": lambda *a: max(a), "min": lambda *a: min(a)}
_GRAMMAR = (ast.Expression, ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.BinOp,
            ast.Compare, ast.IfExp, ast.Call, ast.Load, *(k for k in _OPS if isinstance(k, type)))


def _version(text):
    """(major, minor, patch, final) of '1.1.0-dev' (before 1.1.0), or None."""
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(.*)$", str(text or ""))
    return (int(m[1]), int(m[2]), int(m[3]), m[4] == "") if m else None


@functools.lru_cache(maxsize=None)
def release(name):
    """{app: that release's --help=json} of data/apps/<name>.json."""
    path = os.path.join(DATA, f"{name}.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)["apps"]
    except (OSError, ValueError, KeyError) as e:
        raise ToolError(f"{path}: cannot read the kernel tables ({e})", 2) from None


def release_of(doc):
    """The table for a document without one: the oldest kept not older than it, else head."""
    version = _version((doc.get("suite") or {}).get("version"))
    kept = sorted(filter(_version, (f[:-5] for f in os.listdir(DATA) if f.endswith(".json"))),
                  key=_version)
    return next((name for name in kept if version is None or version <= _version(name)), HEAD)


@functools.lru_cache(maxsize=None)
def parse(text):
    """A table's expression as a tree; ToolError outside its grammar: numbers, strings,
    + - * /, one comparison, `a if b else c`, max(), min(), names, kernels['name']."""
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree else [None]:
        if not isinstance(node, _GRAMMAR) or isinstance(node, ast.Compare) and \
                len(node.ops) > 1 or isinstance(node, ast.Call) and \
                (node.keywords or not node.args or getattr(node.func, "id", None) not in _OPS) or \
                isinstance(node, ast.Constant) and type(node.value) not in (int, float, str):
            raise ToolError(f"kernel table: {text!r} is not an expression the tables allow "
                            f"({type(node).__name__ if node else 'syntax'})", 2)
    return tree.body


def evaluate(text, doc, kernel=None):
    """A table's expression over a document for `kernel`; None where it reads what's not there."""
    kernels = {k.get("name"): k for k in doc.get("kernels") or [] if isinstance(k, dict)}
    return _value(parse(text), dict(doc, kernel=kernel, kernels=kernels))


def json_number(v):
    """A JSON number, not a boolean (a NaN, an infinity or a huge integer too)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _value(node, scope):
    value = functools.partial(_value, scope=scope)
    if isinstance(node, (ast.Constant, ast.Name)):
        return scope.get(node.id) if isinstance(node, ast.Name) else node.value
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        base, key = value(node.value), getattr(node, "attr", None) or value(node.slice)
        return base.get(key) if isinstance(base, dict) and isinstance(key, str) else None
    if isinstance(node, ast.IfExp):
        return value(node.body if value(node.test) else node.orelse)
    call = isinstance(node, ast.Call)
    op = node.func.id if call else type(getattr(node, "op", None) or node.ops[0])
    args = [value(a) for a in node.args] if call else \
        [value(node.left), value(getattr(node, "right", None) or node.comparators[0])]
    if op in (ast.Eq, ast.NotEq) or all(map(json_number, args)) and (op is not ast.Div or args[1]):
        return _OPS[op](*args)
    return "".join(args) if op is ast.Add and all(isinstance(a, str) for a in args) else None


def expand(table):
    """[{name, implementation (list), variant, work, entry}] of a table's kernels, filled in."""
    fields = table.get("fields") or {}
    out = []
    for entry in table.get("kernels") or []:
        texts = {"name": entry["name"], "variant": entry.get("variant", ""),
                 "work": entry.get("work", "")}
        implementations = list(entry.get("implementation") or [])
        used = list(dict.fromkeys(f for t in [*texts.values(), *implementations]
                                  for f in FIELD.findall(t)))
        for vs in itertools.product(*(fields.get(f, []) for f in used)):
            def put(text, values=dict(zip(used, vs))):
                return FIELD.sub(lambda m: values[m[1]], text)
            out.append({**{key: put(text) for key, text in texts.items()},
                        "implementation": [put(i) for i in implementations], "entry": entry})
    return out


class Table:
    """One app's kernel table, looked up by kernel name."""

    def __init__(self, table):
        self.declared = {}
        for k in expand(table or {}):
            self.declared.setdefault(k["name"], []).append(k)

    def find(self, name, implementation=None):
        """The declared kernel of that name (and implementation), or None."""
        return next((k for k in self.declared.get(name, [])
                     if implementation is None or implementation in k["implementation"]), None)

    def work_of(self, name):
        """The work a kernel stands for (alternatives share one; a tier takes the best)."""
        k = self.find(name)
        return k["work"] if k else name

    def entry(self, name):
        k = self.find(name)
        return k["entry"] if k else {}

    def names(self, what):
        """Every declared kernel name, implementation or variant."""
        key = {"kernel": "name"}.get(what, what)
        return {v for ks in self.declared.values() for k in ks
                for v in (k[key] if isinstance(k[key], list) else [k[key]])}


@functools.lru_cache(maxsize=256)
def _table(text):
    return Table(json.loads(text))


def of(doc):
    """The Table of a results document: its own, else its release's, else the head's."""
    app, own = str(doc.get("app")), doc.get("kernel_table")
    if isinstance(own, dict):
        return _table(json.dumps(own, sort_keys=True))
    name = release_of(doc)
    return of_app(app, name if release(name).get(app) else HEAD)


def of_app(app, name=HEAD):
    """An app's table in a release's data (the head's by default)."""
    help_json = release(name).get(app) or {}
    return _table(json.dumps(help_json.get("x-karma-kernels") or {}, sort_keys=True))
