"""karma-batch: campaign checking, the job scripts it writes (against
expected files), and submit/status/wait against a stand-in scheduler that runs
each job at once (the real Slurm is in test_slurm.py)."""

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

import pytest

from conftest import (DATA, ROOT, TOOLS_BIN, cpu_count, load_json, load_manifest,
                      stand_in_bin, stand_ins, tool, write)

EXAMPLE = os.path.join(DATA, "campaigns", "example.yaml")
EXPECTED = os.path.join(DATA, "expected")
SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")
BIN = stand_in_bin()  # generate's --bin-dir: stand-ins of the mini-apps


def placeholders(out):
    with open(EXAMPLE, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    from karma_tools import __version__

    return {"@OUT@": out, "@CAMPAIGN@": EXAMPLE, "@SHA16@": sha[:16], "@TOOLS@": TOOLS_BIN,
            "@BIN@": BIN,
            "@INPUTS@": os.path.join(ROOT, "inputs"), "@VERSION@": f"karma-batch {__version__}"}


def check_expected(path, name, out):
    """The job script at path against EXPECTED/name, whose absolute paths
    are placeholders. KARMA_UPDATE_EXPECTED=1 rewrites the expected file."""
    with open(path) as f:
        text = f.read()
    generic = text
    for key, value in sorted(placeholders(out).items(), key=lambda kv: -len(kv[1])):
        generic = generic.replace(value, key)
    expected_path = os.path.join(EXPECTED, name)
    if os.environ.get("KARMA_UPDATE_EXPECTED") == "1":
        write(expected_path, generic)
    with open(expected_path) as f:
        assert generic == f.read(), f"{path} differs from {expected_path}"


def generate(campaign, out, *extra):
    """generate with stand-in mini-apps (conftest.stand_ins) as its --bin-dir."""
    return tool("karma-batch", "generate", campaign, "-o", out, "--bin-dir", BIN, *extra)


def test_example_campaign_expands_into_jobs_and_scripts(tmp_path):
    out = str(tmp_path / "out")
    r = generate(EXAMPLE, out)
    assert r.returncode == 0, r.stderr
    manifest = load_manifest(out)
    names = [j["name"] for j in manifest["jobs"]]
    # One entry: 3 node counts x 2 scalings; the other: 3 sizes x 2 rounds.
    assert names == [
        "stream-scaling.weak.n1x4", "stream-scaling.weak.n2x4", "stream-scaling.weak.n4x4",
        "stream-scaling.strong.n1x4", "stream-scaling.strong.n2x4", "stream-scaling.strong.n4x4",
        "stream-sizes.n1x1.shape2p20.r1", "stream-sizes.n1x1.shape2p20.r2",
        "stream-sizes.n1x1.shape2p25.r1", "stream-sizes.n1x1.shape2p25.r2",
        "stream-sizes.n1x1.shape2p28.r1", "stream-sizes.n1x1.shape2p28.r2"]
    strong = manifest["jobs"][4]
    assert strong["overrides"] == ["stream.shape=[2^28]", "run.repetitions=50",
                                   "stream.scaling=strong"]
    assert (strong["nodes"], strong["ranks_per_node"], strong["ranks"]) == (2, 4, 8)
    assert strong["results_dir"] == os.path.join(out, "results", "stream-scaling.strong.n2x4")
    # Stored relative to OUT: the directory can be moved.
    assert load_json(os.path.join(out, "campaign.json"))["jobs"][4]["results_dir"] == \
        os.path.join("results", "stream-scaling.strong.n2x4")
    assert manifest["jobs"][8]["overrides"] == ["stream.shape=[2^25]"]
    assert all(j["job_id"] is None for j in manifest["jobs"])
    for name in names:
        script = os.path.join(out, "jobs", name + ".sbatch")
        assert os.stat(script).st_mode & stat.S_IXUSR
    check_expected(os.path.join(out, "jobs", "stream-scaling.strong.n2x4.sbatch"),
                   "stream-scaling.strong.n2x4.sbatch", out)
    check_expected(os.path.join(out, "jobs", "stream-sizes.n1x1.shape2p25.r2.sbatch"),
                   "stream-sizes.n1x1.shape2p25.r2.sbatch", out)
    assert "karma-batch submit" in r.stdout


@pytest.mark.parametrize("flavor", ["pro", "torque"])
def test_pbs_scripts(tmp_path, flavor):
    campaign = str(tmp_path / "c.yaml")
    with open(EXAMPLE) as f:
        text = f.read()
    if flavor == "torque":
        text = text.replace("pbs:\n  queue: workq", "pbs:\n  flavor: torque\n  queue: workq")
    write(campaign, text)
    out = str(tmp_path / "out")
    r = generate(campaign, out, "--scheduler", "pbs")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "jobs", "stream-scaling.weak.n4x4.pbs")) as f:
        script = f.read()
    if flavor == "pro":
        assert "#PBS -l select=4:ncpus=4:mpiprocs=4:ngpus=4\n" in script
        assert "#PBS -l place=scatter:excl\n" in script  # measurements: whole nodes
        assert "#PBS -N example.stream-scaling.weak.n4x4\n" in script
    else:
        assert "#PBS -l nodes=4:ppn=4:gpus=4\n" in script
        assert "#PBS -N example.stream-\n" in script  # Torque: 15 characters
        assert "#PBS -l naccesspolicy=singlejob\n" in script
    # launcher auto: the MPI the executable is linked with chooses the options.
    for line in ("#PBS -l walltime=00:20:00", "#PBS -q workq", "#PBS -A proj42", "#PBS -j oe",
                 f'karma_mpi=$(ldd "$(command -v {BIN}/karma-stream)" 2>/dev/null)',
                 'karma_launch="mpiexec -n 16 --map-by ppr:4:node --bind-to none"',
                 'karma_launch="mpiexec -n 16 -ppn 4"',
                 f"$karma_launch {BIN}/karma-stream"):
        assert line in script
    assert "--ppn" not in script and "#SBATCH" not in script
    # One rank: no ranks per node to give.
    with open(os.path.join(out, "jobs", "stream-sizes.n1x1.shape2p20.r1.pbs")) as f:
        one = f.read()
    assert 'karma_launch="mpiexec -n 1"' in one and "ppn" not in one.replace("ppn=", "")


