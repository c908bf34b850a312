"""The figures a results document derives from its own record, derived again.

A karma run's kernels[].fom, bandwidth_GBps, GFLOPs and the mini-apps'
further rates are each some work the result records (bytes, flops, elements,
pairs) over one of its times (common/runtime/src/harness.cpp, kernel_result; the
mini-apps' reports); the efficiency's peaks come from ranks[].device; the
energy's figures per execution and per watt from its average power. Here
each is computed again from those inputs and must agree within TOLERANCE, and
the time statistics must agree with each other and with the repetitions the
deck ran. karma-bundle check holds every result of a bundle to this:
editing a figure without the work and times it came from is found.

What cannot be derived again is left alone: the times themselves and the
average power (the counters' readings are not recorded), a kernel's bytes
and flops (the mini-app's count of its work: the README's formulas over the
deck), and the figures a mini-app adds that no recorded input gives
(contact's phases, mgs's launch tallies)."""

import math

from karma_tools.results import validate
from karma_tools.results.results import is_number as _number

# The JSON holds each figure as printed from a double, in full: a figure
# derived again differs by rounding alone. 0.1% is far below any change
# that would move a score, far above rounding.
TOLERANCE = 1e-3
# Sums of many times (a mean) may round past their bounds by a few ulps.
_ROUNDING = 1e-9
# Kernels whose work differs between executions (contact's moving scene):
# their figures are all the work over all its time, i.e. over the mean
# (FigureOfMerit::Time::mean); every other karma kernel's over the minimum.
_MEAN_TIME_APPS = ("contact",)


def _get(node, dotted):
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _close(found, want):
    return abs(found - want) <= TOLERANCE * max(abs(found), abs(want))


def _rate(amount, seconds, scale=1.0):
    """amount / seconds as the harness computes it (0 without time); None
    where an input is not a number."""
    if not (_number(amount) and _number(seconds)):
        return None
    return amount / seconds * scale if seconds > 0 else 0.0


# --- the time statistics -----------------------------------------------------------


def _spread_problems(t):
    """The sample standard deviation against the extremes and the mean: it
    lies between (max - min) / sqrt(2 (n - 1)) and, by the Bhatia-Davis
    bound, sqrt((max - mean) (mean - min) n / (n - 1))."""
    n, lo, mean, hi, sd = (t.get(k) for k in ("count", "min", "mean", "max", "stddev"))
    if not all(map(_number, (n, lo, mean, hi, sd))):
        return []
    if sd < 0:
        return [f"time_s.stddev {sd} < 0"]
    if n == 1:
        return [] if lo == hi and sd == 0 else \
            [f"time_s: one repetition, but min {lo}, max {hi}, stddev {sd}"]
    least = (hi - lo) / math.sqrt(2 * (n - 1))
    most = math.sqrt(max(hi - mean, 0) * max(mean - lo, 0) * n / (n - 1))
    if sd < least * (1 - TOLERANCE) or sd > most * (1 + TOLERANCE) + _ROUNDING * hi:
        return [f"time_s.stddev {sd} cannot be of {n} times from {lo} to {hi} with mean "
                f"{mean} (it lies within [{least:.6g}, {most:.6g}])"]
    return []


def time_problems(t, repetitions):
    """A kernel's time_s against itself and the repetitions it should count
    (None: not known): [why]. 0 < min <= median <= max is validate's."""
    if not isinstance(t, dict):
        return []
    out = []
    n, lo, mean, hi = (t.get(k) for k in ("count", "min", "mean", "max"))
    if repetitions is not None and n != repetitions:
        out.append(f"time_s.count {n}, but the run timed {repetitions} repetition(s)")
    if all(map(_number, (lo, mean, hi))) and \
            not lo * (1 - _ROUNDING) <= mean <= hi * (1 + _ROUNDING):
        out.append(f"time_s.mean {mean} not within min {lo} and max {hi}")
    elif "stddev" in t:
        out += _spread_problems(t)
    return out


def _repetitions(doc, kernel):
    """The timed executions the deck gave a kernel, or None where this
    document does not say (a reference program's runs: its own --numtimes)."""
    resolved = _get(doc, "deck.resolved")
    if doc.get("app") in _MEAN_TIME_APPS:
        steps, sweeps = _get(resolved, "contact.steps"), _get(resolved, "contact.sweeps")
        if not (isinstance(steps, int) and isinstance(sweeps, int)):
            return None
        steps = max(steps, 1)  # no steps: the one at the start
        return steps * sweeps if str(kernel.get("name")).endswith(".stats") else steps
    reps = _get(resolved, "run.repetitions")
    return reps if isinstance(reps, int) and not isinstance(reps, bool) else None


