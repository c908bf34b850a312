"""karma-envcapture: records what a procurement disclosure needs about the node a run used,
beside its results: OUT/environment.json (everything; each command's `file` names its output)
and each command's own output. An absent command is null, one that fails has its exit status:
recorded, never fatal. What it captures: docs/campaigns.md (karma-envcapture). karma-batch
job scripts run it into <results>/environment."""

import concurrent.futures
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import xml.etree.ElementTree as ElementTree

from karma_tools.core import __version__

# Variables of the batch systems karma knows (as the results' `job`), and each's job id.
SCHEDULER_PREFIXES = ("SLURM_", "SBATCH_", "SRUN_", "PBS_", "LSB_", "LSF_", "FLUX_", "COBALT_",
                      "SGE_", "PALS_")
JOB_IDS = (("slurm", "SLURM_JOB_ID"), ("pbs", "PBS_JOBID"), ("lsf", "LSB_JOBID"),
           ("flux", "FLUX_JOB_ID"), ("cobalt", "COBALT_JOBID"))
# Variables that change how a run behaves.
RUNTIME_PREFIXES = ("OMP_", "KOKKOS_", "KARMA_", "CUDA_", "NCCL_", "OMPI_", "PMIX_", "UCX_",
                    "MPICH_", "I_MPI_", "FI_", "HWLOC_", "GOMP_", "KMP_", "MV2_", "CRAY_")

# (key, file name, argv alternatives, what); the first alternative that exists runs.
COMMANDS = [
    ("lscpu", "lscpu.txt", [["lscpu"]], "CPUs, caches, NUMA"),
    ("topology", "topology.xml", [["lstopo-no-graphics", "--of", "xml", "-"],
                                  ["lstopo", "--of", "xml", "-"]],
     "hardware topology: packages, caches, cores, NUMA, PCI devices (hwloc)"),
    ("nvidia-smi", "nvidia-smi.txt", [["nvidia-smi", "-q"]], "NVIDIA GPUs, driver, clocks, ECC"),
    ("nvidia-smi-xml", "nvidia-smi.xml", [["nvidia-smi", "-q", "-x"]],
     "the same as XML: clocks, power limits"),
    ("nvidia-smi-topo", "nvidia-smi-topo.txt", [["nvidia-smi", "topo", "-m"]],
     "GPU/NIC/CPU affinity"),
    ("rocm-smi", "rocm-smi.txt", [["rocm-smi", "--showallinfo"]], "AMD GPUs"),
    ("rocm-smi-json", "rocm-smi.json", [["rocm-smi", "--showallinfo", "--json"]],
     "the same as JSON"),
    ("ibv_devinfo", "ibv_devinfo.txt", [["ibv_devinfo", "-v"]],
     "InfiniBand/RoCE adapters: firmware, ports, link (rdma-core)"),
    ("fi_info", "fi_info.txt", [["fi_info"]], "libfabric providers and interfaces"),
    ("ucx_info", "ucx_info.txt", [["ucx_info", "-v"]], "UCX version and configuration"),
    ("ucx_info-devices", "ucx_info-devices.txt", [["ucx_info", "-d"]], "UCX transports, devices"),
    ("numactl", "numactl.txt", [["numactl", "--hardware"]], "NUMA nodes and distances"),
    ("uname", "uname.txt", [["uname", "-a"]], "kernel"),
]
# CUDA_VISIBLE_DEVICES naming GPUs by nvidia-smi's index or UUID (not MIG instances): nvidia-smi
# ignores it, so `-q` is asked for those GPUs alone, the ones the job's ranks can use (one
# campaign on each GPU of a node then discloses a node of one GPU).
_VISIBLE = re.compile(r"^(\d+|GPU-[0-9a-fA-F-]+)(,(\d+|GPU-[0-9a-fA-F-]+))*$")
SELECTED = ("nvidia-smi", "nvidia-smi-xml")

# (key, argv alternatives) of each `--version`.
COMPILERS = [(name, [[exe, "--version"] for exe in exes or [name]]) for name, *exes in (
    ("c++", os.environ.get("CXX", "c++")), ("cc", os.environ.get("CC", "cc")), ("g++",),
    ("clang++",), ("nvcc", "nvcc", "/usr/local/cuda/bin/nvcc"), ("hipcc",), ("icpx",),
    ("mpicxx",), ("mpirun",), ("srun",), ("cmake",))]


