#!/usr/bin/env python3
"""scripts/check-function-size.py - the `size` check of scripts/check-style.sh:
no C++ function longer than a limit (--max, 100 lines unless told: the
project's limit, which check-style.sh passes), counted from its signature's
first line (after any template head) to its closing brace; no Python function
(a .py file) longer than that limit either, counted from its `def` line to its
last line, and, with --max-file, no file longer than that.

usage: check-function-size.py [--max N] [--max-file N] FILE...

Prints `file:line: function NAME is N lines (at most MAX)` for each function
over the limit, and `file: N lines (at most MAX)` for each file over
--max-file; exit status 1 when there was one, 2 for bad usage or a file that
cannot be read.

A Python function is every def (methods and nested functions too, each
counted whole) as Python's own parser (ast) reads it.

It reads the C++ as clang-format leaves it, without a compiler: comments,
string and character literals and preprocessor lines are skipped (of an
#if/#elif/#else, only the first branch is read, so that a definition spelled
twice counts once), and a function is a brace at namespace or class scope
whose declaration has a parameter list and no `=` before it: free functions,
member functions defined in their class or outside it, and the bodies of
macros such as TEST(Suite, Name). Lambdas and nested classes count as lines
of the function that holds them."""

import ast
import re
import sys

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)")
  | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<number>\.?[0-9](?:[0-9A-Za-z_.']|[eEpP][+-])*)
  | (?P<punct>::|->|[^\s])
""", re.S | re.X)

_CONDITIONAL = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
# Words before a parenthesis that is not the parameter list.
_NOT_A_NAME = {"decltype", "alignas", "__attribute__", "__launch_bounds__", "noexcept",
               "sizeof", "alignof"}


def _without_preprocessor(text):
    """`text` with each preprocessor line (continuations included) and each
    line of a later #elif/#else branch blanked, so that lines keep their
    numbers."""
    out = []
    skipping = []  # per open #if: whether its current branch is skipped
    continued = False
    for line in text.split("\n"):
        if continued or line.lstrip().startswith("#"):
            m = None if continued else _CONDITIONAL.match(line)
            if m:
                word = m.group(1)
                if word.startswith("if"):
                    skipping.append(bool(skipping and skipping[-1]))
                elif word in ("elif", "else") and skipping:
                    skipping[-1] = True  # a later branch: read the first only
                elif word == "endif" and skipping:
                    skipping.pop()
            continued = line.rstrip().endswith("\\")
            out.append("")
        elif any(skipping):
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def tokens(text):
    """[(token, line)] of the C++ in `text`, without comments."""
    text = _without_preprocessor(text)
    found, line, pos = [], 1, 0
    for m in _TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if m.lastgroup not in ("space", "comment"):
            found.append((m.group(0), line))
    return found


def _strip_template_heads(head):
    """`head` ([(token, line)]) without its `template <...>` lists."""
    out, depth, i = [], 0, 0
    while i < len(head):
        t = head[i][0]
        if depth == 0 and t == "template" and i + 1 < len(head) and head[i + 1][0] == "<":
            depth, i = 1, i + 2
            continue
        if depth:
            depth += {"<": 1, ">": -1}.get(t, 0)
        else:
            out.append(head[i])
        i += 1
    return out


def _is_word(t):
    return t[:1].isalpha() or t[:1] == "_"


def _function_name(head):
    """The name a declaration head defines when it is a function's (it has a
    parameter list, and no `=` before it at the top level), else None."""
    toks = [t for t, _ in _strip_template_heads(head)]
    if not toks or toks[0] in ("namespace", "enum", "using", "typedef"):
        return None
    if toks == ["extern", '"C"']:
        return None
    angles = 0  # inside a type's template arguments: std::function<void()>
    for i, t in enumerate(toks):
        if t in ("struct", "class", "union") and "(" not in toks[:i]:
            return None
        if t in ("<", ">") and (i == 0 or toks[i - 1] != "operator"):
            angles = max(angles + (1 if t == "<" else -1), 0)
            continue
        if angles:
            continue
        if t == "=" and (i == 0 or toks[i - 1] != "operator"):
            return None
        if t == "operator":
            j = i + 1
            if toks[j:j + 2] == ["(", ")"]:
                j += 2
            while j < len(toks) and toks[j] != "(":
                j += 1
            return _qualified(toks, i, "".join(toks[i:j]))
        if t == "(" and i > 0 and _is_word(toks[i - 1]) and toks[i - 1] not in _NOT_A_NAME:
            name = toks[i - 1]
            if name.isupper() and ")" in toks[i:]:  # a macro: TEST(Suite, Name)
                return name + "".join(x + " " if x == "," else x
                                      for x in toks[i:toks.index(")", i) + 1])
            return _qualified(toks, i - 1, name)
    return None


def _qualified(toks, i, name):
    """`name` at toks[i], with the `A::B::` before it."""
    while i >= 2 and toks[i - 1] == "::" and _is_word(toks[i - 2]):
        name = toks[i - 2] + "::" + name
        i -= 2
    if i >= 1 and toks[i - 1] == "~":
        name = "~" + name
    return name


def functions(text):
    """[(name, first line, last line)] of the function bodies in `text`."""
    found = []
    stack = []  # per open brace: "scope" (namespace, class), "function" or "other"
    head = []  # the declaration read so far at this scope
    parens = 0  # parentheses open in the head
    for t, line in tokens(text):
        at_scope = not stack or stack[-1][0] == "scope"
        if not at_scope:
            if t == "{":
                stack.append(("other", line, None))
            elif t == "}":
                kind, first, name = stack.pop()
                if kind == "function":
                    found.append((name, first, line))
                    head = []
            continue
        if t == "(":
            parens += 1
        elif t == ")":
            parens = max(parens - 1, 0)
        if t == "{":
            kind = _brace_kind(head, parens)
            if kind == "function":
                signature = _strip_template_heads(head)
                start = signature[0][1] if signature else line
                stack.append(("function", start, _function_name(head) or "?"))
            elif kind == "scope":
                stack.append(("scope", line, None))
                head = []
            else:  # an initializer: the declaration goes on after it
                stack.append(("other", line, None))
            continue
        if t == "}":
            if stack:
                stack.pop()
            head = []
            continue
        if t == ";" and parens == 0:
            head = []
            continue
        access = ("public", "private", "protected")
        if t == ":" and parens == 0 and head and head[-1][0] in access:
            head = []
            continue
        head.append((t, line))
    return found


def _brace_kind(head, parens):
    toks = [t for t, _ in _strip_template_heads(head)]
    if parens or not toks:
        return "other"  # a default argument's braces; a block alone
    if toks[0] == "namespace" or toks == ["extern", '"C"']:
        return "scope"
    for i, t in enumerate(toks):
        if t == "(":
            break
        if t in ("struct", "class", "union"):
            return "scope"
        if t == "enum" or t == "=":
            return "other"
    if _function_name(head) is None:
        return "other"
    # A constructor's member initializer list: `x_{v}` initializes, the brace
    # after a `)` or `}` (or the one after the parameter list) is the body.
    close = len(toks) - 1 - toks[::-1].index(")") if ")" in toks else -1
    if ":" in toks[close + 1:] and (_is_word(toks[-1]) or toks[-1] == ">"):
        return "other"
    return "function"


def python_functions(text):
    """[(name, first line, last line)] of the Python functions in `text`:
    every def, methods and nested ones too, from the def line to its last."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, node.lineno, node.end_lineno))
    return sorted(found, key=lambda f: f[1])


def main(argv):
    limit = 100  # the project's limit (CONTRIBUTING.md)
    file_limit = None
    files = []
    args = iter(argv)
    for a in args:
        if a in ("--max", "--max-file"):
            try:
                n = int(next(args))
            except (StopIteration, ValueError):
                print(f"check-function-size: {a} needs a number", file=sys.stderr)
                return 2
            if a == "--max":
                limit = n
            else:
                file_limit = n
        elif a.startswith("-"):
            print(f"check-function-size: unknown option '{a}'", file=sys.stderr)
            return 2
        else:
            files.append(a)
    over = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            print(f"check-function-size: {path}: {e}", file=sys.stderr)
            return 2
        python = path.endswith(".py")
        try:
            found = python_functions(text) if python else functions(text)
        except SyntaxError as e:
            print(f"check-function-size: {path}: {e}", file=sys.stderr)
            return 2
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if file_limit is not None and lines > file_limit:
            print(f"{path}: {lines} lines (at most {file_limit})")
            over += 1
        for name, first, last in found:
            n = last - first + 1
            if n > limit:
                print(f"{path}:{first}: function {name} is {n} lines (at most {limit})")
                over += 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
