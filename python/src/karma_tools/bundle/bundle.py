"""karma-bundle: a procurement submission as one file, and its check.

  karma-bundle pack CAMPAIGN_DIR -o BUNDLE.tar.xz --disclosure disclosure.yaml \\
      --build-log FILE [--build-log FILE ...] [--weights FILE]
  karma-bundle check BUNDLE.tar.xz          (or: karma-bundle --check BUNDLE.tar.xz)
  karma-bundle disclose CAMPAIGN_DIR -o disclosure.yaml [--answers FILE] ...

A bundle is a .tar.xz (the same inputs, the same bytes) of a finished
campaign, its results, build logs, weights and disclosure, with each file's
sha256 in MANIFEST.sha256. pack refuses (exit 2) what check would refuse.
check trusts nothing: the manifest, each result (schema, passed, run rules,
figures derived again), the disclosure against the results and captures, and
the facts against one another: captures, logs, GPUs, rounds
(docs/campaigns.md#a-submission-bundle). A valid bundle is then reportable,
as its release's, or not: see the answers below."""

import datetime
import hashlib
import os
import re
from collections import Counter

from karma_tools.core import ToolError, read_input_file
from karma_tools.results import archive, derived, resultset, rules, validate
from karma_tools.bundle import facts
from karma_tools.campaign import batch, campaign as campaign_mod, jobs as jobs_mod
from karma_tools.results.results import field, gpu_devices
from karma_tools.score import figure, release
from karma_tools import yamlread

PROGRAM = "karma-bundle"
MANIFEST = archive.BUNDLE_MANIFEST
DISCLOSURE = "disclosure.yaml"
CAMPAIGN = "campaign"
RESULTS = "results"
BUILD_LOGS = "build-logs"
WEIGHTS = "weights"
RULES_VERSION = "1"


# The disclosure's fields, the one list pack, check and the template's test read: (dotted key,
# kind, what). Kinds: text (non-empty), count (whole, >= 1), count0 (>= 0), number (> 0),
# number0 (>= 0), tier (baseline or optimized), list (of strings; [] when none), date.
FIELDS = (
    ("system.name", "text", "the system's name"),
    ("system.vendor", "text", "who builds or sells it"),
    ("system.nodes", "count", "the nodes of the system the results ran on"),
    ("node.cpu_model", "text", "the CPU model, as lscpu's 'Model name' gives it"),
    ("node.sockets", "count", "CPU sockets per node"),
    ("node.cores", "count", "CPU cores per node, all sockets"),
    ("node.memory_GB", "number", "host memory per node, GB"),
    ("node.gpu_model", "text", "the GPU model, as the results name it ('none' without GPUs)"),
    ("node.gpus_per_node", "count0", "GPUs per node"),
    ("node.gpu_memory_GB", "number0", "memory per GPU, GB"),
    ("node.gpu_units", "list", "each GPU unit the results ran on: 'UUID: board B, VBIOS V'"),
    ("interconnect", "text", "the network between nodes ('none' for one node)"),
    ("software.os", "text", "the operating system and its version"),
    ("software.compiler", "text", "the compilers and their versions"),
    ("software.mpi", "text", "the MPI library and its version"),
    ("software.kokkos", "text", "the Kokkos version the suite was built with"),
    ("software.gpu_toolkit", "text", "CUDA or ROCm and its version ('none' without GPUs)"),
    ("tier", "tier", "baseline or optimized: the highest tier among the results"),
    ("deviations", "list", "each departure from the run rules, one a line; [] when none"),
    ("tester.name", "text", "who ran the campaign"),
    ("tester.organisation", "text", "for whom"),
    ("tester.date", "date", "when the bundle was made, YYYY-MM-DD"),
)
# Fields a disclosure made before they were may lack.
OPTIONAL = ("node.gpu_units",)
# A value that starts so is the template's, not the tester's: empty.
_PLACEHOLDER = re.compile(r"^\s*(FILL IN|TODO|TBD)\b", re.IGNORECASE)
_VERSION = re.compile(r"\d+(?:\.\d+)+")
NONE = "none"  # the disclosure's word for what the node has not (no GPU, no MPI)


