"""Shared helpers of the tools' tests. Plain `pytest` (in python/) tests the
sources: the tools' entry points are made for this run from pyproject.toml,
as pip would make them. ctest (python/CMakeLists.txt) sets KARMA_TOOLS_BIN
to the build's installed entry points, and KARMA_STREAM and KARMA_BUILD_DIR
to this build's karma-stream and build directory, whose bin/ holds every
mini-app and tool (build_bin, miniapp)."""

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(TESTS)
SRC = os.path.join(PYTHON, "src")
ROOT = os.path.dirname(PYTHON)
SCRIPTS = os.path.join(ROOT, "scripts")
DATA = os.path.join(TESTS, "data")
SAMPLES = os.path.join(DATA, "results")

sys.dont_write_bytecode = True


def entry_points():
    """{tool name: "module:function"} from pyproject.toml's [project.scripts]."""
    import tomllib

    with open(os.path.join(PYTHON, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def _source_entry_points():
    """A folder of entry points that run the sources under this Python."""
    folder = tempfile.mkdtemp(prefix="karma-tools-bin-")
    for name, target in entry_points().items():
        module, function = target.split(":")
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
                    f"sys.exit({function}())\n")
        os.chmod(path, 0o755)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
    return folder


TOOLS_BIN = os.environ.get("KARMA_TOOLS_BIN") or _source_entry_points()
# Job scripts and stand-ins call the tools by name.
os.environ["PATH"] = TOOLS_BIN + os.pathsep + os.environ.get("PATH", "")


def tool_path(name):
    return os.path.join(TOOLS_BIN, name)


# A stand-in mini-app: `karma-batch generate` refuses a campaign whose
# programs are not there, and a stand-in is there; it lists no deck keys
# (generate says so) and runs nothing.
STAND_IN = "#!/bin/sh\necho \"$0: a test's stand-in, not a mini-app\" >&2\nexit 1\n"


def stand_ins(folder=None, apps=None, text=STAND_IN):
    """A folder (made, or `folder`) holding an executable karma-<app>, with
    `text`, for each mini-app of the suite (or `apps`): a bin/ for
    `karma-batch generate --bin-dir` where a test's jobs never run them."""
    from karma_tools import APPS

    folder = str(folder) if folder else tempfile.mkdtemp(prefix="karma-stand-ins-")
    os.makedirs(folder, exist_ok=True)
    for app in apps or APPS:
        path = os.path.join(folder, f"karma-{app}")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    return folder


@functools.lru_cache(maxsize=None)
def stand_in_bin():
    """One folder of stand-ins (stand_ins) for this test process, removed at its end."""
    folder = stand_ins()
    atexit.register(shutil.rmtree, folder, True)
    return folder


def pytest_collection_modifyitems(config, items):
    """KARMA_TEST_SHARD=i/n keeps every n-th test from the i-th (from 0): ctest
    runs a long file as n tests side by side (scripts/CMakeLists.txt)."""
    shard = os.environ.get("KARMA_TEST_SHARD")
    if not shard:
        return
    index, count = (int(x) for x in shard.split("/"))
    config.hook.pytest_deselected(items=[t for k, t in enumerate(items) if k % count != index])
    items[:] = [t for k, t in enumerate(items) if k % count == index]


def tool(name, *args, env=None, timeout=120, cwd=None):
    """Runs the tool `name` (karma-compare, ...); returns the CompletedProcess
    (text)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([tool_path(name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=cwd, stdin=subprocess.DEVNULL)


@pytest.fixture
def mpiexec():
    """The build's MPI launcher (ctest sets KARMA_MPIEXEC); a build without
    MPI skips the test."""
    path = os.environ.get("KARMA_MPIEXEC")
    if not path:
        pytest.skip("this build has no MPI (KARMA_ENABLE_MPI=OFF)")
    return path


def built(variable, what):
    """A path of the build that ctest passes in the environment. Plain
    `pytest` has no build: the test is skipped, saying what it needs."""
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"needs {what} from a build: ctest sets {variable} (by hand: "
                    f"{variable}=build/default/... pytest ...)")
    if not os.path.exists(path):
        pytest.fail(f"{variable}={path} does not exist; it must name {what}")
    return path


def build_bin():
    """This build's bin/ (KARMA_BUILD_DIR/bin): its mini-apps and its tools'
    entry points, as `cmake --install` puts them in PREFIX/bin."""
    return os.path.join(built("KARMA_BUILD_DIR", "the build folder (its bin/)"), "bin")


def miniapp(app):
    """This build's karma-<app> (build_bin)."""
    path = os.path.join(build_bin(), f"karma-{app}")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (cmake --build ... --target karma-{app})")
    return path


@pytest.fixture
def stream_exe():
    return built("KARMA_STREAM", "the karma-stream executable")


@pytest.fixture
def validator():
    return tool_path("karma-validate-results")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def load_manifest(out):
    """OUT/campaign.json with its jobs' paths, which are relative to OUT, made absolute."""
    manifest = load_json(os.path.join(out, "campaign.json"))
    for job in manifest["jobs"]:
        for key in ("results_dir", "results_file"):
            job[key] = os.path.join(out, job[key])
    return manifest


def cpu_count(listed):
    """The number of CPUs in a Cpus_allowed_list such as 0-3,8."""
    count = 0
    for part in listed.split(","):
        lo, _, hi = part.partition("-")
        count += int(hi or lo) - int(lo) + 1
    return count


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path
