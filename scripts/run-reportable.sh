#!/usr/bin/env bash
# The reportable benchmark of this node, end to end: build what is missing,
# run the reportable campaign, fill in the disclosure from the environment
# captures, pack and check the submission bundle, score it against the
# shipped reference and write the one-page verdict.
#
# usage: scripts/run-reportable.sh [options] [--backend B] [--arch A] [--kokkos K]
#   -o DIR             where everything goes (default: reportable/<host name>); run the
#                      same command again to resume: finished jobs are not run again
#   --campaign FILE    the campaign (default: campaigns/procurement/reportable.yaml on a
#                      GPU node, reportable-host.yaml on a CPU node)
#   --bin-dir DIR      take the mini-apps and tools from DIR (an install's PREFIX/bin)
#                      instead of building them here
#   --scheduler S      slurm or pbs: generate and submit the jobs, then stop; run again
#                      with --collect once they are queued or done to finish
#   --collect          wait for the submitted jobs, then pack, check and score
#   --reference FILE   score against this reference (default: the shipped reference machine's)
#   --answers FILE     the disclosure's answers no capture knows (YAML: system.name,
#                      system.vendor, interconnect, tester.name, tester.organisation),
#                      or the flags --system-name, --system-vendor, --interconnect,
#                      --tester, --organisation; asked on a terminal where missing
#   --gpus N           the node's GPUs the node classes run on (default: those this node
#                      shows: CUDA_VISIBLE_DEVICES, else nvidia-smi -L); a GPU campaign only
#   --var NAME=VALUE   a campaign variable, passed to karma-batch generate (repeatable)
#   --backend, --arch, --kokkos   as scripts/bootstrap.sh (default: the device's own)
#
# Ends with the bundle's path and the verdict page's. Exit status: 0 the bundle
# is valid and reportable and its score complete; 1 a job failed, or the bundle
# is not reportable, or the score is INCOMPLETE (each says why); 2 bad input,
# refused before anything is written; 3 a build or run-time failure; 130 or
# 143 interrupted (SIGINT, SIGTERM): the same command again resumes.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"

out='' campaign='' bin_dir='' scheduler=local collect=0 reference='' answers=() gpus=''
generate_vars=()
karma_split_setup_args "$@"
set -- "${karma_rest_args[@]}"
given=' '
# An option's value, once: the last one winning in silence hid typos.
need() {
  [[ $# -ge 2 ]] || { echo "run-reportable: $1 needs a value" >&2; exit 2; }
  [[ $given != *" $1 "* ]] || { echo "run-reportable: $1 given twice" >&2; exit 2; }
  given+="$1 "
}
while [[ $# -gt 0 ]]; do
  case $1 in
    -o|--output) need -o "${@:2}"; out=$2; shift 2 ;;
    --campaign) need "$@"; campaign=$2; shift 2 ;;
    --bin-dir) need "$@"; bin_dir=$2; shift 2 ;;
    --scheduler) need "$@"; scheduler=$2; shift 2 ;;
    --collect) collect=1; shift ;;
    --reference) need "$@"; reference=$2; shift 2 ;;
    --gpus)
      need "$@"
      [[ $2 =~ ^[1-9][0-9]{0,2}$ ]] || { echo "run-reportable: --gpus $2: a number of GPUs, 1 or more" >&2; exit 2; }
      gpus=$2; shift 2 ;;
    --var) [[ $# -ge 2 ]] || need "$@"; generate_vars+=(--var "$2"); shift 2 ;;
    --answers)
      need "$@"
      [[ -f $2 ]] || { echo "run-reportable: --answers $2: no such file" >&2; exit 2; }
      answers+=("$1" "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --system-name|--system-vendor|--interconnect|--tester|--organisation)
      need "$@"; answers+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "run-reportable: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $scheduler in
  local|slurm|pbs) ;;
  *) echo "run-reportable: --scheduler $scheduler: slurm or pbs (local: the default)" >&2; exit 2 ;;
esac
say() { echo "run-reportable: $*" >&2; }
[[ -n $out ]] || out=$karma_root/reportable/$(hostname -s 2>/dev/null || echo node)
# Every input is checked before anything is written or run: bad input
# leaves nothing behind, in the checkout or elsewhere.
if [[ $collect == 1 && ! -f $out/campaign/campaign.json ]]; then
  say "--collect finishes a campaign submitted with --scheduler, but $out/campaign has none:" \
    "submit it first (--scheduler slurm or pbs), or give its -o DIR"
  exit 2