def _field_problem(kind, node):
    """Why a field's value is not a filled-in value of its kind, or None."""
    value = node.value
    if isinstance(value, str) and _blank(value) or value is None and kind != "list":
        return "empty (fill it in)"
    if kind == "list":
        if not isinstance(value, list):
            return "expected a list ([] when there is none)"
        bad = [v for v in value if not isinstance(v.value, str) or _blank(v.value)]
        return "an entry is empty or a placeholder" if bad else None
    if isinstance(value, (dict, list)):
        return "expected a single value"
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    least = 0 if kind.endswith("0") else 1
    if kind.startswith("count") and not (number and isinstance(value, int) and value >= least):
        return f"expected a whole number >= {least}"
    if kind.startswith("number") and not (number and (value > 0 if least else value >= 0)):
        return "expected a number " + ("> 0" if least else ">= 0")
    if kind == "tier" and value not in rules.TIERS:
        return f"expected {' or '.join(rules.TIERS)}"
    if kind == "date":
        try:
            datetime.date.fromisoformat(str(value))
        except ValueError:
            return "expected a date YYYY-MM-DD"
    return None


def _blank(text):
    return not text.strip() or _PLACEHOLDER.match(text)


def read_disclosure(data):
    """({dotted key: value}, problems 'key: why'): every field filled in."""
    try:
        root = yamlread.parse(data.decode("utf-8"), DISCLOSURE)
    except UnicodeDecodeError as e:
        return {}, [f"not UTF-8 ({e.reason})"]
    except yamlread.YamlError as e:
        return {}, [f"not YAML: {e}"]
    except ToolError as e:
        return {}, [str(e)]
    if not isinstance(root.value, dict):
        return {}, ["expected a mapping of the fields"]
    leaves, values, problems = yamlread.leaves(root), {}, []
    for key, kind, _ in FIELDS:
        if key in OPTIONAL and key not in leaves:
            continue
        why = _field_problem(kind, leaves[key]) if key in leaves else "missing"
        if why:
            problems.append(f"{key}: {why}")
        elif kind == "list":
            values[key] = [v.value.strip() for v in leaves[key].value]
        elif kind == "text":
            values[key] = leaves[key].text().strip()
        else:
            values[key] = leaves[key].value
    known = {key for key, _, _ in FIELDS}
    problems += [f"{key}: not a field of the disclosure" for key in leaves if key not in known]
    return values, problems


def _versions(text):
    """The dotted versions in text, as numbers (4.6.01 is 4.6.1)."""
    return {tuple(int(p) for p in v.split(".")) for v in _VERSION.findall(str(text))}


def _dotted(versions):
    return ", ".join(sorted(".".join(map(str, v)) for v in versions))


def _is_none(value):
    return isinstance(value, str) and value.casefold() == NONE


def _unlike(path, said, values, key, model):
    """[(path, why)] of each value not the disclosure's `key`, word for word (any spacing)."""
    return [(path, f"{said.format(v)}, but the disclosure's {key} is {model!r}")
            for v in sorted(set(values)) if model is not None and v.split() != model.split()]


