#!/bin/bash
# The script that ran this comparison on each lent node: the procurement campaign on this
# node, step by step as the README's "Comparing machines" says, with the
# sources handed over as an offline site would. Logs and results under /tmp/proc.
set -u
SRC=$1; LABEL=$2; R=/tmp/proc
rm -rf $R /tmp/karma /tmp/karma-gpu /tmp/karma-host /tmp/bs-cuda /tmp/bs-omp /tmp/BabelStream
mkdir -p $R /tmp/karma
exec > $R/driver.log 2>&1
export KARMA_KOKKOS_SOURCE=$SRC/.gpu/src/kokkos-4.6.01.tar.gz KARMA_CACHE_DIR=/tmp/karma-cache
export KARMA_YAML_CPP_SOURCE=$SRC/.gpu/src/yaml-cpp-0.8.0.tar.gz
export KARMA_NLOHMANN_JSON_SOURCE=$SRC/.gpu/src/json-3.11.3.tar.gz
export PATH=/opt/torch/.venv/bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tar xf $SRC/.gpu/wt.tar -C /tmp/karma && cd /tmp/karma || exit 1
cat $SRC/.gpu/commit
(cd $SRC && bash build/h-spack/nvml-check/run.sh) > $R/nvml-check.log 2>&1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version,power.limit --format=csv > $R/device.txt 2>&1
ldconfig -p | grep -i -E "openblas|libcblas|libblas" > $R/blas.txt
lscpu > $R/lscpu.txt
# 1. the suite for the GPU and for the host CPU, both on the pinned Kokkos
kg=$(scripts/bootstrap.sh --backend cuda 2> $R/bootstrap-cuda.log) || { echo bootstrap cuda failed; tail $R/bootstrap-cuda.log; exit 1; }
echo "kokkos cuda $kg at $SECONDS s"
( cmake --preset cuda -DKokkos_ROOT="$kg" -DKARMA_ENABLE_TESTS=OFF && cmake --build --preset cuda -j 12 &&
  cmake --install build/cuda --prefix /tmp/karma-gpu ) > $R/build-gpu.log 2>&1 || echo "gpu build failed" &
kh=$(scripts/bootstrap.sh --backend openmp --kokkos pinned 2> $R/bootstrap-host.log) || { echo bootstrap host failed; tail $R/bootstrap-host.log; }
echo "kokkos host $kh at $SECONDS s"
( cmake -S . -B build/host -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kh" -DKARMA_ENABLE_TESTS=OFF &&
  cmake --build build/host -j 4 && cmake --install build/host --prefix /tmp/karma-host ) > $R/build-host.log 2>&1 || echo "host build failed" &
# 2. BabelStream's CUDA and OpenMP models
( tar xzf $SRC/.gpu/src/BabelStream.tar.gz -C /tmp &&
  cmake -S /tmp/BabelStream -B /tmp/bs-cuda -DMODEL=cuda -DCMAKE_CUDA_COMPILER=nvcc -DCUDA_ARCH=sm_90 -DCMAKE_BUILD_TYPE=Release &&
  cmake --build /tmp/bs-cuda -j2 &&
  cmake -S /tmp/BabelStream -B /tmp/bs-omp -DMODEL=omp -DCMAKE_BUILD_TYPE=Release &&
  cmake --build /tmp/bs-omp -j2 ) > $R/bs.log 2>&1 || echo "babelstream build failed" &
wait
echo "builds done at $SECONDS s"
grep -E "karma-matvec: " $R/build-host.log
# 3. the campaign on this node
G=/tmp/karma-gpu/bin
$G/karma-batch generate campaigns/procurement/gpu-node.yaml -o $R/$LABEL \
    --var babelstream=/tmp/bs-cuda/cuda-stream --var babelstream_host=/tmp/bs-omp/omp-stream \
    --var host_bin=/tmp/karma-host/bin --var host_threads="$(nproc)" > $R/generate.log 2>&1
echo "generate rc=$?"
S=$SECONDS
$G/karma-batch submit $R/$LABEL > $R/submit.log 2>&1; echo "submit rc=$? $((SECONDS-S)) s"
$G/karma-compare --campaign $R/$LABEL --markdown $R/$LABEL.md > $R/compare.log 2>&1; echo "compare rc=$?"
echo DONE
