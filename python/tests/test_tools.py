"""What every tool shares: --help, --version, and working once installed
(PREFIX/bin beside the mini-apps, links into the tools' environment in
PREFIX/lib/karma/python)."""

import os
import re
import subprocess

import pytest

from conftest import DATA, ROOT, SAMPLES, built, entry_points, tool

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


@pytest.mark.parametrize("name", sorted(entry_points()))
def test_every_entry_point_answers_version(name):
    r = tool(name, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}", r.stderr


def test_installed_tools_work(tmp_path):
    """cmake --install's rules for the tools, run into a scratch prefix."""
    build = built("KARMA_BUILD_DIR", "a configured build directory")
    prefix = tmp_path / "prefix"
    for part in ("python", "scripts"):
        r = subprocess.run(["cmake", f"-DCMAKE_INSTALL_PREFIX={prefix}", "-P",
                            os.path.join(build, part, "cmake_install.cmake")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    for name in entry_points():
        exe = prefix / "bin" / name
        assert os.access(exe, os.X_OK), name
    for name in TOOLS:
        r = subprocess.run([str(prefix / "bin" / name), "--version"], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"
    package = list(prefix.glob("lib/karma/python/lib/python3*/site-packages/karma_tools"))
    assert len(package) == 1 and (package[0] / "campaign.py").is_file(), package
    for schema in ("results", "campaign"):
        assert (package[0] / "schemas" / f"{schema}.schema.json").is_file()
    assert (prefix / "share" / "karma" / "spack" / "package.py").is_file()
    # The installed karma-batch finds its decks through KARMA_INPUTS and
    # writes job scripts that call the installed karma-envcapture.
    out = tmp_path / "jobs"
    r = subprocess.run([str(prefix / "bin" / "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out),
                        "--no-key-check"], capture_output=True, text=True,
                       env=dict(os.environ, KARMA_INPUTS=os.path.join(ROOT, "inputs")))
    assert r.returncode == 0, r.stderr
    script = (out / "jobs" / "stream-scaling.weak.n1x4.sbatch").read_text()
    assert f"{prefix}/bin/karma-envcapture --output" in script
    r = subprocess.run([str(prefix / "bin" / "karma-compare"),
                        os.path.join(SAMPLES, "machine-a"), os.path.join(SAMPLES, "machine-b")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "# karma comparison" in r.stdout
    # The installed karma-score scores against the reference installed beside it.
    shipped = prefix / "share" / "karma" / "campaigns" / "procurement" / "reference-h100.json"
    r = subprocess.run([str(prefix / "bin" / "karma-score"),
                        os.path.join(ROOT, "results", "procurement", "h200.tar.xz")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and f"(`{shipped}`)" in r.stdout, r.stdout + r.stderr
