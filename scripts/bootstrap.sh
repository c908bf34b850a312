#!/usr/bin/env bash
# scripts/bootstrap.sh - make a machine ready to build karma for its CPU or GPU.
#
# Usage: scripts/bootstrap.sh [--backend auto|openmp|cuda|hip] [--arch NAME]
#                             [--kokkos debian|pinned] [--no-kokkos] [--arborx] [--help]
#
# Step 1 installs the packages the suite needs (REQUIRED_PACKAGES) with apt
# where it can (root and a reachable archive, as on Debian and Ubuntu).  Where
# it cannot, it goes on if the compiler, CMake and MPI are there: CMake then
# takes yaml-cpp, nlohmann-json and GoogleTest from the system or builds them
# from a source the user gives (KARMA_<DEP>_SOURCE) or downloads
# (common/cmake/KarmaFetch.cmake).
# Step 2 chooses the backend and finds or builds Kokkos, and prints, as the
# only line on stdout, the prefix to pass to CMake:
#
#     cmake -S . -B build -DKokkos_ROOT="$(scripts/bootstrap.sh)"
#
# Backend (--backend, default auto): auto takes CUDA where nvidia-smi sees a
# GPU and nvcc exists, HIP where rocminfo sees a GPU and hipcc exists, else
# OpenMP; the architecture comes from the device (compute capability, gfx
# name) unless --arch names it.  What was chosen and why goes to stderr.
#
# Kokkos is looked for in this order:
#   a. $Kokkos_ROOT, then $Kokkos_DIR, if set: a Kokkos the user names always wins.
#   b. OpenMP with --kokkos debian (chosen by default only where the pinned
#      release's source cannot be had: no finished install, no
#      KARMA_KOKKOS_SOURCE and no download): Kokkos 3.4.01 (OpenMP + Serial) in
#      $CACHE/kokkos-3.4.01-openmp, built once from the copy inside Debian's
#      own `trilinos` source package (apt runs with private state; the
#      system's apt configuration is not touched, and root is not needed);
#      only if that fails, Debian's binary libtrilinos-kokkos-dev (Serial
#      ONLY) with a repaired CMake config in $CACHE/kokkos-3.4.01-serial-debian.
#   c. CUDA, HIP, and OpenMP by default: the pinned Kokkos release
#      (KOKKOS_PINNED below) built with that backend and architecture into
#      $CACHE/kokkos-<version>-<backend>[-<arch>], from, in order:
#      $KARMA_KOKKOS_SOURCE (a source tree or a release tarball), else a
#      download of the release (checked against its SHA-256).  With nvcc 13
#      or newer the project's patch scripts/kokkos/kokkos-<version>-cuda13.patch
#      is applied first, for HIP with clang 17 or newer its
#      kokkos-<version>-hip-clang17.patch.  The build log stays in $CACHE/logs/.
# where CACHE=${KARMA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/karma}.
# With --arborx, ArborX (ARBORX_PINNED below) is then installed into that
# pinned Kokkos' prefix from $KARMA_ARBORX_SOURCE (a tree or a tarball), once.
# A finished install is reused (~0.1 s); measured times are in docs/building.md.
#
# Environment:
#   Kokkos_ROOT, Kokkos_DIR            use this Kokkos; nothing is built
#   KARMA_KOKKOS_SOURCE                Kokkos source tree or release tarball
#   KARMA_ARBORX_SOURCE                ArborX source tree or release tarball (--arborx)
#   HIPCC                              the HIP compiler (default: hipcc)
#   KARMA_CACHE_DIR                    where built/repaired Kokkos installs live
#   KARMA_PYTHON_PACKAGES              a directory of .deb or .whl files of the
#                                      tools' Python modules, for a node whose
#                                      python3 lacks them and apt cannot install
#   KARMA_BOOTSTRAP_FORCE_FALLBACK=1   skip (b)'s source build, go straight to
#                                      the Serial fallback (for testing)
#
# All messages go to stderr, prefixed "bootstrap: ".  Exit status: 0 on
# success, 2 for bad input (an unknown option, backend or architecture, a
# backend whose compiler or device is missing, a KARMA_KOKKOS_SOURCE that is
# not the pinned Kokkos), 3 when the machine could not be made ready (a
# failed build or download, packages that cannot be installed).

set -euo pipefail

# Packages the suite needs to build and test, in apt's names.  Add new ones here.
REQUIRED_PACKAGES=(
    build-essential
    cmake
    libopenmpi-dev
    openmpi-bin
    libyaml-cpp-dev
    libgtest-dev
    libbenchmark-dev  # Google Benchmark: karma-microbench's runner
    nlohmann-json3-dev
    libopenblas-dev   # CBLAS dgemv, karma-matvec's CPU reference
    xz-utils          # Debian source tarballs
    ca-certificates   # https apt mirrors
    python3-pytest      # the cluster tools' tests (python/tests)
    python3-pip         # the build installs the tools (python/) into an environment
    python3-setuptools  #   of their own, from the sources, with no package index
    python3-venv
    python3-jsonschema  # karma-validate-results and the tools check JSON against schemas/
    python3-matplotlib  # karma-report's plots
    hwloc               # karma-envcapture: the topology as XML (lstopo-no-graphics)
    ibverbs-utils       #   InfiniBand/RoCE adapters (ibv_devinfo)
    libfabric-bin       #   libfabric's providers (fi_info)
    ucx-utils           #   UCX's transports (ucx_info); a missing one is recorded as absent
    python3-ruamel.yaml # the tools' YAML reader (campaigns, decks, spack.yaml)
    slurm-wlm           # the real-scheduler test: slurmctld + slurmd on this machine
    munge               # Slurm's authentication, for that test
    mpich               # MPICH's mpiexec (Hydra), beside Open MPI's, for the PBS job
                        #   script tests; its alternatives rank below Open MPI's
    jube                # JUBE, whose run of the mini-apps is the test `harvest.jube`
    clang-format        # the style checks (scripts/check-style.sh): C++ format,
    shellcheck          #   the shell scripts
    flake8              #   and the Python (Debian 12 has no ruff)
)

KOKKOS_VERSION=3.4.01
KOKKOS_SOURCE_PACKAGE=trilinos                # Debian source package that bundles Kokkos
KOKKOS_FALLBACK_PACKAGE=libtrilinos-kokkos-dev

# The Kokkos release built for GPUs (and for OpenMP on request): the newest
# release this project has built and measured (docs/building.md, "Kokkos").  The hash is
# that of the release tarball published by the Kokkos project.
KOKKOS_PINNED=4.6.01
KOKKOS_PINNED_URL=https://github.com/kokkos/kokkos/releases/download/$KOKKOS_PINNED/kokkos-$KOKKOS_PINNED.tar.gz
KOKKOS_PINNED_SHA256=b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a

