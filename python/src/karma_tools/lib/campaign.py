"""Campaign files: what to run, where and how often; read strictly, expanded
into one Job per batch job.

A campaign is YAML (read by yamlread). Every mistake is reported as
"FILE:LINE:COL: KEY: message" and nothing is generated. The keys are listed in
CAMPAIGN_HELP, which `karma-batch --help-campaign` prints.
"""

import difflib
import fnmatch
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess

from .core import APPS, CHECKOUT, ToolError
from . import deckvalues, schemas, sides, yamlread
from .results import KERNELS

CAMPAIGN_HELP = """\
A campaign file (YAML) lists runs of karma mini-apps; karma-batch writes one
job script per run and per point of its sweeps.

  name: h200-eval                 # campaign name: letters, digits, '.', '_', '-'
  scheduler: slurm                # slurm (sbatch), pbs (qsub), or local: `submit`
                                  # runs the jobs here, one after another, one node;
                                  # --scheduler overrides
  variables:                      # {NAME} in deck, executable, args and environment
    babelstream: cuda-stream      # variables; each can be set with
                                  # `generate --var NAME=VALUE`
  round_order: interleaved        # jobs run (are submitted) round by round: round r
                                  # runs every run's job before round r+1 starts;
                                  # alternate: even rounds in reverse order
  results_dir: results            # one subdirectory per job (default: OUT/results)
  bin_dir: /opt/karma/bin         # where karma-<app> is (default: beside karma-batch,
                                  # as in a build's build/<preset>/bin or PREFIX/bin,
                                  # else in PATH); --bin-dir overrides
  time: "00:30:00"                # wall-time limit per job (HH:MM:SS, or minutes)
  ranks_per_node: 4               # MPI ranks per node: one per GPU
  gpus_per_rank: 1                # 0 on CPU-only nodes
  cpus_per_rank: 16               # cores per rank: --cpus-per-task (PBS ncpus), bound
                                  # (srun --cpu-bind=cores, mpiexec's options) and
                                  # OMP_NUM_THREADS, OMP_PROC_BIND=close,
                                  # OMP_PLACES=cores; a job without GPUs gets its
                                  # OMP_NUM_THREADS when it gives only that
  launcher: auto                  # auto (default): srun under Slurm, else mpiexec
                                  # with the options of the MPI the executable is
                                  # linked with | srun | mpiexec-openmpi |
                                  # mpiexec-mpich | mpirun (Open MPI) | mpiexec
                                  # (--ppn: Cray PALS, Intel MPI) | none (1 rank) |
                                  # a template with {nodes} {ranks} {ranks_per_node}
                                  # {gpus_per_rank} {cpus_per_rank}
  exclusive: true                 # whole nodes for every job (default true; false
                                  # shares them)
  environment:                    # lines every job runs before karma, in this order:
    setup: ["source /opt/spack/share/spack/setup-env.sh"]   # shell lines (or a | block)
    modules: [gcc/12.2, cuda/12.4, openmpi/4.1]            # module load ...
    variables: {OMP_PROC_BIND: spread, OMP_PLACES: threads} # export NAME="value"
                                  # (none that lets MPI run as root: *RUN_AS_ROOT*)
  slurm: {partition: gpu, account: abc123, qos: normal, constraint: h200,
          exclusive: true, extra: ["--mail-type=NONE"]}   # exclusive: as above
  pbs: {flavor: pro, queue: gpu, account: abc123, place: "scatter",
        extra: ["-l filesystems=home"]}   # flavor: pro (select=) or torque (nodes=)
  runs:
    - name: stream-scaling          # unique; names the jobs and their directories
      app: stream                   # runs karma-stream; one of stream, hexgrad, matvec,
                                    # mgs, contact (another name needs `executable`)
      deck: "{inputs}/stream/default.yaml"   # {inputs}: the suite's decks; other
                                    # relative paths are relative to this file
      set: ["stream.shape=[2^28]"]  # --set overrides (a list, or a key: value map)
      sweep:                        # one job per value (per combination)
        run.repetitions: [50, 100]
      nodes: [1, 2, 4, 8]           # one job per node count
      scaling: [weak, strong]       # one job per scaling: sets scaling_key per job
      scaling_key: stream.scaling   # (the default: <app>.scaling)
      repeat: 3                     # identical jobs per point (rounds)
      processes: 1                  # identical jobs per point within a round, each a
                                    # process of its own; a comparison then says how
                                    # each side's figures of a round combine (per_round)
      args: ["--kokkos-print-configuration"]   # extra mini-app arguments; {KEY} and
                                    # {KEY[i]} give this job's set/sweep value of a
                                    # deck key (2^25 written out: 33554432)
      reference: babelstream        # an external program instead of karma-<app>:
                                    # `executable` with `args`, its output read into
                                    # karma-<app>.json (implementation babelstream),
                                    # deck and set/sweep describing what it ran
      # per run, these override the campaign's: ranks_per_node, gpus_per_rank,
      # cpus_per_rank, time, launcher, executable, environment (modules and
      # setup lines are added after the campaign's, variables override)

  compare:                          # ratio tables of karma-compare --campaign and
    - name: karma-vs-babelstream    # karma-report, within this campaign
      metric: bandwidth_GBps.best   # a kernel field (default fom.value)
      higher_is_better: true        # (default: the FOM's; false for time_s.*)
      numerator: {implementation: kokkos}       # selections: run, implementation,
      denominator: {implementation: babelstream}  # variant, kernel (globs or lists),
                                    # deck: {key: value}
      match: [stream.shape, stream.precision]   # deck keys both sides share
      label: []                     # deck keys that tell numerator rows apart
      same_variant: true            # pair kernels of the same variant (copy/copy)
      same_kernel: false            # pair kernels of the same name (one build
                                    # beside another, whose results may differ
                                    # in schema_version)
      per_round: best               # a side's results of one round (processes): best
                                    # or median of them, before the ratio
      aggregate: [worst, median]    # over rounds (default [worst]): worst, best, median
                                    # generate refuses a selection or key that can
                                    # match nothing (a run, implementation, variant,
                                    # kernel or deck key these runs do not have)

Weak scaling keeps the deck's size per rank; strong scaling keeps it global
and splits it over the ranks: the mini-app reads <app>.scaling (change the key
with scaling_key). Integers, lists and strings in set/sweep are passed as
written (2^28 stays 2^28). Every run's program must be here when
`generate` runs: one that is not (karma-<app> in none of the places above, an
`executable` path that is not there, a bare name in neither PATH nor the PATH
the run's environment exports) stops `generate` (exit 2, nothing written),
naming the campaign line and what it looked for where. karma-batch checks
every set/sweep key and value (type, range, choices, list length) against the
JSON Schema of its deck (karma-<app> --help=json); where that fails, it says
so, and a wrong value stops the job at its start (exit 2). Counts (nodes,
ranks_per_node, gpus_per_rank, cpus_per_rank, repeat, processes) are at most 2^31-1, and
a campaign at most 10000 jobs. The format is also a JSON Schema (draft
2020-12), for editors and other tools: karma_tools/schemas/campaign.schema.json,
installed in share/karma/schemas.

The YAML (read with ruamel.yaml): block and flow mappings and lists, quoted
and plain scalars, '|' blocks, comments. Duplicate keys, anchors, aliases,
tags, '>' blocks, a value that runs over several lines and several documents
are refused with their position. Plain values are read as YAML 1.2 reads
them: on, off, yes and no are strings (run.energy: on is passed as 'on'),
00:30:00 is a string, and 010 is no integer (octal or decimal, by version).
"""

