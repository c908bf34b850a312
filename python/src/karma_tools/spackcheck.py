"""karma-spack-check: the karma specs of Spack environments (spack.yaml: `spack.specs`,
`spack.packages.karma.require` and `.variants`) checked against the karma recipe
(scripts/spack/package.py), read as Python source (ast), never run, without Spack: its
variants, conflicts and base classes. What it refuses: docs/campaigns.md (Spack); a wrong
spec is file:line:col, its key, exit 2."""

import ast
import re

from karma_tools.core import ToolError, unreadable
from karma_tools.yamlread import YamlError, load

# Variants every recipe of its kind has, and spec keys that are not variants.
BASE_VARIANTS = {
    "CMakePackage": {"build_type": "RelWithDebInfo", "generator": "make", "ipo": False},
    "CudaPackage": {"cuda": False, "cuda_arch": "none"},
    "ROCmPackage": {"rocm": False, "amdgpu_target": "none"},
}
NOT_VARIANTS = {"arch", "target", "os", "platform", "namespace", "dev_path", "commit", "patches",
                "cflags", "cxxflags", "fflags", "cppflags", "ldflags", "ldlibs"}
VALUE_PATTERNS = {"cuda_arch": r"none|\d+[a-z]?", "amdgpu_target": r"none|gfx[0-9a-f]+(:[a-z+-]+)?"}
TRUE, FALSE = {"true", "True", "TRUE"}, {"false", "False", "FALSE"}

NAME = r"[A-Za-z_][\w-]*"
# One constraint of a spec node: a version, a boolean variant (+x ~x, or -x
# after a space), or key=value (== propagates it to dependencies).
TOKEN = re.compile(rf"\s*(?:(?P<version>@\S+?)(?=[\s+~]|$)"
                   rf"|(?P<sign>\+\+|\+|~~|~|(?<=\s)-)(?P<flag>{NAME})"
                   rf"|(?P<key>{NAME})\s*==?\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s+~]+))")


class Recipe:
    """A package's variants (name -> default or None), their `when`, and its conflicts."""

    def __init__(self, path):
        self.variants, self.when, self.conflicts = {}, {}, []
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
        except OSError as e:
            raise unreadable(path, e) from None
        except (SyntaxError, ValueError) as e:
            raise ToolError(f"{path}:{getattr(e, 'lineno', 1)}: not valid Python ({e})", 2) \
                from None
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
        if cls is None:
            raise ToolError(f"{path}: no package class", 2)
        self.name = re.sub(r"(?<!^)(?=[A-Z])", "-", cls.name).lower()
        for base in cls.bases:
            self.variants.update(BASE_VARIANTS.get(getattr(base, "id", None), {}))
        for node in cls.body:
            call = node.value if isinstance(node, ast.Expr) else None
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            args = [_literal(a) for a in call.args]
            kwargs = {k.arg: _literal(k.value) for k in call.keywords}
            if call.func.id == "variant" and isinstance(args[0] if args else None, str):
                self.variants[args[0]] = kwargs.get("default")
                if isinstance(kwargs.get("when"), str):
                    self.when[args[0]] = kwargs["when"]
            elif call.func.id == "conflicts" and args and isinstance(args[0], str):
                self.conflicts.append((args[0], kwargs.get("when") or "",
                                       kwargs.get("msg") or f"conflicts with {args[0]}"))


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None  # an f-string or a name: not decidable here


def parse_node(text):
    """(name, {variant: True, False or text}, what could not be read or None) of a spec."""
    root = re.split(r"\s*[\^%]", text, maxsplit=1)[0].strip()
    m = re.match(NAME, root)
    name = m.group(0) if m else ""
    rest, at, given = root[len(name):], 0, {}
    while at < len(rest):
        t = TOKEN.match(rest, at)  # rest ends in a non-space (root is stripped)
        if not t:
            return name, given, f"cannot read '{rest[at:].strip()}'"
        at = t.end()
        if t.group("flag"):
            given[t.group("flag")] = t.group("sign")[0] == "+"
        elif t.group("key"):
            given[t.group("key")] = t.group("value").strip("\"'")
    return name, given, None