# The ArborX release installed beside the pinned Kokkos on request (--arborx),
# the peer of karma-contact's search (miniapps/contact/README.md).  Its source
# is always given (KARMA_ARBORX_SOURCE): ArborX publishes no checksum of its
# tarballs to check a download against.
ARBORX_PINNED=2.1.0
ARBORX_PINNED_URL=https://github.com/arborx/ArborX/archive/refs/tags/v2.1.tar.gz

PROG=bootstrap
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Keep the real stdout on fd 3 for the result line; everything else,
# including the output of every tool we run, goes to stderr.
exec 3>&1 1>&2

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { # die CODE MESSAGE
    local code=$1
    shift
    log "error: $*"
    exit "$code"
}

usage() {
    cat <<EOF
Usage: scripts/bootstrap.sh [--backend auto|openmp|cuda|hip] [--arch NAME]
                            [--kokkos debian|pinned] [--no-kokkos] [--arborx] [--help]

Installs the packages karma needs and prints the Kokkos prefix to pass to
CMake as -DKokkos_ROOT=<prefix>, e.g.

    cmake -S . -B build -DKokkos_ROOT="\$(scripts/bootstrap.sh)"

Options:
  --backend B   auto (default): CUDA where nvidia-smi sees a GPU and nvcc
                exists, HIP where rocminfo sees one and hipcc exists, else
                OpenMP; or name it: openmp, cuda, hip
  --arch NAME   the device architecture, instead of reading it from the
                device: sm_90, 90, 9.0 or HOPPER90; gfx90a or AMD_GFX90A;
                for OpenMP a Kokkos CPU name (NATIVE, SPR, ZEN4, ...)
  --kokkos K    pinned: Kokkos $KOKKOS_PINNED built here (the default, for
                OpenMP too wherever its source can be had: an earlier
                install, KARMA_KOKKOS_SOURCE or a download); debian: Kokkos
                $KOKKOS_VERSION from Debian (OpenMP only; the default's
                offline fallback where the pinned source cannot be had)
  --no-kokkos   only install packages; print nothing
  --arborx      also install ArborX $ARBORX_PINNED (from KARMA_ARBORX_SOURCE) into
                the pinned Kokkos' prefix, for karma-contact's arborx storage
                (CMake: -DKARMA_ENABLE_ARBORX=ON; implies --kokkos pinned)
  --help        show this help

Environment:
  Kokkos_ROOT / Kokkos_DIR          use this Kokkos instead (printed as-is)
  KARMA_KOKKOS_SOURCE               the pinned Kokkos' source: a directory or
                                    a release tarball (offline machines)
  KARMA_ARBORX_SOURCE               ArborX $ARBORX_PINNED's source for --arborx: a
                                    directory or a release tarball
  HIPCC                             the HIP compiler (default: hipcc in
                                    PATH, else in \$ROCM_PATH/bin)
  KARMA_CACHE_DIR                   cache for built Kokkos (default:
                                    \${XDG_CACHE_HOME:-\$HOME/.cache}/karma)
  KARMA_PYTHON_PACKAGES             a directory of .deb or .whl files of the
                                    tools' Python modules (ruamel.yaml,
                                    jsonschema and what it imports), which
                                    the build installs into the tools' own
                                    environment
  KARMA_BOOTSTRAP_FORCE_FALLBACK=1  skip the Debian source build and use
                                    Debian's Serial-only libtrilinos-kokkos-dev
EOF
}