# --- the figures -------------------------------------------------------------------


def _contact_work(doc):
    """contact's work over the run, all ranks (main.cpp, set_work): (pairs a
    rebuild finds, rows a sweep reads), each None where not recorded. A
    replicated run's ranks each solve a copy, a partitioned run's one mesh."""
    problem = doc.get("problem") if isinstance(doc.get("problem"), dict) else {}
    ranks = _get(doc, "mpi.ranks")
    copies = 1 if _get(problem, "decomposition.mode") == "partitioned" else ranks
    steps = _repetitions(doc, {"name": "build"})
    pairs, elements = problem.get("pairs_all_steps_per_rank"), problem.get("elements")
    if not (_number(copies) and steps):
        return None, None
    return (pairs * copies / steps if _number(pairs) else None,
            elements * copies if _number(elements) else None)


def _fom(doc, k, time, seconds):
    """(fom.value as the harness computes it, from what) or (None, why not)."""
    units = _get(k, "fom.units")
    if units == "GB/s":
        return _rate(k.get("bytes"), seconds, 1e-9), f"bytes / {time}"
    if units == "GFLOP/s":
        return _rate(k.get("flops"), seconds, 1e-9), f"flops / {time}"
    if units == "Melements/s" and doc.get("app") == "hexgrad":
        n = _get(doc, "problem.elements_global")
        return (_rate(n, seconds, 1e-6), f"problem.elements_global / {time}") if \
            _number(n) else (None, "problem.elements_global missing")
    if units == "pairs/s" and doc.get("app") == "contact":
        pairs = _contact_work(doc)[0]
        return (_rate(pairs, seconds), "pairs per rebuild (problem.pairs_all_steps_per_rank, "
                f"all ranks, over the deck's steps) / {time}") if pairs is not None else \
            (None, "problem.pairs_all_steps_per_rank, mpi.ranks or the deck's steps missing")
    return None, f"fom.units {units!r}: not a figure karma-{doc.get('app')} computes"


def _rates(doc, k, t, mean_time):
    """The harness's best, median and worst rates [(field, value, from what)]:
    none of work that changes between executions."""
    if mean_time:
        return []
    # A reference program gives no median: its rates are at the mean.
    middle = "mean" if validate.is_reference(doc) else "median"
    out = []
    for field, work, stats in (("bandwidth_GBps", "bytes", ("min", middle, "max")),
                               ("GFLOPs", "flops", ("min", middle))):
        for stat, time in zip(("best", "median", "worst"), stats):
            out.append((f"{field}.{stat}", _rate(k.get(work), t.get(time), 1e-9),
                        f"{work} / time_s.{time}"))
    if doc.get("app") == "hexgrad" and _number(_get(doc, "problem.elements_global")):
        n = _get(doc, "problem.elements_global")
        out += [("elements_per_second.best", _rate(n, t["min"]), "elements / time_s.min"),
                ("elements_per_second.median", _rate(n, t["median"]),
                 "elements / time_s.median"),
                ("time_per_launch_us.min", t["min"] * 1e6, "time_s.min"),
                ("time_per_launch_us.median", t["median"] * 1e6, "time_s.median")]
    return out


def _contact_figures(doc, k, kernels):
    """contact's figures besides the harness's (contact_report.hpp)."""
    name, mean = str(k.get("name")), k["time_s"]["mean"]
    storage, _, part = name.rpartition(".")
    means = {str(j.get("name")): _get(j, "time_s.mean") for j in kernels}
    out = []
    other = means.get(f"linked-list.{part}")
    if _number(other):
        out.append(("speedup_vs_linked_list", _rate(other, mean),
                    f"linked-list.{part}'s time_s.mean / time_s.mean"))
    if part == "build":
        out.append(("rebuild_s_mean", mean, "time_s.mean"))
        stats, sweeps = means.get(f"{storage}.stats"), _get(doc, "deck.resolved.contact.sweeps")
        whole = means.get(f"{storage}.step")
        if _number(whole):  # the step run and timed as one (contact.step_timing: whole)
            out.append(("step_s_mean", whole, f"{storage}.step's time_s.mean"))
        elif _number(stats) and _number(sweeps):
            out.append(("step_s_mean", mean + sweeps * stats,
                        f"time_s.mean + sweeps x {storage}.stats's time_s.mean"))
    elif part == "stats":
        out.append(("time_per_sweep_s", mean, "time_s.mean"))
        rows = _contact_work(doc)[1]
        if rows is not None:
            out.append(("rows_per_s", _rate(rows, mean), "problem.elements (all ranks) / "
                        "time_s.mean"))
    return out


