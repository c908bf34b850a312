"""The tools' layout (issues 79, 91): karma_tools is a library (packages by
domain: results, campaign, score, compare, report, bundle) and thin
commands (karma_tools.cli, one module per entry point). Read from
the sources (ast), without importing them: no import circle among the
modules, no import of a karma_tools module inside a function or class (the
way circles used to be dodged), no private name (a leading underscore)
imported or used from another module, no name imported that its module
does not define, the library never importing the commands, and every entry
point a command module's main."""

import ast
import os

import pytest

from conftest import SRC, entry_points

PACKAGE = "karma_tools"


def module_name(path, src=SRC):
    rel = os.path.relpath(path, src)[:-len(".py")].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def sources(src=SRC):
    """{module name: path} of every module of karma_tools under src."""
    out = {}
    for folder, dirs, files in os.walk(os.path.join(src, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                out[module_name(os.path.join(folder, f), src)] = os.path.join(folder, f)
    return out


class Imports(ast.NodeVisitor):
    """What one module takes from the others: every import (with whether it
    is inside a function or class) and the attributes read of the modules
    it binds."""

    def __init__(self, name, is_package, modules):
        self.name, self.modules = name, modules
        self.package = name if is_package else name.rpartition(".")[0]
        self.imports = []  # (line, module imported, the name taken or None, nested)
        self.bound = {}  # local name -> module it names
        self.attributes = []  # (line, module, attribute)
        self.depth = 0

    def absolute(self, node):
        if not node.level:
            return node.module
        base = self.package.split(".")
        base = base[:len(base) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def nested(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = nested

    def visit_Import(self, node):
        for a in node.names:
            if a.name == PACKAGE or a.name.startswith(PACKAGE + "."):
                self.imports.append((node.lineno, a.name, None, self.depth > 0))
                if a.asname:
                    self.bound[a.asname] = a.name

    def visit_ImportFrom(self, node):
        base = self.absolute(node)
        if not base or not (base == PACKAGE or base.startswith(PACKAGE + ".")):
            return
        for a in node.names:
            full = f"{base}.{a.name}"
            if full in self.modules:  # a module: `from . import archive`
                self.imports.append((node.lineno, full, None, self.depth > 0))
                self.bound[a.asname or a.name] = full
            else:  # a name the module defines
                self.imports.append((node.lineno, base, a.name, self.depth > 0))

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.bound:
            self.attributes.append((node.lineno, self.bound[node.value.id], node.attr))
        self.generic_visit(node)


def read(src=SRC):
    """{module: Imports} of every module under src."""
    modules = sources(src)
    out = {}
    for name, path in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        v = Imports(name, path.endswith("__init__.py"), modules)
        v.visit(tree)
        out[name] = v
    return out


def top_level_names(path):
    """The names a module binds at its top level: what another may import."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def graph(found):
    """{module: {modules it imports}}, karma_tools modules only."""
    return {name: {m for _, m, _, _ in v.imports if m in found and m != name}
            for name, v in found.items()}


def cycles(edges):
    """Each import circle once, as [a, b, ..., a] (a depth-first search)."""
    out, state, stack = [], {}, []

    def visit(u):
        state[u] = "open"
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == "open":
                out.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = "done"

    for u in sorted(edges):
        if u not in state:
            visit(u)
    return out


def private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def problems(src=SRC):
    """Every breach of the layout, a line each: file:line: what."""
    found = read(src)
    paths = sources(src)
    out = []
    defined = {name: top_level_names(path) for name, path in paths.items()}
    for c in cycles(graph(found)):
        out.append(f"import circle: {' -> '.join(c)}")
    for name, v in sorted(found.items()):
        where = os.path.relpath(paths[name], src)
        for line, module, taken, nested in v.imports:
            what = f"{module}.{taken}" if taken else module
            if nested:
                out.append(f"{where}:{line}: {what} imported inside a function or class")
            if taken and module in defined and taken not in defined[module]:
                out.append(f"{where}:{line}: {what} imported, but {module} has no {taken}")
            if taken and private(taken):
                out.append(f"{where}:{line}: private name {what} imported from another module")
            if not name.startswith(f"{PACKAGE}.cli") and module.startswith(f"{PACKAGE}.cli"):
                out.append(f"{where}:{line}: the library imports the command {module}")
            if (name.startswith(f"{PACKAGE}.cli.") and module.startswith(f"{PACKAGE}.cli.")
                    and module != name):
                out.append(f"{where}:{line}: the command imports another command {module}")
        for line, module, attribute in v.attributes:
            if private(attribute) and module != name:
                out.append(f"{where}:{line}: private name {module}.{attribute} used from "
                           "another module")
    return out


def test_the_layout_holds():
    found = problems()
    assert not found, "\n".join(found)


def test_each_entry_point_is_a_command_module():
    modules = sources()
    for tool, target in entry_points().items():
        module, function = target.split(":")
        assert function == "main", (tool, target)
        assert module.startswith(f"{PACKAGE}.cli."), (tool, target)
        assert module in modules, (tool, target)


def write(root, files):
    for rel, text in files.items():
        path = root / PACKAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


CLEAN = {
    "__init__.py": "from .lib.core import VERSION\n",
    "lib/__init__.py": "",
    "lib/core.py": "VERSION = 1\n\n\ndef shared():\n    return VERSION\n",
    "lib/data.py": "from . import core\nfrom .core import shared\n\n\ndef load():\n"
                   "    return core.VERSION, shared()\n",
    "cli/__init__.py": "",
    "cli/tool.py": "from ..lib import data\n\n\ndef main():\n    return data.load()\n",
}

BROKEN = [
    # (file, text, what the problem says)
    ("lib/core.py", "from . import data\nVERSION = 1\n",
     "import circle: karma_tools.lib.core -> karma_tools.lib.data -> karma_tools.lib.core"),
    ("lib/core.py", "VERSION = 1\n\n\ndef late():\n    from . import data\n    return data\n",
     "lib/core.py:5: karma_tools.lib.data imported inside a function or class"),
    ("lib/data.py", "from .core import _hidden\n",
     "lib/data.py:1: private name karma_tools.lib.core._hidden imported"),
    ("lib/data.py", "from . import core\n\n\ndef load():\n    return core._hidden()\n",
     "lib/data.py:5: private name karma_tools.lib.core._hidden used"),
    ("lib/data.py", "import karma_tools.lib.core as c\n\nX = c._hidden\n",
     "lib/data.py:3: private name karma_tools.lib.core._hidden used"),
    ("lib/data.py", "from ..cli import tool\n",
     "lib/data.py:1: the library imports the command karma_tools.cli.tool"),
    ("cli/other.py", "from . import tool\n",
     "cli/other.py:1: the command imports another command karma_tools.cli.tool"),
    ("cli/tool.py", "from ..lib.data import gone\n",
     "cli/tool.py:1: karma_tools.lib.data.gone imported, but karma_tools.lib.data has no gone"),
]


def test_a_clean_tree_has_no_problem(tmp_path):
    assert problems(write(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("name, text, finding", BROKEN, ids=[b[2][:40] for b in BROKEN])
def test_each_breach_is_found(tmp_path, name, text, finding):
    found = problems(write(tmp_path, dict(CLEAN, **{name: text})))
    assert any(finding in p for p in found), found