is_root() { [[ $(id -u) -eq 0 ]]; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------
# Temporary state, removed on exit.  STAGING holds half-made install prefixes
# that must not survive an interrupted or failed run.
WORK=
STAGING=()
cleanup() {
    local p
    for p in "${STAGING[@]}"; do
        [[ -n $p ]] && rm -rf -- "$p"
    done
    [[ -n $WORK ]] && rm -rf -- "$WORK"
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_step LOG CMD...: run CMD with its output appended to LOG; on failure
# show the end of LOG and return CMD's status.
run_step() {
    local logfile=$1 rc=0
    shift
    "$@" >>"$logfile" 2>&1 || rc=$?
    if ((rc != 0)); then
        log "command failed (exit $rc): $*"
        tail -n 40 "$logfile" | sed "s/^/$PROG: | /" >&2
    fi
    return "$rc"
}

# strictly FN ARGS...: runs FN in a subshell with set -e in force there (it
# would be ignored in a function called as a condition) and sets STRICT_RC to
# its exit status, without ending this shell on a failure.
STRICT_RC=0
strictly() {
    set +e
    (
        set -e
        "$@"
    )
    STRICT_RC=$?
    set -e
}

# ---------------------------------------------------------------------------
# Step 1: packages.

# Print the packages from the arguments that are not installed.
missing_packages() {
    local pkg status
    for pkg in "$@"; do
        # shellcheck disable=SC2016  # ${db:...} is a dpkg-query format, not a shell expansion
        status=$(dpkg-query -W -f='${db:Status-Status}\n' "$pkg" 2>/dev/null || true)
        grep -qx installed <<<"$status" || printf '%s\n' "$pkg"
    done
}

# The tools without which nothing builds, looked for as commands: on clusters
# the compiler, CMake and MPI often come from modules, not from packages.
missing_tools() {
    command -v c++ >/dev/null || command -v g++ >/dev/null || echo "a C++ compiler (c++)"
    command -v cmake >/dev/null || echo cmake
    command -v mpicc >/dev/null || echo "MPI (mpicc)"
}

# apt_install PKG...: install PKGs; says why and returns 1 where apt cannot
# (not root, no apt, no reachable archive).
apt_install() {
    if ! command -v apt-get >/dev/null; then
        log "no apt-get on this machine to install: $*"
        return 1
    fi
    if ! is_root; then
        log "not root, so not installing: $*"
        log "to install them: sudo apt-get update && sudo apt-get install -y --no-install-recommends $*"
        return 1
    fi
    log "installing packages: $*"
    # Short timeouts: on an offline node every archive fails at once instead of after minutes.
    run_step "$WORK/apt-install.log" apt-get -o Acquire::Retries=0 -o Acquire::http::Timeout=20 \
        -o Acquire::https::Timeout=20 update || {
        log "apt-get update failed (no reachable package archive?)"
        return 1
    }
    run_step "$WORK/apt-install.log" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "$@" || {
        log "apt-get install failed"
        return 1
    }
}

install_packages() {
    local missing=() tools=()
    if command -v dpkg-query >/dev/null; then
        mapfile -t missing < <(missing_packages "${REQUIRED_PACKAGES[@]}")
        if ((${#missing[@]} == 0)); then
            log "all ${#REQUIRED_PACKAGES[@]} required packages are installed"
            return 0
        fi
        if apt_install "${missing[@]}"; then
            mapfile -t missing < <(missing_packages "${REQUIRED_PACKAGES[@]}")
            ((${#missing[@]} == 0)) && return 0
        fi
        log "warning: these packages are not installed: ${missing[*]}"
    else
        log "warning: no dpkg on this machine; packages are not checked"
    fi
    mapfile -t tools < <(missing_tools)
    ((${#tools[@]} == 0)) || die 3 "cannot build karma without: ${tools[*]}"
    log "going on with the compiler, CMake and MPI found here; CMake takes each library from" \
        "the system, else from KARMA_<DEP>_SOURCE or a download (docs/building.md, 'Dependencies');" \
        "a missing test tool (pytest, Slurm) shows in its test"
}

# The cluster tools' Python modules (the Debian package each comes in).
PYTHON_MODULES=(ruamel.yaml:python3-ruamel.yaml jsonschema:python3-jsonschema)

# python_modules_missing: the modules of PYTHON_MODULES that python3 and
# /usr/bin/python3 both lack.
python_modules_missing() {
    local entry py found
    for entry in "${PYTHON_MODULES[@]}"; do
        found=0
        for py in python3 /usr/bin/python3; do
            if "$py" -c "import ${entry%%:*}" 2>/dev/null; then
                found=1
                break
            fi
        done
        ((found)) || echo "${entry%%:*}"
    done
}

# Where apt could not install them (an offline node), the build installs the
# .deb or .whl files in $KARMA_PYTHON_PACKAGES into the tools' environment
# (python/make-env.py); here they are only looked for.
check_python_modules() {
    command -v python3 >/dev/null || die 3 "the cluster tools need python3"
    local missing=() dir=${KARMA_PYTHON_PACKAGES:-}
    if [[ -n $dir ]]; then
        [[ -d $dir ]] || die 2 "KARMA_PYTHON_PACKAGES=$dir is not a directory"
        compgen -G "$dir/*.deb" >/dev/null || compgen -G "$dir/*.whl" >/dev/null ||
            die 2 "KARMA_PYTHON_PACKAGES=$dir holds no .deb or .whl files"
        log "the build installs the tools' Python modules from $dir into their environment"
        return 0
    fi
    mapfile -t missing < <(python_modules_missing)
    ((${#missing[@]} == 0)) && return 0
    log "warning: python3 cannot import ${missing[*]}: the tools and the tests that run" \
        "them fail until they are installed (here: apt, or KARMA_PYTHON_PACKAGES=DIR" \
        "with their .deb or .whl files, docs/building.md 'Offline')"
}

# ---------------------------------------------------------------------------
# Step 2a: a Kokkos named by the user.

user_kokkos() {
    local var value abs
    for var in Kokkos_ROOT Kokkos_DIR; do
        value=${!var:-}
        [[ -n $value ]] || continue
        [[ -d $value ]] || die 2 "\$$var is set to '$value', which is not an existing directory"
        abs=$(cd -- "$value" && pwd)
        if ! find "$abs" -maxdepth 5 \( -name KokkosConfig.cmake -o -name kokkos-config.cmake \) \
            -print -quit 2>/dev/null | grep -q .; then
            log "warning: no KokkosConfig.cmake under $abs; CMake may not find Kokkos there"
        fi
        log "using the Kokkos named by \$$var: $abs (its backends: $(kokkos_devices "$abs"))"
        RESULT=$abs
        return 0
    done
    return 1
}

# ---------------------------------------------------------------------------
# Step 2c: build Kokkos from Debian's trilinos source package.

# Write deb-src versions of the machine's enabled Debian apt sources into
# $1/sources.list (one-line style) and $1/sources.list.d/*.sources (deb822).
# Only entries whose URI mentions "debian" are kept, so third-party
# repositories (which rarely publish sources) are not asked.
write_deb_src_sources() {
    local dir=$1 f n=0
    local SOURCELIST=/etc/apt/sources.list SOURCEPARTS=/etc/apt/sources.list.d/
    eval "$(apt-config shell SOURCELIST Dir::Etc::SourceList/f SOURCEPARTS Dir::Etc::SourceParts/d)"
    mkdir -p "$dir/sources.list.d"
    : >"$dir/sources.list"

    # One-line style: "deb [opts] uri suite comp..." -> "deb-src [opts] uri suite comp...".
    # Files with other suffixes (.disabled, .save, ...) are ignored, as apt does.
    for f in "$SOURCELIST" "${SOURCEPARTS%/}"/*.list; do
        [[ -f $f ]] || continue
        awk '{
            line = $0
            sub(/#.*/, "", line)
            sub(/[ \t]+$/, "", line)
            if (line !~ /^[ \t]*deb(-src)?[ \t]/) next
            sub(/^[ \t]*deb(-src)?[ \t]+/, "", line)
            opts = ""
            if (substr(line, 1, 1) == "[") {
                i = index(line, "]")
                if (i == 0) next
                opts = substr(line, 1, i) " "
                line = substr(line, i + 1)
                sub(/^[ \t]+/, "", line)
            }
            split(line, w, /[ \t]+/)
            if (tolower(w[1]) !~ /debian/) next
            print "deb-src " opts line
        }' "$f" >>"$dir/sources.list"
    done
    sort -u -o "$dir/sources.list" "$dir/sources.list"
    n=$(grep -c . "$dir/sources.list" || true)

    # deb822 style: keep each stanza whose URIs mention debian, with its Types
    # line (deb, deb-src or both) replaced by "Types: deb-src".  "Enabled: no"
    # and Signed-By (even multi-line inline keys) are kept as they are.
    for f in "${SOURCEPARTS%/}"/*.sources; do
        [[ -f $f ]] || continue
        if awk 'BEGIN { RS = ""; FS = "\n" }
        {
            keep = 0; out = ""
            for (i = 1; i <= NF; i++) {
                l = $i
                if (tolower(l) ~ /^uris:/ && tolower(l) ~ /debian/) keep = 1
                if (tolower(l) ~ /^types:/) l = "Types: deb-src"
                out = out l "\n"
            }
            if (keep) { printf "%s\n", out; n++ }
        }
        END { exit (n == 0) }' "$f" >"$dir/sources.list.d/${f##*/}"; then
            n=$((n + 1))
        else
            rm -f "$dir/sources.list.d/${f##*/}"
        fi
    done
    ((n > 0)) || {
        log "no enabled Debian entries in $SOURCELIST or $SOURCEPARTS"
        return 1
    }
    log "deb-src entries derived from the machine's apt sources:"
    cat "$dir/sources.list" "$dir"/sources.list.d/*.sources 2>/dev/null |
        grep -Ei '^(deb-src|uris|suites)' | sed "s/^/$PROG:   /" >&2 || true
}

# Run by strictly (set -e in a subshell); any failure aborts the build and
# leads to the fallback.  $WORK and $2 (staging prefix) are cleaned by the
# parent's trap.
build_kokkos_from_source() {
    local prefix=$1 staging=$2
    local apt_dir=$WORK/apt dl=$WORK/download src_root=$WORK/src build=$WORK/build
    local logfile=$WORK/kokkos-build.log t0 t1 tarball src v

    t0=$(now)
    # Private apt state: our own source lists, index lists and caches.
    # Dir::State::Lists keeps `update` away from /var/lib/apt/lists, Dir::Cache
    # keeps it from writing /var/cache/apt/{src,}pkgcache.bin (stock Debian
    # would), and the #clear lines stop the system's update hooks (e.g.
    # PackageKit's, or an update-success stamp) from firing for a private update.
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache" "$dl" "$src_root" "$build"
    write_deb_src_sources "$apt_dir"
    printf '%s\n' '#clear APT::Update::Pre-Invoke;' '#clear APT::Update::Post-Invoke;' \
        '#clear APT::Update::Post-Invoke-Success;' >"$apt_dir/apt.conf"
    local apt=(apt-get -q -c "$apt_dir/apt.conf"
        -o "Dir::Etc::SourceList=$apt_dir/sources.list"
        -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
        -o "Dir::State::Lists=$apt_dir/lists"
        -o "Dir::Cache=$apt_dir/cache")
    # apt downloads as the unprivileged _apt user when run as root: let it
    # reach and write the download directory (otherwise it only warns).
    chmod 755 "$WORK"
    if is_root && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi

    log "fetching Debian's $KOKKOS_SOURCE_PACKAGE source package (private apt state, ~170 MB)"
    # One bad entry (e.g. a mirror without Sources: 404) makes `update` exit
    # non-zero even when the other indexes arrived, so let `source` decide.
    run_step "$logfile" "${apt[@]}" update ||
        log "warning: apt-get update reported errors; trying the download anyway"
    (cd "$dl" && run_step "$logfile" "${apt[@]}" source --download-only "$KOKKOS_SOURCE_PACKAGE")
    tarball=$(find "$dl" -maxdepth 1 -name "${KOKKOS_SOURCE_PACKAGE}_*.orig.tar.*" ! -name '*.asc' -print -quit)
    [[ -n $tarball ]] || {
        log "no ${KOKKOS_SOURCE_PACKAGE}_*.orig.tar.* among the downloaded files"
        return 1
    }

    log "extracting packages/kokkos from ${tarball##*/}"
    run_step "$logfile" tar -xf "$tarball" -C "$src_root" --wildcards '*/packages/kokkos/*'
    rm -f -- "$tarball"
    src=$(find "$src_root" -mindepth 3 -maxdepth 3 -type d -path '*/packages/kokkos' -print -quit)
    [[ -n $src && -f $src/CMakeLists.txt ]] || {
        log "packages/kokkos not found in ${tarball##*/}"
        return 1
    }
    v=$(kokkos_source_version <"$src/CMakeLists.txt")
    [[ $v == "$KOKKOS_VERSION" ]] || {
        log "the $KOKKOS_SOURCE_PACKAGE source bundles Kokkos '$v', expected $KOKKOS_VERSION"
        return 1
    }
    t1=$(now)
    log "download + extract took $(since "$t0") s"

    # No Kokkos_ARCH_* option: Kokkos then adds no -march flags, so the
    # library runs on any x86-64 (3.4 has no Kokkos_ARCH_NATIVE to turn off).
    # The install prefix is the final one, so paths recorded in the CMake
    # config point there; `cmake --install --prefix` puts the files in
    # the staging directory, which is renamed into place once complete.
    log "building Kokkos $KOKKOS_VERSION (OpenMP + Serial) with $(nproc) jobs"
    run_step "$logfile" cmake -S "$src" -B "$build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_STANDARD=17 \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DKokkos_ENABLE_OPENMP=ON \
        -DKokkos_ENABLE_SERIAL=ON \
        -DKokkos_ENABLE_TESTS=OFF \
        -DKokkos_ENABLE_EXAMPLES=OFF
    run_step "$logfile" cmake --build "$build" --parallel "$(nproc)"
    rm -rf -- "$staging"
    run_step "$logfile" cmake --install "$build" --prefix "$staging"
    printf 'kokkos %s (OpenMP+Serial) from Debian source package %s, built %s\n' \
        "$KOKKOS_VERSION" "$(awk '/^Version:/ { print $2; exit }' "$dl"/*.dsc 2>/dev/null || echo '?')" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$staging/.complete"
    log "build + install took $(since "$t1") s"

    rm -rf -- "$prefix" # an incomplete leftover (no .complete), if any
    mv -T -- "$staging" "$prefix"
}

# ---------------------------------------------------------------------------
# Step 2d: Debian's binary libtrilinos-kokkos-dev, with its CMake config fixed.
#
# Its KokkosConfig.cmake computes the include directory of Kokkos::kokkos as
# four levels above itself + /include, i.e. /usr/lib/include, which does not
# exist (the headers are in /usr/include/trilinos).  We copy the directory that
# holds KokkosConfig.cmake into the cache, make its relative paths absolute
# (pointing back at the originals) and fix that include directory.

# Run by strictly, like build_kokkos_from_source.
debian_kokkos_fallback() {
    local dest=$1 staging=$2 config config_dir include_dir f
    log "FALLBACK: using Debian's $KOKKOS_FALLBACK_PACKAGE - Kokkos $KOKKOS_VERSION with the Serial backend ONLY (no OpenMP threading)"
    if [[ -n $(missing_packages "$KOKKOS_FALLBACK_PACKAGE") ]]; then
        apt_install "$KOKKOS_FALLBACK_PACKAGE"
    fi
    config=$(dpkg -L "$KOKKOS_FALLBACK_PACKAGE" | grep '/KokkosConfig\.cmake$' | head -n 1)
    include_dir=$(dpkg -L "$KOKKOS_FALLBACK_PACKAGE" | grep '/Kokkos_Core\.hpp$' | head -n 1)
    [[ -f $config && -f $include_dir ]] || {
        log "KokkosConfig.cmake or Kokkos_Core.hpp missing from $KOKKOS_FALLBACK_PACKAGE"
        return 1
    }
    config_dir=${config%/*}
    include_dir=${include_dir%/*}

    rm -rf -- "$staging"
    mkdir -p "$staging"
    for f in "$config_dir"/*.cmake; do
        sed -e "s|[$]{CMAKE_CURRENT_LIST_DIR}|$config_dir|g" \
            -e "s|[$]{CMAKE_CURRENT_LIST_FILE}|$f|g" \
            -e "s|[$]{KOKKOS_IMPORT_PREFIX}/include|$include_dir|g" \
            -e "s|/usr/lib/include|$include_dir|g" \
            "$f" >"$staging/${f##*/}"
    done
    grep -q "INTERFACE_INCLUDE_DIRECTORIES \"$include_dir\"" "$staging/KokkosConfig.cmake" || {
        log "could not repair the include directory in $config (its layout changed?)"
        return 1
    }
    # shellcheck disable=SC2016  # ${Version} is a dpkg-query format
    printf 'kokkos %s (Serial only) = repaired CMake config of Debian %s %s\n' "$KOKKOS_VERSION" \
        "$KOKKOS_FALLBACK_PACKAGE" "$(dpkg-query -W -f='${Version}' "$KOKKOS_FALLBACK_PACKAGE")" \
        >"$staging/.complete"
    rm -rf -- "$dest"
    mv -T -- "$staging" "$dest"
    log "repaired CMake config of $config_dir is in $dest"
}

# ---------------------------------------------------------------------------
# Step 2: the backend and its architecture.

# The Kokkos version that a Kokkos CMakeLists.txt on stdin declares, spelt as
# Kokkos' releases are (4.6.01; 4.x writes the patch level as 1, 3.4 as 01).
kokkos_source_version() {
    awk '/^set\(Kokkos_VERSION_(MAJOR|MINOR|PATCH) / { sub(/\)$/, "", $2); n[$1] = $2 }
         END { if (length(n) == 3) printf "%d.%d.%02d\n", n["set(Kokkos_VERSION_MAJOR"],
                                           n["set(Kokkos_VERSION_MINOR"], n["set(Kokkos_VERSION_PATCH"] }'
}

# The backends an installed Kokkos was built with (e.g. CUDA;SERIAL).
kokkos_devices() {
    local f
    f=$(find "$1" -maxdepth 5 -name KokkosConfigCommon.cmake -print -quit 2>/dev/null)
    [[ -n $f ]] || {
        echo unknown
        return
    }
    sed -n 's/^ *[Ss][Ee][Tt](Kokkos_DEVICES \(.*\))$/\1/p' "$f" | head -n 1
}

# The compiler in PATH, else in the toolkit's home: $CUDA_HOME ($ROCM_PATH)
# where set, else its usual place.
find_nvcc() {
    command -v nvcc && return 0
    local home=${CUDA_HOME:-/usr/local/cuda}
    [[ -x $home/bin/nvcc ]] && echo "$home/bin/nvcc"
}
find_hipcc() {
    if [[ -n ${HIPCC:-} ]]; then
        command -v "$HIPCC" && return 0
        log "HIPCC=$HIPCC is not a command"
        return 1
    fi
    command -v hipcc && return 0
    local home=${ROCM_PATH:-/opt/rocm}
    [[ -x $home/bin/hipcc ]] && echo "$home/bin/hipcc"
}

# The first NVIDIA GPU's compute capability (9.0) and name, or nothing.
nvidia_gpu() {
    command -v nvidia-smi >/dev/null || return 1
    nvidia-smi --query-gpu=compute_cap,name --format=csv,noheader 2>/dev/null | head -n 1 | grep . || return 1
}
# The first AMD GPU agent's gfx name (gfx90a), or nothing.
amd_gpu() {
    command -v rocminfo >/dev/null || return 1
    rocminfo 2>/dev/null | awk '$1 == "Name:" && $2 ~ /^gfx[0-9a-f]+/ { sub(/:.*/, "", $2); print $2; exit }' | grep .
}

NVIDIA_ARCHS="MAXWELL50 MAXWELL52 MAXWELL53 PASCAL60 PASCAL61 VOLTA70 VOLTA72 TURING75 AMPERE80 AMPERE86 ADA89 HOPPER90 BLACKWELL100 BLACKWELL120"
AMD_ARCHS="AMD_GFX906 AMD_GFX908 AMD_GFX90A AMD_GFX940 AMD_GFX942 AMD_GFX942_APU AMD_GFX1030 AMD_GFX1100 AMD_GFX1103"
HOST_ARCHS="NATIVE AMDAVX ARMV80 ARMV81 ARMV8_THUNDERX ARMV8_THUNDERX2 A64FX ARMV9_GRACE SNB HSW BDW ICL ICX SKL SKX KNC KNL SPR POWER8 POWER9 ZEN ZEN2 ZEN3 ZEN4 RISCV_SG2042 RISCV_RVA22V"

# kokkos_arch BACKEND NAME: Kokkos' name (Kokkos_ARCH_<name>) for an
# architecture given as the user or the device spells it; fails if unknown.
kokkos_arch() {
    local backend=$1 name=${2^^} cc a
    case $backend in
    cuda)
        cc=${name#SM_}
        cc=${cc#COMPUTE_}
        cc=${cc/./}
        for a in $NVIDIA_ARCHS; do
            [[ $name == "$a" || ${a//[A-Z]/} == "$cc" ]] && echo "$a" && return 0
        done
        ;;
    hip)
        name=${name%%:*} # rocminfo's gfx90a:sramecc+:xnack-
        for a in $AMD_ARCHS; do
            [[ $name == "$a" || AMD_$name == "$a" ]] && echo "$a" && return 0
        done
        ;;
    openmp)
        for a in $HOST_ARCHS; do
            [[ $name == "$a" ]] && echo "$a" && return 0
        done
        ;;
    esac
    return 1
}

known_archs() {
    case $1 in
    cuda) echo "sm_XY or $NVIDIA_ARCHS" ;;
    hip) echo "gfxNNN or $AMD_ARCHS" ;;
    openmp) echo "$HOST_ARCHS" ;;
    esac
}

# Sets BACKEND (openmp, cuda, hip), ARCH (a Kokkos arch name or empty) and
# COMPILER (nvcc or hipcc for a GPU backend) from the options, or exits 2.
choose_backend() {
    local requested=$1 arch=$2 gpu compiler=
    BACKEND=$requested
    if [[ $requested == auto ]]; then
        BACKEND=openmp
        if gpu=$(nvidia_gpu); then
            if compiler=$(find_nvcc); then
                BACKEND=cuda
                log "backend: CUDA (auto): nvidia-smi sees ${gpu#*, } (compute capability ${gpu%%,*}), nvcc is $compiler"
            else
                log "nvidia-smi sees ${gpu#*, }, but there is no nvcc (PATH, ${CUDA_HOME:-/usr/local/cuda}/bin): not CUDA"
            fi
        fi
        if [[ $BACKEND == openmp ]] && gpu=$(amd_gpu); then
            if compiler=$(find_hipcc); then
                BACKEND=hip
                log "backend: HIP (auto): rocminfo sees a $gpu GPU, hipcc is $compiler"
            else
                log "rocminfo sees a $gpu GPU, but there is no hipcc (PATH, ${ROCM_PATH:-/opt/rocm}/bin): not HIP"
            fi
        fi
        [[ $BACKEND == openmp ]] && log "backend: OpenMP (auto): no GPU with its compiler found (nvidia-smi + nvcc, rocminfo + hipcc)"
    fi
    case $BACKEND in
    cuda)
        compiler=$(find_nvcc) || die 2 "--backend cuda: no nvcc in PATH or ${CUDA_HOME:-/usr/local/cuda}/bin"
        if [[ -z $arch ]]; then
            gpu=$(nvidia_gpu) || die 2 "--backend cuda: nvidia-smi sees no NVIDIA GPU to read the architecture from; name it with --arch (e.g. --arch sm_90)"
            arch=${gpu%%,*}
            log "architecture: compute capability $arch of ${gpu#*, } (nvidia-smi)"
        fi
        ;;
    hip)
        compiler=$(find_hipcc) || die 2 "--backend hip: no ${HIPCC:-hipcc in PATH or ${ROCM_PATH:-/opt/rocm}/bin}"
        if [[ -z $arch ]]; then
            arch=$(amd_gpu) || die 2 "--backend hip: rocminfo sees no AMD GPU to read the architecture from; name it with --arch (e.g. --arch gfx90a)"
            log "architecture: $arch (rocminfo)"
        fi
        ;;
    openmp) ;;
    *) die 2 "unknown backend '$BACKEND' (auto, openmp, cuda or hip)" ;;
    esac
    ARCH=
    if [[ -n $arch ]]; then
        ARCH=$(kokkos_arch "$BACKEND" "$arch") ||
            die 2 "unknown architecture '$arch' for $BACKEND; known: $(known_archs "$BACKEND")"
    fi
    COMPILER=$compiler
    if [[ $BACKEND != openmp ]]; then
        log "$BACKEND for Kokkos_ARCH_$ARCH with $COMPILER"
    fi
}

# ---------------------------------------------------------------------------
# Step 3: the pinned Kokkos release, built for the chosen backend.

# source_check VAR NAME MARKER VERSION_FN PINNED HINT: exits 2 unless the
# source named by $VAR, a tree or a release tarball (<dir>/CMakeLists.txt and
# <dir>/MARKER), is NAME at version PINNED, as VERSION_FN reads it from its
# CMakeLists.txt; HINT ends the message of a wrong version.
source_check() {
    local var=$1 name=$2 marker=$3 version_fn=$4 pinned=$5 hint=$6 src top v
    src=${!var}
    if [[ -d $src ]]; then
        [[ -f $src/CMakeLists.txt && -f $src/$marker ]] ||
            die 2 "$var=$src is not a source tree of $name (no CMakeLists.txt and $marker)"
        v=$("$version_fn" <"$src/CMakeLists.txt")
    elif [[ -f $src ]]; then
        top=$(tar -tf "$src" 2>/dev/null | awk -F/ 'NF >= 2 && $2 == "CMakeLists.txt" { print $1; exit }') || true
        if [[ -z $top ]] || ! tar -tf "$src" "$top/$marker" >/dev/null 2>&1; then
            die 2 "$var=$src is not a release tarball of $name (no <dir>/CMakeLists.txt and <dir>/$marker in it)"
        fi
        v=$(tar -xOf "$src" "$top/CMakeLists.txt" | "$version_fn")
    else
        die 2 "$var=$src does not exist"
    fi
    [[ $v == "$pinned" ]] ||
        die 2 "$var=$src is $name '${v:-of no version}', but karma pins $pinned$hint"
}

# unpack TARBALL NAME: unpacks a release tarball into $WORK/NAME-src and
# prints its top directory.
unpack() {
    local top
    mkdir -p "$WORK/$2-src"
    tar -xf "$1" -C "$WORK/$2-src"
    top=$(find "$WORK/$2-src" -mindepth 2 -maxdepth 2 -name CMakeLists.txt -printf '%h\n' -quit)
    [[ -n $top ]] || return 1
    echo "$top"
}

# Unpacks or downloads the pinned Kokkos into $WORK and prints its directory.
kokkos_source_tree() {
    local src=${KARMA_KOKKOS_SOURCE:-} tarball
    if [[ -d $src ]]; then
        echo "$src"
        return 0
    fi
    tarball=$src
    if [[ -z $tarball ]]; then
        tarball=$WORK/kokkos-$KOKKOS_PINNED.tar.gz
        log "downloading $KOKKOS_PINNED_URL (offline? download it elsewhere and set KARMA_KOKKOS_SOURCE to the file)"
        if command -v curl >/dev/null; then
            curl -fsSL --retry 2 --connect-timeout 20 -o "$tarball" "$KOKKOS_PINNED_URL" || return 1
        else
            wget -q -T 20 -O "$tarball" "$KOKKOS_PINNED_URL" || return 1
        fi
        echo "$KOKKOS_PINNED_SHA256  $tarball" | sha256sum -c --status ||
            die 3 "the download of $KOKKOS_PINNED_URL does not have the release's SHA-256 $KOKKOS_PINNED_SHA256"
    fi
    unpack "$tarball" kokkos
}

# The CUDA major version of an nvcc ("release 13.0" -> 13).
nvcc_major() { "$1" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p' | head -n 1; }
clang_major() { "$1" --version | sed -n 's/.*clang version \([0-9]*\)\..*/\1/p' | head -n 1; }

# patch_kokkos SRC PATCHFILE LOGFILE: applies PATCHFILE to a copy of SRC
# (never the user's tree); sets src to the patched tree.
patch_kokkos() {
    local tree=$1 patchfile=$2 logfile=$3
    log "applying ${patchfile#"$SCRIPT_DIR"/}"
    if [[ $tree != "$WORK"/* ]]; then
        cp -a "$tree" "$WORK/kokkos-patched"
        tree=$WORK/kokkos-patched
    fi
    run_step "$logfile" patch -p1 -d "$tree" -i "$patchfile"
    src=$tree
}

# Run by strictly, like build_kokkos_from_source.
build_pinned_kokkos() {
    local prefix=$1 staging=$2 logfile=$3 src t0 major patched=unpatched
    local args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$prefix"
        -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF)
    t0=$(now)
    src=$(kokkos_source_tree) || {
        log "could not get the Kokkos $KOKKOS_PINNED source"
        return 1
    }
    case $BACKEND in
    openmp) args+=(-DKokkos_ENABLE_OPENMP=ON) ;;
    cuda)
        # CUDA as a CMake language: karma's sources then compile as CUDA
        # without nvcc_wrapper (common/cmake/KarmaDependencies.cmake).
        args+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_COMPILE_AS_CMAKE_LANGUAGE=ON
            -DCMAKE_CUDA_COMPILER="$COMPILER")
        major=$(nvcc_major "$COMPILER")
        if ((${major:-0} >= 13)); then
            log "nvcc is CUDA $major"
            patch_kokkos "$src" "$SCRIPT_DIR/kokkos/kokkos-$KOKKOS_PINNED-cuda13.patch" "$logfile"
            patched="patched for CUDA $major"
        fi
        ;;
    hip)
        # Kokkos 4.6 wants rocThrust for HIP by default; Debian has none, and
        # only Kokkos::sort, which karma does not call, uses it.
        args+=(-DKokkos_ENABLE_HIP=ON -DCMAKE_CXX_COMPILER="$COMPILER" -DKokkos_ENABLE_ROCTHRUST=OFF)
        major=$(clang_major "$COMPILER")
        if ((${major:-0} >= 17)); then
            log "the HIP compiler is clang $major"
            patch_kokkos "$src" "$SCRIPT_DIR/kokkos/kokkos-$KOKKOS_PINNED-hip-clang17.patch" "$logfile"
            patched="patched for clang $major"
        fi
        ;;
    esac
    [[ -z $ARCH ]] || args+=("-DKokkos_ARCH_$ARCH=ON")

    log "building Kokkos $KOKKOS_PINNED ($BACKEND${ARCH:+, $ARCH}) with $(nproc) jobs; log: $logfile"
    run_step "$logfile" cmake -S "$src" -B "$WORK/kokkos-build" "${args[@]}"
    run_step "$logfile" cmake --build "$WORK/kokkos-build" --parallel "$(nproc)"
    rm -rf -- "$staging"
    run_step "$logfile" cmake --install "$WORK/kokkos-build" --prefix "$staging"
    printf 'kokkos %s (%s%s) from %s, %s, built %s in %s s\n' "$KOKKOS_PINNED" "$BACKEND" \
        "${ARCH:+, $ARCH}" "${KARMA_KOKKOS_SOURCE:-$KOKKOS_PINNED_URL}" \
        "$patched" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(since "$t0")" >"$staging/.complete"
    log "Kokkos $KOKKOS_PINNED: download/unpack, configure, build and install took $(since "$t0") s"
    rm -rf -- "$prefix"
    mv -T -- "$staging" "$prefix"
}

# ---------------------------------------------------------------------------
# Step 4: find or make Kokkos; sets RESULT.

complete_install() { # PREFIX: a finished build from an earlier run?
    [[ -f $1/.complete ]] && compgen -G "$1/lib*/cmake/Kokkos/KokkosConfig.cmake" >/dev/null
}

karma_cache() {
    local cache=${KARMA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/karma}
    mkdir -p -- "$cache" || die 3 "cannot create cache directory $cache"
    (cd -- "$cache" && pwd)
}

# reuse_or_lock CACHE PREFIX [REUSE]: true when REUSE (default: reuse, which
# sets RESULT) finds PREFIX finished; otherwise takes the cache's lock, so
# that concurrent runs build it once.
reuse_or_lock() {
    local cache=$1 prefix=$2 reuse_fn=${3:-reuse}
    "$reuse_fn" "$prefix" && return 0
    if command -v flock >/dev/null; then
        exec 9>"$cache/.bootstrap.lock"
        if ! flock -n 9; then
            log "another bootstrap is working in $cache; waiting for it"
            flock 9
        fi
        "$reuse_fn" "$prefix" && return 0
    fi
    return 1
}

# reuse PREFIX: true (RESULT set) when PREFIX is a finished install.
reuse() {
    complete_install "$1" || return 1
    log "reusing $(head -n 1 "$1/.complete") in $1"
    RESULT=$1
}

find_pinned_kokkos() {
    local cache prefix tag logfile
    cache=$(karma_cache)
    tag=$BACKEND${ARCH:+-${ARCH,,}}
    prefix=$cache/kokkos-$KOKKOS_PINNED-$tag
    reuse_or_lock "$cache" "$prefix" && return 0

    mkdir -p "$cache/logs"
    logfile=$cache/logs/kokkos-$KOKKOS_PINNED-$tag.log
    : >"$logfile"
    STAGING+=("$prefix.tmp.$$")
    strictly build_pinned_kokkos "$prefix" "$prefix.tmp.$$" "$logfile"
    ((STRICT_RC == 0)) || die 3 "building Kokkos $KOKKOS_PINNED ($tag) failed; its log is $logfile"
    RESULT=$prefix
}

# True where the pinned Kokkos can be had without KARMA_KOKKOS_SOURCE: a
# finished install in the cache, or its release reachable for download.
# Otherwise the OpenMP default falls back to Debian's Kokkos, and says so.
pinned_source_at_hand() {
    local prefix
    prefix=$(karma_cache)/kokkos-$KOKKOS_PINNED-$BACKEND
    complete_install "$prefix" && return 0
    if command -v curl >/dev/null &&
        curl -fsIL --retry 1 --connect-timeout 10 -o /dev/null "$KOKKOS_PINNED_URL" 2>/dev/null; then
        return 0
    fi
    log "Kokkos $KOKKOS_PINNED: no install in $prefix, no KARMA_KOKKOS_SOURCE, and no download" \
        "of its release; falling back to Debian's Kokkos $KOKKOS_VERSION (set KARMA_KOKKOS_SOURCE" \
        "to the release tarball to build $KOKKOS_PINNED)"
    return 1
}

find_debian_kokkos() {
    local cache prefix fallback
    cache=$(karma_cache)
    prefix=$cache/kokkos-$KOKKOS_VERSION-openmp
    fallback=$cache/kokkos-$KOKKOS_VERSION-serial-debian
    reuse_or_lock "$cache" "$prefix" && return 0

    STAGING+=("$prefix.tmp.$$" "$fallback.tmp.$$")
    if [[ ${KARMA_BOOTSTRAP_FORCE_FALLBACK:-0} == 1 ]]; then
        log "KARMA_BOOTSTRAP_FORCE_FALLBACK=1: skipping the source build"
    else
        log "no finished Kokkos in $prefix; building it"
        # Keep going on failure: the fallback follows.
        strictly build_kokkos_from_source "$prefix" "$prefix.tmp.$$"
        if ((STRICT_RC == 0)); then
            log "installed Kokkos $KOKKOS_VERSION (OpenMP + Serial) in $prefix"
            RESULT=$prefix
            return 0
        fi
        log "building Kokkos from the $KOKKOS_SOURCE_PACKAGE source package failed"
    fi

    strictly debian_kokkos_fallback "$fallback" "$fallback.tmp.$$"
    ((STRICT_RC == 0)) || die 3 "no usable Kokkos: the source build and the $KOKKOS_FALLBACK_PACKAGE fallback both failed"
    log "WARNING: Kokkos::DefaultExecutionSpace will be Serial; runs are single-threaded"
    RESULT=$fallback
}


# ---------------------------------------------------------------------------
# Step 5 (--arborx): ArborX installed into the pinned Kokkos' prefix, where
# karma's CMake looks for it beside Kokkos (miniapps/contact/CMakeLists.txt).

# The ArborX version an ArborX CMakeLists.txt on stdin declares (2.1.0).
arborx_source_version() {
    awk '/^set\(ARBORX_VERSION_(MAJOR|MINOR|PATCH) / { sub(/\)$/, "", $2); n[$1] = $2 }
         END { if (length(n) == 3) printf "%d.%d.%d\n", n["set(ARBORX_VERSION_MAJOR"],
                                           n["set(ARBORX_VERSION_MINOR"], n["set(ARBORX_VERSION_PATCH"] }'
}

# reuse_arborx PREFIX: true when ArborX is installed in PREFIX.
reuse_arborx() {
    [[ -f $1/.arborx-complete ]] && compgen -G "$1/share/cmake/ArborX/ArborXConfig.cmake" >/dev/null || return 1
    log "reusing $(head -n 1 "$1/.arborx-complete") in $1"
}

# Run by strictly, like build_pinned_kokkos.  ArborX is
# headers and a CMake package: configured with Kokkos' own compiler, installed.
install_arborx() {
    local prefix=$1 logfile=$2 src t0
    local args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix")
    t0=$(now)
    src=$KARMA_ARBORX_SOURCE
    [[ -d $src ]] || src=$(unpack "$src" arborx)
    case $BACKEND in
    cuda) args+=(-DCMAKE_CUDA_COMPILER="$COMPILER") ;;
    # Debian has no rocThrust (see build_pinned_kokkos).
    hip) args+=(-DCMAKE_CXX_COMPILER="$COMPILER" -DARBORX_ENABLE_ROCTHRUST=OFF) ;;
    esac
    log "installing ArborX $ARBORX_PINNED into $prefix; log: $logfile"
    run_step "$logfile" cmake -S "$src" -B "$WORK/arborx-build" "${args[@]}"
    run_step "$logfile" cmake --build "$WORK/arborx-build"
    run_step "$logfile" cmake --install "$WORK/arborx-build"
    printf 'arborx %s from %s, installed %s in %s s\n' "$ARBORX_PINNED" "$KARMA_ARBORX_SOURCE" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(since "$t0")" >"$prefix/.arborx-complete"
}

find_arborx() {
    local prefix=$1 cache logfile
    cache=$(karma_cache)
    reuse_or_lock "$cache" "$prefix" reuse_arborx && return 0
    mkdir -p "$cache/logs"
    logfile=$cache/logs/arborx-$ARBORX_PINNED-in-${prefix##*/}.log
    : >"$logfile"
    strictly install_arborx "$prefix" "$logfile"
    ((STRICT_RC == 0)) || die 3 "installing ArborX $ARBORX_PINNED into $prefix failed; its log is $logfile"
}
# ---------------------------------------------------------------------------

# arborx_check KOKKOS: exits 2 unless --arborx can be done with the Kokkos
# chosen (pinned, or '' where the user named one) and the source given.
arborx_check() {
    [[ -z ${RESULT:-} ]] ||
        die 2 "--arborx installs ArborX into the Kokkos this script builds, not into yours (\$Kokkos_ROOT/\$Kokkos_DIR): install ArborX $ARBORX_PINNED against it and pass -DArborX_ROOT to CMake"
    [[ $1 == pinned ]] ||
        die 2 "--arborx needs the pinned Kokkos $KOKKOS_PINNED (ArborX $ARBORX_PINNED needs Kokkos 4.5 or newer), not --kokkos $1"
    [[ -n ${KARMA_ARBORX_SOURCE:-} ]] ||
        die 2 "--arborx needs ArborX $ARBORX_PINNED's source: set KARMA_ARBORX_SOURCE to a source tree or a release tarball ($ARBORX_PINNED_URL)"
    source_check KARMA_ARBORX_SOURCE ArborX src/ArborX.hpp arborx_source_version "$ARBORX_PINNED" ""
    KARMA_ARBORX_SOURCE=$(realpath -- "$KARMA_ARBORX_SOURCE")
}

main() {
    local want_kokkos=1 want_arborx=0 backend=auto arch='' kokkos=
    while (($# > 0)); do
        case $1 in
        --backend | --arch | --kokkos)
            (($# >= 2)) || die 2 "$1 needs a value (see --help)"
            case $1 in
            --backend) backend=$2 ;;
            --arch) arch=$2 ;;
            --kokkos) kokkos=$2 ;;
            esac
            shift 2
            ;;
        --backend=* | --arch=* | --kokkos=*)
            case $1 in
            --backend=*) backend=${1#*=} ;;
            --arch=*) arch=${1#*=} ;;
            --kokkos=*) kokkos=${1#*=} ;;
            esac
            shift
            ;;
        --no-kokkos)
            want_kokkos=0
            shift
            ;;
        --arborx)
            want_arborx=1
            shift
            ;;
        -h | --help)
            usage >&3
            exit 0
            ;;
        *) die 2 "unknown argument: $1 (see --help)" ;;
        esac
    done
    case $kokkos in
    "" | debian | pinned) ;;
    *) die 2 "--kokkos takes debian or pinned, not '$kokkos'" ;;
    esac

    if ((!want_arborx)); then
        [[ -z ${KARMA_ARBORX_SOURCE:-} ]] || die 2 "KARMA_ARBORX_SOURCE is set, but ArborX is installed only with --arborx"
    elif ((!want_kokkos)); then
        die 2 "--arborx installs ArborX beside Kokkos; it does not go with --no-kokkos"
    fi
    if ((want_kokkos)) && ! user_kokkos; then
        choose_backend "$backend" "$arch"
        if [[ -z $kokkos ]]; then
            kokkos=pinned
            [[ $BACKEND == openmp && -z ${KARMA_KOKKOS_SOURCE:-} && -z $ARCH && $want_arborx == 0 ]] &&
                ! pinned_source_at_hand && kokkos=debian
        fi
        if [[ $kokkos == debian ]]; then
            [[ $BACKEND == openmp ]] || die 2 "--kokkos debian is OpenMP only; $BACKEND needs --kokkos pinned"
            [[ -z ${KARMA_KOKKOS_SOURCE:-} ]] || die 2 "KARMA_KOKKOS_SOURCE is for the pinned Kokkos $KOKKOS_PINNED, not --kokkos debian"
        elif [[ -n ${KARMA_KOKKOS_SOURCE:-} ]]; then
            source_check KARMA_KOKKOS_SOURCE Kokkos core/src/Kokkos_Core.hpp kokkos_source_version \
                "$KOKKOS_PINNED" " (or set Kokkos_ROOT to a Kokkos you built)"
            KARMA_KOKKOS_SOURCE=$(realpath -- "$KARMA_KOKKOS_SOURCE")
        fi
    fi
    ((!want_arborx)) || arborx_check "$kokkos"
    if [[ -r /etc/os-release ]] && ! grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release; then
        log "note: written for Debian 12 (bookworm); this is $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
    fi

    WORK=$(mktemp -d "${TMPDIR:-/tmp}/karma-bootstrap.XXXXXX")
    install_packages
    check_python_modules
    ((want_kokkos)) || return 0

    if [[ -z ${RESULT:-} ]]; then
        if [[ $kokkos == pinned ]]; then
            find_pinned_kokkos
        else
            find_debian_kokkos
        fi
    fi
    ((!want_arborx)) || find_arborx "$RESULT"
    printf '%s\n' "$RESULT" >&3
}

RESULT=
main "$@"
