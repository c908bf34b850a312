"""What a bundle's files say of one another (docs/campaigns.md#a-submission-bundle): captures,
job.out, GPUs, jobs, rounds, release. A bundle assembled from edits contradicts itself."""

import functools
import hashlib
import json
import math
import os
import re
import tempfile
from collections import Counter

from karma_tools import envcapture
from karma_tools.core import CHECKOUT, ToolError, atomic_write, read_input_file
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.results.codeversion import git
from karma_tools.results.results import field, gpu_devices
from karma_tools.results.validate import parse_json
from karma_tools.score import figure, release

# Of each GPU nvidia-smi lists, and of its driver: key: (in `-q -x`'s XML, in `-q`'s text).
_SMI = {"uuid": (r"<uuid>(.*?)</uuid>", r"^\s*GPU UUID\s*:\s*(.*?)\s*$"),
        "product": (r"<product_name>(.*?)</product_name>", r"^\s*Product Name\s*:\s*(.*?)\s*$"),
        "part": (r"<board_part_number>(.*?)</board_part_number>",
                 r"^\s*Board Part Number\s*:\s*(.*?)\s*$"),
        "MiB": (r"<fb_memory_usage>\s*<total>(\d+) MiB",
                r"FB Memory Usage\s*\n\s*Total\s*:\s*(\d+) MiB"),
        "driver": (r"<driver_version>(.*?)</driver_version>", r"^Driver Version\s*:\s*(.*?)\s*$"),
        "cuda": (r"<cuda_version>(.*?)</cuda_version>", r"^CUDA Version\s*:\s*(.*?)\s*$")}
# environment.json's parts envcapture made of a raw capture: (key, file, how it read it).
_MADE = (("cpu", "lscpu.txt", envcapture.parse_colon_lines),
         ("memory", "meminfo.txt", envcapture.meminfo),
         ("gpu", "nvidia-smi.txt", envcapture.nvidia_summary))
# The lines a mini-app prints of its results (common/runtime/src/console.cpp).
_PRINTED = re.compile(r"karma-\S+ \S+ \(.*\), Kokkos |  rank \d+ on |(FOM|FOM_PER_WATT|RESULT): ")
GB_RULE = "a size in GB lies between the capture's in GiB rounded down and in GB rounded up"
MADE_AT = "made at "
_git = functools.partial(git, CHECKOUT)  # the suite's own checkout


def unit_list(karma):
    """The disclosure's 'UUID: board B, VBIOS V' of each GPU the results ran on, sorted."""
    units = {d.get("uuid"): d.get("state_at_start") or {} for _, doc in karma
             for _, d in gpu_devices(doc)}
    return sorted(f"{uuid}: board {s.get('board_part_number') or '?'}, VBIOS "
                  f"{s.get('vbios_version') or '?'}" for uuid, s in units.items())


def gb_problems(path, said, size, values, key):
    """[(path, why)] unless the disclosure's `key` names `size` bytes (GB_RULE)."""
    gb = values.get(key)
    return [] if gb is None or math.floor(size / 2**30) <= gb <= math.ceil(size / 1e9) else [
        (path, f"{said}, but the disclosure's {key} is {gb} ({GB_RULE})")]


def nvidia_smi(folder, texts):
    """{path, each _SMI key: [values]} of the nvidia-smi capture (XML, else text) in texts."""
    for at, name in enumerate(("nvidia-smi.xml", "nvidia-smi.txt")):
        if name in texts:
            return dict({k: re.findall(spec[at], texts[name], re.M) for k, spec in _SMI.items()},
                        path=f"{folder}/environment/{name}")
    return None


def _g(value):
    """A figure as the mini-app prints it; an integer past a float's range (forged) as is."""
    return "nan" if value is None else f"{value:.6g}" if abs(value) < 1e308 else str(value)


