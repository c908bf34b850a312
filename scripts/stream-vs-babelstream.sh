#!/usr/bin/env bash
# karma-stream beside BabelStream on the same device, same sizes, rounds
# interleaved so that both see the same machine state. Odd rounds run
# BabelStream first and even rounds karma first, so that an after-effect of
# one program never falls on the other's figures alone (on an H200, karma's
# dot at 2^25 ran about 1% lower right after BabelStream than before it:
# results/gpu-setup/README.md).
#
# usage: scripts/stream-vs-babelstream.sh BABELSTREAM KARMA_STREAM OUTDIR [ROUNDS]
#   BABELSTREAM   a BabelStream executable you built (e.g. its CUDA model)
#   KARMA_STREAM  the karma-stream executable
#   OUTDIR        gets stream_<device>_<precision>-2p<k>-r<round>.json and
#                 babelstream/<precision>-2p<k>-r<round>.csv
# Then: scripts/stream-table.py OUTDIR
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '2,14p' "$0"; exit 2; }
babelstream=$1 karma=$2 out=$3 rounds=${4:-3}
deck=$(cd "$(dirname "$0")/.." && pwd)/inputs/stream/default.yaml
mkdir -p "$out/babelstream"

device=host
if command -v nvidia-smi > /dev/null; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | sed 's/^NVIDIA //; s/[^A-Za-z0-9.]/-/g')
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,driver_version,power.limit --format=csv > "$out/device.txt"
fi

status=0
run_pair() {  # precision log2(size) round
  local precision=$1 k=$2 round=$3 flag=()
  [[ $precision == float ]] && flag=(--float)
  if ((round % 2)); then
    run_babelstream; run_karma
  else
    run_karma; run_babelstream
  fi
}
run_babelstream() {  # uses run_pair's locals
  # BabelStream's own check fails for float at 2^28 (its float sum overflows
  # to inf); its timings still stand, so note its exit status and go on.
  "$babelstream" -s $((1 << k)) -n 100 --only All --csv "${flag[@]}" \
    > "$out/babelstream/$precision-2p$k-r$round.csv" 2>&1 ||
    echo "stream-vs-babelstream: BabelStream exited $? ($precision, 2^$k, round $round)" >&2
}
run_karma() {  # uses run_pair's locals
  "$karma" "$deck" --set "stream.shape=[2^$k]" --set "stream.precision=$precision" \
    --output "$out/stream_${device}_$precision-2p$k-r$round.json" --quiet | grep '^RESULT' || status=1
}
for round in $(seq "$rounds"); do
  for k in 25 28; do run_pair double "$k" "$round"; done
  run_pair float 28 "$round"
done
exit "$status"
