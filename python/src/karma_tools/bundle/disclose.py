"""karma-bundle disclose: a campaign's disclosure from its results and captures, as check
holds it, word for word; the tester gives only what no capture knows (ASKED)."""

import datetime
import os
import re

from karma_tools.core import ToolError, read_input_file
from karma_tools.results import resultset, rules
from karma_tools.score import figure
from karma_tools.bundle.bundle import (FIELDS, disclosure_problems, name_and_version,
                                       read_disclosure)
from karma_tools.bundle.facts import unit_list
from karma_tools import yamlread
from karma_tools.results.results import field, gpu_devices, is_number

# Asked of the tester: (dotted key, flag, question).
ASKED = (
    ("system.name", "--system-name", "the system's name (e.g. the cluster's)"),
    ("system.vendor", "--system-vendor", "who builds or sells it"),
    ("interconnect", "--interconnect", "the network between nodes ('none' for one node)"),
    ("tester.name", "--tester", "who ran the campaign"),
    ("tester.organisation", "--organisation", "for whom"),
)


def _one(values, what):
    """The one value all give, or an error naming them."""
    found = sorted({v for v in values if v not in (None, "")}, key=str)
    if len(found) != 1:
        raise ToolError(f"the results and captures give {len(found) or 'no'} value(s) for "
                        f"{what}" + (f": {', '.join(map(str, found))}" if found else "") +
                        "; give a disclosure by hand (campaigns/procurement/disclosure.yaml)", 2)
    return found[0]


def _gpus(karma, envs):
    devices = [device for _, doc in karma for _, device in gpu_devices(doc)]
    if not devices:
        return {"node.gpu_model": "none", "node.gpus_per_node": 0, "node.gpu_memory_GB": 0,
                "software.gpu_toolkit": "none"}
    gpu = [e.get("gpu") or {} for _, e in envs]
    kind = _one([g.get("vendor") for g in devices], "the GPUs' vendor")
    toolkit = _one([g.get("cuda_version") or g.get("rocm_version") for g in gpu],
                   "the GPU toolkit's version (the captures' gpu)")
    return {"node.gpu_model": _one([g.get("name") for g in devices],
                                   "the GPU model (ranks[].device.name)"),
            "node.gpus_per_node": _one([g.get("count") for g in gpu],
                                       "the GPUs per node (the captures' gpu.count)"),
            "node.gpu_memory_GB": round(_one([m for g in devices if is_number(
                m := g.get("memory_bytes"))], "the GPU memory") / 1e9),
            "software.gpu_toolkit": ("CUDA " if kind == "NVIDIA" else "ROCm ") + str(toolkit)}


def _compiler(karma):
    """'GCC 13.3.0 + nvcc 13.0.88' of build.compiler 'GNU 13.3.0 with NVIDIA 13.0.88 (CUDA)'."""
    said = _one([field(d, "build.compiler") for _, d in karma], "the compiler (build.compiler)")
    names = {"GNU": "GCC", "NVIDIA": "nvcc", "Clang": "Clang", "IntelLLVM": "icpx"}
    parts = re.findall(r"([A-Za-z]+) (\d+(?:\.\d+)+)", said)
    return " + ".join(f"{names.get(n, n)} {v}" for n, v in parts) or said


def _mpi(karma):
    said = _one([field(d, "mpi.library_version") or "none" for _, d in karma],
                "the MPI library (mpi.library_version)")
    name, version = name_and_version(said)
    return f"{name.rstrip(' v,')} {version}".strip() if version else "none"