def printed(doc):
    """The console lines a run prints of its results: its build, ranks, FOMs and verdict."""
    app, ranks = doc["app"], doc["mpi"]["ranks"]
    lines = [f"karma-{app} {doc['suite']['version']} ({doc['suite']['git_describe']}), Kokkos "
             f"{doc['kokkos']['version']}, {ranks} rank(s) on {doc['mpi']['nodes']} node(s)"]
    lines += [f"  rank {r['rank']} on {r['host']}: {r['device']['name']} "
              f"({field(r, 'device.execution_space')})" for r in doc["ranks"]]
    for k in doc["kernels"]:
        head, fom = f"app={app} kernel={k['name']} value=", k["fom"]
        lines.append(f"FOM: {head}{_g(fom['value'])} units={fom['units']} "
                     f"higher_is_better={int(fom['higher_is_better'])} ranks={ranks}")
        if field(k, "energy.status") == "measured":
            energy = k["energy"]
            lines.append(f"FOM_PER_WATT: {head}{_g(energy['fom_per_watt']['value'])} units="
                         f"{fom['units']}/W watts={_g(energy['average_power_W'])} ranks={ranks}")
    return lines + [f"RESULT: {doc['result']}"]


def job_problems(files, folder, path, doc, env):
    """([(path, why)] of a job's results against its raw captures and job.out, its nvidia_smi)."""
    captures = f"{folder}/environment/"
    texts = {p[len(captures):]: data.decode("utf-8", "replace") for p, data in files.items()
             if p.startswith(captures)}
    smi, total = nvidia_smi(folder, texts), field(env, "memory.MemTotal")
    out, gpus = [], {u: i for i, u in enumerate(smi["uuid"] if smi else [])}
    for i, rank in enumerate(doc["ranks"]):
        d, at = rank["device"], f"ranks[{i}].device"
        if doc["mpi"]["nodes"] > 1 and rank["host"] != env.get("hostname"):
            continue  # the capture is of the job's first node
        if d["kind"] == "host" and isinstance(total, int) and d.get("memory_bytes") != total:
            out.append((path, f"{at}.memory_bytes {d.get('memory_bytes')}, but meminfo.txt's "
                        f"MemTotal is {total}"))
        g = gpus.get(d.get("uuid"))
        if d["kind"] != "gpu" or d.get("vendor") != "NVIDIA":
            continue
        if g is None:
            out.append((path, f"{at}.uuid {d.get('uuid')!r}: no GPU of the job's nvidia-smi "
                        f"capture ({', '.join(gpus) or 'none'})"))
            continue
        out += [(path, f"{at}.{k} {field(d, k)!r}, but nvidia-smi gives {v[0]!r}") for k, v in (
            ("name", smi["product"][g:g + 1]), ("driver_version", smi["driver"][:1]),
            ("driver_api_version", smi["cuda"][:1]),
            ("state_at_start.board_part_number", smi["part"][g:g + 1]))
            if v and field(d, k) not in (None, v[0])]
        size = int(smi["MiB"][g]) * 2**20 if g < len(smi["MiB"]) else 0
        if size and not 0.98 * size <= (d.get("memory_bytes") or 0) <= size:
            out.append((path, f"{at}.memory_bytes {d.get('memory_bytes')}, but nvidia-smi "
                        f"gives {size // 2**20} MiB (less at most 2% the driver keeps)"))
    if smi is None and any(d.get("vendor") == "NVIDIA" for _, d in gpu_devices(doc)):
        out.append((path, "ranks[].device: an NVIDIA GPU, but the job has no nvidia-smi capture"))
    for key, name, read in _MADE:  # environment.json as envcapture made it of the captures
        text, had = texts.get(name), env.get(key)
        if not text or not isinstance(had, dict):
            continue
        made = read(text)
        if key == "gpu" and texts.get("nvidia-smi.xml") and "devices" in had:
            made["devices"] = envcapture.nvidia_devices(texts["nvidia-smi.xml"])
        out += [(captures + "environment.json", f"{key}.{k}: {had.get(k)!r}, but "
                 f"{name} gives {v!r}") for k, v in made.items() if had.get(k) != v][:1]
    # The log: job.out (local, PBS) or Slurm's job-<id>.out; one of a job run again agrees.
    logs, want, mismatch = [p for p in files if re.fullmatch(
        re.escape(folder) + r"/job[^/]*\.out", p)], printed(doc), []
    for log in logs:
        found = [ln for ln in files[log].decode("utf-8", "replace").splitlines()
                 if _PRINTED.match(ln)]
        # --quiet prints no build and ranks lines.
        expect = want if found[:1] and not found[0].startswith(("FOM", "RESULT")) else \
            want[1 + len(doc["ranks"]):]
        i = next((i for i in range(len(expect) + 1) if found[i:i + 1] != expect[i:i + 1]), None)
        if i is not None:
            said, gives = ((x[i:i + 1] or ["nothing"])[0] for x in (found, expect))
            mismatch.append((log, f"prints {said!r} where its result gives {gives!r}"))
    out += [(f"{folder}/job.out", "missing (what the mini-app printed)")] if not logs else \
        mismatch[-1:] if len(mismatch) == len(logs) else []
    return out, smi