def _gpu_problems(values, karma, envs):
    """The GPU model, count and toolkit against the ranks' devices and captures."""
    model, count = values.get("node.gpu_model"), values.get("node.gpus_per_node")
    out, seen = [], []
    for path, doc in karma:
        devices = gpu_devices(doc)
        names = {str(d.get("name")) for _, d in devices}
        seen += [f"{path}: ranks[].device"] if devices else []
        out += _unlike(path, "ranks[].device.name {!r}", names, "node.gpu_model", model)
        gpus = {(host, d.get("uuid") or d.get("pci_bus_id") or d.get("id")) for host, d in devices}
        most = max(Counter(host for host, _ in gpus).values(), default=0)
        if count is not None and most > count:
            out.append((path, f"ranks[].device: {most} GPUs on one host, but the disclosure's "
                        f"node.gpus_per_node is {count}"))
        cls, ranks = field(doc, "reportable.class"), field(doc, "mpi.ranks")
        every_gpu = len(gpus) == ranks and most == count
        if count is not None and cls in rules.NODE_RUN_CLASSES and not every_gpu:
            out.append((path, f"reportable.class {cls}: {ranks} rank(s) on {len(gpus)} GPU(s), "
                        f"{most} on a host; a node class runs one rank on each GPU of the node "
                        f"(node.gpus_per_node: {count})"))
    for path, env in envs:
        found = field(env, "gpu.count")
        seen += [f"{path}: gpu.count {found}"] if isinstance(found, int) and found > 0 else []
        if isinstance(found, int) and count is not None and found != count:
            out.append((path, f"gpu.count {found}, but the disclosure's node.gpus_per_node "
                        f"is {count}"))
        out += _unlike(path, "gpu.products {!r}", map(str, field(env, "gpu.products") or []),
                       "node.gpu_model", model)
    if seen:
        if _is_none(values.get("software.gpu_toolkit")):
            out.append((DISCLOSURE, f"software.gpu_toolkit: none, but the set has GPUs "
                        f"({seen[0]})"))
        return out
    # No GPU anywhere: the disclosure cannot name one.
    return out + [(DISCLOSURE, f"{key}: {values[key]!r}, but no result ran on a GPU and no "
                   f"environment capture saw one ({key} is {empty!r} without GPUs)")
                  for key, empty in (("node.gpu_model", NONE), ("node.gpus_per_node", 0),
                                     ("node.gpu_memory_GB", 0), ("software.gpu_toolkit", NONE))
                  if key in values and not (_is_none(values[key]) or values[key] == empty)]


def _cpu_problems(values, envs):
    """The CPU model against every capture's lscpu, word for word: a part names another CPU."""
    model = values.get("node.cpu_model")
    names = [(path, name) for path, env in envs
             if isinstance(name := field(env, "cpu.Model name"), str)]
    if model is not None and not names:
        return [(DISCLOSURE, "node.cpu_model: no environment capture (results/<job>/"
                 "environment/environment.json) gives lscpu's Model name to check it")]
    return [p for path, name in names for p in
            _unlike(path, "cpu.Model name {!r} (lscpu)", [name], "node.cpu_model", model)]


def name_and_version(text):
    """(text before the first dotted version, it or None): 'Open MPI v4.1.6, ...'."""
    first = _VERSION.search(text)
    return (text[:first.start()], first.group()) if first else (text, None)


def _name_words(text):
    return re.findall(r"[a-z][a-z0-9+]*", str(text).casefold().replace("(r)", " "))


# What the results say of the software: (disclosure key, the results' key).
_SOFTWARE = (("software.kokkos", "kokkos.version"), ("software.compiler", "build.compiler"),
             ("software.mpi", "mpi.library_version"))


def _software_problems(values, karma):
    """Kokkos, the compilers and MPI against every result: exactly the versions the results
    name (4.6.01 is 4.6.1; 13.3 is not 13.3.0), and MPI's name."""
    out, used = [], {}
    for path, doc in karma:
        for key, where in _SOFTWARE:
            said, mpi = field(doc, where), key == "software.mpi"
            if key not in values or not isinstance(said, str) or mpi and _is_none(said):
                continue
            name, version = name_and_version(said) if mpi else ("", said)
            versions, disclosed = _versions(version or ""), values[key]
            used.setdefault(key, (where, set()))[1].update(versions)
            words = _name_words(name_and_version(disclosed)[0])
            missing = versions - _versions(disclosed)
            if missing or not _versions(disclosed) or mpi and not (
                    words and set(words) <= set(_name_words(name))):
                out.append((path, f"{where} {said!r}, but the disclosure's {key} is {disclosed!r}"
                            + (f" (it lacks {_dotted(missing)})" if missing else "")))
    out += [(DISCLOSURE, f"{key}: {_dotted(extra)} is no version any result's {where} gives "
             f"({values[key]!r})") for key, (where, versions) in used.items()
            if (extra := _versions(values[key]) - versions)]
    if karma and "software.mpi" in values and "software.mpi" not in used and \
            not _is_none(values["software.mpi"]):
        out.append((DISCLOSURE, f"software.mpi: {values['software.mpi']!r}, but no result was "
                    "built with MPI (mpi.library_version none: software.mpi is 'none')"))
    return out


# Libfabric's providers that drive a network adapter (its others are software: tcp, shm).
_FABRICS = {"cxi", "efa", "opx", "psm2", "psm3", "verbs", "usnic", "gni"}


