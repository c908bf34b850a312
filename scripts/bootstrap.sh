#!/usr/bin/env bash
# scripts/bootstrap.sh - make a Debian 12 (bookworm) machine ready to build karma.
#
# Usage: scripts/bootstrap.sh [--no-kokkos] [--help]
#
# Step 1 installs the Debian packages the suite needs (REQUIRED_PACKAGES).
# Step 2 finds or builds Kokkos and prints, as the only line on stdout, the
# prefix to pass to CMake:
#
#     cmake -S . -B build -DKokkos_ROOT="$(scripts/bootstrap.sh)"
#
# Kokkos is looked for in this order:
#   a. $Kokkos_ROOT, then $Kokkos_DIR, if set: a Kokkos the user names always wins.
#   b. $CACHE/kokkos-3.4.01-openmp, if a previous run finished it (.complete).
#   c. Otherwise that prefix is built (OpenMP + Serial backends) from the Kokkos
#      3.4.01 copy inside Debian's own `trilinos` source package.  apt runs with
#      private state in a temporary directory; the system's apt configuration,
#      lists and caches are not touched, and root is not needed.
#      Measured on a 2-core bookworm machine next to deb.debian.org: apt
#      update + download (166 MB orig tarball) + extract of packages/kokkos
#      ~5 s, configure + build (-j2) + install 8.5-19 s (varies with load),
#      14-22 s in all; a re-run that reuses the cache takes ~0.1 s.
#   d. Only if (c) fails (e.g. no deb-src reachable): Debian's binary
#      libtrilinos-kokkos-dev (also Kokkos 3.4.01, but Serial backend ONLY),
#      with a repaired copy of its CMake config in
#      $CACHE/kokkos-3.4.01-serial-debian.
# where CACHE=${KARMA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/karma}.
#
# Environment:
#   Kokkos_ROOT, Kokkos_DIR            use this Kokkos; nothing is built
#   KARMA_CACHE_DIR                    where built/repaired Kokkos installs live
#   KARMA_BOOTSTRAP_FORCE_FALLBACK=1   skip (c), go straight to (d) (for testing)
#
# All messages go to stderr, prefixed "bootstrap: ".  Exit status 0 on success.

set -euo pipefail

# Debian packages the suite needs to build.  Add new ones here.
REQUIRED_PACKAGES=(
    build-essential
    cmake
    libopenmpi-dev
    openmpi-bin
    libyaml-cpp-dev
    libgtest-dev
    libbenchmark-dev
    nlohmann-json3-dev
    libopenblas-dev   # CBLAS dgemv, karma-matvec's CPU reference
    xz-utils          # Debian source tarballs
    ca-certificates   # https apt mirrors
    python3-pytest      # the cluster tools' tests (scripts/tests)
    python3-matplotlib  # karma-report's plots
    slurm-wlm           # the real-scheduler test: slurmctld + slurmd on this machine
    munge               # Slurm's authentication, for that test
)

KOKKOS_VERSION=3.4.01
KOKKOS_SOURCE_PACKAGE=trilinos                # Debian source package that bundles Kokkos
KOKKOS_FALLBACK_PACKAGE=libtrilinos-kokkos-dev

PROG=bootstrap

# Keep the real stdout on fd 3 for the result line; everything else,
# including the output of every tool we run, goes to stderr.
exec 3>&1 1>&2

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

