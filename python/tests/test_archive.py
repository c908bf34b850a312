"""Results archives (karma_tools/results/archive.py): karma-batch archive writes one
from a campaign directory, the same bytes every time; karma-compare,
karma-report, karma-validate-results and karma-batch status read it as they
read the directory; a corrupt or foreign archive is one line and exit 2."""

import hashlib
import io
import json
import lzma
import os
import tarfile

import pytest

from conftest import ROOT, SAMPLES, tool, write
from karma_tools.results import archive

# A small committed campaign run (4 jobs); extracted, it is the campaign
# directory karma-batch archive made it from.
COMMITTED = os.path.join(ROOT, "results", "campaigns", "h200", "contact-gpu.tar.xz")


@pytest.fixture
def campaign(tmp_path):
    out = tmp_path / "contact-gpu"
    r = tool("karma-archive", "extract", COMMITTED, out)
    assert r.returncode == 0, r.stderr
    return out


def tree(folder):
    return {os.path.relpath(os.path.join(d, f), folder): open(os.path.join(d, f), "rb").read()
            for d, _, files in os.walk(folder) for f in files}


def test_the_same_folder_gives_the_same_bytes(campaign, tmp_path):
    """Extracted and archived again, the committed archive comes back byte
    for byte, and the folder it holds is the one extracted."""
    out = tmp_path / "again.tar.xz"
    r = tool("karma-batch", "archive", campaign, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == open(COMMITTED, "rb").read()
    assert tool("karma-archive", "extract", out, tmp_path / "x").returncode == 0
    assert tree(tmp_path / "x") == tree(campaign)
    r = tool("karma-batch", "archive", campaign, "-o", out)
    assert r.returncode == 2 and "exists (--force replaces it)" in r.stderr


def test_environment_files_are_stored_once(campaign, tmp_path):
    """Every job's capture is in the folder; the archive has each distinct
    file once, under its sha256, and the index names each job's files."""
    index = archive.open_archive(COMMITTED).index
    with tarfile.open(COMMITTED, "r:xz") as tar:
        names = tar.getnames()
    assert names[0] == archive.INDEX and names == [names[0]] + sorted(names[1:])
    env = [e for e in index["files"] if "/environment/" in e["path"]]
    stored = [n for n in names if n.startswith("environment/")]
    assert len(env) > len(stored) == len({e["sha256"] for e in env})
    assert all(e["member"] == "environment/" + e["sha256"] for e in env)
    manifest = json.loads((campaign / "campaign.json").read_text())
    assert [j["name"] for j in index["jobs"]] == [j["name"] for j in manifest["jobs"]]
    for job in index["jobs"]:
        assert job["exit_code"] == 0 and job["log"].endswith("/job.out")
        assert job["results"] and all(archive.isfile(os.path.join(COMMITTED, p))
                                      for p in job["results"] + [job["log"]])


def test_the_tools_read_an_archive_as_its_folder(campaign, tmp_path):
    for args in (("karma-compare", "--campaign"), ("karma-batch", "status"),
                 ("karma-validate-results",)):
        from_dir = tool(*args, campaign)
        from_archive = tool(*args, COMMITTED)
        assert from_dir.returncode == from_archive.returncode == 0, from_archive.stderr
        text = from_archive.stdout.replace(COMMITTED, str(campaign))
        assert text == from_dir.stdout, args
    # A results set, a file inside an archive, and an archive inside a directory.
    inner = os.path.join(COMMITTED, "results", "n126.n1x1", "karma-contact.json")
    r = tool("karma-validate-results", inner)
    assert r.returncode == 0 and "valid karma results" in r.stdout, r.stderr
    folder = tmp_path / "results" / "contact"
    folder.mkdir(parents=True)
    os.link(COMMITTED, folder / "run.tar.xz")
    r = tool("karma-report", tmp_path / "results", "--no-plots", "-o", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert "## Side by side: campaign contact-gpu (results/contact/run.tar.xz)" in text
    r = tool("karma-compare", f"a={COMMITTED}", f"b={campaign}")
    assert r.returncode == 0 and "| a | " in r.stdout, r.stderr


def test_unfinished_jobs_refuse_an_archive(campaign, tmp_path):
    manifest = json.loads((campaign / "campaign.json").read_text())
    manifest["jobs"][1]["job_id"] = None  # never submitted
    write(str(campaign / "campaign.json"), json.dumps(manifest))
    out = tmp_path / "c.tar.xz"
    r = tool("karma-batch", "archive", campaign, "-o", out)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.count("\n") == 1 and "1 job(s) not finished" in r.stderr
    r = tool("karma-batch", "archive", campaign, "-o", out, "--partial")
    assert r.returncode == 0 and out.is_file(), r.stderr
    for bad, why in ((tmp_path / "c.tar.gz", "ends in .tar.xz"),
                     (campaign / "in.tar.xz", "inside the directory it archives")):
        r = tool("karma-batch", "archive", campaign, "-o", bad)
        assert r.returncode == 2 and why in r.stderr and not os.path.exists(bad)
    r = tool("karma-batch", "archive", SAMPLES, "-o", tmp_path / "s.tar.xz")
    assert r.returncode == 2 and "campaign.json not found" in r.stderr
    r = tool("karma-batch", "submit", COMMITTED)
    assert r.returncode == 2 and "only status reads one" in r.stderr


def test_a_plain_folder_of_results(tmp_path):
    out = tmp_path / "samples.tar.xz"
    r = tool("karma-archive", "write", os.path.join(SAMPLES, "machine-a"), "-o", out)
    assert r.returncode == 0, r.stderr
    assert archive.open_archive(str(out)).index["kind"] == "results"
    a = tool("karma-compare", f"a={out}", f"b={os.path.join(SAMPLES, 'machine-b')}")
    d = tool("karma-compare", f"a={os.path.join(SAMPLES, 'machine-a')}",
             f"b={os.path.join(SAMPLES, 'machine-b')}")
    assert a.returncode == d.returncode == 0
    assert a.stdout.replace(str(out), os.path.join(SAMPLES, "machine-a")) == d.stdout


def test_extract_writes_the_folder_whole_or_not_at_all(tmp_path):
    """Extracted beside its place and renamed: where the folder cannot be
    made (its folder is a file), exit 2 and one line, and nothing left behind."""
    out = tmp_path / "samples.tar.xz"
    assert tool("karma-archive", "write", os.path.join(SAMPLES, "machine-a"), "-o",
                out).returncode == 0
    r = tool("karma-archive", "extract", out, tmp_path / "folder")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "folder")) == sorted(
        os.listdir(os.path.join(SAMPLES, "machine-a")))
    (tmp_path / "afile").write_text("")
    r = tool("karma-archive", "extract", out, tmp_path / "afile" / "folder")
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"karma-archive: error: cannot write {tmp_path / 'afile' / 'folder'}: " \
        "Not a directory\n"
    assert sorted(os.listdir(tmp_path)) == ["afile", "folder", "samples.tar.xz"]


