"""Checking karma results documents (karma-validate-results): the schema, then the rules a
schema cannot state (docs/results-format.md, section Validation)."""

import datetime
import json

from karma_tools import schemas
from karma_tools.core import describe
from karma_tools.results import kerneltable
from karma_tools.results.kerneltable import json_number as _is_number
from karma_tools.results.results import field as _get, is_number


def printable(text):
    """ASCII only: messages may quote bytes of a file."""
    return "".join(c if " " <= c < "\x7f" else
                   "".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogateescape"))
                   for c in str(text))


def _real_date(text):
    """The date's calendar: the schema's pattern has checked its form."""
    try:
        hour, minute, second = (int(p) for p in text[11:19].split(":"))
        datetime.date.fromisoformat(text[:10])
        datetime.time(hour, minute, min(second, 59))
    except ValueError:
        return False
    # A leap second is the last second of a UTC day.
    return second < 60 or second == 60 and (hour, minute) == (23, 59)


def cross_field_problems(doc, expect):
    """What a schema cannot state, on parts of the right type (the schema reports the rest)."""
    out = []
    date = _get(doc, "date")
    if isinstance(date, str) and len(date) >= 20 and not _real_date(date):
        out.append(f"date: {json.dumps(date)} is not a real UTC date and time of day")
    mpi_ranks = _get(doc, "mpi.ranks")
    ranks = mpi_ranks if type(mpi_ranks) is int else None
    for where, entries in (("ranks", _get(doc, "ranks")),
                           ("energy.ranks", _get(doc, "energy.ranks"))):
        if isinstance(entries, list) and ranks is not None and len(entries) != ranks:
            out.append(f"{where}: {len(entries)} entries for {ranks} ranks")
    for i, r in enumerate(_get(doc, "ranks") if isinstance(_get(doc, "ranks"), list) else []):
        rank = _get(r, "rank")
        if _is_number(rank) and rank != i:
            out.append(f"ranks[{i}].rank: {rank}, out of order")
    kernels = _get(doc, "kernels")
    for i, k in enumerate(kernels if isinstance(kernels, list) else []):
        t = _get(k, "time_s")
        # A reference program gives no median (BabelStream: min, max, average).
        middle = "mean" if _get(t, "median") is None else "median"
        lo, mid, hi = _get(t, "min"), _get(t, middle), _get(t, "max")
        if all(map(_is_number, (lo, mid, hi))) and not 0 < lo <= mid <= hi:
            out.append(f"kernels[{i}].time_s: not 0 < min <= {middle} <= max ({lo}, {mid}, {hi})")
        window = _get(k, "energy.window_unix_s")
        if isinstance(window, list) and len(window) == 2 and all(map(_is_number, window)) \
                and window[0] > window[1]:
            out.append(f"kernels[{i}].energy.window_unix_s: start after end")
    passed, checks = _get(doc, "verification.passed"), _get(doc, "verification.checks")
    if isinstance(checks, list):
        verdicts = []
        for i, c in enumerate(checks):
            error, tolerance, ok = _get(c, "error"), _get(c, "tolerance"), _get(c, "passed")
            if not isinstance(ok, bool):
                continue
            verdicts.append(ok)
            if (_is_number(error) or error is None) and _is_number(tolerance):
                within = _is_number(error) and error <= tolerance
                why = "error is null (NaN or infinite)" if error is None else \
                    f"error {error} {'<=' if within else '>'} tolerance {tolerance}"
                if ok != within:
                    out.append(f"verification.checks[{i}].passed: {json.dumps(ok)}, but {why}")
        if isinstance(passed, bool) and checks and len(verdicts) == len(checks) \
                and all(verdicts) != passed:
            out.append("verification.passed disagrees with its checks")
    result = _get(doc, "result")
    if isinstance(result, str) and isinstance(passed, bool) and \
            result != ("PASSED" if passed else "FAILED"):
        out.append(f"result: {json.dumps(result)} disagrees with verification.passed")
    for key, where, found in (("result", "result", result), ("app", "app", _get(doc, "app")),
                              ("ranks", "mpi.ranks", ranks)):
        if expect.get(key) and isinstance(found, int if key == "ranks" else str) and \
                found != expect[key]:
            out.append(f"{where}: {json.dumps(found)}, expected {expect[key]}")
    return out


# How far a figure may pass its device's peak: a GPU's cannot; a host's caches hold
# small arrays whose reads pass its memory's peak.
PEAK_TOLERANCE = {"gpu": 1.0, "host": 4.0}


def physics_problems(doc):
    """Each kernel past its devices' peak beyond PEAK_TOLERANCE: a broken timer or peak."""
    ranks = _get(doc, "ranks")
    limit = max((PEAK_TOLERANCE.get(str(_get(r, "device.kind")), 1.0)
                 for r in (ranks if isinstance(ranks, list) else [])), default=1.0)
    kernels = _get(doc, "kernels")
    # An integer too large for a float is described, not formatted.
    return [f"kernels[{i}].efficiency.fraction_of_peak_{what}: "
            f"{format(fraction, '.3g') if is_number(fraction) else describe(fraction)} times "
            f"the device's peak (more than {limit:g}): not physical"
            for i, k in enumerate(kernels if isinstance(kernels, list) else [])
            for what in ("bandwidth", "flops")
            if _is_number(fraction := _get(k, f"efficiency.fraction_of_peak_{what}"))
            and fraction > limit]


def table_problems(doc):
    """Each kernel its kernel table (kerneltable.of) does not declare."""
    kernels = doc.get("kernels") if isinstance(doc, dict) else None
    if not isinstance(kernels, list) or not isinstance(doc.get("app"), str) or \
            not isinstance(doc.get("suite", {}), dict):
        return []  # the schema's problems say why
    table = kerneltable.of(doc)
    if not table.declared:
        return [f"app: no kernel table for {doc['app']!r} (neither the document's "
                "kernel_table nor the tools' data has one)"]
    return [f"kernels[{i}].name: {k['name']!r} ({k.get('implementation')}) is not in "
            f"{doc['app']}'s kernel table" for i, k in enumerate(kernels)
            if isinstance(k, dict) and isinstance(k.get("name"), str)
            and isinstance(k.get("implementation", ""), str)
            and not table.find(k["name"], k.get("implementation"))]


def validate(doc, expect=None):
    """Every problem of a parsed document, schema first, one line each."""
    found = schemas.problems(schemas.load("results.schema.json"), doc)
    # A kernel_table the schema refuses is not read: its problems say why.
    table = any(p.startswith("kernel_table") for p in found)
    return found + cross_field_problems(doc, expect or {}) + physics_problems(doc) + \
        ([] if table else table_problems(doc))


def parse_json(data):
    """The document, or why the bytes are not JSON."""
    def no_constant(name):
        raise ValueError(f"{name} is not a JSON number")

    def finite(text):
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"the number {text} is out of range")
        return value

    try:
        return json.loads(data.decode("utf-8"), parse_constant=no_constant,
                          parse_float=finite), None
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 ({e.reason} at byte {e.start})"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as e:
        return None, str(e)


def is_reference(doc):
    """Whether doc takes the schema's reference form (its `reference` key)."""
    return isinstance(doc, dict) and "reference" in doc
