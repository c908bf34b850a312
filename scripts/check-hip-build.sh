#!/usr/bin/env bash
# scripts/check-hip-build.sh - compile-only check of the whole suite for AMD GPUs.
#
# Usage: scripts/check-hip-build.sh [--arch GFX]... [--strict] [--help] [OUT_DIR]
#
# For each AMD GPU architecture (default: gfx90a gfx942):
#   1. checks that hipcc can target it at all (a one-kernel probe);
#   2. gets a Kokkos with the HIP backend for it from the project's set-up,
#        KARMA_KOKKOS_SOURCE=... scripts/bootstrap.sh --backend hip --arch GFX
#      which prints the Kokkos install prefix on stdout;
#   3. configures build/hip-GFX with -DCMAKE_CXX_COMPILER=hipcc and that
#      Kokkos, and builds every target from clean (so every warning shows).
# Each architecture's bootstrap, configure and build output goes to
# OUT_DIR/hip-GFX.log (OUT_DIR defaults to results/hip).
#
# An architecture hipcc does not know (Debian 12's hipcc drives clang 15,
# which has no gfx942: LLVM 17 added it) is built with a newer clang instead
# where one is installed (Debian 12 has clang 19: apt-get install clang-19
# lld-19 llvm-19). That clang compiles HIP itself, with Debian's HIP headers
# and ROCm 5.2 device libraries; of those libraries the target lacks only
# its ISA-version constant, which is generated from one they have, into
# KARMA_BUILD_ROOT/hip-clang-GFX/ beside the compiler wrapper that uses it.
#
# Exit status: 0 when every architecture that can be targeted built without a
# compiler warning; 1 when a bootstrap, configure or build failed or the build
# printed `warning:`; 2 on a usage error. An architecture neither compiler
# knows is reported as skipped, or fails the check with --strict.
#
# Environment:
#   KARMA_KOKKOS_SOURCE   Kokkos source directory or tarball, for bootstrap.sh
#   HIPCC                 the HIP compiler (default: hipcc)
#   KARMA_HIP_CLANG       the newer clang (default: /usr/lib/llvm-19/bin/clang++;
#                         llvm-dis and llvm-as are taken beside it)
#   KARMA_HIP_DEVICE_LIBS ROCm's device libraries (default: Debian's,
#                         /usr/lib/x86_64-linux-gnu/amdgcn/bitcode)
#   KARMA_BUILD_ROOT      where the build directories go (default: build)
#   KARMA_JOBS            parallel build jobs (default: nproc)
#
# Needs Debian's hipcc and libamdhip64-dev (apt-get install hipcc
# libamdhip64-dev rocminfo); no GPU is needed.

set -euo pipefail

PROG=check-hip-build
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { # MESSAGE [EXIT_STATUS]
    log "error: $1"
    exit "${2:-1}"
}

usage() {
    sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

archs=()
strict=0
out_dir=
while (($# > 0)); do
    case $1 in
    --arch)
        (($# >= 2)) || die "--arch needs an architecture, e.g. gfx90a" 2
        archs+=("$2")
        shift
        ;;
    --arch=*) archs+=("${1#--arch=}") ;;
    --strict) strict=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    -*) die "unknown option: $1 (see --help)" 2 ;;
    *)
        [[ -z $out_dir ]] || die "only one output directory, got '$out_dir' and '$1'" 2
        out_dir=$1
        ;;
    esac
    shift