def _xz_tar(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return lzma.compress(raw.getvalue())


@pytest.mark.parametrize("case", ["truncated", "not-xz", "no-index", "wrong-sha", "escape",
                                  "twice", "file-and-folder"])
def test_a_bad_archive_is_one_line(tmp_path, case):
    good = open(COMMITTED, "rb").read()
    body = b'{"schema_version": 2}'
    index = {"karma_archive": 1, "kind": "results", "name": "x",
             "files": [{"path": "r.json", "member": "r.json", "size": len(body),
                        "sha256": hashlib.sha256(body).hexdigest()}]}
    data = {"truncated": good[:len(good) // 2], "not-xz": b"plain text\n",
            "no-index": _xz_tar([("r.json", body)])}.get(case)
    if case == "wrong-sha":
        data = _xz_tar([(archive.INDEX, json.dumps(index).encode()), ("r.json", b"{}")])
    if case == "escape":
        index["files"][0]["path"] = "../r.json"
        data = _xz_tar([(archive.INDEX, json.dumps(index).encode()), ("r.json", body)])
    if case in ("twice", "file-and-folder"):
        other = "r.json/x.json" if case == "file-and-folder" else "r.json"
        index["files"].append(dict(index["files"][0], path=other))
        data = _xz_tar([(archive.INDEX, json.dumps(index).encode()), ("r.json", body)])
    bad = tmp_path / "bad.tar.xz"
    bad.write_bytes(data)
    expected = {"truncated": "not a readable .tar.xz", "not-xz": "not a readable .tar.xz",
                "no-index": f"no {archive.INDEX}", "wrong-sha": "r.json: member r.json: sha256",
                "escape": "leaves the archive", "twice": "'r.json' is listed twice",
                "file-and-folder": "'r.json' is both a file and a folder"}[case]
    for args in (("karma-compare", "--campaign"), ("karma-validate-results",),
                 ("karma-batch", "status"), ("karma-report",)):
        r = tool(*args, bad, *(["-o", tmp_path / "r.md"] if args == ("karma-report",) else []))
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and str(bad) in r.stderr and expected in r.stderr, \
            (args, r.stderr)
    assert not (tmp_path / "r.md").exists()


def test_register_lists_each_measurement_once(tmp_path):
    """karma-archive register adds an archive's measurements to a list (xz)
    with paths from the list's own folder, each once; a list's old lines
    stay first; what is not an archive, or lies outside, is one line, exit
    2, and the list is left as it was."""
    results = tmp_path / "results"
    results.mkdir()
    copy = results / "contact-gpu.tar.xz"
    copy.write_bytes(open(COMMITTED, "rb").read())
    listing = results / "measurements.sha256.xz"
    listing.write_bytes(lzma.compress(f"{'0' * 16}  results/old.tar.xz/r.json\n".encode()))
    inside = [p for p in archive.walk_files(str(copy), ".json")
              if archive.is_measurement(archive.read_bytes(p))]
    assert inside
    r = tool("karma-archive", "register", listing, copy)
    assert r.returncode == 0, r.stderr
    assert f"{len(inside)} measurement(s) added, {len(inside) + 1} listed" in r.stderr
    listed = archive.read_measurements(str(listing))
    assert list(listed)[0] == "results/old.tar.xz/r.json"
    for p in inside:
        rel = os.path.relpath(p, tmp_path)
        assert listed[rel] == hashlib.sha256(archive.read_bytes(p)).hexdigest()[:16], rel
    before = listing.read_bytes()
    r = tool("karma-archive", "register", listing, copy)
    assert r.returncode == 0 and "0 measurement(s) added" in r.stderr, r.stderr
    assert archive.read_measurements(str(listing)) == listed
    outside = tmp_path.parent / f"{tmp_path.name}-outside.tar.xz"
    outside.write_bytes(copy.read_bytes())
    for bad, says in ((results, "not an archive"), (outside, "not under")):
        r = tool("karma-archive", "register", listing, bad)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr
        assert listing.read_bytes() == before
    outside.unlink()
    listing.write_bytes(lzma.compress(f"{'0' * 64}  results/old.tar.xz/r.json\n".encode()))
    r = tool("karma-archive", "register", listing, copy)
    assert r.returncode == 2 and r.stderr == f"karma-archive: error: {listing}:1: not a `digest  " \
        "path` line (the digest: a sha256's first 16 hex digits)\n", r.stderr


def test_an_empty_folder_is_not_archived(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    r = tool("karma-archive", "write", tmp_path / "empty", "-o", tmp_path / "e.tar.xz")
    assert r.returncode == 2 and r.stderr == (f"karma-archive: error: {tmp_path / 'empty'}: "
                                              "holds no file; nothing to archive\n"), r.stderr
    assert not (tmp_path / "e.tar.xz").exists()


def test_register_passes_over_a_json_nested_too_deep(tmp_path):
    """A .json nested deeper than Python's parser goes is no measurement, not a crash."""
    folder = tmp_path / "results" / "deep"
    write(str(folder / "deep.json"), "[" * 200000 + "]" * 200000)
    write(str(folder / "r.json"), '{"schema_version": 2, "app": "stream"}')
    copy = tmp_path / "results" / "deep.tar.xz"
    assert tool("karma-archive", "write", folder, "-o", copy).returncode == 0
    listing = tmp_path / "results" / "measurements.sha256.xz"
    r = tool("karma-archive", "register", listing, copy)
    assert r.returncode == 0 and "1 measurement(s) added, 1 listed" in r.stderr, r.stderr
