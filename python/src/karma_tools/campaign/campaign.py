"""Campaign files (YAML): what to run, where and how often; read strictly (a mistake:
"FILE:LINE:COL: KEY: message", nothing generated) and expanded into one Job per batch job."""

import hashlib
import os
import pathlib
import sys
import textwrap
import types

from karma_tools.core import CHECKOUT, ToolError, read_input_file
from karma_tools import schemas
from karma_tools import yamlread
from karma_tools.campaign.compare_section import Vocabulary, check_comparisons
from karma_tools.campaign.deck import KeyLister
from karma_tools.campaign.format import Checker, conform, strings
from karma_tools.campaign.runs import Programs, environment_of, expand_run, launch

# --help-campaign: this example, then every key with its schema description.
HELP_EXAMPLE = """\
A campaign file (YAML) lists runs of karma mini-apps; karma-batch writes one
job script per run and per point of its sweeps. For example:

  name: h200-eval
  scheduler: slurm
  variables: {babelstream: cuda-stream}     # generate --var babelstream=PATH
  ranks_per_node: 4
  environment: {modules: [gcc/12.2, cuda/12.4, openmpi/4.1]}
  slurm: {partition: gpu, account: abc123}
  runs:
    - name: stream-scaling
      app: stream
      deck: "{inputs}/stream/default.yaml"
      set: ["stream.shape=[2^28]"]
      nodes: [1, 2, 4, 8]
      scaling: [weak, strong]
      repeat: 3
    - {name: babelstream, app: stream, deck: "{inputs}/stream/default.yaml",
       reference: babelstream, executable: "{babelstream}", args: ["--csv"]}
  compare:
    - name: karma-vs-babelstream
      numerator: {implementation: kokkos}
      denominator: {implementation: babelstream}
      match: [stream.shape]

The keys:
"""
HELP_END = """
generate checks the file against its JSON Schema (draft 2020-12, for editors
too: karma_tools/schemas/campaign.schema.json, installed in
share/karma/schemas), every set/sweep key
and value against its mini-app's deck schema (karma-<app> --help=json,
shipped with the tools; a run's own `executable` is asked), and that every
run's program is here (else exit 2, nothing written, naming the line and
where it looked). Counts are at most 2^31-1, a campaign at most 10000 jobs.
The YAML (ruamel.yaml) is read strictly: duplicate keys, anchors, aliases,
tags, '>' blocks, a value over several lines and several documents are
refused; plain values are read as YAML 1.2 reads them (on, off, yes and no
are strings, 00:30:00 is a string, 010 is no integer). See docs/campaigns.md.
"""


def help_text(width=79):
    """What `karma-batch --help-campaign` prints, from campaign.schema.json."""
    schema = schemas.load("campaign.schema.json").schema
    lines, said = [], {}

    def resolved(spec):
        while "$ref" in spec:
            spec = {**schema["$defs"][spec["$ref"].split("/")[-1]],
                    **{k: v for k, v in spec.items() if k != "$ref"}}
        return spec

    def walk(properties, path):
        for key, spec in properties.items():
            spec = resolved(spec)
            text, inner = spec.get("description", ""), resolved(spec.get("items", spec))
            lines.extend(textwrap.wrap(f"{key}: " + (f"as {said[text]}" if text in said else text),
                                       width, initial_indent="  " * len(path),
                                       subsequent_indent="  " * len(path) + "    ",
                                       break_on_hyphens=False))
            if text not in said and "properties" in inner:
                walk(inner["properties"], path + [key])
            said.setdefault(text, ".".join(path + [key]))

    walk(schema["properties"], [])
    return HELP_EXAMPLE + "\n".join(lines) + "\n" + HELP_END


def tools_dir():
    """The running karma-* entry point's directory (installed: PREFIX/bin's link)."""
    return os.path.dirname(os.path.abspath(sys.argv[0]))


def inputs_dir(tool_dir):
    """The suite's decks: $KARMA_INPUTS, share/karma/inputs, or the checkout's inputs/."""
    candidates = [os.environ.get("KARMA_INPUTS", ""),
                  os.path.join(tool_dir, "..", "share", "karma", "inputs"),
                  os.path.join(CHECKOUT, "inputs")]
    return next((os.path.realpath(c) for c in candidates if c and os.path.isdir(c)), None)


