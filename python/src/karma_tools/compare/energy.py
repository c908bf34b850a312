"""The energy figures of a campaign's compare: tables: per watt ratios and
energies of the pairs that measured energy on both sides."""

import json
from karma_tools.compare import sides
from karma_tools.results.results import kernel_energy


def _energy_stand_ins(items, field):
    """The campaign's items with one energy figure standing in for the FOM:
    sides.ratio_table then pairs them exactly as it paired the FOMs (the
    pairing reads only decks, rounds and names) and divides that figure in
    the FOM's sense (per watt) or as a cost (joules)."""
    out = []
    for item in items:
        energy = kernel_energy(item["entry"]) or {}
        fom = item["entry"].get("fom") or {}
        hib = bool(fom.get("higher_is_better", True)) if field == "fom_per_watt" else False
        out.append(dict(item, entry={"fom": {"value": energy.get(field),
                                             "higher_is_better": hib}}))
    return out


def _pair_key(row):
    """What names a row of a ratio table (as sides.ratio_table keys them)."""
    return json.dumps([row["match"], row["label"], row["numerator"], row["denominator"]],
                      sort_keys=True)


def campaign_energy(manifest_path, tables):
    """Adds per_watt and energy ({rounds, values, aggregates}) to each row
    of the tables that have a pair with measured energy on both sides;
    True when any has."""
    result_set = sides.open_campaign(manifest_path)
    manifest = result_set.manifest
    items, _ = sides.load_items(result_set)
    if not any(kernel_energy(i["entry"]) for i in items):
        return False
    found = False
    specs = manifest.get("compare") or []
    for spec, t in zip(specs, tables):
        by_field = {}
        for key, field in (("per_watt", "fom_per_watt"), ("energy", "joules_per_execution")):
            stand_in = dict(spec, metric="fom.value", higher_is_better=None,
                            aggregate=t["aggregate"])
            pairs = sides.ratio_table(stand_in, _energy_stand_ins(items, field))["rows"]
            by_field[key] = {_pair_key(row): row for row in pairs}
        if not any(by_field.values()):
            continue
        found = True
        for row in t["rows"]:
            for name, rows in by_field.items():
                e = rows.get(_pair_key(row))
                row[name] = {"rounds": e["rounds"] if e else {},
                             "values": e["values"] if e else {},
                             "higher_is_better": e["higher_is_better"] if e else True,
                             "aggregates": e["aggregates"] if e else
                             {how: None for how in t["aggregate"]}}
    return found
