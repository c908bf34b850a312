"""Job scripts for Slurm, PBS and the local scheduler (`karma-batch submit` runs them here);
submitting them and asking how they do. One MPI rank per GPU: Slurm gets --gpus-per-task; under
PBS, or mpirun, every rank sees the node's GPUs and karma gives local rank k device k % count."""

import re
import shlex
import subprocess

from karma_tools.core import ToolError, __version__

RESULT_NAME = "karma-{app}.json"
EXIT_CODE_FILE = "exit_code"
# The local scheduler's log of a job, as Slurm's job-<id>.out and PBS's job.out.
LOCAL_LOG = "job.out"
# What a reference program (BabelStream) printed, read into RESULT_NAME.
REFERENCE_OUTPUT = "reference.out"
# What a job script prints, exiting 127, where its program is not there (status shows it).
NOT_FOUND = "karma-batch job: command not found: "
NOT_FOUND_CODE = 127
# Exit codes 128 + N: stopped by signal N (the job script's trap writes 143 or 130).
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM"}
PENDING, RUNNING, FINISHED, UNKNOWN = "pending", "running", "finished", "unknown"


def stopped_by(code):
    """The signal an exit code says stopped the job ("SIGTERM", "signal 6"), or None."""
    return _SIGNALS.get(code - 128, f"signal {code - 128}") if 128 < code < 160 else None


def exit_code_of(data):
    """The exit code an exit_code file's bytes hold; None if empty or cut."""
    try:
        return int(data.decode("utf-8", "replace").strip())
    except ValueError:
        return None


def not_found(logs):
    """The program a job's logs (texts) say was not there (NOT_FOUND), or None."""
    found = (re.search("^" + re.escape(NOT_FOUND) + "(.+)$", text, re.M) for text in logs)
    return next((m.group(1) for m in found if m), None)


def _openmpi_words(job, command="mpiexec"):
    """Open MPI: --map-by ppr (no --ppn), PE= cpus_per_rank cores; one unbound rank: neither.
    Several ranks without cpus_per_rank share the node's cores unbound, as under MPICH: Open
    MPI's default binds each of two ranks to one core, where their host threads then queue."""
    ppr = f" --map-by ppr:{job.ranks_per_node}:node"
    if job.cpus_per_rank:
        return f"{command} -n {job.ranks}{ppr}:PE={job.cpus_per_rank} --bind-to core"
    return f"{command} -n {job.ranks}" + f"{ppr} --bind-to none" * (job.ranks > 1)


def _mpich_words(job):
    """MPICH's Hydra: -ppn, each rank bound to cpus_per_rank cores."""
    return f"mpiexec -n {job.ranks}" + f" -ppn {job.ranks_per_node}" * (job.ranks > 1) + \
        f" -bind-to core:{job.cpus_per_rank}" * bool(job.cpus_per_rank)


def _srun_words(job):
    # srun inherits no --cpus-per-task from sbatch (Slurm 22.05 on).
    return f"srun --nodes={job.nodes} --ntasks={job.ranks} " \
        f"--ntasks-per-node={job.ranks_per_node}" + \
        f" --gpus-per-task={job.gpus_per_rank}" * bool(job.gpus_per_rank) + \
        f" --cpus-per-task={job.cpus_per_rank} --cpu-bind=cores" * bool(job.cpus_per_rank)


AUTO = "$karma_launch"


