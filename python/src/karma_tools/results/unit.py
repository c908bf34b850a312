"""What GPU units a set ran on, and which runs a unit held back or whose memory erred,
from each rank's device.state_at_start and state_at_end (docs/results-format.md)."""

# Clock-event causes that mean the unit, not the work, held the clocks back.
HELD_BACK = ("power", "thermal")
# A cause's share of the run below which it is noise, not a held-back run.
SHARE = 0.01


def units(runs):
    """{uuid: {model, board_part_number, vbios_version, power_limit_W, ..., ends_recorded:
    how many runs recorded its state_at_end}} of the runs."""
    out = {}
    for run in runs:
        for rank in run.doc.get("ranks") or []:
            device = rank.get("device") or {}
            state = device.get("state_at_start") or {}
            if device.get("kind") == "gpu" and device.get("uuid"):
                unit = out.setdefault(device["uuid"], {"model": device.get("name"), **{
                    k: state.get(k) for k in ("board_part_number", "vbios_version",
                                              "power_limit_W", "persistence_mode",
                                              "ecc_enabled")}, "ends_recorded": 0})
                unit["ends_recorded"] += "state_at_end" in device
    return out


def events(run):
    """[why] a run's units held it back or erred: power or thermal held the clocks
    down for over SHARE of the run, or the ECC error counts grew."""
    out, seconds = [], run.doc.get("duration_s") or 0
    for rank in run.doc.get("ranks") or []:
        device = rank.get("device") or {}
        start, end = device.get("state_at_start") or {}, device.get("state_at_end") or {}
        who = f"rank {rank.get('rank', '?')} ({device.get('uuid', '?')})"
        for cause in HELD_BACK:
            held = ((end.get("clocks_event_ns") or {}).get(cause, 0) -
                    (start.get("clocks_event_ns") or {}).get(cause, 0)) * 1e-9
            if seconds and held > SHARE * seconds:
                out.append(f"{who}: {cause} held the clocks down {held:.1f} s of {seconds:.0f}")
        for kind in ("corrected", "uncorrected"):
            grew = (end.get("ecc_errors") or {}).get(kind, 0) - \
                (start.get("ecc_errors") or {}).get(kind, 0)
            if grew > 0:
                out.append(f"{who}: {grew} {kind} ECC error(s) during the run")
    return out
