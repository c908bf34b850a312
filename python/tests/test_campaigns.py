"""Side-by-side campaigns: karma-batch's local scheduler (with a stand-in
mini-app and a stand-in BabelStream), the BabelStream CSV reader, the ratio
tables of karma-compare --campaign and karma-report, implementation and
variant of schema_version 1 results, every campaign file under
campaigns/, and the grammar of a campaign for a node of G GPUs ({gpus}
counts, min_ranks, each_device)."""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import ROOT, load_json, load_manifest, stand_in_bin, stand_ins, tool, tool_path, write
from karma_tools import ToolError
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.campaign.batch import run_order

STREAM_DECK = os.path.join(ROOT, "inputs", "stream", "default.yaml")
# procurement/disclosure.yaml is karma-bundle's disclosure template, no campaign.
CAMPAIGNS = [p for p in sorted(glob.glob(os.path.join(ROOT, "campaigns", "*", "*.yaml")))
             if os.path.basename(p) != "disclosure.yaml"]

# A stand-in mini-app: DECK [--set K=V]... --output FILE. Its kernels' FOMs
# are FAKE_FOM (default 100) times 1, 2, 3, ... plus fake.bonus from the deck
# (a --set that the real mini-apps would refuse; the stand-in takes any key).
FAKE_APP = """#!{python}
import json, os, sys
from karma_tools.campaign.reference import resolve_deck
args, sets, out, i = sys.argv[1:], [], None, 1
while i < len(args):
    if args[i] == "--set":
        sets.append(args[i + 1]); i += 2
    elif args[i] == "--output":
        out = args[i + 1]; i += 2
    else:
        i += 1
resolved = resolve_deck(args[0], sets)
if resolved.get("fake", {{}}).get("fail"):
    print("karma-fake: error: asked to fail", file=sys.stderr)
    sys.exit(2)
app = next(k for k in resolved if k not in ("run", "fake"))
base = float(os.environ.get("FAKE_FOM", "100")) + resolved.get("fake", {{}}).get("bonus", 0)
kernels = [{{"name": n, "fom": {{"value": base * (j + 1), "units": "GB/s",
                                 "higher_is_better": True}},
            "bandwidth_GBps": {{"best": base * (j + 1)}}, "time_s": {{"min": 1.0}}}}
           for j, n in enumerate(resolved[app].get("kernels", ["copy"]))]
doc = {{"schema_version": 1, "app": app, "deck": {{"path": args[0], "overrides": sets,
       "resolved": resolved}}, "mpi": {{"ranks": 1, "nodes": 1}}, "kernels": kernels,
       "result": "PASSED", "verification": {{"passed": True}}}}
with open(out, "w") as f:
    json.dump(doc, f)
with open(os.path.join(os.path.dirname(out), "order"), "a") as f:
    f.write("x")
print("RESULT: PASSED")
"""

# A stand-in BabelStream: -s N [--float] --csv; max MB/s from FAKE_BS_MBPS.
FAKE_BABELSTREAM = """#!/bin/sh
n=33554432 size=8
while [ $# -gt 0 ]; do
  case $1 in -s) n=$2; shift 2 ;; --float) size=4; shift ;; *) shift ;; esac
done
echo 'BabelStream'
echo 'Version: 5.0'
echo "function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime"
for f in Copy Mul Add Triad Dot Nstream; do
  echo "$f,100,$n,$size,${FAKE_BS_MBPS:-200000},0.001,0.002,0.0015"
done
exit "${FAKE_BS_EXIT:-0}"
"""


def executable(path, text):
    write(str(path), text)
    os.chmod(path, 0o755)
    return str(path)


@pytest.fixture
def fakes(tmp_path):
    app = FAKE_APP.format(python=sys.executable)
    return {"app": executable(tmp_path / "fake-app", app),
            "babelstream": executable(tmp_path / "fake-babelstream", FAKE_BABELSTREAM)}


def local_campaign(tmp_path, fakes, extra_runs="", extra=""):
    """Karma (the stand-in) against BabelStream (the stand-in) at two sizes,
    two rounds, alternate order."""
    return write(str(tmp_path / "c.yaml"), f"""\
name: side
scheduler: local
gpus_per_rank: 0
round_order: alternate
variables: {{babelstream: {fakes['babelstream']}}}
runs:
  - name: bs
    app: stream
    reference: babelstream
    executable: "{{babelstream}}"
    deck: {STREAM_DECK}
    sweep: {{stream.shape: ["[2^20]", "[2^22]"]}}
    args: [-s, "{{stream.shape[0]}}", --csv]
    repeat: 2
  - name: karma
    app: stream
    executable: {fakes['app']}
    deck: {STREAM_DECK}
    sweep: {{stream.shape: ["[2^20]", "[2^22]"]}}
    repeat: 2
{extra_runs}compare:
  - name: karma-vs-bs
    metric: bandwidth_GBps.best
    numerator: {{implementation: kokkos}}
    denominator: {{implementation: babelstream}}
    match: [stream.shape, stream.precision]
    same_variant: true
    aggregate: [worst, best, median]
{extra}""")


def generate(campaign, out, *extra):
    """generate with stand-in mini-apps (conftest.stand_ins) as its --bin-dir."""
    return tool("karma-batch", "generate", campaign, "-o", out, "--no-key-check",
                "--bin-dir", stand_in_bin(), *extra)


def test_local_scheduler_runs_the_jobs_round_by_round(tmp_path, fakes):
    out = str(tmp_path / "out")
    r = generate(local_campaign(tmp_path, fakes), out, "--var",
                 f"babelstream={fakes['babelstream']}")
    assert r.returncode == 0, r.stderr
    manifest = load_manifest(out)
    assert manifest["scheduler"] == "local" and manifest["round_order"] == "alternate"
    assert os.path.isfile(os.path.join(out, "jobs", "karma.n1x1.shape2p20.r1.sh"))
    # One rank on the local scheduler: no launcher in front of the mini-app.
    script = open(os.path.join(out, "jobs", "karma.n1x1.shape2p20.r1.sh")).read()
    assert f"\n{fakes['app']} {STREAM_DECK} --set 'stream.shape=[2^20]'" in script
    assert "#SBATCH" not in script and "#PBS" not in script
    # BabelStream gets the job's size written out, through the campaign variable.
    bs = open(os.path.join(out, "jobs", "bs.n1x1.shape2p22.r2.sh")).read()
    assert f"{fakes['babelstream']} -s 4194304 --csv >\"$results/reference.out\" 2>&1" in bs

    r = tool("karma-batch", "submit", out)
    assert r.returncode == 0, r.stdout + r.stderr
    ran = re.findall(r"\] running (\S+)", r.stdout)
    # Round 1 in campaign order, round 2 in reverse (alternate).
    assert ran == ["bs.n1x1.shape2p20.r1", "bs.n1x1.shape2p22.r1", "karma.n1x1.shape2p20.r1",
                   "karma.n1x1.shape2p22.r1", "karma.n1x1.shape2p22.r2",
                   "karma.n1x1.shape2p20.r2", "bs.n1x1.shape2p22.r2", "bs.n1x1.shape2p20.r2"]
    assert "8 job(s): 8 passed" in r.stdout
    # a progress line after each job: done of total, elapsed, the time left
    assert re.search(r"\] karma\.n1x1\.shape2p20\.r1: passed; 3 of 8 jobs done, "
                     r"0:00:\d\d elapsed, about 0:0\d:\d\d left", r.stdout), r.stdout
    assert re.search(r"\[8/8\] \S+: passed; 8 of 8 jobs done, 0:00:\d\d elapsed\n", r.stdout)
    for entry in load_manifest(out)["jobs"]:
        d = entry["results_dir"]
        assert entry["job_id"].startswith("local-")
        assert open(os.path.join(d, "exit_code")).read() == "0\n"
        assert os.path.isfile(os.path.join(d, "environment", "environment.json"))
        assert os.path.isfile(os.path.join(d, "job.out"))
        doc = load_json(os.path.join(d, "karma-stream.json"))
        kernels = {k["name"]: k for k in doc["kernels"]}
        if entry["run"] == "bs":
            assert doc["schema_version"] == 2 and doc["reference"]["format"] == "babelstream"
            assert kernels["copy"]["implementation"] == "babelstream"
            # The job script says when and where the program ran.
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"])
            assert doc["hosts"] == [socket.gethostname()]
            assert kernels["copy"]["fom"]["value"] == pytest.approx(200.0)  # 200000 MB/s
            assert doc["deck"]["resolved"]["stream"]["shape"] == \
                [2**20 if "2p20" in entry["name"] else 2**22]
    r = tool("karma-batch", "status", out)
    assert r.returncode == 0 and "8 passed" in r.stdout
    r = tool("karma-batch", "submit", out)
    assert "already submitted" in r.stdout