def run_command(alternatives, timeout):
    """{argv, exit_code, output} of the first alternative found, or None."""
    # which() finds a path too, if it names an executable file.
    argv = next(([exe, *a[1:]] for a in alternatives if (exe := shutil.which(a[0]))), None)
    if argv is None:
        return None
    try:
        # Its own session: a timeout kills the children too, which would hold the pipes open.
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                errors="replace", start_new_session=True)
    except OSError as e:
        return {"argv": argv, "exit_code": None, "output": f"({e.strerror})"}
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"argv": argv, "exit_code": None, "output": f"(no answer within {timeout:g} s)"}
    return {"argv": argv, "exit_code": proc.returncode,
            "output": stdout + (stderr if proc.returncode else "")}


def parse_colon_lines(text):
    """'Key:   value' lines (lscpu, /proc/meminfo) as a dict."""
    pairs = (line.partition(":") for line in text.splitlines())
    return {key.strip(): value.strip() for key, sep, value in pairs if sep and key.strip()}


def meminfo(text):
    """/proc/meminfo's values, sizes in bytes."""
    return {key: int(m.group(1)) * 1024 if (m := re.fullmatch(r"(\d+)\s*kB", value)) else value
            for key, value in parse_colon_lines(text).items()}


def _valid_text(text):
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def version_line(text):
    """The first line with a version number (nvcc's is its fourth)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return next((line for line in lines if re.search(r"\d+\.\d+", line)),
                lines[0] if lines else None)


def capture(timeout=20):
    """(document, {file name: text}) describing this node; the files hold the document too."""
    # Bytes not UTF-8 (lone surrogates in Python) become U+FFFD: the outputs must be UTF-8.
    environ = {_valid_text(k): _valid_text(v) for k, v in os.environ.items()}
    doc = {"karma_environment": 1, "karma_version": __version__,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "hostname": socket.gethostname(),
           "platform": {"system": platform.system(), "release": platform.release(),
                        "machine": platform.machine(), "python": platform.python_version()}}
    pretty = []
    with contextlib.suppress(OSError), open("/etc/os-release", errors="replace") as f:
        pretty = re.findall(r"^\s*PRETTY_NAME=(.*)", f.read(), re.M)
    doc["platform"]["os"] = pretty[-1].strip().strip('"') if pretty else None

    visible = environ.get("CUDA_VISIBLE_DEVICES", "").replace(" ", "")
    select = ["-i", visible] if _VISIBLE.match(visible) else []
    # All at once: each waits on its own program (nvidia-smi starts NVML for every GPU).
    jobs = [[a + select for a in c[2]] if c[0] in SELECTED else c[2] for c in COMMANDS] + \
        [c[1] for c in COMPILERS]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        ran = list(pool.map(run_command, jobs, [timeout] * len(jobs)))
    results = {c[0]: r for c, r in zip(COMMANDS, ran)}
    found = {c[0]: r for c, r in zip(COMPILERS, ran[len(COMMANDS):])}
    files = {name: results[key]["output"] for key, name, *_ in COMMANDS if results[key]}
    doc["commands"] = {key: results[key] and {
        "argv": results[key]["argv"], "exit_code": results[key]["exit_code"], "what": what,
        "file": name} for key, name, _, what in COMMANDS}
    answers = {key: r["output"] for key, r in results.items() if r and r["exit_code"] == 0}

    def parsed(key, parse, *more):
        return parse(answers[key], *more) if answers.get(key) else None

    doc["cpu"] = parsed("lscpu", parse_colon_lines)
    doc["gpu"] = parsed("nvidia-smi", nvidia_summary)
    if doc["gpu"] is not None and answers.get("nvidia-smi-xml"):
        doc["gpu"]["devices"] = nvidia_devices(answers["nvidia-smi-xml"])
    doc["interconnect"] = {"ibverbs": parsed("ibv_devinfo", _ibv_devices),
                           "libfabric_providers": parsed("fi_info", _fi_providers),
                           "ucx": parsed("ucx_info", _ucx_summary, answers.get("ucx_info-devices"))}

    with contextlib.suppress(OSError), open("/proc/meminfo", errors="replace") as f:
        files["meminfo.txt"] = f.read()
    doc["memory"] = meminfo(files["meminfo.txt"]) if "meminfo.txt" in files else None

    doc["compilers"] = {name: r and {
        "argv": r["argv"], "exit_code": r["exit_code"],
        "version": version_line(r["output"]) if r["exit_code"] == 0 else None}
        for name, r in found.items()}
    if any(found.values()):
        files["compilers.txt"] = "".join(f"$ {' '.join(r['argv'])}\n{r['output']}\n"
                                         for r in found.values() if r)

    doc["modules"] = modules = {  # from the variables Environment Modules and Lmod both set
        "loaded": [m for m in environ.get("LOADEDMODULES", "").split(":") if m],
        "files": [m for m in environ.get("_LMFILES_", "").split(":") if m],
        "system": "lmod" if "LMOD_VERSION" in environ else
        ("environment-modules" if "MODULESHOME" in environ else None)}
    files["modules.txt"] = "".join(f"{m}\n" for m in modules["loaded"]) or "(no modules loaded)\n"
    scheduler, job_id = next(((s, environ[v]) for s, v in JOB_IDS if v in environ), (None, None))
    variables = {k: v for k, v in sorted(environ.items()) if k.startswith(SCHEDULER_PREFIXES)}
    doc["scheduler"] = {"scheduler": scheduler, "job_id": job_id, "variables": variables}
    doc["runtime_variables"] = {k: v for k, v in sorted(environ.items())
                                if k.startswith(RUNTIME_PREFIXES)}
    files["scheduler-environment.txt"] = "".join(
        f"{k}={v}\n" for k, v in variables.items()) or "(no batch job)\n"
    files["environment.json"] = json.dumps(doc, indent=2) + "\n"
    return doc, files


def nvidia_summary(text):
    """Product names, driver and CUDA versions from `nvidia-smi -q`."""
    def values(key):
        return re.findall(rf"^\s*{key}\s*:\s*(.*?)\s*$", text, re.M)

    gpus = values("Product Name")
    return {"count": len(gpus), "products": gpus,
            "driver_version": (values("Driver Version") or [None])[-1],
            "cuda_version": (values("CUDA Version") or [None])[-1]}


def nvidia_devices(text):
    """Per GPU of `nvidia-smi -q -x`: clocks, now and most (MHz), power limits (W); [] if bad."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return []

    def number(gpu, path):
        m = re.match(r"\s*([\d.]+)", gpu.findtext(path) or "")
        return float(m.group(1)) if m else None

    devices = []
    for gpu in root.findall("gpu"):
        device = {"pci_bus_id": gpu.get("id"), "product": gpu.findtext("product_name")}
        for kind in ("clocks", "max_clocks"):
            for clock in ("graphics_clock", "sm_clock", "mem_clock"):
                device[f"{kind}.{clock}_MHz"] = number(gpu, f"{kind}/{clock}")
        # Newer drivers name the section gpu_power_readings, older power_readings.
        section = "gpu_power_readings" if gpu.find("gpu_power_readings") is not None \
            else "power_readings"
        for limit in ("current_power_limit", "enforced_power_limit", "default_power_limit",
                      "max_power_limit", "power_limit"):
            value = number(gpu, f"{section}/{limit}")
            if value is not None:
                device[f"{limit}_W"] = value
        devices.append(device)
    return devices


