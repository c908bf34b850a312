#!/usr/bin/env bash
# karma-hexgrad over sizes 2^10 .. 2^24 elements (one deck, --set), to show
# where launch latency ends and bandwidth begins; then the table.
#
# usage: scripts/hexgrad-sweep.sh [options] KARMA_HEXGRAD OUTDIR [-- ARGS...]
#   --from K --to K   log2 of the smallest and largest size (default 10 and 24)
#   --variants "V ..."  implementation-layout-extents[-precision] (default
#                     "native-cuda kokkos-left-static kokkos-right-static";
#                     precision double unless given)
#   --no-native       leave out native-cuda variants (a build without CUDA)
#   ARGS              passed to every run (e.g. --set run.repetitions=200)
#   OUTDIR gets sweep_<device>_<variant>-2p<k>.json
# usage: scripts/hexgrad-sweep.sh --table OUTDIR     (only the table)
#
# Each timed repetition is one launch between fences, so at small sizes the
# times are per-launch latency (launch, run, synchronise), not throughput.
set -euo pipefail

table() {
  python3 - "$1" <<'EOF'
import glob, json, os, re, sys
d = sys.argv[1]
runs = {}
for path in glob.glob(os.path.join(d, "sweep_*-2p*.json")):
    m = re.search(r"_([a-z0-9-]+)-2p(\d+)\.json$", path)
    doc = json.load(open(path))
    k = doc["kernels"][0]
    runs.setdefault(m[1], {})[int(m[2])] = (k["time_s"]["min"], k["time_s"]["median"],
                                            k["bandwidth_GBps"]["best"], doc["result"])
names = sorted(runs, key=lambda n: (not n.startswith("native"), n))
sizes = sorted({k for v in runs.values() for k in v})
print("median time per launch us (GB/s from the best time); every run verified unless marked\n")
print("| elements | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for k in sizes:
    cells = []
    for n in names:
        if k not in runs[n]:
            cells.append("-")
            continue
        t, med, gbs, res = runs[n][k]
        cells.append(f"{med*1e6:.1f} ({gbs:.0f})" + ("" if res == "PASSED" else " " + res))
    print(f"| 2^{k} | " + " | ".join(cells) + " |")
EOF
}

if [[ ${1:-} == --table ]]; then
  table "$2"
  exit 0
fi

from=10 to=24 variants="native-cuda kokkos-left-static kokkos-right-static" native=1
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --from) from=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --no-native) native=0; shift ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0"; exit 2; }
hexgrad=$1 out=$2
shift 2
[[ ${1:-} == -- ]] && shift
extra=("$@")
deck=$(cd "$(dirname "$0")/.." && pwd)/inputs/hexgrad/default.yaml
mkdir -p "$out"

device=host
if command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | sed 's/^NVIDIA //; s/[^A-Za-z0-9.]/-/g')
fi

status=0
for k in $(seq "$from" "$to"); do
  for v in $variants; do
    IFS=- read -r impl layout extents precision <<< "${v/native-cuda/native_cuda-left-static}"
    impl=${impl/native_cuda/native-cuda}
    [[ $impl == native-cuda && $native == 0 ]] && continue
    "$hexgrad" "$deck" --set "hexgrad.n=2^$k" --set "hexgrad.implementation=$impl" \
      --set "hexgrad.layout=$layout" --set "hexgrad.extents=$extents" \
      --set "hexgrad.precision=${precision:-double}" "${extra[@]}" \
      --output "$out/sweep_${device}_$v-2p$k.json" --quiet |
      grep '^RESULT' | sed "s/^/$v 2^$k: /" || status=1
  done
done
table "$out"
exit "$status"
