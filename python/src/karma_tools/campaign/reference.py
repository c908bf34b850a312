"""External reference programs (`reference:` runs): their output read into a checked results
document of schema_version 2 in the reference form (docs/results-format.md), which karma-compare
and karma-report pair with karma's. BabelStream (--csv): each function a kernel of implementation
babelstream, its variant the function, its figure of merit the best bandwidth in GB/s."""

import csv
import hashlib
import json
import math
import shlex

from karma_tools.core import ToolError, __version__, atomic_write, unreadable
from karma_tools.results import validate
from karma_tools import yamlread
from karma_tools.campaign import deck

FORMATS = ("babelstream",)

# Arrays each BabelStream kernel reads and writes (its own byte counts).
_BABELSTREAM_ARRAYS = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2, "nstream": 4}
_BABELSTREAM_COLUMNS = ("function", "num_times", "n_elements", "sizeof")


def read_babelstream_csv(text, source="<BabelStream output>"):
    """[{kernel fields}] of BabelStream's --csv output; ToolError (2) for a bad table."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.strip().lower().startswith("function,")), None)
    if start is None:
        raise ToolError(f"{source}: no BabelStream --csv table (a line starting 'function,')", 2)
    reader = csv.reader(lines[start:])
    header = [h.strip().lower() for h in next(reader)]
    rate = next((h for h in header if h.startswith("max_m")), None)
    missing = [c for c in _BABELSTREAM_COLUMNS + ("min_runtime", "max_runtime", "avg_runtime")
               if c not in header] + ([] if rate else ["max_mbytes_per_sec"])
    if missing:
        raise ToolError(f"{source}:{start + 1}: BabelStream header lacks "
                        f"{', '.join(missing)}", 2)
    # MB/s is 1e6 bytes/s; MiB/s (--mibibytes) is 2^20.
    scale = 2**20 / 1e9 if "mib" in rate else 1e6 / 1e9
    kernels = []
    for number, row in enumerate(reader, start=start + 2):
        if not row or not row[0].strip():
            continue
        if len(row) != len(header):
            break  # the table ended (BabelStream prints nothing after it, but be lenient)
        fields = dict(zip(header, (c.strip() for c in row)))
        name = fields["function"].lower()
        try:
            count, elements, size = (int(fields[c]) for c in _BABELSTREAM_COLUMNS[1:])
            best = float(fields[rate]) * scale
            times = {k: float(fields[f"{k}_runtime"]) for k in ("min", "max", "avg")}
        except ValueError:
            raise ToolError(f"{source}:{number}: not a BabelStream row of numbers: "
                            f"{','.join(row)}", 2) from None
        if not all(math.isfinite(v) and v > 0 for v in [best] + list(times.values())):
            raise ToolError(f"{source}:{number}: {name}: a rate or time that is not a "
                            "positive number", 2)
        bytes_moved = _BABELSTREAM_ARRAYS.get(name, 0) * elements * size or \
            best * 1e9 * times["min"]
        kernels.append({
            "name": name, "implementation": "babelstream", "variant": name,
            "fom": {"value": best, "units": "GB/s", "higher_is_better": True,
                    "from": "BabelStream " + rate},
            "bandwidth_GBps": {"best": best, "median": bytes_moved / times["avg"] / 1e9,
                               "worst": bytes_moved / times["max"] / 1e9},
            "bytes": float(bytes_moved), "flops": 0.0,
            "time_s": {"count": count, "min": times["min"], "max": times["max"],
                       "mean": times["avg"]},
            "elements": elements, "element_bytes": size})
    if not kernels:
        raise ToolError(f"{source}:{start + 1}: the BabelStream table has no rows", 2)
    return kernels


def resolve_deck(path, overrides):
    """The deck with `key=value` overrides applied, as a run's deck.resolved."""
    try:
        resolved = deck.value(yamlread.load(path).plain()) or {}
    except (OSError, yamlread.YamlError) as e:
        raise ToolError(f"{path}: cannot read the deck ({e})", 2) from None
    if not isinstance(resolved, dict):
        raise ToolError(f"{path}: a deck is a mapping of sections", 2)
    for text in overrides:
        key, _, value = text.partition("=")
        parts = key.strip().split(".")
        node = resolved
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ToolError(f"--set {text}: {part} is not a section", 2)
        try:
            node[parts[-1]] = deck.value(yamlread.parse_value(value).plain())
        except yamlread.YamlError as e:
            raise ToolError(f"--set {text}: {e.message}", 2) from None
    return resolved


def reference_result(format, input, exit_status, app, deck, set, device, reference_command,
                     date, host, output, say):
    """karma-batch reference-result: a reference's output -> checked karma results."""
    try:
        with open(input, encoding="utf-8", errors="replace") as f:
            kernels = read_babelstream_csv(f.read(), input)
    except OSError as e:
        raise unreadable(input, e) from None
    command, overrides = shlex.split(reference_command or ""), set or []
    # BabelStream's check fails for float at 2^28 (its sum overflows); its timings stand.
    notes = [f"{command[0] if command else format} exited {exit_status}; its timings are kept"] \
        if exit_status != 0 else []
    try:
        with open(deck, "rb") as f:
            sha256 = hashlib.sha256(f.read()).hexdigest()  # as a karma run records it
    except OSError as e:
        raise ToolError(f"{deck}: cannot read the deck ({e.strerror})", 2) from None
    known = {"date": date, "command_line": shlex.join(command) if command else None,
             "hosts": [host] if host is not None else None}
    doc = {
        "schema_version": 2, "app": app,
        "reference": {"format": format, "command": command, "exit_status": exit_status,
                      "output": input, **({"device": device} if device else {})},
        "suite": {"name": "karma", "version": __version__},
        **{k: v for k, v in known.items() if v is not None},
        "deck": {"path": deck, "sha256": sha256, "overrides": overrides,
                 "resolved": resolve_deck(deck, overrides)},
        "problem": {"elements": kernels[0]["elements"],
                    "precision": "float" if kernels[0]["element_bytes"] == 4 else "double"},
        "mpi": {"ranks": 1, "nodes": 1}, "kokkos": {"default_execution_space": format},
        "kernels": kernels, "verification": {"passed": True, "checks": []},
        "notes": notes, "result": "PASSED"}
    problems = validate.validate(doc)
    if problems:
        raise ToolError(f"{input}: the results would not be valid: {problems[0]}", 2)
    atomic_write(output, json.dumps(doc, indent=2) + "\n")
    for note in notes:
        say(f"karma-batch reference-result: note: {note}", True)
    say(f"{format}: {len(kernels)} kernel(s) -> {output}")
    say(f"RESULT: {doc['result']}")
    return 0
