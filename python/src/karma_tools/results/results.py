"""Reading karma results (docs/results-format.md, schema_version 1 and 2)."""

import functools
import math
import os

from karma_tools.core import ToolError, describe
from karma_tools import schemas
from karma_tools.results import kerneltable


def is_number(value):
    """A finite JSON number (not a boolean) that fits a float."""
    try:
        return kerneltable.json_number(value) and math.isfinite(value)
    except OverflowError:
        return False


def field(node, dotted):
    """node's value at a dotted path (`deck.resolved.run.repetitions`), or None."""
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def flatten(value, prefix=""):
    """{'prefix.key...': leaf} of nested dicts."""
    if not isinstance(value, dict):
        return {prefix: value}
    return {key: leaf for k, v in value.items()
            for key, leaf in flatten(v, f"{prefix}.{k}" if prefix else k).items()}


def _beyond_float(value, path=()):
    """(path, value) of each integer in value too large for a float."""
    if isinstance(value, (dict, list)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return [found for k, v in items for found in _beyond_float(v, path + (k,))]
    return [(path, value)] if isinstance(value, int) and not isinstance(value, bool) \
        and not is_number(value) else []


def _read_problems(doc):
    """What the tools need beyond the schema: kernels' unique names, foms, float-size numbers."""
    kernels = doc.get("kernels") if isinstance(doc.get("kernels"), list) else []
    kernels = [k if isinstance(k, dict) else {} for k in kernels]
    out = [f"kernels[{i}].{key}: missing" for i, k in enumerate(kernels)
           for key in ("name", "fom") if key not in k]
    names = [k.get("name") for k in kernels]
    out += [f"kernels[{i}].name: empty" if name == "" else
            f"kernels[{i}].name: '{name}' is also an earlier kernel's name"
            for i, name in enumerate(names)
            if isinstance(name, str) and (name == "" or name in names[:i])]
    return out + [f"{schemas.dotted(path)}: {describe(value)} is out of range"
                  for path, value in _beyond_float(doc)]


def check_schema(path, doc):
    """The document against the results schema, requiring only what the tools read."""
    problems = schemas.problems(_lenient(), doc) + _read_problems(doc)
    if problems:
        raise ToolError(f"{path}: {problems[0]}; not a well-formed karma results document "
                        "(karma_tools/schemas/results.schema.json)", 2)


@functools.lru_cache(maxsize=None)
def _lenient():
    strict = schemas.load("results.schema.json")
    return type(strict)(schemas.lenient(strict.schema))


class Run:
    """One karma results document."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.app = doc["app"]
        deck = doc.get("deck") or {}
        self.deck_stem = os.path.splitext(os.path.basename(deck.get("path", "")))[0] or "deck"
        self.resolved = deck.get("resolved") or {}
        self.problem = doc.get("problem") or {}
        mpi = doc["mpi"]  # its fields' types checked (resultset._check), not their presence
        self.ranks = int(mpi.get("ranks", 1))
        self.nodes = int(mpi.get("nodes", 1))
        self.comm_path = mpi.get("comm", {}).get("path", "")  # device data between ranks
        self.passed = doc["result"] == "PASSED" and doc.get("verification", {}).get("passed", True)
        kokkos = doc.get("kokkos") or {}
        self.backend = kokkos.get("default_execution_space", "?")
        self.kokkos_version = kokkos.get("version") or "?"
        device = (doc.get("ranks") or [{}])[0].get("device") or {}
        self.device = device.get("name") or "?"
        reference = doc.get("reference", {})
        self.reference = reference.get("format")  # of a reference program's output
        # gpu or host: a node's host CPU runs and its GPU runs are different cases.
        self.device_kind = (reference.get("device") if self.reference else device.get("kind")) or ""
        self.kernels = {}
        for k in doc["kernels"]:
            implementation, variant = kernel_identity(self, k)
            fom = k["fom"]
            self.kernels[k["name"]] = {
                "implementation": implementation, "variant": variant, "entry": k,
                "value": fom.get("value"), "units": fom.get("units", ""),
                "higher_is_better": fom.get("higher_is_better", True),
                "energy": kernel_energy(k), "efficiency": kernel_efficiency(k)}

    def deck_values(self, include_run=False):
        """The resolved deck as {'stream.shape': [..], ...}, the run section only if asked."""
        return {k: v for k, v in flatten(self.resolved).items()
                if include_run or not k.startswith("run.")}


def kernel_energy(kernel):
    """A kernel's energy figures, None unless "measured" with a power."""
    energy = kernel.get("energy", {})
    if energy.get("status") != "measured" or "average_power_W" not in energy:
        return None
    per_watt = energy.get("fom_per_watt", {})
    return {"average_power_W": energy["average_power_W"],
            "joules_per_execution": energy.get("joules_per_execution"),
            "fom_per_watt": per_watt.get("value"), "fom_per_watt_units": per_watt.get("units", "")}


def kernel_efficiency(kernel):
    """The known ones of a kernel's fraction_of_peak_bandwidth and _flops, as a dict."""
    efficiency = kernel.get("efficiency", {})
    return {k: efficiency[k] for k in ("fraction_of_peak_bandwidth", "fraction_of_peak_flops")
            if k in efficiency and efficiency[k] >= 0}


def kernel_identity(run, kernel):
    """(implementation, variant) of a kernel entry: schema 2 records them; for 1 the
    implementation is the deck's `<app>.implementation` if one string, else the kernel
    table's (kokkos, else its first), the variant the table's if one, else the name."""
    name = kernel["name"]
    implementation, variant = kernel.get("implementation"), kernel.get("variant")
    if implementation and variant:
        return implementation, variant  # schema 2: no table to look up
    declared = kerneltable.of(run.doc).declared.get(name) or []
    if not implementation:
        section = run.resolved.get(run.app)
        from_deck = section.get("implementation") if isinstance(section, dict) else None
        listed = [i for k in declared for i in k["implementation"]]
        implementation = from_deck if isinstance(from_deck, str) and from_deck else \
            "kokkos" if "kokkos" in listed or not listed else listed[0]
    if not variant:
        variants = {k["variant"] for k in declared}
        variant = variants.pop() if len(variants) == 1 else name
    return implementation, variant


def format_value(value):
    """A FOM for a table: 4 significant digits, no exponent for usual sizes."""
    if value is None or value == 0:
        return "-" if value is None else "0"
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def format_size(value):
    """Lists of integers with powers of two as 2^k: [268435456] -> [2^28]."""
    def one(v):
        if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v & (v - 1) == 0:
            return f"2^{v.bit_length() - 1}"
        return str(v)

    if isinstance(value, list):
        return "[" + ",".join(one(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return one(value)


# Clock-event causes (device.state_at_*) that mean the unit, not the work, held the clocks.
UNIT_HELD_BACK = ("power", "thermal")
# A cause's share of the run below which it is noise, not a held-back run.
UNIT_SHARE = 0.01


def gpu_units(runs, captured=None):
    """{uuid: {model, driver_version, board_part_number, ..., ends_recorded}} of the runs'
    GPUs; captured(run): {uuid: {board_part_number, vbios_version}} the results lack."""
    out = {}
    for run in runs:
        for device in (d for _, d in gpu_devices(run.doc) if d.get("uuid")):
            state = device.get("state_at_start") or {}
            unit = out.setdefault(device["uuid"], {
                "model": device.get("name"), "driver_version": device.get("driver_version"),
                **{k: state.get(k) for k in ("board_part_number", "vbios_version",
                                             "power_limit_W", "persistence_mode",
                                             "ecc_enabled")}, "ends_recorded": 0})
            if unit["board_part_number"] is None and captured:
                unit.update(captured(run).get(device["uuid"]) or {})
            unit["ends_recorded"] += "state_at_end" in device
    return out


def gpu_devices(doc):
    """[(host, device)] of the result's ranks that ran on a GPU."""
    return [(r.get("host"), r["device"]) for r in doc.get("ranks") or []
            if isinstance(r, dict) and isinstance(r.get("device"), dict)
            and r["device"].get("kind") == "gpu"]


def _growth(start, end, group, key):
    """What a counter (state[group][key]) grew by over the run; 0 unless both ends have it."""
    before, after = (start.get(group) or {}).get(key), (end.get(group) or {}).get(key)
    return after - before if before is not None and after is not None else 0


def unit_events(run):
    """[why] a run's units held its clocks down (over UNIT_SHARE of it) or their ECC erred."""
    out, seconds = [], run.doc.get("duration_s") or 0
    for rank in run.doc.get("ranks") or []:
        device = rank.get("device") or {}
        start, end = device.get("state_at_start") or {}, device.get("state_at_end") or {}
        who = f"rank {rank.get('rank', '?')} ({device.get('uuid', '?')})"
        for cause in UNIT_HELD_BACK:
            held = _growth(start, end, "clocks_event_ns", cause) * 1e-9
            if seconds and held > UNIT_SHARE * seconds:
                out.append(f"{who}: {cause} held the clocks down {held:.1f} s of {seconds:.0f}")
        for kind in ("corrected", "uncorrected"):
            grew = _growth(start, end, "ecc_errors", kind)
            if grew > 0:
                out.append(f"{who}: {grew} {kind} ECC error(s) during the run")
    return out