# The campaign file's format is its JSON Schema (karma_tools/schemas): the
# keys, choices and patterns the checks below use are read from it.
with open(os.path.join(schemas.schemas_dir(), "campaign.schema.json"), encoding="utf-8") as _f:
    _SCHEMA = json.load(_f)
_DEFS, _TOP = _SCHEMA["$defs"], _SCHEMA["properties"]
_RUN, _COMPARISON = _DEFS["run"]["properties"], _DEFS["comparison"]["properties"]

_NAME = re.compile(_DEFS["name"]["pattern"])
_APP = re.compile(_RUN["app"]["pattern"])
_ENV_NAME = re.compile(_TOP["variables"]["propertyNames"]["pattern"])
# Variables that let MPI run as root have no place in a site's job scripts.
_ROOT_VARIABLE = re.compile(
    _DEFS["environment"]["properties"]["variables"]["propertyNames"]["not"]["pattern"])
_DECK_KEY = re.compile(_DEFS["deck_key"]["pattern"])
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?:\[([0-9]+)\])?\}")
_METRIC = re.compile(_COMPARISON["metric"]["pattern"])

LAUNCHERS = tuple(_DEFS["launcher"]["anyOf"][0]["enum"])
PLACEHOLDERS = tuple(re.findall(r"\w+", _DEFS["launcher"]["anyOf"][1]["not"]["pattern"]))

TOP_KEYS = tuple(_TOP)
RUN_KEYS = tuple(_RUN)
SCHEDULERS = tuple(_TOP["scheduler"]["enum"])
ROUND_ORDERS = tuple(_TOP["round_order"]["enum"])
COMPARE_KEYS = tuple(_COMPARISON)
SELECTION_KEYS = tuple(_DEFS["selection"]["properties"])
AGGREGATES = tuple(_COMPARISON["aggregate"]["anyOf"][0]["enum"])
PER_ROUND = tuple(_COMPARISON["per_round"]["enum"])
REFERENCES = tuple(_RUN["reference"]["enum"])
ENV_KEYS = tuple(_DEFS["environment"]["properties"])
SLURM_KEYS = tuple(_TOP["slurm"]["properties"])
PBS_KEYS = tuple(_TOP["pbs"]["properties"])

# Counts beyond a C int mean a typo, and the mini-apps and launchers take ints.
INT_MAX = _DEFS["count"]["maximum"]
# More jobs than this is a typo too (repeat: 100000), and would take long to write.
MAX_JOBS = 10000


class Environment:
    def __init__(self, setup=(), modules=(), variables=None):
        self.setup = list(setup)
        self.modules = list(modules)
        self.variables = dict(variables or {})

    def merged(self, other):
        variables = dict(self.variables)
        variables.update(other.variables)
        return Environment(self.setup + other.setup, self.modules + other.modules, variables)

    def as_dict(self):
        return {"setup": self.setup, "modules": self.modules, "variables": self.variables}


