#!/bin/bash
# The GPU measurements of results/contact/README.md, in one device session:
# STREAM copy (the bandwidth reference) and karma-contact at n = 64 and
# n = 126 (large.yaml), side by side in one session. Run from the repository
# root with the CUDA binaries built (build-cuda-contact; build-cuda for
# karma-stream); results go to $OUT (default: results/contact).
# Usage: gpu-run.sh [SWEEPS_126] [EXTRA --set ...]
set -u
# The device lacks yaml-cpp: the carried Debian package supplies it.
mkdir -p /tmp/yaml && for f in .gpu/debs/*.deb; do dpkg -x "$f" /tmp/yaml; done
export LD_LIBRARY_PATH=/tmp/yaml/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export KARMA_PROGRESS=0,5
OUT=${OUT:-results/contact}
mkdir -p "$OUT"
contact=${CONTACT:-build-cuda-contact/miniapps/contact/karma-contact}
stream=${STREAM:-build-cuda/miniapps/stream/karma-stream}
sweeps=${1:-20}
shift || true
save() { tar rf "$OUT/contact-gpu.tar" -C "$OUT" "$@" 2>/dev/null; }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/gpu.txt"

timeout 40 "$stream" inputs/stream/default.yaml --set "stream.kernels=[copy]" \
  --set run.repetitions=50 --output "$OUT/stream-copy.json" -q 2>&1 | tail -2
save gpu.txt stream-copy.json

# n = 64 with large.yaml's settings (100 sweeps), then n = 126.
timeout 60 "$contact" inputs/contact/large.yaml --set contact.n=64 "$@" \
  --output "$OUT/contact-n64.json" > "$OUT/contact-n64.log" 2>&1
tail -25 "$OUT/contact-n64.log"
save contact-n64.json contact-n64.log
timeout 120 "$contact" inputs/contact/large.yaml --set contact.sweeps=$sweeps "$@" \
  --output "$OUT/contact-n126.json" > "$OUT/contact-n126.log" 2>&1
tail -25 "$OUT/contact-n126.log"
save contact-n126.json contact-n126.log
