"""The figures a results document derives from its own record, derived again (rates from
work and time, efficiencies from the devices' peaks, energy from the power; how, its kernel
table entry says) and held to agree within TOLERANCE, the time statistics with each other:
karma-bundle check finds a figure edited without its inputs."""

import math

from karma_tools.core import ToolError
from karma_tools.results import kerneltable, validate
from karma_tools.results.results import field as _get, is_number as _number

# Figures are printed from doubles in full, so one derived again differs by rounding
# alone: 0.1% is far below any change that would move a score, far above rounding.
TOLERANCE = 1e-3
# Sums of many times (a mean) may round past their bounds by a few ulps.
_ROUNDING = 1e-9
# A count rate's units: its count's name after a decimal prefix, per second.
_PREFIXES = {"": 1.0, "k": 1e-3, "M": 1e-6, "G": 1e-9, "T": 1e-12}


def _rate(amount, seconds, scale=1.0):
    """amount / seconds as the harness computes it (0 without time); None for a non-number."""
    if not (_number(amount) and _number(seconds)):
        return None
    return amount / seconds * scale if seconds > 0 else 0.0


def time_problems(t, repetitions):
    """[why] of a kernel's time_s against itself and its repetitions (None: not known)."""
    n, lo, mean, hi, sd = (t.get(k) for k in ("count", "min", "mean", "max", "stddev"))
    out = [] if repetitions in (None, n) else \
        [f"time_s.count {n}, but the run timed {repetitions} repetition(s)"]
    if not lo * (1 - _ROUNDING) <= mean <= hi * (1 + _ROUNDING):
        return out + [f"time_s.mean {mean} not within min {lo} and max {hi}"]
    if sd is None:
        return out
    if sd < 0:
        return out + [f"time_s.stddev {sd} < 0"]
    if n == 1:
        return out + ([] if lo == hi and sd == 0 else
                      [f"time_s: one repetition, but min {lo}, max {hi}, stddev {sd}"])
    # The sample stddev's bounds, the upper one Bhatia-Davis's.
    least = (hi - lo) / math.sqrt(2 * (n - 1))
    most = math.sqrt(max(hi - mean, 0) * max(mean - lo, 0) * n / (n - 1))
    if sd < least * (1 - TOLERANCE) or sd > most * (1 + TOLERANCE) + _ROUNDING * hi:
        out.append(f"time_s.stddev {sd} cannot be of {n} times from {lo} to {hi} with mean "
                   f"{mean} (it lies within [{least:.6g}, {most:.6g}])")
    return out


def _fom(doc, k, entry, time, seconds):
    """(fom.value as the harness computes it, from what), (None, why not), or (None, None)."""
    units, per = _get(k, "fom.units"), entry.get("per")
    if units != entry.get("units"):
        return None, (f"fom.units {units!r}: not the figure its kernel table gives "
                      f"({entry.get('units')!r})")
    if per in ("bytes", "flops"):
        scale = 1e-9 if units in ("GB/s", "GFLOP/s") else 1.0
        return _rate(k.get(per), seconds, scale), f"{per} / {time}"
    # A count rate: items per execution (fom.count, else the table's), per second.
    prefix = str(units)[:-len(f"{per}/s")] if str(units).endswith(f"{per}/s") else None
    count = _get(k, "fom.count")
    source = "fom.count" if _number(count) else entry.get("count")
    if prefix in _PREFIXES and not _number(count) and source:
        count = kerneltable.evaluate(source, doc, k)
    if prefix not in _PREFIXES or not _number(count):
        return None, None
    return _rate(count, seconds, _PREFIXES[prefix]), f"{source} / {time}"


def _rates(doc, k, t, mean_time):
    """The harness's best, median and worst rates [(field, value, from what)], if any."""
    if mean_time:
        return []
    # A reference program gives no median: its rates are at the mean.
    middle = "mean" if validate.is_reference(doc) else "median"
    return [(f"{field}.{stat}", _rate(k.get(work), t.get(time), 1e-9), f"{work} / time_s.{time}")
            for field, work, stats in (("bandwidth_GBps", "bytes", ("min", middle, "max")),
                                       ("GFLOPs", "flops", ("min", middle)))
            for stat, time in zip(("best", "median", "worst"), stats)]