def launcher_command(job, scheduler):
    """The job's MPI launcher words; AUTO where the script picks them (auto_lines)."""
    launcher = job.launcher or "auto"
    if launcher == "auto":
        if scheduler == "local" and job.ranks == 1:
            return ""  # one rank on this node runs bare
        return _srun_words(job) if scheduler == "slurm" else AUTO
    words = {"none": "", "srun": _srun_words(job), "mpiexec-openmpi": _openmpi_words(job),
             "mpirun": _openmpi_words(job, "mpirun"),  # Open MPI's
             "mpiexec-mpich": _mpich_words(job),
             # Hydra-like: Cray PALS, Intel MPI
             "mpiexec": f"mpiexec -n {job.ranks}"
             + f" --ppn {job.ranks_per_node}" * (job.ranks > 1)}
    if launcher in words:
        return words[launcher]
    return launcher.format(nodes=job.nodes, ranks=job.ranks, ranks_per_node=job.ranks_per_node,
                           gpus_per_rank=job.gpus_per_rank, cpus_per_rank=job.cpus_per_rank or 1)


def auto_lines(job):
    """Shell lines setting karma_launch to the mpiexec words of the executable's MPI."""
    return [
        "# launcher auto: mpiexec with the options of the MPI that the executable is linked",
        "# with (Open MPI: libmpi.so.40; MPICH, Intel MPI: libmpich, libmpi.so.12), else of",
        "# the mpiexec in PATH.",
        f'karma_mpi=$(ldd "$(command -v {shlex.quote(job.executable)})" 2>/dev/null)',
        'case "$karma_mpi" in',
        "  *libmpi.so.40*|*libmpich*|*libmpi.so.12*) ;;",
        '  *) karma_mpi=$(mpiexec --version 2>&1) ;;',
        "esac",
        'case "$karma_mpi" in',
        f'  *libmpi.so.40*|*"Open MPI"*|*OpenRTE*) karma_launch="{_openmpi_words(job)}" ;;',
        f'  *) karma_launch="{_mpich_words(job)}" ;;',
        "esac",
    ]


def _header_slurm(job, campaign):
    slurm = campaign.slurm
    lines = [f"--job-name={campaign.name}.{job.name}", f"--nodes={job.nodes}",
             f"--ntasks-per-node={job.ranks_per_node}"] + \
        [f"--gpus-per-task={job.gpus_per_rank}"] * bool(job.gpus_per_rank) + \
        [f"--cpus-per-task={job.cpus_per_rank}"] * bool(job.cpus_per_rank) + \
        [f"--time={job.time}",
         # Slurm opens this file when the job starts: `submit` creates the directory.
         f"--output={job.results_dir}/job-%j.out"] + \
        [f"--{key}={slurm[key]}" for key in ("partition", "account", "qos", "constraint")
         if slurm.get(key)] + \
        ["--exclusive"] * bool(campaign.exclusive)  # a measurement has the node to itself
    return [f"#SBATCH {line}" for line in lines + slurm.get("extra", [])]


def _header_pbs(job, campaign):
    pbs = campaign.pbs
    name = f"{campaign.name}.{job.name}"
    cpus = job.ranks_per_node * (job.cpus_per_rank or 1)
    gpus = job.ranks_per_node * job.gpus_per_rank
    if pbs.get("flavor") == "torque":
        # Torque limits job names to 15 characters; the directory keeps the full name.
        lines = [f"-N {name[:15]}", f"-l nodes={job.nodes}:ppn={cpus}"
                 + (f":gpus={gpus}" if gpus else "")] + \
            ["-l naccesspolicy=singlejob"] * bool(campaign.exclusive)
    else:
        place = pbs.get("place", "scatter")
        if campaign.exclusive and "excl" not in place.split(":"):
            place += ":excl"  # a measurement has its nodes to itself
        lines = [f"-N {name[:230]}", f"-l select={job.nodes}:ncpus={cpus}:mpiprocs="
                 f"{job.ranks_per_node}" + (f":ngpus={gpus}" if gpus else ""), f"-l place={place}"]
    lines += [f"-l walltime={job.time}"] + [f"{flag} {pbs[key]}" for flag, key in (
        ("-q", "queue"), ("-A", "account")) if pbs.get(key)] + \
        ["-j oe", f"-o {job.results_dir}/job.out"] + pbs.get("extra", [])
    return [f"#PBS {line}" for line in lines]