def derived(karma, envs):
    """{dotted key: value} of every field the results and captures give."""
    cpus = [e.get("cpu") or {} for _, e in envs]
    if not cpus:
        raise ToolError("no environment capture (results/<job>/environment/) in the "
                        "campaign: the node's CPU and memory are unknown", 2)
    sockets = int(_one([c.get("Socket(s)") for c in cpus], "the sockets (lscpu)"))
    tiers = {rules.reportable(d).get("tier") for _, d in karma}
    return {
        "system.nodes": max(int(field(d, "mpi.nodes") or 1) for _, d in karma),
        "node.cpu_model": _one([c.get("Model name") for c in cpus], "the CPU model (lscpu)"),
        "node.sockets": sockets,
        "node.cores": sockets * int(_one([c.get("Core(s) per socket") for c in cpus],
                                         "the cores per socket (lscpu)")),
        "node.memory_GB": round(_one([field(e, "memory.MemTotal") for _, e in envs],
                                     "the memory (MemTotal)") / 1e9),
        "software.os": _one([field(e, "platform.os") for _, e in envs], "the operating system"),
        "software.compiler": _compiler(karma),
        "software.mpi": _mpi(karma),
        "software.kokkos": _one([field(d, "kokkos.version") for _, d in karma],
                                "Kokkos (kokkos.version)"),
        "tier": "optimized" if "optimized" in tiers else "baseline",
        "deviations": [],
        "tester.date": datetime.date.today().isoformat(),
        "node.gpu_units": unit_list(karma),
        **_gpus(karma, envs),
    }


def answers(path, flags, ask, require=True):
    """{dotted key: text} of what only the tester knows: the answers file, the flags, then
    ask(key, question); the missing ones one error if `require` (else the end may ask)."""
    given = {}
    if path:
        try:
            root = yamlread.parse(read_input_file(path, "YAML file of answers").decode(), path)
        except (UnicodeDecodeError, yamlread.YamlError) as e:
            raise ToolError(f"{path}: not a YAML file of answers ({e})", 2) from None
        if not isinstance(root.value, dict):
            raise ToolError(f"{path}: expected 'key: value' lines", 2)
        for key, node in yamlread.leaves(root).items():
            if key not in {k for k, _, _ in ASKED}:
                raise ToolError(f"{path}:{node.key_line}:{node.key_col}: {key}: not one of "
                                f"{', '.join(k for k, _, _ in ASKED)}", 2)
            given[key] = node.text().strip()
    given.update({k: v for k, v in flags.items() if v})
    for key, _, question in ASKED if ask else []:
        given[key] = given.get(key) or ask(key, question)
    missing = [(k, flag) for k, flag, _ in ASKED if not given.get(k)]
    if missing and require:
        raise ToolError("the disclosure needs what no capture knows: " + ", ".join(
            f"{k} ({flag} or --answers FILE)" for k, flag in missing), 2)
    return given


def make(campaign, answers_file, flags, ask):
    """The disclosure's YAML of a campaign; refused (3) where check would not accept it."""
    runs = [r for r in resultset.open(os.path.abspath(campaign)).runs if not r.reference]
    karma, envs = [(r.path, r.doc) for r in runs], figure.captures(runs)
    text = yaml_text({**derived(karma, envs), **answers(answers_file, flags, ask=ask)})
    parsed, problems = read_disclosure(text.encode())
    problems += [f"{where}: {why}" for where, why in disclosure_problems(parsed, karma, envs)]
    if problems:
        raise ToolError(f"{campaign}: the disclosure made from the captures is not one check "
                        "accepts: " + "; ".join(problems), 3)
    return text


def _quoted(value):
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def yaml_text(values):
    """The disclosure as YAML, in the template's order (bundle.FIELDS)."""
    lines, section = ["# Filled in by karma-bundle disclose from the results and the",
                      "# environment captures; the system, interconnect and tester as given."], None
    for key, _, what in FIELDS:
        head, _, leaf = key.rpartition(".")
        value, indent = values[key], "  " if head else ""
        lines += [f"{head}:"] if head not in ("", section) else []
        section = head
        if isinstance(value, list) and value:  # a block list, an item a line
            lines += [f"{indent}{leaf}:  # {what}"] + [f"{indent}  - {_quoted(v)}" for v in value]
        else:
            text = "[]" if value == [] else value if isinstance(value, (int, float)) else \
                _quoted(value)
            lines.append(f"{indent}{leaf}: {text}  # {what}")
    return "\n".join(lines) + "\n"
