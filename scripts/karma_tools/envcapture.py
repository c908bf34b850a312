"""karma-envcapture: what a procurement disclosure needs about the node a
run used, written beside its results.

OUT/environment.json holds everything in one document; OUT/*.txt keep each
command's own output for people (lscpu.txt, meminfo.txt, nvidia-smi.txt, ...).
A command that is missing or fails is recorded as such, never fatal.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys

from . import ToolError, __version__, main_wrapper

# Variables of the batch systems karma knows (as the results' `job` field).
SCHEDULER_PREFIXES = ("SLURM_", "SBATCH_", "SRUN_", "PBS_", "LSB_", "LSF_", "FLUX_", "COBALT_",
                      "SGE_", "PALS_")
# Variables that change how a run behaves.
RUNTIME_PREFIXES = ("OMP_", "KOKKOS_", "KARMA_", "CUDA_", "NCCL_", "OMPI_", "PMIX_", "UCX_",
                    "MPICH_", "I_MPI_", "FI_", "HWLOC_", "GOMP_", "KMP_", "MV2_", "CRAY_")
SCHEDULER_ONLY = ("PBS_NODEFILE",)

# (file name, argv alternatives, what); the first alternative that exists runs.
COMMANDS = [
    ("lscpu.txt", [["lscpu"]], "CPUs, caches, NUMA"),
    ("nvidia-smi.txt", [["nvidia-smi", "-q"]], "NVIDIA GPUs, driver, clocks, ECC"),
    ("nvidia-smi-topo.txt", [["nvidia-smi", "topo", "-m"]], "GPU/NIC/CPU affinity"),
    ("rocm-smi.txt", [["rocm-smi", "--showallinfo"]], "AMD GPUs"),
    ("numactl.txt", [["numactl", "--hardware"]], "NUMA nodes and distances"),
    ("uname.txt", [["uname", "-a"]], "kernel"),
]
COMPILERS = [
    ("c++", [[os.environ.get("CXX", "c++"), "--version"]]),
    ("cc", [[os.environ.get("CC", "cc"), "--version"]]),
    ("g++", [["g++", "--version"]]),
    ("clang++", [["clang++", "--version"]]),
    ("nvcc", [["nvcc", "--version"], ["/usr/local/cuda/bin/nvcc", "--version"]]),
    ("hipcc", [["hipcc", "--version"]]),
    ("icpx", [["icpx", "--version"]]),
    ("mpicxx", [["mpicxx", "--version"]]),
    ("mpirun", [["mpirun", "--version"]]),
    ("srun", [["srun", "--version"]]),
    ("cmake", [["cmake", "--version"]]),
]


def run_command(alternatives, timeout):
    """{argv, exit_code, output} of the first alternative found, or None."""
    for argv in alternatives:
        exe = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
        if not exe or not os.access(exe, os.X_OK):
            continue
        try:
            out = subprocess.run([exe] + argv[1:], capture_output=True, text=True,
                                 timeout=timeout, stdin=subprocess.DEVNULL, errors="replace")
            return {"argv": [exe] + argv[1:], "exit_code": out.returncode,
                    "output": out.stdout + (out.stderr if out.returncode else "")}
        except subprocess.TimeoutExpired:
            return {"argv": [exe] + argv[1:], "exit_code": None,
                    "output": f"(no answer within {timeout} s)"}
        except OSError as e:
            return {"argv": [exe] + argv[1:], "exit_code": None, "output": f"({e.strerror})"}
    return None


def parse_colon_lines(text):
    """'Key:   value' lines (lscpu, /proc/meminfo) as a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def meminfo(path="/proc/meminfo"):
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None, None
    values = {}
    for key, value in parse_colon_lines(text).items():
        m = re.match(r"^(\d+)\s*kB$", value)
        values[key] = int(m.group(1)) * 1024 if m else value
    return text, values


def loaded_modules(environ):
    """Modules from the variables Environment Modules and Lmod both set."""
    loaded = [m for m in environ.get("LOADEDMODULES", "").split(":") if m]
    files = [m for m in environ.get("_LMFILES_", "").split(":") if m]
    return {"loaded": loaded, "files": files,
            "system": "lmod" if "LMOD_VERSION" in environ else
            ("environment-modules" if "MODULESHOME" in environ else None)}


def scheduler_environment(environ):
    variables = {k: v for k, v in sorted(environ.items())
                 if k.startswith(SCHEDULER_PREFIXES) or k in SCHEDULER_ONLY}
    name = job_id = None
    for scheduler, variable in (("slurm", "SLURM_JOB_ID"), ("pbs", "PBS_JOBID"),
                                ("lsf", "LSB_JOBID"), ("flux", "FLUX_JOB_ID"),
                                ("cobalt", "COBALT_JOBID")):
        if variable in environ:
            name, job_id = scheduler, environ[variable]
            break
    return {"scheduler": name, "job_id": job_id, "variables": variables}


