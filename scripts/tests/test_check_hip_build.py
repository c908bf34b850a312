"""scripts/check-hip-build.sh: what it reports and its exit status for a clean
build, a warning, a failed build or set-up, and an architecture hipcc cannot
target. hipcc is a stand-in (g++ that refuses gfx942, as Debian 12's does),
and the script runs in a copy of scripts/ beside a one-file CMake project and
a stand-in bootstrap.sh, so the tests need neither ROCm nor a GPU."""

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "check-hip-build.sh")

# g++ without the HIP-only flags; the probe (a .hip file, which includes HIP's
# header) only gets its object file.
HIPCC = r"""#!/bin/sh
out=""; probe=""; prev=""; args=""
for a in "$@"; do
    case $a in
    --offload-arch=gfx942) echo "clang: error: invalid target ID 'gfx942'" >&2; exit 1 ;;
    --offload-arch=*) ;;
    *.hip) probe=1 ;;
    *) args="$args $a" ;;
    esac
    [ "$prev" = "-o" ] && out=$a
    prev=$a
done
if [ -n "$probe" ]; then : >"$out"; exit 0; fi
exec g++ $args
"""


@pytest.fixture()
def tree(tmp_path):
    """A project root with scripts/check-hip-build.sh, a stand-in bootstrap.sh
    that prints a prefix (or fails when BOOTSTRAP_FAILS is set), and a
    CMake project of main.cpp built with -Wall; returns (root, env)."""
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "scripts" / "check-hip-build.sh")
    bootstrap = root / "scripts" / "bootstrap.sh"
    bootstrap.write_text("#!/bin/sh\n"
                         "echo \"bootstrap: $*\" >&2\n"
                         "[ -z \"$BOOTSTRAP_FAILS\" ] || exit 3\n"
                         f"echo {tmp_path}/kokkos\n")
    bootstrap.chmod(0o755)
    (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\n"
                                         "project(t LANGUAGES CXX)\n"
                                         "add_executable(t main.cpp)\n"
                                         "target_compile_options(t PRIVATE -Wall)\n")
    (root / "main.cpp").write_text("int main() { return 0; }\n")
    hipcc = tmp_path / "hipcc"
    hipcc.write_text(HIPCC)
    hipcc.chmod(0o755)
    env = dict(os.environ, HIPCC=str(hipcc), KARMA_JOBS="2", LC_ALL="C")
    return root, env


def run(root, env, *args):
    return subprocess.run(["bash", str(root / "scripts" / "check-hip-build.sh"), *args],
                          capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


def test_clean_build_passes_and_gfx942_is_skipped(tree, tmp_path):
    root, env = tree
    r = run(root, env, str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    assert "check-hip-build: gfx90a: ok, no warnings" in r.stderr
    assert "check-hip-build: gfx942: skipped: " in r.stderr
    log = (tmp_path / "logs" / "hip-gfx90a.log").read_text()
    assert "bootstrap: --backend hip --arch gfx90a" in log
    assert (root / "build" / "hip-gfx90a" / "t").exists()


def test_a_warning_fails(tree, tmp_path):
    root, env = tree
    (root / "main.cpp").write_text("int main() { int unused; return 0; }\n")
    r = run(root, env, "--arch", "gfx90a", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "gfx90a: FAILED: 1 warning(s)" in r.stderr
    assert "warning:" in (tmp_path / "logs" / "hip-gfx90a.log").read_text()


def test_a_failed_build_fails(tree, tmp_path):
    root, env = tree
    (root / "main.cpp").write_text("int main() { return }\n")
    r = run(root, env, "--arch=gfx90a", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "gfx90a: FAILED: build" in r.stderr


def test_a_failed_bootstrap_fails(tree, tmp_path):
    root, env = tree
    r = run(root, dict(env, BOOTSTRAP_FAILS="1"), "--arch", "gfx90a", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "gfx90a: FAILED: scripts/bootstrap.sh" in r.stderr


def test_only_an_untargetable_architecture(tree, tmp_path):
    root, env = tree
    r = run(root, env, "--arch", "gfx942", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "no architecture could be built" in r.stderr
    r = run(root, env, "--strict", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "gfx942: FAILED: " in r.stderr and "gfx90a: ok, no warnings" in r.stderr


@pytest.mark.parametrize("args", [["--arch", "sm_90"], ["--arch"], ["--bogus"], ["a", "b"]])
def test_bad_input_exits_2(tree, args):
    root, env = tree
    r = run(root, env, *args)
    assert r.returncode == 2
    assert r.stderr.startswith("check-hip-build: error: ")


def test_no_hipcc(tree, tmp_path):
    root, env = tree
    r = run(root, dict(env, HIPCC=str(tmp_path / "none")), str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "apt-get install hipcc libamdhip64-dev" in r.stderr