def _efficiency(doc, k):
    """The kernel's fractions of its devices' peaks (each device once)."""
    devices = {}
    for r in doc.get("ranks", []):
        if "device" in r:
            devices.setdefault((r.get("host"), r["device"].get("pci_bus_id", "")), r["device"])
    precision = _get(doc, "problem.precision")
    bandwidth, flops = (sum(v) if v and all(map(_number, v)) else None for v in (
        [d.get("peak_memory_bandwidth_GBps") for d in devices.values()],
        [_get(d, f"peak_GFLOPs.{precision}") if isinstance(precision, str) else None
         for d in devices.values()]))
    # The harness's best bandwidth, else a figure of merit in GB/s.
    gbps, what = _get(k, "bandwidth_GBps.best"), "bandwidth_GBps.best"
    if not _number(gbps) and _get(k, "fom.units") == "GB/s":
        gbps, what = _get(k, "fom.value"), "fom.value"
    return [("efficiency.peak_bandwidth_GBps", bandwidth,
             "the ranks' devices' peak_memory_bandwidth_GBps"),
            ("efficiency.fraction_of_peak_bandwidth", _ratio(gbps, bandwidth),
             f"{what} / the devices' peak"),
            ("efficiency.peak_GFLOPs", flops, "the ranks' devices' peak_GFLOPs"),
            ("efficiency.fraction_of_peak_flops", _ratio(_get(k, "GFLOPs.best"), flops),
             "GFLOPs.best / the devices' peak")]


def _ratio(a, b):
    return a / b if _number(a) and _number(b) and b != 0 else None


def kernel_problems(doc, k, table):
    """One kernel's figures against their inputs: [why]."""
    t = k["time_s"]
    entry = table.entry(str(k.get("name")))
    if not entry:
        return [f"not in the kernel table of karma-{doc.get('app')}"]
    mean_time = entry.get("time") == "mean" and not validate.is_reference(doc)
    time = "time_s.mean" if mean_time else "time_s.min"
    want, how = _fom(doc, k, entry, time, t.get(time.split(".")[1]))
    out = [f"fom.value cannot be derived again: {how}"] if want is None and how else []
    if _get(k, "fom.higher_is_better") is not True:
        out.append("fom.higher_is_better: a rate is higher-is-better")
    further = [(field, kerneltable.evaluate(how, doc, k), how)  # the entry's figures
               for field, how in sorted((entry.get("figures") or {}).items())]
    watts = _get(k, "energy.average_power_W")  # a measured window's figures from it
    energy = [] if watts is None else [
        ("energy.joules_per_execution", watts * t["median"],
         "energy.average_power_W x time_s.median"),
        ("energy.fom_per_watt.value", k["fom"]["value"] / watts,
         "fom.value / energy.average_power_W")]
    derived = [("fom.value", want, how)] + _rates(doc, k, t, mean_time) + further + \
        _efficiency(doc, k) + energy
    for field, value, how in derived:  # a value None: not derived
        found = _get(k, field)
        if _number(found) and _number(value) and \
                abs(found - value) > TOLERANCE * max(abs(found), abs(value)):
            out.append(f"{field} {found:.7g}, but {how} gives {value:.7g}")
    # The timed executions the deck gave the kernel, where the document says.
    how = entry.get("repetitions") or (None if mean_time else "deck.resolved.run.repetitions")
    reps = None if validate.is_reference(doc) or not how else kerneltable.evaluate(how, doc, k)
    return out + time_problems(t, reps if type(reps) is int else None)


def problems(doc):
    """['kernels[i] (name): why'] of a schema-valid document's figures and times."""
    table = kerneltable.of(doc)
    out = []
    for i, k in enumerate(doc["kernels"]):
        try:
            whys = kernel_problems(doc, k, table)
        except ToolError as e:  # an expression outside the tables' grammar
            whys = [str(e)]
        except OverflowError:  # JSON's integers have no bound, floats have
            whys = ["a figure past a float's range"]
        out += [f"kernels[{i}] ({k.get('name')}): {why}" for why in whys]
    return out
