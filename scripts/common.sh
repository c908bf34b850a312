# Shared by run-suite.sh and run-tests.sh: dependencies, configure, build.
# Sourced, not run.

karma_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Installs what is missing (as root) and prints the Kokkos prefix.
karma_kokkos_root() {
  "$karma_root/scripts/bootstrap.sh"
}

# karma_build PRESET KOKKOS_ROOT
karma_build() {
  local preset=$1 kokkos=$2
  echo "karma: configuring preset '$preset' with Kokkos at $kokkos" >&2
  (cd "$karma_root" && cmake --preset "$preset" -DKokkos_ROOT="$kokkos" >&2)
  (cd "$karma_root" && cmake --build --preset "$preset" -j "$(nproc)" >&2)
}

# Open MPI refuses to run as root and to oversubscribe unless told; batch
# jobs as root in containers and small test machines need both.
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
