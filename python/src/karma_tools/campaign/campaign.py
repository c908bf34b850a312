"""Campaign files: what to run, where and how often; read strictly, expanded
into one Job per batch job.

A campaign is YAML (read by yamlread). Every mistake is reported as
"FILE:LINE:COL: KEY: message" and nothing is generated. The keys are listed in
CAMPAIGN_HELP, which `karma-batch --help-campaign` prints.
"""

import hashlib
import os
import types

from karma_tools.core import CHECKOUT, ToolError, read_input_file
from karma_tools import schemas
from karma_tools import yamlread
from karma_tools.campaign.compare_section import Vocabulary, check_comparisons
from karma_tools.campaign.deck import KeyLister
from karma_tools.campaign.format import Checker, conform, strings
from karma_tools.campaign.runs import Programs, environment_of, expand_run, launch

CAMPAIGN_HELP = """\
A campaign file (YAML) lists runs of karma mini-apps; karma-batch writes one
job script per run and per point of its sweeps.

  name: h200-eval                 # campaign name: letters, digits, '.', '_', '-'
  scheduler: slurm                # slurm (sbatch), pbs (qsub), or local: `submit`
                                  # runs the jobs here, one after another, one node;
                                  # --scheduler overrides
  variables:                      # {NAME} in deck, executable, args and environment
    babelstream: cuda-stream      # variables; each can be set with
                                  # `generate --var NAME=VALUE`
  round_order: interleaved        # jobs run (are submitted) round by round: round r
                                  # runs every run's job before round r+1 starts;
                                  # alternate: even rounds in reverse order
  results_dir: results            # one subdirectory per job (default: OUT/results)
  bin_dir: /opt/karma/bin         # where karma-<app> is (default: beside karma-batch,
                                  # as in a build's build/<preset>/bin or PREFIX/bin,
                                  # else in PATH); --bin-dir overrides
  time: "00:30:00"                # wall-time limit per job (HH:MM:SS, or minutes)
  ranks_per_node: 4               # MPI ranks per node: one per GPU
  gpus_per_rank: 1                # 0 on CPU-only nodes
  cpus_per_rank: 16               # cores per rank: --cpus-per-task (PBS ncpus), bound
                                  # (srun --cpu-bind=cores, mpiexec's options) and
                                  # OMP_NUM_THREADS, OMP_PROC_BIND=close,
                                  # OMP_PLACES=cores; a job without GPUs gets its
                                  # OMP_NUM_THREADS when it gives only that
  launcher: auto                  # auto (default): srun under Slurm, else mpiexec
                                  # with the options of the MPI the executable is
                                  # linked with | srun | mpiexec-openmpi |
                                  # mpiexec-mpich | mpirun (Open MPI) | mpiexec
                                  # (--ppn: Cray PALS, Intel MPI) | none (1 rank) |
                                  # a template with {nodes} {ranks} {ranks_per_node}
                                  # {gpus_per_rank} {cpus_per_rank}
  exclusive: true                 # whole nodes for every job (default true; false
                                  # shares them)
  environment:                    # lines every job runs before karma, in this order:
    setup: ["source /opt/spack/share/spack/setup-env.sh"]   # shell lines (or a | block)
    modules: [gcc/12.2, cuda/12.4, openmpi/4.1]            # module load ...
    variables: {OMP_PROC_BIND: spread, OMP_PLACES: threads} # export NAME="value"
                                  # (none that lets MPI run as root: *RUN_AS_ROOT*)
  slurm: {partition: gpu, account: abc123, qos: normal, constraint: h200,
          exclusive: true, extra: ["--mail-type=NONE"]}   # exclusive: as above
  pbs: {flavor: pro, queue: gpu, account: abc123, place: "scatter",
        extra: ["-l filesystems=home"]}   # flavor: pro (select=) or torque (nodes=)
  runs:
    - name: stream-scaling          # unique; names the jobs and their directories
      app: stream                   # runs karma-stream; one of stream, hexgrad, matvec,
                                    # mgs, contact (another name needs `executable`)
      deck: "{inputs}/stream/default.yaml"   # {inputs}: the suite's decks; other
                                    # relative paths are relative to this file
      set: ["stream.shape=[2^28]"]  # --set overrides (a list, or a key: value map)
      sweep:                        # one job per value (per combination)
        run.repetitions: [50, 100]
      nodes: [1, 2, 4, 8]           # one job per node count
      scaling: [weak, strong]       # one job per scaling: sets scaling_key per job
      scaling_key: stream.scaling   # (the default: <app>.scaling)
      repeat: 3                     # identical jobs per point (rounds)
      processes: 1                  # identical jobs per point within a round, each a
                                    # process of its own; a comparison then says how
                                    # each side's figures of a round combine (per_round)
      args: ["--kokkos-print-configuration"]   # extra mini-app arguments; {KEY} and
                                    # {KEY[i]} give this job's set/sweep value of a
                                    # deck key (2^25 written out: 33554432)
      reference: babelstream        # an external program instead of karma-<app>:
                                    # `executable` with `args`, its output read into
                                    # karma-<app>.json (implementation babelstream),
                                    # deck and set/sweep describing what it ran
      # per run, these override the campaign's: ranks_per_node, gpus_per_rank,
      # cpus_per_rank, time, launcher, executable, environment (modules and
      # setup lines are added after the campaign's, variables override)

  compare:                          # ratio tables of karma-compare --campaign and
    - name: karma-vs-babelstream    # karma-report, within this campaign
      metric: bandwidth_GBps.best   # a kernel field (default fom.value)
      higher_is_better: true        # (default: the FOM's; false for time_s.*)
      numerator: {implementation: kokkos}       # selections: run, implementation,
      denominator: {implementation: babelstream}  # variant, kernel (globs or lists),
                                    # deck: {key: value}
      match: [stream.shape, stream.precision]   # deck keys both sides share
      label: []                     # deck keys that tell numerator rows apart
      same_variant: true            # pair kernels of the same variant (copy/copy)
      same_kernel: false            # pair kernels of the same name (one build
                                    # beside another, whose results may differ
                                    # in schema_version)
      per_round: best               # a side's results of one round (processes): best
                                    # or median of them, before the ratio
      aggregate: [worst, median]    # over rounds (default [worst]): worst, best, median
                                    # generate refuses a selection or key that can
                                    # match nothing (a run, implementation, variant,
                                    # kernel or deck key these runs do not have)

Weak scaling keeps the deck's size per rank; strong scaling keeps it global
and splits it over the ranks: the mini-app reads <app>.scaling (change the key
with scaling_key). Integers, lists and strings in set/sweep are passed as
written (2^28 stays 2^28). Every run's program must be here when
`generate` runs: one that is not (karma-<app> in none of the places above, an
`executable` path that is not there, a bare name in neither PATH nor the PATH
the run's environment exports) stops `generate` (exit 2, nothing written),
naming the campaign line and what it looked for where. karma-batch checks
every set/sweep key and value (type, range, choices, list length) against the
JSON Schema of its deck (karma-<app> --help=json, shipped with the tools; a
run's own `executable` is asked); where that fails, it says so, and a wrong
value stops the job at its start (exit 2). Counts (nodes,
ranks_per_node, gpus_per_rank, cpus_per_rank, repeat, processes) are at most 2^31-1, and
a campaign at most 10000 jobs. The format is also a JSON Schema (draft
2020-12), for editors and other tools: karma_tools/schemas/campaign.schema.json,
installed in share/karma/schemas.

The YAML (read with ruamel.yaml): block and flow mappings and lists, quoted
and plain scalars, '|' blocks, comments. Duplicate keys, anchors, aliases,
tags, '>' blocks, a value that runs over several lines and several documents
are refused with their position. Plain values are read as YAML 1.2 reads
them: on, off, yes and no are strings (run.energy: on is passed as 'on'),
00:30:00 is a string, and 010 is no integer (octal or decimal, by version).
"""


