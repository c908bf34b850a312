# shellcheck shell=bash
# Shared by run-suite.sh and run-tests.sh: dependencies, configure, build.
# Sourced, not run.

karma_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Installs what is missing (as root) and prints the Kokkos prefix; the
# arguments (--backend, --arch, --kokkos) go to bootstrap.sh.
karma_kokkos_root() {
  "$karma_root/scripts/bootstrap.sh" "$@"
}

# The device backend a Kokkos install was built with: cuda, hip or host.
karma_kokkos_backend() {
  local config devices
  config=$(find "$1" -maxdepth 5 -name KokkosConfigCommon.cmake -print -quit 2>/dev/null)
  devices=$(sed -n 's/^ *[Ss][Ee][Tt](Kokkos_DEVICES \(.*\))$/\1/p' "${config:-/dev/null}")
  case ";${devices^^};" in
    *";CUDA;"*) echo cuda ;;
    *";HIP;"*) echo hip ;;
    *) echo host ;;
  esac
}

# Splits the set-up's options off the arguments: sets karma_setup_args and
# karma_rest_args (what is left, in order), and karma_arborx (ON with --arborx).
karma_split_setup_args() {
  karma_setup_args=() karma_rest_args=() karma_arborx=OFF
  while [[ $# -gt 0 ]]; do
    case $1 in
      --arborx) karma_setup_args+=("$1"); karma_arborx=ON; shift ;;
      --backend|--arch|--kokkos)
        [[ $# -ge 2 ]] || { echo "karma: $1 needs a value" >&2; exit 2; }
        karma_setup_args+=("$1" "$2"); shift 2 ;;
      --backend=*|--arch=*|--kokkos=*) karma_setup_args+=("$1"); shift ;;
      *) karma_rest_args+=("$1"); shift ;;
    esac
  done
}

# karma_build PRESET KOKKOS_ROOT: karma-contact's arborx storage as the
# set-up's options say (karma_arborx), in a build directory configured before too.
karma_build() {
  local preset=$1 kokkos=$2
  echo "karma: configuring preset '$preset' with Kokkos at $kokkos (ArborX: ${karma_arborx:-OFF})" >&2
  (cd "$karma_root" && cmake --preset "$preset" -DKokkos_ROOT="$kokkos" \
    -DKARMA_ENABLE_ARBORX="${karma_arborx:-OFF}" >&2)
  (cd "$karma_root" && cmake --build --preset "$preset" -j "$(nproc)" >&2)
}

# Open MPI refuses to run as root and to oversubscribe unless told; batch
# jobs as root in containers and small test machines need both.
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