done
((${#archs[@]} > 0)) || archs=(gfx90a gfx942)
for arch in "${archs[@]}"; do
    [[ $arch =~ ^gfx[0-9a-f]+$ ]] || die "'$arch' is not an AMD GPU architecture (gfx...)" 2
done

hipcc=${HIPCC:-hipcc}
hip_clang=${KARMA_HIP_CLANG:-/usr/lib/llvm-19/bin/clang++}
device_libs=${KARMA_HIP_DEVICE_LIBS:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
build_root=${KARMA_BUILD_ROOT:-$root/build}
jobs=${KARMA_JOBS:-$(nproc)}
out_dir=${out_dir:-$root/results/hip}
command -v "$hipcc" >/dev/null ||
    die "no '$hipcc'; on Debian 12: apt-get install hipcc libamdhip64-dev rocminfo"
mkdir -p -- "$out_dir"
out_dir=$(cd -- "$out_dir" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/$PROG.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# probe COMPILER ARCH: can COMPILER compile a kernel for ARCH? On failure
# prints why.
probe() {
    local compiler=$1 arch=$2
    printf '%s\n' '#include <hip/hip_runtime.h>' \
        '__global__ void scale(double* x) { x[threadIdx.x] *= 2.0; }' >"$work/probe.hip"
    if "$compiler" -x hip --offload-arch="$arch" -c "$work/probe.hip" -o "$work/probe.o" \
        >"$work/probe.log" 2>&1; then
        return 0
    fi
    grep -m 1 'error' "$work/probe.log" || tail -n 1 "$work/probe.log"
    return 1
}

# newer_clang ARCH: sets up the newer clang for ARCH (see the top) and prints
# its wrapper's path; on failure prints why and returns non-zero.
newer_clang() {
    local arch=$1 dir=$build_root/hip-clang-$1 number=${1#gfx} bin
    bin=$(dirname -- "$hip_clang")
    [[ -x $hip_clang ]] || { echo "no $hip_clang"; return 1; }
    [[ -d $device_libs ]] || { echo "no device libraries in $device_libs"; return 1; }
    rm -rf -- "$dir" && mkdir -p -- "$dir/bitcode" || return 1
    ln -s -- "$device_libs"/*.bc "$dir/bitcode/"
    if [[ ! -e $dir/bitcode/oclc_isa_version_$number.bc ]]; then
        # gfx942: major 9, minor 4, stepping 2, constant 9402.
        local template version
        template=$(find "$device_libs" -maxdepth 1 -name 'oclc_isa_version_*.bc' | head -n 1)
        [[ -n $template ]] || { echo "no oclc_isa_version_*.bc in $device_libs"; return 1; }
        version=$((${number:0:${#number}-2} * 1000 + 16#${number: -2:1} * 100 + 16#${number: -1}))
        "$bin/llvm-dis" "$template" -o - |
            sed -E "s/(@__oclc_ISA_version = .* constant i32 )[0-9]+/\1$version/" |
            "$bin/llvm-as" -o "$dir/bitcode/oclc_isa_version_$number.bc" ||
            { echo "could not make oclc_isa_version_$number.bc with $bin/llvm-as"; return 1; }
    fi
    printf '%s\n' '#!/bin/sh' \
        "# Made by scripts/check-hip-build.sh: $hip_clang compiling HIP for $arch." \
        "exec '$hip_clang' -Wno-unused-command-line-argument --rocm-path='${ROCM_PATH:-/usr}' \\" \
        "    --rocm-device-lib-path='$dir/bitcode' \"\$@\"" >"$dir/hipcc"
    chmod +x "$dir/hipcc"
    probe "$dir/hipcc" "$arch" >/dev/null || { echo "$hip_clang cannot target it either"; return 1; }
    echo "$dir/hipcc"
}

# check ARCH: bootstrap, configure and build for ARCH into its log; prints
# the outcome (ok, or what failed) on stdout and returns non-zero on failure.
check() {
    local arch=$1 compiler=$2 logfile=$out_dir/hip-$1.log build=$build_root/hip-$1 prefix warnings
    local build_log=$work/build-$1.log
    : >"$logfile"
    log "$arch: Kokkos from HIPCC=$compiler scripts/bootstrap.sh --backend hip --arch $arch"
    if ! prefix=$(HIPCC=$compiler "$root/scripts/bootstrap.sh" --backend hip --arch "$arch" \
        2>>"$logfile"); then
        echo "FAILED: scripts/bootstrap.sh (see $logfile)"
        return 1
    fi
    log "$arch: configuring $build with Kokkos $prefix"
    # Sources that do not use Kokkos get no --offload-arch from it; hipcc
    # would then ask rocm_agent_enumerator for the machine's GPU instead.
    export HCC_AMDGPU_TARGET=$arch
    # -UKokkos_DIR: a build directory from an earlier run finds Kokkos anew.
    if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -UKokkos_DIR \
        -DCMAKE_CXX_COMPILER="$compiler" -DKokkos_ROOT="$prefix" >>"$logfile" 2>&1; then
        echo "FAILED: configure (see $logfile)"
        return 1
    fi
    log "$arch: building every target with $jobs jobs (log: $logfile)"
    local rc=0
    cmake --build "$build" --parallel "$jobs" --clean-first 2>&1 | tee "$build_log" >>"$logfile" ||
        rc=$?
    warnings=$(grep -c 'warning:' "$build_log" || true)
    if ((rc != 0)); then
        echo "FAILED: build, exit $rc, $warnings warning(s) (see $logfile)"
        grep -m 5 'error' "$build_log" | sed "s/^/$PROG:   /" >&2 || true
        return 1
    fi
    if ((warnings > 0)); then
        echo "FAILED: $warnings warning(s) (see $logfile)"
        grep -m 5 'warning:' "$build_log" | sed "s/^/$PROG:   /" >&2
        return 1
    fi
    echo "ok, no warnings"
}

failed=0
built=0
summary=()
for arch in "${archs[@]}"; do
    compiler=$hipcc
    via=""
    if ! why=$(probe "$hipcc" "$arch"); then
        log "$arch: $hipcc cannot target it: $why"
        if ! compiler=$(newer_clang "$arch"); then
            log "$arch: no newer clang: $compiler"
            if ((strict)); then
                summary+=("$arch: FAILED: $hipcc cannot target it, $compiler")
                failed=1
            else
                summary+=("$arch: skipped: $hipcc cannot target it, $compiler")
            fi
            continue
        fi
        log "$arch: built with $hip_clang instead (wrapper: $compiler)"
        via=" (with $hip_clang: $hipcc cannot target it)"
    fi
    if outcome=$(check "$arch" "$compiler"); then
        built=$((built + 1))
    else
        failed=1
    fi
    summary+=("$arch: $outcome$via")
done

for line in "${summary[@]}"; do log "$line"; done
((built > 0 || failed)) || die "no architecture could be built"
exit "$failed"