def _valid_text(text):
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def version_line(text):
    """The first line with a version number (nvcc's is its fourth)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in lines:
        if re.search(r"\d+\.\d+", line):
            return line
    return lines[0] if lines else None


def capture(timeout=20, environ=None):
    """(document, {file name: text}) describing this node."""
    # Bytes that are not UTF-8 (Python keeps them as lone surrogates) become
    # U+FFFD: the JSON and the text files must be valid UTF-8.
    environ = {_valid_text(k): _valid_text(v)
               for k, v in (os.environ if environ is None else environ).items()}
    files = {}
    doc = {
        "karma_environment": 1,
        "karma_version": __version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": socket.gethostname(),
        "platform": {"system": platform.system(), "release": platform.release(),
                     "machine": platform.machine(), "python": platform.python_version()},
    }
    os_release = {}
    try:
        with open("/etc/os-release", errors="replace") as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep:
                    os_release[k] = v.strip('"')
    except OSError:
        pass
    doc["platform"]["os"] = os_release.get("PRETTY_NAME")

    commands = {}
    for name, alternatives, what in COMMANDS:
        result = run_command(alternatives, timeout)
        key = name[:-4]
        commands[key] = None if result is None else {
            "argv": result["argv"], "exit_code": result["exit_code"], "what": what}
        if result is not None:
            files[name] = result["output"]
    doc["commands"] = commands
    lscpu = files.get("lscpu.txt")
    doc["cpu"] = parse_colon_lines(lscpu) if lscpu else None
    smi = files.get("nvidia-smi.txt")
    doc["gpu"] = _nvidia_summary(smi) if smi and commands["nvidia-smi"]["exit_code"] == 0 \
        else None

    text, values = meminfo()
    if text is not None:
        files["meminfo.txt"] = text
    doc["memory"] = values

    compilers = {}
    for name, alternatives in COMPILERS:
        result = run_command(alternatives, timeout)
        compilers[name] = None if result is None else {
            "argv": result["argv"], "exit_code": result["exit_code"],
            "version": version_line(result["output"]) if result["exit_code"] == 0 else None}
        if result is not None:
            files.setdefault("compilers.txt", "")
            files["compilers.txt"] += f"$ {' '.join(result['argv'])}\n{result['output']}\n"
    doc["compilers"] = compilers

    doc["modules"] = loaded_modules(environ)
    files["modules.txt"] = "\n".join(doc["modules"]["loaded"]) + "\n" \
        if doc["modules"]["loaded"] else "(no modules loaded)\n"
    doc["scheduler"] = scheduler_environment(environ)
    doc["runtime_variables"] = {k: v for k, v in sorted(environ.items())
                                if k.startswith(RUNTIME_PREFIXES)}
    files["scheduler-environment.txt"] = "".join(
        f"{k}={v}\n" for k, v in doc["scheduler"]["variables"].items()) or "(no batch job)\n"
    return doc, files


def _nvidia_summary(text):
    """Product names, driver and CUDA versions from `nvidia-smi -q`."""
    gpus, driver, cuda = [], None, None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            continue
        if key == "Driver Version":
            driver = value
        elif key == "CUDA Version":
            cuda = value
        elif key == "Product Name":
            gpus.append(value)
    return {"count": len(gpus), "products": gpus, "driver_version": driver,
            "cuda_version": cuda}


def write(out_dir, doc, files):
    """Writes the capture into out_dir through a temporary sibling directory,
    so out_dir is whole or absent."""
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    staging = os.path.join(parent, f".{os.path.basename(out_dir)}.tmp.{os.getpid()}")
    try:
        os.makedirs(parent, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        for name, text in files.items():
            with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(staging, "environment.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        if os.path.exists(out_dir):
            aside = staging + ".old"
            os.rename(out_dir, aside)
            os.rename(staging, out_dir)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(staging, out_dir)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise ToolError(f"cannot write {out_dir}: {e}", 3) from None


DESCRIPTION = """\
Records what a procurement disclosure needs about this node, beside a run's
results: lscpu, /proc/meminfo, nvidia-smi -q (and topo -m) where present,
numactl, the loaded modules, the batch system's variables (SLURM_*, PBS_*,
...), run-time variables (OMP_*, KOKKOS_*, CUDA_*, MPI's), and the versions of
the compilers, MPI and CMake found in PATH.

Writes OUT/environment.json (everything) and OUT/*.txt (each command's own
output). karma-batch job scripts run it into <results>/environment."""


def main(argv=None):
    p = argparse.ArgumentParser(prog="karma-envcapture", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="exit status: 0 written; 2 bad arguments (nothing "
                                "written); 3 could not write OUT")
    p.add_argument("-o", "--output", default="environment", metavar="OUT",
                   help="directory to write (default: ./environment); replaced if it exists")
    p.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="longest wait for any one command (default 20)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--version", action="version", version=f"karma-envcapture {__version__}")
    args = p.parse_args(argv)
    if not 0 < args.timeout < float("inf"):  # NaN fails this too
        p.error(f"--timeout {args.timeout:g}: expected a number of seconds > 0")

    def run():
        if os.path.lexists(args.output) and not os.path.isdir(args.output):
            raise ToolError(f"{args.output} exists and is not a directory; the capture "
                            "replaces a directory only", 2)
        doc, files = capture(timeout=args.timeout)
        write(args.output, doc, files)
        if not args.quiet:
            found = [k for k, v in doc["commands"].items() if v is not None]
            gpus = doc["gpu"]["count"] if doc["gpu"] else 0
            print(f"karma-envcapture: {args.output}/environment.json ({doc['hostname']}, "
                  f"{gpus} NVIDIA GPU(s); ran {', '.join(found)})")
        return 0

    return main_wrapper("karma-envcapture", run)


if __name__ == "__main__":
    sys.exit(main())