def gpu_problems(values, smis):
    """The node's GPUs (nvidia-smi's UUIDs over the jobs) and memory against the disclosure."""
    jobs, sizes = Counter(u for smi in smis for u in set(smi["uuid"])), {}
    nodes, gpus = values.get("system.nodes"), values.get("node.gpus_per_node")
    out = [("disclosure.yaml", f"node.gpus_per_node: the jobs' nvidia-smi captures list "
            f"{len(jobs)} GPUs ({', '.join(f'{u}: {n} job(s)' for u, n in jobs.items())}), more "
            f"than the disclosure's {nodes} node(s) of {gpus}: the jobs ran on other units")] \
        if None not in (nodes, gpus) and len(jobs) > nodes * gpus else []
    for smi in smis:
        sizes.update({int(m): sizes.get(int(m), smi["path"]) for m in smi["MiB"]})
    return out + [p for m, path in sizes.items() for p in gb_problems(
        path, f"FB Memory Usage Total {m} MiB", m * 2**20, values, "node.gpu_memory_GB")]


def campaign_problems(jobs, results, campaign_file, variables=None):
    """[(path, why)]: no two results with the same times, the rounds in order by date, and
    every job of the campaign file (expanded again with the manifest's `variables`) among the
    manifest's `jobs`."""
    out, first, by_round = [], {}, {}
    rounds = {e["name"]: e.get("round") or 1 for e in jobs}
    for name, path, doc in results:
        times = json.dumps([k["time_s"] for k in doc["kernels"]], sort_keys=True)
        if first.setdefault(times, path) != path:
            out.append((path, f"kernels' time_s: {first[times]}'s, number for number (a copy)"))
        by_round.setdefault(rounds[name], []).append((doc["date"], path))
    for a, b in zip(sorted(by_round), sorted(by_round)[1:]):
        late, early = max(by_round[a]), min(by_round[b])
        if late > early:
            out.append((late[1], f"round {a} started {late[0]}, after {early[1]} of round {b} "
                        f"({early[0]}): the rounds did not run in the campaign's order"))
    if campaign_file is None:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(campaign_file[0]))
        atomic_write(path, campaign_file[1])
        try:
            want = {j.name for j in campaign_mod.load(path, tmp, check_keys=False,
                                                      variables=variables).jobs}
        except ToolError:  # no campaign of this suite, so no release's (release_reasons)
            return out
    missing = sorted(want - set(rounds))
    return out + ([("campaign/campaign.json", f"{len(missing)} job(s) of {campaign_file[0]} "
                    "missing: " + ", ".join(missing[:6]) + ", ..." * (len(missing) > 6))]
                  if missing else [])


def _shipped(rel):
    try:
        return read_input_file(figure.shipped(rel, "", ""))
    except ToolError:
        return None


def _release_file_log(*args):
    """The commits, newest first, that `git log ARGS` lists of the release file."""
    return (_git("log", "--format=%H", *args, "--", release.RELEASE_FILE) or b"").decode().split()


def release_of(version, commit):
    """(the release file of `version`, the commit git keeps it at or None), or (None, None);
    a release before release files: its campaigns {path: sha256} at `commit`, 'before'."""
    for at in [None] + _release_file_log("-S", f'"version": "{version}"')[-1:]:
        doc, _ = parse_json((_git("show", f"{at}:{release.RELEASE_FILE}") if at else
                             _shipped(release.RELEASE_FILE)) or b"null")
        if isinstance(doc, dict) and doc.get("version") == version:
            return doc, at
    # A revision, never an option of git's: the results are the bidder's.
    if not re.fullmatch(r"\w[\w.+-]*", str(commit)) or f'__version__ = "{version}"'.encode() \
            not in (_git("show", f"{commit}:python/src/karma_tools/__init__.py") or b"") or \
            _git("show", f"{commit}:{release.RELEASE_FILE}") is not None:
        return None, None
    return {"before": commit, "campaigns": {f"campaigns/procurement/{c}": hashlib.sha256(
        _git("show", f"{commit}:campaigns/procurement/{c}") or b"").hexdigest()
        for c in release.CAMPAIGNS}}, None


