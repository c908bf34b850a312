"""karma-batch's work on a campaign directory: its manifest, the jobs' states, submitting,
waiting, cancelling, archiving. What the commands say goes to `say(text, err=False)`."""

import collections
import contextlib
import datetime
import fcntl
import fnmatch
import json
import os
import pathlib
import re
import signal
import subprocess
import time

from karma_tools.core import ToolError, atomic_write
from karma_tools.results.archive import read_json
from karma_tools.results import archive as archive_mod
from karma_tools.results import resultset
from karma_tools.results.results import field
from karma_tools.campaign import jobs

MANIFEST = resultset.MANIFEST
LOCK = ".campaign.lock"  # hidden: an archive leaves it out
SUFFIX = {"slurm": ".sbatch", "pbs": ".pbs", "local": ".sh"}
PASSED, FAILED, INTERRUPTED, LOST, RUNNING, PENDING, UNSUBMITTED = ORDER = (
    "passed", "failed", "interrupted", "lost", "running", "pending", "not submitted")


def now_text():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _relative(out, path):
    """path relative to out when inside it (so out can move), else as it is."""
    if not os.path.isabs(path):  # results_dir "": the manifest named none
        return path
    rel = os.path.relpath(path, out)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def load_manifest(out, archived=False):
    """out's campaign.json as results.resultset reads it (the one reader)."""
    if archive_mod.split(out) is not None and not archived:
        raise ToolError(f"{out}: a results archive; of the commands only status reads one", 2)
    return resultset.read_manifest(out, complete=True)[1]


def manifest_text(out, manifest):
    """manifest as campaign.json's text, its paths inside out relative to it."""
    return json.dumps(dict(manifest, results_dir=_relative(out, manifest["results_dir"]), jobs=[
        dict(e, results_dir=_relative(out, e["results_dir"]),
             results_file=_relative(out, e["results_file"])) for e in manifest["jobs"]]),
        indent=2) + "\n"


@contextlib.contextmanager
def _locked(out):
    """The campaign's karma-batch processes (a shell per GPU) take turns at campaign.json."""
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):  # unlocked where no lock can be taken
            handle = stack.enter_context(open(os.path.join(out, LOCK), "a"))
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _taken(now, loaded):
    """Jobs whose job_id in now (read under the lock) differs from loaded's ({name: job_id})."""
    return {e["name"] for e in now["jobs"] if e["job_id"] != loaded.get(e["name"])}


def _record(out, now, entries):
    """entries' job_id and submitted into now (read under the lock): others' writes stay."""
    ours = {e["name"]: e for e in entries}
    for entry in now["jobs"]:
        if entry["name"] in ours:
            entry.update({k: ours[entry["name"]][k] for k in ("job_id", "submitted")})
    atomic_write(os.path.join(out, MANIFEST), manifest_text(out, now))


def _selected(manifest, patterns):
    chosen = [j for j in manifest["jobs"]
              if not patterns or any(fnmatch.fnmatchcase(j["name"], p) for p in patterns)]
    if patterns and not chosen:
        raise ToolError(f"no job matches {', '.join(patterns)}", 2)
    return chosen


def _results_state(path):
    """What a job's results file says: None (none), its result, or why not."""
    if not archive_mod.exists(path):
        return None
    doc = None
    with contextlib.suppress(ToolError):
        doc = read_json(path)
    if not isinstance(doc, dict):
        return "unreadable results"
    if doc.get("schema_version") not in (1, 2) or isinstance(doc.get("schema_version"), bool):
        return "other schema"
    return doc.get("result") if isinstance(doc.get("result"), str) else "malformed results"


def job_state(entry, scheduler_state):
    """(state, detail) of one job from the scheduler's view and its files."""
    if not entry.get("job_id"):
        return UNSUBMITTED, ""
    code_file = os.path.join(entry["results_dir"], jobs.EXIT_CODE_FILE)
    # Slurm: job-<id>.out, PBS: job.out
    see = f"see {os.path.join(entry['results_dir'], 'job*.out')}"
    if not archive_mod.exists(code_file):
        if scheduler_state in (jobs.PENDING, jobs.RUNNING):  # the same words here
            return scheduler_state, ""
        return LOST, f"ended without writing {jobs.EXIT_CODE_FILE}: {see}"
    code = None
    with contextlib.suppress(OSError):
        code = jobs.exit_code_of(archive_mod.read_bytes(code_file))
    if code is None:
        return FAILED, f"unreadable {code_file}"
    result = _results_state(entry["results_file"])
    if code == 0 and result == "PASSED":
        return PASSED, "PASSED"
    stopped = jobs.stopped_by(code)
    if stopped:
        return INTERRUPTED, (f"exit {code}: stopped by {stopped} (a time limit, scancel, "
                             f"qdel or Ctrl-C): {see}")
    missing = jobs.not_found(archive_mod.job_logs(entry["results_dir"])) \
        if code == jobs.NOT_FOUND_CODE and result is None else None
    if missing:
        return FAILED, f"exit {code}, command not found: {missing}: {see}"
    return FAILED, f"exit {code}, " + ("no results file" if result is None else
                                       f"results {result}") + f": {see}"


