"""A campaign's runs expanded into jobs: each run's app, deck, launch and
scalings checked, its set and sweep keys crossed, its variables filled in."""

import difflib
import itertools
import os
import re
import shutil
from karma_tools.campaign import deck as deck_mod
from karma_tools import yamlread
from karma_tools.campaign.format import (APP, DECK_KEY, ENV_KEYS, ENV_NAME, INT_MAX, LAUNCHERS,
                                         MAX_JOBS, PLACEHOLDER, PLACEHOLDERS, REFERENCES,
                                         ROOT_VARIABLE, RUN_KEYS, join_path,
                                         selection_item, shortened, unique_name)
from karma_tools.core import APPS


def _overrides(checker, node, path):
    """--set arguments ['key=value', ...] from a list or a mapping, each with
    the node it came from (for key checks)."""
    out = []
    if isinstance(node.value, dict):
        for key, value in node.value.items():
            if not DECK_KEY.match(key):
                checker.fail(value, f"{path}.{key}", "not a deck key (section.key)", at_key=True)
            if value.value is None:
                checker.fail(value, f"{path}.{key}", "has no value")
            out.append((key, value.text(), value))
        return out
    for i, text in enumerate(checker.strings(node, path)):
        item = node.value[i] if isinstance(node.value, list) else node
        key, eq, value = text.partition("=")
        if not eq or not DECK_KEY.match(key.strip()) or not value.strip():
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
        if not DECK_KEY.match(key):
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


def _slug(key, text):
    """A short, file-name-safe tag for a sweep point: stream.shape=[2^28] ->
    shape2p28."""
    value = text.replace("^", "p").replace(",", "x")
    value = re.sub(r"[\[\]{}\s'\"]", "", value)
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-.") or "v"
    return key.split(".")[-1] + value


def launcher_of(check, node, path):
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


def _run_app(check, entries, path):
    """A run's mini-app and, for a reference program's run, its kind."""
    app = check.string(entries["app"], f"{path}.app", APP, "a mini-app name (stream, mgs, ...)")
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


def launch(check, entries, prefix, defaults):
    """How jobs start, for each key of defaults (its value where entries have
    none): ranks and nodes (lists: one job each), GPUs and CPUs per rank,
    time, launcher, repeats and processes a round, the deck key of a scaling."""
    def count(least, many=False):
        return lambda n, p: (check.integers if many else check.integer)(n, p, least)

    read = {"ranks_per_node": count(1, True), "nodes": count(1, True), "gpus_per_rank": count(0),
            "cpus_per_rank": count(1), "time": lambda n, p: parse_time(check, n, p),
            "launcher": lambda n, p: launcher_of(check, n, p), "repeat": count(1),
            "processes": count(1),
            "scaling_key": lambda n, p: check.string(n, p, DECK_KEY, "a deck key (section.key)")}
    return {key: parse(entries[key], prefix + key) if key in entries else defaults[key]
            for key, parse in read.items() if key in defaults}


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
            names = [n for n, _ in PLACEHOLDER.findall(raw) if n in variables]
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
                    scalings, scaling_key, run):
    """The keys and values a run sets, sweeps and scales, against its
    mini-app's deck schema (where the lister has it)."""
    known = lister.runs[run] = lister.keys(app, executable if "executable" in entries else None)
    if known is None:
        return
    at_key = isinstance(entries["set"].value, dict) if "set" in entries else False
    # (key, its node, its path, whether the key is at the node's key,
    # [(value text, node, path)])
    checks = [(k, n, f"{path}.set", at_key,
               [(t, n, f"{path}.set.{k}" if at_key else f"{path}.set[{i}]")])
              for i, (k, t, n) in enumerate(overrides)]
    checks += [(k, entries["sweep"].value[k], f"{path}.sweep.{k}", True,
                [(t, v, f"{path}.sweep.{k}[{i}]") for i, (t, v) in enumerate(vals)])
               for k, vals in sweep]
    if scalings != [None]:
        checks.append((scaling_key, entries.get("scaling_key", entries["scaling"]),
                       f"{path}.scaling_key", False,
                       [(sc, entries["scaling"], f"{path}.scaling") for sc in scalings]))
    for key, n, where, at_key, values in checks:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            check.fail(n, where, f"{key}: not a deck key of karma-{app}"
                       + (f" (did you mean '{near[0]}'?)" if near else "")
                       + f"; see karma-{app} --help", at_key=at_key)
        for text, vnode, vpath in values:
            try:
                why = deck_mod.problem(known[key], yamlread.parse_value(
                    text, check.source, vnode.line, vnode.col), known.rules)
            except yamlread.YamlError:
                lister.warnings.append(f"{vpath}: cannot read '{shortened(text)}' here; "
                                       f"karma-{app} checks it when the job starts")
                continue
            if why:
                check.fail(vnode, vpath, f"{key}={shortened(text)}: {why} (karma-{app} "
                           "--help)")