class Job:
    """One batch job: one run of one mini-app at one point of its sweeps."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    @property
    def ranks(self):
        return self.nodes * self.ranks_per_node

    def as_dict(self):
        keys = ("name", "run", "app", "deck", "executable", "overrides", "args", "nodes",
                "ranks_per_node", "ranks", "gpus_per_rank", "cpus_per_rank", "scaling",
                "sweep", "round", "process", "time", "launcher", "results_dir", "reference")
        d = {k: getattr(self, k) for k in keys}
        d["environment"] = self.environment.as_dict()
        return d


class Campaign:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class _Checker:
    """Type checks with errors that name file, line, column and key."""

    def __init__(self, source):
        self.source = source

    def fail(self, node, path, message, at_key=False):
        line, col = (node.key_line, node.key_col) if at_key else (node.line, node.col)
        raise ToolError(f"{self.source}:{line}:{col}: {path}: {message}", 2)

    def mapping(self, node, path, allowed, required=()):
        if not isinstance(node.value, dict):
            self.fail(node, path, f"expected a mapping of keys ({', '.join(allowed)}), "
                      f"got {_describe(node)}")
        for key, value in node.value.items():
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean '{near[0]}'?)" if near else \
                    f" (known keys: {', '.join(allowed)})"
                self.fail(value, _join(path, key), "unknown key" + hint, at_key=True)
        for key in required:
            if key not in node.value or node.value[key].value is None:
                self.fail(node, _join(path, key), "is required")
        return node.value

    def string(self, node, path, pattern=None, what=None):
        if isinstance(node.value, bool) or not isinstance(node.value, (str, int, float)):
            self.fail(node, path, f"expected a string, got {_describe(node)}")
        value = node.value if isinstance(node.value, str) else node.raw
        if value == "":
            self.fail(node, path, "must not be empty")
        if pattern and not pattern.match(value):
            self.fail(node, path, f"'{value}' is not {what}")
        return value

    def choice(self, node, path, choices):
        value = self.string(node, path)
        if value not in choices:
            self.fail(node, path, f"'{value}' is not one of: {', '.join(choices)}")
        return value

    def integer(self, node, path, minimum, maximum=INT_MAX):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            self.fail(node, path, f"expected an integer, got {_describe(node)}")
        if node.value < minimum:
            self.fail(node, path, f"must be >= {minimum}, got {_short(node.raw or node.value)}")
        if node.value > maximum:
            self.fail(node, path, f"must be <= {maximum}, got {_short(node.raw or node.value)}")
        return node.value

    def boolean(self, node, path):
        if not isinstance(node.value, bool):
            self.fail(node, path, f"expected true or false, got {_describe(node)}")
        return node.value

    def integers(self, node, path, minimum):
        """An integer or a non-empty list of distinct integers."""
        if isinstance(node.value, list):
            if not node.value:
                self.fail(node, path, "the list is empty")
            values = [self.integer(n, f"{path}[{i}]", minimum) for i, n in enumerate(node.value)]
            for i, v in enumerate(values):
                if v in values[:i]:
                    self.fail(node.value[i], f"{path}[{i}]", f"{v} is listed twice")
            return values
        return [self.integer(node, path, minimum)]

    def strings(self, node, path, allow_block=False):
        """A list of strings (or one string; with allow_block a '|' block
        gives one line per line)."""
        if isinstance(node.value, str):
            if allow_block:
                return [line for line in node.value.split("\n") if line.strip()]
            return [node.value]
        if not isinstance(node.value, list):
            self.fail(node, path, f"expected a list of strings, got {_describe(node)}")
        return [self.string(n, f"{path}[{i}]") for i, n in enumerate(node.value)]


def _join(path, key):
    return f"{path}.{key}" if path else key


def _describe(node):
    v = node.value
    if v is None:
        return "nothing"
    if isinstance(v, bool):
        return f"the boolean {node.raw}"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, (int, float)):
        return f"the number {_short(node.raw)}"
    return f"the string '{_short(v)}'"


def _short(text):
    text = str(text)
    return text if len(text) <= 60 else text[:56] + "..."


def parse_time(checker, node, path):
    """Wall time as HH:MM:SS from 'HH:MM:SS', 'MM:SS', 'D-HH:MM:SS' or minutes."""
    if isinstance(node.value, int) and not isinstance(node.value, bool):
        if node.value < 1:
            checker.fail(node, path, f"must be >= 1 minute, got {node.value}")
        seconds = node.value * 60
    else:
        text = checker.string(node, path)
        m = re.match(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$", text)
        if not m:
            checker.fail(node, path, f"'{text}' is not a time: use HH:MM:SS, D-HH:MM:SS "
                         "or whole minutes")
        days, hours, minutes, secs = (int(g) if g else 0 for g in m.groups())
        if m.group(1) and not m.group(2):
            checker.fail(node, path, f"'{text}': use D-HH:MM:SS")
        if minutes >= 60 and m.group(2) or secs >= 60:
            checker.fail(node, path, f"'{text}': minutes and seconds must be below 60")
        seconds = ((days * 24 + hours) * 60 + minutes) * 60 + secs
        if seconds < 1:
            checker.fail(node, path, "must be longer than 0")
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _environment(checker, node, path, variables=None):
    if node is None or node.value is None:
        return Environment()
    entries = checker.mapping(node, path, ENV_KEYS)
    env = Environment()
    if "setup" in entries:
        env.setup = checker.strings(entries["setup"], _join(path, "setup"), allow_block=True)
    if "modules" in entries:
        env.modules = checker.strings(entries["modules"], _join(path, "modules"))
        for i, module in enumerate(env.modules):
            if re.search(r"\s", module):
                n = entries["modules"].value[i] if isinstance(entries["modules"].value, list) \
                    else entries["modules"]
                checker.fail(n, f"{path}.modules[{i}]", f"'{module}': one module per entry")
    if "variables" in entries:
        vnode = entries["variables"]
        if not isinstance(vnode.value, dict):
            checker.fail(vnode, _join(path, "variables"),
                         f"expected NAME: value pairs, got {_describe(vnode)}")
        for name, value in vnode.value.items():
            vpath = f"{path}.variables.{name}"
            if not _ENV_NAME.match(name):
                checker.fail(value, vpath, f"'{name}' is not a shell variable name", at_key=True)
            if _ROOT_VARIABLE.search(name):
                checker.fail(value, vpath, f"'{name}' lets MPI run as root, which no job script "
                             "should ask for; where you must (a container), export it in the "
                             "shell that runs karma-batch submit", at_key=True)
            if isinstance(value.value, (dict, list)) or value.value is None:
                checker.fail(value, vpath, f"expected a value, got {_describe(value)}")
            env.variables[name] = _fill(checker, value, vpath, value.text(), variables or {})
    return env


def _overrides(checker, node, path):
    """--set arguments ['key=value', ...] from a list or a mapping, each with
    the node it came from (for key checks)."""
    out = []
    if isinstance(node.value, dict):
        for key, value in node.value.items():
            if not _DECK_KEY.match(key):
                checker.fail(value, f"{path}.{key}", "not a deck key (section.key)", at_key=True)
            if value.value is None:
                checker.fail(value, f"{path}.{key}", "has no value")
            out.append((key, value.text(), value))
        return out
    for i, text in enumerate(checker.strings(node, path)):
        item = node.value[i] if isinstance(node.value, list) else node
        key, eq, value = text.partition("=")
        if not eq or not _DECK_KEY.match(key.strip()) or not value.strip():
            checker.fail(item, f"{path}[{i}]", f"'{text}' is not key=value with a deck key "
                         "(e.g. stream.shape=[2^28])")
        out.append((key.strip(), value.strip(), item))
    return out


def _sweep(checker, node, path):
    """[(key, [(value text, node), ...]), ...] from `sweep:`."""
    if not isinstance(node.value, dict) or not node.value:
        checker.fail(node, path, "expected deck keys, each with a list of values")
    out = []
    for key, values in node.value.items():
        kpath = f"{path}.{key}"
        if not _DECK_KEY.match(key):
            checker.fail(values, kpath, "not a deck key (section.key)", at_key=True)
        if not isinstance(values.value, list) or not values.value:
            checker.fail(values, kpath, "expected a non-empty list of values to sweep over")
        texts = [(v.text(), v) for v in values.value]
        seen = set()
        for i, (t, v) in enumerate(texts):
            if v.value is None:
                checker.fail(v, f"{kpath}[{i}]", "an empty value")
            if t in seen:
                checker.fail(v, f"{kpath}[{i}]", f"'{t}' is listed twice")
            seen.add(t)
        out.append((key, texts))
    return out


def tools_dir():
    """The directory of the karma-* entry point that is running (PREFIX/bin
    when installed: the link there, not the environment it points into)."""
    import sys

    return os.path.dirname(os.path.abspath(sys.argv[0]))


def inputs_dir(tool_dir):
    """The suite's decks: $KARMA_INPUTS, the installed share/karma/inputs, or
    the inputs/ of the checkout this package is in (python/src/karma_tools)."""
    candidates = [os.environ.get("KARMA_INPUTS", ""),
                  os.path.join(tool_dir, "..", "share", "karma", "inputs"),
                  os.path.join(CHECKOUT, "inputs")]
    for c in candidates:
        if c and os.path.isdir(c):
            return os.path.realpath(c)
    return None


def _slug(key, text):
    """A short, file-name-safe tag for a sweep point: stream.shape=[2^28] ->
    shape2p28."""
    value = text.replace("^", "p").replace(",", "x")
    value = re.sub(r"[\[\]{}\s'\"]", "", value)
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-.") or "v"
    return key.split(".")[-1] + value


class KeyLister:
    """Deck keys of a mini-app and their types, from the JSON Schema that
    `karma-<app> --help=json` prints (cached): {key: DeckType or None (a
    type this tool does not know)}. Output that is not JSON is a ToolError
    (exit 2): the executable is not the mini-app it should be."""

    def __init__(self):
        self.cache = {}
        self.warnings = []

    def keys(self, executable):
        if executable in self.cache:
            return self.cache[executable]
        keys = None
        path = executable if os.path.isabs(executable) else shutil.which(executable)
        if path and os.access(path, os.X_OK):
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            try:
                out = subprocess.run([path, "--help=json"], capture_output=True, text=True,
                                     timeout=60, env=env, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                out = None
            if out is not None and out.returncode == 0:
                try:
                    keys = schema_types(json.loads(out.stdout))
                except ValueError as e:
                    raise ToolError(f"{path} --help=json: not a deck's JSON Schema ({e})",
                                    2) from None
            if not keys:
                self.warnings.append(f"could not list the deck keys of {path} (its --help=json "
                                     "failed); set/sweep keys and values are not checked")
                keys = None
        self.cache[executable] = keys
        return keys


def schema_types(schema):
    """{deck key: DeckType or None} from a mini-app's --help=json (deck.cpp's
    Schema::json_schema): a section per object, a key per other property.
    ValueError for a document of another shape."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        raise ValueError("no properties at the top")
    types = {}
    for section, body in schema["properties"].items():
        keys = body.get("properties") if isinstance(body, dict) else None
        if not isinstance(keys, dict):
            raise ValueError(f"section {section} has no properties")
        for key, spec in keys.items():
            if not isinstance(spec, dict):
                raise ValueError(f"{section}.{key} is not a schema")
            types[f"{section}.{key}"] = DeckType.from_schema(spec)
    return types


