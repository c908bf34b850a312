#!/usr/bin/env bash
# Quick start: install what is missing, then build and run the whole test
# suite (unit tests and mini-app runs with 1 and 2 MPI ranks). On a CPU twice:
# Release (preset `default`) and Debug with AddressSanitizer + UBSan (preset
# `debug`); on a GPU once, Release for its backend (preset `cuda` or `hip`).
#
# usage: scripts/run-tests.sh [--backend B] [--arch A] [--kokkos K] [--arborx] [--preset NAME]...
#   --backend, --arch, --kokkos   as scripts/bootstrap.sh (default: auto, the device's own)
#   --arborx     also ArborX (bootstrap.sh --arborx): karma-contact's arborx storage and its tests
#   --preset P   build and test preset P instead (repeatable)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

presets=()
karma_split_setup_args "$@"
set -- "${karma_rest_args[@]}"
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) presets+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "run-tests: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

kokkos=$(karma_kokkos_root "${karma_setup_args[@]}")
if [[ ${#presets[@]} -eq 0 ]]; then
  backend=$(karma_kokkos_backend "$kokkos")
  if [[ $backend == host ]]; then presets=(default debug); else presets=("$backend"); fi
fi
# Tests in parallel: one a core, but on a GPU build at most 16. Each
# process of a GPU build starts a context on a GPU (most on the first), and
# on a node of 64 cores and 4 H100s, 64 at once made 10 tests time out.
karma_test_jobs() {
  local jobs
  jobs=$(nproc)
  if [[ -n ${KARMA_TEST_JOBS:-} ]]; then
    jobs=$KARMA_TEST_JOBS
  elif [[ $1 == cuda || $1 == hip ]] && ((jobs > 16)); then
    jobs=16
  fi
  echo "$jobs"
}

for preset in "${presets[@]}"; do
  karma_build "$preset" "$kokkos"
  echo "=== ctest --preset $preset"
  (cd "$karma_root" && ctest --preset "$preset" -j "$(karma_test_jobs "$preset")")
done
