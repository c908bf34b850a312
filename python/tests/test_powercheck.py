"""karma-power-check: windows lined up with nvidia-smi samples, the verdict
and the exit codes."""
import json
import os
import subprocess
import sys

from conftest import tool_path

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = tool_path("karma-power-check")


def write_smi(path, start, watts, seconds, step=0.02, header=None):
    header = header or "timestamp, power.draw [W], power.draw.instant [W]"
    import datetime
    lines = [header]
    t = start
    while t < start + seconds:
        stamp = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
        lines.append(stamp.strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
                     + f", {watts(t) - 50:.2f}, {watts(t):.2f}")
        t += step
    lines.append("2026/11/23 01:00:00.000, [N/A], [N/A]")
    path.write_text("\n".join(lines) + "\n")


def write_result(path, windows):
    kernels = []
    for name, (t0, t1, w) in windows.items():
        kernels.append({"name": name, "energy": {
            "status": "measured", "average_power_W": w, "window_unix_s": [t0, t1]}})
    kernels.append({"name": "off", "energy": {"status": "off"}})
    path.write_text(json.dumps({"app": "stream", "kernels": kernels}))


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def test_agreeing_and_differing_windows(tmp_path):
    start = 1_800_000_000.0

    def watts(t):  # 400 W in the first window, 600 W in the second
        return 400.0 if t < start + 2 else 600.0

    write_smi(tmp_path / "smi.csv", start, watts, 4)
    write_result(tmp_path / "a.json", {"copy": (start + 0.5, start + 1.5, 410.0),
                                       "triad": (start + 2.5, start + 3.5, 600.0)})
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "smi.csv"),
            "--markdown", str(tmp_path / "t.md"))
    assert r.returncode == 0, r.stderr
    assert "| copy | 1.00 | " in r.stdout and "| 410.0 | 400.0 | 1.025 | agrees |" in r.stdout
    assert "| 600.0 | 600.0 | 1.000 | agrees |" in r.stdout
    assert "power.draw.instant" in r.stdout
    assert (tmp_path / "t.md").read_text() == r.stdout

    write_result(tmp_path / "b.json", {"copy": (start + 0.5, start + 1.5, 460.0)})
    r = run(str(tmp_path / "b.json"), "--nvidia-smi", str(tmp_path / "smi.csv"))
    assert r.returncode == 1
    assert "1.150 | **differs**" in r.stdout


def test_utc_offset_and_older_drivers(tmp_path):
    start = 1_800_000_000.0
    # A machine two hours east of UTC writes its local time; only power.draw.
    write_smi(tmp_path / "smi.csv", start + 7200, lambda t: 300.0, 3,
              header="timestamp, power.draw [W], extra")
    write_result(tmp_path / "a.json", {"dot": (start + 0.5, start + 2.5, 250.0)})
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "smi.csv"),
            "--utc-offset", "2")
    assert r.returncode == 0, r.stderr
    # power.draw is a mean over the last second: the first second is left out.
    assert "`power.draw [W]` samples inside the window after its first 1 s" in r.stdout
    counted = int(r.stdout.split("| dot | 2.00 | ")[1].split(" |")[0])
    assert 49 <= counted <= 51 and "| 250.0 | 250.0 | 1.000 |" in r.stdout
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "smi.csv"),
            "--utc-offset", "2", "--skip", "0")
    assert 99 <= int(r.stdout.split("| dot | 2.00 | ")[1].split(" |")[0]) <= 101
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "smi.csv"),
            "--markdown", str(tmp_path / "t.md"))
    assert r.returncode == 2 and "no window holds enough samples" in r.stderr
    assert not (tmp_path / "t.md").exists()  # bad input: nothing written


def test_bad_input(tmp_path):
    (tmp_path / "smi.csv").write_text("name, power.draw [W]\nH200, 100\n")
    write_result(tmp_path / "a.json", {"copy": (1.0, 2.0, 1.0)})
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "smi.csv"))
    assert r.returncode == 2 and "not nvidia-smi CSV" in r.stderr
    write_smi(tmp_path / "smi.csv", 1.0, lambda t: 1.0, 1)
    (tmp_path / "none.json").write_text(json.dumps({"app": "mgs", "kernels": []}))
    r = run(str(tmp_path / "none.json"), "--nvidia-smi", str(tmp_path / "smi.csv"))
    assert r.returncode == 2 and "no kernel with a measured energy window" in r.stderr
    r = run(str(tmp_path / "a.json"), "--nvidia-smi", str(tmp_path / "gone.csv"))
    assert r.returncode == 2 and r.stderr == \
        f"karma-power-check: error: {tmp_path / 'gone.csv'}: cannot read (No such file or " \
        "directory)\n"


def test_results_of_the_wrong_shape_are_named(tmp_path):
    write_smi(tmp_path / "smi.csv", 1.0, lambda t: 1.0, 1)
    (tmp_path / "cut.json").write_text('{"app": "stream", "kern')
    bad = {"cut.json": None, "list.json": [], "kernels.json": {"app": "stream", "kernels": [3]},
           "window.json": {"app": "stream", "kernels": [{"name": "copy", "energy": {
               "status": "measured", "window_unix_s": [1.0], "average_power_W": 1.0}}]}}
    for name, doc in bad.items():
        if doc is not None:
            (tmp_path / name).write_text(json.dumps(doc))
        r = run(str(tmp_path / name), "--nvidia-smi", str(tmp_path / "smi.csv"))
        assert r.returncode == 2 and r.stderr.startswith(
            f"karma-power-check: error: {tmp_path / name}: ") and "Traceback" not in r.stderr
    (tmp_path / "null.json").write_text(json.dumps({"app": "stream", "kernels": [
        {"name": "copy", "energy": None}]}))
    r = run(str(tmp_path / "null.json"), "--nvidia-smi", str(tmp_path / "smi.csv"))
    assert r.returncode == 2 and "no kernel with a measured energy window" in r.stderr
