"""The release: what a karma version fixes about its score, and whether a checkout still is it
(docs/run-rules.md#releases), code versions computed again and deck keys from --help=json."""

import ast
import hashlib
import io
import json
import os
import pathlib
import subprocess
import tarfile

from karma_tools.core import ToolError, __version__
from karma_tools import docgen
from karma_tools.results import codeversion, rules
from karma_tools.results.archive import read_json
from karma_tools.score import weights as weights_file
from karma_tools.score.figure import DEFAULT_REFERENCE, load_reference, row_name

RELEASE_FILE = os.path.join("campaigns", "procurement", "release.json")
RELEASE_FORMAT = 1
CAMPAIGNS = ("reportable.yaml", "reportable-host.yaml", "weak.yaml")
# The code that judges a run (C++) and reads the judgement back (rules.py).
RULES_CODE = ("common/runtime/src/run_rules.cpp", "common/runtime/include/karma/run_rules.hpp")
# rules.py's place: results/ since 1.1.0, lib/ in 1.0.0 (checked at its own commit).
RULES_PY = ("python/src/karma_tools/results/rules.py", "python/src/karma_tools/lib/rules.py")
NEEDS = "such a change needs a new version, a new reference and a CHANGELOG entry " \
    "(docs/run-rules.md#releases)"


def _read(root, rel, binary=False):
    path = pathlib.Path(root, rel)
    try:
        return path.read_bytes() if binary else path.read_text(encoding="utf-8")
    except OSError as e:
        raise ToolError(f"{rel}: cannot read ({e.strerror})", 2) from None


def _sha256(root, rel):
    return hashlib.sha256(_read(root, rel, binary=True)).hexdigest()


def _string_parts(node):
    """An f-string or format spec as its parts, literal text merged: Pythons split and wrap
    these differently (3.12 adds empty literals, 3.13 gives a plain spec as a Constant)."""
    parts = []  # literal text as str, a field as its tree_text in a tuple
    for value in node.values if isinstance(node, ast.JoinedStr) else [node]:
        if not isinstance(value, ast.Constant):
            parts.append((tree_text(value),))
        elif parts and isinstance(parts[-1], str):
            parts[-1] += value.value
        elif value.value != "":
            parts.append(value.value)
    return f"JoinedStr([{', '.join(repr(p) if isinstance(p, str) else p[0] for p in parts)}])"


def tree_text(node):
    """A syntax tree as text the same in every Python, unlike ast.dump (3.12 added an empty
    type_params to every function): fields empty or None, the ones newer Pythons add, left out."""
    if isinstance(node, ast.JoinedStr):
        return _string_parts(node)
    if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
        return f"FormattedValue(value={tree_text(node.value)}, conversion={node.conversion}, " \
            f"format_spec={_string_parts(node.format_spec)})"
    if isinstance(node, ast.AST):
        fields = (f"{name}={tree_text(value)}" for name, value in ast.iter_fields(node)
                  if value is not None and value != [])
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return f"[{', '.join(tree_text(item) for item in node)}]"
    return repr(node)


def code_hash(root, rel):
    """A hash of a file's code, not its comments: C++ tokens, Python's tree."""
    text = _read(root, rel)
    if rel.endswith(".py"):
        tree = ast.parse(text, rel)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        text = tree_text(tree)
    else:
        text = "\n".join(codeversion.tokens(text))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def deck_keys(apps, bin_dir):
    """{app: {key: [rule, default]}} of each mini-app's deck schema."""
    return {app: {path: [node.get("x-rules"), node.get("default")] for path, node in
                  sorted(rules.schema_keys(docgen.deck_schema(docgen.executable(app, bin_dir))))}
            for app in apps}


def shipped_reference(root):
    return load_reference(os.path.join(root, DEFAULT_REFERENCE))


def record(root, bin_dir, reference, deck_keys_too=True):
    """The release file's content for the checkout at `root`."""
    apps = sorted({r["app"] for r in reference["rows"]})
    weights = weights_file.of_apps(os.path.join(root, weights_file.DEFAULT), apps,
                                   reference["device"]["kind"])
    decks = [rel for rel in (f"inputs/{app}/{cls}.yaml" for app in apps for cls in rules.CLASSES)
             if os.path.isfile(os.path.join(root, rel))]  # strong: some apps', none in 1.0.0
    classes = [c for c in rules.CLASSES if any(rel.endswith(f"/{c}.yaml") for rel in decks)]
    rules_py = [rel for rel in RULES_PY if os.path.isfile(os.path.join(root, rel))][:1]
    return {"karma_release": RELEASE_FORMAT, "version": __version__,
            "reference": {"file": DEFAULT_REFERENCE.replace(os.sep, "/"),
                          "sha256": _sha256(root, DEFAULT_REFERENCE), "name": reference["name"]},
            "classes": {"classes": classes, "weak": rules.WEAK_CLASS,
                        "scored": list(rules.SCORED_CLASSES), "tiers": list(rules.TIERS)},
            "class_decks": {rel: _sha256(root, rel) for rel in decks},
            "campaigns": {f"campaigns/procurement/{c}": _sha256(root, f"campaigns/procurement/{c}")
                          for c in CAMPAIGNS},
            "weights": {app: round(w, 12) for app, w in weights.items()},
            "rules": {"version": _rules_version(root),
                      "code": {rel: code_hash(root, rel) for rel in RULES_CODE + tuple(rules_py)},
                      "deck_keys": deck_keys(apps, bin_dir) if deck_keys_too else {}}}