def test_a_moved_campaign_directory_keeps_its_jobs(tmp_path, fakes):
    """The manifest's paths are relative to the campaign directory: moved
    (to another machine, say), status still finds every job done, and
    karma-compare --campaign and karma-report read it; an older manifest's
    absolute paths are read too. Submit refuses: the scripts write where
    they were generated."""
    out = str(tmp_path / "out")
    assert generate(local_campaign(tmp_path, fakes), out, "--var",
                    f"babelstream={fakes['babelstream']}").returncode == 0
    r = tool("karma-batch", "submit", out, "--only", "*shape2p20.r1")
    assert r.returncode == 0, r.stdout + r.stderr
    stored = load_json(os.path.join(out, "campaign.json"))
    assert stored["results_dir"] == "results"
    assert stored["jobs"][0]["results_file"] == os.path.join(
        "results", stored["jobs"][0]["name"], "karma-stream.json")
    moved = str(tmp_path / "elsewhere" / "moved")
    os.makedirs(os.path.dirname(moved))
    os.rename(out, moved)
    r = tool("karma-batch", "status", moved)
    assert "2 passed, 6 not submitted" in r.stdout and "lost" not in r.stdout, r.stdout
    r = tool("karma-compare", "--campaign", moved)
    assert r.returncode == 0 and "| [2^20] |" in r.stdout, r.stdout + r.stderr
    r = tool("karma-report", moved, "-o", str(tmp_path / "report"))
    assert r.returncode == 0, r.stdout + r.stderr
    r = tool("karma-batch", "submit", moved)
    assert r.returncode == 2 and f"generated in {out}" in r.stderr, r.stderr
    # A manifest of before: absolute paths, into the place it was made.
    old = load_json(os.path.join(moved, "campaign.json"))
    old.pop("generated_in")
    old["results_dir"] = os.path.join(out, old["results_dir"])
    for job in old["jobs"]:
        for key in ("results_dir", "results_file"):
            job[key] = os.path.join(out, job[key])
    write(os.path.join(moved, "campaign.json"), json.dumps(old))
    r = tool("karma-batch", "status", moved)
    assert "2 passed, 6 not submitted" in r.stdout and "lost" not in r.stdout, r.stdout


def test_a_failing_local_job_fails_the_submit(tmp_path, fakes):
    bad = f"""\
  - name: broken
    app: stream
    executable: {fakes['app']}
    deck: {STREAM_DECK}
    set: {{fake.fail: true}}
"""
    out = str(tmp_path / "out")
    assert generate(local_campaign(tmp_path, fakes, extra_runs=bad), out, "--var",
                    f"babelstream={fakes['babelstream']}").returncode == 0
    r = tool("karma-batch", "submit", out, "--only", "broken*", "--only", "karma*")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "broken.n1x1: failed (exit 2, no results file" in r.stdout
    assert "5 job(s): 4 passed, 1 failed" in r.stdout
    entry = next(j for j in load_manifest(out)["jobs"]
                 if j["name"] == "broken.n1x1")
    assert open(os.path.join(entry["results_dir"], "exit_code")).read() == "2\n"
    assert "asked to fail" in open(os.path.join(entry["results_dir"], "job.out")).read()
    r = tool("karma-batch", "status", out, "--only", "broken*")
    assert r.returncode == 1 and "1 failed" in r.stdout
    # Jobs not selected stay unsubmitted; status says what is left.
    r = tool("karma-batch", "status", out)
    assert r.returncode == 1 and "4 not submitted" in r.stdout


def test_local_jobs_honour_the_launcher_settings(tmp_path, fakes):
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: ranks
scheduler: local
gpus_per_rank: 0
runs:
  - {{name: one, app: stream, deck: {STREAM_DECK}}}
  - {{name: two, app: stream, deck: {STREAM_DECK}, ranks_per_node: 2}}
  - {{name: mine, app: stream, deck: {STREAM_DECK}, ranks_per_node: 2,
      launcher: "mpirun --oversubscribe -np {{ranks}}"}}