def expand_run(check, node, path, base, inputs, results_dir, programs, defaults,
               environment, run_names, job_names, lister, variables, scheduler):
    entries = check.mapping(node, path, RUN_KEYS, required=("name", "app", "deck"))
    run = unique_name(check, entries["name"], path, run_names)
    app, reference = _run_app(check, entries, path)
    deck = _run_deck(check, entries, path, base, inputs, variables)
    how = launch(check, entries, f"{path}.", dict(defaults, nodes=[1], repeat=1, processes=1,
                                                  scaling_key=f"{app}.scaling"))
    rpn_list, nodes_list, gpus, cpus, launcher, repeat, processes, scaling_key = (how[k] for k in (
        "ranks_per_node", "nodes", "gpus_per_rank", "cpus_per_rank", "launcher", "repeat",
        "processes", "scaling_key"))
    scalings = _run_scalings(check, entries, path)
    overrides = _overrides(check, entries["set"], f"{path}.set") if "set" in entries else []
    sweep = _sweep(check, entries["sweep"], f"{path}.sweep") if "sweep" in entries else []
    args = check.strings(entries["args"], f"{path}.args") if "args" in entries else []
    for i, a in enumerate(args):
        if a in ("--output", "-o") or a.startswith("--output="):
            check.fail(entries["args"], f"{path}.args[{i}]", "karma-batch chooses --output "
                       "(one results directory per job)")
    env = environment.merged(environment_of(check, entries.get("environment"),
                                            f"{path}.environment", variables))
    cpus = _host_cpus(gpus, cpus, env)

    executable = programs.resolve(check, entries, path, app, base, variables, env)
    if lister is not None and not reference:
        _check_run_keys(check, entries, path, app, executable, lister, overrides, sweep,
                        scalings, scaling_key, run)

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
        job_name = ".".join([run] + [scaling] * bool(scaling) + [f"n{nodes}x{rpn}"]
                            + [_slug(k, t) for k, t in point] + [f"p{process}"] * (processes > 1)
                            + [f"r{rnd}"] * (repeat > 1))
        if job_name in job_names:
            check.fail(entries.get("sweep", node), path, f"two jobs would be named '{job_name}' "
                       f"(the other from {job_names[job_name]}); make the sweep values or run "
                       "names distinct")
        job_names[job_name] = path
        job_overrides = [f"{k}={v}" for k, v, _ in overrides] + \
            [f"{scaling_key}={scaling}"] * bool(scaling) + [f"{k}={t}" for k, t in point]
        values = dict(o.split("=", 1) for o in job_overrides)
        job_args = [_fill(check, selection_item(entries["args"], i), f"{path}.args[{i}]", a,
                          variables, values) for i, a in enumerate(args)]
        jobs.append(Job(name=job_name, run=run, app=app, deck=deck, executable=executable,
                        overrides=job_overrides, args=job_args, nodes=nodes, ranks_per_node=rpn,
                        gpus_per_rank=gpus, cpus_per_rank=cpus, scaling=scaling,
                        sweep={k: t for k, t in point}, round=rnd,
                        process=process if processes > 1 else None, time=how["time"],
                        launcher=launcher, environment=env, reference=reference,
                        results_dir=os.path.join(results_dir, job_name)))
    return jobs


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
                value = deck_mod.value(yamlread.parse_value(deck_values[name]).plain())
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

    return PLACEHOLDER.sub(one, text)


class Environment:
    def __init__(self, setup=(), modules=(), variables=None):
        self.setup, self.modules, self.variables = list(setup), list(modules), dict(variables or {})

    def merged(self, other):
        return Environment(self.setup + other.setup, self.modules + other.modules,
                           {**self.variables, **other.variables})

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


def environment_of(checker, node, path, variables=None):
    if node is None or node.value is None:
        return Environment()
    entries = checker.mapping(node, path, ENV_KEYS)
    env = Environment()
    if "setup" in entries:
        env.setup = checker.strings(entries["setup"], join_path(path, "setup"), allow_block=True)
    if "modules" in entries:
        env.modules = checker.strings(entries["modules"], join_path(path, "modules"))
        for i, module in enumerate(env.modules):
            if re.search(r"\s", module):
                checker.fail(selection_item(entries["modules"], i), f"{path}.modules[{i}]",
                             f"'{module}': one module per entry")
    if "variables" in entries:
        def bad(name):
            if not ENV_NAME.match(name):
                return f"'{name}' is not a shell variable name"
            if ROOT_VARIABLE.search(name):
                return (f"'{name}' lets MPI run as root, which no job script should ask for; "
                        "where you must (a container), export it in the shell that runs "
                        "karma-batch submit")
            return None

        for name, value, vpath in checker.pairs(entries["variables"], f"{path}.variables", bad):
            env.variables[name] = _fill(checker, value, vpath, value.text(), variables or {})
    return env


def _host_cpus(gpus, cpus, env):
    """cpus_per_rank of a host job (no GPU) that gives only OMP_NUM_THREADS:
    that many, so that the scheduler gives the job a core per thread."""
    threads = env.variables.get("OMP_NUM_THREADS", "")
    if cpus is None and gpus == 0 and threads.isdigit() and 0 < int(threads) <= INT_MAX:
        return int(threads)
    return cpus
