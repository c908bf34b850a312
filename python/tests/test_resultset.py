"""results.resultset.open: one reader for the four kinds of path a tool is
pointed at (a directory, a campaign, a results archive, a submission
bundle), and campaign.json's one reader."""

import json
import os
import shutil

import pytest

from conftest import ROOT, SAMPLES
from karma_tools.core import ToolError
from karma_tools.results import archive, resultset

# A campaign archive whose jobs all ran (karma-batch archive) and a bundle.
CAMPAIGN = os.path.join(ROOT, "results", "campaigns", "h100", "host-stream-dot.tar.xz")
BUNDLE = os.path.join(ROOT, "results", "procurement", "h200.tar.xz")


def _extract(path, out):
    for rel, data in archive.open_archive(path).files.items():
        target = os.path.join(out, *rel.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    return str(out)


def test_a_directory_opens_as_its_runs():
    folder = os.path.join(SAMPLES, "machine-a")
    s = resultset.open(folder)
    names = sorted(os.path.basename(f) for f in os.listdir(folder) if f.endswith(".json"))
    assert s.label == "machine-a" and s.manifest is None and s.jobs == []
    assert sorted(os.path.basename(r.path) for r in s.runs + [x for x, _ in s.skipped]) == \
        names and s.runs


def test_an_archive_opens_as_the_folder_it_holds(tmp_path):
    s = resultset.open(CAMPAIGN)
    folder = resultset.open(_extract(CAMPAIGN, tmp_path / "c"))
    assert len(s.runs) == len(folder.runs) > 0
    assert sorted(os.path.relpath(r.path, CAMPAIGN) for r in s.runs) == \
        sorted(os.path.relpath(r.path, folder.path) for r in folder.runs)


@pytest.mark.parametrize("inner", ["", "campaign.json"])
def test_a_campaign_opens_with_each_job_and_its_run(tmp_path, inner):
    out = _extract(CAMPAIGN, tmp_path / "c")
    s = resultset.open(os.path.join(out, inner) if inner else out)
    assert s.manifest_path == os.path.join(out, "campaign.json")
    assert len(s.jobs) == len(s.manifest["jobs"]) > 1
    assert all(run is not None and why is None for _, run, why in s.jobs), s.missing()
    assert {os.path.abspath(run.path) for _, run, _ in s.jobs} <= \
        {os.path.abspath(r.path) for r in s.runs}


def test_a_bundle_opens_with_its_campaign_jobs():
    for path in (BUNDLE, os.path.join(BUNDLE, "campaign"),
                 os.path.join(BUNDLE, "campaign", "campaign.json")):
        s = resultset.open(path)
        assert s.manifest_path.endswith(os.path.join("campaign", "campaign.json"))
        assert len(s.jobs) == len(s.runs) == 66, path
        assert s.missing() == [], path


def test_a_campaign_whose_jobs_all_have_results_never_reads_as_not_run(tmp_path):
    """Wherever the campaign is now: copied, archived, in a bundle, its
    manifest's recorded paths pointing elsewhere."""
    out = _extract(CAMPAIGN, tmp_path / "copy")
    for path in (CAMPAIGN, out, os.path.join(BUNDLE, "campaign")):
        s = resultset.open(path)
        assert s.missing() == [] and all(run for _, run, _ in s.jobs), path
    # A job's results moved into a folder named as the job elsewhere in the set.
    entry = resultset.read_manifest(out)[1]["jobs"][0]
    moved = os.path.join(out, "elsewhere", entry["name"])
    shutil.move(entry["results_dir"], moved)
    s = resultset.open(out)
    assert s.missing() == [] and s.jobs[0][1].path.startswith(moved)


def test_a_job_without_results_says_why(tmp_path):
    out = _extract(CAMPAIGN, tmp_path / "c")
    jobs = resultset.read_manifest(out)[1]["jobs"]
    shutil.rmtree(jobs[0]["results_dir"])
    os.remove(jobs[1]["results_file"])
    s = resultset.open(out)
    missing = dict(s.missing())
    assert missing[jobs[0]["name"]] == resultset.NOT_RUN
    assert missing[jobs[1]["name"]].startswith("no results: failed, exit 0")
    assert len(missing) == 2 and len(s.runs) == len(jobs) - 2


def test_a_campaign_without_any_result_is_one_line_naming_why(tmp_path):
    out = _extract(CAMPAIGN, tmp_path / "c")
    shutil.rmtree(os.path.join(out, "results"))
    with pytest.raises(ToolError) as e:
        resultset.open(out)
    assert e.value.code == 2 and "no karma results found" in str(e.value)
    assert resultset.NOT_RUN in str(e.value) and "\n" not in str(e.value)


def test_the_one_manifest_reader_names_the_file_and_key(tmp_path):
    out = _extract(CAMPAIGN, tmp_path / "c")
    path = os.path.join(out, "campaign.json")
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["jobs"][1]["results_file"] = None
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    with pytest.raises(ToolError) as e:
        resultset.open(out)
    assert e.value.code == 2 and str(e.value).startswith(
        f"{path}: jobs[1].results_file: expected a string, got null")
    with pytest.raises(ToolError) as e:
        resultset.read_manifest(str(tmp_path))
    assert "campaign.json not found" in str(e.value)