def _node_problems(values, karma, envs):
    """The nodes, OS, memory, CPUs, interconnect and CUDA against the results and captures."""
    out, nodes = [], max([n for _, d in karma if isinstance(n := field(d, "mpi.nodes"), int)],
                         default=None)
    if nodes not in (None, values.get("system.nodes", nodes)):
        out.append((DISCLOSURE, f"system.nodes: {values['system.nodes']}, but the results ran "
                    f"on {nodes} node(s) at most (mpi.nodes)"))
    cudas = {v[:2] for _, doc in karma for _, d in gpu_devices(doc)
             for v in _versions(d.get("runtime_version"))}
    adapters = []
    for path, env in envs:
        os_name, total = field(env, "platform.os"), field(env, "memory.MemTotal")
        out += _unlike(path, "platform.os {!r}", [os_name] if isinstance(os_name, str) else [],
                       "software.os", values.get("software.os"))
        out += facts.gb_problems(path, f"memory.MemTotal {total} bytes (meminfo)", total,
                                 values, "node.memory_GB") if isinstance(total, int) else []
        sockets, cores = (field(env, f"cpu.{k}") for k in ("Socket(s)", "Core(s) per socket"))
        lscpu = {"node.sockets": int(sockets), "node.cores": int(sockets) * int(cores)} \
            if str(sockets).isdigit() and str(cores).isdigit() else {}
        out += [(path, f"cpu: lscpu gives {n} for {key}, the disclosure {values[key]}")
                for key, n in lscpu.items() if values.get(key, n) != n]
        cudas |= {v[:2] for v in _versions(field(env, "gpu.cuda_version"))}
        found = [field(env, f"interconnect.{k}") for k in ("ibverbs", "libfabric_providers")]
        adapters += [a for x in found if isinstance(x, list) for a in x
                     if isinstance(a, dict) or isinstance(a, str) and a in _FABRICS]
    net, toolkit = values.get("interconnect"), values.get("software.gpu_toolkit")
    if net is not None and not _is_none(net) and envs and not adapters:
        out.append((DISCLOSURE, f"interconnect: {net!r}, but no capture lists a network "
                    "adapter (ibv_devinfo, fi_info)"))
    if cudas and {v[:2] for v in _versions(toolkit or "")} - cudas and not _is_none(toolkit):
        out.append((DISCLOSURE, f"software.gpu_toolkit: {toolkit!r}, but the captures' CUDA "
                    f"(nvidia-smi, ranks[].device.runtime_version) is {_dotted(cudas)}"))
    return out


def disclosure_problems(values, karma, envs):
    """[(path, why)] of the disclosure against the results and captures."""
    units = facts.unit_list(karma)
    return _gpu_problems(values, karma, envs) + _cpu_problems(values, envs) + \
        _software_problems(values, karma) + _node_problems(values, karma, envs) + (
            [(DISCLOSURE, f"node.gpu_units: the results ran on {'; '.join(units) or 'none'}")]
            if "node.gpu_units" in values and values["node.gpu_units"] != units else [])


def _record_problems(doc, decks):
    """[why] of the result's run-rules record against itself and its deck."""
    record = doc.get("reportable")
    if record is None:
        return ["reportable: missing (results of the run rules carry it)"]
    # The schema has checked the record's keys and their types.
    cls, tier, ok, reasons = (record[k] for k in ("class", "tier", "reportable", "reasons"))
    out = [] if record["rules"] == RULES_VERSION else [
        f"reportable.rules: {record['rules']!r}, expected {RULES_VERSION!r}"]
    if ok == bool(reasons):
        out.append("reportable.reasons: " + ("given for a reportable result" if ok else
                                             "empty for a result not reportable"))
    if ok and (cls is None or tier is None):
        out.append("reportable: reportable without a class and a tier")
    if cls in rules.CLASSES + (rules.WEAK_CLASS,):
        sha = doc["deck"]["sha256"]
        want = (doc["app"], "large" if cls == rules.WEAK_CLASS else cls)
        found = decks.get(sha)
        if found != want:
            it = f"inputs/{found[0]}/{found[1]}.yaml" if found else "no class deck of this suite"
            out.append(f"reportable.class: {cls}, but deck.sha256 {sha[:12]}... is not "
                       f"inputs/{want[0]}/{want[1]}.yaml of this suite (it is {it})")
        ranks = doc["mpi"]["ranks"]
        if cls == rules.WEAK_CLASS and ranks <= 1:
            out.append(f"reportable.class: weak on {ranks} rank(s); weak is the large deck "
                       "on more than one")
    return out