fi
for f in "$campaign" "$reference"; do
  [[ -z $f || -f $f ]] || { say "$f: no such file"; exit 2; }
done
if [[ -n $bin_dir ]]; then
  [[ -d $bin_dir ]] || { say "--bin-dir $bin_dir: no such directory"; exit 2; }
  bin_dir=$(cd "$bin_dir" && pwd)
fi
started=$SECONDS
elapsed() { printf '%d:%02d' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)); }

# The build: the set-up's Kokkos and the preset of its backend, unless an
# install is given; its log goes into the bundle.
build() {
  local kokkos backend preset
  : > "$out/build.log"
  kokkos=$(karma_kokkos_root "${karma_setup_args[@]}" 2> >(tee -a "$out/build.log" >&2)) ||
    { say "the set-up failed: $out/build.log"; exit 3; }
  backend=$(karma_kokkos_backend "$kokkos")
  preset=$backend
  if [[ $backend == host ]]; then
    # The run rules count only the pinned Kokkos: a host build of its own
    # on it, apart from the test command's build/default.
    if [[ " ${karma_setup_args[*]} " != *" --kokkos"* ]]; then
      kokkos=$(karma_kokkos_root "${karma_setup_args[@]}" --kokkos pinned \
        2> >(tee -a "$out/build.log" >&2)) || { say "the set-up failed: $out/build.log"; exit 3; }
    fi
    preset=host
  fi
  karma_build "$preset" "$kokkos" 2> >(tee -a "$out/build.log" >&2) ||
    { say "the build failed: $out/build.log"; exit 3; }
  bin_dir=$karma_root/build/$preset/bin
}

gpu_build() {
  "$bin_dir/karma-stream" --version 2>/dev/null | grep -q -i -E '\b(cuda|hip)\b'
}

default_campaign() {
  if gpu_build; then
    echo "$karma_root/campaigns/procurement/reportable.yaml"
  else
    echo "$karma_root/campaigns/procurement/reportable-host.yaml"
  fi
}

# The GPUs this node shows, as the mini-apps will see them (0: none counted).
visible_gpus() {
  if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
    tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES" | grep -c . || true
  elif command -v nvidia-smi > /dev/null 2>&1; then
    nvidia-smi -L 2> /dev/null | grep -c '^GPU ' || true
  else
    echo 0
  fi
}

# The node classes run one rank on each of the node's G GPUs: G is --gpus
# (more than the node shows is refused at the start), else counted.
node_gpus() {
  [[ -z $campaign || -n $gpus ]] || return 0  # a campaign of one's own: --var says
  gpu_build || { [[ -z $gpus ]] || no_gpus; return 0; }
  [[ -n $gpus ]] || gpus=$seen_gpus
  if [[ $gpus -lt 1 ]]; then
    say "the node's GPUs could not be counted (no CUDA_VISIBLE_DEVICES, no nvidia-smi): give --gpus N"
    exit 2
  fi
  generate_vars+=(--var "gpus=$gpus")
  say "the node classes run on $gpus GPU(s)"
}

# Before anything runs: a CPU node scored against the shipped reference,
# a GPU node's, can only end INCOMPLETE.
reference_note() {
  [[ -z $reference ]] && ! gpu_build || return 0
  say "a CPU build: the shipped reference is a GPU node's, against which no official" \
    "figure can result (the score ends INCOMPLETE); give --reference a host reference" \
    "(karma-score reference --kind host) for one"
}

# The answers as the disclosure will need them, before the campaign: a
# misspelt key must not fail after every job ran.
check_answers() {
  local ask=()
  [[ -t 0 || -f $out/disclosure.yaml ]] || ask=(--no-input)
  "$bin_dir/karma-bundle" disclose --check-answers "${answers[@]}" "${ask[@]}" || exit 2
}

# Ctrl-C, or the batch system's SIGTERM: what was done is kept.
interrupted() {
  say "interrupted ($(elapsed) elapsed); run the same command again to resume: finished" \
    "jobs are not run again"
  exit "$1"
}
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

