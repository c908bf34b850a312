"""scripts/spack/package.py against a stand-in for Spack's package API (Spack
cannot run here): the directives it declares (variants, GPU architectures
passed on to Kokkos, conflicts, conditional dependencies), the CMake
arguments it gives, and its post-install test, run on this build's
karma-stream. scripts/spack/spack.yaml and karma-spack-check, which checks an
environment's karma specs against the recipe."""

import importlib.util
import json
import os
import subprocess
import sys
import types

import pytest

from conftest import ROOT, SCRIPTS, tool

RECIPE = os.path.join(SCRIPTS, "spack", "package.py")
ENVIRONMENT = os.path.join(SCRIPTS, "spack", "spack.yaml")
# A few of the values Spack's CudaPackage and ROCmPackage list.
CUDA_ARCHES = ("70", "80", "90", "100")
AMDGPU_TARGETS = ("gfx906", "gfx90a", "gfx942")


class Prefix(str):
    """Spack's Prefix: attribute access joins path components."""

    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class Spec:
    def __init__(self, name, variants=(), deps=None, prefix=None, **attrs):
        self.name = name
        self.variants = {}
        for v in variants:
            key, value = (v[1:], v[0] == "+") if v[0] in "+~" else v.split("=")
            self.variants[key] = types.SimpleNamespace(value=value)
        self.deps = deps or {}
        self.prefix = Prefix(prefix or f"/spack/{name}")
        self.__dict__.update(attrs)

    def __getitem__(self, name):
        return self.deps[name]

    def satisfies(self, constraint):
        for word in constraint.split():
            if word[0] in "+~":
                v = self.variants.get(word[1:])
                if v is None or v.value is not (word[0] == "+"):
                    return False
            else:
                key, value = word.split("=")
                if key not in self.variants or self.variants[key].value != value:
                    return False
        return True


