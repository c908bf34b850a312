#!/bin/bash
# The GPU measurements of results/contact/README.md in one device session:
# the kernel tests on the GPU, small traced runs, STREAM copy (the bandwidth
# reference) and karma-contact at n = 126 (large.yaml). Run from the
# repository root after `scripts/run-suite.sh` built the CUDA suite
# (build/cuda); results go to $OUT (default: results/contact).
# Usage: gpu-run.sh [SWEEPS_126]
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export KARMA_PROGRESS=0,5
OUT=${OUT:-results/contact}
mkdir -p "$OUT"
contact=${CONTACT:-build/cuda/miniapps/contact/karma-contact}
tests=${TESTS:-build/cuda/miniapps/contact/tests/contact_kernel_tests}
stream=${STREAM:-build/cuda/miniapps/stream/karma-stream}
sweeps=${1:-20}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/gpu.txt"

timeout 20 "$tests" > "$OUT/tests.log" 2>&1; echo "tests: exit $?"; tail -3 "$OUT/tests.log"
# Small runs, every phase traced: n = 4 (brute force), then n = 32.
KARMA_CONTACT_TRACE=1 timeout 20 "$contact" miniapps/contact/tests/decks/tiny.yaml \
  --output "$OUT/contact-tiny.json" > "$OUT/contact-tiny.log" 2>&1
echo "tiny: exit $?"; grep -E "RESULT|trace" "$OUT/contact-tiny.log" | tail -4
KARMA_CONTACT_TRACE=1 timeout 25 "$contact" inputs/contact/default.yaml --set contact.n=32 \
  --output "$OUT/contact-n32.json" > "$OUT/contact-n32.log" 2>&1
echo "n32: exit $?"; grep -E "RESULT|trace" "$OUT/contact-n32.log" | tail -4

timeout 30 "$stream" inputs/stream/default.yaml --set "stream.kernels=[copy]" \
  --set run.repetitions=50 --output "$OUT/stream-copy.json" -q 2>&1 | tail -2

KARMA_CONTACT_TRACE=1 timeout 100 "$contact" inputs/contact/large.yaml --set contact.sweeps=$sweeps \
  --output "$OUT/contact-n126.json" > "$OUT/contact-n126.log" 2>&1
echo "n126: exit $?"; grep -v "^trace" "$OUT/contact-n126.log" | tail -22
(cd "$OUT" && tar cf contact-gpu.tar gpu.txt tests.log contact-*.log contact-*.json stream-copy.json 2>/dev/null)
rm -f "$OUT"/contact-tiny.json "$OUT"/contact-n32.json