def _parse_json(data):
    doc, why = validate.parse_json(data)
    return doc, why and f"not JSON ({why})"


def _campaign_problems(files):
    """(the manifest's jobs or None, [(path, why)] of it, the campaign file, scripts, folders)."""
    path = f"{CAMPAIGN}/{batch.MANIFEST}"
    manifest, why = _parse_json(files[path]) if path in files else (None, "missing")
    if why:
        return None, [(path, why)]
    try:
        resultset.check_manifest(path, manifest)
    except ToolError as e:
        return None, [(path, str(e).split(": ", 1)[-1])]
    # The schema has made each name a non-empty string.
    names = [e["name"] for e in manifest["jobs"]]
    if len(set(names)) != len(names) or any("/" in n or n == ".." for n in names):
        return None, [(path, "job names not unique or not plain names")]
    own, sha = campaign_file(files), field(manifest, "campaign.sha256")
    out = [] if own and hashlib.sha256(own[1]).hexdigest() == sha else [
        (f"{CAMPAIGN}/", f"expected one campaign file whose sha256 is the manifest's "
         f"campaign.sha256 ({str(sha)[:12]}...)")]
    out += [(script, f"job {e['name']}'s script missing") for e in manifest["jobs"]
            if (script := f"{CAMPAIGN}/jobs/{os.path.basename(e['script'])}") not in files]
    out += [(f"{RESULTS}/{stray}/", "not a job of the campaign") for stray in
            sorted({p.split("/")[1] for p in files if p.startswith(RESULTS + "/")} - set(names))]
    if not any(p.startswith(BUILD_LOGS + "/") for p in files):
        out.append((f"{BUILD_LOGS}/", "no build log"))
    return manifest, out


def campaign_file(files):
    """(path, bytes) of the bundle's one campaign file, or None."""
    own = [p for p in files if p.startswith(CAMPAIGN + "/") and p.count("/") == 1
           and p != f"{CAMPAIGN}/{batch.MANIFEST}"]
    return (own[0], files[own[0]]) if len(own) == 1 else None


def _job_problems(files, name, path, decks):
    """One job's exit code and result: ([(path, why)], the result or None, whether valid)."""
    exit_code = f"{RESULTS}/{name}/{jobs_mod.EXIT_CODE_FILE}"
    code = files.get(exit_code, b"").decode("utf-8", "replace").strip()
    out = [] if code == "0" else [(exit_code, f"job {name} did not pass (exit code "
                                   f"{code or 'missing'})")]
    doc, why = _parse_json(files[path]) if path in files else \
        (None, f"job {name}'s result missing")
    if why:
        return out + [(path, why)], None, False
    problems = validate.validate(doc, {"result": "PASSED"})
    # Only a document the schema accepts has the fields to derive again and facts to hold.
    conforms = not problems
    problems += derived.problems(doc) if conforms else []
    if conforms and not validate.is_reference(doc):
        problems += _record_problems(doc, decks)
    return out + [(path, validate.printable(p)) for p in problems], doc, conforms


