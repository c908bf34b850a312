"""One result set: a directory of results, a campaign (its folder or campaign.json), an archive
or a bundle as its validated runs and, for each campaign job without one, the reason; the one
reader of campaign.json, which finds a job's run wherever the campaign has moved."""

import functools
import os
import re
import subprocess

from karma_tools import schemas
from karma_tools.core import ToolError, describe
from karma_tools.campaign import jobs as jobs_mod
from karma_tools.results import archive, validate
from karma_tools.results.archive import read_json
from karma_tools.results.results import Run, check_schema

MANIFEST = "campaign.json"
SCHEMA_VERSIONS = (1, 2)
# Why a set skips a JSON file that is no other karma tool's (other_tool).
NOT_RESULTS = "not karma results"
IGNORED = "ignored by git"
NOT_RUN = "no results: not run, or stopped before it ended"


def check_manifest(path, manifest, complete=True):
    """Refuses a manifest the tools cannot use, naming the key, rather than failing half-way
    (complete False: only what reading results needs)."""
    if not isinstance(manifest, dict) or manifest.get("karma_batch_manifest") != 1:
        raise ToolError(f"{path}: not a karma-batch manifest of version 1", 2)
    found = schemas.problems(schemas.strict(schemas.load("manifest.schema.json"),
                                            None if complete else "located"), manifest)
    if found:
        raise ToolError(f"{path}: {found[0]} (edit the campaign and generate again rather "
                        "than this file)", 2)


def manifest_path(path):
    """The campaign.json of path (it, a campaign folder or archive, a bundle), or None."""
    candidates = [path] if os.path.basename(os.path.normpath(path)) == MANIFEST else \
        [os.path.join(path, MANIFEST), os.path.join(path, "campaign", MANIFEST)]
    return next(filter(archive.isfile, candidates), None)


def _absolute(folder, path):
    """A manifest's path here: relative ones (older manifests': absolute) under folder."""
    return os.path.normpath(os.path.join(folder, path)) if not os.path.isabs(path) else path


def _job_folder(folder, top, entry):
    """Where a job's results folder is now: beside campaign.json (copied, archived, a bundle's
    results/), else where recorded, else None."""
    rel = os.path.relpath(entry["results_dir"], top) if top else entry["name"]
    bundle = os.path.dirname(folder)
    here = [] if rel.startswith("..") else [
        os.path.join(folder, os.path.basename(top.rstrip("/")) or "results", rel),
        os.path.join(folder, rel)]
    if archive.isfile(os.path.join(bundle, archive.BUNDLE_MANIFEST)):
        here.append(os.path.join(bundle, "results", entry["name"]))
    return next((c for c in here + [entry["results_dir"]] if archive.isdir(c)), None)


def read_manifest(path, complete=False):
    """(path, manifest) of path's campaign.json, checked, its jobs' paths absolute and current."""
    found = manifest_path(path)
    if found is None:
        raise ToolError(f"{path}: no {MANIFEST} ({os.path.join(path, MANIFEST)} not found): "
                        "is it a directory made by `karma-batch generate`?", 2)
    manifest = read_json(found)
    check_manifest(found, manifest, complete)
    folder = os.path.dirname(os.path.abspath(found))
    top = manifest.get("results_dir")
    top = manifest["results_dir"] = _absolute(folder, top) if isinstance(top, str) else ""
    for entry in manifest["jobs"]:
        for key in ("results_dir", "results_file"):
            entry[key] = _absolute(folder, entry[key])
        moved = _job_folder(folder, top, entry)
        if moved is not None:
            entry["results_dir"] = moved
            entry["results_file"] = os.path.join(moved, os.path.basename(entry["results_file"]))
    return found, manifest


def missing_reason(folder):
    """Why a job (results folder `folder`, or None) has no results: not run, stopped, failed."""
    code_file = folder and os.path.join(folder, jobs_mod.EXIT_CODE_FILE)
    if not folder or not archive.isfile(code_file):
        return NOT_RUN
    code = jobs_mod.exit_code_of(archive.read_bytes(code_file))
    signal = jobs_mod.stopped_by(code) if code is not None else None
    if signal:
        return f"no results: stopped by {signal} (exit {code})"
    logs = archive.job_logs(folder)
    why = re.search(r"^RESULT: FAILED reason=(\S+)", "\n".join(logs), re.M)
    error = re.search(r"^karma-[a-z]+: error: .*$", "\n".join(logs), re.M)
    missing = jobs_mod.not_found(logs) if code == jobs_mod.NOT_FOUND_CODE else None
    error = f"command not found: {missing}" if missing else error[0][:300] if error else ""
    shown = "code unreadable" if code is None else code
    return (f"no results: failed, exit {shown}" + (f" ({why[1]})" if why else "")
            + (f": {error}" if error else ""))


class ResultSet:
    """Runs of one set; a campaign's manifest and jobs [(entry, run or None, why none)]."""

    def __init__(self, label, path):
        self.label, self.path = label, path
        self.runs, self.jobs = [], []
        self.skipped = []  # (path, why)
        self.invalid = []  # (path, error): left out by skip_invalid
        self.manifest_path = self.manifest = None

    def missing(self):
        """[(job name, why)] of the campaign's jobs without results."""
        return [(entry["name"], why) for entry, run, why in self.jobs if run is None]


