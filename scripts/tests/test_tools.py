"""What every tool shares: --help, --version, and working once installed
(bin/ beside the mini-apps, the Python package in share/karma/python)."""

import os
import re
import subprocess
import sys

import pytest

from conftest import DATA, ROOT, SAMPLES, tool

TOOLS = ("karma-batch", "karma-compare", "karma-report", "karma-envcapture")


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(karma VERSION ([0-9.]+)", f.read()).group(1)


@pytest.mark.parametrize("name", TOOLS)
def test_help_and_version(name):
    r = tool(name, "--help")
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {name}"), r.stderr
    assert "exit status" in r.stdout
    r = tool(name, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"


def test_installed_tools_work(tmp_path):
    """cmake --install's rules for the tools, run into a scratch prefix."""
    build = os.environ.get("KARMA_BUILD_DIR")
    if not build or not os.path.isfile(os.path.join(build, "scripts", "cmake_install.cmake")):
        pytest.fail("KARMA_BUILD_DIR must name a configured build (ctest sets it)")
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", f"-DCMAKE_INSTALL_PREFIX={prefix}", "-P",
                        os.path.join(build, "scripts", "cmake_install.cmake")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in TOOLS:
        exe = prefix / "bin" / name
        assert os.access(exe, os.X_OK), name
        r = subprocess.run([sys.executable, str(exe), "--version"], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"
    assert (prefix / "share" / "karma" / "python" / "karma_tools" / "campaign.py").is_file()
    assert (prefix / "share" / "karma" / "spack" / "package.py").is_file()
    for schema in ("results", "campaign"):
        assert (prefix / "share" / "karma" / "schemas" / f"{schema}.schema.json").is_file()
    assert not list(prefix.rglob("__pycache__"))
    # The installed karma-batch finds its decks through KARMA_INPUTS and
    # writes job scripts that call the installed karma-envcapture.
    out = tmp_path / "jobs"
    r = subprocess.run([sys.executable, str(prefix / "bin" / "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out),
                        "--no-key-check"], capture_output=True, text=True,
                       env=dict(os.environ, KARMA_INPUTS=os.path.join(ROOT, "inputs")))
    assert r.returncode == 0, r.stderr
    script = (out / "jobs" / "stream-scaling.weak.n1x4.sbatch").read_text()
    assert f"{prefix}/bin/karma-envcapture --output" in script
    r = subprocess.run([sys.executable, str(prefix / "bin" / "karma-compare"),
                        os.path.join(SAMPLES, "machine-a"), os.path.join(SAMPLES, "machine-b")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "# karma comparison" in r.stdout
