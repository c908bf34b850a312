"""A campaign file's format, read from its JSON Schema
(schemas/campaign.schema.json), and the checker that says where a campaign
file departs from it (file:line:column, the key, what is wrong)."""

import difflib
import json
import os
import re
from karma_tools import schemas
from karma_tools.core import ToolError


# The campaign file's format is its JSON Schema (karma_tools/schemas): the
# keys, choices and patterns the checks below use are read from it.
with open(os.path.join(schemas.schemas_dir(), "campaign.schema.json"), encoding="utf-8") as _f:
    _SCHEMA = json.load(_f)
_DEFS, _TOP = _SCHEMA["$defs"], _SCHEMA["properties"]
_RUN, _COMPARISON = _DEFS["run"]["properties"], _DEFS["comparison"]["properties"]

NAME = re.compile(_DEFS["name"]["pattern"])
APP = re.compile(_RUN["app"]["pattern"])
ENV_NAME = re.compile(_TOP["variables"]["propertyNames"]["pattern"])
# Variables that let MPI run as root have no place in a site's job scripts.
ROOT_VARIABLE = re.compile(
    _DEFS["environment"]["properties"]["variables"]["propertyNames"]["not"]["pattern"])
DECK_KEY = re.compile(_DEFS["deck_key"]["pattern"])
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?:\[([0-9]+)\])?\}")
METRIC = re.compile(_COMPARISON["metric"]["pattern"])

LAUNCHERS = tuple(_DEFS["launcher"]["anyOf"][0]["enum"])
PLACEHOLDERS = tuple(re.findall(r"\w+", _DEFS["launcher"]["anyOf"][1]["not"]["pattern"]))

TOP_KEYS = tuple(_TOP)
RUN_KEYS = tuple(_RUN)
SCHEDULERS = tuple(_TOP["scheduler"]["enum"])
ROUND_ORDERS = tuple(_TOP["round_order"]["enum"])
COMPARE_KEYS = tuple(_COMPARISON)
SELECTION_KEYS = tuple(_DEFS["selection"]["properties"])
AGGREGATES = tuple(_COMPARISON["aggregate"]["anyOf"][0]["enum"])
PER_ROUND = tuple(_COMPARISON["per_round"]["enum"])
REFERENCES = tuple(_RUN["reference"]["enum"])
ENV_KEYS = tuple(_DEFS["environment"]["properties"])
SLURM_KEYS = tuple(_TOP["slurm"]["properties"])
PBS_KEYS = tuple(_TOP["pbs"]["properties"])

# Counts beyond a C int mean a typo, and the mini-apps and launchers take ints.
INT_MAX = _DEFS["count"]["maximum"]
# More jobs than this is a typo too (repeat: 100000), and would take long to write.
MAX_JOBS = 10000


class Checker:
    """Type checks with errors that name file, line, column and key."""

    def __init__(self, source):
        self.source = source

    def fail(self, node, path, message, at_key=False):
        line, col = (node.key_line, node.key_col) if at_key else (node.line, node.col)
        raise ToolError(f"{self.source}:{line}:{col}: {path}: {message}", 2)

    def mapping(self, node, path, allowed, required=()):
        if not isinstance(node.value, dict):
            self.fail(node, path, f"expected a mapping of keys ({', '.join(allowed)}), "
                      f"got {describe_node(node)}")
        for key, value in node.value.items():
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean '{near[0]}'?)" if near else \
                    f" (known keys: {', '.join(allowed)})"
                self.fail(value, join_path(path, key), "unknown key" + hint, at_key=True)
        for key in required:
            if key not in node.value or node.value[key].value is None:
                self.fail(node, join_path(path, key), "is required")
        return node.value

    def string(self, node, path, pattern=None, what=None):
        if isinstance(node.value, bool) or not isinstance(node.value, (str, int, float)):
            self.fail(node, path, f"expected a string, got {describe_node(node)}")
        value = node.value if isinstance(node.value, str) else node.raw
        if value == "":
            self.fail(node, path, "must not be empty")
        if pattern and not pattern.match(value):
            self.fail(node, path, f"'{value}' is not {what}")
        return value

    def choice(self, node, path, choices):
        value = self.string(node, path)
        if value not in choices:
            self.fail(node, path, f"'{value}' is not one of: {', '.join(choices)}")
        return value

    def integer(self, node, path, minimum, maximum=INT_MAX):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            self.fail(node, path, f"expected an integer, got {describe_node(node)}")
        if node.value < minimum:
            self.fail(node, path, f"must be >= {minimum}, got {shortened(node.raw or node.value)}")
        if node.value > maximum:
            self.fail(node, path, f"must be <= {maximum}, got {shortened(node.raw or node.value)}")
        return node.value

    def boolean(self, node, path):
        if not isinstance(node.value, bool):
            self.fail(node, path, f"expected true or false, got {describe_node(node)}")
        return node.value

    def integers(self, node, path, minimum):
        """An integer or a non-empty list of distinct integers."""
        if isinstance(node.value, list):
            if not node.value:
                self.fail(node, path, "the list is empty")
            values = [self.integer(n, f"{path}[{i}]", minimum) for i, n in enumerate(node.value)]
            for i, v in enumerate(values):
                if v in values[:i]:
                    self.fail(node.value[i], f"{path}[{i}]", f"{v} is listed twice")
            return values
        return [self.integer(node, path, minimum)]

    def pairs(self, node, path, bad_name):
        """[(name, value node, path)] of a mapping of NAME: value pairs;
        bad_name(name): why a name is refused, or None."""
        if not isinstance(node.value, dict):
            self.fail(node, path, f"expected NAME: value pairs, got {describe_node(node)}")
        for name, value in node.value.items():
            if bad_name(name):
                self.fail(value, f"{path}.{name}", bad_name(name), at_key=True)
            if isinstance(value.value, (dict, list)) or value.value is None:
                self.fail(value, f"{path}.{name}", f"expected a value, got {describe_node(value)}")
        return [(name, value, f"{path}.{name}") for name, value in node.value.items()]

    def strings(self, node, path, allow_block=False):
        """A list of strings (or one string; with allow_block a '|' block
        gives one line per line)."""
        if isinstance(node.value, str):
            if allow_block:
                return [line for line in node.value.split("\n") if line.strip()]
            return [node.value]
        if not isinstance(node.value, list):
            self.fail(node, path, f"expected a list of strings, got {describe_node(node)}")
        return [self.string(n, f"{path}[{i}]") for i, n in enumerate(node.value)]


def join_path(path, key):
    return f"{path}.{key}" if path else key


def describe_node(node):
    v = node.value
    if v is None:
        return "nothing"
    if isinstance(v, bool):
        return f"the boolean {node.raw}"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, (int, float)):
        return f"the number {shortened(node.raw)}"
    return f"the string '{shortened(v)}'"


def shortened(text):
    text = str(text)
    return text if len(text) <= 60 else text[:56] + "..."


def unique_name(check, node, path, seen):
    """The `name` at path: letters, digits, '.', '_' and '-', and no other
    entry's; records it in seen (name -> path)."""
    name = check.string(node, f"{path}.name", NAME, "a name of letters, digits, '.', '_' and '-'")
    if name in seen:
        check.fail(node, f"{path}.name", f"'{name}' is also the name of {seen[name]}")
    seen[name] = path
    return name


def selection_item(node, i):
    """The node of a list's i-th entry; the node itself where one value
    stands for the list."""
    return node.value[i] if isinstance(node.value, list) else node


def glob_list(check, node, path):
    values = check.strings(node, path)
    if not values:
        check.fail(node, path, "the list is empty")
    return values