def _live_runner(job_id):
    """The pid of the `karma-batch submit` running a local job (local-<pid>-<k>), while it lives."""
    found = re.fullmatch(r"local-([1-9][0-9]*)-[^-]*", job_id or "")  # 0: our own group
    if not found:
        return None
    try:
        with contextlib.suppress(PermissionError):  # another user's
            os.kill(int(found.group(1)), 0)
    except (ProcessLookupError, OverflowError):  # past C's long: no process
        return None
    return int(found.group(1))


def _local_states(chosen):
    """A live local runner's job whose log it opened is running, its others pending."""
    seen = {}
    for entry in chosen:
        runner = _live_runner(entry.get("job_id"))
        seen[entry.get("job_id")] = jobs.UNKNOWN if runner is None else jobs.RUNNING \
            if os.path.exists(os.path.join(entry["results_dir"], jobs.LOCAL_LOG)) else jobs.PENDING
    return seen


def run_order(manifest, entries):
    """entries by round, process, then campaign order (reversed in even rounds if alternate)."""
    alternate = manifest.get("round_order") == "alternate"

    def key(numbered):
        i, e = numbered
        rnd = e.get("round") if isinstance(e.get("round"), int) else 1
        process = e.get("process") if isinstance(e.get("process"), int) else 1
        return (rnd, process, -i if alternate and rnd % 2 == 0 else i)

    return [e for _, e in sorted(enumerate(entries), key=key)]


def collect(out, manifest, patterns=None, query=True):
    """[(entry, state, detail)] of the chosen jobs; query: ask the scheduler."""
    chosen = _selected(manifest, patterns)
    ids = [j["job_id"] for j in chosen if j.get("job_id")]
    seen = {} if not query else _local_states(chosen) if manifest["scheduler"] == "local" \
        else jobs.states(manifest["scheduler"], ids) if ids else {}
    return [(e, *job_state(e, seen.get(e.get("job_id"), jobs.UNKNOWN))) for e in chosen]


def summary_line(rows):
    """(the counts' line, the counts, the names of the jobs left to run)."""
    counts = collections.Counter(state for _, state, _ in rows)
    left = [e["name"] for e, s, _ in rows if s in (RUNNING, PENDING, UNSUBMITTED)]
    text = f"{len(rows)} job(s): " + ", ".join(f"{counts[s]} {s}" for s in ORDER if counts[s])
    if left:
        text += "; left: " + ", ".join(left[:6]) + \
            (f", ... ({len(left) - 6} more)" if len(left) > 6 else "")
    return text, counts, left


def table(rows):
    """The status table's text: a line per job."""
    width = max([len(e["name"]) for e, _, _ in rows] + [4])
    # A local runner's ids are longer than a scheduler's.
    ids = max([len(str(e.get("job_id") or "-")) for e, _, _ in rows] + [10])
    lines = [f"{'job':<{width}}  {'id':>{ids}}  {'nodes x ranks':>13}  state"]
    for entry, state, detail in rows:
        shape = f"{entry['nodes']} x {entry['ranks_per_node']}"
        extra = f"  {detail}" if detail and detail != "PASSED" else ""
        lines.append(f"{entry['name']:<{width}}  {entry.get('job_id') or '-':>{ids}}  "
                     f"{shape:>13}  {state}{extra}")
    return "\n".join(lines)


def _exit_for(counts):
    if counts[FAILED] or counts[INTERRUPTED] or counts[LOST]:
        return 1
    return 5 if counts[RUNNING] or counts[PENDING] or counts[UNSUBMITTED] else 0


def _finished(rows, say, as_json=False):
    """Says the table (as_json: JSON, the counts on stderr); status's exit status."""
    say(json.dumps([{"name": e["name"], "job_id": e.get("job_id"), "state": s, "detail": d,
                     "results_file": e["results_file"]} for e, s, d in rows], indent=2)
        if as_json else table(rows))
    text, counts, _ = summary_line(rows)
    say(text, as_json)
    return _exit_for(counts)


def status(directory, only, as_json, say):
    out = os.path.abspath(directory)
    manifest = load_manifest(out, archived=True)
    # An archive's jobs have ended: no scheduler or runner to ask.
    return _finished(collect(out, manifest, only, query=archive_mod.split(out) is None), say,
                     as_json)