def content_problems(files, decks):
    """All but the manifest: ([(path, why)], summary, [(path, karma result)] (no reference))."""
    manifest, problems = _campaign_problems(files)
    if manifest is None:
        return problems, [], []
    jobs = manifest["jobs"]
    results, envs, smis, named, karma = [], [], [], [], []
    for entry in jobs:
        name, folder = entry["name"], f"{RESULTS}/{entry['name']}"
        path = f"{folder}/{os.path.basename(entry['results_file'])}"
        found, doc, conforms = _job_problems(files, name, path, decks)
        problems += found
        results += [(path, doc)] if isinstance(doc, dict) else []
        env_path = f"{folder}/environment/environment.json"
        env = validate.parse_json(files.get(env_path, b"null"))[0]
        envs += [(env_path, env)] if isinstance(env, dict) else []
        if conforms and not validate.is_reference(doc):
            found, smi = facts.job_problems(files, folder, path, doc,
                                            env if isinstance(env, dict) else {})
            problems += found
            smis += [smi] if smi else []
            named.append((name, path, doc))
            karma.append((path, doc))
    # Without a disclosure, no values to contradict: only that it is missing.
    values, why = read_disclosure(files[DISCLOSURE]) if DISCLOSURE in files else ({}, ["missing"])
    problems += [(DISCLOSURE, w) for w in why] + disclosure_problems(values, karma, envs)
    problems += facts.gpu_problems(values, smis) + facts.campaign_problems(
        jobs, named, campaign_file(files), manifest.get("variables"))
    tiers = [t for _, d in karma if (t := rules.reportable(d).get("tier")) in rules.TIERS]
    highest = max(tiers, key=rules.TIERS.index, default=None)
    if "tier" in values and values["tier"] != highest:
        problems.append((DISCLOSURE, f"tier: {values['tier']}, but the highest tier among "
                         f"the results is {highest or 'none (no result has a tier)'}"))
    return problems, _summary(jobs, results, karma), karma


def _summary(jobs, results, karma):
    records = [(path, rules.reportable(doc)) for path, doc in karma]
    counts = Counter(f"{r.get('class')}/{r.get('tier')}" for _, r in records
                     if r.get("reportable") is True)
    reportable = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
    head = f"{len(jobs)} job(s), {len(results)} result(s) ({len(results) - len(karma)} reference)"
    return [head, f"reportable (class/tier): {reportable}"] + [
        f"  not reportable: {path}: " + "; ".join(map(str, r.get("reasons") or ["?"]))
        for path, r in records if r.get("reportable") is not True]


def manifest_text(files):
    return "".join(f"{hashlib.sha256(files[p]).hexdigest()}  {p}\n" for p in sorted(files))


def class_decks():
    inputs = campaign_mod.inputs_dir(campaign_mod.tools_dir())
    if inputs is None:
        raise ToolError("the suite's inputs/ not found (set KARMA_INPUTS): the class decks "
                        "are needed", 2)
    return rules.class_decks(inputs)


def read_input(path, what):
    if not os.path.lexists(path):
        raise ToolError(f"{path}: {what} not found", 2)
    return read_input_file(path, what)


def _named(paths, folder, what):
    """{folder/basename: bytes} of the files; refused when two share a name."""
    out = {}
    for path in paths:
        name = f"{folder}/{os.path.basename(path)}"
        if name in out:
            raise ToolError(f"{path}: two {what}s named {os.path.basename(path)}", 2)
        out[name] = read_input(path, what)
    return out


def pack(campaign, disclosure, build_logs, weights=(), campaign_file=None):
    """(the bundle's bytes, summary lines, its file count) of a campaign whose jobs all passed;
    refused (2) with every problem, a line each: the tester mends them all at once."""
    out = os.path.abspath(campaign)
    manifest = batch.load_manifest(out)
    rows = batch.collect(out, manifest, query=False)
    bad = [f"{e['name']} ({s}{': ' + d if d else ''})" for e, s, d in rows if s != batch.PASSED]
    if bad:
        raise ToolError(f"{out}: {len(bad)} job(s) not ended or not passed: " + "; ".join(bad), 2)
    recorded = manifest.get("campaign") or {}
    source = campaign_file or recorded.get("path")
    if not isinstance(source, str):
        raise ToolError(f"{out}: the manifest names no campaign file; give --campaign-file", 2)
    data = read_input(source, "campaign file (--campaign-file names it)")
    if hashlib.sha256(data).hexdigest() != recorded.get("sha256"):
        raise ToolError(f"{source}: not the campaign file {out} was generated from (its sha256 "
                        "differs from the manifest's)", 2)
    files = {f"{CAMPAIGN}/{batch.MANIFEST}": read_input(os.path.join(out, batch.MANIFEST),
                                                        "manifest"),
             f"{CAMPAIGN}/{os.path.basename(source)}": data}
    for entry in manifest["jobs"]:
        files[f"{CAMPAIGN}/jobs/{os.path.basename(entry['script'])}"] = read_input(
            os.path.join(out, entry["script"]), "job script")
        for rel in archive.folder_files(entry["results_dir"]):
            files[f"{RESULTS}/{entry['name']}/{rel}"] = read_input(
                os.path.join(entry["results_dir"], rel), "results file")
    files[DISCLOSURE] = read_input(disclosure, "disclosure")
    files.update(_named(build_logs, BUILD_LOGS, "build log"))
    files.update(_named(weights, WEIGHTS, "weights file"))
    problems, summary, _ = content_problems(files, class_decks())
    if problems:
        lines = [f"{validate.printable(where)}: {why}" for where, why in problems]
        raise ToolError(f"\n{PROGRAM}: error: ".join(lines), 2)
    files[MANIFEST] = manifest_text(files).encode()
    return archive.tar_xz(sorted(files.items())), summary, len(files)