""")
    out = str(tmp_path / "out")
    bin_dir = stand_in_bin()
    r = tool("karma-batch", "generate", campaign, "-o", out, "--bin-dir", bin_dir)
    assert r.returncode == 0, r.stderr
    text = {n: open(os.path.join(out, "jobs", n + ".sh")).read()
            for n in ("one.n1x1", "two.n1x2", "mine.n1x2")}
    assert f"\n{bin_dir}/karma-stream " in text["one.n1x1"]
    # More ranks: mpiexec with the options of the MPI karma-stream is linked with.
    assert 'karma_launch="mpiexec -n 2 --map-by ppr:2:node --bind-to none"' in text["two.n1x2"]
    assert 'karma_launch="mpiexec -n 2 -ppn 2"' in text["two.n1x2"]
    assert f"\n$karma_launch {bin_dir}/karma-stream " in text["two.n1x2"]
    assert f"\nmpirun --oversubscribe -np 2 {bin_dir}/karma-stream " in text["mine.n1x2"]
    # Those words give each rank the node's cores: Open MPI's default binds each of two ranks
    # to one core, where a mini-app's host threads (its checks) then queue.
    words = re.search(r'libmpi\.so\.40.*karma_launch="([^"]+)"', text["two.n1x2"]).group(1)
    # The CPUs this test may use, not the machine's: a CI runner's cpuset may hold fewer.
    cpus = len(os.sched_getaffinity(0))
    if "Open MPI" in subprocess.run(["mpiexec", "--version"], capture_output=True,
                                    text=True).stdout and cpus > 1:
        r = subprocess.run(words.split() + [sys.executable, "-c",
                                            "import os; print(len(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.split() == [str(cpus)] * 2, r.stdout + r.stderr
    # Several nodes cannot run here.
    write(campaign, open(campaign).read() + f"  - {{name: far, app: stream, deck: "
          f"{STREAM_DECK}, nodes: 2}}\n")
    r = tool("karma-batch", "generate", campaign, "-o", str(tmp_path / "o2"), "--bin-dir",
             bin_dir)
    assert r.returncode == 2 and "c.yaml:9:" in r.stderr and \
        "runs[3].nodes: the local scheduler runs on this one node" in r.stderr


BABELSTREAM_OUT = """\
CUDA Driver: 13000
Memory Allocation: DEFAULT
function,num_times,n_elements,sizeof,max_MB_per_sec,min_runtime,max_runtime,avg_runtime
Copy,100,33554432,8,3.82624e+06,0.000140313,0.000147023,0.000142633
Dot,100,33554432,8,3.92343e+06,0.000136837,0.000151008,0.000139314
"""


def test_babelstream_csv_reader():
    from karma_tools import ToolError
    from karma_tools.campaign.reference import read_babelstream_csv

    kernels = read_babelstream_csv(BABELSTREAM_OUT)
    assert [k["name"] for k in kernels] == ["copy", "dot"]
    copy = kernels[0]
    assert copy["implementation"] == "babelstream" and copy["variant"] == "copy"
    assert copy["fom"]["value"] == pytest.approx(3826.24)  # MB/s -> GB/s
    assert copy["bandwidth_GBps"]["best"] == pytest.approx(3826.24)
    assert copy["time_s"]["min"] == pytest.approx(0.000140313)
    assert copy["bytes"] == 2 * 33554432 * 8
    # The newer header, and MiB/s.
    text = BABELSTREAM_OUT.replace("max_MB_per_sec", "max_mibytes_per_sec")
    assert read_babelstream_csv(text)[0]["fom"]["value"] == \
        pytest.approx(3.82624e6 * 2**20 / 1e9)
    for bad, message in (("no table here\n", "no BabelStream --csv table"),
                         (BABELSTREAM_OUT.replace("3.82624e+06", "fast"), "<x>:4: not a "
                          "BabelStream row"),
                         (BABELSTREAM_OUT.split("Copy")[0], "the BabelStream table has no rows"),
                         (BABELSTREAM_OUT.replace(",avg_runtime", ""), "header lacks")):
        with pytest.raises(ToolError) as e:
            read_babelstream_csv(bad, "<x>")
        assert message in str(e.value) and e.value.code == 2


def test_reference_result_command_writes_karma_results(tmp_path):
    csv_file = write(str(tmp_path / "out.txt"), BABELSTREAM_OUT)
    out = tmp_path / "karma-stream.json"
    r = tool("karma-batch", "reference-result", "babelstream", "--input", csv_file,
             "--exit-status", "1", "--app", "stream", "--deck", STREAM_DECK, "--set",
             "stream.shape=[2^25]", "--command", "cuda-stream -s 33554432 --csv",
             "--output", out)
    assert r.returncode == 0, r.stderr
    assert "exited 1; its timings are kept" in r.stderr
    doc = load_json(out)
    assert doc["deck"]["resolved"]["stream"]["shape"] == [33554432]
    assert doc["deck"]["resolved"]["stream"]["precision"] == "double"
    assert doc["reference"]["exit_status"] == 1 and doc["result"] == "PASSED"
    # It reads as karma results (what compare and report use).
    from karma_tools.results import resultset

    run = resultset.open(str(out)).runs[0]
    assert run.kernels["copy"]["implementation"] == "babelstream"
    empty = write(str(tmp_path / "empty.txt"), "CUDA error\n")
    r = tool("karma-batch", "reference-result", "babelstream", "--input", empty, "--app",
             "stream", "--deck", STREAM_DECK, "--output", tmp_path / "x.json")
    assert r.returncode == 2 and "no BabelStream --csv table" in r.stderr
    assert not (tmp_path / "x.json").exists()


def rounds_fixture(tmp_path, fakes):
    """A generated campaign whose results are written by hand: karma's copy
    at 2^20 is 300, 240 and 330 GB/s in rounds 1-3, BabelStream's 300."""
    campaign = local_campaign(tmp_path, fakes)
    text = open(campaign).read().replace("repeat: 2", "repeat: 3")
    write(campaign, text)
    out = str(tmp_path / "out")
    assert generate(campaign, out).returncode == 0
    manifest = load_manifest(out)
    karma = {1: 300.0, 2: 240.0, 3: 330.0}
    for entry in manifest["jobs"]:
        shape = 2**20 if "2p20" in entry["name"] else 2**22
        value = 300.0 if entry["run"] == "bs" else karma[entry["round"]]
        doc = {"schema_version": 1 if entry["run"] == "karma" else 2, "app": "stream",
               "deck": {"path": STREAM_DECK, "resolved": {"stream": {
                   "shape": [shape], "precision": "double", "layout": "right"}}},
               "mpi": {"ranks": 1, "nodes": 1}, "result": "PASSED",
               "kernels": [{"name": "copy", "fom": {"value": value, "units": "GB/s"},
                            "bandwidth_GBps": {"best": value}}]}
        if entry["run"] == "bs":
            doc["kernels"][0].update(implementation="babelstream", variant="copy")
            doc["reference"] = {"format": "babelstream"}
        os.makedirs(entry["results_dir"])
        write(entry["results_file"], json.dumps(doc))
    return out


