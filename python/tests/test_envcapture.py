"""karma-envcapture: what it records, from this machine and from a stand-in
nvidia-smi and batch job."""

import os
import sys
import time

import pytest

from conftest import load_json, tool

NVIDIA_SMI = """#!/bin/sh
# Stand-in for nvidia-smi: the lines of `nvidia-smi -q` the capture reads.
if [ "$1" = "-q" ] && [ "$2" != "-x" ]; then cat <<'Q'
==============NVSMI LOG==============
Driver Version                            : 580.159.04
CUDA Version                              : 13.0
Attached GPUs                             : 2
GPU 00000000:00:06.0
    Product Name                          : NVIDIA H200
GPU 00000000:00:07.0
    Product Name                          : NVIDIA H200
Q
elif [ "$1" = "-q" ] && [ "$2" = "-x" ]; then cat <<'X'
<?xml version="1.0" ?>
<nvidia_smi_log>
  <driver_version>580.159.04</driver_version>
  <gpu id="00000000:00:06.0">
    <product_name>NVIDIA H200</product_name>
    <clocks><graphics_clock>345 MHz</graphics_clock><sm_clock>345 MHz</sm_clock>
      <mem_clock>3201 MHz</mem_clock></clocks>
    <max_clocks><graphics_clock>1980 MHz</graphics_clock><sm_clock>1980 MHz</sm_clock>
      <mem_clock>3201 MHz</mem_clock></max_clocks>
    <gpu_power_readings><current_power_limit>700.00 W</current_power_limit>
      <max_power_limit>700.00 W</max_power_limit></gpu_power_readings>
  </gpu>
  <gpu id="00000000:00:07.0">
    <product_name>NVIDIA H200</product_name>
    <clocks><sm_clock>1980 MHz</sm_clock><mem_clock>N/A</mem_clock></clocks>
    <power_readings><power_limit>450.00 W</power_limit></power_readings>
  </gpu>
</nvidia_smi_log>
X
else echo "GPU0 X"; fi
"""
# Stand-ins for the interconnect's tools, printing the lines the capture reads.
IBV_DEVINFO = """#!/bin/sh
printf 'hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.1002\n'
printf '\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_width:\t\t4X (2)\n'
printf '\t\t\tactive_speed:\t\t100.0 Gbps (128)\n\t\t\tlink_layer:\t\tInfiniBand\n'
printf 'hca_id:\tmlx5_1\n\tfw_ver:\t\t\t\t28.39.1002\n'
printf '\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n'
"""
FI_INFO = """#!/bin/sh
printf 'provider: verbs;ofi_rxm\n    fabric: IB-0xfe80\nprovider: verbs;ofi_rxm\n'
printf '    fabric: IB-0xfe80\nprovider: shm\n    fabric: shm\n'
"""
UCX_INFO = """#!/bin/sh
if [ "$1" = "-v" ]; then echo "# Library version: 1.16.0"; echo "# Library path: /opt/ucx"
else printf '#      Transport: rc_mlx5\n#         Device: mlx5_0:1\n#      Transport: self\n'
     printf '#         Device: memory\n'; fi
"""


