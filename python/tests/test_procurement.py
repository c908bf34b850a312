"""The procurement comparison (campaigns/procurement, results/comparisons/
h100-vs-h200) and what the tools gained for it: a node's host CPU runs as
cases of their own, reference programs told apart by what they ran on, the
Kokkos version flagged, ratio tables that pair only the same work, tables
corrected after a run (--compare-from), and karma-report's comparison plots."""

import json
import os

import pytest

from conftest import ROOT, SAMPLES, load_json, tool, write
from karma_tools.results import archive
from test_campaigns import fakes, generate, local_campaign  # noqa: F401 (a fixture)

CAMPAIGN = os.path.join(ROOT, "campaigns", "procurement", "gpu-node.yaml")
WEIGHTS = os.path.join(ROOT, "campaigns", "procurement", "weights.txt")
COMMITTED = os.path.join(ROOT, "results", "comparisons", "h100-vs-h200")
# The two campaign runs, archived (karma-batch archive); the tools read them
# as the directories they hold.
H100, H200 = os.path.join(COMMITTED, "h100.tar.xz"), os.path.join(COMMITTED, "h200.tar.xz")


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp") / "c.json"
    r = tool("karma-compare", f"h100={H100}", f"h200={H200}", "--weights", WEIGHTS,
             "--energy", "--json", out)
    assert r.returncode == 0, r.stderr
    return load_json(out)


def test_the_committed_comparison_pairs_every_row(comparison):
    """Every row, the vendors' figures among them, has a ratio on both
    machines; the weights file is the figure of record's (these sets
    predate the run rules: none)."""
    rows = comparison["rows"]
    assert all(r["case"].startswith(("gpu: ", "host: ")) for r in rows)
    vendor = [r for r in rows if "babelstream" in r["case"] or "native-cuda" in r["case"]
              or r["kernel"].startswith(("cublas-", "cblas-", "mgs-cublas"))]
    assert vendor and all(r["values"]["h200"]["ratio"] for r in rows)
    assert comparison["weights"] == WEIGHTS and "why" in comparison["record"]["h200"]
    # Host CPU runs never pair with the GPU's: the case names what ran.
    for r in rows:
        kind = "Cuda" if r["case"].startswith("gpu: ") else "OpenMP"
        for label in ("h100", "h200"):
            backends = r["values"][label]["backends"]
            assert backends in ([kind], ["babelstream"]), (r["case"], backends)
            assert not [f for f in r["values"][label]["flags"] if "differs" in f]


def test_a_reference_program_records_what_it_ran_on(tmp_path, fakes):  # noqa: F811
    out = str(tmp_path / "out")
    assert generate(local_campaign(tmp_path, fakes), out).returncode == 0
    script = open(os.path.join(out, "jobs", "bs.n1x1.shape2p20.r1.sh")).read()
    assert "--device host" in script  # the campaign gives its jobs no GPU
    csv_out = write(str(tmp_path / "bs.out"), "function,num_times,n_elements,sizeof,"
                    "max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime\n"
                    "Copy,10,1048576,8,300000,0.1,0.2,0.15\n")
    for device in ("gpu", "host"):
        r = tool("karma-batch", "reference-result", "babelstream", "--input", csv_out,
                 "--app", "stream", "--deck", os.path.join(ROOT, "inputs/stream/default.yaml"),
                 "--device", device, "--output", tmp_path / f"{device}.json")
        assert r.returncode == 0, r.stderr
        assert load_json(tmp_path / f"{device}.json")["reference"]["device"] == device
    r = tool("karma-batch", "reference-result", "babelstream", "--input", csv_out, "--app",
             "stream", "--deck", "d.yaml", "--device", "fpga", "--output", tmp_path / "x.json")
    assert r.returncode == 2 and not os.path.exists(tmp_path / "x.json")


