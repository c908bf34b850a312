"""A campaign's runs expanded into jobs: each run's app, deck, launch and
scalings checked, its set and sweep keys crossed, its variables filled in."""

import itertools
import math
import os
import re
import shutil
import types
from karma_tools.campaign import deck as deck_mod
from karma_tools import yamlread
from karma_tools.campaign.format import (INT_MAX, MAX_JOBS, PLACEHOLDER, did_you_mean, item,
                                         strings, unique_name)
from karma_tools.core import shortened


def _overrides(node):
    """[(key, value, its node)] of `set:`, a list or a mapping."""
    if isinstance(node.value, dict):
        return [(key, value.text(), value) for key, value in node.value.items()]
    return [(k.strip(), v.strip(), item(node, i))
            for i, (k, _, v) in enumerate(t.partition("=") for t in strings(node))]


def _slug(key, text):
    """A file-name-safe tag for a sweep point: stream.shape=[2^28] -> shape2p28."""
    value = text.replace("^", "p").replace(",", "x")
    value = re.sub(r"[\[\]{}\s'\"]", "", value)
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-.") or "v"
    return key.split(".")[-1] + value


def _run_deck(check, entries, path, base, inputs, variables):
    """The run's deck: under the suite's inputs ({inputs}), else relative to the campaign."""
    deck_node = entries["deck"]
    deck_text = _fill(check, deck_node, f"{path}.deck", deck_node.text(), variables,
                      keep=("inputs",))
    if "{inputs}" in deck_text and inputs is None:
        check.fail(deck_node, f"{path}.deck", "{inputs}: the suite's decks were not found "
                   "(set KARMA_INPUTS to the inputs directory)")
    deck = os.path.normpath(os.path.join(base, os.path.expanduser(
        deck_text.replace("{inputs}", inputs or ""))))
    if not os.path.isfile(deck):
        check.fail(deck_node, f"{path}.deck", f"no such deck: {deck}")
    return deck


def launch(check, entries, defaults, variables, where=""):
    """{key: entries' value, else defaults'} for each key of defaults (how jobs start); where:
    the entries' path and its '.' (none at the campaign's top)."""
    read = {"time": parse_time, "launcher": yamlread.Node.text, "scaling_key": yamlread.Node.text}
    how = {}
    for key, default in defaults.items():
        node = entries.get(key)
        if node is None:
            how[key] = default
        elif key in ("nodes", "ranks_per_node"):
            listed = node.value if isinstance(node.value, list) else [node]
            how[key] = [_count(check, n, where + key, variables) for n in listed]
        elif key in ("min_ranks", "each_device"):
            how[key] = _count(check, node, where + key, variables)
        else:
            how[key] = read.get(key, lambda n: n.value)(node)
    return how


def _count(check, node, path, variables):
    """A count as written, or the count that the campaign variable {NAME} holds."""
    if not isinstance(node.value, str):
        return node.value
    text = _fill(check, node, path, node.value, variables)
    if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= INT_MAX:
        check.fail(node, path, f"{node.value} is '{text}', not a count (1 to {INT_MAX})")
    return int(text)


class Programs:
    """A run's program: its `executable`, else karma-<app> in --bin-dir, the campaign's bin_dir,
    beside karma-batch, else in PATH; `required` (generate): one not here is refused."""

    BIN_HINT = ("--bin-dir names the folder that holds karma-<app>: a build's "
                "build/<preset>/bin, or PREFIX/bin")

    def __init__(self, bin_dir, bin_origin, tool_dir, required):
        self.bin_dir, self.bin_origin = bin_dir, bin_origin
        self.tool_dir, self.required = tool_dir, required

    def resolve(self, check, entries, path, app, base, variables, env):
        """The program of the run at path (its entries); env: its Environment."""
        if "executable" in entries:
            node, key = entries["executable"], f"{path}.executable"
            raw = node.text()
            filled = _fill(check, node, key, raw, variables)
            # A bare name is looked up in PATH as the job runs.
            executable = filled if "/" not in filled else \
                os.path.normpath(os.path.join(base, os.path.expanduser(filled)))
            names = [n for n, _ in PLACEHOLDER.findall(raw) if n in variables]
            hint = f"--var {names[0]}=PATH names it" if names else \
                "a path is relative to the campaign file" if "/" in filled else \
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
            search = os.path.expandvars(env.variables["PATH"]) if "PATH" in env.variables else None
            if shutil.which(executable, path=search):
                return
            what, looked = "not found", f"{looked} in PATH"
        check.fail(node, key, f"{executable}: {what}{looked}; its jobs would fail with "
                   f"exit 127 ({hint})")