def wait(directory, only, timeout, interval, say):
    out = os.path.abspath(directory)
    manifest = load_manifest(out)
    if not any(j.get("job_id") for j in _selected(manifest, only)):
        raise ToolError(f"no job of {out} has been submitted: run karma-batch submit {out}", 2)
    start, last = time.monotonic(), None
    while True:
        rows = collect(out, manifest, only)
        text, counts, _ = summary_line(rows)
        if text != last:
            say(f"[{time.strftime('%H:%M:%S')}] {text}")
            last = text
        if not (counts[RUNNING] or counts[PENDING]):
            say(table(rows))
            return _exit_for(counts) if not counts[UNSUBMITTED] else 5
        if timeout is not None and time.monotonic() - start >= timeout:
            say(table(rows))
            say(f"karma-batch: timed out after {timeout:g} s with jobs still to run", True)
            return 124
        time.sleep(interval)


def archive(directory, output, partial, force, say):
    """One .tar.xz of a finished campaign directory (unfinished: only partial)."""
    out = os.path.abspath(directory)
    if archive_mod.split(out) is not None or not os.path.isdir(out):
        raise ToolError(f"{directory}: not a campaign directory", 2)
    if not archive_mod.is_archive_name(output):
        raise ToolError(f"-o {output}: an archive's name ends in {archive_mod.SUFFIX}", 2)
    if os.path.abspath(output).startswith(out + os.sep):
        raise ToolError(f"-o {output}: inside the directory it archives", 2)
    if os.path.exists(output) and not force:
        raise ToolError(f"{output} exists (--force replaces it)", 2)
    manifest = load_manifest(out)
    text, _, left = summary_line(collect(out, manifest))
    if left and not partial:
        raise ToolError(f"{directory}: {len(left)} job(s) not finished ({left[0]}"
                        + (", ..." if len(left) > 1 else "") + "): wait for them, or "
                        "--partial to archive what there is", 2)
    name = field(manifest, "campaign.name")
    data = archive_mod.write(out, output, "campaign",
                             name if isinstance(name, str) and name else None, manifest)
    say(f"karma-batch: wrote {output} ({len(data)} bytes; {text})", True)
    return 0


def submit(directory, only, dry_run, resubmit_failed, say):
    out = os.path.abspath(directory)
    manifest = load_manifest(out)
    loaded = {e["name"]: e["job_id"] for e in manifest["jobs"]}
    scheduler = manifest["scheduler"]
    chosen = _selected(manifest, only)
    if resubmit_failed:
        for entry, state, _ in collect(out, manifest, only):
            if state in (FAILED, INTERRUPTED, LOST):
                entry["job_id"] = None
    todo = run_order(manifest, [j for j in chosen if not j.get("job_id")])
    if not todo:
        say(f"karma-batch: every selected job of {out} is already submitted")
        return 0
    was = manifest.get("generated_in")  # where the job scripts write
    if isinstance(was, str) and os.path.realpath(was) != os.path.realpath(out):
        raise ToolError(f"{out}: generated in {was}, where its job scripts write; run "
                        "karma-batch generate again here to submit from this place", 2)
    if dry_run:
        how = {"slurm": "sbatch", "pbs": "qsub", "local": "run here: bash"}[scheduler]
        for k, entry in enumerate(todo, start=1):
            say(f"[{k}/{len(todo)}] would submit {entry['name']}: {how} "
                f"{os.path.join(out, entry['script'])}")
        return 0
    if scheduler == "local":
        return _run_local(out, todo, loaded, say)
    for k, entry in enumerate(todo, start=1):
        with _locked(out):
            now = load_manifest(out)
            if entry["name"] in _taken(now, loaded):
                say(f"[{k}/{len(todo)}] {entry['name']}: submitted by another karma-batch "
                    "meanwhile; left to it")
                continue
            _prepare_results_dir(entry)  # Slurm opens the job's log there when the job starts
            try:
                job_id = jobs.submit(scheduler, os.path.join(out, entry["script"]))
            except ToolError as e:
                raise ToolError(f"{e} ({k - 1} of {len(todo)} job(s) were submitted and "
                                f"are recorded in {os.path.join(out, MANIFEST)}; fix the "
                                "problem and run submit again for the rest)", e.code) from None
            entry["job_id"], entry["submitted"] = job_id, now_text()
            _record(out, now, [entry])  # after each job: a failure later loses nothing
        say(f"[{k}/{len(todo)}] submitted {entry['name']} as job {job_id}")
    say(f"karma-batch: follow them with: karma-batch status {out}  (or: karma-batch wait {out})")
    return 0


