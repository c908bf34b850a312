"""karma-envcapture: what it records, from this machine and from a stand-in
nvidia-smi and batch job."""

import os

from conftest import load_json, tool

NVIDIA_SMI = """#!/bin/sh
# Stand-in for nvidia-smi: the lines of `nvidia-smi -q` the capture reads.
if [ "$1" = "-q" ]; then cat <<'Q'
==============NVSMI LOG==============
Driver Version                            : 580.159.04
CUDA Version                              : 13.0
Attached GPUs                             : 2
GPU 00000000:00:06.0
    Product Name                          : NVIDIA H200
GPU 00000000:00:07.0
    Product Name                          : NVIDIA H200
Q
else echo "GPU0 X"; fi
"""


def test_capture_of_a_node_in_a_batch_job(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(NVIDIA_SMI)
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_ID": "4242",
           "SLURM_NTASKS": "8", "LOADEDMODULES": "gcc/12.2.0:cuda/12.4",
           "_LMFILES_": "/m/gcc/12.2.0:/m/cuda/12.4", "OMP_PROC_BIND": "spread",
           "CUDA_VISIBLE_DEVICES": "0,1"}
    out = tmp_path / "env"
    r = tool("karma-envcapture", "--output", out, env=env)
    assert r.returncode == 0, r.stderr
    assert "2 NVIDIA GPU(s)" in r.stdout
    doc = load_json(out / "environment.json")
    assert doc["karma_environment"] == 1
    assert doc["gpu"] == {"count": 2, "products": ["NVIDIA H200", "NVIDIA H200"],
                          "driver_version": "580.159.04", "cuda_version": "13.0"}
    assert doc["scheduler"]["scheduler"] == "slurm" and doc["scheduler"]["job_id"] == "4242"
    assert doc["scheduler"]["variables"]["SLURM_NTASKS"] == "8"
    assert doc["modules"]["loaded"] == ["gcc/12.2.0", "cuda/12.4"]
    assert doc["runtime_variables"]["OMP_PROC_BIND"] == "spread"
    assert doc["runtime_variables"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    # This machine's own facts: lscpu and /proc/meminfo are on every Linux.
    assert int(doc["cpu"]["CPU(s)"]) == os.cpu_count()
    assert doc["memory"]["MemTotal"] > 0
    assert doc["compilers"]["c++"]["exit_code"] == 0 and doc["compilers"]["c++"]["version"]
    for name in ("lscpu.txt", "meminfo.txt", "nvidia-smi.txt", "nvidia-smi-topo.txt",
                 "modules.txt", "scheduler-environment.txt", "compilers.txt"):
        assert (out / name).stat().st_size > 0, name
    assert "SLURM_JOB_ID=4242" in (out / "scheduler-environment.txt").read_text()


def test_missing_commands_are_recorded_not_fatal(tmp_path):
    # A PATH with nothing in it: every command is absent.
    r = tool("karma-envcapture", "-o", tmp_path / "env", "--quiet", env={"PATH": str(tmp_path)})
    assert r.returncode == 0 and r.stdout == ""
    doc = load_json(tmp_path / "env" / "environment.json")
    assert doc["commands"]["nvidia-smi"] is None and doc["gpu"] is None
    assert doc["scheduler"]["scheduler"] is None
    assert doc["memory"]["MemTotal"] > 0  # /proc/meminfo needs no command


def test_output_is_replaced_whole_or_not_at_all(tmp_path):
    out = tmp_path / "env"
    out.mkdir()
    (out / "old.txt").write_text("from an earlier capture")
    assert tool("karma-envcapture", "-o", out, "--quiet").returncode == 0
    assert not (out / "old.txt").exists() and (out / "environment.json").exists()
    blocked = tmp_path / "file"
    blocked.write_text("x")
    r = tool("karma-envcapture", "-o", blocked / "env")
    assert r.returncode == 3 and "cannot write" in r.stderr