def _ibv_devices(text):
    """Adapters from `ibv_devinfo -v`: firmware; each port's state, link layer, width, speed."""
    devices = []
    for line in text.splitlines():
        key, sep, value = (part.strip() for part in line.partition(":"))
        if sep and key == "hca_id":
            devices.append({"hca_id": value, "ports": []})
        elif not sep or not devices:
            continue
        elif key in ("fw_ver", "board_id", "transport") and not devices[-1]["ports"]:
            devices[-1][key] = value
        elif key == "port":
            devices[-1]["ports"].append({"port": value})
        elif key in ("state", "link_layer", "active_width", "active_speed", "active_mtu") \
                and devices[-1]["ports"]:
            devices[-1]["ports"][-1][key] = value
    return devices


def _fi_providers(text):
    """The providers `fi_info` lists, in order, once each."""
    return list(dict.fromkeys(re.findall(r"^provider:\s*(\S+)", text, re.MULTILINE)))


def _ucx_summary(version_text, devices_text):
    """UCX's version (`ucx_info -v`) and its transport/device pairs (`-d`)."""
    m = re.search(r"^#\s*(?:Library version:|Version)\s*(\S+)", version_text, re.MULTILINE)
    pairs, transport = [], None
    for line in (devices_text or "").splitlines():
        t = re.match(r"^#\s*(Transport|Device):\s*(\S+)", line)
        if t and t.group(1) == "Transport":
            transport = t.group(2)
        elif t and transport:
            pairs.append(f"{transport}/{t.group(2)}")
    return {"version": m.group(1) if m else None,
            "transports": list(dict.fromkeys(pairs)) if devices_text is not None else None}
