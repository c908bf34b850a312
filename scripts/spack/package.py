# Spack recipe for karma. To use it, put it in a Spack repository of your own:
#
#   spack repo create ~/karma-repo
#   mkdir -p ~/karma-repo/packages/karma
#   cp scripts/spack/package.py ~/karma-repo/packages/karma/
#   spack repo add ~/karma-repo
#
# karma has no public download address yet, so build it from a checkout, in a
# Spack environment:
#
#   spack env create -d karma-env
#   spack -e karma-env add karma@main ^kokkos+cuda+wrapper cuda_arch=90
#   spack -e karma-env develop --path /path/to/karma karma@main
#   spack -e karma-env install
#
# (or add `git = "<your clone's URL>"` below and `spack install karma@main`).

# Spack's own recipes take its directives this way (flake8: F403/F405 are ignored for this file).
from spack.package import *


class Karma(CMakePackage):
    """karma (Kokkos ARray Mini-Apps): standalone mini-apps that measure how a
    machine runs computational-mechanics kernels (STREAM, hexahedral basis
    gradients, Gram-Schmidt, dense matvec, contact detection), written once on
    Kokkos, run on CPUs and GPUs with one MPI rank per device; every run
    verifies its answer and writes one JSON document of results. Installs the
    cluster tools karma-batch, karma-compare, karma-report, karma-envcapture."""

    license("BSD-3-Clause")

    version("main")

    variant("mpi", default=True, description="MPI, one rank per device (off: a single-rank suite)")
    variant("tests", default=False, description="Build the unit and integration tests")
    variant("plots", default=True, description="matplotlib, for karma-report's plots")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.23:", type="build")  # the CMake presets' version 4

    depends_on("kokkos@3.4:")
    depends_on("mpi", when="+mpi")
    depends_on("yaml-cpp@0.6:")
    depends_on("nlohmann-json@3.10:")
    depends_on("benchmark")  # karma-microbench
    depends_on("googletest", when="+tests")
    # The hand-written CUDA kernels and cuBLAS use the CUDA toolkit Kokkos uses.
    depends_on("cuda", when="^kokkos+cuda")
    depends_on("python@3.8:", type="run")  # the cluster tools (standard library only)
    depends_on("py-matplotlib", type="run", when="+plots")

    def cmake_args(self):
        kokkos = self.spec["kokkos"]
        args = [
            self.define_from_variant("KARMA_ENABLE_MPI", "mpi"),
            self.define_from_variant("KARMA_ENABLE_TESTS", "tests"),
            self.define("Kokkos_ROOT", kokkos.prefix),
        ]
        if kokkos.satisfies("+cuda +cmake_lang"):
            # Kokkos builds as CMake's CUDA language: karma compiles every
            # source that includes Kokkos as CUDA too (karma_kokkos_sources).
            args.append(self.define("CMAKE_CUDA_COMPILER", self.spec["cuda"].prefix.bin.nvcc))
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
                cxx = self.spec["kokkos-nvcc-wrapper"].prefix.bin.nvcc_wrapper
            if cxx:
                args.append(self.define("CMAKE_CXX_COMPILER", cxx))
        return args

    def setup_run_environment(self, env):
        # Where karma-batch finds the decks it calls {inputs}.
        env.set("KARMA_INPUTS", self.prefix.share.karma.inputs)