def _peaks(doc):
    """The devices' peaks summed, each device once (app.cpp, kernels_json):
    (GB/s or None, GFLOP/s at problem.precision or None)."""
    seen, bandwidth, flops = set(), [], []
    precision = _get(doc, "problem.precision")
    for r in doc.get("ranks") or []:
        d = r.get("device") if isinstance(r, dict) else None
        if not isinstance(d, dict) or (r.get("host"), d.get("pci_bus_id", "")) in seen:
            continue
        seen.add((r.get("host"), d.get("pci_bus_id", "")))
        bandwidth.append(d.get("peak_memory_bandwidth_GBps"))
        flops.append(_get(d, f"peak_GFLOPs.{precision}") if isinstance(precision, str)
                     else None)
    total = lambda v: sum(v) if v and all(map(_number, v)) else None  # noqa: E731
    return total(bandwidth), total(flops)


def _efficiency(doc, k):
    """The kernel's fractions of the devices' peaks."""
    bandwidth, flops = _peaks(doc)
    # The harness's best bandwidth, else a figure of merit in GB/s.
    gbps, what = _get(k, "bandwidth_GBps.best"), "bandwidth_GBps.best"
    if not _number(gbps) and _get(k, "fom.units") == "GB/s":
        gbps, what = _get(k, "fom.value"), "fom.value"
    out = []
    if bandwidth is not None:
        out.append(("efficiency.peak_bandwidth_GBps", bandwidth,
                    "the ranks' devices' peak_memory_bandwidth_GBps"))
        if _number(gbps):
            out.append(("efficiency.fraction_of_peak_bandwidth", gbps / bandwidth,
                        f"{what} / the devices' peak"))
    if flops is not None:
        out.append(("efficiency.peak_GFLOPs", flops, "the ranks' devices' peak_GFLOPs"))
        if _number(_get(k, "GFLOPs.best")):
            out.append(("efficiency.fraction_of_peak_flops", _get(k, "GFLOPs.best") / flops,
                        "GFLOPs.best / the devices' peak"))
    return out


def _energy(k):
    """A measured window's figures from its average power (the power itself
    is the counters', which the result does not record)."""
    watts = _get(k, "energy.average_power_W")
    if not _number(watts) or watts <= 0:
        return []
    return [("energy.joules_per_execution", watts * k["time_s"]["median"],
             "energy.average_power_W x time_s.median"),
            ("energy.fom_per_watt.value", k["fom"]["value"] / watts,
             "fom.value / energy.average_power_W")]


def kernel_problems(doc, k, kernels):
    """One kernel's figures against their inputs: [why]."""
    t = k["time_s"]
    mean_time = doc.get("app") in _MEAN_TIME_APPS and not validate.is_reference(doc)
    time = "time_s.mean" if mean_time else "time_s.min"
    want, how = _fom(doc, k, time, t.get(time.split(".")[1]))
    out = []
    if want is None:
        out.append(f"fom.value cannot be derived again: {how}")
        derived = []
    else:
        derived = [("fom.value", want, how)]
    if _get(k, "fom.higher_is_better") is not True:
        out.append("fom.higher_is_better: a rate is higher-is-better")
    derived += _rates(doc, k, t, mean_time)
    if mean_time:
        derived += _contact_figures(doc, k, kernels)
    derived += _efficiency(doc, k) + _energy(k)
    for field, value, how in derived:
        found = _get(k, field)
        if _number(found) and _number(value) and not _close(found, value):
            out.append(f"{field} {found:.7g}, but {how} gives {value:.7g}")
    repetitions = None if validate.is_reference(doc) else _repetitions(doc, k)
    return out + time_problems(t, repetitions)


def problems(doc):
    """Every kernel's figures and times against their inputs, for a document
    the results schema accepts: ['kernels[i] (name): why']."""
    kernels = doc.get("kernels") or []
    out = []
    for i, k in enumerate(kernels):
        out += [f"kernels[{i}] ({k.get('name')}): {why}" for why in
                kernel_problems(doc, k, kernels)]
    return out
