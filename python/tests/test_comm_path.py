"""Device data between ranks (run.comm) and where the time goes: a run of
several ranks records the path it took and why, and, per kernel, each
rank's share of time communicating and waiting; a path the machine lacks is
the deck's error; ranks that share a GPU are named on stderr and in the
results; a 4-rank job on a node of 4 GPUs runs on 4 distinct GPUs; on a
node of several GPUs, mgs's sums go through peer memory and still verify."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT, miniapp

LIMIT_S = 300
CONTACT_SMALL = os.path.join(ROOT, "inputs", "contact", "small.yaml")
STREAM_SMALL = os.path.join(ROOT, "inputs", "stream", "small.yaml")
MGS_SMALL = os.path.join(ROOT, "inputs", "mgs", "small.yaml")


def run(mpiexec, ranks, exe, args, tmp_path):
    """(exit code, stdout + stderr, results or None) of one launch."""
    output = tmp_path / "out.json"
    command = [mpiexec, "-n", str(ranks), exe, *args, "--quiet", "--output", str(output)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT_S, env=env,
                          stdin=subprocess.DEVNULL)
    doc = json.loads(output.read_text()) if output.exists() else None
    return done.returncode, done.stdout + done.stderr, doc


def gpus_visible():
    """GPUs nvidia-smi lists (0 where there is none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    return sum(1 for line in listed.stdout.splitlines() if line.startswith("GPU "))


def test_partitioned_run_records_path_and_shares(mpiexec, tmp_path):
    code, out, doc = run(mpiexec, 2, miniapp("contact"),
                         [CONTACT_SMALL, "--set", "contact.decomposition=partitioned",
                          "--set", "contact.steps=3", "--set", "run.energy=off"], tmp_path)
    assert code == 0, out
    comm = doc["mpi"]["comm"]
    assert comm["requested"] == "auto"
    assert comm["path"] in ("host memory", "host staging", "gpu-aware MPI", "nccl")
    assert comm["why"]
    builds = [k for k in doc["kernels"] if k["name"].endswith(".build")]
    assert builds
    for k in doc["kernels"]:
        c = k["comm"]
        assert c["path"] == comm["path"]
        for key in ("share", "waiting_share", "seconds_per_execution"):
            assert len(c[key]) == 2 and all(v >= 0 for v in c[key]), (k["name"], c)
        assert all(s <= 1 for s in c["share"])
    # The rebuild exchanges ghosts: every rank spends some of it communicating.
    for k in builds:
        assert all(s > 0 for s in k["comm"]["share"]), (k["name"], k["comm"])
        assert min(k["comm"]["waiting_share"]) == 0  # the least rank waits for no one
    # The statistics sweeps read only local data: no exchange inside them.
    for k in doc["kernels"]:
        if k["name"].endswith(".stats"):
            assert max(k["comm"]["share"]) == 0, (k["name"], k["comm"])


def test_split_dynamic_rows_grow_when_whole_ones_do(mpiexec, tmp_path):
    """dynamic-ragged's capacity is agreed over the ranks: a partitioned run
    grows at the steps, and to the sizes, that one rank holding every row
    does, not each rank at steps of its own."""
    capacities = []
    for ranks in (1, 2):
        code, out, doc = run(mpiexec, ranks, miniapp("contact"),
                             [CONTACT_SMALL, "--set", "contact.decomposition=partitioned",
                              "--set", "contact.storage=[dynamic-ragged]",
                              "--set", "contact.capacity=8", "--set", "contact.steps=4",
                              "--set", "run.energy=off"], tmp_path)
        assert code == 0, out
        capacities.append([s["dynamic-ragged"]["capacity"] for s in doc["problem"]["per_step"]])
    assert len(set(capacities[0])) > 1, capacities  # the rows grew at more than one step
    assert capacities[1] == capacities[0]


def test_one_rank_has_no_shares(tmp_path):
    output = tmp_path / "one.json"
    done = subprocess.run([miniapp("stream"), STREAM_SMALL, "--quiet", "--output", str(output)],
                          capture_output=True, text=True, timeout=LIMIT_S,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(output.read_text())
    assert all("comm" not in k for k in doc["kernels"])
    assert doc["mpi"]["shared_devices"] == []


def test_a_path_the_machine_lacks_is_the_decks_error(mpiexec, tmp_path):
    code, out, doc = run(mpiexec, 2, miniapp("stream"),
                         [STREAM_SMALL, "--set", "run.comm=gpu-aware-mpi"], tmp_path)
    if doc is not None:
        pytest.skip("this machine's MPI reads device memory: gpu-aware-mpi is available")
    assert code == 2, out
    # One line naming where the value came from, the key and why.
    assert "--set run.comm=gpu-aware-mpi: run.comm: gpu-aware-mpi" in out, out


def test_ranks_sharing_a_gpu_are_named(mpiexec, tmp_path):
    if gpus_visible() != 1:
        pytest.skip("needs a node where exactly one GPU is visible")
    code, out, doc = run(mpiexec, 2, miniapp("stream"), [STREAM_SMALL], tmp_path)
    assert code == 0, out
    assert "share the GPU" in out, out
    shared = doc["mpi"]["shared_devices"]
    assert len(shared) == 1 and shared[0]["ranks"] == [0, 1], shared
    assert doc["mpi"]["comm"]["path"] != "nccl"  # NCCL needs a GPU a rank


def test_a_rank_on_every_gpu_of_the_node(mpiexec, tmp_path):
    """As many ranks as visible GPUs, 4 to 8 (a node of four or eight): each
    on a GPU of its own."""
    ranks = min(gpus_visible(), 8)
    if ranks < 4:
        pytest.skip("needs a node with 4 or more visible GPUs")
    code, out, doc = run(mpiexec, ranks, miniapp("stream"), [STREAM_SMALL], tmp_path)
    assert code == 0, out
    uuids = [r["device"]["uuid"] for r in doc["ranks"]]
    assert len(set(uuids)) == ranks, uuids
    assert doc["mpi"]["shared_devices"] == []
    assert "share the GPU" not in out


@pytest.mark.parametrize("algorithm", ["mgs", "mgs-fused", "cgs2"])
def test_small_sums_through_peer_memory_verify(mpiexec, tmp_path, algorithm):
    ranks = min(gpus_visible(), 4)
    if ranks < 2:
        pytest.skip("needs a node with 2 or more visible GPUs")
    code, out, doc = run(mpiexec, ranks, miniapp("mgs"),
                         [MGS_SMALL, "--set", f"mgs.algorithm={algorithm}"], tmp_path)
    assert code == 0, out  # the factorization's checks passed on every rank
    comm = doc["mpi"]["comm"]
    if comm["path"] != "nccl":
        pytest.skip(f"the path is {comm['path']}: {comm['why']}")
    assert comm["small_sums"].startswith("peer memory"), comm
    mgs = [k for k in doc["kernels"] if k["implementation"] == "kokkos"]
    assert mgs and all(max(k["comm"]["share"]) > 0 for k in mgs), mgs


def _item(ranks, rnd, seconds, share=None):
    entry = {"time_s": {"min": seconds}}
    if share is not None:
        entry["comm"] = {"path": "nccl", "share": share, "waiting_share": [0.0, share[1] / 2],
                         "seconds_per_execution": [seconds * s for s in share]}
    return {"job": f"r.n1x{ranks}.r{rnd}", "run": "r", "app": "mgs", "device": "gpu",
            "round": rnd, "process": None, "kernel": "mgs", "implementation": "kokkos",
            "variant": "mgs", "entry": entry, "passed": True, "path": "",
            "deck": {"mpi.ranks": ranks, "mpi.comm": "nccl" if ranks > 1 else "",
                     "job.point": f"r.n1x{ranks}"}}


def test_compare_prints_the_numerators_comm_share():
    from karma_tools.compare import sides
    spec = {"name": "weak", "title": "weak", "metric": "time_s.min", "higher_is_better": False,
            "numerator": {"run": ["r"]}, "denominator": {"run": ["r"], "deck": {"mpi.ranks": 1}},
            "match": [], "label": ["mpi.ranks", "mpi.comm"], "same_variant": False,
            "same_kernel": True, "aggregate": ["worst"]}
    items = [_item(1, 1, 1.0), _item(2, 1, 1.1, [0.08, 0.12]),
             _item(1, 2, 1.0), _item(2, 2, 1.05, [0.05, 0.07])]
    table = sides.ratio_table(spec, items)
    assert [row["label"] for row in table["rows"]] == [[2, "nccl"]]
    text = "\n".join(sides.markdown([table]))
    assert "comm share (wait)" in text
    assert "| 12% (wait 6%) |" in text, text  # the largest of any rank and round
    one_rank = sides.ratio_table(spec, [_item(1, 1, 1.0), _item(2, 1, 1.1)])
    assert "comm share" not in "\n".join(sides.markdown([one_rank]))