class DeckType:
    """A deck key's type as the mini-app's --help describes it, and the
    mini-app's own reading of a value (deck.cpp's convert), so a campaign's
    `run.repetitions: lots` is refused before any job is written."""

    def __init__(self, text, kind, lo=None, hi=None, choices=(), lengths=()):
        self.text, self.kind, self.lo, self.hi = text, kind, lo, hi
        self.choices, self.lengths = tuple(choices), tuple(lengths)

    @classmethod
    def from_schema(cls, spec):
        """From one key's JSON Schema (--help=json); the text is what
        describe_type says of it, for the same messages. None for a schema
        it does not know."""
        def bound(v):
            return str(int(v)) if float(v).is_integer() and abs(v) < 9.2e18 else repr(v)

        def described(of):
            lo, hi = of.get("minimum"), of.get("maximum")
            text = f" >= {bound(lo)}" if lo is not None else ""
            if hi is not None:
                text += ("," if text else "") + f" <= {bound(hi)}"
            return text, lo, hi

        kind = spec.get("type")
        if kind in ("integer", "number"):
            text, lo, hi = described(spec)
            return cls(("an integer" if kind == "integer" else "a number") + text, kind, lo, hi)
        if kind == "boolean":
            return cls("true or false", "boolean")
        if kind == "string":
            if "enum" in spec:
                return cls("one of " + "|".join(spec["enum"]), "choice", choices=spec["enum"])
            return cls("a string", "string")
        if kind != "array" or not isinstance(spec.get("items"), dict):
            return None
        items = spec["items"]
        if "anyOf" in spec:
            lengths = [a.get("minItems") for a in spec["anyOf"]]
        elif "maxItems" in spec:
            lengths = [spec["maxItems"]]
        else:
            lengths = []
        head = "a list of" + "".join(f"{' or ' if i else ' '}{n}" for i, n in enumerate(lengths))
        if items.get("type") == "integer":
            text, lo, hi = described(items)
            return cls(head + " integers" + text, "integer_list", lo, hi, lengths=lengths)
        if "enum" in items:
            return cls(head + (" of " if lengths else " ") + "|".join(items["enum"]),
                       "choice_list", choices=items["enum"], lengths=lengths)
        return None

    def problem(self, node):
        """Why the mini-app would refuse this value (a yamlread Node of the
        text it will be given), or None."""
        v = node.value
        if self.kind in ("integer_list", "choice_list"):
            if not isinstance(v, list):
                got = "a mapping" if isinstance(v, dict) else "nothing" if v is None else \
                    f"'{_short(self._text(node))}'"
                return f"expected {self.text}, got {got}"
            if (self.lengths and len(v) not in self.lengths) or not v:
                return f"has {len(v)} entries; expected {self.text}"
            seen = set()
            for item in v:
                why = self._scalar_problem(item, "integer" if self.kind == "integer_list"
                                           else "choice")
                if why:
                    return why
                text = self._text(item)
                if self.kind == "choice_list" and text in seen:
                    return f"'{text}' is listed twice"
                seen.add(text)
            return None
        return self._scalar_problem(node, self.kind)

    @staticmethod
    def _text(node):
        return str(node.value) if node.quoted or node.raw is None else node.raw

    def _scalar_problem(self, node, kind):
        if isinstance(node.value, (list, dict)) or node.value is None:
            got = "a list" if isinstance(node.value, list) else \
                "a mapping" if isinstance(node.value, dict) else "nothing"
            return f"expected {self.text}, got {got}"
        text = self._text(node)
        shown = f"'{_short(text)}'"
        if kind == "integer":
            value = deckvalues.deck_integer(text)
            if value is None:
                return shown + (" does not fit a 64-bit integer" if _looks_like_integer(text)
                                else " is not an integer")
            return self._range_problem(value)
        if kind == "number":
            value = _deck_number(text)
            if value is None:
                return f"{shown} is not a finite number"
            return self._range_problem(value)
        if kind == "boolean":
            if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
                return None
            return f"{shown} is not true or false"
        if kind == "choice" and text not in self.choices:
            return f"{shown} is not one of: {', '.join(self.choices)}"
        return None

    def _range_problem(self, value):
        if self.lo is not None and value < self.lo:
            return f"must be >= {self.lo:g}, got {value:g}"
        if self.hi is not None and value > self.hi:
            return f"must be <= {self.hi:g}, got {value:g}"
        return None


def _looks_like_integer(text):
    base, caret, exponent = text.partition("^")
    if not caret:
        return bool(deckvalues.DECIMAL.match(text))
    return bool(deckvalues.DECIMAL.match(base) and re.match(r"^[0-9]+$", exponent))


def _deck_number(text):
    """strtod over the whole text, finite (deck.cpp's parse_number)."""
    try:
        value = float(text)
    except ValueError:
        try:
            value = float.fromhex(text)  # strtod reads hexadecimal too
        except (ValueError, OverflowError):
            return None
    except OverflowError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def load(path, out_dir=None, bin_dir=None, check_keys=True, tool_dir=None, scheduler=None,
         variables=None, executables=False):
    """The campaign at `path`, checked and expanded into jobs. `out_dir` is
    where karma-batch writes (the default results_dir is under it); `bin_dir`,
    `scheduler` and `variables` ({name: value}) override the campaign's.
    `executables` (generate): every run's program must be here (Programs)."""
    if not os.path.isfile(path):
        raise ToolError(f"{path}: no such campaign file", 2)
    tool_dir = tool_dir or tools_dir()
    with open(path, "rb") as f:
        data = f.read()
    try:
        root = yamlread.parse(data.decode("utf-8"), path)
    except UnicodeDecodeError as e:
        raise ToolError(f"{path}:1:1: not UTF-8 text ({e.reason})", 2) from None
    except yamlread.YamlError as e:
        raise ToolError(f"{e.source}:{e.line}:{e.col}: YAML syntax error: {e.message}", 2) \
            from None
    check = _Checker(path)
    base = os.path.dirname(os.path.abspath(path))
    top = check.mapping(root, "", TOP_KEYS, required=("name", "runs"))

    name = check.string(top["name"], "name", _NAME,
                        "a name of letters, digits, '.', '_' and '-'")
    scheduler, notes = _scheduler(check, top, scheduler, path)
    names = _variables(check, top.get("variables"), variables or {}, path)
    round_order = check.choice(top["round_order"], "round_order", ROUND_ORDERS) \
        if "round_order" in top else "interleaved"

    def where(key, default):
        if key not in top or top[key].value is None:
            return default
        value = check.string(top[key], key)
        return os.path.normpath(os.path.join(base, os.path.expanduser(value)))

    out_dir = os.path.abspath(out_dir) if out_dir else None
    results_dir = where("results_dir", os.path.join(out_dir, "results") if out_dir else
                        os.path.join(base, "results", name))
    programs = Programs(os.path.abspath(bin_dir) if bin_dir else where("bin_dir", None),
                        "--bin-dir" if bin_dir else "the campaign's bin_dir", tool_dir,
                        executables)

    defaults = {
        "time": parse_time(check, top["time"], "time") if "time" in top else "00:30:00",
        "ranks_per_node": check.integers(top["ranks_per_node"], "ranks_per_node", 1)
        if "ranks_per_node" in top else [1],
        "gpus_per_rank": check.integer(top["gpus_per_rank"], "gpus_per_rank", 0)
        if "gpus_per_rank" in top else 1,
        "cpus_per_rank": check.integer(top["cpus_per_rank"], "cpus_per_rank", 1)
        if "cpus_per_rank" in top else None,
        "launcher": _launcher(check, top["launcher"], "launcher") if "launcher" in top
        else None,
    }
    environment = _environment(check, top.get("environment"), "environment", names)
    exclusive = check.boolean(top["exclusive"], "exclusive") if "exclusive" in top else True

    slurm, pbs = _batch_options(check, top, "slurm"), _batch_options(check, top, "pbs")

    runs_node = top["runs"]
    if not isinstance(runs_node.value, list) or not runs_node.value:
        check.fail(runs_node, "runs", "expected a non-empty list of runs")
    inputs = inputs_dir(tool_dir)
    lister = KeyLister()
    jobs, run_names, job_names = [], {}, {}
    for index, run_node in enumerate(runs_node.value):
        jobs.extend(_expand_run(check, run_node, f"runs[{index}]", base, inputs, results_dir,
                                programs, defaults, environment, run_names, job_names,
                                lister if check_keys else None, names, scheduler))
    several = sorted({j.run for j in jobs if j.process})
    compare = _compare(check, top["compare"], _Vocabulary(jobs, lister if check_keys else None),
                       several) if "compare" in top else []
    warnings = notes + list(lister.warnings)
    _conforms(path, root)
    return Campaign(name=name, path=os.path.abspath(path), sha256=hashlib.sha256(data).hexdigest(),
                    scheduler=scheduler, results_dir=results_dir, slurm=slurm, pbs=pbs,
                    exclusive=slurm.get("exclusive", exclusive) if scheduler == "slurm"
                    else exclusive,
                    jobs=jobs, warnings=warnings, variables=names, round_order=round_order,
                    compare=compare)


