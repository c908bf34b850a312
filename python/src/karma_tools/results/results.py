"""Reading karma results (docs/results-format.md, schema_version 1 and 2)
from files and directories.

schema_version 2 adds to every kernel its `implementation` (kokkos,
native-cuda, cublas, cblas, ...) and `variant` (copy, row-per-thread,
linked-list, ...). For schema_version 1 they are read from the result's
kernel table (kerneltable.py; kernel_identity): the implementation is the
deck's `<app>.implementation` when that is one string, else the table's for
that name (its first where it lists several); the variant the table's where
all its entries of that name agree, else the name."""

import math
import os

from karma_tools.core import ToolError, describe
from karma_tools import schemas
from karma_tools.results import kerneltable

SCHEMA_VERSION = 2
SCHEMA_VERSIONS = (1, 2)
# Counts fit a C int, as in the mini-apps.
_COUNT_MAX = 2**31 - 1


def is_number(value):
    """A finite JSON number (not a boolean) that fits a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


class _Fields:
    """The fields of one document the tools read, each checked for its type
    before use; a mistake names the file and the key."""

    def __init__(self, path):
        self.path = path

    def fail(self, key, message):
        raise ToolError(f"{self.path}: {key}: {message}; not a well-formed karma results "
                        "document (docs/results-format.md)", 2)

    def get(self, parent, key, where, kinds, what, required=False, null=False):
        """parent[key] when it is one of `kinds` (None when absent, or null
        and `null`); else the problem, named `where`."""
        if key not in parent:
            if required:
                self.fail(where, "missing")
            return None
        value = parent[key]
        if value is None and null:
            return None
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            self.fail(where, f"expected {what}, got {describe(value)}")
        return value

    def obj(self, parent, key, where, required=False):
        return self.get(parent, key, where, dict, "an object", required)

    def string(self, parent, key, where, required=False):
        value = self.get(parent, key, where, str, "a string", required)
        if required and value == "":
            self.fail(where, "empty")
        return value

    def count(self, parent, key, where):
        value = self.get(parent, key, where, int, "an integer")
        if value is not None and not 1 <= value <= _COUNT_MAX:
            self.fail(where, f"{value} is not in [1, {_COUNT_MAX}]")
        return value

    def number(self, parent, key, where, positive=False):
        """A finite number, or null (how the mini-apps write NaN)."""
        value = self.get(parent, key, where, (int, float), "a number or null", null=True)
        if value is None:
            return None
        if not is_number(value):
            self.fail(where, f"{describe(value)} is out of range")
        if positive and value <= 0:
            self.fail(where, f"must be > 0, got {value}")
        return value


def check_run(path, doc):
    """Refuses (ToolError, exit 2) a document whose fields the tools read
    have the wrong types: `fom.value` a string, `kernels` null, a list
    where an object belongs, ..."""
    f = _Fields(path)
    f.string(doc, "app", "app", required=True)
    deck = f.obj(doc, "deck", "deck")
    if deck is not None:
        f.string(deck, "path", "deck.path")
        f.obj(deck, "resolved", "deck.resolved")
    f.obj(doc, "problem", "problem")
    mpi = f.obj(doc, "mpi", "mpi", required=True)
    f.count(mpi, "ranks", "mpi.ranks")
    f.count(mpi, "nodes", "mpi.nodes")
    f.string(doc, "result", "result", required=True)
    verification = f.obj(doc, "verification", "verification")
    if verification is not None:
        f.get(verification, "passed", "verification.passed", bool, "true or false")
    kokkos = f.obj(doc, "kokkos", "kokkos")
    if kokkos is not None:
        f.string(kokkos, "default_execution_space", "kokkos.default_execution_space")
        concurrency = f.get(kokkos, "concurrency", "kokkos.concurrency", int, "an integer",
                            null=True)
        if concurrency is not None and not 0 <= concurrency <= _COUNT_MAX:
            f.fail("kokkos.concurrency", f"{concurrency} is not in [0, {_COUNT_MAX}]")
    ranks = f.get(doc, "ranks", "ranks", list, "a list of ranks")
    if ranks:
        if not isinstance(ranks[0], dict):
            f.fail("ranks[0]", f"expected an object, got {describe(ranks[0])}")
        device = f.obj(ranks[0], "device", "ranks[0].device")
        if device is not None:
            f.string(device, "name", "ranks[0].device.name")
    kernels = f.get(doc, "kernels", "kernels", list, "a list of kernels", required=True)
    if not kernels:
        f.fail("kernels", "empty: the run timed nothing")
    names = set()
    for i, k in enumerate(kernels):
        where = f"kernels[{i}]"
        if not isinstance(k, dict):
            f.fail(where, f"expected an object, got {describe(k)}")
        name = f.string(k, "name", f"{where}.name", required=True)
        if name in names:
            f.fail(f"{where}.name", f"'{name}' is also an earlier kernel's name")
        names.add(name)
        f.string(k, "implementation", f"{where}.implementation")
        f.string(k, "variant", f"{where}.variant")
        fom = f.obj(k, "fom", f"{where}.fom", required=True)
        f.number(fom, "value", f"{where}.fom.value", positive=True)
        f.string(fom, "units", f"{where}.fom.units")
        f.get(fom, "higher_is_better", f"{where}.fom.higher_is_better", bool, "true or false")
        f.number(k, "bytes", f"{where}.bytes")
        time_s = f.obj(k, "time_s", f"{where}.time_s")
        if time_s is not None:
            f.number(time_s, "min", f"{where}.time_s.min")


_LENIENT = []


def check_schema(path, doc):
    """The document against karma_tools/schemas/results.schema.json, requiring nothing
    (check_run has required what the tools read): every field present must
    have its type and range. A reference result, another program's figures,
    is checked the same way against the schema's reference form."""
    if not _LENIENT:
        import jsonschema

        strict = schemas.load("results.schema.json")
        _LENIENT.append(jsonschema.Draft202012Validator(schemas.lenient(strict.schema)))
    problems = schemas.problems(_LENIENT[0], doc)
    if problems:
        raise ToolError(f"{path}: {problems[0]}; not a well-formed karma results document "
                        "(karma_tools/schemas/results.schema.json)", 2)