def test_ratio_tables_worst_of_rounds(tmp_path, fakes):
    out = rounds_fixture(tmp_path, fakes)
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    tables = load_json(tmp_path / "t.json")["tables"]
    assert [t["name"] for t in tables] == ["karma-vs-bs"]
    rows = tables[0]["rows"]
    assert [(row["match"], row["numerator"], row["denominator"]) for row in rows] == [
        ([[2**20], "double"], "copy", "copy"), ([[2**22], "double"], "copy", "copy")]
    row = rows[0]
    assert row["rounds"] == {"1": pytest.approx(1.0), "2": pytest.approx(0.8),
                             "3": pytest.approx(1.1)}
    assert row["aggregates"] == {"worst": pytest.approx(0.8), "best": pytest.approx(1.1),
                                 "median": pytest.approx(1.0)}
    assert (row["numerator_implementation"], row["denominator_implementation"]) == \
        ("kokkos", "babelstream")
    # Markdown: the rounds and the worst, as the scripts printed them.
    r = tool("karma-compare", "--campaign", out)
    line = next(x for x in r.stdout.splitlines() if x.startswith("| [2^20] |"))
    assert "| 300 / 300 = 1.000 | 240 / 300 = 0.800 | 330 / 300 = 1.100 | 0.800-1.100 ~ | " \
        "**0.800** |" in line
    # A campaign directory copied elsewhere (committed under results/, say)
    # reads the results beside its campaign.json, even while the place it
    # ran in still holds other results; moved, it still finds them.
    copied = str(tmp_path / "copy" / "out")
    shutil.copytree(out, copied)
    for f in glob.glob(os.path.join(out, "results", "*", "*.json")):
        doc = load_json(f)
        for k in doc.get("kernels", []):
            for figure in ("fom", "bandwidth_GBps"):
                for key in ("value", "best", "median", "worst"):
                    if isinstance(k.get(figure), dict) and key in k[figure]:
                        k[figure][key] *= 2 if "reference" in doc else 3
        write(f, json.dumps(doc))
    r = tool("karma-compare", "--campaign", copied, "--json", tmp_path / "c.json")
    assert r.returncode == 0, r.stderr
    assert load_json(tmp_path / "c.json")["tables"][0]["rows"][0]["rounds"] == row["rounds"]
    shutil.rmtree(out)
    moved = str(tmp_path / "elsewhere" / "out")
    os.renames(copied, moved)
    r = tool("karma-compare", "--campaign", moved, "--json", tmp_path / "m.json")
    assert r.returncode == 0, r.stderr
    assert load_json(tmp_path / "m.json")["tables"][0]["rows"][0]["rounds"] == row["rounds"]
    out = moved
    # --aggregate picks one; a missing result is a note, not a crash.
    # The note says why, from what the job's folder holds.
    folder = os.path.join(out, "results", "{}")
    for name, code, log in (("karma.n1x1.shape2p22.r3", None, None),
                            ("karma.n1x1.shape2p22.r2", "143", None),
                            ("karma.n1x1.shape2p20.r2", "1 4", None),
                            ("karma.n1x1.shape2p20.r3", "2",
                             "karma-stream: error: d.yaml:3: stream.shape: not a list\n"
                             "RESULT: FAILED reason=bad-input\n")):
        os.unlink(glob.glob(os.path.join(folder.format(name), "*.json"))[0])
        if code:
            write(os.path.join(folder.format(name), "exit_code"), code + "\n")
        if log:
            write(os.path.join(folder.format(name), "job.out"), "started\n" + log)
    r = tool("karma-compare", "--campaign", out, "--aggregate", "median")
    assert r.returncode == 0, r.stderr
    assert "karma.n1x1.shape2p22.r3: no results: not run, or stopped before it ended" \
        in r.stdout
    assert "karma.n1x1.shape2p22.r2: no results: stopped by SIGTERM (exit 143)" in r.stdout
    assert "karma.n1x1.shape2p20.r2: no results: failed, exit code unreadable" in r.stdout
    assert ("karma.n1x1.shape2p20.r3: no results: failed, exit 2 (bad-input): karma-stream: "
            "error: d.yaml:3: stream.shape: not a list") in r.stdout
    assert "**median**" in r.stdout and "**worst**" not in r.stdout


def test_same_kernel_pairs_one_build_with_another(tmp_path, fakes):
    """A build beside a previous one: kernels pair by name, although the
    previous build's results (schema_version 1) infer another variant than
    the new ones record, and two kernels share a variant."""
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: builds
scheduler: local
gpus_per_rank: 0
round_order: alternate
variables: {{previous: old/bin}}
runs:
  - {{name: new, app: stream, deck: {STREAM_DECK}, executable: {fakes['app']}, repeat: 2}}
  - {{name: previous, app: stream, deck: {STREAM_DECK}, executable: "{{previous}}/karma-stream",
     repeat: 2}}
compare:
  - name: by-kernel
    numerator: {{run: new}}
    denominator: {{run: previous}}
    match: [stream.shape]
    same_kernel: true
    aggregate: [worst, median]
  - name: by-variant
    numerator: {{run: new}}
    denominator: {{run: previous}}
    match: [stream.shape]
    same_variant: true
""")
    stand_ins(tmp_path / "old" / "bin", ["stream"])  # {previous}/karma-stream: never run
    out = str(tmp_path / "out")
    assert generate(campaign, out).returncode == 0
    manifest = load_manifest(out)
    assert manifest["compare"][0]["same_kernel"] is True
    assert manifest["compare"][1]["same_kernel"] is False
    rates = {("new", 1): (110.0, 45.0), ("new", 2): (99.0, 50.0),
             ("previous", 1): (100.0, 50.0), ("previous", 2): (100.0, 50.0)}
    for entry in manifest["jobs"]:
        build, stats = rates[(entry["run"], entry["round"])]
        kernels = [{"name": "ll.build", "fom": {"value": build, "units": "pairs/s"}},
                   {"name": "ll.stats", "fom": {"value": stats, "units": "GB/s"}}]
        if entry["run"] == "new":
            for k in kernels:
                k.update(implementation="kokkos", variant="ll")
        doc = {"schema_version": 2 if entry["run"] == "new" else 1, "app": "stream",
               "deck": {"path": STREAM_DECK, "resolved": {"stream": {"shape": [2**20]}}},
               "mpi": {"ranks": 1, "nodes": 1}, "result": "PASSED", "kernels": kernels}
        os.makedirs(entry["results_dir"])
        write(entry["results_file"], json.dumps(doc))
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    by_kernel, by_variant = load_json(tmp_path / "t.json")["tables"]
    rows = {row["numerator"]: row for row in by_kernel["rows"]}
    assert sorted(rows) == ["ll.build", "ll.stats"] and not by_kernel["notes"]
    assert all(row["denominator"] == name for name, row in rows.items())
    assert rows["ll.build"]["aggregates"]["worst"] == pytest.approx(0.99)
    assert rows["ll.stats"]["aggregates"] == {"worst": pytest.approx(0.9),
                                              "median": pytest.approx(0.95)}
    # By variant, the schema_version 1 kernels ("ll.build") meet no "ll".
    assert not by_variant["rows"] and any("no denominator" in n for n in by_variant["notes"])


def test_processes_in_a_round_take_each_sides_best(tmp_path, fakes):
    """processes: 3 runs each point three times a round, every run's first
    process before any second one; per_round: best pairs each side's best of
    a round, median their median, and a comparison without it says why it
    has no rows."""
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: offsets
scheduler: local
gpus_per_rank: 0
round_order: alternate
runs:
  - {{name: new, app: stream, deck: {STREAM_DECK}, executable: {fakes['app']}, repeat: 2,
     processes: 3}}
  - {{name: old, app: stream, deck: {STREAM_DECK}, executable: {fakes['app']}, repeat: 2,
     processes: 3}}
compare:
  - {{name: best, numerator: {{run: new}}, denominator: {{run: old}}, match: [stream.shape],
     same_kernel: true, per_round: best}}
  - {{name: median, numerator: {{run: new}}, denominator: {{run: old}}, match: [stream.shape],
     same_kernel: true, per_round: median}}
""")
    # A comparison of such runs that does not say how is refused where it is.
    unsaid = write(str(tmp_path / "unsaid.yaml"), open(campaign).read().replace(
        "same_kernel: true, per_round: median", "same_kernel: true"))
    r = generate(unsaid, str(tmp_path / "refused"))
    assert r.returncode == 2 and not os.path.exists(tmp_path / "refused")
    assert re.search(r"unsaid.yaml:\d+:\d+: compare\[1\]: run new has several processes a "
                     r"round: .*per_round: best or median", r.stderr), r.stderr
    out = str(tmp_path / "out")
    assert generate(campaign, out).returncode == 0
    manifest = load_manifest(out)
    assert [c["per_round"] for c in manifest["compare"]] == ["best", "median"]
    names = [j["name"] for j in manifest["jobs"]]
    assert len(names) == 12 and "new.n1x1.p2.r1" in names
    # One slow process a round per side, in another place each time.
    fom = {("new", 1): [90.0, 100.0, 99.0], ("new", 2): [101.0, 100.0, 80.0],
           ("old", 1): [100.0, 95.0, 100.0], ("old", 2): [70.0, 100.0, 98.0]}
    for entry in manifest["jobs"]:
        value = fom[(entry["run"], entry["round"])][entry["process"] - 1]
        doc = {"schema_version": 2, "app": "stream",
               "deck": {"path": STREAM_DECK, "resolved": {"stream": {"shape": [2**20]}}},
               "mpi": {"ranks": 1, "nodes": 1}, "result": "PASSED",
               "kernels": [{"name": "copy", "implementation": "kokkos", "variant": "copy",
                            "fom": {"value": value, "units": "GB/s"}}]}
        os.makedirs(entry["results_dir"])
        write(entry["results_file"], json.dumps(doc))
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    best, median = load_json(tmp_path / "t.json")["tables"]
    assert best["rows"][0]["rounds"] == {"1": pytest.approx(1.0), "2": pytest.approx(1.01)}
    assert median["rows"][0]["rounds"] == {"1": pytest.approx(0.99),
                                           "2": pytest.approx(100.0 / 98.0)}
    assert not best["notes"] and not median["notes"]
    r = tool("karma-compare", "--campaign", out)
    assert "each side's best of its processes in a round" in r.stdout
    # A manifest edited by hand to say nothing: no row, and a note that says why.
    manifest["compare"][1]["per_round"] = None
    write(os.path.join(out, "campaign.json"), json.dumps(manifest))
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "u.json")
    unsaid = load_json(tmp_path / "u.json")["tables"][1]
    assert not unsaid["rows"]
    assert any("3 results, one a process" in n and "per_round" in n for n in unsaid["notes"])
    # Submitted process by process: new p1, old p1, new p2, ... (reversed in round 2).
    order = [e["name"] for e in run_order(manifest, manifest["jobs"])]
    assert order[:4] == ["new.n1x1.p1.r1", "old.n1x1.p1.r1", "new.n1x1.p2.r1",
                         "old.n1x1.p2.r1"]
    assert order[6:8] == ["old.n1x1.p1.r2", "new.n1x1.p1.r2"]