def _batch_options(check, top, scheduler):
    """The campaign's `slurm:` or `pbs:` (scheduler) options, checked: each
    `extra` line an option of sbatch or qsub."""
    keys, option = (SLURM_KEYS, "an sbatch option (--option=value)") if scheduler == "slurm" \
        else (PBS_KEYS, "a qsub option (-l ...)")
    out = {} if scheduler == "slurm" else {"flavor": "pro"}
    if scheduler not in top:
        return out
    for key, node in check.mapping(top[scheduler], scheduler, keys).items():
        path = f"{scheduler}.{key}"
        if key == "exclusive":
            out[key] = check.boolean(node, path)
        elif key == "flavor":
            out[key] = check.choice(node, path, ("pro", "torque"))
        elif key == "extra":
            out[key] = check.strings(node, path)
            for i, line in enumerate(out[key]):
                if not line.startswith("-"):
                    check.fail(_item(node, i), f"{path}[{i}]", f"'{line}' is not {option}")
        else:
            out[key] = check.string(node, path)
    return out


def _conforms(path, root):
    """The whole file against the campaign's JSON Schema, after the checks
    above (whose messages say more): the first problem as file:line:col."""
    found = schemas.problems(schemas.load("campaign.schema.json"), root.plain())
    if found:
        where, _, _ = found[0].partition(": ")
        node = _node_at(root, where)
        raise ToolError(f"{path}:{node.line}:{node.col}: {found[0]}", 2)


def _node_at(node, where):
    """The deepest node of root on the dotted path (keys may hold dots)."""
    parts = re.findall(r"[^.\[\]]+|\[[0-9]+\]", where)
    i = 0
    while i < len(parts):
        if isinstance(node.value, list) and parts[i].startswith("["):
            index = int(parts[i][1:-1])
            if index >= len(node.value):
                break
            node, i = node.value[index], i + 1
            continue
        if not isinstance(node.value, dict):
            break
        for j in range(len(parts), i, -1):  # the longest key that is there
            key = ".".join(parts[i:j])
            if key in node.value:
                node, i = node.value[key], j
                break
        else:
            break
    return node


def _launcher(check, node, path):
    text = check.string(node, path)
    if text in LAUNCHERS:
        return text
    if "run-as-root" in text:
        check.fail(node, path, "--allow-run-as-root has no place in a job script; where you "
                   "must (a container), set it in the shell that runs karma-batch submit")
    if " " not in text and "{" not in text:
        check.fail(node, path, f"'{text}' is not one of {', '.join(LAUNCHERS)} nor a "
                   "template such as 'mpiexec -n {ranks}'")
    for field in re.findall(r"{([^{}]*)}", text):
        if field not in PLACEHOLDERS:
            check.fail(node, path, f"unknown placeholder {{{field}}} (known: "
                       + ", ".join("{" + p + "}" for p in PLACEHOLDERS) + ")")
    return text


def _unique_name(check, node, path, seen):
    """The `name` at path: letters, digits, '.', '_' and '-', and no other
    entry's; records it in seen (name -> path)."""
    name = check.string(node, f"{path}.name", _NAME, "a name of letters, digits, '.', '_' and '-'")
    if name in seen:
        check.fail(node, f"{path}.name", f"'{name}' is also the name of {seen[name]}")
    seen[name] = path
    return name


def _run_app(check, entries, path):
    """A run's mini-app and, for a reference program's run, its kind."""
    app = check.string(entries["app"], f"{path}.app", _APP, "a mini-app name (stream, mgs, ...)")
    reference = check.choice(entries["reference"], f"{path}.reference", REFERENCES) \
        if "reference" in entries else None
    if reference and "executable" not in entries:
        check.fail(entries["reference"], f"{path}.reference", "a reference run needs "
                   "`executable:` (e.g. \"{babelstream}\" with a campaign variable)")
    if reference and app not in APPS:
        check.fail(entries["app"], f"{path}.app", f"a reference run names the mini-app it "
                   f"stands beside ({', '.join(APPS)}), not '{app}'")
    if app not in APPS and "executable" not in entries:
        near = difflib.get_close_matches(app, APPS, n=1, cutoff=0.6)
        hint = f"did you mean '{near[0]}'? " if near else ""
        check.fail(entries["app"], f"{path}.app", f"'{app}' is not a mini-app of the suite "
                   f"({', '.join(APPS)}); {hint}a mini-app of your own needs `executable:`")
    return app, reference


def _run_deck(check, entries, path, base, inputs, variables):
    """The deck file a run names: under the suite's inputs ({inputs}) or
    relative to the campaign file."""
    deck_node = entries["deck"]
    deck_text = _fill(check, deck_node, f"{path}.deck", check.string(deck_node, f"{path}.deck"),
                      variables, keep=("inputs",))
    if "{inputs}" in deck_text:
        if inputs is None:
            check.fail(deck_node, f"{path}.deck", "{inputs}: the suite's decks were not found "
                       "(set KARMA_INPUTS to the inputs directory)")
        deck = os.path.normpath(deck_text.replace("{inputs}", inputs))
    else:
        deck = os.path.normpath(os.path.join(base, os.path.expanduser(deck_text)))
    if not os.path.isfile(deck):
        check.fail(deck_node, f"{path}.deck", f"no such deck: {deck}")
    return deck