def _satisfied(recipe, state, constraint):
    """Whether state (karma's own variants) satisfies constraint; None if undecidable."""
    own = re.match(rf"{re.escape(recipe.name)}(?![\w-])", constraint)
    name, wanted, problem = parse_node(constraint if own else f"{recipe.name} {constraint}")
    if problem or re.search(r"[\^%@]", constraint) or name != recipe.name:
        return None
    for key, value in wanted.items():
        have = state.get(key)
        if have is None:
            return None
        if not (have is value if isinstance(value, bool) else value in str(have).split(",")):
            return False
    return True


def check_spec(recipe, text):
    """What is wrong with one spec of the recipe's package, or None."""
    _, given, problem = parse_node(text)
    if problem:
        return f"'{text}': {problem}"
    state = {k: v for k, v in recipe.variants.items() if k not in recipe.when}
    for key, value in given.items():
        if key in NOT_VARIANTS:
            continue
        if key not in recipe.variants:
            known = ", ".join(sorted(recipe.variants))
            return f"{recipe.name} has no variant '{key}' (its variants: {known})"
        if isinstance(recipe.variants[key], bool):
            if not isinstance(value, bool):
                if value not in TRUE | FALSE:
                    return f"{key}={value}: {key} is on or off (+{key} or ~{key})"
                value = value in TRUE
        elif isinstance(value, bool):
            return f"{'+' if value else '~'}{key}: {key} takes a value ({key}=...)"
        elif key in VALUE_PATTERNS:
            for v in value.split(","):
                if not re.fullmatch(VALUE_PATTERNS[key], v):
                    return f"{key}={value}: '{v}' is not a {key.replace('_', ' ')}"
        state[key] = value
    for key in given:
        if key in recipe.when and _satisfied(recipe, state, recipe.when[key]) is False:
            return f"variant '{key}' exists only when {recipe.when[key]}"
    for spec, when, msg in recipe.conflicts:
        if _satisfied(recipe, state, spec) and _satisfied(recipe, state, when or spec):
            return f"{spec}{' with ' + when if when else ''}: {msg}"
    return None


def _listed(node, path):
    """(item, its key path) of a node that is one item or a list of them; none of None."""
    if node is None:
        return []
    if isinstance(node.value, list):
        return [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
    return [(node, path)]


def _spec_nodes(spack, recipe):
    """(Node of a spec string, key path) of every place spack.yaml gives the package one."""
    specs = spack.value.get("specs")
    found = _listed(specs, "spack.specs") if specs and isinstance(specs.value, list) else []
    packages = spack.value.get("packages")
    own = packages.value.get(recipe.name) if packages and isinstance(packages.value, dict) \
        else None
    for key in ("variants", "require") if own and isinstance(own.value, dict) else ():
        for item, path in _listed(own.value.get(key), f"spack.packages.{recipe.name}.{key}"):
            if isinstance(item.value, dict):  # require: [{spec: ...}, {one_of: [...]}]
                found += [pair for sub in ("spec", "one_of", "any_of")
                          for pair in _listed(item.value.get(sub), f"{path}.{sub}")]
            else:
                found.append((item, path))
    return [(node, path) for node, path in found if isinstance(node.value, str)]


def check_environment(path, recipe):
    """The number of karma specs of the spack.yaml at path; ToolError (2) at a wrong one."""
    try:
        doc = load(path)
    except YamlError as e:
        raise ToolError(str(e), 2) from None
    except OSError as e:
        raise unreadable(path, e) from None
    spack = doc.value.get("spack") if isinstance(doc.value, dict) else None
    if spack is None or not isinstance(spack.value, dict):
        raise ToolError(f"{path}:{doc.line}:{doc.col}: spack: missing; a Spack environment "
                        "is a mapping under `spack:`", 2)
    checked = 0
    for node, key in _spec_nodes(spack, recipe):
        text = node.value if key.startswith("spack.specs") or node.value.startswith(
            recipe.name) else recipe.name + " " + node.value
        if parse_node(text)[0] != recipe.name:
            continue
        checked += 1
        problem = check_spec(recipe, text)
        if problem:
            raise ToolError(f"{path}:{node.line}:{node.col}: {key}: {problem}", 2)
    return checked