def test_capture_of_a_node_in_a_batch_job(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("nvidia-smi", NVIDIA_SMI), ("ibv_devinfo", IBV_DEVINFO),
                       ("fi_info", FI_INFO), ("ucx_info", UCX_INFO)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
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
    devices = doc["gpu"].pop("devices")
    assert doc["gpu"] == {"count": 2, "products": ["NVIDIA H200", "NVIDIA H200"],
                          "driver_version": "580.159.04", "cuda_version": "13.0"}
    # From the XML: clocks now and at most, the power limits (older drivers'
    # section name too); N/A and absent values are null, never made up.
    assert devices[0] == {
        "pci_bus_id": "00000000:00:06.0", "product": "NVIDIA H200",
        "clocks.graphics_clock_MHz": 345, "clocks.sm_clock_MHz": 345,
        "clocks.mem_clock_MHz": 3201, "max_clocks.graphics_clock_MHz": 1980,
        "max_clocks.sm_clock_MHz": 1980, "max_clocks.mem_clock_MHz": 3201,
        "current_power_limit_W": 700, "max_power_limit_W": 700}
    assert devices[1]["clocks.sm_clock_MHz"] == 1980 and devices[1]["clocks.mem_clock_MHz"] is None
    assert devices[1]["power_limit_W"] == 450 and devices[1]["max_clocks.sm_clock_MHz"] is None
    assert doc["commands"]["nvidia-smi-xml"]["file"] == "nvidia-smi.xml"
    assert (out / "nvidia-smi.xml").read_text().startswith("<?xml")
    # The interconnect.
    ibv = doc["interconnect"]["ibverbs"]
    assert [d["hca_id"] for d in ibv] == ["mlx5_0", "mlx5_1"]
    assert ibv[0]["fw_ver"] == "28.39.1002" and ibv[0]["transport"] == "InfiniBand (0)"
    assert ibv[0]["ports"] == [{"port": "1", "state": "PORT_ACTIVE (4)", "active_width": "4X (2)",
                                "active_speed": "100.0 Gbps (128)", "link_layer": "InfiniBand"}]
    assert ibv[1]["ports"] == [{"port": "1", "state": "PORT_DOWN (1)"}]
    assert doc["interconnect"]["libfabric_providers"] == ["verbs;ofi_rxm", "shm"]
    assert doc["interconnect"]["ucx"] == {"version": "1.16.0",
                                          "transports": ["rc_mlx5/mlx5_0:1", "self/memory"]}
    for key, name in (("ibv_devinfo", "ibv_devinfo.txt"), ("fi_info", "fi_info.txt"),
                      ("ucx_info", "ucx_info.txt"), ("ucx_info-devices", "ucx_info-devices.txt")):
        assert doc["commands"][key]["file"] == name and (out / name).stat().st_size > 0, key
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


# Stand-in for nvidia-smi on a node of two GPUs that, as the real one, ignores
# CUDA_VISIBLE_DEVICES and reports the GPUs of `-i LIST` (indices or UUIDs) alone.
SELECTING_SMI = """#!{python}
import sys
args, gpus = sys.argv[1:], [("00000000:00:06.0", "GPU-aaaa"), ("00000000:00:07.0", "GPU-bbbb")]
if "-i" in args:
    want = args[args.index("-i") + 1].split(",")
    gpus = [g for k, g in enumerate(gpus) if str(k) in want or g[1] in want]
if "-x" in args:
    print("<nvidia_smi_log>" + "".join(f'<gpu id="{{bus}}"><product_name>NVIDIA H200'
                                       "</product_name></gpu>" for bus, _ in gpus) +
          "</nvidia_smi_log>")
elif args[:1] == ["-q"]:
    print("Driver Version : 580.159.04")
    for bus, uuid in gpus:
        print(f"GPU {{bus}}\\n    Product Name : NVIDIA H200\\n    GPU UUID : {{uuid}}")
"""


@pytest.mark.parametrize("visible, found", [
    ("1", ["GPU-bbbb"]), ("GPU-aaaa", ["GPU-aaaa"]), ("0, 1", ["GPU-aaaa", "GPU-bbbb"]),
    ("MIG-0f2c", ["GPU-aaaa", "GPU-bbbb"]), (None, ["GPU-aaaa", "GPU-bbbb"])])
def test_a_job_shown_some_gpus_captures_those(tmp_path, monkeypatch, visible, found):
    """One campaign on each GPU of a node: a job's CUDA_VISIBLE_DEVICES (indices
    or UUIDs) is the node's GPUs its capture reports; MIG instances or none: all.
    None means unset here too, also where the test command itself runs on some
    GPUs of a node (a batch job's CUDA_VISIBLE_DEVICES)."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    smi = tmp_path / "nvidia-smi"
    smi.write_text(SELECTING_SMI.format(python=sys.executable))
    smi.chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    env.update({"CUDA_VISIBLE_DEVICES": visible} if visible else {})
    r = tool("karma-envcapture", "--output", tmp_path / "env", env=env)
    assert r.returncode == 0, r.stderr
    doc = load_json(tmp_path / "env" / "environment.json")
    assert doc["gpu"]["count"] == len(found) and len(doc["gpu"]["devices"]) == len(found)
    text = (tmp_path / "env" / "nvidia-smi.txt").read_text()
    assert [u for u in ("GPU-aaaa", "GPU-bbbb") if u in text] == found
    shown = ["-i", visible.replace(" ", "")] if visible and visible[0] != "M" else []
    assert doc["commands"]["nvidia-smi"]["argv"][1:] == ["-q", *shown]
    assert doc["commands"]["nvidia-smi-topo"]["argv"][1:] == ["topo", "-m"]  # the node's links


def test_missing_commands_are_recorded_not_fatal(tmp_path):
    # A PATH with nothing in it: every command is absent.
    r = tool("karma-envcapture", "-o", tmp_path / "env", "--quiet", env={"PATH": str(tmp_path)})
    assert r.returncode == 0 and r.stdout == ""
    doc = load_json(tmp_path / "env" / "environment.json")
    assert doc["commands"]["nvidia-smi"] is None and doc["gpu"] is None
    for key in ("topology", "nvidia-smi-xml", "rocm-smi-json", "ibv_devinfo", "fi_info",
                "ucx_info"):
        assert doc["commands"][key] is None, key
    assert doc["interconnect"] == {"ibverbs": None, "libfabric_providers": None, "ucx": None}
    # No file for a command that did not run (compilers.txt: a $CXX named by path may).
    assert set(os.listdir(tmp_path / "env")) - {"compilers.txt"} == {
        "environment.json", "meminfo.txt", "modules.txt", "scheduler-environment.txt"}
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
    assert r.returncode == 2 and "cannot write" in r.stderr


def test_topology_is_hwlocs_xml():
    # Debian's hwloc on this machine (scripts/bootstrap.sh installs it).
    import shutil
    import xml.etree.ElementTree as ElementTree

    if not shutil.which("lstopo-no-graphics"):
        # As the Slurm test: where the set-up could not install hwloc (an
        # offline GPU node), skipped with the reason.
        pytest.skip("lstopo-no-graphics is not installed (scripts/bootstrap.sh installs hwloc "
                    "where apt can)")
    from karma_tools import envcapture

    doc, files = envcapture.capture(timeout=20)
    assert doc["commands"]["topology"]["exit_code"] == 0
    root = ElementTree.fromstring(files[doc["commands"]["topology"]["file"]])
    assert root.tag == "topology"
    cores = [o for o in root.iter("object") if o.get("type") == "PU"]
    assert len(cores) == os.cpu_count()


def test_a_command_that_hangs_is_cut_off(tmp_path):
    # A tool whose child keeps the output open: the whole session is ended.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fi_info").write_text("#!/bin/sh\necho started\nsleep 30\necho never\n")
    (bin_dir / "fi_info").chmod(0o755)
    began = time.monotonic()
    r = tool("karma-envcapture", "-o", tmp_path / "env", "--quiet", "--timeout", "1",
             env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - began < 20
    doc = load_json(tmp_path / "env" / "environment.json")
    assert doc["commands"]["fi_info"]["exit_code"] is None
    assert (tmp_path / "env" / "fi_info.txt").read_text() == "(no answer within 1 s)"
    assert doc["interconnect"]["libfabric_providers"] is None


def test_the_commands_run_at_once(tmp_path):
    # Each of two tools answers only once it sees the other started: one after
    # the other, the first would wait out its time limit.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, other in (("fi_info", "ibv_devinfo"), ("ibv_devinfo", "fi_info")):
        (bin_dir / name).write_text(
            f"#!/bin/sh\ntouch {tmp_path}/{name}.started\n"
            f"for i in $(seq 100); do\n  [ -e {tmp_path}/{other}.started ] && exit 0\n"
            "  sleep 0.1\ndone\n"
            "exit 1\n")
        (bin_dir / name).chmod(0o755)
    r = tool("karma-envcapture", "-o", tmp_path / "env", "--quiet", "--timeout", "8",
             env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    commands = load_json(tmp_path / "env" / "environment.json")["commands"]
    assert commands["fi_info"]["exit_code"] == 0 and commands["ibv_devinfo"]["exit_code"] == 0
