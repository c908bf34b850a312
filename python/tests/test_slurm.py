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

from conftest import ROOT, load_json, tool, write
from slurm_cluster import Cluster, ClusterError, missing_programs

SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")


def load_manifest(out):
    """OUT/campaign.json with its jobs' paths, which are relative to OUT, made absolute."""
    manifest = load_json(os.path.join(out, "campaign.json"))
    for job in manifest["jobs"]:
        for key in ("results_dir", "results_file"):
            job[key] = os.path.join(out, job[key])
    return manifest


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
    OMPI_ALLOW_RUN_AS_ROOT: 1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: 1
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
    env = cluster.env
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