def _header_local(job, campaign):
    return [f"# Run by `karma-batch submit` on this node (scheduler local); its output goes "
            f"to {job.results_dir}/{LOCAL_LOG}."]


HEADERS = {"slurm": _header_slurm, "pbs": _header_pbs, "local": _header_local}


def render(job, campaign, envcapture, batch_tool):
    """`job`'s script; `batch_tool`: the karma-batch that reads a reference run's output."""
    q, scheduler = shlex.quote, campaign.scheduler
    out = ["#!/bin/bash", *HEADERS[scheduler](job, campaign)]
    gpu_words = f", {job.gpus_per_rank} GPU(s) per rank" if job.gpus_per_rank else ""
    out += [
        "",
        f"# karma-batch {__version__}: job {job.name} of campaign {campaign.name}",
        f"#   karma-{job.app} on {job.nodes} node(s) x {job.ranks_per_node} rank(s)"
        f" = {job.ranks} rank(s){gpu_words}",
        f"#   campaign file {campaign.path} (sha256 {campaign.sha256[:16]})",
        "# Generated: edit the campaign and run karma-batch again rather than this file.",
        "",
        # No `set -u`: some sites' `module` functions read unset variables.
        "set -o pipefail",
        f"results={q(job.results_dir)}",
        'mkdir -p "$results" && cd "$results" || exit 3',
        "# exit_code tells `karma-batch status` how the job ended (written last, atomically).",
        'rm -f "$results/exit_code"',
        "finish() {",
        '  printf \'%s\\n\' "$1" >"$results/exit_code.tmp" && mv -f "$results/exit_code.tmp" '
        '"$results/exit_code"',
        '  exit "$1"',
        "}",
        "trap 'finish 143' TERM",
        "trap 'finish 130' INT",
        "",
    ]
    env = job.environment
    with_env = env.setup or env.modules or env.variables or job.cpus_per_rank
    out += ["# Environment (from the campaign)."] * bool(with_env) + env.setup
    out += [f"module load {q(module)} || {{ echo 'karma-batch job: module load {module} "
            "failed' >&2; finish 3; }" for module in env.modules]
    if job.cpus_per_rank:
        # A thread per core given, each on its own (unless the campaign says).
        binding = {"OMP_NUM_THREADS": str(job.cpus_per_rank), "OMP_PROC_BIND": "close",
                   "OMP_PLACES": "cores"}
        if "OMP_PROC_BIND" in env.variables:
            del binding["OMP_PLACES"]  # its binding, its places
        out.extend(f"export {k}={v}" for k, v in binding.items() if k not in env.variables)
    # In double quotes, $VAR still expands, nothing else does.
    out += [f'export {name}="' + re.sub(r'(["\\`])', r"\\\1", value) + '"'
            for name, value in env.variables.items()]
    out += [""] * bool(with_env)

    sets = [w for o in job.overrides for w in ("--set", o)]
    output = "$results/" + RESULT_NAME.format(app=job.app)
    command = [job.executable, job.deck, *sets, *job.args, "--output", output]
    words = " ".join(q(w) if not w.startswith("$results/") else f'"{w}"' for w in command)
    launcher = launcher_command(job, scheduler)
    run_lines = (auto_lines(job) if launcher == AUTO else []) + \
        [(launcher + " " if launcher else "") + words, "code=$?"]
    if job.reference:
        # The reference runs as one process; its output becomes karma results.
        ref = [job.executable] + list(job.args)
        read = [batch_tool, "reference-result", job.reference,
                "--input", "$results/" + REFERENCE_OUTPUT, "--exit-status", "$code",
                "--app", job.app, "--deck", job.deck,
                # Results of a run on the host must not pair with a GPU's.
                "--device", "gpu" if job.gpus_per_rank else "host", *sets,
                "--command", shlex.join(ref), "--date", "$started", "--host", "$(hostname)",
                "--output", output]
        run_lines = [
            "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)",
            shlex.join(ref) + f' >"$results/{REFERENCE_OUTPUT}" 2>&1',
            "code=$?",
            " ".join(f'"{w}"' if w.startswith("$") else q(w) for w in read),
            "code=$?",
        ]
    out += [
        "# What a procurement disclosure needs about the node (the job's first node).",
        f"{q(envcapture)} --output \"$results/environment\" --quiet ||",
        "  echo 'karma-batch job: karma-envcapture failed; the run goes on' >&2",
        "",
        f'echo "karma-batch job {job.name}: start $(date -u +%Y-%m-%dT%H:%M:%SZ) on '
        '$(hostname)"',
        "# Without its program the job ends here, saying so (status shows it).",
        f"command -v {q(job.executable)} >/dev/null || "
        f"{{ echo {q(NOT_FOUND + job.executable)} >&2; finish {NOT_FOUND_CODE}; }}",
        *run_lines,
        f'echo "karma-batch job {job.name}: exit code $code"',
        'finish "$code"',
        "",
    ]
    return "\n".join(out)


