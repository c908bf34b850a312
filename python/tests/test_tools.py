"""What every tool shares: --help, --version, and working from the build's
bin/ and once installed (PREFIX/bin beside the mini-apps, links into the
tools' environment in PREFIX/lib/karma/python)."""

import glob
import os
import re
import subprocess

import pytest

from conftest import DATA, ROOT, SAMPLES, build_bin, built, entry_points, load_json, tool

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


def programs():
    """What a build's bin/ and PREFIX/bin hold: every tool's entry point
    (pyproject.toml's [project.scripts]) and every mini-app
    (karma_add_miniapp in miniapps/<app>/CMakeLists.txt)."""
    apps = set()
    for path in glob.glob(os.path.join(ROOT, "miniapps", "*", "CMakeLists.txt")):
        with open(path) as f:
            apps.update(re.findall(r"^karma_add_miniapp\((\w+)", f.read(), re.M))
    assert {"stream", "microbench"} <= apps, apps
    return set(entry_points()) | {f"karma-{app}" for app in apps}


def test_the_build_bin_holds_every_program(tmp_path):
    """build/<preset>/bin: every mini-app and tool, as PREFIX/bin once
    installed; karma-batch run from there finds the mini-apps beside it."""
    bin_dir = build_bin()
    assert set(os.listdir(bin_dir)) == programs()
    for name in programs():
        assert os.access(os.path.join(bin_dir, name), os.X_OK), name
    r = subprocess.run([os.path.join(bin_dir, "karma-validate-results"), "--version"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == \
        f"karma-validate-results {project_version()}", r.stderr
    out = tmp_path / "jobs"
    r = subprocess.run([os.path.join(bin_dir, "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    job = load_json(out / "campaign.json")["jobs"][0]
    assert job["executable"] == os.path.join(bin_dir, "karma-stream")


def test_installed_tools_work(tmp_path):
    """cmake --install into a scratch prefix: PREFIX/bin holds every mini-app
    and tool; the tools work from there."""
    build = built("KARMA_BUILD_DIR", "a configured build directory")
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(os.listdir(prefix / "bin")) == programs()
    for name in programs():
        assert os.access(prefix / "bin" / name, os.X_OK), name
    for name in TOOLS:
        r = subprocess.run([str(prefix / "bin" / name), "--version"], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"
    package = list(prefix.glob("lib/karma/python/lib/python3*/site-packages/karma_tools"))
    assert len(package) == 1 and (package[0] / "campaign.py").is_file(), package
    for schema in ("results", "campaign"):
        assert (package[0] / "schemas" / f"{schema}.schema.json").is_file()
    assert (prefix / "share" / "karma" / "spack" / "package.py").is_file()
    # The installed karma-batch finds the installed decks and the mini-apps
    # beside it, and writes job scripts that call them and the installed
    # karma-envcapture.
    out = tmp_path / "jobs"
    env = {k: v for k, v in os.environ.items() if k != "KARMA_INPUTS"}
    r = subprocess.run([str(prefix / "bin" / "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    script = (out / "jobs" / "stream-scaling.weak.n1x4.sbatch").read_text()
    assert f"{prefix}/bin/karma-envcapture --output" in script
    assert f" {prefix}/bin/karma-stream {prefix}/share/karma/inputs/stream/" in script
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
