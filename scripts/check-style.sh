#!/usr/bin/env bash
# scripts/check-style.sh - the project's style checks, as ctest (label
# `style`) and the pre-commit hooks run them:
#   format   clang-format --dry-run --Werror on the C++ (*.cpp *.hpp *.h *.cu),
#            with .clang-format
#   shell    shellcheck on the shell scripts (*.sh, *.bash, or a sh/bash
#            shebang), with .shellcheckrc
#   python   flake8 on the Python (*.py, or a python shebang), with .flake8
#   size     no file of the C++ in miniapps/ and common/ (*.cpp *.hpp) over
#            700 lines, none of its functions over 100, signature to closing
#            brace; no file of the Python in python/src (*.py) over 700 lines,
#            none of its functions over 100 (scripts/check-function-size.py)
#
# usage: scripts/check-style.sh [--root DIR] [--only format|shell|python|size]... [FILE...]
#   --root DIR   the tree to check (default: the one this script is in)
#   --only C     run only check C (repeatable; default: all four)
#   FILE...      check these files (relative to DIR), not the whole tree
#
# The files are git's tracked files where DIR is the top of a git checkout,
# else every file under DIR (a source tarball) except build trees (build/,
# build-*/ and any directory holding a CMakeCache.txt), .git, .gpu/ and
# __pycache__/.  The tools are Debian 12's (clang-format 14, shellcheck 0.9,
# flake8 5, python3), which scripts/bootstrap.sh installs; KARMA_CLANG_FORMAT,
# KARMA_SHELLCHECK, KARMA_FLAKE8 and KARMA_PYTHON3 name others.  A missing
# tool is a failure that names its Debian package.  Exit status: 0 when every
# check passed, 1 when one found something or its tool is missing, 2 for bad
# usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd "$here/.." && pwd -P)
checks=()
files=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --root) [[ $# -ge 2 ]] || { echo "check-style: --root needs a value" >&2; exit 2; }
      root=$(cd "$2" && pwd -P); shift 2 ;;
    --only) [[ $# -ge 2 ]] || { echo "check-style: --only needs a value" >&2; exit 2; }
      case $2 in
        format|shell|python|size) checks+=("$2") ;;
        *) echo "check-style: unknown check '$2' (format, shell, python or size)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    --) shift; files+=("$@"); break ;;
    -*) echo "check-style: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[[ ${#checks[@]} -gt 0 ]] || checks=(format shell python size)
cd "$root"

