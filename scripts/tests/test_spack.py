"""scripts/spack/package.py: valid Python against a stand-in for Spack's
package API, declaring what the suite needs and choosing Kokkos' compiler."""

import importlib.util
import os
import sys
import types

import pytest

from conftest import SCRIPTS

RECIPE = os.path.join(SCRIPTS, "spack", "package.py")


class Prefix(str):
    """Spack's Prefix: attribute access joins path components."""

    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class Spec:
    def __init__(self, name, variants=(), deps=None, prefix=None, **attrs):
        self.name = name
        self.variants = {v.lstrip("+~"): types.SimpleNamespace(value=not v.startswith("~"))
                         if v[0] in "+~" else types.SimpleNamespace(value=v.split("=")[1])
                         for v in variants}
        self.variants = {k.split("=")[0]: v for k, v in self.variants.items()}
        self.deps = deps or {}
        self.prefix = Prefix(prefix or f"/spack/{name}")
        self.__dict__.update(attrs)

    def __getitem__(self, name):
        return self.deps[name]

    def satisfies(self, constraint):
        for word in constraint.split():
            on = word.startswith("+")
            v = self.variants.get(word[1:])
            if v is None or bool(v.value) != on:
                return False
        return True


@pytest.fixture(scope="module")
def spack_api():
    """A stand-in `spack.package` recording every directive."""
    recorded = []
    api = types.ModuleType("spack.package")

    def directive(kind):
        def record(*args, **kwargs):
            recorded.append((kind, args, kwargs))
        return record

    for kind in ("version", "variant", "depends_on", "license", "maintainers", "conflicts"):
        setattr(api, kind, directive(kind))

    class CMakePackage:
        def define(self, name, value):
            if isinstance(value, bool):
                value = "ON" if value else "OFF"
            return f"-D{name}={value}"

        def define_from_variant(self, name, variant):
            return self.define(name, bool(self.spec.variants[variant].value))

    api.CMakePackage = CMakePackage
    api.__all__ = ["CMakePackage", "version", "variant", "depends_on", "license",
                   "maintainers", "conflicts"]
    spack = types.ModuleType("spack")
    spack.package = api
    saved = {k: sys.modules.get(k) for k in ("spack", "spack.package")}
    sys.modules.update({"spack": spack, "spack.package": api})
    spec = importlib.util.spec_from_file_location("karma_spack_recipe", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module, recorded
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def test_recipe_compiles(tmp_path):
    import py_compile

    py_compile.compile(RECIPE, doraise=True, cfile=str(tmp_path / "package.pyc"))


def test_declares_the_dependencies_and_variants(spack_api):
    module, recorded = spack_api
    assert issubclass(module.Karma, sys.modules["spack.package"].CMakePackage)
    deps = {args[0]: kwargs for kind, args, kwargs in recorded if kind == "depends_on"}
    for name in ("kokkos@3.4:", "mpi", "yaml-cpp@0.6:", "nlohmann-json@3.10:", "benchmark",
                 "googletest", "cmake@3.23:"):
        assert name in deps, name
    assert deps["mpi"]["when"] == "+mpi" and deps["googletest"]["when"] == "+tests"
    variants = {args[0]: kwargs for kind, args, kwargs in recorded if kind == "variant"}
    assert variants["mpi"]["default"] is True and variants["tests"]["default"] is False


def recipe(module, spec):
    pkg = module.Karma()
    pkg.spec = spec
    return pkg.cmake_args()


def test_builds_with_kokkos_compiler(spack_api):
    module, _ = spack_api
    wrapper = "/spack/kokkos-nvcc-wrapper/bin/nvcc_wrapper"
    kokkos = Spec("kokkos", ["+cuda", "~cmake_lang", "cuda_arch=90"], kokkos_cxx=wrapper)
    args = recipe(module, Spec("karma", ["+mpi", "~tests"], {"kokkos": kokkos}))
    assert args == ["-DKARMA_ENABLE_MPI=ON", "-DKARMA_ENABLE_TESTS=OFF",
                    "-DKokkos_ROOT=/spack/kokkos", f"-DCMAKE_CXX_COMPILER={wrapper}"]
    # A Spack whose kokkos has no kokkos_cxx: the wrapper from its own package.
    kokkos = Spec("kokkos", ["+cuda", "~cmake_lang", "+wrapper"])
    wrapper_pkg = Spec("kokkos-nvcc-wrapper", prefix="/spack/w")
    args = recipe(module, Spec("karma", ["+mpi", "~tests"],
                               {"kokkos": kokkos, "kokkos-nvcc-wrapper": wrapper_pkg}))
    assert args[-1] == "-DCMAKE_CXX_COMPILER=/spack/w/bin/nvcc_wrapper"
    # Kokkos as CMake's CUDA language: nvcc and the architecture instead.
    kokkos = Spec("kokkos", ["+cuda", "+cmake_lang", "cuda_arch=90"], kokkos_cxx="g++")
    args = recipe(module, Spec("karma", ["~mpi", "+tests"],
                               {"kokkos": kokkos, "cuda": Spec("cuda")}))
    assert "-DKARMA_ENABLE_MPI=OFF" in args and "-DKARMA_ENABLE_TESTS=ON" in args
    assert "-DCMAKE_CUDA_COMPILER=/spack/cuda/bin/nvcc" in args
    assert "-DCMAKE_CUDA_ARCHITECTURES=90" in args
    assert not any(a.startswith("-DCMAKE_CXX_COMPILER") for a in args)