def test_report_includes_the_ratio_tables(tmp_path, fakes):
    out = rounds_fixture(tmp_path, fakes)
    report = tmp_path / "report.md"
    r = tool("karma-report", out, "--no-plots", "-o", report)
    assert r.returncode == 0, r.stderr
    text = report.read_text()
    assert "## Side by side: campaign side" in text
    assert "### karma-vs-bs" in text
    assert "| 300 / 300 = 1.000 | 240 / 300 = 0.800 | 330 / 300 = 1.100 | 0.800-1.100 ~ | " \
        "**0.800** |" in text
    # BabelStream's runs are a configuration of their own, not karma's best.
    rows = [x for x in text.splitlines() if x.startswith("| default |")]
    assert any("babelstream" in x and "| 300 |" in x for x in rows), rows


def test_compare_says_when_jobs_were_left_out_for_the_node(tmp_path, fakes):
    """A campaign generated for a node of fewer GPUs than its largest rank
    count, or with runs of fewer ranks than their min_ranks: the manifest
    lists the jobs left out and why, and the tables come with a note."""
    wide = f"""\
  - name: wide
    app: stream
    executable: {fakes['app']}
    deck: {STREAM_DECK}
    ranks_per_node: [2]
  - name: few
    app: stream
    executable: {fakes['app']}
    deck: {STREAM_DECK}
    min_ranks: 2
"""
    out = str(tmp_path / "out")
    r = generate(local_campaign(tmp_path, fakes, extra_runs=wide), out,
                 "--max-ranks-per-node", "1")
    assert r.returncode == 0, r.stderr
    manifest = load_manifest(out)
    assert not {"wide", "few"} & {j["run"] for j in manifest["jobs"]}
    assert [(j["run"], j["ranks"], j["by"]) for j in manifest["left_out"]] == [
        ("few", 1, "min_ranks"), ("wide", 2, "max_ranks_per_node")]
    r = tool("karma-compare", "--campaign", out)
    assert r.returncode == 0, r.stderr
    assert ("generated with --max-ranks-per-node 1: the campaign's jobs of more ranks a node "
            "were left out") in r.stdout, r.stdout
    assert ("generated without 1 job(s) of fewer ranks than their run's min_ranks (few): no "
            "table has their rows") in r.stdout, r.stdout
    with open(os.path.join(out, "campaign.json"), "w") as f:
        json.dump(dict(manifest, left_out=[3]), f)
    r = tool("karma-compare", "--campaign", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "campaign.json: left_out[0]: expected an object, got the number 3 (edit" in r.stderr


def test_compare_campaign_needs_a_campaign_directory(tmp_path):
    r = tool("karma-compare", "--campaign", tmp_path)
    assert r.returncode == 2 and "no campaign.json" in r.stderr
    r = tool("karma-compare", "--campaign", tmp_path, tmp_path)
    assert r.returncode == 2 and "give no result sets beside it" in r.stderr


BAD = [
    ("unknown compare key", "compare:\n  - {name: a, numerator: {run: karma}, "
     "denominator: {run: bs}, matchh: [stream.shape]}\n",
     "compare[0].matchh: unknown key (did you mean 'match'?)"),
    ("run matches nothing", "compare:\n  - name: a\n    numerator: {run: karmaa}\n"
     "    denominator: {run: bs}\n", "compare[0].numerator.run: 'karmaa' matches no run of "
     "this campaign (did you mean 'karma'? known: bs, karma)"),
    ("implementation typo", "compare:\n  - {name: a, numerator: {implementation: kokos}, "
     "denominator: {run: bs}}\n", "c.yaml:22:43: compare[0].numerator.implementation: 'kokos' "
     "matches no implementation of karma-stream (did you mean 'kokkos'? known: babelstream, "
     "kokkos)"),
    ("another mini-app's implementation", "compare:\n  - name: a\n    numerator: {run: karma}"
     "\n    denominator: {implementation: cbals}\n", "compare[0].denominator.implementation: "
     "'cbals' matches no implementation of karma-stream ('cblas' is karma-matvec's, which "
     "these runs are not; known: babelstream, kokkos)"),
    ("kernel typo", "compare:\n  - name: a\n    numerator: {run: karma, kernel: [copy, tirad]}"
     "\n    denominator: {run: bs}\n", "c.yaml:23:44: compare[0].numerator.kernel: 'tirad' "
     "matches no kernel of karma-stream (did you mean 'triad'?"),
    ("variant of the runs selected", "compare:\n  - name: a\n    numerator: {run: karma}\n"
     "    denominator: {run: bs, variant: gradients*}\n", "compare[0].denominator.variant: "
     "'gradients*' matches no variant of karma-stream"),
    ("match key typo", "compare:\n  - {name: a, numerator: {run: karma}, denominator: {run: bs},"
     " match: [stream.shape, job.pont]}\n", "compare[0].match[1]: 'job.pont' is not a deck key "
     "of karma-stream nor one of mpi.ranks, mpi.nodes, mpi.comm, job.run, job.point (did you "
     "mean 'job.point'?)"),
    ("label section typo", "compare:\n  - {name: a, numerator: {run: karma}, denominator: "
     "{run: bs}, label: stram.precision}\n", "compare[0].label[0]: 'stram.precision' is not a "
     "deck key of karma-stream nor one of mpi.ranks, mpi.nodes, mpi.comm, job.run, job.point "
     "(did you mean 'stream.precision'?)"),
    ("selection deck key typo", "compare:\n  - name: a\n    numerator: {run: karma, deck: "
     "{mpi.rank: 1}}\n    denominator: {run: bs}\n", "compare[0].numerator.deck.mpi.rank: "
     "'mpi.rank' is not a deck key of karma-stream nor one of mpi.ranks, mpi.nodes, mpi.comm, "
     "job.run, job.point (did you mean 'mpi.ranks'?)"),
    ("bad aggregate", "compare:\n  - {name: a, numerator: {run: karma}, denominator: {run: bs},"
     " aggregate: [worst, mean]}\n", "compare[0].aggregate[1]: 'mean' is not one of: worst, best"),
    ("empty selection", "compare:\n  - {name: a, numerator: {}, denominator: {run: bs}}\n",
     "compare[0].numerator: is empty: name at least one of run, implementation"),
    ("bad match key", "compare:\n  - {name: a, numerator: {run: karma}, denominator: {run: bs},"
     " match: [shape]}\n", "compare[0].match[0]: 'shape' is not a deck key"),
    ("unknown variable", "variables: {x: 1}\nruns:\n  - name: karma\n    app: stream\n"
     "    deck: @DECK@\n    args: [\"{y}\"]\n",
     "runs[0].args[0]: {y}: not a campaign variable nor a set/sweep key of this run"),
    ("reference without executable", "runs:\n  - name: bs\n    app: stream\n"
     "    reference: babelstream\n    deck: @DECK@\n", "c.yaml:6:16: runs[0].reference: needs "
     "`executable:` beside it"),
    ("unknown reference", "runs:\n  - name: bs\n    app: stream\n    reference: hpl\n"
     "    executable: x\n    deck: @DECK@\n", "runs[0].reference: 'hpl' is not one of"),
    ("bad round order", "round_order: random\nruns:\n  - {name: a, app: stream, deck: @DECK@}\n",
     "round_order: 'random' is not one of: interleaved, alternate"),
]


@pytest.mark.parametrize("case, text, message", BAD, ids=[b[0] for b in BAD])
def test_bad_campaign_keys_write_nothing(tmp_path, fakes, case, text, message):
    if text.startswith("compare:"):
        body = open(local_campaign(tmp_path, fakes)).read()
        body = body[:body.index("compare:")] + text
    else:
        body = "name: x\nscheduler: local\n" + text.replace("@DECK@", STREAM_DECK)
    campaign = write(str(tmp_path / "c.yaml"), body)
    r = generate(campaign, str(tmp_path / "out"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr, r.stderr
    assert re.search(r"c\.yaml:[0-9]+:[0-9]+: ", r.stderr), r.stderr
    assert not (tmp_path / "out").exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".out")]


# A stand-in karma-stream that only lists its deck keys (--help=json).
LISTING_APP = """#!/bin/sh
cat <<'EOF'
{"properties": {"run": {"properties": {"repetitions": {"type": "integer"}}},
 "stream": {"properties": {"shape": {"type": "array", "items": {"type": "integer"}},
                           "precision": {"type": "string", "enum": ["float", "double"]}}}}}
EOF
"""


def test_compare_keys_are_the_mini_apps_own(tmp_path):
    """Where karma-batch can ask the mini-app for its deck keys, a match,
    label or deck selection key must be one of them (or the pairing's own);
    where it cannot (--no-key-check), the key's section is enough."""
    app = write(str(tmp_path / "karma-stream"), LISTING_APP)
    os.chmod(app, 0o755)

    def campaign(match):
        return write(str(tmp_path / "c.yaml"), f"""\
name: x
scheduler: local
runs:
  - {{name: a, app: stream, executable: {app}, deck: {STREAM_DECK}}}
  - {{name: b, app: stream, executable: {app}, deck: {STREAM_DECK}}}
compare:
  - name: a-vs-b
    numerator: {{run: a, deck: {{run.repetitions: 5}}}}
    denominator: {{run: b}}
    match: [{match}]
""")

    out = str(tmp_path / "out")
    r = tool("karma-batch", "generate", campaign("stream.shaep"), "-o", out)
    assert r.returncode == 2 and not os.path.exists(out), r.stderr
    assert "c.yaml:10:13: compare[0].match[0]: 'stream.shaep' is not a deck key of " \
        "karma-stream nor one of mpi.ranks, mpi.nodes, mpi.comm, job.run, job.point (did you " \
        "mean 'stream.shape'?)" in r.stderr, r.stderr
    r = tool("karma-batch", "generate", campaign("stream.shaep"), "-o", out, "--no-key-check")
    assert r.returncode == 0, r.stderr
    r = tool("karma-batch", "generate", campaign("stream.shape, stream.precision, job.point"),
             "-o", out, "--force")
    assert r.returncode == 0, r.stderr
    compare = load_manifest(out)["compare"][0]
    assert compare["match"] == ["stream.shape", "stream.precision", "job.point"]


def test_unknown_var_on_the_command_line(tmp_path, fakes):
    r = generate(local_campaign(tmp_path, fakes), str(tmp_path / "out"), "--var", "nope=1")
    assert r.returncode == 2 and "--var nope: " in r.stderr and "babelstream" in r.stderr
    assert not (tmp_path / "out").exists()


# --- A node of G GPUs (generate --var gpus=G): node and rank counts from a
# campaign variable, min_ranks leaving out the jobs of fewer ranks (listed),
# each_device making one single-rank job per device, pinned with
# --kokkos-device-id; all of them run here one after another.

LARGE = os.path.join(ROOT, "inputs", "stream", "large.yaml")
# The reportable campaign's shape: the large deck on all GPUs (only where
# there are two or more), strong scaling on G ranks, STREAM on each GPU alone.
NODE = f"""\
name: node
scheduler: pbs
variables: {{gpus: 1}}
runs:
  - name: all
    app: stream
    deck: {LARGE}
    ranks_per_node: "{{gpus}}"
    min_ranks: 2
  - name: strong
    app: stream
    deck: {LARGE}
    ranks_per_node: "{{gpus}}"
    scaling: strong
  - name: alone
    app: stream
    deck: {LARGE}
    each_device: "{{gpus}}"
    min_ranks: 2
    sweep: {{stream.precision: [double, float]}}
    args: [--quiet]
"""


def node_campaign(tmp_path, text=NODE):
    return write(str(tmp_path / "c.yaml"), text)


def load_jobs(path, **variables):
    return campaign_mod.load(path, check_keys=False, variables=variables).jobs


def refusal(path, **variables):
    with pytest.raises(ToolError) as e:
        load_jobs(path, **variables)
    assert e.value.code == 2 and "\n" not in str(e.value)
    return str(e.value)


def place(path, text):
    """FILE:LINE:COL of the first `text` in the file at path."""
    lines = open(path).read().split("\n")
    line = next(i for i, t in enumerate(lines) if text in t)
    return f"{path}:{line + 1}:{lines[line].index(text) + 1}"


def test_counts_take_a_campaign_variable(tmp_path):
    top = NODE.split("  - name: alone")[0].replace(
        "variables:", 'ranks_per_node: "{gpus}"\nvariables:')
    assert [(j.name, j.ranks) for j in load_jobs(node_campaign(tmp_path, top), gpus="4")] == \
        [("all.n1x4", 4), ("strong.strong.n1x4", 4)]
    path = node_campaign(tmp_path, NODE.replace("    min_ranks: 2\n  - name: strong",
                                                '    nodes: "{gpus}"\n  - name: strong', 1))
    assert load_jobs(path, gpus="3")[0].name == "all.n3x3"


@pytest.mark.parametrize("value", ["two", "0", "-1", "1.5", "2147483648", ""])
def test_a_count_variable_must_be_a_count(tmp_path, value):
    path = node_campaign(tmp_path)
    at = place(path, '"{gpus}"')
    assert refusal(path, gpus=value).startswith(
        f"{at}: runs[0].ranks_per_node: {{gpus}} is '{value}', not a count (1 to 2147483647)")


def test_an_unknown_variable_in_a_count_is_refused(tmp_path):
    path = node_campaign(tmp_path, NODE.replace('each_device: "{gpus}"',
                                                'each_device: "{gpu}"'))
    at = place(path, '"{gpu}"')
    assert refusal(path).startswith(f"{at}: runs[2].each_device: {{gpu}}: not a campaign "
                                    "variable (known: {gpus})")
    path = node_campaign(tmp_path, NODE.replace("variables:",
                                                'ranks_per_node: "{n}"\nvariables:'))
    assert refusal(path).startswith(f"{path}:3:17: ranks_per_node: {{n}}: not a campaign")


def test_each_device_makes_one_pinned_job_per_device(tmp_path):
    jobs = [j for j in load_jobs(node_campaign(tmp_path), gpus="3") if j.run == "alone"]
    assert [j.name for j in jobs] == [f"alone.n1x1.precision{p}.dev{k}"
                                      for p in ("double", "float") for k in range(3)]
    assert [j.args for j in jobs[:3]] == [["--quiet", f"--kokkos-device-id={k}"]
                                          for k in range(3)]
    assert {(j.nodes, j.ranks_per_node) for j in jobs} == {(1, 1)}


def test_one_gpu_leaves_out_the_runs_of_min_ranks_2(tmp_path):
    path = node_campaign(tmp_path)
    out = str(tmp_path / "out")
    r = generate(path, out)
    assert r.returncode == 0, r.stderr
    assert [j["name"] for j in load_manifest(out)["jobs"]] == ["strong.strong.n1x1"]
    assert "left out 3 job(s) of fewer ranks than their run's min_ranks: all, alone" in r.stdout
    r = generate(path, out, "--force", "--var", "gpus=2")
    assert r.returncode == 0 and "left out" not in r.stdout, r.stdout + r.stderr
    assert len(load_manifest(out)["jobs"]) == 6
    path = node_campaign(tmp_path, NODE.replace("  - name: strong",
                                                "  - name: strong\n    min_ranks: 2"))
    r = generate(path, str(tmp_path / "none"))
    assert r.returncode == 2 and not os.path.exists(tmp_path / "none")
    assert "every job of " in r.stderr and "is left out by its run's min_ranks" in r.stderr


def test_each_device_runs_one_rank_on_one_node_that_it_sees_whole(tmp_path):
    path = node_campaign(tmp_path, NODE.replace("    min_ranks: 2\n    sweep",
                                                "    ranks_per_node: 2\n    sweep"))
    assert refusal(path, gpus="2").startswith(
        f"{place(path, 'each_device')}: runs[2].each_device: one rank on each device of one "
        "node: needs nodes 1 and ranks_per_node 1, not 1 and 2")
    path = node_campaign(tmp_path, NODE.replace("scheduler: pbs", "scheduler: slurm"))
    r = generate(path, str(tmp_path / "slurm"), "--var", "gpus=2")
    assert r.returncode == 0, r.stderr
    jobs = json.load(open(tmp_path / "slurm" / "campaign.json"))["jobs"]
    script = open(tmp_path / "slurm" / "jobs" / "alone.n1x1.precisionfloat.dev1.sbatch").read()
    assert {j["gpus_per_rank"] for j in jobs if ".dev" in j["name"]} == {2}
    assert "--gpus-per-task=2" in script and "--kokkos-device-id=1" in script


def test_device_jobs_run_here_one_after_another(tmp_path, fakes):
    path = write(str(tmp_path / "c.yaml"), f"""\
name: alone
scheduler: local
gpus_per_rank: 0
variables: {{gpus: 1}}
runs:
  - {{name: alone, app: stream, executable: {fakes['app']}, deck: {LARGE},
     each_device: "{{gpus}}", repeat: 2}}
compare:
  - {{name: c, numerator: {{kernel: copy}}, denominator: {{kernel: triad}}, match: [job.point]}}
""")
    out = str(tmp_path / "out")
    assert generate(path, out, "--var", "gpus=2").returncode == 0
    r = tool("karma-batch", "submit", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.findall(r"\] running (\S+)", r.stdout) == [
        "alone.n1x1.dev0.r1", "alone.n1x1.dev1.r1", "alone.n1x1.dev0.r2", "alone.n1x1.dev1.r2"]
    r = tool("karma-batch", "status", out)
    assert r.returncode == 0 and "4 passed" in r.stdout, r.stdout
    r = tool("karma-compare", "--campaign", out)
    assert r.returncode == 0 and "alone.n1x1.dev1" in r.stdout, r.stdout + r.stderr


# Inside the archive of results/gpu-setup's runs: the tools read the path.
OLD_BUILD = os.path.join(ROOT, "results", "gpu-setup", "runs.tar.xz", "harness-port", "old")


def test_implementation_and_variant_of_schema_1_results():
    """Results of builds before the harness are schema_version 1 (the
    previous build's under harness-port/old in results/gpu-setup/runs.tar.xz): the
    implementation comes from the deck when it names one, else from the
    kernel name; the variant from the app's kernel table where it declares
    one (contact's storage, as schema 2 writes it)."""
    from karma_tools.results import resultset

    matvec = resultset.open(os.path.join(OLD_BUILD, "matvec-r1.json")).runs[0]
    assert matvec.doc["schema_version"] == 1
    assert {n: (k["implementation"], k["variant"]) for n, k in matvec.kernels.items()} == {
        "row-per-thread": ("kokkos", "row-per-thread"), "team-per-row": ("kokkos", "team-per-row"),
        "mdrange": ("kokkos", "mdrange"), "cublas-dgemv": ("cublas", "dgemv")}
    native = resultset.open(os.path.join(OLD_BUILD, "hexgrad-native-r1.json")).runs[0]
    assert native.kernels["gradients"]["implementation"] == "native-cuda"
    mgs = resultset.open(os.path.join(OLD_BUILD, "mgs-native-r1.json")).runs[0]
    assert (mgs.kernels["mgs-native-cuda"]["implementation"],
            mgs.kernels["mgs-native-cuda"]["variant"]) == ("native-cuda", "mgs")
    contact = resultset.open(os.path.join(OLD_BUILD, "contact-r1.json")).runs[0]
    stats = contact.kernels["linked-list.stats"]
    assert (stats["implementation"], stats["variant"]) == ("kokkos", "linked-list")


def test_schema_2_kernels_keep_their_own_fields(tmp_path):
    from karma_tools.results import resultset

    from karma_tools.results.archive import read_json

    doc = read_json(os.path.join(OLD_BUILD, "matvec-r1.json"))
    doc["schema_version"] = 2
    for k in doc["kernels"]:
        k["implementation"], k["variant"] = ("cblas", "dgemv") if "gemv" in k["name"] else \
            ("kokkos", k["name"])
    doc["kernels"][0]["implementation"] = "sycl"
    write(str(tmp_path / "m.json"), json.dumps(doc))
    run = resultset.open(str(tmp_path / "m.json")).runs[0]
    assert run.kernels["row-per-thread"]["implementation"] == "sycl"
    assert run.kernels["cublas-dgemv"]["variant"] == "dgemv"


@pytest.mark.parametrize("campaign", CAMPAIGNS, ids=[os.path.relpath(c, ROOT)
                                                     for c in CAMPAIGNS])
def test_shipped_campaigns_generate(tmp_path, campaign):
    """Each campaign under campaigns/ loads and expands, its set/sweep keys
    and values checked against the mini-apps' packaged deck schemas, with
    or without a build (ctest sets KARMA_BUILD_DIR: its bin/). Every folder
    of mini-apps a campaign names (--var host_bin=...) is that bin/ too, every
    other program (--var babelstream=...) a stand-in: generate refuses
    programs that are not there."""
    build = os.environ.get("KARMA_BUILD_DIR", "")
    bin_dir = os.path.join(build, "bin") if build else stand_ins(tmp_path / "bin")
    extra = []
    text = open(campaign).read()
    for name in sorted(set(re.findall(r'executable: "\{(\w+)\}/karma-', text))):
        extra += ["--var", f"{name}={bin_dir}"]
    for name in sorted(set(re.findall(r'executable: "\{(\w+)\}"', text))):
        extra += ["--var", f"{name}={stand_ins(tmp_path / name, ['program'])}/karma-program"]
    out = str(tmp_path / "out")
    r = tool("karma-batch", "generate", campaign, "-o", out, "--bin-dir", bin_dir, *extra)
    assert r.returncode == 0, r.stderr
    manifest = load_manifest(out)
    # One node's campaigns run here; one over several nodes needs a batch
    # scheduler.
    several = any(j.get("nodes", 1) > 1 for j in manifest["jobs"])
    assert manifest["scheduler"] == ("slurm" if several else "local")
    assert manifest["compare"], "each campaign declares its ratio tables"
    runs = {j["run"] for j in manifest["jobs"]}
    for spec in manifest["compare"]:
        for side in ("numerator", "denominator"):
            for pattern in spec[side].get("run", []):
                assert any(re.fullmatch(pattern.replace("*", ".*"), r) for r in runs)
    # The campaigns README names every campaign file.
    readme = open(os.path.join(ROOT, "campaigns", "README.md")).read()
    assert os.path.relpath(campaign, os.path.join(ROOT, "campaigns")) in readme


def test_no_scripts_under_results():
    found = [os.path.relpath(os.path.join(d, f), ROOT)
             for d, _, files in os.walk(os.path.join(ROOT, "results")) for f in files
             if f.endswith((".sh", ".py"))]
    assert found == []
    for gone in ("stream-vs-babelstream.sh", "stream-table.py", "hexgrad-side-by-side.sh",
                 "hexgrad-sweep.sh", "mgs-gpu.sh", "mgs-scaling.sh", "mgs-table.py"):
        assert not os.path.exists(os.path.join(ROOT, "scripts", gone))


def test_stream_campaign_pairs_every_kernel(tmp_path, fakes):
    """The shipped stream campaign run with stand-ins: every karma kernel
    finds its BabelStream counterpart in each round."""
    src = os.path.join(ROOT, "campaigns", "gpu", "stream-vs-babelstream.yaml")
    text = open(src).read().replace("gpus_per_rank: 1", "gpus_per_rank: 0")
    text = text.replace("    app: stream\n    deck:",
                        f"    app: stream\n    executable: {fakes['app']}\n    deck:")
    text = text.replace("repeat: 3", "repeat: 1")
    campaign = write(str(tmp_path / "c.yaml"), text)
    out = str(tmp_path / "out")
    r = generate(campaign, out, "--var", f"babelstream={fakes['babelstream']}")
    assert r.returncode == 0, r.stderr
    r = tool("karma-batch", "submit", out)
    assert r.returncode == 0, r.stdout + r.stderr
    r = tool("karma-compare", "--campaign", out, "--json", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    table = load_json(tmp_path / "t.json")["tables"][0]
    assert len(table["rows"]) == 3 * 6  # sizes x kernels
    assert not table["notes"], table["notes"]
    copy = next(row for row in table["rows"] if row["numerator"] == "copy")
    assert copy["aggregates"]["worst"] == pytest.approx(100 / 200)


def test_local_time_limit_and_cancel(tmp_path):
    """A job past its `time:` is stopped (interrupted, 143); cancel stops the
    running job and leaves the rest unsubmitted."""
    import subprocess
    import time

    sleeper = executable(tmp_path / "sleeper", "#!/bin/sh\nsleep 60\n")
    campaign = write(str(tmp_path / "c.yaml"), f"""\
name: slow
scheduler: local
gpus_per_rank: 0
runs:
  - {{name: a, app: stream, deck: {STREAM_DECK}, executable: {sleeper}, time: "00:00:02"}}
  - {{name: b, app: stream, deck: {STREAM_DECK}, executable: {sleeper}}}
""")
    out = str(tmp_path / "out")
    assert generate(campaign, out).returncode == 0
    r = tool("karma-batch", "submit", out, "--only", "a.*")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ran past its time (00:00:02)" in r.stderr
    assert "a.n1x1: interrupted (exit 143: stopped by SIGTERM" in r.stdout

    runner = subprocess.Popen([tool_path("karma-batch"),
                               "submit", out, "--only", "b.*"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    log = os.path.join(out, "results", "b.n1x1", "job.out")
    deadline = time.monotonic() + 30
    while not os.path.exists(log) and time.monotonic() < deadline:
        time.sleep(0.1)
    r = tool("karma-batch", "status", out, "--only", "b.*")
    assert r.returncode == 5 and "1 running" in r.stdout, r.stdout
    r = tool("karma-batch", "cancel", out)
    assert r.returncode == 0 and "cancelled b.n1x1" in r.stdout, r.stdout + r.stderr
    assert runner.wait(timeout=60) == 143
    r = tool("karma-batch", "status", out, "--only", "b.*")
    assert "1 interrupted" in r.stdout, r.stdout
