"""Code versions: a hash of the source a kernel runs, derived from the sources, never kept by
hand (karma/code_version.hpp; the build writes each mini-app's table of source hashes). A
namespace-scope definition's source hash covers its tokens and, transitively, those of every
definition it names (looked up as C++ does in namespaces; an overload set counts whole): moving
code, or renaming what a kernel does not use, leaves it. A kernel's code version hashes its
entries' source hashes and its launch shape, never the run's sizes."""

import hashlib
import itertools
import json
import os
import pathlib
import re
import subprocess

from karma_tools.core import atomic_write

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)")
  | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<number>\.?[0-9](?:[0-9A-Za-z_.']|[eEpP][+-])*)
  | (?P<punct>::|->|<<=|>>=|[-+*/%&|^!=<>]=|&&|\|\||<<|>>|\+\+|--|[^\s])
""", re.S | re.X)

_CLASS_KEYS = ("struct", "class", "union", "enum")
_SKIP_WORDS = {"template", "typename", "inline", "constexpr", "static", "const", "extern",
               "KOKKOS_INLINE_FUNCTION", "KOKKOS_FUNCTION", "KOKKOS_FORCEINLINE_FUNCTION",
               "operator", "final", "override", "noexcept", "explicit", "virtual", "auto",
               "decltype", "return", "__global__", "__device__", "__host__", "void", "if",
               "else", "for", "while", "switch", "case"}
# Words followed by parentheses that come before a declaration's name.
_PARENS_BEFORE_NAME = ("decltype", "operator", "__launch_bounds__")


def tokens(text):
    """The C++ tokens of `text`, without comments or preprocessor lines (continued too)."""
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\[ \t\r]*\n)*[^\n]*", "", text, flags=re.M)
    return [m.group(0) for m in _TOKEN.finditer(text) if m.lastgroup not in ("space", "comment")]


def _is_word(token):
    return token[:1].isalpha() or token[:1] == "_"


def _angles(depth, t):
    """The depth of <...> after token t (nested <> counted, > and >> closing)."""
    return max(depth + {"<": 1, ">": -1, ">>": -2}.get(t, 0), 0)


def _name_of(decl):
    """(qualifier, name, enumerators) of a declaration, or None: `Deck::load` is (["Deck"],
    "load", []); an unscoped enum's enumerators name its scope too (the first names it)."""
    depth = 0
    words = []  # (token, index)
    for i, t in enumerate(decl):
        if t == "<" and not (words and words[-1][0] == "operator"):
            depth += 1  # template <...>, or a return type's arguments
            continue
        if depth:  # inside <...>
            depth = _angles(depth, t)
            continue
        if t == "enum":
            return _enum_name(decl, i)
        if t in _CLASS_KEYS:
            rest = [x for x in decl[i + 1:i + 4] if _is_word(x) and x not in _CLASS_KEYS]
            return ([], rest[0], []) if rest else None
        if t == "using" and i + 2 < len(decl) and decl[i + 2] == "=":
            return [], decl[i + 1], []
        if t in ("(", "=", "{", ";", "["):
            names = [(w, k) for w, k in words if w not in _SKIP_WORDS]
            if t == "(" and (not names or words[-1][0] in _PARENS_BEFORE_NAME):
                words.append((t, i))  # decltype(auto), operator(): the name comes later
                continue
            if not names or not _is_word(names[-1][0]):
                return None
            name, k = names[-1]
            # `using a::b;` declares b here; `void A::f() {` defines A's f
            return [] if decl[0] == "using" else _qualifier(decl, k), name, []
        if t != "::":
            words.append((t, i))
    return None


def _qualifier(decl, k):
    """The words before `::` that qualify the name at decl[k]."""
    chain = []
    while k >= 2 and decl[k - 1] == "::" and _is_word(decl[k - 2]):
        chain.insert(0, decl[k - 2])
        k -= 2
    return chain


def _enum_name(decl, i):
    """_name_of for the enum at decl[i]."""
    scoped = i + 1 < len(decl) and decl[i + 1] in ("class", "struct")
    j = i + 2 if scoped else i + 1
    name = decl[j] if j < len(decl) and _is_word(decl[j]) else None
    enumerators = []
    if "{" in decl and not scoped:
        body, depth = decl[decl.index("{") + 1:], 0
        for k, t in enumerate(body):
            depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(t, 0)
            if depth == 0 and _is_word(t) and (k == 0 or body[k - 1] == ","):
                enumerators.append(t)
    name = name or (enumerators[0] if enumerators else None)
    return ([], name, [e for e in enumerators if e != name]) if name else None


class Unit:
    """A namespace-scope declaration: its qualified name, lookup scopes (innermost last),
    enumerators, tokens, and whether it defines (a body or initialiser)."""

    def __init__(self, namespaces, declared, toks):
        qualifier, name, self.enumerators = declared
        self.scope = [part for n in namespaces if n for part in n.split("::")]
        self.qname = "::".join(self.scope + qualifier + [name])
        self.lookup = [p for p in self.scope + qualifier if p != "(anonymous)"]
        self.toks = toks
        # a default argument's `= {}` defines nothing
        parens = itertools.accumulate({"(": 1, ")": -1}.get(t, 0) for t in toks)
        self.defines = any(t in ("{", "=") and p == 0 for t, p in zip(toks, parens))
        self.usings = []  # namespaces a using-directive makes visible here


def _parse(text):
    """(units, [(scope, namespace)] of each `using namespace`) of a file."""
    toks = tokens(text)
    units, usings = [], []
    namespaces = []  # None for a brace that is not a namespace's (extern "C" {)
    decl, i = [], 0
    depth = 0  # braces open within the current declaration
    parens = 0  # parentheses open: a brace within them (a default `= {}`) ends nothing
    while i < len(toks):
        t = toks[i]
        if not decl:
            skipped = _scope_token(toks, i, namespaces, usings)
            if skipped:
                i = skipped
                continue
        decl.append(t)
        parens += {"(": 1, ")": -1}.get(t, 0)
        depth += 0 if parens else {"{": 1, "}": -1}.get(t, 0)
        if not parens and not depth and (t == ";" or t == "}" and not _wants_semicolon(decl)
                                         and toks[i + 1:i + 2] != [";"]):
            declared = _name_of(decl)
            if declared and declared[1]:
                units.append(Unit(namespaces, declared, decl))
            decl = []
        i += 1
    return units, usings


def _scope_token(toks, i, namespaces, usings):
    """Where parsing goes on after a namespace brace, using-directive or `extern "C"`, or 0."""
    t = toks[i]
    after = toks[i + 1] if i + 1 < len(toks) else ""
    if t == "namespace":
        j = next((j for j in range(i + 1, len(toks)) if toks[j] in ("{", ";", "=")), len(toks))
        if j < len(toks) and toks[j] == "{":
            namespaces.append("".join(toks[i + 1:j]) or "(anonymous)")
            return j + 1
        return 0  # an alias: a declaration
    if t == "}" and namespaces:
        namespaces.pop()
        return i + 1
    if t == "extern" and after == '"C"':
        if i + 2 < len(toks) and toks[i + 2] == "{":
            namespaces.append(None)
            return i + 3
        return i + 2
    if t == "using" and after == "namespace":
        j = next((j for j in range(i + 2, len(toks)) if toks[j] == ";"), len(toks))
        scope = [part for n in namespaces if n for part in n.split("::")]
        usings.append((scope, "".join(toks[i + 2:j])))
        return j + 1
    return 0


def _wants_semicolon(decl):
    """Whether decl ends at ';' (a class, an initialised variable), not '}' (a function),
    from its head before '{' or '(', template parameters left out."""
    head, depth, i = [], 0, 0
    while i < len(decl) and (depth or decl[i] not in ("{", "(")):
        t = decl[i]
        if depth == 0 and t == "template" and i + 1 < len(decl) and decl[i + 1] == "<":
            depth, i = 1, i + 2
            continue
        if depth:
            depth = _angles(depth, t)
        else:
            head.append(t)
        i += 1
    return any(k in head for k in _CLASS_KEYS) or "=" in head


def _units(files):
    """{qualified name: its definitions (else declarations)} of `files`, usings attached."""
    found = {}
    for path in sorted(files):
        units, usings = _parse(files[path])
        for u in units:
            u.usings = [target for scope, target in usings if u.scope[:len(scope)] == scope]
            found.setdefault(u.qname, []).append(u)
    return {q: [u for u in us if u.defines] or us for q, us in found.items()}


class _Names:
    """Name lookup in namespaces: unqualified, the innermost enclosing one that has it (and
    using-directives'); qualified, where it fits; a call found nowhere, every namespace (ADL)."""

    def __init__(self, units):
        self.visible, self.simple, self.adl = {}, {}, {}
        for qname, us in units.items():
            parent, _, last = qname.rpartition("::")
            # the scope as code outside an anonymous namespace spells it
            scope = "::".join(p for p in parent.split("::") if p != "(anonymous)")
            names = {last} | {e for u in us for e in u.enumerators}
            for name in names:
                full = f"{scope}::{name}" if scope else name
                self.visible.setdefault(full, set()).add(qname)
                self.simple.setdefault(name, set()).add((full, qname))
                # argument-dependent lookup finds no class's member, and what
                # an anonymous namespace holds only where ordinary lookup does
                if parent not in units and "(anonymous)" not in qname:
                    self.adl.setdefault(name, set()).add(qname)

    def named(self, unit):
        """The qualified names that the unit's tokens name, itself aside."""
        toks, found, lookup = unit.toks, set(), unit.lookup
        for i, w in enumerate(toks):
            if not _is_word(w) or w not in self.simple:
                continue
            before = toks[i - 1] if i else ""
            if before in (".", "->"):
                continue  # a member
            if before == "::":
                if i < 2 or toks[i - 2] != ">":  # not a member of a template's instance
                    found |= self._qualified(_qualifier(toks, i), w)
                continue
            hits = next(filter(None, (self.visible.get("::".join(lookup[:k] + [w]))
                                      for k in range(len(lookup), -1, -1))), set())
            hits = hits.union(*(self._qualified(t.split("::"), w) for t in unit.usings))
            if not hits and i + 1 < len(toks) and toks[i + 1] == "(":
                hits = self.adl.get(w, set())
            found |= hits
        found.discard(unit.qname)
        return found

    def _qualified(self, chain, w):
        if not chain:  # ::w
            return self.visible.get(w, set())
        suffix = "::".join(chain + [w])
        return {q for full, q in self.simple[w] if full == suffix or full.endswith("::" + suffix)}


def source_hashes(files):
    """{qualified name: source hash} of `files` ({path: text}), as the module says."""
    units = _units(files)
    names = _Names(units)
    uses = {q: set().union(*(names.named(u) for u in us)) for q, us in units.items()}
    for q in units:  # a class's members defined outside it are part of it
        parent = q.rpartition("::")[0]
        if parent in uses:
            uses[parent].add(q)
    digest = {q: hashlib.sha256("\n".join(sorted(" ".join(u.toks) for u in us)).encode())
              .hexdigest() for q, us in units.items()}
    hashes = {}
    for qname in units:
        seen, todo = {qname}, [qname]
        while todo:
            new = uses[todo.pop()] - seen
            seen |= new
            todo += new
        joined = "".join(sorted(digest[q] for q in seen))
        hashes[qname] = hashlib.sha256(joined.encode()).hexdigest()[:16]
    return hashes


# code_version.hpp's code_version_scheme: two schemes' versions do not compare. 1: suite
# 0.2.0's (no code.scheme); 2: lookup by scope, text only, launch shapes only.
SCHEME = 2


def scheme_of(code):
    """The scheme of a result's `code` object (1 where it names none)."""
    value = code.get("scheme", 1) if isinstance(code, dict) else 1
    return value if isinstance(value, int) else 1


def combine(symbol_hashes, launch):
    """(source, version) of a kernel: its entry hashes', then with its launch (JSON)."""
    source = hashlib.sha256("\n".join(symbol_hashes).encode()).hexdigest()[:16]
    text = json.dumps(launch, sort_keys=True, separators=(",", ":"))
    version = hashlib.sha256((source + "\n" + text).encode()).hexdigest()[:16]
    return source, version


def app_sources(root, app, read=None, listing=None):
    """{path: text} a mini-app's code versions cover (its C++ but tests, miniapps/common's,
    the core's), under root or through read(path) and listing(folder) (e.g. at a git rev)."""
    listing = listing or (lambda d: _files_in(os.path.join(root, d)))
    read = read or (lambda p: open(os.path.join(root, p), encoding="utf-8").read())
    files = {}
    for folder in (f"miniapps/{app}", "miniapps/common"):
        for name in listing(folder):
            if name.endswith((".hpp", ".cpp")) and not name.startswith("tests/"):
                files[f"{folder}/{name}"] = read(f"{folder}/{name}")
    # The core: its folders before layers, then each common/LAYER/{include/karma,src}.
    core = re.compile(r"(?:[^/]+/)?(?:include/karma/[^/]+\.hpp|src/[^/]+\.cpp)")
    for name in listing("common"):
        if core.fullmatch(name):
            files[f"common/{name}"] = read(f"common/{name}")
    return files


def _files_in(folder):
    """The files under `folder` (none when it is missing), sorted, by their path in it."""
    return sorted(os.path.relpath(os.path.join(top, n), folder).replace(os.sep, "/")
                  for top, _, names in os.walk(folder) for n in names)


def git(repo, *args):
    """git's output (bytes) in repo, or None where it fails or there is no git."""
    try:
        made = subprocess.run(["git", "-C", repo, *args], capture_output=True)
    except OSError:
        return None
    return made.stdout if made.returncode == 0 else None


def git_sources(repo, revision, app):
    """app_sources at a git revision of `repo`; None when git does not know it."""
    if git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}") is None:
        return None

    def listing(folder):  # none where the revision lacks the folder
        names = git(repo, "ls-tree", "-r", "--name-only", f"{revision}:{folder}") or b""
        return sorted(names.decode("utf-8").splitlines())
    return app_sources(repo, app, listing=listing,
                       read=lambda p: git(repo, "show", f"{revision}:{p}").decode("utf-8"))


def write_table(root, app, out):
    """Writes app's table to out only when it changed: an unchanged tree rebuilds nothing."""
    hashes = source_hashes(app_sources(root, app))
    lines = ["// Generated by python/src/karma_tools/results/codeversion.py: the source hash of",
             "// every namespace-scope definition of this mini-app and the core's headers.",
             "#pragma once", "", "#include \"karma/code_version.hpp\"", "",
             "namespace karma::generated {", "",
             "inline const CodeTable code_table = {"]
    lines += [f'    {{"{q}", "{h}"}},' for q, h in sorted(hashes.items())]
    lines += ["};", "", "}  // namespace karma::generated", ""]
    text = "\n".join(lines)
    if os.path.isfile(out) and pathlib.Path(out).read_text(encoding="utf-8") == text:
        return
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    atomic_write(out, text)