def _run_launch(check, entries, path, app, defaults):
    """How a run's jobs start: ranks and nodes (lists: one job each), GPUs
    and CPUs per rank, time, launcher, repeats and processes a round, the deck
    key of its scaling."""
    def value(key, parse, default):
        return parse(entries[key]) if key in entries else default

    rpn_list = value("ranks_per_node",
                     lambda n: check.integers(n, f"{path}.ranks_per_node", 1),
                     defaults["ranks_per_node"])
    nodes_list = value("nodes", lambda n: check.integers(n, f"{path}.nodes", 1), [1])
    gpus = value("gpus_per_rank", lambda n: check.integer(n, f"{path}.gpus_per_rank", 0),
                 defaults["gpus_per_rank"])
    cpus = value("cpus_per_rank", lambda n: check.integer(n, f"{path}.cpus_per_rank", 1),
                 defaults["cpus_per_rank"])
    time = value("time", lambda n: parse_time(check, n, f"{path}.time"), defaults["time"])
    launcher = value("launcher", lambda n: _launcher(check, n, f"{path}.launcher"),
                     defaults["launcher"])
    repeat = value("repeat", lambda n: check.integer(n, f"{path}.repeat", 1), 1)
    processes = value("processes", lambda n: check.integer(n, f"{path}.processes", 1), 1)
    scaling_key = value("scaling_key",
                        lambda n: check.string(n, f"{path}.scaling_key", _DECK_KEY,
                                               "a deck key (section.key)"),
                        f"{app}.scaling")
    return rpn_list, nodes_list, gpus, cpus, time, launcher, (repeat, processes), scaling_key


def _run_scalings(check, entries, path):
    """The scalings a run asks for, one job each; [None] for none."""
    scalings = [None]
    if "scaling" in entries:
        snode = entries["scaling"]
        items = snode.value if isinstance(snode.value, list) else [snode]
        if isinstance(snode.value, list) and not items:
            check.fail(snode, f"{path}.scaling", "the list is empty")
        scalings = [check.choice(n, f"{path}.scaling", ("weak", "strong")) for n in items]
        if len(set(scalings)) != len(scalings):
            check.fail(snode, f"{path}.scaling", "a scaling is listed twice")
    return scalings


class Programs:
    """Where a run's program is, as its jobs will start it: a run's
    `executable` (a bare name: in PATH; a path: relative to the campaign
    file), else karma-<app> in --bin-dir, the campaign's bin_dir, beside the
    running karma-batch (a build's bin/, PREFIX/bin), else in PATH. With
    `required` (generate), a program not found here is refused (exit 2),
    naming the file, line and key, what was looked for and where: its jobs
    would only fail with exit 127."""

    BIN_HINT = ("--bin-dir names the folder that holds karma-<app>: a build's "
                "build/<preset>/bin, or PREFIX/bin")

    def __init__(self, bin_dir, bin_origin, tool_dir, required):
        self.bin_dir, self.bin_origin = bin_dir, bin_origin
        self.tool_dir, self.required = tool_dir, required

    def resolve(self, check, entries, path, app, base, variables, env):
        """The program of the run at path (its entries); env: its Environment."""
        if "executable" in entries:
            node, key = entries["executable"], f"{path}.executable"
            raw = check.string(node, key)
            text = _fill(check, node, key, raw, variables)
            # A bare name is a command found in PATH when the job runs; a path is
            # relative to the campaign file.
            executable = text if "/" not in text else \
                os.path.normpath(os.path.join(base, os.path.expanduser(text)))
            names = [n for n, _ in _PLACEHOLDER.findall(raw) if n in variables]
            hint = f"--var {names[0]}=PATH names it" if names else \
                "a path is relative to the campaign file" if "/" in text else \
                "a bare name is looked up in PATH"
            self._found(check, node, key, executable, "", hint, env)
            return executable
        name, node, key = f"karma-{app}", entries["app"], f"{path}.app"
        if self.bin_dir:
            executable = os.path.join(self.bin_dir, name)
            self._found(check, node, key, executable, f" ({self.bin_origin} {self.bin_dir})",
                        self.BIN_HINT, env)
            return executable
        if _runnable(os.path.join(self.tool_dir, name)):
            return os.path.join(self.tool_dir, name)  # beside the tools: a build's bin/
        self._found(check, node, key, name, f" beside karma-batch ({self.tool_dir}) nor",
                    self.BIN_HINT, env)
        return name  # found in PATH when the job runs

    def _found(self, check, node, key, executable, looked, hint, env):
        """Refuses (check.fail) an executable that is not here, when required."""
        if not self.required:
            return
        if "/" in executable:
            if _runnable(executable):
                return
            what = "not an executable" if os.path.exists(executable) else "not found"
        else:
            # In PATH here, or in the PATH that the run's environment exports.
            search = os.path.expandvars(env.variables["PATH"]) \
                if "PATH" in env.variables else None
            if shutil.which(executable, path=search):
                return
            what, looked = "not found", f"{looked} in PATH"
        check.fail(node, key, f"{executable}: {what}{looked}; its jobs would fail with "
                   f"exit 127 ({hint})")


def _runnable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _check_run_keys(check, entries, path, app, executable, lister, overrides, sweep,
                    scalings, scaling_key):
    """The keys and values a run sets, sweeps and scales, against what its
    mini-app's --help=json says (where the lister can ask it)."""
    known = lister.keys(executable)
    if known is None:
        return
    set_is_map = isinstance(entries["set"].value, dict) if "set" in entries else False
    # (key, node, path, whether the node's key is where the key is
    # written, [(value text, node, path)])
    checks = [(k, n, f"{path}.set", set_is_map,
               [(t, n, f"{path}.set.{k}" if set_is_map else f"{path}.set[{i}]")])
              for i, (k, t, n) in enumerate(overrides)]
    checks += [(k, entries["sweep"].value[k], f"{path}.sweep.{k}", True,
                [(t, v, f"{path}.sweep.{k}[{i}]") for i, (t, v) in enumerate(vals)])
               for k, vals in sweep]
    if scalings != [None]:
        snode = entries["scaling"]
        checks.append((scaling_key, entries.get("scaling_key", snode),
                       f"{path}.scaling_key", False,
                       [(sc, snode, f"{path}.scaling") for sc in scalings]))
    for key, n, where, at_key, values in checks:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            check.fail(n, where, f"{key}: not a deck key of karma-{app}{hint}; see "
                       f"karma-{app} --help", at_key=at_key)
        if known[key] is None:
            continue  # a type this tool cannot read: the mini-app checks it
        for text, vnode, vpath in values:
            try:
                parsed = yamlread.parse_value(text, check.source, vnode.line, vnode.col)
            except yamlread.YamlError:
                lister.warnings.append(f"{vpath}: cannot read '{_short(text)}' here; "
                                       f"karma-{app} checks it when the job starts")
                continue
            why = known[key].problem(parsed)
            if why:
                check.fail(vnode, vpath, f"{key}={_short(text)}: {why} (karma-{app} "
                           "--help)")


