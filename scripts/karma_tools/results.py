"""Reading karma results (results/SCHEMA.md, schema_version 1) and Google
Benchmark JSON from files and directories."""

import json
import os
import subprocess

from . import ToolError

SCHEMA_VERSION = 1


class Run:
    """One karma results document."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.app = doc["app"]
        deck = doc.get("deck") or {}
        self.deck_path = deck.get("path", "")
        self.deck_stem = os.path.splitext(os.path.basename(self.deck_path))[0] or "deck"
        self.resolved = deck.get("resolved") or {}
        self.problem = doc.get("problem") or {}
        mpi = doc.get("mpi") or {}
        self.ranks = int(mpi.get("ranks") or 1)
        self.nodes = int(mpi.get("nodes") or 1)
        self.passed = doc.get("result") == "PASSED" and \
            bool((doc.get("verification") or {}).get("passed", True))
        kokkos = doc.get("kokkos") or {}
        self.backend = kokkos.get("default_execution_space", "?")
        ranks = doc.get("ranks") or [{}]
        device = (ranks[0] or {}).get("device") or {}
        self.device = device.get("name") or "?"
        self.kernels = {}
        for k in doc.get("kernels") or []:
            fom = k.get("fom") or {}
            self.kernels[k["name"]] = {
                "value": fom.get("value"),
                "units": fom.get("units", ""),
                "higher_is_better": bool(fom.get("higher_is_better", True)),
                "bytes": k.get("bytes"),
                "time_min": (k.get("time_s") or {}).get("min"),
            }

    def deck_values(self, include_run=False):
        """The resolved deck flattened to {'stream.shape': [..], ...};
        without the run section (repetitions, results_dir) unless asked."""
        flat = {}

        def walk(prefix, value):
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else k, v)
            else:
                flat[prefix] = value

        walk("", self.resolved)
        if not include_run:
            flat = {k: v for k, v in flat.items() if not k.startswith("run.")}
        return flat

    def precision(self):
        p = self.problem.get("precision")
        if p:
            return p
        for k, v in self.deck_values().items():
            if k.endswith(".precision"):
                return v
        return None


class Benchmarks:
    """One Google Benchmark JSON file (--benchmark_out_format=json)."""

    def __init__(self, path, doc):
        self.path = path
        self.context = doc.get("context") or {}
        self.benchmarks = doc.get("benchmarks") or []


class ResultSet:
    def __init__(self, label, path):
        self.label = label
        self.path = path
        self.runs = []
        self.benchmarks = []
        self.skipped = []  # (path, why)


def _git_ignored(paths, root):
    """The subset of paths git ignores (none when root is not in a git tree)."""
    if not paths:
        return set()
    try:
        out = subprocess.run(["git", "-C", root, "check-ignore", "--stdin", "-z"],
                             input="\0".join(os.path.abspath(p) for p in paths),
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if out.returncode not in (0, 1):
        return set()
    return {os.path.abspath(p) for p in out.stdout.split("\0") if p}


def find_json(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, f) for f in sorted(files)
                     if f.endswith(".json") and not f.startswith("."))
    return found


def load_set(path, label=None, committed_only=False, need_runs=True):
    """Every karma results document (and Google Benchmark file) under path.
    Rejects documents of another schema version and sets without results."""
    label = label or os.path.basename(os.path.normpath(path)) or path
    if not os.path.exists(path):
        raise ToolError(f"{path}: no such file or directory", 2)
    result = ResultSet(label, path)
    files = find_json(path)
    if committed_only:
        root = path if os.path.isdir(path) else os.path.dirname(path) or "."
        ignored = _git_ignored(files, root)
        result.skipped.extend((f, "ignored by git") for f in files
                              if os.path.abspath(f) in ignored)
        files = [f for f in files if os.path.abspath(f) not in ignored]
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                doc = json.load(fh)
        except ValueError as e:
            raise ToolError(f"{f}: not valid JSON ({e})", 2) from None
        except OSError as e:
            raise ToolError(f"{f}: cannot read ({e.strerror})", 3) from None
        if isinstance(doc, dict) and "schema_version" in doc:
            version = doc["schema_version"]
            if version != SCHEMA_VERSION:
                raise ToolError(f"{f}: schema_version {version!r}, but this tool reads karma "
                                f"results of schema_version {SCHEMA_VERSION} (results/SCHEMA.md)"
                                "; use the karma release that wrote it", 2)
            missing = [k for k in ("app", "kernels", "result", "mpi") if k not in doc]
            if missing:
                raise ToolError(f"{f}: schema_version 1 but no {', '.join(missing)}: not a "
                                "karma results document", 2)
            try:
                result.runs.append(Run(f, doc))
            except (KeyError, TypeError, ValueError) as e:
                raise ToolError(f"{f}: malformed karma results ({e})", 2) from None
        elif isinstance(doc, dict) and "benchmarks" in doc and "context" in doc:
            result.benchmarks.append(Benchmarks(f, doc))
        else:
            result.skipped.append((f, "not karma results"))
    if need_runs and not result.runs and not result.benchmarks:
        what = f"{len(files)} JSON file(s), none of them karma results" if files else \
            "no JSON files"
        raise ToolError(f"{path}: no karma results found ({what}); point at a directory "
                        "the mini-apps or karma-batch wrote", 2)
    return result


def format_value(value):
    """A FOM for a table: 4 significant digits, no exponent for usual sizes."""
    if value is None:
        return "-"
    a = abs(value)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{value:.0f}"
    if a >= 1:
        return f"{value:.4g}"
    return f"{value:.4g}"


def format_size(value):
    """Lists of integers with powers of two as 2^k: [268435456] -> [2^28]."""
    def one(v):
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v & (v - 1) == 0:
            return f"2^{v.bit_length() - 1}"
        return str(v)

    if isinstance(value, list):
        return "[" + ",".join(one(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return one(value)