class Run:
    """One karma results document."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.app = doc["app"]
        deck = doc.get("deck") or {}
        self.deck_path = deck.get("path", "")
        self.deck_stem = os.path.splitext(os.path.basename(self.deck_path))[0] or "deck"
        self.resolved = deck.get("resolved") or {}
        self.problem = doc.get("problem") or {}
        mpi = doc.get("mpi") or {}
        self.ranks = int(mpi.get("ranks") or 1)
        self.nodes = int(mpi.get("nodes") or 1)
        # The path of device data between ranks; "" where not recorded.
        self.comm_path = mpi["comm"].get("path", "") \
            if isinstance(mpi.get("comm"), dict) else ""
        self.passed = doc.get("result") == "PASSED" and \
            bool((doc.get("verification") or {}).get("passed", True))
        kokkos = doc.get("kokkos") or {}
        self.backend = kokkos.get("default_execution_space", "?")
        self.kokkos_version = kokkos.get("version") or "?"
        ranks = doc.get("ranks") or [{}]
        device = (ranks[0] or {}).get("device") or {}
        self.device = device.get("name") or "?"
        self.schema_version = doc.get("schema_version")
        # Results read from a reference program's output (reference.py).
        reference = doc.get("reference") if isinstance(doc.get("reference"), dict) else {}
        self.reference = reference.get("format")
        # gpu or host: what the kernels ran on (a node's host CPU runs and its
        # GPU runs are different cases); "" where the results do not say.
        self.device_kind = reference.get("device") if self.reference else device.get("kind")
        if self.device_kind not in ("gpu", "host"):
            self.device_kind = ""
        self.kernels = {}
        for k in doc.get("kernels") or []:
            fom = k.get("fom") or {}
            implementation, variant = kernel_identity(self, k)
            self.kernels[k["name"]] = {
                "implementation": implementation,
                "variant": variant,
                "entry": k,
                "value": fom.get("value"),
                "units": fom.get("units", ""),
                "higher_is_better": bool(fom.get("higher_is_better", True)),
                "bytes": k.get("bytes"),
                "time_min": (k.get("time_s") or {}).get("min"),
                "energy": kernel_energy(k),
                "efficiency": kernel_efficiency(k),
            }

    def deck_values(self, include_run=False):
        """The resolved deck flattened to {'stream.shape': [..], ...};
        without the run section (repetitions, results_dir) unless asked."""
        flat = {}

        def walk(prefix, value):
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else k, v)
            else:
                flat[prefix] = value

        walk("", self.resolved)
        if not include_run:
            flat = {k: v for k, v in flat.items() if not k.startswith("run.")}
        return flat

    def precision(self):
        p = self.problem.get("precision")
        if p:
            return p
        for k, v in self.deck_values().items():
            if k.endswith(".precision"):
                return v
        return None


def kernel_energy(kernel):
    """A kernel entry's measured energy figures: {average_power_W,
    joules_per_execution, fom_per_watt, fom_per_watt_units}, or None unless
    its energy.status is "measured" with a positive power. Read leniently:
    energy is optional (results before it have none) and a malformed figure
    only goes missing, as an unmeasured one does."""
    energy = kernel.get("energy")
    if not isinstance(energy, dict) or energy.get("status") != "measured":
        return None
    per_watt = energy.get("fom_per_watt")
    per_watt = per_watt if isinstance(per_watt, dict) else {}
    out = {"average_power_W": energy.get("average_power_W"),
           "joules_per_execution": energy.get("joules_per_execution"),
           "fom_per_watt": per_watt.get("value")}
    out = {k: v if is_number(v) and v > 0 else None for k, v in out.items()}
    if out["average_power_W"] is None:
        return None
    units = per_watt.get("units")
    out["fom_per_watt_units"] = units if isinstance(units, str) else ""
    return out


def kernel_efficiency(kernel):
    """{fraction_of_peak_bandwidth, fraction_of_peak_flops}: those of a
    kernel entry's efficiency that are known (an empty dict when none)."""
    efficiency = kernel.get("efficiency")
    if not isinstance(efficiency, dict):
        return {}
    return {k: efficiency[k] for k in ("fraction_of_peak_bandwidth", "fraction_of_peak_flops")
            if is_number(efficiency.get(k)) and efficiency[k] >= 0}


def kernel_identity(run, kernel):
    """(implementation, variant) of a kernel entry: its own fields
    (schema_version 2), else as the module's docstring says."""
    name = kernel.get("name", "")
    implementation = kernel.get("implementation")
    variant = kernel.get("variant")
    declared = kerneltable.of(run.doc).declared.get(name) or []
    if not isinstance(implementation, str) or not implementation:
        section = run.resolved.get(run.app)
        from_deck = section.get("implementation") if isinstance(section, dict) else None
        listed = [i for k in declared for i in k["implementation"]]
        implementation = from_deck if isinstance(from_deck, str) and from_deck else \
            "kokkos" if "kokkos" in listed or not listed else listed[0]
    if not isinstance(variant, str) or not variant:
        variants = {k["variant"] for k in declared}
        variant = variants.pop() if len(variants) == 1 else name
    return implementation, variant


def format_value(value):
    """A FOM for a table: 4 significant digits, no exponent for usual sizes."""
    if value is None:
        return "-"
    a = abs(value)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{value:.0f}"
    if a >= 1:
        return f"{value:.4g}"
    return f"{value:.4g}"


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