_SLURM_STATES = {**dict.fromkeys(("PENDING", "REQUEUED", "REQUEUE_HOLD"), PENDING),
                 **dict.fromkeys(("CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "RESIZING",
                                  "STAGE_OUT", "SIGNALING", "STOPPED"), RUNNING)}
_PBS_STATES = {**dict.fromkeys("QHWT", PENDING), **dict.fromkeys("SREB", RUNNING),
               **dict.fromkeys("XFC", FINISHED)}


SCHEDULER_ANSWER_S = 60  # how long sbatch, squeue, qsub, ... may take to answer


def _run(argv, check=True):
    """argv's CompletedProcess; ToolError (3) where it cannot run or (check) fails."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=SCHEDULER_ANSWER_S,
                             stdin=subprocess.DEVNULL)
    except FileNotFoundError:  # Slurm's commands begin with s (scancel too), PBS's with q
        raise ToolError(f"{argv[0]} not found: is this a login node of a cluster with "
                        f"{'Slurm' if argv[0].startswith('s') else 'PBS'}?", 3) from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"{' '.join(argv)} did not answer within {SCHEDULER_ANSWER_S} s",
                        3) from None
    if check and out.returncode != 0:
        raise ToolError(f"{' '.join(argv)} failed: {out.stderr.strip() or out.stdout.strip()}", 3)
    return out


def submit(scheduler, script):
    """Submits a job script; returns the job id."""
    argv = ["sbatch", "--parsable", script] if scheduler == "slurm" else ["qsub", script]
    return _run(argv).stdout.strip().split(";")[0]


def cancel(scheduler, job_ids):
    """Cancels jobs (scancel or qdel)."""
    _run(["scancel" if scheduler == "slurm" else "qdel", *job_ids])


def states(scheduler, job_ids):
    """{job id: PENDING|RUNNING|FINISHED|UNKNOWN (forgotten: its files tell)}; one id or more."""
    result = dict.fromkeys(job_ids, UNKNOWN)
    if scheduler == "slurm":
        out = _run(["squeue", "--noheader", "--states=all", "--format=%i|%T",
                    "--jobs=" + ",".join(job_ids)], check=False)
        for line in out.stdout.splitlines():
            job, _, state = line.strip().partition("|")
            if job in result:
                result[job] = _SLURM_STATES.get(state.strip(), FINISHED)
        return result
    out = _run(["qstat", "-x", *job_ids], check=False)
    if out.returncode != 0 and not out.stdout:
        out = _run(["qstat", *job_ids], check=False)  # Torque has no -x
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[-2] in _PBS_STATES:
            for job in job_ids:
                if fields[0].split(".")[0] == job.split(".")[0]:  # 123 or 123.server
                    result[job] = _PBS_STATES[fields[-2]]
    return result
