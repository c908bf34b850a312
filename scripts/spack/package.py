# Spack recipe for karma. To use it, put it in a Spack repository of your own:
#
#   spack repo create ~/karma-repo
#   mkdir -p ~/karma-repo/packages/karma
#   cp scripts/spack/package.py ~/karma-repo/packages/karma/
#   spack repo add ~/karma-repo
#
# karma has no public download address yet, so build it from a checkout, in a
# Spack environment (scripts/spack/spack.yaml is one for an H100/H200 cluster):
#
#   spack env create karma-gpu scripts/spack/spack.yaml
#   spack -e karma-gpu develop --path /path/to/karma karma@main
#   spack -e karma-gpu install
#   spack -e karma-gpu test run karma     # a small deck, checked by karma-validate-results
#
# or set KARMA_GIT to your clone's URL (and KARMA_HOMEPAGE to its page) in the
# environment Spack runs in, and `spack install karma@main +cuda cuda_arch=90`.
# `karma-spack-check spack.yaml` checks an environment's karma specs against
# this recipe's variants without Spack.

import os

# Spack's own recipes take its directives this way (flake8: F403/F405 are ignored for this file).
from spack.package import *


class Karma(CMakePackage, CudaPackage, ROCmPackage):
    """karma (Kokkos ARray Mini-Apps): standalone mini-apps that measure how a
    machine runs computational-mechanics kernels (STREAM, hexahedral basis
    gradients, Gram-Schmidt, dense matvec, contact detection), written once on
    Kokkos, run on CPUs and GPUs with one MPI rank per device; every run
    verifies its answer and writes one JSON document of results. Installs the
    cluster tools karma-batch, karma-compare, karma-report, karma-envcapture."""

    # No public address exists yet: a site names its own clone rather than
    # the recipe guessing one (None is Spack's "not set").
    homepage = os.environ.get("KARMA_HOMEPAGE") or None
    git = os.environ.get("KARMA_GIT") or None

    license("BSD-3-Clause")

    version("main", branch="main")
    # The frozen releases (CHANGELOG.md): their code, reference and release file.
    version("1.1.0", commit="c0b215ee0929425c9ba11e512cb0face50307d7c", preferred=True)
    version("1.0.0", commit="714c33acdaf4a0b56a7c36d0d27707cbe142accd")

    variant("mpi", default=True, description="MPI, one rank per device (off: a single-rank suite)")
    variant("tests", default=False, description="Build the unit and integration tests")
    variant("plots", default=True, description="matplotlib, for karma-report's plots")
    # A CUDA build compares karma-matvec with cuBLAS instead, so the variant
    # exists only without CUDA.
    variant("blas", default=True, when="~cuda",
            description="CBLAS dgemv as karma-matvec's CPU reference")
    variant("arborx", default=False,
            description="karma-contact's arborx storage: ArborX's search beside karma's")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.23:", type="build")  # the CMake presets' version 4

    depends_on("kokkos@3.4:")
    depends_on("mpi", when="+mpi")
    depends_on("yaml-cpp@0.6:")
    depends_on("nlohmann-json@3.10:")
    depends_on("blas", when="+blas")
    # ArborX 2 needs Kokkos 4.5 or newer (and C++20).
    depends_on("arborx@2:", when="+arborx")
    depends_on("kokkos@4.5:", when="+arborx")
    depends_on("googletest", when="+tests")
    # The cluster tools: installed by pip from python/ into an environment of
    # their own (python/make-env.py), with no package index.
    depends_on("python@3.11:", type=("build", "run"))
    depends_on("py-pip", type="build")
    depends_on("py-setuptools@61:", type="build")
    depends_on("py-ruamel-yaml", type="run")  # their YAML reader (campaigns, decks)
    depends_on("py-jsonschema", type="run")  # karma-validate-results
    depends_on("py-matplotlib", type="run", when="+plots")

    # The GPU is Kokkos' device: karma's cuda_arch / amdgpu_target become
    # Kokkos', so `karma+cuda cuda_arch=90` is all a user writes. (CudaPackage
    # and ROCmPackage bring the cuda and hip dependencies.)
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")
    # karma's CMake takes the backend from Kokkos: a GPU Kokkos under a karma
    # that says ~cuda / ~rocm would build for a GPU no variant names.
    conflicts("^kokkos+cuda", when="~cuda",
              msg="a CUDA Kokkos needs karma+cuda cuda_arch=<its arch>")
    conflicts("^kokkos+rocm", when="~rocm",
              msg="a HIP Kokkos needs karma+rocm amdgpu_target=<its target>")

    conflicts("+cuda", when="cuda_arch=none",
              msg="name the GPU's architecture, e.g. karma+cuda cuda_arch=90 (H100, H200)")
    conflicts("+rocm", when="amdgpu_target=none",
              msg="name the GPU's architecture, e.g. karma+rocm amdgpu_target=gfx90a (MI250X)")
    conflicts("+cuda", when="+rocm", msg="Kokkos builds one GPU backend: +cuda or +rocm, not both")

    # The sources use KOKKOS_LAMBDA on the device: up to Kokkos 4 that needs
    # Kokkos' CUDA extended lambdas, an option Spack leaves off by default;
    # Kokkos 5 always has them (and no such variant).
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # nvcc compiles karma's Kokkos sources either through nvcc_wrapper or as
    # CMake's CUDA language (+cmake_lang); GCC alone cannot.
    conflicts("^kokkos~wrapper~cmake_lang", when="+cuda %gcc",
              msg="a CUDA Kokkos built by GCC needs +wrapper (nvcc_wrapper) or +cmake_lang")
    # karma compiles HIP as C++ through hipcc; CMake's HIP language is not wired up.
    conflicts("^kokkos+cmake_lang", when="+rocm",
              msg="karma builds a HIP Kokkos with hipcc: use ^kokkos~cmake_lang")

    def cmake_args(self):
        spec = self.spec
        kokkos = spec["kokkos"]
        args = [
            self.define_from_variant("KARMA_ENABLE_MPI", "mpi"),
            self.define_from_variant("KARMA_ENABLE_TESTS", "tests"),
            # Only a conditional variant's presence can be asked of a spec.
            self.define("KARMA_ENABLE_BLAS", spec.satisfies("+blas")),
            self.define_from_variant("KARMA_ENABLE_ARBORX", "arborx"),
            self.define("Kokkos_ROOT", kokkos.prefix),
        ]
        if spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        elif kokkos.satisfies("+cuda +cmake_lang"):
            # Kokkos builds as CMake's CUDA language: karma compiles every
            # source that includes Kokkos as CUDA too (karma_kokkos_sources).
            args.append(self.define("CMAKE_CUDA_COMPILER", spec["cuda"].prefix.bin.nvcc))
            arch = kokkos.variants["cuda_arch"].value if "cuda_arch" in kokkos.variants else None
            if isinstance(arch, (tuple, list)):
                arch = ";".join(a for a in arch if a != "none")
            if arch and arch != "none":
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", arch))
        else:
            # Kokkos' own compiler: nvcc_wrapper for a CUDA Kokkos built with
            # +wrapper, otherwise the compiler Kokkos was built with. Older
            # Spack's kokkos has no kokkos_cxx: find the wrapper ourselves.
            cxx = getattr(kokkos, "kokkos_cxx", None)
            if cxx is None and kokkos.satisfies("+wrapper"):
                cxx = spec["kokkos-nvcc-wrapper"].prefix.bin.nvcc_wrapper
            if cxx:
                args.append(self.define("CMAKE_CXX_COMPILER", cxx))
        return args

    def setup_run_environment(self, env):
        # Where karma-batch finds the decks it calls {inputs}.
        env.set("KARMA_INPUTS", self.prefix.share.karma.inputs)

    def test_small_deck(self):
        """runs karma-stream on its small deck and checks the results JSON
        with karma-validate-results"""
        results = join_path(os.getcwd(), "karma-stream-small.json")
        stream = Executable(join_path(self.prefix.bin, "karma-stream"))
        # A few seconds on any device: five repetitions of 100003 elements.
        stream(join_path(self.prefix.share.karma.inputs.stream, "small.yaml"),
               "--output", results, "--quiet")
        validate = Executable(join_path(self.prefix.bin, "karma-validate-results"))
        validate(results)

    # `spack install --test=root karma` runs the same check right after installing.
    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_small_deck(self):
        self.test_small_deck()
