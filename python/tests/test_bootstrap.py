"""scripts/bootstrap.sh: the backend and architecture it chooses, and bad
input refused with one line and exit 2 before anything is installed or built.
Devices and compilers are stand-ins (scripts in a directory put first in
PATH), and PATH leaves out the real ones, so the tests run alike on a machine
with or without a GPU or CUDA."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

BOOTSTRAP = os.path.join(ROOT, "scripts", "bootstrap.sh")
HIDDEN = {"nvcc", "nvidia-smi", "hipcc", "rocminfo"}


@pytest.fixture()
def machine(tmp_path):
    """PATH's tools without the GPU ones (first of a name wins, as in PATH), a place for stand-ins,
    and an empty cache; returns (env, stand_in(name, script))."""
    system = tmp_path / "system-bin"
    system.mkdir()
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name not in HIDDEN and not os.path.lexists(system / name):
                (system / name).symlink_to(os.path.join(d, name))
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": f"{fake}:{system}", "HOME": str(tmp_path),
           "KARMA_CACHE_DIR": str(tmp_path / "cache"),
           "CUDA_HOME": str(empty), "ROCM_PATH": str(empty), "LC_ALL": "C"}

    def stand_in(name, script):
        path = fake / name
        path.write_text("#!/bin/sh\n" + script + "\n")
        path.chmod(0o755)

    return env, stand_in


def run(env, *args, extra=None):
    full = dict(env)
    full.update(extra or {})
    return subprocess.run(["bash", BOOTSTRAP, *args], capture_output=True, text=True, env=full,
                          timeout=600, stdin=subprocess.DEVNULL)


H100 = "echo '9.0, NVIDIA H100 80GB HBM3'"
NVCC13 = "echo 'Cuda compilation tools, release 13.0, V13.0.88'"


def kokkos_tree(path, version, body=""):
    """A stand-in Kokkos source tree declaring VERSION (major.minor.patch)."""
    major, minor, patch = version.split(".")
    (path / "core" / "src").mkdir(parents=True)
    (path / "core" / "src" / "Kokkos_Core.hpp").write_text("")
    (path / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.16)\nproject(Kokkos CXX)\n"
        f"set(Kokkos_VERSION_MAJOR {major})\nset(Kokkos_VERSION_MINOR {minor})\n"
        f"set(Kokkos_VERSION_PATCH {patch})\n{body}\n")
    return path


def only_error_line(result):
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("bootstrap: error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_auto_chooses_cuda_and_reads_the_architecture(machine, tmp_path):
    env, stand_in = machine
    stand_in("nvidia-smi", H100)
    stand_in("nvcc", NVCC13)
    # A source of the wrong version stops it right after the choice, before any build.
    wrong = kokkos_tree(tmp_path / "k", "4.5.1")
    r = run(env, extra={"KARMA_KOKKOS_SOURCE": str(wrong)})
    assert r.returncode == 2, r.stderr
    assert ("backend: CUDA (auto): nvidia-smi sees NVIDIA H100 80GB HBM3 (compute capability 9.0)"
            in r.stderr)
    assert "Kokkos_ARCH_HOPPER90" in r.stderr
    assert "is Kokkos '4.5.01', but karma pins 4.6.01" in only_error_line(r)
    assert r.stdout == ""


def test_auto_without_nvcc_says_so_and_takes_openmp(machine, tmp_path):
    env, stand_in = machine
    stand_in("nvidia-smi", H100)
    r = run(env, "--kokkos", "pinned", extra={"KARMA_KOKKOS_SOURCE": str(tmp_path / "missing")})
    assert "but there is no nvcc" in r.stderr
    assert "backend: OpenMP (auto)" in r.stderr
    assert r.returncode == 2 and "does not exist" in only_error_line(r)


def test_auto_chooses_hip_from_rocminfo(machine, tmp_path):
    env, stand_in = machine
    stand_in("rocminfo", "echo '  Name:                    gfx90a:sramecc+:xnack-'")
    stand_in("hipcc", "exit 0")
    wrong = kokkos_tree(tmp_path / "k", "4.6.0")
    r = run(env, extra={"KARMA_KOKKOS_SOURCE": str(wrong)})
    assert "backend: HIP (auto): rocminfo sees a gfx90a GPU" in r.stderr
    assert "Kokkos_ARCH_AMD_GFX90A" in r.stderr
    assert r.returncode == 2


@pytest.mark.parametrize("args, stand_ins, message", [
    (["--backend", "cuda"], {"nvidia-smi": H100}, "--backend cuda: no nvcc in PATH"),
    (["--backend", "cuda"], {"nvcc": NVCC13},
     "sees no NVIDIA GPU to read the architecture from; name it with --arch"),
    (["--backend", "hip", "--arch", "gfx90a"], {}, "--backend hip: no hipcc in PATH"),
    (["--backend", "hip"], {"hipcc": "exit 0"}, "rocminfo sees no AMD GPU"),
    (["--backend", "cuda", "--arch", "sm_77"], {"nvcc": NVCC13},
     "unknown architecture 'sm_77' for cuda"),
    (["--backend", "hip", "--arch", "gfx1234"], {"hipcc": "exit 0"},
     "unknown architecture 'gfx1234' for hip"),
    (["--backend", "rocm"], {}, "unknown backend 'rocm'"),
    (["--kokkos", "newest"], {}, "--kokkos takes debian or pinned"),
    (["--backend", "cuda", "--arch", "90", "--kokkos", "debian"], {"nvcc": NVCC13},
     "--kokkos debian is OpenMP only"),
    (["--arch"], {}, "--arch needs a value"),
    (["--frobnicate"], {}, "unknown argument: --frobnicate"),
])
def test_bad_input_is_one_line_and_exit_2(machine, args, stand_ins, message):
    env, stand_in = machine
    for name, script in stand_ins.items():
        stand_in(name, script)
    r = run(env, *args)
    assert r.returncode == 2, r.stderr
    assert message in only_error_line(r)
    assert r.stdout == ""
    assert not os.path.exists(env["KARMA_CACHE_DIR"]), "nothing is made for bad input"


@pytest.mark.parametrize("make, message", [
    (lambda p: p.mkdir() or p, "is not a source tree of Kokkos"),
    (lambda p: kokkos_tree(p, "4.6.0"), "is Kokkos '4.6.00', but karma pins 4.6.01"),
    (lambda p: (p.write_text("not a tarball"), p)[1], "is not a release tarball of Kokkos"),
])
def test_kokkos_source_that_is_not_the_pinned_kokkos(machine, tmp_path, make, message):
    env, _ = machine
    source = make(tmp_path / "source")
    r = run(env, "--backend", "openmp", "--kokkos", "pinned",
            extra={"KARMA_KOKKOS_SOURCE": str(source)})
    assert r.returncode == 2, r.stderr
    assert message in only_error_line(r)


def test_a_failed_kokkos_build_keeps_its_log_and_leaves_no_install(machine, tmp_path):
    env, _ = machine
    tree = kokkos_tree(tmp_path / "kokkos-4.6.01", "4.6.1",
                       body='message(FATAL_ERROR "this stand-in does not build")')
    tarball = tmp_path / "kokkos-4.6.01.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(tmp_path), "kokkos-4.6.01"], check=True)
    r = run(env, "--backend", "openmp", "--kokkos", "pinned",
            extra={"KARMA_KOKKOS_SOURCE": str(tarball)})
    assert r.returncode == 3, r.stderr
    line = only_error_line(r)
    assert "building Kokkos 4.6.01 (openmp) failed; its log is " in line
    log = line.split("its log is ", 1)[1].strip()
    with open(log) as f:
        assert "this stand-in does not build" in f.read()
    cache = env["KARMA_CACHE_DIR"]
    assert sorted(os.listdir(cache)) == [".bootstrap.lock", "logs"], "no install, whole or half"
    assert tree.exists()


def test_hipcc_names_the_hip_compiler(machine, tmp_path):
    env, _ = machine
    compiler = tmp_path / "tools" / "my-hip-clang"
    compiler.parent.mkdir()
    compiler.write_text("#!/bin/sh\nexit 0\n")
    compiler.chmod(0o755)
    wrong = kokkos_tree(tmp_path / "k", "4.6.0")
    r = run(env, "--backend", "hip", "--arch", "gfx942",
            extra={"HIPCC": str(compiler), "KARMA_KOKKOS_SOURCE": str(wrong)})
    assert f"hip for Kokkos_ARCH_AMD_GFX942 with {compiler}" in r.stderr
    assert r.returncode == 2 and "karma pins 4.6.01" in only_error_line(r)
    r = run(env, "--backend", "hip", "--arch", "gfx942", extra={"HIPCC": str(tmp_path / "none")})
    assert r.returncode == 2
    assert f"--backend hip: no {tmp_path / 'none'}" in only_error_line(r)


@pytest.mark.parametrize("version, patched", [
    ("HIP version: 5.2.21153-0\nDebian clang version 15.0.6", False),
    ("Debian clang version 19.1.7", True),
])
def test_the_hip_patch_only_for_clang_17_and_newer(machine, tmp_path, version, patched):
    """The stand-in tree has no HIP sources, so the patch, where applied, fails:
    that shows it was applied, and that a failed patch ends the build (exit 3)."""
    env, _ = machine
    compiler = tmp_path / "hip-compiler"
    compiler.write_text(f"#!/bin/sh\nprintf '%s\\n' '{version}'\n")
    compiler.chmod(0o755)
    kokkos_tree(tmp_path / "kokkos-4.6.01", "4.6.1",
                body='message(FATAL_ERROR "stand-in configured")')
    r = run(env, "--backend", "hip", "--arch", "gfx942",
            extra={"HIPCC": str(compiler), "KARMA_KOKKOS_SOURCE": str(tmp_path / "kokkos-4.6.01")})
    assert r.returncode == 3, r.stderr
    assert ("applying kokkos/kokkos-4.6.01-hip-clang17.patch" in r.stderr) == patched
    log = only_error_line(r).split("its log is ", 1)[1].strip()
    with open(log) as f:
        text = f.read()
    assert ("stand-in configured" in text) != patched, text
    assert (tmp_path / "kokkos-4.6.01" / "CMakeLists.txt").exists(), "the user's tree is left alone"


def test_installs_the_missing_packages_the_style_checks_included(machine, tmp_path):
    """As root, apt-get installs what dpkg says is missing, the style checks'
    tools among the suite's packages; dpkg, apt-get and id are stand-ins."""
    env, stand_in = machine
    state = tmp_path / "installed"
    state.mkdir()
    log = tmp_path / "apt-get.log"
    stand_in("id", "echo 0")
    stand_in("dpkg-query", 'for pkg; do :; done\n'
             'case " $MISSING " in *" $pkg "*) [ -e "$STATE/$pkg" ] || exit 1 ;; esac\n'
             'echo installed')
    stand_in("apt-get", 'echo "$*" >>"$LOG"\nfor a; do touch "$STATE/$a"; done')
    missing = "libyaml-cpp-dev clang-format shellcheck flake8"
    r = run(env, "--no-kokkos", extra={"MISSING": missing, "STATE": str(state), "LOG": str(log)})
    assert r.returncode == 0, r.stderr
    assert f"installing packages: {missing}" in r.stderr
    calls = log.read_text().splitlines()
    assert calls[-1] == f"install -y --no-install-recommends {missing}", calls
    assert r.stdout == ""


