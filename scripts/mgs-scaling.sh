#!/usr/bin/env bash
# Weak scaling of karma-mgs over the GPUs of one node: 2^22 rows per rank,
# 1, 2, 4, ... ranks (one per GPU, as many as there are), and 1 rank with its
# reductions sent through the host as several ranks must; rounds interleaved.
# Then: scripts/mgs-table.py OUTDIR
#
# usage: scripts/mgs-scaling.sh KARMA_MGS OUTDIR [ROUNDS [ALGORITHMS]]
#   ALGORITHMS comma-separated (mgs-fused,cgs2,mgs)
set -uo pipefail
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0"; exit 2; }
karma=$1 out=$2 rounds=${3:-2} algorithms=${4:-mgs-fused,cgs2,mgs}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
gpus=1 device=host
if command -v nvidia-smi > /dev/null; then
  gpus=$(nvidia-smi -L | wc -l)
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
    sed 's/^NVIDIA //; s/[^A-Za-z0-9.]/-/g')
  nvidia-smi topo -m > "$out/topology.txt" 2>&1
fi
ranks=()
for ((k = 1; k <= gpus; k *= 2)); do ranks+=("$k"); done
status=0
for round in $(seq "$rounds"); do
  for algorithm in ${algorithms//,/ }; do
    for k in "${ranks[@]}" 1h; do
      tag=weak-$algorithm-${k}ranks-r$round extra=()
      [[ $k == 1h ]] && tag=weak-$algorithm-1rank-host-r$round extra=(--set mgs.reductions=host)
      mpirun --allow-run-as-root -np "${k%h}" "$karma" "$root/inputs/mgs/default.yaml" \
        --set mgs.scaling=weak --set mgs.algorithm="$algorithm" --set run.repetitions=10 \
        "${extra[@]}" --output "$out/mgs_${device}_$tag.json" --quiet 2>&1 |
        grep -E '^(RESULT|karma-mgs: error)' | sed "s/^/$tag: /"
      [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
    done
  done
done
exit "$status"