def tools_dir():
    """The directory of the karma-* entry point that is running (PREFIX/bin
    when installed: the link there, not the environment it points into)."""
    import sys

    return os.path.dirname(os.path.abspath(sys.argv[0]))


def inputs_dir(tool_dir):
    """The suite's decks: $KARMA_INPUTS, the installed share/karma/inputs, or
    the inputs/ of the checkout this package is in (python/src/karma_tools)."""
    candidates = [os.environ.get("KARMA_INPUTS", ""),
                  os.path.join(tool_dir, "..", "share", "karma", "inputs"),
                  os.path.join(CHECKOUT, "inputs")]
    for c in candidates:
        if c and os.path.isdir(c):
            return os.path.realpath(c)
    return None


def load(path, out_dir=None, bin_dir=None, check_keys=True, tool_dir=None, scheduler=None,
         variables=None, executables=False):
    """The campaign at `path`, checked and expanded into jobs. `out_dir` is
    where karma-batch writes (the default results_dir is under it); `bin_dir`,
    `scheduler` and `variables` ({name: value}) override the campaign's.
    `executables` (generate): every run's program must be here (Programs)."""
    if not os.path.lexists(path):
        raise ToolError(f"{path}: no such campaign file", 2)
    tool_dir = tool_dir or tools_dir()
    data = read_input_file(path, "campaign file")
    try:
        root = yamlread.parse(data.decode("utf-8"), path)
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}:1:1: not UTF-8 text ({e.reason})", 2) from None
    except yamlread.YamlError as e:
        raise ToolError(f"{e.source}:{e.line}:{e.col}: YAML syntax error: {e.message}", 2) \
            from None
    check = Checker(path)
    conform(check, root, schemas.load("campaign.schema.json"))
    base = os.path.dirname(os.path.abspath(path))
    top = root.value

    name = top["name"].text()
    scheduler, notes = _scheduler(top, scheduler, path)
    names = _variables(top.get("variables"), variables or {}, path)
    round_order = top["round_order"].value if "round_order" in top else "interleaved"

    def where(key, default):
        if key not in top or top[key].value is None:
            return default
        return os.path.normpath(os.path.join(base, os.path.expanduser(top[key].text())))

    out_dir = os.path.abspath(out_dir) if out_dir else None
    results_dir = where("results_dir", os.path.join(out_dir, "results") if out_dir else
                        os.path.join(base, "results", name))
    programs = Programs(os.path.abspath(bin_dir) if bin_dir else where("bin_dir", None),
                        "--bin-dir" if bin_dir else "the campaign's bin_dir", tool_dir,
                        executables)

    defaults = launch(top, {"ranks_per_node": [1], "gpus_per_rank": 1, "cpus_per_rank": None,
                            "time": "00:30:00", "launcher": None})
    environment = environment_of(check, top.get("environment"), "environment", names)
    exclusive = top["exclusive"].value if "exclusive" in top else True
    slurm, pbs = _batch_options(top, "slurm"), _batch_options(top, "pbs")

    inputs = inputs_dir(tool_dir)
    lister = KeyLister()
    jobs, run_names, job_names = [], {}, {}
    for index, run_node in enumerate(top["runs"].value):
        jobs.extend(expand_run(check, run_node, f"runs[{index}]", base, inputs, results_dir,
                               programs, defaults, environment, run_names, job_names,
                               lister if check_keys else None, names, scheduler))
    several = sorted({j.run for j in jobs if j.process})
    compare = []
    if "compare" in top:
        vocabulary = Vocabulary(jobs, lister if check_keys else None)
        compare = check_comparisons(check, top["compare"], vocabulary, several)
    return types.SimpleNamespace(
        name=name, path=os.path.abspath(path), sha256=hashlib.sha256(data).hexdigest(),
        scheduler=scheduler, results_dir=results_dir, slurm=slurm, pbs=pbs,
        exclusive=slurm.get("exclusive", exclusive) if scheduler == "slurm" else exclusive,
        jobs=jobs, warnings=notes + lister.warnings, variables=names, round_order=round_order,
        compare=compare)


