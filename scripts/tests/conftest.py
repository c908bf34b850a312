"""Shared helpers of the tools' tests. ctest runs each test file through
scripts/CMakeLists.txt, which sets KARMA_STREAM, KARMA_VALIDATE and
KARMA_BUILD_DIR to this build's karma-stream, scripts/karma-validate-results
(run it under sys.executable) and the build directory."""

import json
import os
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(TESTS)
ROOT = os.path.dirname(SCRIPTS)
DATA = os.path.join(TESTS, "data")
SAMPLES = os.path.join(DATA, "results")

sys.path.insert(0, SCRIPTS)
sys.dont_write_bytecode = True
# Before any test imports jsonschema or ruamel.yaml: karma_tools adds where the
# set-up unpacks them on a node that lacks them (KARMA_PYTHON_PACKAGES).
import karma_tools  # noqa: E402,F401


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
    """Runs scripts/<name> under this Python (the one with pytest and
    matplotlib); returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=cwd, stdin=subprocess.DEVNULL)


def built(variable, what):
    """A path ctest passes in the environment; a clear failure without it."""
    path = os.environ.get(variable)
    if not path or not os.path.exists(path):
        pytest.fail(f"{variable} must name {what} (ctest sets it; by hand: "
                    f"{variable}=build/default/... pytest ...)")
    return path


@pytest.fixture
def stream_exe():
    return built("KARMA_STREAM", "the karma-stream executable")


@pytest.fixture
def validator():
    return built("KARMA_VALIDATE", "scripts/karma-validate-results")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path
