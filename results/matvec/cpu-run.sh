#!/bin/bash
# karma-matvec on this CPU: every Kokkos variant beside OpenBLAS's GEMV on the
# same data with the same number of threads, both layouts, both products.
# The repetitions run in 5 rounds of every implementation, so that on a shared
# machine each one's best time comes from the same stretch of time.
#   results/matvec/cpu-run.sh OUTDIR [ROUND]
# Run from the repository root after building build/matvec (README.md).
set -u
M=${M:-build/matvec/miniapps/matvec/karma-matvec}
R=${1:?usage: cpu-run.sh OUTDIR [ROUND]}
round=${2:-1}
mkdir -p "$R"
# Unpinned, as OpenBLAS's threads are (Debian builds it with NO_AFFINITY).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
{
  echo "round $round, $(date -u +%FT%TZ), OMP_NUM_THREADS=$OMP_NUM_THREADS"
  lscpu | grep -E "Model name|^CPU\(s\)|L2|L3"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$R/machine.txt"
for l in right left; do
  for t in false true; do
    "$M" inputs/matvec/default.yaml --set matvec.layout=$l --set matvec.transpose=$t \
      --set run.repetitions=10 --set matvec.rounds=5 --output "$R/matvec_cpu_16384-$l-transpose_$t-r$round.json" \
      --quiet 2>&1 | grep -E "FOM|RESULT" | sed 's/ higher_is_better=1 ranks=1//'
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/machine.txt"
