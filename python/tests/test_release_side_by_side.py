"""Issue 99: 1.0.0's and 1.1.0's reportable campaigns side by side on one unit (P), as
results/procurement/README.md gives them, made again from the two campaign archives: each
release's figure against its own reference, and 1.1.0's against 1.0.0's reference."""

import os

from test_node_score import readme_section
from test_score import PROCUREMENT, SHIPPED, cell, released_reference, score

RELEASES = os.path.join(PROCUREMENT, "releases")
APPS = ("stream", "hexgrad", "matvec", "mgs", "contact")


def row(s):
    """A table row's cells from the figure to the last app, as the README writes them."""
    record, apps = s["record"], s["tiers"]["baseline"]["apps"]
    return " | ".join([cell(record["figure"], record["interval"]),
                       cell(record["per_watt"], record["per_watt_interval"])]
                      + [f"{apps[a]['score']:.3f}" for a in APPS]) + " |"


def test_the_procurement_readme_gives_the_releases_side_by_side(tmp_path):
    old = released_reference(tmp_path, "1.0.0")
    section = readme_section("1.0.0 and 1.1.0 side by side on one unit: P (issue 99)")
    for campaign, reference, words in (("1.0.0", old, "1.0.0's (A, -000)"),
                                       ("1.1.0", SHIPPED, "1.1.0's (J, K, L)"),
                                       ("1.1.0", old, "1.0.0's (A, -000)")):
        path = os.path.join(RELEASES, f"h200-{campaign}-f510ad7c.tar.xz")
        r, doc = score(tmp_path, reference, f"P={path}")
        assert r.returncode == 0, r.stderr
        s = doc["sets"][0]
        assert list(s["units"]) == ["GPU-f510ad7c-a4ed-23aa-a638-5831f4329467"]
        assert s["suite_versions"] == [campaign]
        line = f"| {campaign} | {words} | {row(s)}"
        assert line in section, line