def _seconds(hhmmss):
    try:
        h, m, s = (int(x) for x in hhmmss.split(":"))
        return h * 3600 + m * 60 + s
    except (AttributeError, ValueError):
        return None


def _stop(proc):
    """SIGTERM to the job's group (its trap writes exit_code 143), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue  # the next signal
        except ProcessLookupError:
            pass  # the group has gone
        return


def _prepare_results_dir(entry, *more):
    """The job's results directory, without an earlier run's exit code (and more)."""
    try:
        os.makedirs(entry["results_dir"], exist_ok=True)
        for stale in (jobs.EXIT_CODE_FILE, *more):
            pathlib.Path(entry["results_dir"], stale).unlink(missing_ok=True)
    except OSError as e:
        raise ToolError(f"cannot prepare {entry['results_dir']}: {e.strerror}", 3) from None


def _clock(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def progress(done, total, elapsed):
    """'D of T jobs done, H:MM:SS elapsed, about H:MM:SS left' (at the mean so far)."""
    return f"{done} of {total} jobs done, {_clock(elapsed)} elapsed" + (
        f", about {_clock(elapsed / done * (total - done))} left" if 0 < done < total else "")


def _run_local(out, todo, loaded, say):
    """The local scheduler: runs the jobs here in turn; wait's exit status."""
    with _locked(out):  # those no other karma-batch took since `loaded` are this runner's
        now = load_manifest(out)
        taken = _taken(now, loaded) & {e["name"] for e in todo}
        if taken:
            say(f"karma-batch: {len(taken)} job(s) submitted by another karma-batch "
                "meanwhile; left to it")
        todo = [e for e in todo if e["name"] not in taken]
        for k, entry in enumerate(todo, start=1):
            _prepare_results_dir(entry, jobs.LOCAL_LOG)
            entry["job_id"], entry["submitted"] = f"local-{os.getpid()}-{k}", now_text()
        _record(out, now, todo)  # status elsewhere sees them pending
    if not todo:
        say(f"karma-batch: every selected job of {out} is already submitted")
        return 0

    def cancelled(signum, frame):
        raise KeyboardInterrupt(143)  # SIGTERM; Ctrl-C's has no args: 130

    previous = signal.signal(signal.SIGTERM, cancelled)
    current, done, start = None, 0, time.monotonic()
    try:
        for k, entry in enumerate(todo, start=1):
            say(f"[{k}/{len(todo)}] running {entry['name']}")
            with open(os.path.join(entry["results_dir"], jobs.LOCAL_LOG), "w") as log:
                current = subprocess.Popen(["bash", os.path.join(out, entry["script"])],
                                           stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=entry["results_dir"],
                                           start_new_session=True)
                try:
                    current.wait(timeout=_seconds(entry.get("time")))
                except subprocess.TimeoutExpired:
                    say(f"karma-batch: {entry['name']} ran past its time ({entry.get('time')}); "
                        "stopping it", True)
                    _stop(current)
            current, done = None, k
            state, detail = job_state(entry, jobs.UNKNOWN)
            say(f"[{k}/{len(todo)}] {entry['name']}: {state}"
                + (f" ({detail})" if detail and detail != "PASSED" else "")
                + f"; {progress(k, len(todo), time.monotonic() - start)}")
    except KeyboardInterrupt as e:
        if current is not None:
            _stop(current)
            done += 1
        for entry in todo[done:]:
            entry["job_id"] = entry["submitted"] = None
        with _locked(out):
            _record(out, load_manifest(out), todo[done:])
        say(f"karma-batch: cancelled; {len(todo) - done} job(s) not run (submit again "
            "runs them)", True)
        return e.args[0] if e.args else 130
    except OSError as e:
        raise ToolError(f"cannot run the jobs of {out}: {e}", 3) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    return _finished([(e, *job_state(e, jobs.UNKNOWN)) for e in todo], say)


def cancel(directory, only, say):
    out = os.path.abspath(directory)
    manifest = load_manifest(out)
    live = [(e, s) for e, s, _ in collect(out, manifest, only) if s in (RUNNING, PENDING)]
    if not live:
        say("karma-batch: no pending or running job to cancel")
        return 0
    if manifest["scheduler"] == "local":
        # The runner stops its job and leaves the rest unsubmitted.
        for runner in sorted({_live_runner(e["job_id"]) for e, _ in live} - {None}):
            with contextlib.suppress(ProcessLookupError):
                os.kill(runner, signal.SIGTERM)
    else:
        jobs.cancel(manifest["scheduler"], [e["job_id"] for e, _ in live])
    for entry, state in live:
        say(f"cancelled {entry['name']} (job {entry['job_id']}, was {state})")
    return 0