def release_commit(version):
    """The commit of release `version` (Spack's): the last to write its release file; None
    without git."""
    changed = _release_file_log("-S", f'"version": "{version}"')
    if not changed:
        return None
    shipped, _ = parse_json(_shipped(release.RELEASE_FILE) or b"null")
    # A later release's file replaced it: the release is the last commit before that one.
    later = not (isinstance(shipped, dict) and shipped.get("version") == version)
    return (_release_file_log("-1", f"{changed[0]}^" if later else "HEAD") or [None])[0]


# A release before release files had no reference file: the rows it weighed are not known.
NO_REFERENCE = {"rows": None}


def release_reasons(karma, campaign_file):
    """(why the results are not the release's reportable campaign, notes, the reference whose
    rows they must have: an earlier release's as git keeps it, NO_REFERENCE, or None for the
    shipped one's): one build of a release from a clean tree, its campaign byte for byte,
    each kernel's code_version."""
    builds = Counter((d["suite"]["version"], d["suite"]["git_describe"]) for _, d in karma)
    dirty = sum(d["suite"]["git_dirty"] is not False for _, d in karma)
    out = [f"{dirty} result(s) made from a modified tree (suite.git_dirty)"] if dirty else []
    if len(builds) != 1:
        return out + [f"the results name {len(builds)} builds (" + ", ".join(
            f"{v} at {c}" for v, c in builds) + "): a submission is one build's"], [], None
    ((version, commit),) = builds
    rec, at = (None, None) if version.endswith("-dev") else release_of(version, commit)
    if rec is None:
        return out + [f"suite.version {version}: no release (campaigns/procurement/release.json "
                      "or, before 1.0.0, a commit of that version git keeps)"], [], None
    name, data = campaign_file
    if rec["campaigns"].get(f"campaigns/procurement/{os.path.basename(name)}") != \
            hashlib.sha256(data).hexdigest():
        out.append(f"{name}: not release {version}'s campaign of that name, byte for byte")
    if "before" in rec:
        return out, [f"release {version} has no release file: its campaigns as of the results' "
                     f"commit {commit}; its code versions and rows are not checked"], NO_REFERENCE
    ref = rec["reference"]
    data = _git("show", f"{at}:{ref['file']}") if at else _shipped(figure.DEFAULT_REFERENCE)
    if data is None or hashlib.sha256(data).hexdigest() != ref["sha256"]:
        return out + [f"release {version}'s reference ({ref['file']}) is not at hand to "
                      "compare the kernels' code versions with"], [], None
    reference = json.loads(data)
    earlier = reference if at else None  # the shipped reference is scored by default
    codes = {(row["app"], json.dumps([c["symbols"], c["launch"]], sort_keys=True)): c["version"]
             for row in reference["rows"] for c in row.get("codes") or []}
    other = [f"{path}: {k['name']} {k.get('code_version')}" for path, doc in karma
             for k in doc["kernels"] if codes.get((doc["app"], json.dumps([field(
                 k, "code.symbols"), field(k, "code.launch")], sort_keys=True)),
                 k.get("code_version")) != k.get("code_version")]
    if other:
        return out + [f"{len(other)} kernel result(s) ran code other than release {version}'s "
                      f"(code_version; {other[0]})"], [], earlier
    made = field(reference, "suite.git_describe") or [commit]
    at_release = release_commit(version)
    if commit in made or (at_release or "").startswith(commit):
        return out, [], earlier
    made = ([at_release[:len(commit)]] if at_release else []) + made
    return out, [f"{MADE_AT}{commit}, not at release {version}'s commit or a commit its "
                 f"reference ran ({', '.join(made)}): its kernels' code versions are the "
                 "release's"], earlier