def test_host_and_gpu_runs_of_one_set_are_separate_cases(tmp_path):
    """The same deck on a node's GPU and on its host: two cases, labelled
    'gpu:' and 'host:'; a Kokkos version that differs is flagged."""
    src = os.path.join(SAMPLES, "machine-a", "stream-1d-2p20-r1.json")
    for name in ("a", "b"):
        for kind, space in (("gpu", "Cuda"), ("host", "OpenMP")):
            doc = load_json(src)
            doc["kokkos"]["default_execution_space"] = space
            doc["kokkos"]["version"] = "4.6.1" if name == "a" or kind == "host" else "4.7.0"
            doc["ranks"][0]["device"]["kind"] = kind
            write(str(tmp_path / name / f"{kind}.json"), json.dumps(doc))
    out = tmp_path / "c.json"
    r = tool("karma-compare", f"a={tmp_path / 'a'}", f"b={tmp_path / 'b'}", "--json", out)
    assert r.returncode == 0, r.stderr
    rows = load_json(out)["rows"]
    cases = sorted({r["case"] for r in rows})
    assert [c.split(":")[0] for c in cases] == ["gpu", "host"], cases
    for r in rows:
        b = r["values"]["b"]
        assert b["backends"] == r["values"]["a"]["backends"]
        kokkos = [f for f in b["flags"] if f.startswith("Kokkos differs")]
        assert kokkos == (["Kokkos differs: 4.7.0 vs 4.6.1"] if r["case"].startswith("gpu")
                          else [])
    # Results that do not say what they ran on (reference runs recorded
    # before --device) still pair, with the difference flagged.
    doc = load_json(tmp_path / "a" / "gpu.json")
    del doc["ranks"][0]["device"]["kind"]
    write(str(tmp_path / "c" / "gpu.json"), json.dumps(doc))
    r = tool("karma-compare", f"a={tmp_path / 'a'}", f"c={tmp_path / 'c'}", "--json", out)
    assert r.returncode == 0, r.stderr
    for row in load_json(out)["rows"]:
        c = row["values"]["c"]
        if row["case"].startswith("host"):
            assert c is None
        else:
            assert c["ratio"] == pytest.approx(1.0)
            assert any("device" in f for f in c["flags"]), c["flags"]