def test_launchers_and_cpu_only_jobs(tmp_path):
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: cpu
gpus_per_rank: 0
cpus_per_rank: 8
ranks_per_node: 2
time: 90
runs:
  - name: open-mpi
    app: stream
    deck: {SMALL_DECK}
    launcher: mpirun
  - name: template
    app: stream
    deck: {SMALL_DECK}
    nodes: 3
    launcher: "mpiexec -np {{ranks}} -ppn {{ranks_per_node}} --depth {{cpus_per_rank}}"
  - name: srun
    app: stream
    deck: {SMALL_DECK}
    args: [--kokkos-print-configuration]
    environment:
      variables: {{OMP_NUM_THREADS: 4}}
  - name: openmpi
    app: stream
    deck: {SMALL_DECK}
    launcher: mpiexec-openmpi
  - name: mpich
    app: stream
    deck: {SMALL_DECK}
    launcher: mpiexec-mpich
  - name: one-rank
    app: stream
    deck: {SMALL_DECK}
    ranks_per_node: 1
    cpus_per_rank: 6
    launcher: mpiexec-openmpi
    environment:
      variables: {{OMP_PROC_BIND: "false"}}
""")
    out = str(tmp_path / "out")
    r = generate(campaign, out)
    assert r.returncode == 0, r.stderr
    jobs = {name: open(os.path.join(out, "jobs", name + ".sbatch")).read()
            for name in ("open-mpi.n1x2", "template.n3x2", "srun.n1x2", "openmpi.n1x2",
                         "mpich.n1x2", "one-rank.n1x1")}
    assert f"mpirun -n 2 --map-by ppr:2:node:PE=8 --bind-to core {BIN}/karma-stream" \
        in jobs["open-mpi.n1x2"]
    assert f"\nmpiexec -n 2 --map-by ppr:2:node:PE=8 --bind-to core {BIN}/karma-" \
        in jobs["openmpi.n1x2"]
    assert f"\nmpiexec -n 2 -ppn 2 -bind-to core:8 {BIN}/karma-" in jobs["mpich.n1x2"]
    # One rank bound to its cores; the campaign's OMP_PROC_BIND is its own.
    one = jobs["one-rank.n1x1"]
    assert "#SBATCH --cpus-per-task=6" in one and "#SBATCH --exclusive" in one
    assert f"\nmpiexec -n 1 --map-by ppr:1:node:PE=6 --bind-to core {BIN}/" in one
    assert 'export OMP_PROC_BIND="false"' in one and "OMP_PLACES" not in one
    assert f"mpiexec -np 6 -ppn 2 --depth 8 {BIN}/karma-stream" in jobs["template.n3x2"]
    srun = jobs["srun.n1x2"]
    assert "srun --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=8 " \
        "--cpu-bind=cores " in srun
    assert "export OMP_PROC_BIND=close\nexport OMP_PLACES=cores\n" in srun
    assert "--kokkos-print-configuration --output \"$results/karma-stream.json\"" in srun
    assert "gpus" not in srun  # CPU-only: no GPU request anywhere
    assert "#SBATCH --cpus-per-task=8" in srun and "#SBATCH --time=01:30:00" in srun
    # A campaign variable wins over the one cpus_per_rank implies.
    assert 'export OMP_NUM_THREADS="4"' in srun and "export OMP_NUM_THREADS=8" not in srun
    assert "export OMP_NUM_THREADS=8" in jobs["open-mpi.n1x2"]


def test_host_jobs_ask_for_a_core_per_thread(tmp_path):
    """A job without GPUs that gives only OMP_NUM_THREADS (the procurement
    campaign's host runs) asks the scheduler for that many cores and binds
    its threads to them; a GPU job's threads are its own business."""
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: host
scheduler: pbs
exclusive: false
runs:
  - name: host
    app: stream
    deck: {SMALL_DECK}
    gpus_per_rank: 0
    environment:
      variables: {{OMP_NUM_THREADS: 6}}
  - name: gpu
    app: stream
    deck: {SMALL_DECK}
    environment:
      variables: {{OMP_NUM_THREADS: 6}}
""")
    out = str(tmp_path / "out")
    assert generate(campaign, out, "--scheduler", "slurm").returncode == 0
    host = open(os.path.join(out, "jobs", "host.n1x1.sbatch")).read()
    assert "#SBATCH --cpus-per-task=6" in host and "--cpus-per-task=6 --cpu-bind=cores" in host
    assert "export OMP_PROC_BIND=close\nexport OMP_PLACES=cores\n" in host
    assert "#SBATCH --exclusive" not in host  # the campaign shares its nodes
    gpu = open(os.path.join(out, "jobs", "gpu.n1x1.sbatch")).read()
    assert "cpus-per-task" not in gpu and "OMP_PLACES" not in gpu
    assert generate(campaign, out, "--force").returncode == 0
    pbs = open(os.path.join(out, "jobs", "host.n1x1.pbs")).read()
    assert "#PBS -l select=1:ncpus=6:mpiprocs=1\n#PBS -l place=scatter\n" in pbs
    assert 'karma_launch="mpiexec -n 1 --map-by ppr:1:node:PE=6 --bind-to core"' in pbs
    assert 'karma_launch="mpiexec -n 1 -bind-to core:6"' in pbs


def test_no_root_variables_and_a_scheduler_override_warns(tmp_path):
    for text in ("environment:\n  variables: {OMPI_ALLOW_RUN_AS_ROOT: 1}\n",
                 "launcher: mpirun --allow-run-as-root -n {ranks}\n"):
        campaign = write(str(tmp_path / "c.yaml"), f"""\
name: root
{text}runs:
  - {{name: a, app: stream, deck: {SMALL_DECK}}}
""")
        r = generate(campaign, str(tmp_path / "out"))
        assert r.returncode == 2 and not os.path.exists(tmp_path / "out")
        assert r.stderr.count("\n") == 1 and "c.yaml:" in r.stderr and "root" in r.stderr, \
            r.stderr
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: local
scheduler: local
runs:
  - {{name: a, app: stream, deck: {SMALL_DECK}}}
""")
    r = generate(campaign, str(tmp_path / "out"), "--scheduler", "slurm")
    assert r.returncode == 0
    assert "warning: --scheduler slurm overrides the campaign's scheduler: local" in r.stderr
    r = generate(campaign, str(tmp_path / "out2"), "--scheduler", "local")
    assert "overrides" not in r.stderr