def _expand_run(check, node, path, base, inputs, results_dir, programs, defaults,
                environment, run_names, job_names, lister, variables, scheduler):
    entries = check.mapping(node, path, RUN_KEYS, required=("name", "app", "deck"))
    run = _unique_name(check, entries["name"], path, run_names)
    app, reference = _run_app(check, entries, path)
    deck = _run_deck(check, entries, path, base, inputs, variables)
    rpn_list, nodes_list, gpus, cpus, time, launcher, (repeat, processes), scaling_key = \
        _run_launch(check, entries, path, app, defaults)
    scalings = _run_scalings(check, entries, path)
    overrides = _overrides(check, entries["set"], f"{path}.set") if "set" in entries else []
    sweep = _sweep(check, entries["sweep"], f"{path}.sweep") if "sweep" in entries else []
    args = check.strings(entries["args"], f"{path}.args") if "args" in entries else []
    args_nodes = []
    if "args" in entries:
        anode = entries["args"]
        args_nodes = anode.value if isinstance(anode.value, list) else [anode]
    for i, a in enumerate(args):
        if a in ("--output", "-o") or a.startswith("--output="):
            check.fail(entries["args"], f"{path}.args[{i}]", "karma-batch chooses --output "
                       "(one results directory per job)")
    env = environment.merged(_environment(check, entries.get("environment"),
                                          f"{path}.environment", variables))
    cpus = _host_cpus(gpus, cpus, env)

    executable = programs.resolve(check, entries, path, app, base, variables, env)
    if lister is not None and not reference:
        _check_run_keys(check, entries, path, app, executable, lister, overrides, sweep,
                        scalings, scaling_key)

    # Counted before anything is expanded: a typo must not fill the memory.
    count = len(scalings) * len(nodes_list) * len(rpn_list) * repeat * processes
    for _, vals in sweep:
        count *= len(vals)
    if len(job_names) + count > MAX_JOBS:
        check.fail(node, path, f"makes {count} jobs ({len(job_names)} before it); a campaign "
                   f"makes at most {MAX_JOBS}")
    jobs = []
    sweep_points = list(itertools.product(*[[(k, t) for t, _ in vals] for k, vals in sweep]))
    for scaling, nodes, rpn, point, process, rnd in itertools.product(
            scalings, nodes_list, rpn_list, sweep_points, range(1, processes + 1),
            range(1, repeat + 1)):
        if nodes * rpn > INT_MAX:
            check.fail(entries.get("nodes", node), f"{path}.nodes", f"nodes x ranks_per_node = "
                       f"{nodes} x {rpn} ranks, more than {INT_MAX}")
        if scheduler == "local" and nodes > 1:
            check.fail(entries.get("nodes", node), f"{path}.nodes", f"the local scheduler runs "
                       f"on this one node, but this run asks for {nodes}")
        if launcher == "none" and nodes * rpn > 1:
            check.fail(entries.get("launcher", node), f"{path}.launcher",
                       f"'none' runs one rank, but nodes x ranks_per_node = {nodes * rpn}")
        parts = [run]
        if scaling:
            parts.append(scaling)
        parts.append(f"n{nodes}x{rpn}")
        parts.extend(_slug(k, t) for k, t in point)
        if processes > 1:
            parts.append(f"p{process}")
        if repeat > 1:
            parts.append(f"r{rnd}")
        job_name = ".".join(parts)
        if job_name in job_names:
            check.fail(entries.get("sweep", node), path, f"two jobs would be named '{job_name}' "
                       f"(the other from {job_names[job_name]}); make the sweep values or run "
                       "names distinct")
        job_names[job_name] = path
        job_overrides = [f"{k}={v}" for k, v, _ in overrides]
        if scaling:
            job_overrides.append(f"{scaling_key}={scaling}")
        job_overrides.extend(f"{k}={t}" for k, t in point)
        values = dict(o.split("=", 1) for o in job_overrides)
        job_args = [_fill(check, args_nodes[i] if i < len(args_nodes) else node,
                          f"{path}.args[{i}]", a, variables, values)
                    for i, a in enumerate(args)]
        jobs.append(Job(name=job_name, run=run, app=app, deck=deck, executable=executable,
                        overrides=job_overrides, args=job_args, nodes=nodes, ranks_per_node=rpn,
                        gpus_per_rank=gpus, cpus_per_rank=cpus, scaling=scaling,
                        sweep={k: t for k, t in point}, round=rnd,
                        process=process if processes > 1 else None, time=time,
                        launcher=launcher, environment=env, reference=reference,
                        results_dir=os.path.join(results_dir, job_name)))
    return jobs


def _scheduler(check, top, scheduler, path):
    """(scheduler, [warning]): the campaign's, or --scheduler's, which warns
    where it overrides another."""
    if scheduler is None:
        written = check.choice(top["scheduler"], "scheduler", SCHEDULERS) \
            if "scheduler" in top else "slurm"
        return written, []
    if "scheduler" in top:
        written = check.choice(top["scheduler"], "scheduler", SCHEDULERS)
        if written != scheduler:
            return scheduler, [f"--scheduler {scheduler} overrides the campaign's scheduler: "
                               f"{written} ({path}:{top['scheduler'].line}); check that its "
                               f"launcher, node counts and environment suit {scheduler}"]
    return scheduler, []


def _host_cpus(gpus, cpus, env):
    """cpus_per_rank of a host job (no GPU) that gives only OMP_NUM_THREADS:
    that many, so that the scheduler gives the job a core per thread."""
    threads = env.variables.get("OMP_NUM_THREADS", "")
    if cpus is None and gpus == 0 and threads.isdigit() and 0 < int(threads) <= INT_MAX:
        return int(threads)
    return cpus


def _variables(check, node, overrides, path):
    """{name: value} of `variables:`, with `--var NAME=VALUE` applied."""
    names = {}
    if node is not None and node.value is not None:
        if not isinstance(node.value, dict):
            check.fail(node, "variables", f"expected NAME: value pairs, got {_describe(node)}")
        for name, value in node.value.items():
            if not _ENV_NAME.match(name) or name == "inputs":
                check.fail(value, f"variables.{name}", f"'{name}' is not a variable name "
                           "(letters, digits, '_'; not 'inputs')", at_key=True)
            if isinstance(value.value, (dict, list)) or value.value is None:
                check.fail(value, f"variables.{name}", f"expected a value, got "
                           f"{_describe(value)}")
            names[name] = value.text()
    for name, value in overrides.items():
        if name not in names:
            known = ", ".join(names) or "none"
            raise ToolError(f"--var {name}: {path} has no such variable (its variables: "
                            f"{known})", 2)
        names[name] = value
    return names


def _fill(check, node, path, text, variables, deck_values=None, keep=()):
    """text with {NAME} replaced by campaign variables and, given deck_values
    ({key: override text}), {KEY} or {KEY[i]} by a job's deck values, integers
    written out (2^25 -> 33554432)."""

    def one(m):
        name, index = m.group(1), m.group(2)
        if name in keep and index is None:
            return m.group(0)
        if name in variables and index is None:
            return variables[name]
        if deck_values is not None and name in deck_values:
            try:
                value = deckvalues.deck_value(yamlread.parse_value(deck_values[name]).plain())
            except yamlread.YamlError:
                value = deck_values[name]
            if index is not None:
                if not isinstance(value, list) or int(index) >= len(value):
                    check.fail(node, path, f"{{{name}[{index}]}}: {name} is "
                               f"{deck_values[name]}, which has no entry {index}")
                value = value[int(index)]
            if isinstance(value, list):
                return "[" + ",".join(str(v) for v in value) + "]"
            return str(value)
        known = [f"{{{v}}}" for v in variables] + \
            [f"{{{k}}}" for k in (deck_values or {})] + [f"{{{k}}}" for k in keep]
        check.fail(node, path, f"{m.group(0)}: not a campaign variable" +
                   (" nor a set/sweep key of this run" if deck_values is not None else "") +
                   f" (known: {', '.join(known) or 'none'})")

    return _PLACEHOLDER.sub(one, text)


def _glob_list(check, node, path):
    values = check.strings(node, path)
    if not values:
        check.fail(node, path, "the list is empty")
    return values


