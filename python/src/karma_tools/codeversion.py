"""Code versions: a hash of the source of the code a kernel runs, derived
from the sources themselves, never kept by hand.

The C++ sources of a mini-app (its own files and the core's headers) are
split into their namespace-scope definitions: functions, classes, variables
and aliases, each named by its qualified name. A definition's source hash
covers its own text (comments, preprocessor lines and layout removed) and
that of every definition it names, transitively, by unqualified name (an
over-approximation: an overload set or a name in another namespace counts
as used). A kernel names its entry definitions (the functors and functions
its launch runs); its code version is the hash of their source hashes and
of its launch choices (karma/harness.hpp, Variant::code and ::launch).

The build runs this file as a script (stdlib only) to write each mini-app's
table of source hashes; karma-compare imports it to derive the code
versions of results older than code versions from the sources of the git
revision they were built from."""

import hashlib
import json
import os
import re
import subprocess
import sys

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
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


def _strip_preprocessor(text):
    """The text without preprocessor lines (continued lines included)."""
    out, continued = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if continued or stripped.startswith("#"):
            continued = stripped.endswith("\\")
            continue
        out.append(line)
    return "\n".join(out)


def tokens(text):
    """The C++ tokens of `text`: no comments, no preprocessor lines."""
    found = []
    for m in _TOKEN.finditer(_strip_preprocessor(text)):
        kind = m.lastgroup
        if kind in ("space", "line_comment", "block_comment"):
            continue
        found.append(m.group(0))
    return found


def _is_word(token):
    return token[:1].isalpha() or token[:1] == "_"


def _name_of(decl):
    """The unqualified name a namespace-scope declaration defines, or None."""
    depth = 0
    words = []
    for i, t in enumerate(decl):
        if t == "<" and not (words and words[-1] == "operator"):
            depth += 1  # template <...>, or a return type's arguments
            continue
        if depth:  # inside <...> (nested <> counted, > and >> closing)
            depth += {"<": 1, ">": -1, ">>": -2}.get(t, 0)
            depth = max(depth, 0)
            continue
        if t in _CLASS_KEYS:
            rest = [x for x in decl[i + 1:i + 4] if _is_word(x) and x not in _CLASS_KEYS]
            return rest[0] if rest else None
        if t == "using" and i + 2 < len(decl) and decl[i + 2] == "=":
            return decl[i + 1]
        if t in ("(", "=", "{", ";", "["):
            names = [w for w in words if w not in _SKIP_WORDS]
            if t == "(" and (not names or words[-1] in _PARENS_BEFORE_NAME):
                words.append(t)  # decltype(auto), operator(): the name comes later
                continue
            return names[-1] if names and _is_word(names[-1]) else None
        if _is_word(t):
            words.append(t)
        elif t != "::":
            words.append(t)
    return None


def definitions(text):
    """[(qualified name, token list)] of the namespace-scope definitions."""
    toks = tokens(text)
    out = []
    namespaces = []  # None for a brace that is not a namespace's
    decl = []
    depth = 0  # braces open within the current declaration
    parens = 0  # parentheses open: a brace within them (a default `= {}`) ends nothing
    i = 0
    while i < len(toks):
        t = toks[i]
        if not decl and t == "namespace":
            j = i + 1
            name = []
            while j < len(toks) and toks[j] not in ("{", ";", "="):
                name.append(toks[j])
                j += 1
            if j < len(toks) and toks[j] == "{":
                namespaces.append("".join(name) or "(anonymous)")
                i = j + 1
                continue
        if not decl and t == "}" and namespaces:
            namespaces.pop()
            i += 1
            continue
        if not decl and t in ("using", "extern") and i + 1 < len(toks) and \
                toks[i + 1] in ("namespace", '"C"'):
            while i < len(toks) and toks[i] != ";":
                i += 1
            i += 1
            continue
        decl.append(t)
        parens += {"(": 1, ")": -1}.get(t, 0)
        if parens:
            i += 1
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif t == ";" and depth == 0:
            _keep(out, namespaces, decl)
            decl = []
        if t == "}" and depth == 0 and not _wants_semicolon(decl) and \
                (i + 1 >= len(toks) or toks[i + 1] != ";"):
            _keep(out, namespaces, decl)
            decl = []
        i += 1
    return out


def _without_template_heads(decl):
    """`decl` without its `template <...>` parameter lists."""
    out, depth, i = [], 0, 0
    while i < len(decl):
        t = decl[i]
        if depth == 0 and t == "template" and i + 1 < len(decl) and decl[i + 1] == "<":
            depth, i = 1, i + 2
            continue
        if depth:
            depth += {"<": 1, ">": -1, ">>": -2}.get(t, 0)
            depth = max(depth, 0)
        else:
            out.append(t)
        i += 1
    return out