def _runnable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _check_run_keys(check, entries, path, app, executable, lister, overrides, sweep,
                    scalings, scaling_key, run):
    """A run's set, sweep and scaling keys and values against its deck schema."""
    known = lister.runs[run] = lister.keys(app, executable if "executable" in entries else None)
    if known is None:
        return
    at_key = isinstance(entries["set"].value, dict) if "set" in entries else False
    # (key, its node, its path, whether at the node's key, [(value text, node, path)])
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
            check.fail(n, where, f"{key}: not a deck key of karma-{app}"
                       f"{did_you_mean(key, sorted(known))}; see karma-{app} --help",
                       at_key=at_key)
        for value, vnode, vpath in values:
            try:
                why = deck_mod.problem(known[key], yamlread.parse_value(
                    value, check.source, vnode.line, vnode.col), known.rules)
            except yamlread.YamlError:
                lister.warnings.append(f"{vpath}: cannot read '{shortened(value)}' here; "
                                       f"karma-{app} checks it when the job starts")
                continue
            if why:
                check.fail(vnode, vpath, f"{key}={shortened(value)}: {why} (karma-{app} "
                           "--help)")


def expand_run(check, node, path, base, inputs, results_dir, programs, defaults,
               environment, run_names, job_names, lister, variables, scheduler):
    entries = node.value
    run = unique_name(check, entries["name"], path, run_names)
    app = entries["app"].text()
    reference = entries["reference"].value if "reference" in entries else None
    deck = _run_deck(check, entries, path, base, inputs, variables)
    how = launch(check, entries, dict(defaults, nodes=[1], repeat=1, processes=1, min_ranks=1,
                                      each_device=None, scaling_key=f"{app}.scaling"),
                 variables, f"{path}.")
    rpn_list, nodes_list, gpus, cpus, launcher, repeat, processes, scaling_key = (how[k] for k in (
        "ranks_per_node", "nodes", "gpus_per_rank", "cpus_per_rank", "launcher", "repeat",
        "processes", "scaling_key"))
    devices = how["each_device"]
    if devices and (nodes_list != [1] or rpn_list != [1]):
        check.fail(entries["each_device"], f"{path}.each_device", "one rank on each device of "
                   "one node: needs nodes 1 and ranks_per_node 1, not "
                   f"{', '.join(map(str, nodes_list))} and {', '.join(map(str, rpn_list))}",
                   at_key=True)
    if devices and gpus:
        gpus = devices  # the job holds the node's N GPUs (a batch job sees those it asks for)
    scalings = strings(entries["scaling"]) if "scaling" in entries else [None]
    overrides = _overrides(entries["set"]) if "set" in entries else []
    # [(key, [(value text, node), ...]), ...]
    sweep = [(key, [(v.text(), v) for v in values.value])
             for key, values in entries["sweep"].value.items()] if "sweep" in entries else []
    args = strings(entries["args"]) if "args" in entries else []
    env = environment.merged(environment_of(check, entries.get("environment"),
                                            f"{path}.environment", variables))
    threads = env.variables.get("OMP_NUM_THREADS", "")
    if cpus is None and gpus == 0 and threads.isdigit() and 0 < int(threads) <= INT_MAX:
        cpus = int(threads)  # a host job giving only OMP_NUM_THREADS: a core per thread

    executable = programs.resolve(check, entries, path, app, base, variables, env)
    if lister is not None and not reference:
        _check_run_keys(check, entries, path, app, executable, lister, overrides, sweep,
                        scalings, scaling_key, run)

    # Counted before anything is expanded: a typo must not fill the memory.
    count = math.prod([len(scalings), len(nodes_list), len(rpn_list), devices or 1, repeat,
                       processes, *(len(vals) for _, vals in sweep)])
    if len(job_names) + count > MAX_JOBS:
        check.fail(node, path, f"makes {count} jobs ({len(job_names)} before it); a campaign "
                   f"makes at most {MAX_JOBS}")
    jobs, left_out = [], []
    sweep_points = list(itertools.product(*[[(k, t) for t, _ in vals] for k, vals in sweep]))
    for scaling, nodes, rpn, point, device, process, rnd in itertools.product(
            scalings, nodes_list, rpn_list, sweep_points, range(devices) if devices else [None],
            range(1, processes + 1), range(1, repeat + 1)):
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
                            + [_slug(k, t) for k, t in point] + [f"dev{device}"] * bool(devices)
                            + [f"p{process}"] * (processes > 1)
                            + [f"r{rnd}"] * (repeat > 1))
        if job_name in job_names:
            check.fail(entries.get("sweep", node), path, f"two jobs would be named '{job_name}' "
                       f"(the other from {job_names[job_name]}); make the sweep values or run "
                       "names distinct")
        job_names[job_name] = path
        job_overrides = [f"{k}={v}" for k, v, _ in overrides] + \
            [f"{scaling_key}={scaling}"] * bool(scaling) + [f"{k}={t}" for k, t in point]
        values = dict(o.split("=", 1) for o in job_overrides)
        job_args = [_fill(check, item(entries["args"], i), f"{path}.args[{i}]", a,
                          variables, values) for i, a in enumerate(args)]
        job_args += [f"--kokkos-device-id={device}"] * bool(devices)
        # Below min_ranks: left out (generate lists them); each_device's N counts as ranks.
        made = jobs if (devices or nodes * rpn) >= how["min_ranks"] else left_out
        made.append(Job(name=job_name, run=run, app=app, deck=deck, executable=executable,
                        overrides=job_overrides, args=job_args, nodes=nodes, ranks_per_node=rpn,
                        gpus_per_rank=gpus, cpus_per_rank=cpus, scaling=scaling,
                        sweep={k: t for k, t in point}, round=rnd,
                        process=process if processes > 1 else None, time=how["time"],
                        launcher=launcher, environment=env, reference=reference,
                        results_dir=os.path.join(results_dir, job_name)))
    return jobs, left_out