def load_recipe(environ=None):
    """(module, directives) of the recipe imported against a stand-in
    `spack.package`; directives are (kind, args, kwargs) in order."""
    recorded = []
    api = types.ModuleType("spack.package")

    def directive(kind):
        def record(*args, **kwargs):
            recorded.append((kind, args, kwargs))
        return record

    kinds = ("version", "variant", "depends_on", "license", "maintainers", "conflicts")
    for kind in kinds:
        setattr(api, kind, directive(kind))

    def run_after(phase):
        def mark(f):
            f.run_after = phase
            return f
        return mark

    def on_package_attributes(**attrs):
        def mark(f):
            f.only_when = attrs
            return f
        return mark

    class CMakePackage:
        def define(self, name, value):
            if isinstance(value, bool):
                value = "ON" if value else "OFF"
            return f"-D{name}={value}"

        def define_from_variant(self, name, variant):
            return self.define(name, bool(self.spec.variants[variant].value))

    class CudaPackage:
        cuda_arch_values = CUDA_ARCHES

    class ROCmPackage:
        amdgpu_targets = AMDGPU_TARGETS

    class Executable:
        calls = []

        def __init__(self, path):
            self.path = path

        def __call__(self, *args):
            Executable.calls.append((self.path, *args))

    api.__dict__.update(CMakePackage=CMakePackage, CudaPackage=CudaPackage,
                        ROCmPackage=ROCmPackage, Executable=Executable, join_path=os.path.join,
                        run_after=run_after, on_package_attributes=on_package_attributes)
    api.__all__ = list(kinds) + ["CMakePackage", "CudaPackage", "ROCmPackage", "Executable",
                                 "join_path", "run_after", "on_package_attributes"]
    spack = types.ModuleType("spack")
    spack.package = api
    saved_modules = {k: sys.modules.get(k) for k in ("spack", "spack.package")}
    saved_env = {k: os.environ.get(k) for k in ("KARMA_GIT", "KARMA_HOMEPAGE")}
    sys.modules.update({"spack": spack, "spack.package": api})
    for k in saved_env:
        os.environ.pop(k, None)
    os.environ.update(environ or {})
    try:
        spec = importlib.util.spec_from_file_location("karma_spack_recipe", RECIPE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in list(saved_modules.items()) + list(saved_env.items()):
            target = sys.modules if k.startswith("spack") else os.environ
            if v is None:
                target.pop(k, None)
            else:
                target[k] = v
    module.Executable = api.Executable
    return module, recorded


@pytest.fixture(scope="module")
def recipe():
    return load_recipe()


def directives(recorded, kind):
    return [(args, kwargs) for k, args, kwargs in recorded if k == kind]


def cmake_args(module, spec):
    pkg = module.Karma()
    pkg.spec = spec
    return pkg.cmake_args()


def test_recipe_compiles(tmp_path):
    import py_compile

    py_compile.compile(RECIPE, doraise=True, cfile=str(tmp_path / "package.pyc"))


def test_a_cmake_gpu_package_with_the_suites_variants(recipe):
    module, recorded = recipe
    bases = [b.__name__ for b in module.Karma.__mro__]
    assert {"CMakePackage", "CudaPackage", "ROCmPackage"} <= set(bases)
    variants = {args[0]: kwargs for args, kwargs in directives(recorded, "variant")}
    assert set(variants) == {"mpi", "tests", "plots", "blas", "arborx"}
    assert variants["arborx"]["default"] is False
    assert variants["mpi"]["default"] is True and variants["tests"]["default"] is False
    # matvec's CPU reference: a CUDA build has cuBLAS instead.
    assert variants["blas"]["when"] == "~cuda"
    deps = {args[0]: kwargs.get("when") for args, kwargs in directives(recorded, "depends_on")}
    assert deps["blas"] == "+blas" and "benchmark" not in deps  # karma-microbench needs none
    assert deps["googletest"] == "+tests" and deps["mpi"] == "+mpi"
    assert deps["arborx@2:"] == "+arborx" and deps["kokkos@4.5:"] == "+arborx"
    for name in ("kokkos@3.4:", "yaml-cpp@0.6:", "nlohmann-json@3.10:", "cmake@3.23:"):
        assert deps[name] is None, name
    # The CUDA toolkit and HIP come from CudaPackage/ROCmPackage, per variant.
    assert "cuda" not in deps and "hip" not in deps


def test_gpu_architecture_is_passed_on_to_kokkos(recipe):
    _, recorded = recipe
    deps = [(args[0], kwargs.get("when")) for args, kwargs in directives(recorded, "depends_on")]
    for arch in CUDA_ARCHES:
        assert (f"kokkos+cuda cuda_arch={arch}", f"+cuda cuda_arch={arch}") in deps
    for target in AMDGPU_TARGETS:
        assert (f"kokkos+rocm amdgpu_target={target}", f"+rocm amdgpu_target={target}") in deps
    # Nothing else asks Kokkos for a GPU.
    assert len([d for d in deps if d[0].startswith(("kokkos+cuda ", "kokkos+rocm "))]) == \
        len(CUDA_ARCHES) + len(AMDGPU_TARGETS)
    # Extended lambdas (KOKKOS_LAMBDA on the GPU): a Kokkos option up to 4.x only.
    assert ("kokkos+cuda_lambda", "+cuda ^kokkos@:4") in deps


def test_conflicts(recipe):
    _, recorded = recipe
    conflicts = {(args[0], kwargs.get("when")): kwargs.get("msg")
                 for args, kwargs in directives(recorded, "conflicts")}
    for key in [("+cuda", "cuda_arch=none"), ("+rocm", "amdgpu_target=none"),
                ("+cuda", "+rocm"), ("^kokkos+cuda", "~cuda"), ("^kokkos+rocm", "~rocm"),
                ("^kokkos~wrapper~cmake_lang", "+cuda %gcc"), ("^kokkos+cmake_lang", "+rocm")]:
        assert key in conflicts, key
        assert conflicts[key], f"{key}: a conflict says what to do"
    assert "cuda_arch=90" in conflicts[("+cuda", "cuda_arch=none")]


def test_cmake_arguments(recipe):
    module, _ = recipe
    wrapper = "/spack/kokkos-nvcc-wrapper/bin/nvcc_wrapper"
    # CUDA through nvcc_wrapper: Kokkos' compiler; no BLAS variant.
    kokkos = Spec("kokkos", ["+cuda", "~cmake_lang", "+wrapper", "cuda_arch=90"],
                  kokkos_cxx=wrapper)
    args = cmake_args(module, Spec("karma", ["+mpi", "~tests", "+cuda", "~rocm", "+arborx"],
                                   {"kokkos": kokkos}))
    assert args == ["-DKARMA_ENABLE_MPI=ON", "-DKARMA_ENABLE_TESTS=OFF", "-DKARMA_ENABLE_BLAS=OFF",
                    "-DKARMA_ENABLE_ARBORX=ON", "-DKokkos_ROOT=/spack/kokkos",
                    f"-DCMAKE_CXX_COMPILER={wrapper}"]
    # A Spack whose kokkos has no kokkos_cxx: the wrapper from its own package.
    kokkos = Spec("kokkos", ["+cuda", "~cmake_lang", "+wrapper"])
    args = cmake_args(module, Spec("karma", ["+mpi", "~tests", "+cuda", "~rocm", "~arborx"],
                                   {"kokkos": kokkos,
                                    "kokkos-nvcc-wrapper": Spec("w", prefix="/spack/w")}))
    assert args[-1] == "-DCMAKE_CXX_COMPILER=/spack/w/bin/nvcc_wrapper"
    # Kokkos as CMake's CUDA language: nvcc and the architecture instead.
    kokkos = Spec("kokkos", ["+cuda", "+cmake_lang", "cuda_arch=90"], kokkos_cxx="g++")
    args = cmake_args(module, Spec("karma", ["~mpi", "+tests", "+cuda", "~rocm", "~arborx"],
                                   {"kokkos": kokkos, "cuda": Spec("cuda")}))
    assert "-DKARMA_ENABLE_MPI=OFF" in args and "-DKARMA_ENABLE_TESTS=ON" in args
    assert "-DCMAKE_CUDA_COMPILER=/spack/cuda/bin/nvcc" in args
    assert "-DCMAKE_CUDA_ARCHITECTURES=90" in args
    assert not any(a.startswith("-DCMAKE_CXX_COMPILER") for a in args)
    # HIP: hipcc compiles everything.
    kokkos = Spec("kokkos", ["+rocm", "~cmake_lang", "amdgpu_target=gfx90a"], kokkos_cxx="c++")
    args = cmake_args(module, Spec("karma", ["+mpi", "~tests", "~cuda", "+rocm", "+blas",
                                             "~arborx"],
                                   {"kokkos": kokkos, "hip": Spec("hip", hipcc="/rocm/bin/hipcc")}))
    assert "-DKARMA_ENABLE_BLAS=ON" in args and args[-1] == "-DCMAKE_CXX_COMPILER=/rocm/bin/hipcc"
    # A CPU build without BLAS: the host compiler Kokkos used.
    kokkos = Spec("kokkos", ["+openmp"], kokkos_cxx="/usr/bin/g++")
    args = cmake_args(module, Spec("karma", ["+mpi", "~tests", "~cuda", "~rocm", "~blas",
                                             "~arborx"], {"kokkos": kokkos}))
    assert "-DKARMA_ENABLE_BLAS=OFF" in args and args[-1] == "-DCMAKE_CXX_COMPILER=/usr/bin/g++"


def test_source_addresses_come_from_the_site(recipe):
    # karma has no public address: none is made up; a site's is taken.
    module, _ = recipe
    assert module.Karma.git is None and module.Karma.homepage is None
    module, _ = load_recipe({"KARMA_GIT": "/srv/git/karma.git", "KARMA_HOMEPAGE": "file:///srv"})
    assert module.Karma.git == "/srv/git/karma.git" and module.Karma.homepage == "file:///srv"
    versions = [(args, kwargs) for k, args, kwargs in load_recipe()[1] if k == "version"]
    assert versions[0] == (("main",), {"branch": "main"})
    assert [args for args, _ in versions] == [("main",), ("1.1.0",), ("1.0.0",)]


def test_a_release_version_is_the_commit_of_that_release(recipe):
    """karma@X builds the commit whose release file is X's."""
    releases = [v[1:] for v in recipe[1] if v[0] == "version" and v[1] != ("main",)]
    assert releases
    for args, kwargs in releases:
        shown = subprocess.run(["git", "-C", ROOT, "show", f"{kwargs['commit']}:"
                                "campaigns/procurement/release.json"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            shallow = subprocess.run(["git", "-C", ROOT, "rev-parse", "--is-shallow-repository"],
                                     capture_output=True, text=True)
            if shallow.returncode != 0 or shallow.stdout.strip() == "true":
                pytest.skip("not a whole git checkout: the release's commit cannot be read")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["version"] == args[0]
        # The checkout's own release: its release file as that commit froze it.
        with open(os.path.join(ROOT, "campaigns", "procurement", "release.json")) as f:
            now = json.load(f)
        if now["version"] == args[0]:
            assert json.loads(shown.stdout) == now, f"{args[0]}: release.json differs " \
                f"from the one at {kwargs['commit']}"


def test_post_install_test_runs_a_small_deck_and_validates_it(recipe, tmp_path, stream_exe,
                                                              validator, monkeypatch):
    """The recipe's test, on an install prefix made of this build's
    karma-stream and karma-validate-results and the source tree's decks."""
    module, _ = recipe
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "share" / "karma").mkdir(parents=True)
    os.symlink(stream_exe, prefix / "bin" / "karma-stream")
    os.symlink(validator, prefix / "bin" / "karma-validate-results")
    os.symlink(os.path.join(ROOT, "inputs"), prefix / "share" / "karma" / "inputs")
    pkg = module.Karma()
    pkg.prefix = Prefix(prefix)
    work = tmp_path / "test-stage"
    work.mkdir()
    monkeypatch.chdir(work)
    module.Executable.calls.clear()
    pkg.test_small_deck()
    calls = module.Executable.calls
    results = str(work / "karma-stream-small.json")
    assert calls == [
        (str(prefix / "bin" / "karma-stream"),
         str(prefix / "share" / "karma" / "inputs" / "stream" / "small.yaml"),
         "--output", results, "--quiet"),
        (str(prefix / "bin" / "karma-validate-results"), results)]
    # The same commands, really run: the deck is the one installed, and its
    # results pass the validator.
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1")
    for argv in calls:
        r = subprocess.run(list(argv), capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, (argv, r.stdout, r.stderr)
    # `spack install --test=root` runs it after the install.
    check = module.Karma.check_small_deck
    assert check.run_after == "install" and check.only_when == {"run_tests": True}
    module.Executable.calls.clear()
    pkg.check_small_deck()
    assert [c[0] for c in module.Executable.calls] == [c[0] for c in calls]


def test_environment_names_only_the_recipes_variants(tmp_path):
    from karma_tools import yamlread

    doc = yamlread.load(ENVIRONMENT).plain()["spack"]
    assert any(s.startswith("karma") and "+cuda cuda_arch=90" in s for s in doc["specs"])
    assert doc["packages"]["cuda"]["externals"][0]["spec"].startswith("cuda@")
    assert doc["packages"]["openmpi"]["externals"][0]["spec"].startswith("openmpi@")
    r = tool("karma-spack-check", ENVIRONMENT)
    assert r.returncode == 0, r.stderr
    assert "2 karma spec(s) fit" in r.stdout


@pytest.mark.parametrize("spec, complaint", [
    ("karma+cuda cuda_arch=90 +blass", "karma has no variant 'blass' (its variants: "),
    ("karma+cuda", "+cuda with cuda_arch=none: name the GPU's architecture"),
    ("karma+rocm", "+rocm with amdgpu_target=none"),
    ("karma+cuda cuda_arch=90 +rocm amdgpu_target=gfx90a", "+cuda with +rocm: "),
    ("karma+cuda cuda_arch=90 +blas", "variant 'blas' exists only when ~cuda"),
    ("karma cuda_arch=sm_90 +cuda", "cuda_arch=sm_90: 'sm_90' is not a cuda arch"),
    ("karma+cuda_arch", "+cuda_arch: cuda_arch takes a value"),
    ("karma mpi=yes", "mpi=yes: mpi is on or off"),
])
def test_a_wrong_karma_spec_is_refused_with_file_line_and_key(tmp_path, spec, complaint):
    path = tmp_path / "spack.yaml"
    path.write_text("# a site's environment\nspack:\n  specs:\n  - openmpi+cuda\n"
                    f"  - {spec} ^kokkos@4.6.01+wrapper\n")
    r = tool("karma-spack-check", path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"karma-spack-check: error: {path}:5:5: spack.specs[1]: "), lines
    assert complaint in lines[0]


def test_requirements_under_packages_are_checked(tmp_path):
    path = tmp_path / "spack.yaml"
    path.write_text("spack:\n  specs: [karma]\n  packages:\n    karma:\n      require:\n"
                    "      - spec: +cuda cuda_arch=90\n      - one_of: [+mpi, +nompi]\n")
    r = tool("karma-spack-check", path)
    assert r.returncode == 2
    assert f"{path}:7:24: spack.packages.karma.require[1].one_of[1]: karma has no variant " \
        "'nompi'" in r.stderr
    # Not an environment, and not YAML: one line each, exit 2.
    path.write_text("specs: [karma]\n")
    r = tool("karma-spack-check", path)
    assert r.returncode == 2 and f"{path}:1:1: spack: missing" in r.stderr
    path.write_text("spack:\n  specs: [karma\n")
    r = tool("karma-spack-check", path)
    assert r.returncode == 2 and r.stderr.startswith(f"karma-spack-check: error: {path}:")
    assert len(r.stderr.splitlines()) == 1