# The files to look at, NUL-separated, relative to the root.
list_files() {
  if [[ ${#files[@]} -gt 0 ]]; then
    printf '%s\0' "${files[@]}"
  elif [[ -e .git ]] && command -v git >/dev/null &&
    [[ $(git rev-parse --show-toplevel 2>/dev/null) == "$root" ]]; then
    git ls-files -z
  else
    find . \( -name .git -o -name .gpu -o -name __pycache__ -o -name 'build' -o -name 'build-*' \
      -o -type d -exec test -e '{}/CMakeCache.txt' \; \) -prune -o -type f -print0 |
      sed -z 's|^\./||'
  fi
}

cxx=() shell=() python=() sized=() pysized=()
while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue  # deleted in the work tree, or not a file
  case $f in
    miniapps/*.cpp | miniapps/*.hpp | common/*.cpp | common/*.hpp) cxx+=("$f"); sized+=("$f")
      continue ;;
    *.cpp | *.hpp | *.h | *.cu) cxx+=("$f"); continue ;;
    *.sh | *.bash) shell+=("$f"); continue ;;
    python/src/*.py) python+=("$f"); pysized+=("$f"); continue ;;
    *.py) python+=("$f"); continue ;;
  esac
  line=''  # the first line, for a shebang (read, not a command: no process a file)
  IFS= read -r line <"$f" 2>/dev/null || true
  if [[ $line =~ ^'#!'[[:space:]]*[^[:space:]]*/(env[[:space:]]+)?(ba|da|k)?sh([[:space:]]|$) ]]; then
    shell+=("$f")
  elif [[ $line =~ ^'#!'.*python ]]; then
    python+=("$f")
  fi
done < <(list_files)

# find_tool VARIABLE PACKAGE NAME...: the first NAME in PATH (or $VARIABLE).
find_tool() {
  local var=$1 package=$2 name
  shift 2
  if [[ -n ${!var:-} ]]; then
    command -v "${!var}" && return 0
    echo "check-style: $var=${!var} is not a command" >&2
    return 1
  fi
  for name in "$@"; do
    command -v "$name" && return 0
  done
  echo "check-style: $package is missing (no $* in PATH): install Debian's package" \
    "$package (apt-get install $package, or scripts/bootstrap.sh as root)" >&2
  return 1
}

failed=()
run_check() { # run_check NAME COUNT WHAT CMD...: runs CMD, says what came of it
  local name=$1 count=$2 what=$3
  shift 3
  if "$@"; then
    echo "check-style: $name: $count $what clean"
  else
    echo "check-style: $name: FAILED (the findings are above)"
    failed+=("$name")
  fi
}

check_format() {
  local tool version
  tool=$(find_tool KARMA_CLANG_FORMAT clang-format clang-format-14 clang-format) ||
    { failed+=(format); return; }
  [[ ${#cxx[@]} -gt 0 ]] || { echo "check-style: format: no C++ files"; return; }
  version=$("$tool" --version | head -n 1)
  echo "check-style: format: $version on ${#cxx[@]} files"
  [[ $version == *" version 14."* ]] ||
    echo "check-style: format: note: the tree is formatted with clang-format 14 (Debian 12);" \
      "other versions may format some lines differently"
  # In batches, so that a long list never exceeds the command line.
  run_check format "${#cxx[@]}" "C++ files" \
    xargs -0 -n 200 "$tool" --dry-run --Werror --style=file < <(printf '%s\0' "${cxx[@]}")
}

check_shell() {
  local tool rc=0
  tool=$(find_tool KARMA_SHELLCHECK shellcheck shellcheck) || { failed+=(shell); return; }
  [[ ${#shell[@]} -gt 0 ]] || { echo "check-style: shell: no shell scripts"; return; }
  echo "check-style: shell: shellcheck $("$tool" --version | sed -n 's/^version: //p')" \
    "on ${#shell[@]} files"
  "$tool" --external-sources "${shell[@]}" || rc=1
  run_check shell "${#shell[@]}" "shell scripts" test "$rc" -eq 0
}

check_python() {
  local tool
  tool=$(find_tool KARMA_FLAKE8 flake8 flake8) || { failed+=(python); return; }
  [[ ${#python[@]} -gt 0 ]] || { echo "check-style: python: no Python files"; return; }
  echo "check-style: python: flake8 $("$tool" --version | head -n 1 | cut -d' ' -f1)" \
    "on ${#python[@]} files"
  # -j1: the files are few, and flake8's process pool costs more than it saves.
  local config=()
  [[ ! -f .flake8 ]] || config=(--config .flake8)
  run_check python "${#python[@]}" "Python files" "$tool" -j1 "${config[@]}" "${python[@]}"
}

check_size() {
  local tool
  tool=$(find_tool KARMA_PYTHON3 python3 python3) || { failed+=(size); return; }
  if [[ ${#sized[@]} -eq 0 && ${#pysized[@]} -eq 0 ]]; then
    echo "check-style: size: no C++ files in miniapps/ or common/, no Python in python/src"
    return
  fi
  local rc=0 checked=()
  if [[ ${#sized[@]} -gt 0 ]]; then
    echo "check-style: size: ${#sized[@]} C++ files, at most 700 lines each, their" \
      "functions at most 100"
    xargs -0 -n 200 "$tool" -B "$here/check-function-size.py" --max 100 --max-file 700 \
      < <(printf '%s\0' "${sized[@]}") || rc=1
    checked+=("${#sized[@]} C++ files")
  fi
  if [[ ${#pysized[@]} -gt 0 ]]; then
    echo "check-style: size: ${#pysized[@]} Python files of python/src, at most 700 lines" \
      "each, their functions at most 100"
    xargs -0 -n 200 "$tool" -B "$here/check-function-size.py" --max 100 --max-file 700 \
      < <(printf '%s\0' "${pysized[@]}") || rc=1
    checked+=("${#pysized[@]} Python files")
  fi
  local summary="${checked[0]}"
  [[ ${#checked[@]} -lt 2 ]] || summary+=" and ${checked[1]}"
  run_check size "${summary%% *}" "${summary#* }" test "$rc" -eq 0
}

for check in "${checks[@]}"; do
  "check_$check"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "check-style: FAILED: ${failed[*]}"
  exit 1
fi
echo "check-style: passed: ${checks[*]}"