def fake_deb(directory, name, modules):
    """A .deb named NAME holding empty Python modules (dotted names) in
    usr/lib/python3/dist-packages, as Debian lays out its python3-* packages."""
    root = directory / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: karma tests\n"
        "Description: a stand-in\n")
    for module in modules:
        path = root / "usr" / "lib" / "python3" / "dist-packages" / module.replace(".", "/")
        path.mkdir(parents=True, exist_ok=True)
        (path / "__init__.py").write_text(f"NAME = {module!r}\n")
    deb = directory / f"{name}.deb"
    subprocess.run(["dpkg-deb", "--build", str(root), str(deb)], check=True,
                   capture_output=True)
    return deb


def test_an_offline_node_gets_the_tools_python_modules_from_packages(machine, tmp_path):
    """KARMA_PYTHON_PACKAGES: the set-up checks the folder, and the build's
    make-env.py installs its .deb files' modules into the tools' environment."""
    env, stand_in = machine
    stand_in("dpkg-query", "echo installed")
    debs = tmp_path / "debs"
    debs.mkdir()
    r = run(env, "--no-kokkos", extra={"KARMA_PYTHON_PACKAGES": str(debs)})
    assert r.returncode == 2 and "holds no .deb or .whl files" in only_error_line(r)
    r = run(env, "--no-kokkos", extra={"KARMA_PYTHON_PACKAGES": str(tmp_path / "nowhere")})
    assert r.returncode == 2 and "is not a directory" in only_error_line(r)
    fake_deb(debs, "python3-karma-fake-one", ["karma_fake_one"])
    fake_deb(debs, "python3-karma-fake-two", ["karma_fake_two"])
    r = run(env, "--no-kokkos", extra={"KARMA_PYTHON_PACKAGES": str(debs)})
    assert r.returncode == 0 and "from " + str(debs) in r.stderr, r.stderr
    made = subprocess.run([sys.executable, os.path.join(ROOT, "python", "make-env.py"),
                           str(tmp_path / "env"), "--packages", str(debs)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    probe = subprocess.run([str(tmp_path / "env" / "bin" / "python3"), "-c",
                            "import karma_tools, karma_fake_one, karma_fake_two; "
                            "print(karma_fake_one.NAME, karma_fake_two.NAME)"],
                           capture_output=True, text=True)
    assert probe.stdout.split() == ["karma_fake_one", "karma_fake_two"], probe.stderr


def arborx_tree(path, version, body=""):
    """A stand-in ArborX source tree declaring VERSION: it installs a package
    file that records the Kokkos it was configured against."""
    major, minor, patch = version.split(".")
    (path / "src").mkdir(parents=True)
    (path / "src" / "ArborX.hpp").write_text("")
    (path / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.16)\nproject(ArborX NONE)\n{body}\n"
        f"set(ARBORX_VERSION_MAJOR {major})\nset(ARBORX_VERSION_MINOR {minor})\n"
        f"set(ARBORX_VERSION_PATCH {patch})\n"
        'file(WRITE ${CMAKE_BINARY_DIR}/ArborXConfig.cmake "# against ${Kokkos_ROOT}\\n")\n'
        "install(FILES ${CMAKE_BINARY_DIR}/ArborXConfig.cmake DESTINATION share/cmake/ArborX)\n")
    return path


def pinned_kokkos_in(cache, version="4.6.01"):
    """A finished Kokkos (OpenMP) in the cache, which the set-up reuses: the
    pinned one, or Debian's 3.4.01."""
    prefix = cache / f"kokkos-{version}-openmp"
    (prefix / "lib" / "cmake" / "Kokkos").mkdir(parents=True)
    (prefix / "lib" / "cmake" / "Kokkos" / "KokkosConfig.cmake").write_text("")
    (prefix / ".complete").write_text(f"kokkos {version} (openmp), a stand-in\n")
    return prefix


@pytest.mark.parametrize("args, extra, message", [
    (["--arborx"], {}, "--arborx needs ArborX 2.1.0's source: set KARMA_ARBORX_SOURCE"),
    (["--no-kokkos", "--arborx"], {"KARMA_ARBORX_SOURCE": "{tree}"},
     "it does not go with --no-kokkos"),
    ([], {"KARMA_ARBORX_SOURCE": "{tree}"}, "KARMA_ARBORX_SOURCE is set, but ArborX is installed "
                                            "only with --arborx"),
    (["--backend", "openmp", "--kokkos", "debian", "--arborx"], {"KARMA_ARBORX_SOURCE": "{tree}"},
     "--arborx needs the pinned Kokkos 4.6.01"),
    (["--arborx"], {"KARMA_ARBORX_SOURCE": "{tree}", "Kokkos_ROOT": "{tmp}"},
     "not into yours"),
    (["--backend", "openmp", "--arborx"], {"KARMA_ARBORX_SOURCE": "{old}"},
     "is ArborX '2.0.1', but karma pins 2.1.0"),
    (["--backend", "openmp", "--arborx"], {"KARMA_ARBORX_SOURCE": "{tmp}"},
     "is not a source tree of ArborX"),
])
def test_bad_arborx_input_is_one_line_and_exit_2(machine, tmp_path, args, extra, message):
    env, _ = machine
    paths = {"tree": arborx_tree(tmp_path / "arborx", "2.1.0"),
             "old": arborx_tree(tmp_path / "arborx-old", "2.0.1"), "tmp": tmp_path / "empty"}
    r = run(env, *args, extra={k: v.format(**paths) for k, v in extra.items()})
    assert r.returncode == 2, r.stderr
    assert message in only_error_line(r)
    assert r.stdout == ""
    assert not os.path.exists(env["KARMA_CACHE_DIR"]), "nothing is made for bad input"


def test_arborx_goes_into_the_pinned_kokkos_once(machine, tmp_path):
    env, _ = machine
    kokkos = pinned_kokkos_in(tmp_path / "cache")
    tree = arborx_tree(tmp_path / "ArborX-2.1", "2.1.0")
    tarball = tmp_path / "ArborX-2.1.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(tmp_path), "ArborX-2.1"], check=True)
    r = run(env, "--backend", "openmp", "--arborx", extra={"KARMA_ARBORX_SOURCE": str(tarball)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{kokkos}\n", "the Kokkos prefix, ArborX inside it"
    config = kokkos / "share" / "cmake" / "ArborX" / "ArborXConfig.cmake"
    assert config.read_text() == f"# against {kokkos}\n"
    assert (kokkos / ".arborx-complete").read_text().startswith(f"arborx 2.1.0 from {tarball}")
    again = run(env, "--backend", "openmp", "--arborx", extra={"KARMA_ARBORX_SOURCE": str(tree)})
    assert again.returncode == 0 and again.stdout == r.stdout, again.stderr
    assert "reusing arborx 2.1.0" in again.stderr and "installing ArborX" not in again.stderr


def test_a_failed_arborx_install_keeps_its_log_and_is_not_reused(machine, tmp_path):
    env, _ = machine
    kokkos = pinned_kokkos_in(tmp_path / "cache")
    tree = arborx_tree(tmp_path / "arborx", "2.1.0",
                       body='message(FATAL_ERROR "this stand-in does not configure")')
    r = run(env, "--backend", "openmp", "--arborx", extra={"KARMA_ARBORX_SOURCE": str(tree)})
    assert r.returncode == 3, r.stderr
    line = only_error_line(r)
    assert f"installing ArborX 2.1.0 into {kokkos} failed; its log is " in line
    with open(line.split("its log is ", 1)[1].strip()) as f:
        assert "this stand-in does not configure" in f.read()
    assert not (kokkos / ".arborx-complete").exists()
    assert r.stdout == ""


def test_openmp_takes_the_pinned_kokkos_where_it_can_be_had(machine, tmp_path):
    """On a CPU the default is the pinned Kokkos, as on a GPU: a finished
    install is reused, with no source named and no download."""
    env, stand_in = machine
    stand_in("dpkg-query", "echo installed")
    stand_in("curl", "exit 6")
    pinned_kokkos_in(tmp_path / "cache", "3.4.01")
    pinned = pinned_kokkos_in(tmp_path / "cache")
    r = run(env, "--backend", "openmp")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pinned)
    assert "falling back" not in r.stderr


def test_openmp_falls_back_to_debian_kokkos_offline_and_says_so(machine, tmp_path):
    """Without the pinned source (no install, no KARMA_KOKKOS_SOURCE, no
    download) the OpenMP default is Debian's Kokkos, named on stderr."""
    env, stand_in = machine
    stand_in("dpkg-query", "echo installed")
    stand_in("curl", "exit 6")
    debian = pinned_kokkos_in(tmp_path / "cache", "3.4.01")
    r = run(env, "--backend", "openmp")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(debian)
    assert "falling back to Debian's Kokkos 3.4.01" in r.stderr
