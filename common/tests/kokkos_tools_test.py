#!/usr/bin/env python3
"""A mini-app run under the test tool library (kokkos_tool_log.cpp), checked
against its own results (ctest <app>.kokkos_tools; docs/running.md "Profiling with
Kokkos Tools"):

- every region is named karma/<app>/<kernel> and regions nest and close;
- every kernel (parallel_for, _reduce, _scan) has a label of its own: not
  empty and not a C++ type's name as typeid spells it, which is what Kokkos
  names an unlabelled kernel after;
- every kernel the results report has its region, and one of the Kokkos
  implementation launched at least one kernel inside it;
- the metadata declared to the tool names the app, the build (version, git
  description, build type, Kokkos) and the run: the deck and its sha256 as
  the results JSON records them, and the command line.

usage: kokkos_tools_test.py --app APP --tool LIB --tools-flag FLAG EXE
                            [--case "ARGS"]...
Each case is one run of EXE with ARGS (split as a shell would), one rank;
the tool is loaded with FLAG=LIB (--kokkos-tools-library before Kokkos 3.7,
--kokkos-tools-libs from 3.7 on)."""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

LIMIT_S = 120  # a hang fails
# Metadata every run declares; the deck's only where the app reads one.
BUILD_KEYS = ("karma.app", "karma.version", "karma.git_describe", "karma.git_dirty",
              "karma.build_type", "karma.compiler", "karma.kokkos_version",
              "karma.command_line")


def unescape(text):
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n"}.get(m.group(1), m.group(1)), text)


def read_log(path):
    """The tool's events: (kind, fields...) per line."""
    with open(path) as f:
        return [tuple(unescape(x) for x in line.rstrip("\n").split("\t")) for line in f]


def check_events(events, app):
    """Regions, kernels and metadata of one run, and the problems found.
    Returns (problems, metadata, kernels per region)."""
    problems = []
    metadata = {}
    inside = {}  # region -> kernels launched while it was open
    stack = []
    pattern = re.compile(r"karma/" + re.escape(app) + r"/(\S.*)")
    if not events or events[0][0] != "init":
        problems.append("the tool was not initialised first (no 'init' line)")
    if not events or events[-1][0] != "finalize":
        problems.append("the run did not finalise Kokkos (no 'finalize' line)")
    elif events[-1][1] != events[-1][2]:
        problems.append(f"{events[-1][1]} kernels began but {events[-1][2]} ended")
    for event in events:
        kind = event[0]
        if kind == "metadata":
            metadata[event[1]] = event[2]
        elif kind == "push":
            if not pattern.fullmatch(event[1]):
                problems.append(f"region '{event[1]}' is not named karma/{app}/<kernel>")
            stack.append(event[1])
            inside.setdefault(event[1], 0)
        elif kind == "pop":
            if not stack:
                problems.append("a region was closed that was never opened")
            else:
                stack.pop()
        elif kind in ("for", "reduce", "scan"):
            label, type_name = event[1], event[2]
            where = f"in region '{stack[-1]}'" if stack else "outside every region"
            if not label:
                problems.append(f"a parallel_{kind} {where} has no label")
            elif type_name:
                problems.append(f"parallel_{kind} '{label}' {where} is labelled only by "
                                f"its type ({type_name}): Kokkos' default")
            for region in set(stack):  # inside a nested region is inside its parents too
                inside[region] += 1
    if stack:
        problems.append(f"regions left open at the end: {stack}")
    return problems, metadata, inside


def reported_kernels(app, results):
    """(name, launches Kokkos kernels) of each kernel the results report:
    those of the Kokkos implementation, and karma-microbench's parallel
    benchmarks (its serial ones are plain host loops)."""
    return [(k["name"], k["implementation"] == "kokkos" or
             app == "microbench" and "/parallel/" in k["variant"]) for k in results["kernels"]]


def check_run(app, exe, tool, tools_flag, case, work):
    log = os.path.join(work, "tool.log")
    out = os.path.join(work, "results.json")
    for stale in (log, out):
        if os.path.exists(stale):
            os.remove(stale)
    command = [exe, *shlex.split(case), f"{tools_flag}={tool}", "--output", out]
    print(" ".join(command))
    env = dict(os.environ, KARMA_KOKKOS_TOOL_LOG=log)
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=LIMIT_S)
    if run.returncode != 0:
        return [f"exit code {run.returncode}:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"]
    if not os.path.exists(log):
        return [f"the tool wrote no log: was it loaded? stderr:\n{run.stderr[-3000:]}"]
    with open(out) as f:
        results = json.load(f)
    problems, metadata, inside = check_events(read_log(log), app)

    for key in BUILD_KEYS:
        if not metadata.get(key):
            problems.append(f"metadata '{key}' was not declared")
    if metadata.get("karma.app") != app:
        problems.append(f"metadata karma.app is '{metadata.get('karma.app')}', not '{app}'")
    expected = {"karma.deck": results["deck"]["path"],
                "karma.deck_sha256": results["deck"]["sha256"],
                "karma.git_describe": results["suite"]["git_describe"]}
    for key, value in expected.items():
        if metadata.get(key) != value:
            problems.append(f"metadata {key} is '{metadata.get(key)}'; the results say '{value}'")

    kernels = reported_kernels(app, results)
    if not kernels:
        problems.append("the results report no kernel")
    for name, kokkos in kernels:
        region = f"karma/{app}/{name}"
        if region not in inside:
            problems.append(f"kernel '{name}' of the results has no region '{region}'")
        elif kokkos and inside[region] == 0:
            problems.append(f"no Kokkos kernel was launched inside region '{region}'")
    launched = sum(inside.values())
    print(f"  {len(kernels)} reported kernels, {len(inside)} regions, {launched} kernel "
          f"launches inside them, {len(metadata)} metadata entries")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", required=True)
    parser.add_argument("--tool", required=True, help="the test tool library")
    parser.add_argument("--tools-flag", required=True, help="this Kokkos' flag that loads it")
    parser.add_argument("--case", action="append", default=[], help="the arguments of one run")
    parser.add_argument("exe")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="karma-kokkos-tools-") as work:
        for case in args.case or [""]:
            problems = check_run(args.app, args.exe, args.tool, args.tools_flag, case, work)
            # Each problem once, with how often it happened (a kernel per repetition).
            counts = {}
            for p in problems:
                counts[p] = counts.get(p, 0) + 1
            for p, n in list(counts.items())[:20]:
                print(f"  FAIL: {p}" + (f" ({n} times)" if n > 1 else ""))
            if len(counts) > 20:
                print(f"  FAIL: ... and {len(counts) - 20} more problems")
            failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