def load(path, out_dir=None, bin_dir=None, check_keys=True, tool_dir=None, scheduler=None,
         variables=None, executables=False):
    """The campaign at `path`, checked and expanded into jobs; bin_dir, scheduler, variables
    override the campaign's; executables (generate): every run's program must be here."""
    if not os.path.lexists(path):
        raise ToolError(f"{path}: no such campaign file", 2)
    tool_dir = tool_dir or tools_dir()
    data = read_input_file(path, "campaign file")
    try:
        root = yamlread.parse(data.decode("utf-8"), path)
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}:1:1: not UTF-8 text ({e.reason})", 2) from None
    except yamlread.YamlError as e:
        raise ToolError(f"{e.source}:{e.line}:{e.col}: YAML syntax error: {e.message}", 2) \
            from None
    check = Checker(path)
    conform(check, root, schemas.load("campaign.schema.json"))
    base = os.path.dirname(os.path.abspath(path))
    top = root.value

    name = top["name"].text()
    scheduler, notes = _scheduler(top, scheduler, path)
    names = _variables(top.get("variables"), variables or {}, path)
    round_order = top["round_order"].value if "round_order" in top else "interleaved"

    def where(key, default):
        if key not in top or top[key].value is None:
            return default
        return os.path.normpath(os.path.join(base, os.path.expanduser(top[key].text())))

    results_dir = where("results_dir", os.path.join(os.path.abspath(out_dir), "results")
                        if out_dir else os.path.join(base, "results", name))
    blocked = next((p for p in (results_dir, *pathlib.Path(results_dir).parents)
                    if os.path.lexists(p) and not os.path.isdir(p)), None)
    if blocked is not None and "results_dir" in top:  # else it is -o's, which generate checks
        check.fail(top["results_dir"], "results_dir", f"{blocked} is a file; the jobs' results "
                   "cannot go under it")
    programs = Programs(os.path.abspath(bin_dir) if bin_dir else where("bin_dir", None),
                        "--bin-dir" if bin_dir else "the campaign's bin_dir", tool_dir,
                        executables)

    defaults = launch(check, top, {"ranks_per_node": [1], "gpus_per_rank": 1,
                                   "cpus_per_rank": None, "time": "00:30:00", "launcher": None},
                      names)
    environment = environment_of(check, top.get("environment"), "environment", names)
    exclusive = top["exclusive"].value if "exclusive" in top else True
    slurm, pbs = _batch_options(top, "slurm"), _batch_options(top, "pbs")

    inputs = inputs_dir(tool_dir)
    lister = KeyLister() if check_keys else None
    jobs, left_out, run_names, job_names = [], [], {}, {}
    for index, run_node in enumerate(top["runs"].value):
        made, left = expand_run(check, run_node, f"runs[{index}]", base, inputs, results_dir,
                                programs, defaults, environment, run_names, job_names, lister,
                                names, scheduler)
        jobs.extend(made)
        left_out.extend(left)
    several = sorted({j.run for j in jobs if j.process})
    vocabulary = Vocabulary(jobs + left_out, lister)  # a run left out (min_ranks) is still named
    compare = check_comparisons(check, top["compare"], vocabulary, several) \
        if "compare" in top else []
    return types.SimpleNamespace(
        name=name, path=os.path.abspath(path), sha256=hashlib.sha256(data).hexdigest(),
        scheduler=scheduler, results_dir=results_dir, slurm=slurm, pbs=pbs,
        exclusive=slurm.get("exclusive", exclusive) if scheduler == "slurm" else exclusive,
        jobs=jobs, left_out=left_out, warnings=notes + (lister.warnings if lister else []),
        variables=names, round_order=round_order, compare=compare)


def _batch_options(top, scheduler):
    """The campaign's `slurm:` or `pbs:` (scheduler) options."""
    given = top[scheduler].value if scheduler in top else {}
    return {key: node.value if key == "exclusive" else strings(node) if key == "extra" else
            node.text() for key, node in given.items()}


def _scheduler(top, scheduler, path):
    """(scheduler, [warning]): the campaign's, or --scheduler's (warning where it overrides)."""
    written = top["scheduler"].value if "scheduler" in top else None
    if scheduler is None or written in (None, scheduler):
        return scheduler or written or "slurm", []
    return scheduler, [f"--scheduler {scheduler} overrides the campaign's scheduler: "
                       f"{written} ({path}:{top['scheduler'].line}); check that its "
                       f"launcher, node counts and environment suit {scheduler}"]


def _variables(node, overrides, path):
    """{name: value} of `variables:`, with `--var NAME=VALUE` applied."""
    names = {} if node is None or node.value is None else {
        name: value.text() for name, value in node.value.items()}
    for name, value in overrides.items():
        if name not in names:
            raise ToolError(f"--var {name}: {path} has no such variable (its variables: "
                            f"{', '.join(names) or 'none'})", 2)
        names[name] = value
    return names