run_campaign() {
  local dir=$out/campaign
  if [[ -f $dir/campaign.json ]]; then
    say "resuming $dir: $("$bin_dir/karma-batch" status "$dir" | tail -n 1)"
  else
    [[ -n $campaign ]] || campaign=$(default_campaign)
    "$bin_dir/karma-batch" generate "$campaign" -o "$dir" --bin-dir "$bin_dir" \
      --scheduler "$scheduler" "${generate_vars[@]}" || exit $?
  fi
  if [[ $collect == 1 ]]; then
    "$bin_dir/karma-batch" wait "$dir" || {
      local code=$?
      [[ $code != 130 && $code != 143 ]] || interrupted "$code"
      say "a job did not pass: karma-batch status $dir"
      exit 1
    }
    return
  fi
  # Jobs interrupted or lost run again; passed ones do not.
  "$bin_dir/karma-batch" submit "$dir" --resubmit-failed || {
    local code=$?
    [[ $code != 130 && $code != 143 ]] || interrupted "$code"
    say "a job did not pass ($(elapsed) elapsed): karma-batch status $dir; run the same" \
      "command again to run it once more"
    exit "$code"
  }
  if [[ $scheduler != local ]]; then
    say "submitted to $scheduler; once they are done: $0 -o $out --scheduler $scheduler --collect"
    exit 0
  fi
}

finish() {
  local dir=$out/campaign bundle=$out/bundle.tar.xz page=$out/verdict.md checked=0 scored=0
  if [[ ! -f $out/disclosure.yaml || ${#answers[@]} -gt 0 ]]; then
    local ask=()
    [[ -t 0 ]] || ask=(--no-input)
    "$bin_dir/karma-bundle" disclose "$dir" -o "$out/disclosure.yaml" "${answers[@]}" "${ask[@]}" \
      || exit $?
  fi
  "$bin_dir/karma-bundle" pack "$dir" -o "$bundle" --force --disclosure "$out/disclosure.yaml" \
    --build-log "$out/build.log" --weights "$karma_root/campaigns/procurement/weights.txt" \
    > "$out/pack.log" || { cat "$out/pack.log"; exit 1; }
  "$bin_dir/karma-bundle" check "$bundle" > "$out/check.log" 2>&1 || checked=$?
  "$bin_dir/karma-score" "$(basename "$out")=$bundle" ${reference:+--reference "$reference"} \
    --page "$page" \
    --json "$out/score.json" > "$out/score.md" 2> "$out/score.log" || scored=$?
  [[ $scored -le 1 ]] || { cat "$out/score.log" >&2; exit "$scored"; }
  echo "=== $(tail -n 1 "$out/check.log" | awk '{ if (length($0) > 240) print substr($0, 1, 240) "... (all: check.log)"; else print }')"
  sed -n '3p' "$page"
  sed -n '5p' "$page"
  sed -n '7p' "$page"
  echo "bundle: $bundle"
  echo "verdict: $page (the chart: ${page%.md}.png; the whole score: $out/score.md)"
  echo "time: $(elapsed)"
  [[ $checked == 0 && $scored == 0 ]]
}

# The answers go with the campaign: a later --collect or resume uses them.
if [[ ${#answers[@]} -eq 0 && -f $out/answers.args ]]; then
  mapfile -d '' answers < "$out/answers.args"
fi
if [[ ! -f $out/disclosure.yaml && ${#answers[@]} -eq 0 && ! -t 0 ]]; then
  say "the disclosure needs what no capture knows: give --answers FILE or --system-name," \
    "--system-vendor, --interconnect, --tester and --organisation (no terminal to ask on)"
  exit 2
fi
if [[ $collect == 1 && -z $bin_dir && -f $out/bin-dir ]]; then
  bin_dir=$(cat "$out/bin-dir")
fi
have_tools() {
  for tool in karma-batch karma-bundle karma-score karma-stream; do
    [[ -x $bin_dir/$tool ]] || { say "$bin_dir/$tool: not found (a build's bin/ holds it)"; exit 2; }
  done
}
# An install given, or the one of before: checked before anything is written.
no_gpus() { say "--gpus $gpus: this is a CPU build (no GPU to run on)"; exit 2; }
[[ -z $bin_dir ]] || { have_tools; check_answers; [[ -z $gpus ]] || gpu_build || no_gpus; }
# More ranks than GPUs would share them: not the node's figure.
seen_gpus=$(visible_gpus)
if [[ -n $gpus && $seen_gpus -gt 0 && $gpus -gt $seen_gpus ]]; then
  say "--gpus $gpus: this node shows $seen_gpus GPU(s) (CUDA_VISIBLE_DEVICES or nvidia-smi -L)"
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -n $bin_dir ]]; then
  echo "run-reportable: the executables of $bin_dir, built elsewhere" > "$out/build.log"
else
  build
  have_tools
  check_answers
fi
[[ ${#answers[@]} -eq 0 ]] || printf '%s\0' "${answers[@]}" > "$out/answers.args"
echo "$bin_dir" > "$out/bin-dir"
reference_note
[[ -f $out/campaign/campaign.json ]] || node_gpus
run_campaign
finish