def _fill(check, node, path, text, variables, deck_values=None, keep=()):
    """text with {NAME} from variables, {KEY} or {KEY[i]} from deck_values (2^25 as 33554432)."""

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
            return "[" + ",".join(map(str, value)) + "]" if isinstance(value, list) else str(value)
        known = [f"{{{k}}}" for k in [*variables, *(deck_values or {}), *keep]]
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


class Job(types.SimpleNamespace):
    """One batch job: one run of one mini-app at one point of its sweeps."""

    @property
    def ranks(self):
        return self.nodes * self.ranks_per_node

    def as_dict(self):
        return dict(vars(self), ranks=self.ranks, environment=vars(self.environment))


def parse_time(node):
    """HH:MM:SS from 'HH:MM:SS', 'MM:SS', 'D-HH:MM:SS' or minutes (as the schema lets)."""
    if isinstance(node.value, int):
        seconds = node.value * 60
    else:
        days, hours, minutes, secs = (int(g or 0) for g in re.match(
            r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$", node.value).groups())
        seconds = ((days * 24 + hours) * 60 + minutes) * 60 + secs
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def environment_of(check, node, path, variables):
    if node is None or node.value is None:
        return Environment()
    entries = node.value
    return Environment(
        strings(entries["setup"], lines=True) if "setup" in entries else (),
        strings(entries["modules"]) if "modules" in entries else (),
        {name: _fill(check, value, f"{path}.variables.{name}", value.text(), variables)
         for name, value in entries["variables"].value.items()} if "variables" in entries
        else None)