def test_ratio_tables_pair_only_the_same_work(tmp_path):
    """The campaign.json the H200 ran with had loose selections (implementation
    kokkos over cublas); no table pairs two mini-apps or a host run with a
    GPU's, and the corrected compare: section leaves no ambiguous pair."""
    r = tool("karma-compare", "--campaign", H200, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    tables = load_json(tmp_path / "t.json")["tables"]
    mgs = next(t for t in tables if t["name"] == "mgs-vs-cublas")
    assert {(row["numerator"], row["denominator"]) for row in mgs["rows"]} == \
        {("mgs", "mgs-cublas")}
    r = tool("karma-compare", "--campaign", H200, "--compare-from", CAMPAIGN)
    assert r.returncode == 0, r.stderr
    assert "could pair" not in r.stdout and "mgs: Kokkos / hand-written CUDA" in r.stdout


def test_a_denominator_that_names_its_run_may_be_another_mini_app(tmp_path):
    """hexgrad's GB/s as a fraction of karma-stream's copy in the same round:
    the campaign names the copy's run, so the table pairs across mini-apps."""
    side_by_side = os.path.join(ROOT, "results", "campaigns", "h200",
                                "hexgrad-side-by-side.tar.xz")
    r = tool("karma-compare", "--campaign", side_by_side, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    table = next(t for t in load_json(tmp_path / "t.json")["tables"]
                 if t["name"] == "fraction-of-copy")
    assert table["denominator"] == {"run": ["stream-copy"], "kernel": ["copy"]}
    assert len(table["rows"]) == 20 and \
        {(row["numerator"], row["denominator"]) for row in table["rows"]} == \
        {("gradients", "copy")}


def test_compare_from_refuses_a_campaign_that_names_other_runs(tmp_path):
    text = open(CAMPAIGN).read().replace("numerator: {run: host-stream}",
                                         "numerator: {run: host-streams}")
    bad = write(str(tmp_path / "gpu-node.yaml"), text)
    r = tool("karma-compare", "--campaign", H200, "--compare-from", bad)
    assert r.returncode == 2
    assert "numerator.run 'host-streams'" in r.stderr or "host-streams" in r.stderr
    r = tool("karma-compare", f"a={H100}", f"b={H200}", "--compare-from", CAMPAIGN)
    assert r.returncode == 2 and "--compare-from goes with --campaign" in r.stderr


def test_report_draws_the_comparison(tmp_path, comparison):
    cmp_file = write(str(tmp_path / "c.json"), json.dumps(comparison))
    results = tmp_path / "results"
    job = "results/hexgrad.n1x1.precisiondouble.layoutleft.r1/"
    for rel, data in archive.open_archive(H200).files.items():
        if rel.startswith(job):
            write(str(results / "h200" / "hexgrad" / rel[len(job):]), data.decode())
    r = tool("karma-report", results, "--comparison", cmp_file, "-o", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert "## Machines compared" in text
    for app in ("stream", "hexgrad", "mgs", "matvec", "contact"):
        assert f"(plots/compare-{app}.svg)" in text
        assert (tmp_path / "plots" / f"compare-{app}.svg").is_file()
    # these sets predate the run rules: no procurement figure, and no other
    assert "| set | procurement figure (rounds) |\n" in text
    assert "| h200 | none: no reportable baseline results |\n" in text
    # A document that is not karma-compare's: one line, exit 2, nothing written.
    doc = dict(comparison, rows=[{"app": "stream", "case": "x", "kernel": "copy",
                                  "values": {"h200": {"ratio": "fast"}}}])
    bad = write(str(tmp_path / "bad.json"), json.dumps(doc))
    r = tool("karma-report", results, "--comparison", bad, "-o", tmp_path / "s.md")
    assert r.returncode == 2 and "rows[0].values.h200" in r.stderr
    assert not (tmp_path / "s.md").exists()


PROCUREMENT = os.path.join(ROOT, "results", "procurement")


@pytest.mark.parametrize("base, other", [("h200-1.0.0", "h200-1.0.0-again"),
                                         ("h100", "h200-1.0.0")])
def test_compare_and_score_print_one_figure_for_a_pair(base, other):
    """karma-compare BASE OTHER is karma-score OTHER --reference BASE: the
    same figure of record, per-watt figure and verdict words, in the same
    line (one pipeline computes and words it), and no other aggregate."""
    base_path, other_path = (os.path.join(PROCUREMENT, f"{n}.tar.xz") for n in (base, other))
    scored = tool("karma-score", f"{other}={other_path}", "--reference", base_path, "--unofficial")
    compared = tool("karma-compare", f"{base}={base_path}", f"{other}={other_path}")
    assert scored.returncode == compared.returncode == 0, scored.stderr + compared.stderr
    line = next(x for x in scored.stdout.splitlines() if "**Procurement figure:" in x)
    # a comparison says once that it is no figure of record; karma-score says it on the line
    assert line.startswith("**UNOFFICIAL** ")
    assert compared.stdout.count("not a figure of record") == 1
    line = line.removeprefix("**UNOFFICIAL** ")
    assert "per watt" in line and ("better than" in line or "worse than" in line
                                   or "no measurable difference" in line), line
    assert f"- {other}: {line}" in compared.stdout.splitlines()
    assert "geometric mean" not in compared.stdout


def test_report_shows_the_figure_score_prints(tmp_path):
    """karma-report --score of a bundle: karma-score's line for the set,
    against the reference given (a set), from the same pipeline."""
    names = ("h200-1.0.0", "h200-1.0.0-again")
    base, other = (os.path.join(PROCUREMENT, f"{n}.tar.xz") for n in names)
    scored = tool("karma-score", other, "--reference", base, "--unofficial")
    out = tmp_path / "r.md"
    r = tool("karma-report", other, "--score", "--reference", base, "--no-plots", "-o", out)
    assert scored.returncode == r.returncode == 0, scored.stderr + r.stderr
    line = next(x for x in scored.stdout.splitlines() if "**Procurement figure:" in x)
    assert any(x.endswith("; " + line) for x in out.read_text().splitlines()), line
    bad = tool("karma-report", other, "--reference", base, "--no-plots", "-o", tmp_path / "x.md")
    assert bad.returncode == 2 and "go with --score" in bad.stderr
    assert not (tmp_path / "x.md").exists()


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_microbench_campaigns_pair_every_benchmark_on_its_variant(tmp_path, kind):
    """microbench's kernel names carry the implementation, so karma's and raw's
    rows pair only on the variant: the committed CPU campaign, read with each
    microbench campaign file's tables, pairs all 70 benchmarks of 3 rounds."""
    ran = os.path.join(ROOT, "results", "microbench", "cpu16-campaign-02dd89b8.tar.xz")
    tables = os.path.join(ROOT, "campaigns", kind, "microbench.yaml")
    r = tool("karma-compare", "--campaign", ran, "--compare-from", tables,
             "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    got = load_json(tmp_path / "t.json")
    assert not got["notes"] and [t["name"] for t in got["tables"]] == \
        ["karma-vs-raw", "twin-vs-raw"]
    for t in got["tables"]:
        assert len(t["rows"]) == 70 and not t["notes"]
        assert all(len(row["rounds"]) == 3 and row["numerator"].rsplit("/", 1)[0] ==
                   row["denominator"].rsplit("/", 1)[0] for row in t["rows"])


def test_an_ambiguous_pair_names_a_few_candidates(tmp_path):
    """As the campaign ran (its tables without same_variant) every karma row
    could pair with 70 raw rows: the note names three and counts the rest."""
    ran = os.path.join(ROOT, "results", "microbench", "cpu16-campaign-02dd89b8.tar.xz")
    r = tool("karma-compare", "--campaign", ran, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    notes = [n for t in load_json(tmp_path / "t.json")["tables"] for n in t["notes"]]
    assert notes and all("70 denominators could pair" in n and "and 67 more" in n and
                         len(n) < 400 for n in notes)
