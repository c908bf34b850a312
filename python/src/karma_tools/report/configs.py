"""karma-report's configurations (runs of one case, device, ranks, nodes, threads), their labels."""

import re
import statistics

from karma_tools.compare.compare import Group
from karma_tools.results.cases import case_key, case_values, values_key
from karma_tools.results.results import format_size, is_number


class Config(Group):
    """Runs with the same deck values, device and ranks: one row of a table."""

    def __init__(self, app, values, device, ranks, nodes, concurrency):
        super().__init__(None, app, values)
        self.device, self.ranks, self.nodes, self.concurrency = device, ranks, nodes, concurrency

    def best_result(self, kernel, measured=False):
        """The kernel's result of the best run (of those that measured energy), or None."""
        found = [k for k in (r.kernels.get(kernel) for r in self.runs)
                 if k and k["value"] is not None and (k["energy"] or not measured)]
        if not found:
            return None
        return (max if found[0]["higher_is_better"] else min)(found, key=lambda k: k["value"])

    def best(self, kernel):
        """(value, units, higher_is_better) of the best run for kernel."""
        k = self.best_result(kernel)
        return (k["value"], k["units"], k["higher_is_better"]) if k else (None, "", True)

    def footprint(self):
        found = [r.problem.get("footprint_bytes_per_rank") for r in self.runs]
        return next((f for f in found if is_number(f)), None)

    @property
    def kind(self):
        """"gpu", "host" or "" (not recorded): where the runs ran."""
        return statistics.mode(sorted(r.device_kind for r in self.runs))


def configs_of(runs):
    out = {}
    for r in runs:
        values = case_values(r)
        # Threads per rank (host) or resident threads (GPU) make another one.
        concurrency = (r.doc.get("kokkos") or {}).get("concurrency")
        key = case_key(r.app, values, r.device, r.ranks, r.nodes, concurrency)
        out.setdefault(key, Config(r.app, values, r.device, r.ranks, r.nodes,
                                   concurrency)).runs.append(r)

    def order(c):
        sizes = [v if isinstance(v, list) else [v] for _, v in sorted(c.values.items())
                 if is_size(v)]
        return (c.app, c.stem, c.device, values_without(c.values, lambda k, v: is_size(v)), sizes,
                c.ranks, c.concurrency or 0)

    return sorted(out.values(), key=order)


def kernels_of(configs):
    """The kernels of configurations, in the order first met."""
    return list(dict.fromkeys(k for c in configs for k in c.kernels()))


def format_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.4g} {unit}"
        n /= 1024.0


def is_size(v):
    return (isinstance(v, int) and not isinstance(v, bool)) or \
        (isinstance(v, list) and v and all(isinstance(x, int) for x in v))


def values_without(values, drop):
    return values_key({k: v for k, v in values.items() if not drop(k, v)})


def varying_keys(configs):
    keys = sorted({k for c in configs for k in c.values})
    return [k for k in keys if len({values_key(c.values.get(k)) for c in configs}) > 1]


def heading_anchor(title):
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def series_label(config, keys):
    # A key the configuration has not (an older result's) is left out.
    parts = [f"{k.split('.')[-1]}={format_size(config.values[k])}" for k in keys
             if k in config.values]
    return ", ".join(parts) if parts else config.stem


def group_label(config, keys, members):
    """series_label, after the device kind where members ran on several."""
    label, several = series_label(config, keys), len({c.device for c in members}) > 1
    return f"{config.kind or config.device}: {label}" if several else label
