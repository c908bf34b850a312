#!/usr/bin/env bash
# Makes the sample result sets under python/tests/data/results/ that the
# karma-compare and karma-report tests read: real karma-stream runs on this
# machine, small and quick, and two karma-microbench runs (microbench/). Two "machines": machine-a runs with 2 OpenMP
# threads, machine-b with 1 (and one size different, to be flagged).
# machine-b/failed-verification.json is a real run edited to fail its
# verification (the checker must flag it); schema-v3/ holds a copy whose
# schema_version was raised (the tools must refuse it).
#
# usage: python/tests/data/make-samples.sh BUILD_DIR   (e.g. build/default)
set -euo pipefail
build=${1:?usage: make-samples.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
stream=$(cd "$build" && pwd)/bin/karma-stream
microbench=$(cd "$build" && pwd)/bin/karma-microbench
deck=$root/inputs/stream/small.yaml
out=$here/results
export OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

rm -rf "$out.new" && mkdir -p "$out.new"
run() { # DIR NAME THREADS RANKS args...
  local dir=$out.new/$1 name=$2 threads=$3 ranks=$4
  shift 4
  mkdir -p "$dir"
  local launcher=()
  [[ $ranks -gt 1 ]] && launcher=(mpiexec -n "$ranks")
  OMP_NUM_THREADS=$threads "${launcher[@]}" "$stream" "$deck" --quiet \
    --set run.repetitions=5 --output "$dir/$name.json" "$@" >/dev/null
}
for m in a b; do
  threads=$([[ $m == a ]] && echo 2 || echo 1)
  small=$([[ $m == a ]] && echo 2^16 || echo 2^17)  # b ran a different size: flagged
  for r in 1 2; do
    run machine-$m "stream-1d-${small/^/p}-r$r" "$threads" 1 --set "stream.shape=[$small]"
    run machine-$m "stream-1d-2p20-r$r" "$threads" 1 --set "stream.shape=[2^20]"
  done
  run machine-$m stream-1d-2p20-float "$threads" 1 --set "stream.shape=[2^20]" \
    --set stream.precision=float
  for layout in left right; do
    run machine-$m "stream-3d-$layout" "$threads" 1 --set "stream.shape=[64,64,64]" \
      --set "stream.layout=$layout"
  done
  for ranks in 1 2; do
    run machine-$m "stream-weak-$ranks" 1 "$ranks" --set "stream.shape=[2^19]"
    run machine-$m "stream-strong-$ranks" 1 "$ranks" --set "stream.shape=[2^20]" \
      --set stream.scaling=strong
  done
done
# karma's arms against raw's, and the machine's own spread (raw-twin), twice.
mkdir -p "$out.new/microbench"
for r in 1 2; do
  OMP_NUM_THREADS=2 "$microbench" "$root/inputs/microbench/small.yaml" --quiet \
    --set 'microbench.benchmarks=[Sum3D,MatVec]' --set 'microbench.where=[serial]' \
    --set 'microbench.layouts=[right]' --set 'microbench.implementations=[karma,raw,raw-twin]' \
    --set run.repetitions=5 --set microbench.min_time=0.001 \
    --output "$out.new/microbench/microbench-r$r.json" >/dev/null
done
# A run whose verification failed, as a wrong answer would leave it.
python3 - "$out.new/machine-b/stream-1d-2p20-r2.json" "$out.new/machine-b/failed-verification.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["verification"]["checks"][0]["error"] = 1.0
doc["verification"]["checks"][0]["passed"] = False
doc["verification"]["passed"] = False
doc["result"] = "FAILED"
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
rm "$out.new/machine-b/stream-1d-2p20-r2.json"
mkdir -p "$out.new/schema-v3"
python3 - "$out.new/machine-a/stream-1d-2p20-r1.json" "$out.new/schema-v3/stream.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["schema_version"] = 3
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
rm -rf "$out" && mv "$out.new" "$out"
echo "sample results in $out"
