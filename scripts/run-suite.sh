#!/usr/bin/env bash
# Quick start: install what is missing, build the suite for this machine's
# GPU (CUDA, HIP) or CPU (OpenMP), and run every mini-app on its default deck.
# Results: results/*.json.
#
# usage: scripts/run-suite.sh [--backend B] [--arch A] [--kokkos K] [--arborx] [--ranks N] [--preset NAME]
#                             [-- extra mini-app arguments]
#   --backend, --arch, --kokkos   as scripts/bootstrap.sh (default: auto, the device's own)
#   --arborx     also ArborX (bootstrap.sh --arborx) and karma-contact's arborx storage
#   --ranks N    run each mini-app with mpiexec -n N (default: 1, no mpiexec)
#   --preset P   CMake preset to build (default: the one for Kokkos' backend: cuda, hip or default)
# Exit status: 0 when every mini-app verified, else the first failing exit code.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

ranks=1
preset=
extra=()
karma_split_setup_args "$@"
set -- "${karma_rest_args[@]}"
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run-suite: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

build_and_run() {
  local kokkos backend
  kokkos=$(karma_kokkos_root "${karma_setup_args[@]}")
  backend=$(karma_kokkos_backend "$kokkos")
  [[ -n $preset ]] || preset=$([[ $backend == host ]] && echo default || echo "$backend")
  karma_build "$preset" "$kokkos"

  # Threads on a CPU: spread and pinned, as STREAM wants, unless the user chose.
  export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
  local launcher=()
  if [[ $ranks -gt 1 ]]; then launcher=(mpiexec -n "$ranks"); fi

  cd "$karma_root"
  local status=0 summary=() decks=(inputs/*/default.yaml)
  local total=${#decks[@]} k=0 suite_start=$SECONDS
  for deck in "${decks[@]}"; do
    local app exe left=() d start
    k=$((k + 1))
    app=$(basename "$(dirname "$deck")")
    exe=build/$preset/bin/karma-$app
    # What runs now and what is left, so a long suite shows where it is.
    for d in "${decks[@]:k}"; do left+=("$(basename "$(dirname "$d")")"); done
    echo "=== [$k/$total] karma-$app on $deck (${ranks} rank(s)); left: ${left[*]:-none}"
    [[ -x $exe ]] || {
      echo "run-suite: $exe was not built" >&2
      summary+=("karma-$app: not built")
      if [[ $status -eq 0 ]]; then status=3; fi
      continue
    }
    local code=0
    start=$SECONDS
    "${launcher[@]}" "$exe" "$deck" "${extra[@]}" || code=$?
    summary+=("karma-$app: exit $code after $((SECONDS - start)) s")
    if [[ $code -ne 0 && $status -eq 0 ]]; then status=$code; fi
  done
  echo "=== summary: $total mini-app(s) in $((SECONDS - suite_start)) s (results in $karma_root/results)"
  printf '  %s\n' "${summary[@]}"
  return "$status"
}
build_and_run
