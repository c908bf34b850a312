"""The committed results/: every table a README there gives a command for is
made again from the archives (tables and reports are generated, never
committed); every measurement JSON listed in results/measurements.sha256.xz
is inside an archive, byte for byte, and the archives hold no other; every
results document there, karma's and the reference programs', validates."""

import json
import os
import re
import shlex
import subprocess

import pytest

from conftest import ROOT, tool
from karma_tools.results import archive, kerneltable

RESULTS = os.path.join(ROOT, "results")
MEASUREMENTS = os.path.join(RESULTS, "measurements.sha256.xz")
# Counted in the folders when they became archives (1965 karma results
# documents, 22 Google Benchmark files), then raised with the list by each
# archive or bundle added since and lowered by each retired (results/README.md
# counts them by kind).
MEASURED = 8407
OUTPUT_FLAGS = ("--markdown", "--csv", "--json", "-o")


def readme_commands():
    """[(README, [argv, ...])]: the karma-compare and karma-report commands
    of each README's ```sh blocks that read the committed results (a word
    under results/), continuation lines joined, in order; the others show
    how a run was made."""
    found = []
    for folder, dirs, files in os.walk(RESULTS):
        dirs.sort()
        if "README.md" not in files:
            continue
        path = os.path.join(folder, "README.md")
        text = open(path, encoding="utf-8").read()
        commands = []
        for block in re.findall(r"```sh\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                if line.split()[:1] not in (["karma-compare"], ["karma-report"]):
                    continue
                words = shlex.split(line)
                if any(re.match(r"^([a-z0-9]+=)?results/", w) for w in words):
                    commands.append(words)
        if commands:
            found.append((os.path.relpath(path, ROOT), commands))
    return found


COMMANDS = readme_commands()


def is_committed(path):
    """Tracked by git in a checkout (a report an earlier command left beside
    them, which git ignores, is no committed table); there in a tarball."""
    if not os.path.exists(os.path.join(ROOT, ".git")):
        return os.path.exists(os.path.join(ROOT, path))
    return subprocess.run(["git", "-C", ROOT, "ls-files", "--error-unmatch", path],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("readme,commands", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_the_tables_come_from_the_archives(tmp_path, readme, commands):
    """Each command as its README gives it, run in the repository's top
    folder with its outputs written elsewhere: each must be made (none is
    committed: test_no_generated_table_is_committed). Outputs of earlier
    commands stand in for their paths in later ones."""
    for words in commands:
        for i, w in enumerate(words[:-1]):
            if w == "--source":
                revision = words[i + 1].split("=", 1)[1]
                known = subprocess.run(["git", "-C", ROOT, "cat-file", "-e",
                                        revision + "^{commit}"], capture_output=True)
                if known.returncode != 0:
                    pytest.skip(f"{readme}: --source {words[i + 1]} needs the repository's "
                                "git history, which this tree has not")
    written = {}
    for words in commands:
        argv, outputs = [], []
        for i, w in enumerate(words):
            if i and words[i - 1] in OUTPUT_FLAGS:
                written[w] = str(tmp_path / w)
                os.makedirs(os.path.dirname(written[w]), exist_ok=True)
                outputs.append(w)
            argv.append(written.get(w, w))
        if words[0] == "karma-report":
            argv.append("--no-plots")  # plots take minutes; the report is the subject
        r = tool(*argv, cwd=ROOT, timeout=600)
        assert r.returncode == 0, (words, r.stderr)
        for out in outputs:
            assert open(written[out], encoding="utf-8").read(), out


def test_no_generated_table_is_committed():
    """Ratio tables and comparisons are the READMEs' commands' output, which
    git ignores: none is committed."""
    made = {w for _, commands in COMMANDS for words in commands
            for i, w in enumerate(words) if i and words[i - 1] in OUTPUT_FLAGS}
    tables = sorted(made | {os.path.relpath(os.path.join(d, f), ROOT)
                            for d, _, files in os.walk(RESULTS) for f in files
                            if f.endswith(".ratios.md") or f == "comparison.md"})
    assert tables and not [t for t in tables if is_committed(t)]


def test_nothing_measured_is_lost():
    """The list was made from the folders before they became archives. Each
    entry must be in its archive with the same bytes; the archives must hold
    no measurement the list lacks, and the list must keep its length: a
    measurement dropped from both the archives and the list fails here."""
    listed = archive.read_measurements(MEASUREMENTS)
    assert len(listed) == MEASURED
    for path, digest in sorted(listed.items()):
        full = os.path.join(ROOT, path)
        assert archive.split(full), f"{path}: not inside an archive"
        assert archive.measurement_digest(archive.read_bytes(full)) == digest, path
    inside = {os.path.relpath(p, ROOT) for p in archive.walk_files(RESULTS, ".json")
              if archive.split(p) and archive.is_measurement(archive.read_bytes(p))}
    assert inside == set(listed)


def test_every_committed_results_file_validates():
    """karma-validate-results on results/ (the archives read as folders):
    every karma run and every reference result inside is checked, none
    skipped, each against its form, and all are valid. Each kernel's name
    and implementation is one the kernel table of the release that wrote it
    declares (kerneltable.of: the result's own, else its release's data),
    with the variant and units the table gives."""
    karma = reference = 0
    unknown, releases = set(), set()
    for path in archive.walk_files(RESULTS, ".json"):
        doc = json.loads(archive.read_bytes(path))
        if isinstance(doc, dict) and "schema_version" in doc:
            reference += "reference" in doc
            karma += "reference" not in doc
            table = kerneltable.of(doc)
            releases.add("own" if "kernel_table" in doc else kerneltable.release_of(doc))
            for k in doc["kernels"]:
                if not any(k.get("implementation", d["implementation"][0]) in d["implementation"]
                           and k.get("variant", d["variant"]) == d["variant"]
                           and k["fom"]["units"] == d["entry"]["units"]
                           for d in table.declared.get(k["name"], [])):
                    unknown.add((doc["app"], doc["suite"]["version"], k["name"],
                                 k.get("implementation")))
    assert not unknown, sorted(unknown)
    assert "1.0.0" in releases
    # The count of reference results when they first validated.
    assert reference >= 149 and karma >= 1780
    r = tool("karma-validate-results", RESULTS, timeout=600)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr[-2000:]
    summary = r.stdout.splitlines()[-1]
    assert summary.startswith(f"karma-validate-results: {karma + reference} valid ({karma} "
                              f"karma runs, {reference} reference results), 0 not valid, "
                              "0 unreadable, "), summary
    print(summary)
    assert "skipped: a reference" not in r.stdout


def test_no_loose_measurements_and_no_generated_report():
    """A measurement lives in an archive; results/README.md is the written
    index, not karma-report's output."""
    # The README commands' outputs (report, comparison.json) are git-ignored:
    # in a checkout, what git tracks counts; elsewhere, every file.
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "results"], capture_output=True,
                            text=True)
    if listed.returncode == 0:
        files = [os.path.join(ROOT, f) for f in listed.stdout.split()]
    else:
        files = [os.path.join(d, f) for d, _, names in os.walk(RESULTS) for f in names]
    loose = [f for f in files if f.endswith(".json")]
    assert not loose
    assert not open(os.path.join(RESULTS, "README.md")).read().count("_Made by `karma-report")


def test_results_stay_small():
    """The issue's targets: results/ at most 15 MB, the repository at most 840
    tracked files (800 until karma 1.1's sources and campaigns: Google
    Benchmark's runner in microbench, contact's growth campaign; 820 until
    the tools' packages by domain and run_main's files by concern). In a
    checkout what git tracks counts: the README's first command writes its
    results into results/ (git ignores them)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                             timeout=60)
    except OSError:
        out = None
    if out is not None and out.returncode == 0:
        tracked = out.stdout.splitlines()
        size = sum(os.path.getsize(os.path.join(ROOT, f)) for f in tracked
                   if f.startswith("results/"))
    else:
        tracked = None
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(RESULTS)
                   for f in files)
    assert size <= 15e6
    if tracked is None:
        pytest.skip("not a git checkout: only the size checked")
    assert len(tracked) <= 840
