"""The real scheduler test: a one-node Slurm (slurmctld + slurmd + munge on
loopback) runs the job scripts karma-batch writes for a small campaign, and
every job must leave a results JSON that karma-validate-results accepts.

It runs wherever the tests run (ctest label `slurm`). If Slurm cannot start,
the test FAILS and says why. It is skipped only when the Slurm packages are
absent AND KARMA_SLURM_TEST=skip says to skip it.
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, cpu_count, load_json, load_manifest, tool, write
from slurm_cluster import Cluster, ClusterError, missing_programs

SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")


@pytest.fixture(scope="module")
def cluster():
    missing = missing_programs()
    if missing and os.environ.get("KARMA_SLURM_TEST") == "skip":
        pytest.skip(f"Slurm is not installed ({', '.join(missing)}) and KARMA_SLURM_TEST=skip")
    c = Cluster(gpus=2)
    try:
        try:
            c.start(timeout=45)
        except (ClusterError, subprocess.TimeoutExpired, OSError) as e:
            pytest.fail(f"could not start a one-node Slurm cluster: {e}", pytrace=False)
        yield c
    finally:
        c.stop()
        c.cleanup()


def test_generated_jobs_run_under_slurm(cluster, tmp_path, stream_exe, validator):
    campaign = write(str(tmp_path / "campaign.yaml"), f"""\
name: slurm-test
scheduler: slurm
time: 5
launcher: mpirun          # Open MPI inside the allocation (no PMI needed)
gpus_per_rank: 1          # the cluster has 2 GPUs by name: --gpus-per-task=1 is honoured
slurm:
  partition: {Cluster.PARTITION}
environment:
  variables:
    OMPI_MCA_rmaps_base_oversubscribe: 1
    OMP_NUM_THREADS: 1
    OMP_PROC_BIND: "false"
runs:
  - name: stream
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set: [run.repetitions=3]
    ranks_per_node: [1, 2]
  - name: wrong-size           # must be reported as failed, with no results
    app: stream
    deck: {SMALL_DECK}
    executable: {stream_exe}
    set: ["stream.shape=[0]"]
""")
    out = str(tmp_path / "out")
    # Open MPI refuses root unless told, as CI runs: sbatch passes the
    # submitting shell's variables on; the job scripts never ask for it.
    env = dict(cluster.env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # --no-key-check: wrong-size is meant to fail when it runs, not at generate.
    r = tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check", env=env)
    assert r.returncode == 0, r.stderr
    for name in ("stream.n1x1", "stream.n1x2"):
        with open(os.path.join(out, "jobs", name + ".sbatch")) as f:
            assert "#SBATCH --gpus-per-task=1" in f.read()

    r = tool("karma-batch", "submit", out, env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr + cluster.logs()
    assert "[3/3] submitted" in r.stdout

    r = tool("karma-batch", "wait", out, "--timeout", "120", "--interval", "1", env=env,
             timeout=180)
    manifest = load_manifest(out)
    logs = ""
    for job in manifest["jobs"]:
        for f in sorted(os.listdir(job["results_dir"])) if os.path.isdir(job["results_dir"]) \
                else []:
            if f.startswith("job-"):
                with open(os.path.join(job["results_dir"], f), errors="replace") as fh:
                    logs += f"--- {job['name']}/{f}\n{fh.read()[-3000:]}\n"
    assert r.returncode == 1, f"expected one failed job:\n{r.stdout}{r.stderr}\n{logs}\n" \
                              f"{cluster.logs()}"
    assert "3 job(s): 2 passed, 1 failed" in r.stdout, r.stdout + logs

    states = {j["name"]: j for j in json.loads(
        tool("karma-batch", "status", out, "--json", env=env).stdout)}
    assert states["wrong-size.n1x1"]["state"] == "failed"
    assert "exit 2" in states["wrong-size.n1x1"]["detail"]
    for job in manifest["jobs"][:2]:
        results = job["results_file"]
        assert states[job["name"]]["state"] == "passed", logs
        check = subprocess.run([sys.executable, validator, results, "--app", "stream", "--ranks",
                                str(job["ranks"]), "--result", "PASSED"],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        doc = load_json(results)
        # The run knew its job: the scheduler and the id sbatch gave.
        assert doc["job"] == {"scheduler": "slurm", "id": job["job_id"]}
        assert doc["mpi"]["ranks"] == job["ranks"]
        env_doc = load_json(os.path.join(job["results_dir"], "environment", "environment.json"))
        assert env_doc["scheduler"]["scheduler"] == "slurm"
        assert env_doc["scheduler"]["variables"]["SLURM_JOB_ID"] == job["job_id"]
        assert env_doc["scheduler"]["variables"]["SLURM_NTASKS"] == str(job["ranks"])
        with open(os.path.join(job["results_dir"], "exit_code")) as f:
            assert f.read() == "0\n"
    wrong = manifest["jobs"][2]["results_dir"]
    assert not os.path.exists(os.path.join(wrong, "karma-stream.json"))
    with open(os.path.join(wrong, "exit_code")) as f:
        assert f.read() == "2\n"


# Stands in for karma-<app>: records what Slurm gave its task (the CPUs it
# may run on, the OpenMP variables) and writes passing results.
REPORTER = r"""#!/bin/sh
out=
while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done
{ sed -n 's/^Cpus_allowed_list:[[:space:]]*/cpus=/p' /proc/self/status
  env | grep -E '^(OMP_|SLURM_CPUS_PER_TASK=)' | sort; } > "$(dirname "$out")/report"
