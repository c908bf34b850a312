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
    env = dict(os.environ, HIPCC=str(hipcc), KARMA_JOBS="2", LC_ALL="C",
               KARMA_HIP_CLANG=str(tmp_path / "no-clang" / "clang++"))
    return root, env


# A newer clang that targets gfx942 too, with llvm-dis and llvm-as beside it
# that pass the text through, and device libraries with one ISA-version file.
CLANG = HIPCC.replace("--offload-arch=gfx942) echo", "--offload-arch=gfx999) echo")


@pytest.fixture()
def newer_clang(tmp_path):
    """Returns (env additions, device library directory)."""
    bin_dir = tmp_path / "llvm" / "bin"
    bin_dir.mkdir(parents=True)
    # The stand-in clang++ drops the HIP options that real clang++ takes.
    hip_clang = CLANG.replace('*) args="$args $a"', '-x|hip|--rocm*) ;;\n    *) args="$args $a"')
    for name, text in [("clang++", hip_clang),
                       ("llvm-dis", '#!/bin/sh\ncat "$1"\n'),
                       ("llvm-as", '#!/bin/sh\ncat > "$2"\n')]:
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    libs = tmp_path / "bitcode"
    libs.mkdir()
    (libs / "oclc_isa_version_940.bc").write_text(
        "@__oclc_ISA_version = linkonce_odr protected addrspace(4) constant i32 9400, align 4\n")
    (libs / "ocml.bc").write_text("ocml\n")
    return {"KARMA_HIP_CLANG": str(bin_dir / "clang++"), "KARMA_HIP_DEVICE_LIBS": str(libs)}, libs


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


def test_a_newer_clang_builds_what_hipcc_cannot(tree, newer_clang, tmp_path):
    root, env = tree
    extra, libs = newer_clang
    r = run(root, dict(env, **extra), str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    assert "check-hip-build: gfx90a: ok, no warnings\n" in r.stderr
    assert "check-hip-build: gfx942: ok, no warnings (with " in r.stderr
    wrapper = root / "build" / "hip-clang-gfx942" / "hipcc"
    # gfx90a keeps hipcc; gfx942's Kokkos and build get the wrapper.
    assert f"HIPCC={wrapper} scripts/bootstrap.sh --backend hip --arch gfx942" in r.stderr
    assert f"HIPCC={env['HIPCC']} scripts/bootstrap.sh --backend hip --arch gfx90a" in r.stderr
    assert (root / "build" / "hip-gfx942" / "t").exists()
    # The ISA version the device libraries lacked, made from the one they have;
    # the others are the libraries themselves.
    bitcode = wrapper.parent / "bitcode"
    assert "constant i32 9402," in (bitcode / "oclc_isa_version_942.bc").read_text()
    assert (bitcode / "ocml.bc").resolve() == libs / "ocml.bc"
    assert f"--rocm-device-lib-path='{bitcode}'" in wrapper.read_text()


def test_a_newer_clang_that_cannot_target_it_either(tree, newer_clang, tmp_path):
    root, env = tree
    extra, _ = newer_clang
    (tmp_path / "llvm" / "bin" / "clang++").write_text(HIPCC)  # refuses gfx942 too
    r = run(root, dict(env, **extra), "--strict", str(tmp_path / "logs"))
    assert r.returncode == 1
    assert "gfx942: FAILED: " in r.stderr and "cannot target it either" in r.stderr
    assert "gfx90a: ok, no warnings" in r.stderr
