#!/usr/bin/env bash
# karma-mgs side by side on one device: the Kokkos mgs beside the hand-written
# CUDA and the cuBLAS ones, mgs-fused and cgs2; rounds interleaved so that
# every variant of a round sees the same machine state. Then:
# scripts/mgs-table.py OUTDIR
#
# usage: scripts/mgs-gpu.sh KARMA_MGS OUTDIR [ROUNDS [FIRST [GROUP...]]]
#   ROUNDS rounds (3), numbered from FIRST (1); each runs the GROUPs (all):
#     left     2^22 x 32 doubles, layout left, and mgs with host reductions
#     float    the same in float
#     right    2^22 doubles, layout right (5 repetitions: mgs is slow there)
#     big      2^24 doubles, layout left
#     illcond  inputs/mgs/illcond.yaml (condition number 1e10)
#   OUTDIR gets mgs_<device>_<variant>-<group>-r<round>.json, one per run.
#   Several GPUs: one copy per GPU (CUDA_VISIBLE_DEVICES), FIRST apart.
set -uo pipefail
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0"; exit 2; }
karma=$1 out=$2 rounds=${3:-3} first=${4:-1}
shift $(( $# < 4 ? $# : 4 ))
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(left float right big illcond)
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

device=host
if command -v nvidia-smi > /dev/null; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
    sed 's/^NVIDIA //; s/[^A-Za-z0-9.]/-/g')
  nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,clocks.sm,clocks.max.sm,clocks.mem,driver_version,power.limit \
    --format=csv > "$out/device-r$first.txt"
fi

status=0
run() {  # deck tag round [--set ...]
  local deck=$1 tag=$2 round=$3
  shift 3
  "$karma" "$root/inputs/mgs/$deck.yaml" "$@" \
    --output "$out/mgs_${device}_$tag-r$round.json" --quiet 2>&1 |
    grep -E '^(RESULT|karma-mgs: error)' | sed "s/^/$tag r$round: /"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
variants() {  # the mgs of the three implementations, then mgs-fused and cgs2
  local deck=$1 tag=$2 round=$3
  shift 3
  run "$deck" "mgs-kokkos-$tag" "$round" "$@"
  run "$deck" "mgs-native-cuda-$tag" "$round" --set mgs.implementation=native-cuda "$@"
  run "$deck" "mgs-cublas-$tag" "$round" --set mgs.implementation=cublas "$@"
  run "$deck" "mgs-fused-$tag" "$round" --set mgs.algorithm=mgs-fused "$@"
  run "$deck" "cgs2-$tag" "$round" --set mgs.algorithm=cgs2 "$@"
}
for round in $(seq "$first" $((first + rounds - 1))); do
  for group in "${groups[@]}"; do
    case $group in
      left)
        variants default double-2p22-left "$round"
        run default mgs-host-double-2p22-left "$round" --set mgs.reductions=host ;;
      float) variants default float-2p22-left "$round" --set mgs.precision=float ;;
      right) variants default double-2p22-right "$round" --set mgs.layout=right --set run.repetitions=5 ;;
      big) variants default double-2p24-left "$round" --set "mgs.n=2^24" --set run.repetitions=10 ;;
      illcond) variants illcond illcond-double-2p22-left "$round" ;;
      *) echo "mgs-gpu.sh: unknown group '$group'" >&2; exit 2 ;;
    esac
  done
done
exit "$status"