printf '{"schema_version": 2, "result": "PASSED"}\n' > "$out"
"""


def test_a_host_job_gets_a_core_per_thread_and_binds_them(cluster, tmp_path):
    """A host job that gives OMP_NUM_THREADS = T asks Slurm for T CPUs
    (--cpus-per-task) on a node of its own, and srun binds its task to
    them: the task may run on T CPUs, not on the node's others, with the
    OpenMP threads bound (close, cores)."""
    threads = max(1, (os.cpu_count() or 1) // 2)
    reporter = write(str(tmp_path / "reporter"), REPORTER)
    os.chmod(reporter, 0o755)
    campaign = write(str(tmp_path / "campaign.yaml"), f"""\
name: slurm-host
scheduler: slurm
time: 5
gpus_per_rank: 0
slurm:
  partition: {Cluster.PARTITION}
runs:
  - name: host
    app: stream
    deck: {SMALL_DECK}
    executable: {reporter}
    environment:
      variables: {{OMP_NUM_THREADS: {threads}}}
""")
    out = str(tmp_path / "out")
    r = tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check", env=cluster.env)
    assert r.returncode == 0, r.stderr
    script = open(os.path.join(out, "jobs", "host.n1x1.sbatch")).read()
    assert f"#SBATCH --cpus-per-task={threads}\n" in script and "#SBATCH --exclusive\n" in script
    assert tool("karma-batch", "submit", out, env=cluster.env, timeout=60).returncode == 0
    r = tool("karma-batch", "wait", out, "--timeout", "120", "--interval", "1", env=cluster.env,
             timeout=180)
    job = load_manifest(out)["jobs"][0]
    logs = "".join(open(os.path.join(job["results_dir"], f), errors="replace").read()
                   for f in os.listdir(job["results_dir"]) if f.startswith("job-"))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + logs + cluster.logs()
    report = dict(line.split("=", 1) for line in
                  open(os.path.join(job["results_dir"], "report")).read().split())
    assert cpu_count(report["cpus"]) == threads, (report, logs)
    assert report["SLURM_CPUS_PER_TASK"] == str(threads)
    assert (report["OMP_NUM_THREADS"], report["OMP_PROC_BIND"], report["OMP_PLACES"]) == \
        (str(threads), "close", "cores")