class _Vocabulary:
    """What a campaign's comparisons can name: its runs with their
    mini-apps, the deck keys of those mini-apps (where karma-batch could
    list them: --help=json) and the pairing's own keys, and what each
    mini-app writes into kernels[] (results.KERNELS)."""

    def __init__(self, jobs, lister):
        self.apps = {}  # run name -> app
        self.keys = set(sides.PAIRING_KEYS)
        listed, unlisted = set(), set()
        for job in jobs:
            self.apps.setdefault(job.run, job.app)
            keys = lister.cache.get(job.executable) if lister and not job.reference else None
            if keys:
                self.keys.update(keys)
                listed.add(job.app)
            else:
                unlisted.add(job.app)
        # Sections whose keys are not known here pass unchecked; a mini-app
        # of the site's own may have any sections.
        self.open = unlisted - listed | ({"run"} if not listed else set())
        self.any_section = any(app not in APPS for app in unlisted)

    def key_problem(self, key):
        """Why `key` can be no key of a result of this campaign, or None."""
        if not _DECK_KEY.match(key):
            return f"'{key}' is not a deck key (section.key)"
        section = key.split(".")[0]
        if key in self.keys or section not in ("job", "mpi") and \
                (self.any_section or section in self.open):
            return None
        # The key meant may be in a section whose keys are not listed here.
        near = difflib.get_close_matches(key, sorted(self.keys | {
            f"{s}.{key.split('.', 1)[1]}" for s in self.open - {section}}), n=1, cutoff=0.6)
        apps = _programs(set(self.apps.values()))
        return (f"'{key}' is not a deck key of {apps} nor one of "
                f"{', '.join(sides.PAIRING_KEYS)}"
                + (f" (did you mean '{near[0]}'?)" if near else ""))

    def names(self, what, runs):
        """(apps, names, elsewhere): the mini-apps of the runs, the
        implementations, variants or kernels (what) their results can have
        (None where a run is of a mini-app of the site's own), and {name:
        mini-app} of the other mini-apps' names."""
        apps = sorted({self.apps[r] for r in runs})
        if any(app not in KERNELS for app in apps):
            return apps, None, {}
        known = sorted({n for app in apps for n in KERNELS[app][what]})
        elsewhere = {n: app for app in KERNELS for n in KERNELS[app][what] if n not in known}
        return apps, known, elsewhere


def _matching_none(check, node, where, patterns, known, what, elsewhere=None):
    """Fails at the first pattern that matches none of known, with the
    likeliest name meant: one of known, else one of `elsewhere` ({name:
    the mini-app whose name it is})."""
    elsewhere = elsewhere or {}
    for i, pattern in enumerate(patterns):
        if any(fnmatch.fnmatchcase(k, pattern) for k in known):
            continue
        near = difflib.get_close_matches(pattern, known + sorted(elsewhere), n=1, cutoff=0.6)
        hint = "" if not near else f"did you mean '{near[0]}'? " if near[0] in known else \
            f"'{near[0]}' is karma-{elsewhere[near[0]]}'s, which these runs are not; "
        check.fail(_item(node, i), where, f"'{pattern}' matches no {what} ({hint}known: "
                   f"{', '.join(known)})")


def _item(node, i):
    """The node of a list's i-th entry; the node itself where one value
    stands for the list."""
    return node.value[i] if isinstance(node.value, list) else node


def _selection(check, node, path, vocabulary):
    entries = check.mapping(node, path, SELECTION_KEYS)
    if not entries:
        check.fail(node, path, f"selects nothing: name at least one of "
                   f"{', '.join(SELECTION_KEYS)}")
    out = {}
    for key, value in entries.items():
        where = f"{path}.{key}"
        if key == "deck":
            if not isinstance(value.value, dict) or not value.value:
                check.fail(value, where, "expected deck keys with their values")
            for k, v in value.value.items():
                why = vocabulary.key_problem(k)
                if why:
                    check.fail(v, f"{where}.{k}", why, at_key=True)

            out[key] = {k: deckvalues.deck_value(v.plain()) for k, v in value.value.items()}
            continue
        out[key] = _glob_list(check, value, where)
        if key == "run":
            _matching_none(check, value, where, out[key], list(vocabulary.apps),
                           "run of this campaign")
    runs = [r for r in vocabulary.apps if _matches_any(r, out.get("run", ["*"]))]
    for key in ("implementation", "variant", "kernel"):
        if key in out:
            apps, known, elsewhere = vocabulary.names(key, runs)
            if known is not None:
                _matching_none(check, entries[key], f"{path}.{key}", out[key], known,
                               f"{key} of {_programs(apps)}", elsewhere)
    return out


def _programs(apps):
    return ", ".join(f"karma-{app}" for app in sorted(apps))


def _matches_any(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _compare(check, node, vocabulary, several):
    """The `compare:` list as plain dicts (kept in the manifest); `several`
    names the runs of several processes a round, whose comparisons must say
    how those combine (per_round)."""
    if not isinstance(node.value, list) or not node.value:
        check.fail(node, "compare", "expected a non-empty list of comparisons")
    out, seen = [], {}
    for i, item in enumerate(node.value):
        path = f"compare[{i}]"
        entries = check.mapping(item, path, COMPARE_KEYS,
                                required=("name", "numerator", "denominator"))
        name = _unique_name(check, entries["name"], path, seen)
        spec = {"name": name, "title": None, "metric": "fom.value", "higher_is_better": None,
                "match": [], "label": [], "same_variant": False, "same_kernel": False,
                "per_round": None, "aggregate": ["worst"]}
        if "title" in entries:
            spec["title"] = check.string(entries["title"], f"{path}.title")
        if "metric" in entries:
            spec["metric"] = check.string(entries["metric"], f"{path}.metric", _METRIC,
                                          "a kernel field such as fom.value or "
                                          "bandwidth_GBps.best")
        for key in ("higher_is_better", "same_variant", "same_kernel"):
            if key in entries:
                spec[key] = check.boolean(entries[key], f"{path}.{key}")
        for key in ("match", "label"):
            if key in entries:
                spec[key] = check.strings(entries[key], f"{path}.{key}")
                for j, k in enumerate(spec[key]):
                    why = vocabulary.key_problem(k)
                    if why:
                        check.fail(_item(entries[key], j), f"{path}.{key}[{j}]", why)
        if "aggregate" in entries:
            anode = entries["aggregate"]
            items = anode.value if isinstance(anode.value, list) else [anode]
            if not items:
                check.fail(anode, f"{path}.aggregate", "the list is empty")
            spec["aggregate"] = [check.choice(n, f"{path}.aggregate", AGGREGATES)
                                 for n in items]
        if "per_round" in entries:
            spec["per_round"] = check.choice(entries["per_round"], f"{path}.per_round",
                                             PER_ROUND)
        for side in ("numerator", "denominator"):
            spec[side] = _selection(check, entries[side], f"{path}.{side}", vocabulary)
        covered = [r for r in several
                   if any(fnmatch.fnmatchcase(r, p) for side in ("numerator", "denominator")
                          for p in spec[side].get("run", ["*"]))]
        if covered and spec["per_round"] is None:
            check.fail(item, path, f"run {covered[0]} has several processes a round: say how "
                       "each side's results of a round combine (per_round: best or median)")
        out.append(spec)
    return out