usage() {
    cat <<EOF
Usage: scripts/bootstrap.sh [--no-kokkos] [--help]

Installs the Debian packages karma needs and prints the Kokkos prefix to pass
to CMake as -DKokkos_ROOT=<prefix>, e.g.

    cmake -S . -B build -DKokkos_ROOT="\$(scripts/bootstrap.sh)"

Options:
  --no-kokkos   only install Debian packages; print nothing
  --help        show this help

Environment:
  Kokkos_ROOT / Kokkos_DIR          use this Kokkos instead (printed as-is)
  KARMA_CACHE_DIR                   cache for built Kokkos (default:
                                    \${XDG_CACHE_HOME:-\$HOME/.cache}/karma)
  KARMA_BOOTSTRAP_FORCE_FALLBACK=1  skip the source build and use Debian's
                                    Serial-only libtrilinos-kokkos-dev
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

# ---------------------------------------------------------------------------
# Step 1: Debian packages.

# Print the packages from the arguments that are not installed.
missing_packages() {
    local pkg status
    for pkg in "$@"; do
        # shellcheck disable=SC2016  # ${db:...} is a dpkg-query format, not a shell expansion
        status=$(dpkg-query -W -f='${db:Status-Status}\n' "$pkg" 2>/dev/null || true)
        grep -qx installed <<<"$status" || printf '%s\n' "$pkg"
    done
}

# apt_install PKG...: install PKGs as root, or tell the user how and exit 1.
apt_install() {
    if ! is_root; then
        log "error: missing Debian packages: $*"
        log "run this (needs root), then re-run scripts/bootstrap.sh:"
        log "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $*"
        exit 1
    fi
    log "installing Debian packages: $*"
    run_step "$WORK/apt-install.log" apt-get update ||
        die "apt-get update failed"
    run_step "$WORK/apt-install.log" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "$@" ||
        die "apt-get install failed"
}

install_packages() {
    local missing
    mapfile -t missing < <(missing_packages "${REQUIRED_PACKAGES[@]}")
    if ((${#missing[@]} == 0)); then
        log "all ${#REQUIRED_PACKAGES[@]} required Debian packages are installed"
        return 0
    fi
    apt_install "${missing[@]}"
    mapfile -t missing < <(missing_packages "${REQUIRED_PACKAGES[@]}")
    ((${#missing[@]} == 0)) || die "still not installed after apt-get install: ${missing[*]}"
}

# ---------------------------------------------------------------------------
# Step 2a: a Kokkos named by the user.

user_kokkos() {
    local var value abs
    for var in Kokkos_ROOT Kokkos_DIR; do
        value=${!var:-}
        [[ -n $value ]] || continue
        [[ -d $value ]] || die "\$$var is set to '$value', which is not an existing directory"
        abs=$(cd -- "$value" && pwd)
        if ! find "$abs" -maxdepth 5 \( -name KokkosConfig.cmake -o -name kokkos-config.cmake \) \
            -print -quit 2>/dev/null | grep -q .; then
            log "warning: no KokkosConfig.cmake under $abs; CMake may not find Kokkos there"
        fi
        log "using the Kokkos named by \$$var: $abs"
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

# Runs in a subshell with set -e (see find_kokkos); any failure aborts the build and
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
    v=$(awk '/^set\(Kokkos_VERSION_(MAJOR|MINOR|PATCH) / { sub(/\)$/, "", $2); v = v (v == "" ? "" : ".") $2 }
             END { print v }' "$src/CMakeLists.txt")
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

# Runs in a subshell with set -e, like build_kokkos_from_source.
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
# Step 2: find or make Kokkos; sets RESULT.

complete_install() { # PREFIX: a finished OpenMP build from an earlier run?
    [[ -f $1/.complete ]] && compgen -G "$1/lib*/cmake/Kokkos/KokkosConfig.cmake" >/dev/null
}

find_kokkos() {
    local cache prefix fallback rc

    user_kokkos && return 0

    cache=${KARMA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/karma}
    mkdir -p -- "$cache" || die "cannot create cache directory $cache"
    cache=$(cd -- "$cache" && pwd)
    prefix=$cache/kokkos-$KOKKOS_VERSION-openmp
    fallback=$cache/kokkos-$KOKKOS_VERSION-serial-debian

    if complete_install "$prefix"; then
        log "reusing Kokkos $KOKKOS_VERSION (OpenMP) in $prefix"
        RESULT=$prefix
        return 0
    fi

    # Serialize concurrent runs sharing one cache; the loser then reuses.
    if command -v flock >/dev/null; then
        exec 9>"$cache/.bootstrap.lock"
        if ! flock -n 9; then
            log "another bootstrap is working in $cache; waiting for it"
            flock 9
        fi
        if complete_install "$prefix"; then
            log "reusing Kokkos $KOKKOS_VERSION (OpenMP) in $prefix"
            RESULT=$prefix
            return 0
        fi
    fi

    STAGING+=("$prefix.tmp.$$" "$fallback.tmp.$$")
    if [[ ${KARMA_BOOTSTRAP_FORCE_FALLBACK:-0} == 1 ]]; then
        log "KARMA_BOOTSTRAP_FORCE_FALLBACK=1: skipping the source build"
    else
        log "no finished Kokkos in $prefix; building it"
        # Run in a subshell so that set -e applies inside (it would be ignored
        # in a function called as an `if` condition); keep going on failure.
        set +e
        (
            set -e
            build_kokkos_from_source "$prefix" "$prefix.tmp.$$"
        )
        rc=$?
        set -e
        if ((rc == 0)); then
            log "installed Kokkos $KOKKOS_VERSION (OpenMP + Serial) in $prefix"
            RESULT=$prefix
            return 0
        fi
        log "building Kokkos from the $KOKKOS_SOURCE_PACKAGE source package failed"
    fi

    set +e
    (
        set -e
        debian_kokkos_fallback "$fallback" "$fallback.tmp.$$"
    )
    rc=$?
    set -e
    ((rc == 0)) || die "no usable Kokkos: the source build and the $KOKKOS_FALLBACK_PACKAGE fallback both failed"
    log "WARNING: Kokkos::DefaultExecutionSpace will be Serial; runs are single-threaded"
    RESULT=$fallback
}

# ---------------------------------------------------------------------------

main() {
    local want_kokkos=1 arg
    for arg in "$@"; do
        case $arg in
        --no-kokkos) want_kokkos=0 ;;
        -h | --help)
            usage >&3
            exit 0
            ;;
        *)
            usage
            die "unknown argument: $arg"
            ;;
        esac
    done

    if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
        die "this script needs a Debian system (dpkg-query and apt-get not found)"
    fi
    if [[ -r /etc/os-release ]] && ! grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release; then
        log "warning: written for Debian 12 (bookworm); this is $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release)"
    fi

    WORK=$(mktemp -d "${TMPDIR:-/tmp}/karma-bootstrap.XXXXXX")

    install_packages
    ((want_kokkos)) || return 0

    RESULT=
    find_kokkos
    printf '%s\n' "$RESULT" >&3
}

main "$@"
