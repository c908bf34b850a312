#!/usr/bin/env bash
# scripts/clang-tidy.sh - clang-tidy, with the checks of .clang-tidy, over the
# project's translation units as a build compiles them (its
# compile_commands.json, which the preset `default` writes).  Not part of the
# test command: the 39 sources of the preset `default` take 4 minutes on 2 cores.
#
# usage: scripts/clang-tidy.sh [-p BUILD_DIR] [-j N] [FILE...] [-- CLANG_TIDY_ARGS...]
#   -p BUILD_DIR   the build whose compile_commands.json to use (default: build/default;
#                  make it with `cmake --preset default`, no need to build)
#   -j N           clang-tidy processes at once (default: the number of cores)
#   FILE...        only these sources (default: every project source in the build)
#   -- ARGS        more arguments for clang-tidy, e.g. -- --checks='-*,bugprone-*'
#
# Each finding is printed once (a header's findings come from every source that
# includes it), then a count per check.  Exit status: 0 when clang-tidy found
# nothing, 1 when it found something or failed, 2 for bad usage or no build.
# The tool is Debian 12's clang-tidy 14 (apt-get install clang-tidy);
# KARMA_CLANG_TIDY names another.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/default
jobs=$(nproc 2>/dev/null || echo 2)
files=()
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -p) [[ $# -ge 2 ]] || { echo "clang-tidy.sh: -p needs a value" >&2; exit 2; }
      build=$2; shift 2 ;;
    -j) [[ $# -ge 2 ]] || { echo "clang-tidy.sh: -j needs a value" >&2; exit 2; }
      jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "clang-tidy.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) files+=("$(realpath -- "$1")"); shift ;;
  esac
done

tidy=${KARMA_CLANG_TIDY:-}
if [[ -z $tidy ]]; then
  tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
    echo "clang-tidy.sh: clang-tidy is missing: install Debian's package clang-tidy" \
      "(apt-get install clang-tidy)" >&2
    exit 1
  }
fi
db=$build/compile_commands.json
if [[ ! -f $db ]]; then
  echo "clang-tidy.sh: no $db: configure that build first, e.g." \
    "cmake --preset default -DKokkos_ROOT=\"\$(scripts/bootstrap.sh)\"" >&2
  exit 2
fi
build=$(cd "$build" && pwd)

# The project's own sources in the build, once each (not generated ones).
if [[ ${#files[@]} -eq 0 ]]; then
  mapfile -t files < <(python3 - "$db" "$root" "$build" <<'EOF'
import json, os, sys
db, root, build = sys.argv[1:]
seen = set()
for entry in json.load(open(db)):
    path = os.path.realpath(os.path.join(entry.get("directory", ""), entry["file"]))
    if path.startswith(root + os.sep) and not path.startswith(build + os.sep) and path not in seen:
        seen.add(path)
        print(path)
EOF
  )
fi
[[ ${#files[@]} -gt 0 ]] || { echo "clang-tidy.sh: no sources of $root in $db" >&2; exit 2; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/karma-clang-tidy.XXXXXX")
trap 'rm -rf "$logs"' EXIT
echo "clang-tidy.sh: $("$tidy" --version | sed -n 's/^ *\(.*version [0-9.]*\).*/\1/p' | head -n 1)" \
  "on ${#files[@]} sources of $build, $jobs at a time" >&2
rc=0
# One log per source, so that parallel runs do not mix their lines; --quiet
# drops the counts of suppressed (third-party) warnings.
export tidy build logs
# shellcheck disable=SC2016  # the inner bash expands it, for each source
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" bash -c \
  'f=${!#}; "$tidy" -p "$build" --quiet "${@:1:$#-1}" "$f" >"$logs/${f//\//_}.log" 2>&1' \
  clang-tidy "${extra[@]}" || rc=$?

# Every diagnostic with its notes, once; then the count per check.
python3 - "$logs" <<'EOF' || rc=$?
import collections, os, re, sys
head = re.compile(r"^(\S+:\d+:\d+): (warning|error): (.*) \[([^\]]+)\]$")
tally = re.compile(r"^\d+ (warnings?|errors?) (generated|treated as errors)\.?$")
seen, counts = set(), collections.Counter()
for name in sorted(os.listdir(sys.argv[1])):
    block, key = [], None
    lines = open(os.path.join(sys.argv[1], name), errors="replace").read().splitlines()
    for line in lines + [None]:
        m = head.match(line) if line is not None else None
        if line is None or m:
            if key and key not in seen:
                seen.add(key)
                counts[key[1]] += 1
                print("\n".join(block))
            if m:
                check = m.group(4).replace(",-warnings-as-errors", "")
                path, place = m.group(1).split(":", 1)
                key, block = (os.path.normpath(path) + ":" + place, check), [line]
        elif tally.match(line):
            continue
        elif key:
            block.append(line)
        elif line.strip():
            print(line)  # clang-tidy's own errors: a source it could not read
for check, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"clang-tidy.sh: {n:5d} {check}", file=sys.stderr)
print(f"clang-tidy.sh: {sum(counts.values())} finding(s)", file=sys.stderr)
sys.exit(1 if counts else 0)
EOF
exit $((rc == 0 ? 0 : 1))