def _batch_options(top, scheduler):
    """The campaign's `slurm:` or `pbs:` (scheduler) options."""
    out = {} if scheduler == "slurm" else {"flavor": "pro"}
    for key, node in (top[scheduler].value if scheduler in top else {}).items():
        out[key] = node.value if key == "exclusive" else strings(node) if key == "extra" \
            else node.text()
    return out


def _scheduler(top, scheduler, path):
    """(scheduler, [warning]): the campaign's, or --scheduler's, which warns
    where it overrides another."""
    written = top["scheduler"].value if "scheduler" in top else None
    if scheduler is None or written in (None, scheduler):
        return scheduler or written or "slurm", []
    return scheduler, [f"--scheduler {scheduler} overrides the campaign's scheduler: "
                       f"{written} ({path}:{top['scheduler'].line}); check that its "
                       f"launcher, node counts and environment suit {scheduler}"]


def _variables(node, overrides, path):
    """{name: value} of `variables:`, with `--var NAME=VALUE` applied."""
    names = {} if node is None or node.value is None else {
        name: value.text() for name, value in node.value.items()}
    for name, value in overrides.items():
        if name not in names:
            known = ", ".join(names) or "none"
            raise ToolError(f"--var {name}: {path} has no such variable (its variables: "
                            f"{known})", 2)
        names[name] = value
    return names