def examine(path, record=None):
    """(problems [(where, why)], summary lines, why a valid bundle is not a complete
    reportable campaign) of the bundle at path; record: its figure of record, if scored
    with the shipped reference and weights."""
    if not os.path.isfile(path):
        raise ToolError(f"{path}: not a file", 2)
    decks, problems = class_decks(), []
    files = archive.read_members(path, problems, "karma bundle")
    found, summary, karma = content_problems(files, decks)
    problems += archive.manifest_check(files)[1] + found
    if problems:
        return problems, summary, []
    reasons, notes, reference = facts.release_reasons(karma, campaign_file(files))
    reasons += [] if any(rules.reportable(doc).get("reportable") is True for _, doc in karma) \
        else ["no result is reportable"]
    # The rows its own release's reference weighs: the shipped one's are the record's.
    if reference is facts.NO_REFERENCE:
        record = None
    elif record is None or reference is not None:
        record = figure.score([(figure.label_of(path), path)], reference)["sets"][0]["record"]
    if record and record["missing"]:
        reasons.append(f"{len(record['missing'])} row(s) the procurement score weighs have no "
                       "reportable figure: " + ", ".join(record["missing"]))
    return problems, summary + notes, reasons


def page_facts(path, record):
    """(check's answer: (True, [note of the commit if not the release's]) or (False, [why]),
    the disclosure's values) of a scored set for its page; (None, None) for no bundle."""
    if not (archive.is_archive_name(path) and os.path.isfile(path)) or \
            archive.open_archive(path).index["kind"] != "bundle":
        return None, None
    problems, summary, reasons = examine(path, record)
    notes = [line for line in summary if line.startswith(facts.MADE_AT)]
    answer = (False, [f"not valid: {len(problems)} problem(s), karma-bundle check lists "
                      "them"]) if problems else (not reasons, reasons or notes)
    return answer, read_disclosure(archive.open_archive(path).files.get(DISCLOSURE, b""))[0]


def mark_official(report):
    """Each set of a score gets record.unofficial, why its figure is not of record ([] for a
    valid, reportable bundle scored with the release's files), and `facts` (page_facts)."""
    path = figure.shipped(release.RELEASE_FILE, "release file", "--unofficial")
    frozen = release.released(os.path.dirname(os.path.dirname(os.path.dirname(path))))
    version, reference = frozen["version"], report["reference_file"]
    # The score's reference and weights, the same for every set.
    scored = [] if os.path.isfile(reference) and hashlib.sha256(read_input(
        reference, "reference")).hexdigest() == frozen["reference"]["sha256"] else [
        f"the reference ({reference}) is not karma {version}'s "
        f"({frozen['reference']['file']}, sha256 in {release.RELEASE_FILE})"]
    if {a: round(w, 12) for a, w in report["weights"].items()} != frozen["weights"]:
        scored.append(f"the weights ({report['weights_file']}) are not karma {version}'s "
                      f"({release.RELEASE_FILE})")
    for s in report["sets"]:  # a record scored with other files: the check scores again
        s["facts"] = page_facts(s["path"], None if scored else s["record"])
        answer, other = s["facts"][0], [v for v in s["suite_versions"] if v != version]
        # (True, [a note]) where the check names the commit results off the release's came from
        reasons = ["not a karma-bundle (karma-bundle pack makes one)"] if answer is None else \
            [f"karma-bundle check: {why}" for why in answer[1] if not answer[0]]
        made = [f"made by karma {', '.join(other)}, not karma {version}, whose reference and "
                "weights score it"] if other else []
        s["record"]["unofficial"] = reasons + made + scored
    return report
