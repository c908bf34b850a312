#!/bin/bash
# karma-matvec on one GPU, everything side by side in one job: karma-stream's
# copy (the bandwidth reference), every Kokkos variant beside cuBLAS on the same
# data, both layouts, both products, other shapes, float, sweeps of the
# variants' knobs, and CSR. Run from the repository root:
#   results/matvec/gpu-run.sh OUTDIR
# The binaries come from the CUDA build of `scripts/run-suite.sh` (build/cuda).
set -u
M=${M:-build/cuda/miniapps/matvec/karma-matvec}
S=${S:-build/cuda/miniapps/stream/karma-stream}
T=${T:-build/cuda/miniapps/matvec/tests/matvec_kernel_tests}
R=${1:?usage: gpu-run.sh OUTDIR}
mkdir -p "$R"

nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,driver_version,power.limit \
  --format=csv | tee "$R/device.txt"

echo "== unit tests on the GPU"
[ -x "$T" ] && "$T" 2>&1 | tail -3

run() {  # run NAME DECK [--set ...]
  local name=$1; shift
  echo "== $name"
  "$M" "$@" --output "$R/matvec_H200_$name.json" --quiet 2>&1 | grep -vE "^FOM: app=matvec kernel=(allgatherv|allreduce)" | sed 's/ higher_is_better=1 ranks=1//'
}
stream_copy() {  # the copy reference, before and after the matvec runs
  "$S" inputs/stream/default.yaml --set "stream.kernels=[copy]" --set "stream.shape=[2^28]" \
    --output "$R/stream_H200_copy-2p28-$1.json" --quiet 2>&1 | grep -E "FOM|RESULT"
}
reps="--set run.repetitions=50 --set run.warmup=3"

stream_copy before
# The goals: 16384^2 doubles, every variant beside cuBLAS, both layouts and products.
for l in left right; do
  for t in false true; do
    run "16384-$l-transpose_$t" inputs/matvec/default.yaml --set matvec.layout=$l \
      --set matvec.transpose=$t $reps
  done
done
stream_copy after

# Knobs beside the defaults (16384^2, y = A x): mdrange's column blocks (the
# default, 16, makes one wave), team-per-row's rows per team thread (default 4);
# for the 64-column tall matrix, team-per-row's lanes in teams of 128 threads (the
# default: 16 lanes in teams of 64).
for c in 8 17 33; do
  run "16384-left-mdrange-blocks$c" inputs/matvec/default.yaml --set matvec.layout=left \
    --set "matvec.variant=[mdrange]" --set "matvec.implementation=[kokkos]" \
    --set matvec.column_blocks=$c $reps
done
for r in 1 2; do
  run "16384-right-team-rows$r" inputs/matvec/default.yaml --set matvec.layout=right \
    --set "matvec.variant=[team-per-row]" --set "matvec.implementation=[kokkos]" \
    --set matvec.rows_per_thread=$r $reps
done
for v in 8 16; do
  run "tall-right-team-lanes$v" inputs/matvec/tall.yaml --set matvec.layout=right \
    --set "matvec.variant=[team-per-row]" --set "matvec.implementation=[kokkos]" \
    --set matvec.vector_length=$v --set matvec.team_size=$((128 / v)) $reps
done

# Other sizes and shapes, float.
for l in left right; do
  run "32768-$l" inputs/matvec/default.yaml --set matvec.layout=$l --set matvec.m=32768 \
    --set matvec.n=32768 --set run.repetitions=20
  run "16384-$l-float" inputs/matvec/default.yaml --set matvec.layout=$l \
    --set matvec.precision=float $reps
  run "tall-$l" inputs/matvec/tall.yaml --set matvec.layout=$l $reps
  # Enough rows for a thread each to fill the GPU: the naive kernel's layout effect.
  run "262144x1024-$l" inputs/matvec/default.yaml --set matvec.layout=$l --set matvec.m=2^18 \
    --set matvec.n=1024 $reps
  # A thread per row of 2^22 columns is a second per call: left out here.
  run "wide-$l" inputs/matvec/wide.yaml --set matvec.layout=$l \
    --set "matvec.variant=[team-per-row,mdrange]" $reps
done

# Sparse: 7-point Laplacian 128^3 and 256^3, seeded random 2^22 x 2^22 (~16 a row).
run csr-laplacian-128 inputs/matvec/csr.yaml $reps
run csr-laplacian-256 inputs/matvec/csr.yaml --set "matvec.grid=[256,256,256]" $reps
run csr-random-2p22 inputs/matvec/csr.yaml --set matvec.pattern=random --set matvec.m=2^22 \
  --set matvec.n=2^22 --set matvec.density=4e-6 $reps
echo "== done"
