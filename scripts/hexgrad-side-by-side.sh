#!/usr/bin/env bash
# karma-hexgrad's variants side by side on one device, rounds interleaved so
# that all see the same machine state, with karma-stream's copy as the
# bandwidth reference of each round; then the tables.
#
# usage: scripts/hexgrad-side-by-side.sh [options] KARMA_HEXGRAD OUTDIR [-- ARGS...]
#   --rounds R        rounds (default 3); even rounds run the variants in reverse order
#   --first R         number of the first round (default 1): more rounds into one OUTDIR
#   --sizes "K ..."   log2 of the elements per rank (default "22 24")
#   --precisions "P ..."  (default "double float")
#   --stream EXE      karma-stream: copy at 2^28 doubles at the start of each round
#   --no-native       leave out native-cuda (a build without CUDA)
#   ARGS              passed to every karma-hexgrad run (e.g. --set run.repetitions=20)
#   OUTDIR gets hexgrad_<device>_<variant>-<precision>-2p<k>-r<round>.json
#   (variant: native-cuda, kokkos-left-static, ...) and stream_<device>_copy-2p28-r<round>.json.
# usage: scripts/hexgrad-side-by-side.sh --table OUTDIR     (only the tables)
set -euo pipefail

table() {
  python3 - "$1" <<'EOF'
import glob, json, os, re, statistics, sys
d = sys.argv[1]
runs, copy = {}, {}
for path in glob.glob(os.path.join(d, "hexgrad_*-2p*-r*.json")):
    m = re.search(r"_([a-z-]+)-(float|double)-2p(\d+)-r(\d+)\.json$", path)
    doc = json.load(open(path))
    k = doc["kernels"][0]
    runs.setdefault((m[2], int(m[3])), {}).setdefault(m[1], {})[int(m[4])] = (
        k["time_s"]["min"], k["time_s"]["median"], k["bandwidth_GBps"]["best"], doc["result"])
for path in glob.glob(os.path.join(d, "stream_*copy-2p*-r*.json")):
    m = re.search(r"-r(\d+)\.json$", path)
    doc = json.load(open(path))
    copy[int(m[1])] = doc["kernels"][0]["fom"]["value"]
order = ["native-cuda", "kokkos-left-static", "kokkos-left-dynamic", "kokkos-right-static",
         "kokkos-right-dynamic", "reference"]
if copy:
    print("karma-stream copy, 2^28 doubles, GB/s by round: " +
          ", ".join(f"r{r} {v:.0f}" for r, v in sorted(copy.items())))
for (precision, k), variants in sorted(runs.items(), key=lambda x: (x[0][0], x[0][1])):
    rounds = sorted({r for v in variants.values() for r in v})
    base = "native-cuda" if "native-cuda" in variants else (
        "kokkos-right-static" if "kokkos-right-static" in variants else None)
    print(f"\n{precision}, 2^{k} elements: best time ms (GB/s), by round; ratio = time / "
          f"{base} time of the same round; copy = GB/s / karma-stream copy GB/s of the round\n")
    print("| variant | " + " | ".join(f"round {r}" for r in rounds) +
          " | median of rounds | ratio (worst) | copy fraction (worst) | result |")
    print("|---|" + "---|" * (len(rounds) + 4))
    for name in [n for n in order if n in variants] + sorted(set(variants) - set(order)):
        v = variants[name]
        cells, ratios, fractions = [], [], []
        for r in rounds:
            if r not in v:
                cells.append("-")
                continue
            t, _, gbs, _ = v[r]
            cells.append(f"{t*1e3:.4f} ({gbs:.0f})")
            if base and r in variants[base]:
                ratios.append(t / variants[base][r][0])
            if r in copy:
                fractions.append(gbs / copy[r])
        med = statistics.median(x[0] for x in v.values()) * 1e3
        results = sorted({x[3] for x in v.values()})
        ratio = f"{max(ratios):.3f}" if ratios else "-"
        frac = f"{min(fractions):.3f}" if fractions else "-"
        print(f"| {name} | " + " | ".join(cells) + f" | {med:.4f} | {ratio} | {frac} | "
              + ",".join(results) + " |")
EOF
}

if [[ ${1:-} == --table ]]; then
  table "$2"
  exit 0
fi

first=1 rounds=3 sizes="22 24" precisions="double float" stream="" native=1
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --stream) stream=$2; shift 2 ;;
    --no-native) native=0; shift ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done
[[ $# -ge 2 ]] || { sed -n '2,18p' "$0"; exit 2; }
hexgrad=$1 out=$2
shift 2
[[ ${1:-} == -- ]] && shift
extra=("$@")
root=$(cd "$(dirname "$0")/.." && pwd)
deck=$root/inputs/hexgrad/default.yaml
mkdir -p "$out"

device=host
if command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1; then
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | sed 's/^NVIDIA //; s/[^A-Za-z0-9.]/-/g')
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,driver_version,power.limit --format=csv > "$out/device.txt"
else
  { uname -a; grep -m1 "model name" /proc/cpuinfo; nproc; } > "$out/device.txt"
fi

variants=()
[[ $native == 1 ]] && variants+=("native-cuda left static")
variants+=("kokkos left static" "kokkos left dynamic" "kokkos right static" "kokkos right dynamic")

status=0
run_variant() {  # implementation layout extents precision k round
  local name=$1-$2-$3
  [[ $1 == native-cuda ]] && name=native-cuda
  "$hexgrad" "$deck" --set "hexgrad.n=2^$5" --set "hexgrad.precision=$4" \
    --set "hexgrad.implementation=$1" --set "hexgrad.layout=$2" --set "hexgrad.extents=$3" \
    "${extra[@]}" --output "$out/hexgrad_${device}_$name-$4-2p$5-r$6.json" --quiet |
    grep '^RESULT' | sed "s/^/$name $4 2^$5 r$6: /" || status=1
}
for round in $(seq "$first" $((first + rounds - 1))); do
  if [[ -n $stream ]]; then
    "$stream" "$root/inputs/stream/default.yaml" --set "stream.shape=[2^28]" --set "stream.kernels=[copy]" \
      --output "$out/stream_${device}_copy-2p28-r$round.json" --quiet | grep '^FOM' || status=1
  fi
  ordered=("${variants[@]}")
  if (( round % 2 == 0 )); then
    ordered=()
    for ((i = ${#variants[@]} - 1; i >= 0; --i)); do ordered+=("${variants[i]}"); done
  fi
  for k in $sizes; do
    for precision in $precisions; do
      for v in "${ordered[@]}"; do
        read -r impl layout extents <<< "$v"
        run_variant "$impl" "$layout" "$extents" "$precision" "$k" "$round"
      done
    done
  done
done
table "$out"
exit "$status"
