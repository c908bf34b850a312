#!/usr/bin/env bash
# Quick start: install what is missing, then build and run the whole test
# suite (unit tests and mini-app runs with 1 and 2 MPI ranks) twice: Release
# (preset `default`) and Debug with AddressSanitizer + UBSan (preset `debug`).
#
# usage: scripts/run-tests.sh [--preset NAME]...   (default: --preset default --preset debug)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

presets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) presets+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "run-tests: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${#presets[@]} -gt 0 ]] || presets=(default debug)

kokkos=$(karma_kokkos_root)
for preset in "${presets[@]}"; do
  karma_build "$preset" "$kokkos"
  echo "=== ctest --preset $preset"
  (cd "$karma_root" && ctest --preset "$preset" -j "$(nproc)")
done