def other_tool(doc):
    """Which other karma tool wrote doc, if one did."""
    if not isinstance(doc, dict) or "schema_version" in doc:
        return None
    if "context" in doc and "benchmarks" in doc:
        return "Google Benchmark JSON (karma-microbench before it took a deck)"
    kinds = {"karma_environment": "karma-envcapture's environment.json",
             "karma_batch_manifest": "karma-batch's manifest",
             "karma_compare": "karma-compare's JSON",
             "karma_compare_campaign": "karma-compare --campaign's JSON",
             "karma_compare_implementations": "karma-compare --implementations's JSON",
             "karma_score": "karma-score's JSON", "karma_archive": "karma-archive's index"}
    return next((what for key, what in kinds.items() if key in doc), None)


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
    return {os.path.abspath(p) for p in out.stdout.split("\0") if p} \
        if out.returncode in (0, 1) else set()


def open(path, label=None, committed_only=False, need_runs=True, skip_invalid=False):
    """The set at path; skip_invalid puts an ill-formed file in `invalid` instead of refusing."""
    if not archive.exists(path):
        raise ToolError(f"{path}: no such file or directory", 2)
    found = manifest_path(path)
    walked = os.path.dirname(path) or "." if found == path else path
    label = label or os.path.basename(os.path.normpath(walked)).removesuffix(archive.SUFFIX) or path
    result = ResultSet(label, path)
    files = archive.walk_files(walked, ".json")
    if committed_only:
        # git knows the archive, not the files inside it.
        disk = archive.archive_of(walked)
        root = disk if os.path.isdir(disk) else os.path.dirname(disk) or "."
        ignored = _git_ignored(sorted({archive.archive_of(f) for f in files}), root)
        result.skipped.extend((f, IGNORED) for f in files
                              if os.path.abspath(archive.archive_of(f)) in ignored)
        files = [f for f in files if os.path.abspath(archive.archive_of(f)) not in ignored]
    for f in files:
        _load_file(result, f, skip_invalid)
    if found is not None:
        result.manifest_path, result.manifest = read_manifest(found)
        _match_jobs(result, skip_invalid)
    if need_runs and not result.runs:
        what = f"{len(files)} JSON file(s), none of them karma results" if files else \
            "no JSON files"
        if result.invalid:
            what += f", {len(result.invalid)} left out as invalid"
        if result.jobs:
            what += f"; {len(result.jobs)} job(s): {result.jobs[0][2]}"
        raise ToolError(f"{path}: no karma results found ({what}); point at a directory "
                        "the mini-apps or karma-batch wrote", 2)
    return result


def _match_jobs(result, skip_invalid):
    """Each job of the campaign with its run, or why it has none."""
    runs = {os.path.abspath(r.path): r for r in result.runs}
    tails = {}
    for r in result.runs:
        tails.setdefault(tuple(os.path.abspath(r.path).split(os.sep)[-2:]), []).append(r)
    left = {os.path.abspath(p): why for p, why in result.skipped + result.invalid}
    for entry in result.manifest["jobs"]:
        folder = entry["results_dir"] if archive.isdir(entry["results_dir"]) else None
        path = os.path.abspath(entry["results_file"])
        if path not in runs and path not in left and archive.isfile(path):
            _load_file(result, entry["results_file"], skip_invalid)  # outside the tree
            runs.update((os.path.abspath(r.path), r) for r in result.runs[-1:])
            left.update((os.path.abspath(p), why) for p, why in result.skipped[-1:] +
                        result.invalid[-1:])
        tail = tails.get((entry["name"], os.path.basename(path)), [])
        run = runs.get(path) or (tail[0] if len(tail) == 1 else None)
        why = None if run else f"no results: left out: {left[path]}" if path in left else \
            missing_reason(folder)
        result.jobs.append((entry, run, why))


def _checked(f):
    """_check(f), once per process while the file holding f is unchanged."""
    try:
        st = os.stat(archive.archive_of(f))
    except OSError:
        return _check(f)
    return _checked_once(os.path.abspath(f), st.st_mtime_ns, st.st_size, f)


@functools.lru_cache(maxsize=None)
def _checked_once(where, mtime, size, f):  # cached by where it is and its stamp
    return _check(f)


def _load_file(result, f, skip_invalid):
    """One file of a set into it: a run, or skipped (or invalid)."""
    try:
        doc = _checked(f)
        if isinstance(doc, dict):
            result.runs.append(Run(f, doc))
        else:
            result.skipped.append((f, doc))
    except ToolError as e:
        if not skip_invalid or e.code != 2:  # bad input only, not a read failure
            raise
        result.invalid.append((f, str(e)))


def _check(f):
    """The karma results document at f, checked; else why it is skipped."""
    doc = read_json(f)
    if not isinstance(doc, dict) or "schema_version" not in doc:
        return other_tool(doc) or NOT_RESULTS
    version = doc["schema_version"]
    if type(version) is not int or version not in SCHEMA_VERSIONS:  # not a bool either
        shown = version if type(version) is int else describe(version)
        raise ToolError(f"{f}: schema_version {shown}, but this tool reads karma "
                        "results of schema_version 1 or 2 (docs/results-format.md)"
                        "; use the karma release that wrote it", 2)
    missing = [k for k in ("app", "kernels", "result", "mpi") if k not in doc]
    if missing:
        raise ToolError(f"{f}: schema_version {version} but no {', '.join(missing)}: not a "
                        "karma results document", 2)
    check_schema(f, doc)
    beyond = validate.physics_problems(doc)
    if beyond:  # never compared, plotted or scored; --skip-invalid lists it
        raise ToolError(f"{f}: {beyond[0]}; not a measurement", 2)
    return doc