BAD = [
    ("unknown key", "name: x\nrunz: []\n", "c.yaml:2:1: runz: unknown key (did you mean 'runs'?)"),
    ("unknown run key", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    nodez: 2\n", "c.yaml:6:5: runs[0].nodez: unknown key (did you mean 'nodes'?)"),
    ("missing deck", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: nowhere.yaml\n",
     "c.yaml:5:11: runs[0].deck: no such deck: "),
    ("zero nodes", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    nodes: [1, 0]\n", "c.yaml:6:16: runs[0].nodes[1]: must be >= 1, got 0"),
    ("zero ranks", "name: x\nranks_per_node: 0\nruns: []\n",
     "c.yaml:2:17: ranks_per_node: must be >= 1, got 0"),
    ("no runs", "name: x\nruns: []\n", "c.yaml:2:7: runs: the list is empty"),
    ("no name", "runs:\n  - {{name: a, app: stream, deck: {deck}}}\n",
     "c.yaml:1:1: name: is required"),
    ("duplicate run", "name: x\nruns:\n  - {{name: a, app: stream, deck: {deck}}}\n"
     "  - {{name: a, app: stream, deck: {deck}}}\n", "c.yaml:4:12: runs[1].name: 'a' is also"),
    ("bad scaling", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    scaling: [weak, sideways]\n",
     "c.yaml:6:21: runs[0].scaling[1]: 'sideways' is not one of: weak, strong"),
    ("bad time", "name: x\ntime: 1:99:00\nruns: []\n", "c.yaml:2:7: time: '1:99:00' is not a time"),
    ("bad placeholder", "name: x\nlauncher: mpiexec -n {{rank}}\nruns: []\n",
     "c.yaml:2:11: launcher: 'mpiexec -n {rank}': an unknown placeholder"),
    ("bad set", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    set: [shape]\n", "c.yaml:6:11: runs[0].set[0]: 'shape' is not section.key=value"),
    ("output in args", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    args: [--output=x.json]\n", "karma-batch chooses --output"),
    ("yaml syntax", "name: x\nruns: [\n", "c.yaml:2:7: YAML syntax error: unclosed '['"),
    ("duplicate key", "name: x\nruns:\n  - name: a\n    app: stream\n    deck: {deck}\n"
     "    app: mgs\n", "c.yaml:6:5: YAML syntax error: duplicate key 'app' (first at line 4)"),
    ("bad module", "name: x\nenvironment:\n  modules: [gcc 12]\nruns: []\n",
     "c.yaml:3:13: environment.modules[0]: 'gcc 12' is not a module name"),
    ("slurm typo", "name: x\nslurm: {{partitoin: gpu}}\nruns: []\n",
     "slurm.partitoin: unknown key (did you mean 'partition'?)"),
    ("none launcher, 2 ranks", "name: x\nruns:\n  - name: a\n    app: stream\n"
     "    deck: {deck}\n    launcher: none\n    ranks_per_node: 2\n",
     "runs[0].launcher: 'none' runs one rank, but nodes x ranks_per_node = 2"),
    ("results under a file", "name: x\nresults_dir: c.yaml/results\nruns:\n"
     "  - {{name: a, app: stream, deck: {deck}}}\n",
     "c.yaml:2:14: results_dir: /"),
    ("results under a file, its words", "name: x\nresults_dir: c.yaml/r\nruns:\n"
     "  - {{name: a, app: stream, deck: {deck}}}\n",
     "c.yaml is a file; the jobs' results cannot go under it"),
]


@pytest.mark.parametrize("case, text, message", BAD, ids=[b[0] for b in BAD])
def test_bad_campaigns_write_nothing(tmp_path, case, text, message):
    campaign = write(str(tmp_path / "c.yaml"), text.format(deck=SMALL_DECK))
    out = tmp_path / "out"
    r = generate(campaign, str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr, r.stderr
    assert r.stderr.startswith("karma-batch: error: ")
    assert sorted(os.listdir(tmp_path)) == ["c.yaml"]  # no OUT, no temporary left


def test_deck_keys_are_checked_against_the_mini_app(tmp_path, stream_exe):
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: x
runs:
  - name: a
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set:
      stream.shape: [2^20]
    sweep:
      stream.layuot: [left, right]
""")
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "out")
    assert r.returncode == 2
    assert "c.yaml:10:7: runs[0].sweep.stream.layuot: stream.layuot: not a deck key of " \
           "karma-stream (did you mean 'stream.layout'?)" in r.stderr, r.stderr
    # The same with the key spelled right generates; --no-key-check skips the check.
    fixed = campaign.replace("c.yaml", "d.yaml")
    write(fixed, open(campaign).read().replace("layuot", "layout"))
    assert tool("karma-batch", "generate", fixed, "-o", tmp_path / "o2").returncode == 0
    assert tool("karma-batch", "generate", campaign, "-o", tmp_path / "o3",
                "--no-key-check").returncode == 0


# (id, campaign text after its run's deck, extra generate arguments, PATH,
# message): a program that is not there; {dir} (tmp_path) and {tools}
# (TOOLS_BIN) filled in.
MISSING = [
    ("--bin-dir", "", ["--bin-dir", "{dir}"], None,
     "c.yaml:4:10: runs[0].app: {dir}/karma-stream: not found (--bin-dir {dir}); its jobs "
     "would fail with exit 127 (--bin-dir names the folder that holds karma-<app>: a build's "
     "build/<preset>/bin, or PREFIX/bin)"),
    ("bin_dir", "bin_dir: nowhere\n", [], None,
     "c.yaml:4:10: runs[0].app: {dir}/nowhere/karma-stream: not found (the campaign's "
     "bin_dir {dir}/nowhere); its jobs would fail with exit 127"),
    ("beside karma-batch nor in PATH", "", [], "/usr/bin:/bin",
     "c.yaml:4:10: runs[0].app: karma-stream: not found beside karma-batch ({tools}) nor in "
     "PATH; its jobs would fail with exit 127 (--bin-dir names"),
    ("a reference's variable", "    reference: babelstream\n    executable: \"{{babelstream}}\"\n"
     "variables: {{babelstream: cuda-stream}}\n", [], None,
     "c.yaml:7:17: runs[0].executable: cuda-stream: not found in PATH; its jobs would fail "
     "with exit 127 (--var babelstream=PATH names it)"),
    ("a path", "    executable: old/karma-stream\n", [], None,
     "c.yaml:6:17: runs[0].executable: {dir}/old/karma-stream: not found; its jobs would "
     "fail with exit 127 (a path is relative to the campaign file)"),
    ("not executable", "    executable: ./c.yaml\n", [], None,
     "c.yaml:6:17: runs[0].executable: {dir}/c.yaml: not an executable; its jobs would fail"),
    ("a bare name", "    executable: no-such-program\n", [], None,
     "c.yaml:6:17: runs[0].executable: no-such-program: not found in PATH; its jobs would "
     "fail with exit 127 (a bare name is looked up in PATH)"),
]


@pytest.mark.parametrize("case, text, extra, path, message", MISSING,
                         ids=[m[0] for m in MISSING])
def test_generate_refuses_a_campaign_whose_program_is_missing(tmp_path, case, text, extra,
                                                              path, message):
    """Issue 78: a program generate cannot find stops it (exit 2, nothing
    written), naming the campaign's line and key, what it looked for and
    where; its jobs would only have failed with exit 127."""
    fill = {"dir": str(tmp_path), "tools": TOOLS_BIN}
    campaign = write(str(tmp_path / "c.yaml"), "name: x\nruns:\n  - name: a\n    app: stream\n"
                     f"    deck: {SMALL_DECK}\n" + text.format(**fill))
    env = {"PATH": path} if path else None
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "out",
             *[e.format(**fill) for e in extra], env=env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"karma-batch: error: {tmp_path}/"), r.stderr
    assert message.format(**fill) in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["c.yaml"]  # no OUT, no temporary left


def test_generate_finds_programs_in_path_and_the_runs_path(tmp_path):
    """A bare karma-<app> (no bin_dir, none beside karma-batch) is found in
    PATH, or in the PATH that the run's environment exports."""
    here = stand_ins(tmp_path / "here")
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: x
runs:
  - {{name: a, app: stream, deck: {SMALL_DECK}}}
""")
    path = f"{here}:/usr/bin:/bin"
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "o1", env={"PATH": path})
    assert r.returncode == 0, r.stderr
    assert load_manifest(str(tmp_path / "o1"))["jobs"][0]["executable"] == "karma-stream"
    write(campaign, open(campaign).read() +
          f"environment:\n  variables: {{PATH: '{here}:$PATH'}}\n")
    r = tool("karma-batch", "generate", campaign, "-o", tmp_path / "o2",
             env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr


def test_a_job_without_its_program_says_command_not_found(tmp_path):
    """Issue 78: a job whose program is gone where it runs ends with exit
    127 and says `command not found: PATH`, in its log, in status and in
    karma-compare's note."""
    programs = stand_ins(tmp_path / "programs", ["stream"])
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: gone
scheduler: local
gpus_per_rank: 0
runs:
  - {{name: a, app: stream, deck: {SMALL_DECK}}}
compare:
  - {{name: c, numerator: {{run: a}}, denominator: {{run: a}}}}
""")
    out = str(tmp_path / "out")
    assert tool("karma-batch", "generate", campaign, "-o", out, "--bin-dir",
                programs).returncode == 0
    exe = os.path.join(programs, "karma-stream")
    os.unlink(exe)
    r = tool("karma-batch", "submit", out)
    assert r.returncode == 1, r.stdout + r.stderr
    log = open(os.path.join(out, "results", "a.n1x1", "job.out")).read()
    assert f"karma-batch job: command not found: {exe}\n" in log, log
    r = tool("karma-batch", "status", out)
    assert r.returncode == 1
    assert re.search(rf"^a\.n1x1 .* failed  exit 127, command not found: {re.escape(exe)}: "
                     r"see \S+/a\.n1x1/job\*\.out$", r.stdout, re.M), r.stdout
    r = tool("karma-compare", "--campaign", out)
    assert f"a.n1x1: no results: failed, exit 127: command not found: {exe}" in r.stdout, \
        r.stdout + r.stderr


def test_existing_output_needs_force(tmp_path):
    out = str(tmp_path / "out")
    assert generate(EXAMPLE, out).returncode == 0
    r = generate(EXAMPLE, out)
    assert r.returncode == 2 and "exists" in r.stderr
    assert generate(EXAMPLE, out, "--force").returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_max_ranks_per_node_leaves_out_larger_jobs_and_says_so(tmp_path):
    """A node of fewer GPUs than a campaign's largest rank count: generate
    leaves out the jobs of more ranks a node, lists their runs and records
    the limit; one that leaves nothing, or no rank, writes nothing."""
    out = str(tmp_path / "out")
    r = generate(EXAMPLE, out, "--max-ranks-per-node", "2")
    assert r.returncode == 0, r.stderr
    manifest = load_manifest(out)
    assert [j["ranks_per_node"] for j in manifest["jobs"]] == [1] * 6
    assert manifest["max_ranks_per_node"] == 2
    assert "left out 6 job(s) of more than 2 rank(s) a node: stream-scaling" in r.stdout
    assert sorted(os.listdir(os.path.join(out, "jobs"))) == sorted(
        j["name"] + ".sbatch" for j in manifest["jobs"])
    r = generate(EXAMPLE, out, "--force", "--max-ranks-per-node", "4")
    assert r.returncode == 0 and "left out" not in r.stdout, r.stdout + r.stderr
    assert len(load_manifest(out)["jobs"]) == 12
    wide = write(str(tmp_path / "wide.yaml"), f"""\
name: wide
scheduler: slurm
ranks_per_node: [4, 8]
runs:
  - {{name: s, app: stream, deck: {SMALL_DECK}}}
""")
    for most, message in (("2", "every job of " + wide + " runs more ranks a node (the "
                                "fewest: 4); nothing written"),
                          ("0", "--max-ranks-per-node 0: expected a number of ranks")):
        r = generate(wide, str(tmp_path / "none"), "--max-ranks-per-node", most)
        assert r.returncode == 2 and message in r.stderr, r.stderr
        assert not os.path.exists(tmp_path / "none")


def test_help_campaign_documents_every_key():
    r = tool("karma-batch", "--help-campaign")
    assert r.returncode == 0
    from karma_tools.campaign import format as campaign_format

    for key in campaign_format.TOP_KEYS + campaign_format.RUN_KEYS + campaign_format.ENV_KEYS:
        assert f"{key}:" in r.stdout or f" {key}," in r.stdout, key


# --- submit / status / wait against a stand-in scheduler ---------------------------------


FAKE_SBATCH = """#!/bin/sh
# Stand-in for sbatch: runs the job script at once (unless FAKE_NORUN), its output where
# the script's #SBATCH --output says, as Slurm writes it, and prints its id.
n=$(cat "$FAKE_DIR/next" 2>/dev/null || echo 100); n=$((n + 1)); echo $n > "$FAKE_DIR/next"
if [ -n "$FAKE_FAIL_AT" ] && [ "$n" -ge "$FAKE_FAIL_AT" ]; then
  echo "sbatch: error: Batch job submission failed: fake" >&2; exit 1
fi
shift  # --parsable
log=$(sed -n "s/^#SBATCH --output=//p" "$1" | sed "s/%j/$n/")
[ -n "$FAKE_NORUN" ] || SLURM_JOB_ID=$n bash "$1" > "${log:-$FAKE_DIR/job-$n.out}" 2>&1
echo "$n"
"""
FAKE_SQUEUE = """#!/bin/sh
# Stand-in for squeue: FAKE_STATE (e.g. RUNNING) for every job asked about, else nothing.
[ -z "$FAKE_STATE" ] && exit 0
for id in $(echo "$4" | sed 's/--jobs=//; s/,/ /g'); do echo "$id|$FAKE_STATE"; done
"""


@pytest.fixture
def fake_slurm(tmp_path):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    for name, text in (("sbatch", FAKE_SBATCH), ("squeue", FAKE_SQUEUE),
                       ("scancel", '#!/bin/sh\necho "$@" > "$FAKE_DIR/scancel.args"\n')):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_DIR": str(tmp_path)}


def small_campaign(tmp_path, stream_exe, extra_run=""):
    """Two jobs, one of which fails with bad input when it runs: generate it
    with --no-key-check, or generate refuses stream.shape=[0] at once."""
    return write(str(tmp_path / "c.yaml"), f"""\
name: local
launcher: none
gpus_per_rank: 0
environment:
  variables: {{OMP_NUM_THREADS: 1, OMP_PROC_BIND: "false"}}
runs:
  - name: ok
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set: [run.repetitions=2]
  - name: bad-size
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set: ["stream.shape=[0]"]
{extra_run}""")


def test_submit_status_wait_through_a_scheduler(tmp_path, fake_slurm, stream_exe, validator):
    out = str(tmp_path / "out")
    assert tool("karma-batch", "generate", small_campaign(tmp_path, stream_exe),
                "-o", out, "--no-key-check").returncode == 0
    r = tool("karma-batch", "status", out, env=fake_slurm)
    assert r.returncode == 5
    assert "2 job(s): 2 not submitted; left: ok.n1x1, bad-size.n1x1" in r.stdout

    r = tool("karma-batch", "submit", out, "--dry-run", env=fake_slurm)
    assert r.returncode == 0 and "[1/2] would submit ok.n1x1: sbatch" in r.stdout
    r = tool("karma-batch", "submit", out, env=fake_slurm)
    assert r.returncode == 0, r.stderr
    assert "[1/2] submitted ok.n1x1 as job 101" in r.stdout
    assert "[2/2] submitted bad-size.n1x1 as job 102" in r.stdout
    manifest = load_manifest(out)
    assert [j["job_id"] for j in manifest["jobs"]] == ["101", "102"]

    r = tool("karma-batch", "wait", out, "--timeout", "30", "--interval", "0.2", env=fake_slurm)
    assert r.returncode == 1, r.stdout + r.stderr  # one job failed
    assert "2 job(s): 1 passed, 1 failed" in r.stdout
    r = tool("karma-batch", "status", out, "--json", env=fake_slurm)
    states = {j["name"]: j for j in json.loads(r.stdout)}
    assert states["ok.n1x1"]["state"] == "passed"
    assert states["bad-size.n1x1"]["state"] == "failed"
    assert "exit 2, no results file" in states["bad-size.n1x1"]["detail"]

    # What the passing job left: results that validate, the environment, exit_code.
    ok = manifest["jobs"][0]["results_dir"]
    results = os.path.join(ok, "karma-stream.json")
    import subprocess

    assert subprocess.run([sys.executable, validator, results, "--app", "stream", "--ranks", "1",
                           "--result", "PASSED"]).returncode == 0
    doc = load_json(results)
    assert doc["job"] == {"scheduler": "slurm", "id": "101"}
    env = load_json(os.path.join(ok, "environment", "environment.json"))
    assert env["scheduler"]["job_id"] == "101"
    assert open(os.path.join(ok, "exit_code")).read() == "0\n"

    # Submitting again submits nothing; --resubmit-failed only the failed one.
    r = tool("karma-batch", "submit", out, env=fake_slurm)
    assert "already submitted" in r.stdout
    r = tool("karma-batch", "submit", out, "--resubmit-failed", env=fake_slurm)
    assert "[1/1] submitted bad-size.n1x1 as job 103" in r.stdout


def test_running_pending_and_lost_jobs(tmp_path, fake_slurm, stream_exe):
    out = str(tmp_path / "out")
    tool("karma-batch", "generate", small_campaign(tmp_path, stream_exe), "-o", out,
         "--no-key-check")
    env = dict(fake_slurm, FAKE_NORUN="1")
    assert tool("karma-batch", "submit", out, env=env).returncode == 0
    r = tool("karma-batch", "status", out, env=dict(env, FAKE_STATE="RUNNING"))
    assert r.returncode == 5 and "2 running; left: ok.n1x1, bad-size.n1x1" in r.stdout
    r = tool("karma-batch", "status", out, env=dict(env, FAKE_STATE="PENDING"))
    assert "2 pending" in r.stdout
    r = tool("karma-batch", "wait", out, "--timeout", "0.5", "--interval", "0.1",
             env=dict(env, FAKE_STATE="PENDING"))
    assert r.returncode == 124 and "timed out" in r.stderr
    r = tool("karma-batch", "cancel", out, "--only", "ok.*", env=dict(env, FAKE_STATE="RUNNING"))
    assert r.returncode == 0 and "cancelled ok.n1x1 (job 101, was running)" in r.stdout
    assert open(os.path.join(str(tmp_path), "scancel.args")).read().split() == ["101"]
    # Gone from the queue without an exit_code: lost, with where to look.
    r = tool("karma-batch", "status", out, env=env)
    assert r.returncode == 1 and "2 lost" in r.stdout and "ended without writing exit_code" \
        in r.stdout


def test_a_job_stopped_by_sigterm_shows_as_interrupted(tmp_path, fake_slurm, stream_exe):
    """A batch time limit sends SIGTERM to every process of the job: the
    mini-app says so and writes nothing, and status calls the job interrupted,
    not failed or lost."""
    out = str(tmp_path / "out")
    campaign = small_campaign(tmp_path, stream_exe)
    with open(campaign) as f:
        # Copy alone keeps the values as they are, so a run this long stays valid.
        text = f.read().replace("[run.repetitions=2]",
                                "[run.repetitions=100000000, \"stream.kernels=[copy]\"]")
    write(campaign, text)
    assert tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check").returncode == 0
    assert tool("karma-batch", "submit", out, "--only", "ok.*",
                env=dict(fake_slurm, FAKE_NORUN="1")).returncode == 0
    entry = [j for j in load_manifest(out)["jobs"]
             if j["name"] == "ok.n1x1"][0]
    log_path = os.path.join(entry["results_dir"], "job-101.out")
    with open(log_path, "w") as log:
        job = subprocess.Popen(["bash", os.path.join(out, entry["script"])], stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while "rank 0 on" not in open(log_path).read() and time.monotonic() < deadline:
        time.sleep(0.2)  # until the mini-app has started
    os.killpg(job.pid, signal.SIGTERM)
    assert job.wait(timeout=60) == 143
    text = open(log_path).read()
    assert "RESULT: FAILED reason=interrupted" in text and "by SIGTERM" in text, text
    assert not os.path.lexists(entry["results_file"])
    r = tool("karma-batch", "status", out, env=fake_slurm)
    assert r.returncode == 1 and "1 interrupted" in r.stdout, r.stdout
    assert "stopped by SIGTERM" in r.stdout


def test_two_submits_of_one_campaign_keep_each_others_jobs(tmp_path, stream_exe):
    """Two `submit --only` of one local campaign at once (a node's two GPUs,
    or a second shell): each records only its own jobs, so the one stopped
    later leaves the other's jobs as they ended."""
    slow = tmp_path / "slow-stream"
    slow.write_text(f"#!/bin/sh\nsleep 300\nexec {stream_exe} \"$@\"\n")
    slow.chmod(0o755)
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: two-shells
scheduler: local
launcher: none
gpus_per_rank: 0
environment:
  variables: {{OMP_NUM_THREADS: 1, OMP_PROC_BIND: "false"}}
runs:
  - name: slow
    app: stream
    deck: {SMALL_DECK}
    executable: {slow}
  - name: fast
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set: [run.repetitions=2]
    repeat: 2
""")
    out = str(tmp_path / "out")
    assert tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check").returncode == 0
    first = subprocess.Popen([os.path.join(TOOLS_BIN, "karma-batch"), "submit", out, "--only",
                              "slow*"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while "running" not in tool("karma-batch", "status", out).stdout:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.2)
    second = tool("karma-batch", "submit", out, "--only", "fast*")
    assert second.returncode == 0, second.stdout + second.stderr
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 143, first.stdout.read()
    r = tool("karma-batch", "status", out)
    assert "2 passed, 1 interrupted" in r.stdout, r.stdout


def test_a_failed_submission_keeps_what_was_submitted(tmp_path, fake_slurm, stream_exe):
    out = str(tmp_path / "out")
    tool("karma-batch", "generate", small_campaign(tmp_path, stream_exe), "-o", out,
         "--no-key-check")
    # FAKE_NORUN: only the submissions matter here. Otherwise the stand-in
    # sbatch runs job 101 before it answers, and on a busy GPU node that run
    # (karma-envcapture, the mini-app) can outlast the 60 s karma-batch gives
    # sbatch, failing the first submission instead of the second.
    slurm = dict(fake_slurm, FAKE_NORUN="1")
    r = tool("karma-batch", "submit", out, env=dict(slurm, FAKE_FAIL_AT="102"))
    assert r.returncode == 3, r.stderr
    assert "sbatch" in r.stderr and "1 of 2 job(s) were submitted" in r.stderr, r.stderr
    manifest = load_manifest(out)
    assert [j["job_id"] for j in manifest["jobs"]] == ["101", None]
    r = tool("karma-batch", "submit", out, env=slurm)
    assert r.returncode == 0 and "[1/1] submitted bad-size.n1x1" in r.stdout, r.stderr


def test_commands_need_a_generated_directory(tmp_path):
    r = tool("karma-batch", "status", tmp_path)
    assert r.returncode == 2 and "campaign.json not found" in r.stderr
    r = tool("karma-batch")
    assert r.returncode == 2 and "name a command" in r.stderr


FAKE_QSUB = """#!/bin/sh
# Stand-in for qsub: runs the job at once unless FAKE_NORUN; prints a PBS job id.
n=$(cat "$FAKE_DIR/next" 2>/dev/null || echo 200); n=$((n + 1)); echo $n > "$FAKE_DIR/next"
[ -n "$FAKE_NORUN" ] || PBS_JOBID=$n.pbs-server bash "$1" > "$FAKE_DIR/job-$n.out" 2>&1
echo "$n.pbs-server"
"""
FAKE_QSTAT = """#!/bin/sh
# Stand-in for qstat -x: PBS Pro's table, state FAKE_STATE for every job asked about.
[ "$1" = "-x" ] && shift
echo "Job id            Name             User              Time Use S Queue"
echo "----------------  ---------------- ----------------  -------- - -----"
for id in "$@"; do
  echo "${id%%.*}.pbs-serv  local.ok.n1x1    root              00:00:01 $FAKE_STATE workq"
done
"""


def test_pbs_submit_and_status(tmp_path, stream_exe):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    for name, text in (("qsub", FAKE_QSUB), ("qstat", FAKE_QSTAT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_DIR": str(tmp_path),
           "FAKE_NORUN": "1"}
    out = str(tmp_path / "out")
    r = tool("karma-batch", "generate", small_campaign(tmp_path, stream_exe), "-o", out,
             "--scheduler", "pbs", "--no-key-check")
    assert r.returncode == 0, r.stderr
    r = tool("karma-batch", "submit", out, "--only", "ok.*", env=env)
    assert "[1/1] submitted ok.n1x1 as job 201.pbs-server" in r.stdout, r.stderr
    r = tool("karma-batch", "status", out, "--only", "ok.*", env=dict(env, FAKE_STATE="Q"))
    assert "1 pending" in r.stdout, r.stdout + r.stderr
    r = tool("karma-batch", "status", out, "--only", "ok.*", env=dict(env, FAKE_STATE="R"))
    assert "1 running" in r.stdout
    # Finished (F) without an exit_code: lost; then the job really runs and passes.
    r = tool("karma-batch", "status", out, "--only", "ok.*", env=dict(env, FAKE_STATE="F"))
    assert "1 lost" in r.stdout
    manifest = load_manifest(out)
    import subprocess

    subprocess.run(["bash", os.path.join(out, manifest["jobs"][0]["script"])],
                   env=dict(os.environ, PBS_JOBID="201.pbs-server"), capture_output=True)
    r = tool("karma-batch", "status", out, "--only", "ok.*", env=dict(env, FAKE_STATE="F"))
    assert r.returncode == 0 and "1 job(s): 1 passed" in r.stdout
    assert load_json(manifest["jobs"][0]["results_file"])["job"] == \
        {"scheduler": "pbs", "id": "201.pbs-server"}


# Stands in for karma-<app>: what the launcher gave this rank (its rank, the
# CPUs it may run on, the OpenMP variables), one file a rank; rank 0 writes
# passing results so that status counts the job.
REPORTER = r"""#!/bin/sh
out=
while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:-1}}}
{ echo "rank=$rank"; echo "size=$size"
  sed -n 's/^Cpus_allowed_list:[[:space:]]*/cpus=/p' /proc/self/status
  env | grep '^OMP_' | sort; } > "$(dirname "$out")/report.$rank"
[ "$rank" = 0 ] && printf '{"schema_version": 2, "result": "PASSED"}\n' > "$out"
exit 0
"""

# Stand-in for a PBS server's qsub on this one node: runs the job script at
# once with the variables PBS sets (the node file lists this host once per
# rank), its output where `#PBS -o` says.
PBS_QSUB = """#!/bin/sh
n=$(cat "$FAKE_DIR/next" 2>/dev/null || echo 300); n=$((n + 1)); echo $n > "$FAKE_DIR/next"
log=$(sed -n 's/^#PBS -o //p' "$1")
ranks=$(sed -n 's/^#PBS -l select=.*mpiprocs=\\([0-9]*\\).*/\\1/p' "$1")
nodefile="$FAKE_DIR/nodefile.$n"
i=0; : > "$nodefile"
while [ $i -lt "${ranks:-1}" ]; do hostname >> "$nodefile"; i=$((i + 1)); done
mkdir -p "$(dirname "$log")"
PBS_JOBID=$n.standin PBS_NODEFILE=$nodefile PBS_O_WORKDIR=$PWD PBS_ENVIRONMENT=PBS_BATCH \\
  PBS_JOBNAME=job PBS_QUEUE=workq bash "$1" > "$log" 2>&1
echo "$n.standin"
"""

MPIEXECS = {"openmpi": "mpiexec.openmpi", "mpich": "mpiexec.mpich"}


@pytest.mark.parametrize("mpi", sorted(MPIEXECS))
@pytest.mark.parametrize("launcher", ["auto", "explicit"])
def test_pbs_jobs_run_under_the_real_mpiexec(tmp_path, mpi, launcher):
    """PBS job scripts under a stand-in qsub, launched by the real mpiexec
    of Open MPI and of MPICH (Debian: openmpi-bin, mpich; scripts/bootstrap.sh
    installs both): one rank and two, each rank bound to its cores with the
    OpenMP variables set. auto chooses the options by what the executable
    is linked with: the reporter is a script, so by the mpiexec in PATH."""
    mpiexec = shutil.which(MPIEXECS[mpi])
    if not mpiexec:
        pytest.skip(f"{MPIEXECS[mpi]} is not installed (Debian package "
                    f"{'openmpi-bin' if mpi == 'openmpi' else 'mpich'})")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # `mpiexec` in PATH is the one under test (MPICH finds its proxy beside it).
    (bin_dir / "mpiexec").write_text(f'#!/bin/sh\nexec {mpiexec} "$@"\n')
    (bin_dir / "mpiexec").chmod(0o755)
    for name, text in (("qsub", PBS_QSUB), ("reporter", REPORTER),
                       ("qstat", "#!/bin/sh\nexit 0\n")):  # the jobs have ended
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    cores = os.cpu_count() or 1
    two = 2 if cores >= 2 else 1
    chosen = "auto" if launcher == "auto" else f"mpiexec-{mpi}"
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: pbs-{mpi}
scheduler: pbs
gpus_per_rank: 0
launcher: {chosen}
runs:
  - name: wide            # one rank on {two} cores
    app: stream
    deck: {SMALL_DECK}
    executable: {bin_dir / "reporter"}
    cpus_per_rank: {two}
  - name: ranks           # {two} ranks on a core each
    app: stream
    deck: {SMALL_DECK}
    executable: {bin_dir / "reporter"}
    ranks_per_node: {two}
    cpus_per_rank: 1
  - name: plain           # {two} ranks, no cores asked for: the MPI's own binding
    app: stream
    deck: {SMALL_DECK}
    executable: {bin_dir / "reporter"}
    ranks_per_node: {two}
""")
    out = str(tmp_path / "out")
    r = tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check")
    assert r.returncode == 0, r.stderr
    # Open MPI refuses root unless told, as CI runs: the test's shell says so,
    # never the job script.
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_DIR": str(tmp_path),
           "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    r = tool("karma-batch", "submit", out, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = load_manifest(out)
    logs = "".join(open(os.path.join(j["results_dir"], "job.out")).read()
                   for j in manifest["jobs"] if os.path.exists(os.path.join(j["results_dir"],
                                                                            "job.out")))
    r = tool("karma-batch", "status", out, env=env)
    assert r.returncode == 0 and "3 passed" in r.stdout, r.stdout + logs
    for job in manifest["jobs"]:
        script = open(os.path.join(out, job["script"])).read()
        assert "RUN_AS_ROOT" not in script and "--ppn" not in script
        if job["ranks"] == 1:
            assert "ppn" not in script.replace("ppn=", "")
        for rank in range(job["ranks"]):
            report = dict(line.split("=", 1) for line in open(os.path.join(
                job["results_dir"], f"report.{rank}")).read().split())
            assert report["size"] == str(job["ranks"]), (report, logs)
            cpus = job["cpus_per_rank"]
            if cpus is None:
                # The script sets no threads: the job keeps what it inherits.
                assert report.get("OMP_NUM_THREADS") == os.environ.get("OMP_NUM_THREADS")
                continue
            assert (report["OMP_NUM_THREADS"], report["OMP_PROC_BIND"],
                    report["OMP_PLACES"]) == (str(cpus), "close", "cores")
            # Bound: each rank may run on its own cores only.
            assert cpu_count(report["cpus"]) == cpus, (report, script)


def test_the_progress_line():
    from karma_tools.campaign import batch
    assert batch.progress(3, 8, 90) == "3 of 8 jobs done, 0:01:30 elapsed, about 0:02:30 left"
    assert batch.progress(8, 8, 3725) == "8 of 8 jobs done, 1:02:05 elapsed"
    assert batch.progress(0, 8, 0) == "0 of 8 jobs done, 0:00:00 elapsed"


def test_status_columns_stay_aligned_for_long_ids():
    """A local runner's ids (host:pid) are longer than a scheduler's 10
    digits: the columns widen to the longest."""
    from karma_tools.campaign.batch import table
    rows = [({"name": "a", "job_id": "node-123.example.org:4242", "nodes": 1,
              "ranks_per_node": 1}, "passed", "PASSED"),
            ({"name": "bb", "job_id": "7", "nodes": 2, "ranks_per_node": 4}, "running", "")]
    text = table(rows)
    lines = text.splitlines()
    starts = {line.index(word) + len(word) for line, word in
              zip(lines, ("id", "node-123.example.org:4242", "7"))}
    assert len(lines) == 3 and len(starts) == 1, text


def local_manifest(tmp_path, edit):
    """A generated local campaign whose campaign.json `edit` (a function of it) changed,
    as by hand."""
    out = str(tmp_path / "out")
    campaign = write(str(tmp_path / "c.yaml"), f"name: c\nscheduler: local\ngpus_per_rank: 0\n"
                     f"runs:\n  - {{name: s, app: stream, deck: {SMALL_DECK}}}\n")
    assert generate(campaign, out, "--no-key-check").returncode == 0
    path = os.path.join(out, "campaign.json")
    manifest = load_json(path)
    edit(manifest)
    write(path, json.dumps(manifest))
    return out


def test_archive_of_a_manifest_whose_campaign_is_no_mapping(tmp_path):
    out = local_manifest(tmp_path, lambda m: m.update(campaign="c", jobs=[
        dict(j, job_id="123") for j in m["jobs"]]))
    r = tool("karma-batch", "archive", out, "-o", tmp_path / "out.tar.xz")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("pid", ["0", "9" * 30])
def test_a_local_job_id_of_no_process_is_lost(tmp_path, pid):
    """pid 0 would signal karma-batch's own process group, one past C's long
    crashed cancel: neither is a runner."""
    out = local_manifest(tmp_path, lambda m: m["jobs"][0].update(job_id=f"local-{pid}-1"))
    r = tool("karma-batch", "status", out)
    assert r.returncode == 1 and "1 job(s): 1 lost" in r.stdout, r.stdout + r.stderr
    r = tool("karma-batch", "cancel", out)
    assert r.returncode == 0 and "no pending or running job" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("option", [("--interval", "nan"), ("--interval", "inf"),
                                    ("--interval", "1e300"), ("--timeout", "nan")])
def test_wait_refuses_an_interval_or_timeout_it_cannot_sleep_by(tmp_path, option):
    """time.sleep crashed on nan or an interval past its range; a timeout of nan waited
    for ever: refused as bad arguments (2), while a job is pending."""
    runner = subprocess.Popen(["sleep", "60"])
    try:
        out = local_manifest(tmp_path, lambda m: m["jobs"][0].update(
            job_id=f"local-{runner.pid}-1"))
        given = dict([("--timeout", "1"), ("--interval", "0.2"), option])
        r = tool("karma-batch", "wait", out, *[w for o in given.items() for w in o], timeout=30)
    finally:
        runner.kill()
        runner.wait()
    assert r.returncode == 2 and option[0] in r.stderr and "Traceback" not in r.stderr, \
        r.stderr