def _wants_semicolon(decl):
    """A class or an initialised variable ends at ';', a function at '}'."""
    decl = _without_template_heads(decl)
    head = decl[:decl.index("{")] if "{" in decl else decl
    if "(" in head:
        head = head[:head.index("(")]
    return any(k in head for k in _CLASS_KEYS) or "=" in head


def _keep(out, namespaces, decl):
    name = _name_of(decl)
    if name:
        scope = [n for n in namespaces if n]
        out.append(("::".join(scope + [name]), list(decl)))


def source_hashes(files):
    """{qualified name: source hash} over the definitions of `files`
    ({path: text}); a name defined more than once (overloads,
    specialisations) is one entry of all its definitions."""
    texts = {}
    for path in sorted(files):
        for qname, toks in definitions(files[path]):
            texts.setdefault(qname, []).append(" ".join(toks))
    by_simple = {}
    for qname in texts:
        by_simple.setdefault(qname.rsplit("::", 1)[-1], []).append(qname)
    uses = {}
    for qname, parts in texts.items():
        uses[qname] = {q for part in parts for q in _named(part.split(), by_simple)
                       if q != qname}
    hashes = {}
    for qname in texts:
        seen, todo = {qname}, [qname]
        while todo:
            for q in uses[todo.pop()]:
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
        h = hashlib.sha256()
        for q in sorted(seen):
            h.update(q.encode() + b"\n" + "\n".join(texts[q]).encode() + b"\n")
        hashes[qname] = h.hexdigest()[:16]
    return hashes


def _named(toks, by_simple):
    """The definitions that the tokens name: a member (`.x`, `->x`) names
    none; a qualified name (`std::min`) only those it can stand for."""
    found = set()
    for i, w in enumerate(toks):
        if not _is_word(w) or w not in by_simple:
            continue
        before = toks[i - 1] if i else ""
        if before in (".", "->"):
            continue
        if before == "::" and i >= 2 and _is_word(toks[i - 2]):
            suffix = toks[i - 2] + "::" + w
            found.update(q for q in by_simple[w] if q == suffix or q.endswith("::" + suffix))
            continue
        found.update(by_simple[w])
    return found


def combine(symbol_hashes, launch):
    """(source, version) of a kernel: its entry definitions' hashes, in
    order, then that with its launch choices (canonical JSON)."""
    source = hashlib.sha256("\n".join(symbol_hashes).encode()).hexdigest()[:16]
    text = json.dumps(launch, sort_keys=True, separators=(",", ":"))
    version = hashlib.sha256((source + "\n" + text).encode()).hexdigest()[:16]
    return source, version


def app_sources(root, app, read=None, listing=None):
    """{path: text} of what a mini-app's code versions cover: its own C++
    files and the core's headers, under `root` (or read through `read` and
    `listing` from elsewhere, e.g. a git revision)."""
    listing = listing or (lambda d: sorted(os.listdir(os.path.join(root, d)))
                          if os.path.isdir(os.path.join(root, d)) else [])
    read = read or (lambda p: open(os.path.join(root, p), encoding="utf-8").read())
    files = {}
    for folder, exts in ((f"miniapps/{app}", (".hpp", ".cpp")),
                         ("common/include/karma", (".hpp",))):
        for name in listing(folder):
            if name.endswith(exts):
                files[f"{folder}/{name}"] = read(f"{folder}/{name}")
    return files


def git_sources(repo, revision, app):
    """app_sources at a git revision of `repo`; None when git does not know it."""
    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              check=True).stdout
    try:
        git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except (OSError, subprocess.CalledProcessError):
        return None

    def listing(folder):
        out = git("ls-tree", "--name-only", f"{revision}:{folder}") \
            if git("ls-tree", revision, folder).strip() else ""
        return sorted(out.split())
    return app_sources(repo, app, read=lambda p: git("show", f"{revision}:{p}"),
                       listing=listing)


def _cpp_table(hashes):
    lines = ["// Generated by python/src/karma_tools/codeversion.py: the source hash of",
             "// every namespace-scope definition of this mini-app and the core's headers.",
             "#pragma once", "", "#include \"karma/code_version.hpp\"", "",
             "namespace karma::generated {", "",
             "inline const CodeTable code_table = {"]
    lines += [f'    {{"{q}", "{h}"}},' for q, h in sorted(hashes.items())]
    lines += ["};", "", "}  // namespace karma::generated", ""]
    return "\n".join(lines)


def main(argv=None):
    """codeversion.py ROOT APP OUT.hpp: writes APP's table (only when it
    changed, so an unchanged source tree rebuilds nothing)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print("usage: codeversion.py SOURCE_ROOT APP OUT.hpp", file=sys.stderr)
        return 2
    root, app, out = argv
    text = _cpp_table(source_hashes(app_sources(root, app)))
    try:
        with open(out, encoding="utf-8") as f:
            if f.read() == text:
                return 0
    except OSError:
        pass
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