def new_record(root, bin_dir):
    """record() for a new release; refused for a -dev version or a reference not this code's."""
    if __version__.endswith("-dev"):
        raise ToolError(f"karma {__version__} is a development version, no release: "
                        "set the release's version first", 2)
    reference = shipped_reference(root)
    drift = kernel_drift(reference, root)
    if drift:
        raise ToolError(f"{drift[0]}: the reference was not made by this code "
                        f"({len(drift)} row(s)); make it again first", 2)
    doc = record(root, bin_dir, reference)
    same_version_unchanged(root, doc)
    return doc


def same_version_unchanged(root, doc):
    """Refuses a change under a released version's name: that would make two of it."""
    frozen = released(root)
    found = differences(frozen, doc) if frozen else []
    if found and frozen.get("version") == doc["version"]:
        raise ToolError(f"{RELEASE_FILE}: karma {doc['version']} is released and this "
                        f"checkout differs from it ({found[0]}); raise the version first", 2)


def _rules_version(root):
    """run_rules_version of the C++ (karma/run_rules.hpp)."""
    toks = codeversion.tokens(_read(root, RULES_CODE[1]))
    for i, tok in enumerate(toks[:-2]):
        if tok == "run_rules_version" and toks[i + 1] == "=":
            return toks[i + 2].strip('"')
    raise ToolError(f"{RULES_CODE[1]}: no run_rules_version", 2)


def differences(frozen, now, where=""):
    """The paths at which two records differ, each with both values."""
    if isinstance(frozen, dict) and isinstance(now, dict):
        found = []
        for key in sorted(set(frozen) | set(now)):
            path = f"{where}.{key}" if where else key
            if key not in now:
                found.append(f"{path}: gone (the release has {json.dumps(frozen[key])[:80]})")
            elif key not in frozen:
                found.append(f"{path}: new ({json.dumps(now[key])[:80]}), not in the release")
            else:
                found += differences(frozen[key], now[key], path)
        return found
    return [f"{where}: {json.dumps(now)[:80]}, the release has {json.dumps(frozen)[:80]}"] \
        if frozen != now else []


def kernel_drift(reference, root):
    """A line per reference kernel whose code version the sources no longer give."""
    hashes, found = {}, []
    for row in reference["rows"]:
        name, app = row_name(row), row["app"]
        if not row.get("codes"):
            found.append(f"{name}: the reference does not record what its kernels' code "
                         "versions are made of (made before 1.0.0)")
            continue
        if app not in hashes:
            hashes[app] = codeversion.source_hashes(codeversion.app_sources(root, app))
        for code in row["codes"]:
            missing = [s for s in code["symbols"] if s not in hashes[app]]
            if missing:
                found.append(f"{name}: code_version {code['version']}: {missing[0]} is no "
                             "longer defined")
                continue
            _, now = codeversion.combine([hashes[app][s] for s in code["symbols"]], code["launch"])
            if now != code["version"]:
                found.append(f"{name}: code_version {now}, the reference's {code['version']} "
                             f"({', '.join(code['symbols'])})")
    return found


def released(root):
    """The checkout's release file, checked to be one; None where it has none."""
    path = os.path.join(root, RELEASE_FILE)
    if not os.path.isfile(path):
        return None
    frozen = read_json(path)
    if not isinstance(frozen, dict) or frozen.get("karma_release") != RELEASE_FORMAT:
        raise ToolError(f"{RELEASE_FILE}: not a release file (karma_release: {RELEASE_FORMAT})", 2)
    return frozen


def check(root, bin_dir, deck_keys_too=True):
    """(the release's version, [what differs]); the deck keys, which need a build, if asked."""
    frozen = released(root)
    if frozen is None:
        raise ToolError(f"{RELEASE_FILE}: no such file", 2)
    reference = shipped_reference(root)
    now = record(root, bin_dir, reference, deck_keys_too)
    # The checkout's own version is the caller's to judge (-dev differs by design).
    now["version"] = frozen.get("version")
    if not deck_keys_too:
        now["rules"]["deck_keys"] = frozen.get("rules", {}).get("deck_keys")
    return frozen.get("version"), differences(frozen, now) + kernel_drift(reference, root)


# What the release check reads of a checkout.
CHECKED_PATHS = ("common", "miniapps", "inputs", "campaigns", "python/src/karma_tools")


def tree_at(checkout, rev, dest):
    """The files the release check reads, as of commit `rev`, under `dest`."""
    made = subprocess.run(["git", "-C", checkout, "archive", "--format=tar", rev, "--",
                           *CHECKED_PATHS], capture_output=True)
    if made.returncode != 0:
        reason = made.stderr.decode(errors="replace").strip().splitlines()
        raise ToolError(f"--at {rev}: git cannot give that commit's files"
                        f" ({reason[-1] if reason else 'git failed'})", 2)
    root = os.path.join(dest, "tree")
    with tarfile.open(fileobj=io.BytesIO(made.stdout)) as tar:
        # Pythons since 3.12 (and 3.11.4) warn without a filter.
        tar.extractall(root, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return root
