"""karma-compare across suite versions (issue 38): keys an older result
lacks read at the newer deck schema's defaults, the closest of several
candidates, code versions (recorded, or from git with --source), the rows
each set pairs, unpaired rows and rows only in other sets with their
reasons, weights that are the figure of record's, the set table and
--skip-invalid."""

import copy
import csv
import json
import os
import subprocess

import pytest

from conftest import SAMPLES, load_json, tool, write
from karma_tools.results import codeversion

A = os.path.join(SAMPLES, "machine-a")
OLD = f"{A}/stream-1d-2p16-r1.json"  # suite 0.1.0: no deck.schema, no code versions

# The part of a deck schema these tests need: a key the old result lacks,
# nested as the mini-apps print it.
SCHEMA = {"type": "object", "properties": {
    "stream": {"type": "object", "properties": {
        "policy_3d": {"type": "string", "default": "auto"},
        "layout": {"type": "string", "default": "right"},
        "tuning": {"type": "object", "properties": {
            "block": {"type": "integer", "default": 0}}}}},
    "run": {"type": "object", "properties": {"repetitions": {"default": 1}}}}}


def newer(doc, version="0.2.0", schema=True, **values):
    """A copy of an old result as suite `version` would write it: the new
    keys in deck.resolved (at their defaults unless `values` say), and the
    deck schema recorded."""
    doc = copy.deepcopy(doc)
    doc["suite"]["version"] = version
    stream = doc["deck"]["resolved"]["stream"]
    stream["policy_3d"] = values.get("policy_3d", "auto")
    stream["tuning"] = {"block": values.get("block", 0)}
    if schema:
        doc["deck"]["schema"] = SCHEMA
    return doc


def code(doc, versions, sources=None, symbols=("karma::stream::Copy",),
         scheme=codeversion.SCHEME):
    """doc with kernel code versions {kernel: version} (others: none), made
    by `scheme` (1: written without code.scheme)."""
    for k in doc["kernels"]:
        if k["name"] in versions:
            k["code_version"] = versions[k["name"]]
            k["code"] = {"symbols": list(symbols), "launch": {},
                         "source": (sources or {}).get(k["name"], "0" * 16)}
            if scheme > 1:
                k["code"]["scheme"] = scheme
    return doc


def one_set(tmp_path, name, *docs):
    d = tmp_path / name
    for i, doc in enumerate(docs):
        write(str(d / f"r{i}.json"), json.dumps(doc))
    return str(d)


def paired(result, label):
    """Whether every baseline row pairs with a run of the set."""
    return all(r["values"][label] is not None for r in result["rows"])


def run_json(tmp_path, *args, rc=0):
    out = str(tmp_path / "c.json")
    r = tool("karma-compare", *args, "--json", out)
    assert r.returncode == rc, r.stderr
    return load_json(out), r


def test_a_missing_key_is_read_at_the_newer_schemas_default(tmp_path):
    old = one_set(tmp_path, "old", load_json(OLD))
    new = one_set(tmp_path, "new", newer(load_json(OLD)))
    result, _ = run_json(tmp_path, f"old={old}", f"new={new}")
    assert all(r["values"]["new"] and r["values"]["new"]["flags"] == [] for r in result["rows"])
    assert paired(result, "new")
    assert result["only_in_other_sets"] == []
    # Either way round.
    result, _ = run_json(tmp_path, f"new={new}", f"old={old}")
    assert paired(result, "old")
    # Without the recorded schema nothing says the missing key is at its
    # default: unpaired, the key and its two values named.
    bare = one_set(tmp_path, "bare", newer(load_json(OLD), schema=False))
    result, r = run_json(tmp_path, f"old={old}", f"new={bare}")
    assert all(r["values"]["new"] is None for r in result["rows"])
    why = result["rows"][0]["unpaired"]["new"]
    assert why == "stream.policy_3d (absent) vs auto; stream.tuning.block (absent) vs 0"
    # A key away from its default is other work, whatever the schema.
    other = one_set(tmp_path, "other", newer(load_json(OLD), policy_3d="mdrange"))
    result, _ = run_json(tmp_path, f"old={old}", f"new={other}")
    assert result["rows"][0]["unpaired"]["new"] == "stream.policy_3d auto vs mdrange"
    only = result["only_in_other_sets"]
    assert {o["kernel"] for o in only} == {k["name"] for k in load_json(OLD)["kernels"]}
    assert only[0]["reason"] == "stream.policy_3d mdrange vs auto"


def test_a_retired_key_pairs_at_the_value_that_meant_todays_work(tmp_path):
    """An older result holds a key the newer suite retired (a fault key that
    became run.inject_fault): at the value the newer schema names as the same
    work it pairs; at any other it is other work, the key named."""
    def old_with(fault):
        doc = load_json(OLD)
        doc["deck"]["resolved"]["stream"]["corrupt"] = fault
        return doc

    new_doc = newer(load_json(OLD))
    new_doc["deck"]["schema"] = dict(SCHEMA, **{"x-retired": {
        "stream.corrupt": {"instead": "use run.inject_fault: x", "same_work": False}}})
    new = one_set(tmp_path, "new", new_doc)
    old = one_set(tmp_path, "old", old_with(False))
    result, _ = run_json(tmp_path, f"old={old}", f"new={new}")
    assert paired(result, "new")
    faulty = one_set(tmp_path, "faulty", old_with(True))
    result, _ = run_json(tmp_path, f"old={faulty}", f"new={new}")
    assert all(r["values"]["new"] is None for r in result["rows"])
    assert result["rows"][0]["unpaired"]["new"] == "stream.corrupt true vs (absent)"


def test_unpaired_and_only_in_other_rows_in_every_output(tmp_path):
    old = one_set(tmp_path, "old", load_json(OLD))
    other = one_set(tmp_path, "other", newer(load_json(OLD), policy_3d="mdrange"))
    md, table = str(tmp_path / "c.md"), str(tmp_path / "c.csv")
    r = tool("karma-compare", f"old={old}", f"new={other}", "--markdown", md, "--csv", table)
    assert r.returncode == 0, r.stderr
    text = open(md).read()
    assert "## Unpaired rows" in text and "## Only in other sets" in text
    assert "| new | stream | host: small | copy | stream.policy_3d auto vs mdrange |" in text
    rows = list(csv.DictReader(open(table)))
    missing = [x for x in rows if x["set"] == "new" and x["verification"] == "missing"]
    assert missing and all(x["flags"] == "unpaired: stream.policy_3d auto vs mdrange"
                           for x in missing)
    assert sum(x["flags"].startswith("only in new: ") for x in rows) == 6
    # Unpaired rows are no INCOMPLETE figure of record: that is karma-score's (exit 1).
    r = tool("karma-compare", f"old={old}", f"new={other}")
    assert r.returncode == 0 and r.stdout.startswith("# karma comparison\n") and \
        "INCOMPLETE" not in r.stdout, r.stdout[:200]
    r = tool("karma-compare", f"old={old}", f"new={other}", "--allow-partial")
    assert r.returncode == 2 and "--allow-partial goes with --campaign" in r.stderr


def test_the_closest_of_several_candidates_is_chosen(tmp_path):
    base = load_json(OLD)
    near = copy.deepcopy(base)
    near["deck"]["resolved"]["stream"]["shape"] = [2 ** 17]
    far = copy.deepcopy(near)
    far["mpi"]["ranks"] = 1
    far["deck"]["resolved"]["stream"]["shape"] = [2 ** 18]
    far["deck"]["resolved"]["run"]["warmup"] = 7  # outside the case: still one difference
    far["deck"]["resolved"]["stream"]["extra_size"] = 5
    old = one_set(tmp_path, "old", base)
    new = one_set(tmp_path, "new", far, near)
    result, _ = run_json(tmp_path, f"old={old}", f"new={new}")
    e = result["rows"][0]["values"]["new"]
    assert e["flags"] == ["problem size differs: stream.shape [2^16] vs [2^17]"]
    assert any("2 runs could stand for stream/host: small; chose the closest" in n
               and "1 differing key(s)" in n for n in result["notes"])
    assert [o["reason"] for o in result["only_in_other_sets"]][:1] == [
        "stream.extra_size 5 vs (absent); stream.shape [2^18] vs [2^16]"]


def test_code_versions_mark_each_pair(tmp_path):
    kernels = [k["name"] for k in load_json(OLD)["kernels"]]
    same = {k: "1" * 16 for k in kernels}
    changed = dict(same, dot="2" * 16)
    a = one_set(tmp_path, "a", code(newer(load_json(OLD)), same))
    b = one_set(tmp_path, "b", code(newer(load_json(OLD)), changed))
    result, _ = run_json(tmp_path, f"a={a}", f"b={b}")
    status = {r["kernel"]: r["values"]["b"]["code"] for r in result["rows"]}
    assert status == dict({k: "same code" for k in kernels}, dot="code changed")
    dot = next(r for r in result["rows"] if r["kernel"] == "dot")["values"]["b"]
    assert f"code changed: code_version {'1' * 16} vs {'2' * 16}" in dot["flags"]
    # One side without code versions: unknown.
    old = one_set(tmp_path, "old", load_json(OLD))
    result, _ = run_json(tmp_path, f"old={old}", f"b={b}")
    assert {r["values"]["b"]["code"] for r in result["rows"]} == {"code version unknown"}
    md, table = str(tmp_path / "c.md"), str(tmp_path / "c.csv")
    assert tool("karma-compare", f"a={a}", f"b={b}", "--markdown", md, "--csv",
                table).returncode == 0
    assert "| stream | host: small | dot | GB/s |" in open(md).read()
    assert "| **changed** |" in open(md).read() and "| same |" in open(md).read()
    codes = {x["kernel"]: x["code"] for x in csv.DictReader(open(table)) if x["set"] == "b"
             and x["kernel"] in kernels}
    assert codes["dot"] == "code changed" and codes["copy"] == "same code"


def test_code_versions_of_an_older_scheme_are_derived_again(tmp_path, fake_repo):
    """Results whose code versions an older scheme made (suite 0.2.0's
    first rules followed the run) compare by version only among themselves;
    against this scheme's, their source is derived at --source."""
    files = codeversion.git_sources(str(fake_repo), "v1", "stream")
    source, _ = codeversion.combine([codeversion.source_hashes(files)["karma::stream::Copy"]],
                                    {})
    kernels = [k["name"] for k in load_json(OLD)["kernels"]]
    new = one_set(tmp_path, "new", code(newer(load_json(OLD)), {k: "1" * 16 for k in kernels},
                                        {k: source for k in kernels}))
    first = {k: "2" * 16 for k in kernels}
    older = one_set(tmp_path, "older", code(newer(load_json(OLD)), first, scheme=1))
    also = one_set(tmp_path, "also", code(newer(load_json(OLD)), first, scheme=1))
    result, _ = run_json(tmp_path, f"older={older}", f"also={also}")
    assert {r["values"]["also"]["code"] for r in result["rows"]} == {"same code"}
    result, _ = run_json(tmp_path, f"older={older}", f"new={new}")
    assert {r["values"]["new"]["code"] for r in result["rows"]} == {"code version unknown"}
    assert "code versions of scheme 1, not 2" in result["rows"][0]["values"]["new"]["code_detail"]
    for rev, status in (("v2", "same code"), ("v3", "code changed")):
        result, _ = run_json(tmp_path, f"older={older}", f"new={new}", "--source",
                             f"older={rev}", "--repo", fake_repo)
        assert {r["values"]["new"]["code"] for r in result["rows"]} == {status}
        assert not any(n.startswith("--source older=") for n in result["notes"])


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))


@pytest.fixture
def fake_repo(tmp_path):
    """A git repository with a stream kernel in three revisions: v1, v2 (the
    same code, a comment added), v3 (the body changed); Copy gone in v4."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    bodies = {"v1": "a[i] = b[i];", "v2": "a[i] = /* the same */ b[i];", "v3": "a[i] = 2 * b[i];"}
    for tag, body in bodies.items():
        write(str(repo / "miniapps/stream/kernels.hpp"),
              "namespace karma::stream {\nstruct Copy { void operator()(int i) const { "
              f"{body} }} }};\n}}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", tag)
        git(repo, "tag", tag)
    write(str(repo / "miniapps/stream/kernels.hpp"), "namespace karma::stream {}\n")
    git(repo, "commit", "-qam", "v4")
    git(repo, "tag", "v4")
    return repo


def test_source_derives_an_old_sets_code_from_git(tmp_path, fake_repo):
    files = codeversion.git_sources(str(fake_repo), "v1", "stream")
    hashes = codeversion.source_hashes(files)
    source, _ = codeversion.combine([hashes["karma::stream::Copy"]], {})
    kernels = [k["name"] for k in load_json(OLD)["kernels"]]
    new = one_set(tmp_path, "new", code(newer(load_json(OLD)), {k: "1" * 16 for k in kernels},
                                        {k: source for k in kernels}))
    old = one_set(tmp_path, "old", load_json(OLD))

    def status(rev):
        result, _ = run_json(tmp_path, f"old={old}", f"new={new}", "--source", f"old={rev}",
                             "--repo", fake_repo)
        return {r["values"]["new"]["code"] for r in result["rows"]}, result

    assert status("v1")[0] == {"same code"}
    assert status("v2")[0] == {"same code"}  # a comment is no code
    changed, result = status("v3")
    assert changed == {"code changed"}
    assert "source only" in result["rows"][0]["values"]["new"]["code_detail"]
    gone, result = status("v4")
    assert gone == {"code changed"}
    assert "karma::stream::Copy is not defined at v4" in \
        result["rows"][0]["values"]["new"]["code_detail"]
    # The other way round: the baseline is the side that has code versions.
    result, _ = run_json(tmp_path, f"new={new}", f"old={old}", "--source", "old=v3",
                         "--repo", fake_repo)
    assert {r["values"]["old"]["code"] for r in result["rows"]} == {"code changed"}
    # Naming the set that has code versions derives nothing, and says so.
    result, _ = run_json(tmp_path, f"new={new}", f"old={old}", "--source", "new=v1",
                         "--repo", fake_repo)
    assert {r["values"]["old"]["code"] for r in result["rows"]} == {"code version unknown"}
    assert any(n.startswith("--source new=v1: every result of new records its code versions")
               for n in result["notes"])
    # Bad --source: one line, exit 2, nothing written.
    out = tmp_path / "bad.json"
    for args, message in ((["--source", "old=nope"], "'nope' is no commit of"),
                          (["--source", "zzz=v1"], "no set of label 'zzz'"),
                          (["--source", "old"], "expected LABEL=REV")):
        r = tool("karma-compare", f"old={old}", f"new={new}", "--repo", fake_repo, *args,
                 "--json", out)
        assert r.returncode == 2 and message in r.stderr and not out.exists(), r.stderr


def test_weights_weigh_the_figure_of_record_not_the_rows(tmp_path):
    """Since 1.1.0 compare weighs no rows of its own: a weights file is
    karma-score's, for the figure of record; a pattern that matches no row of
    the comparison is no error (--allow-unmatched is accepted, changing
    nothing), a malformed file still is."""
    a = one_set(tmp_path, "a", load_json(OLD))
    b = one_set(tmp_path, "b", newer(load_json(OLD)))
    weights = write(str(tmp_path / "w.txt"), "stream 1\n# typo:\nstreem 1\n")
    result, _ = run_json(tmp_path, f"a={a}", f"b={b}", "--weights", weights)
    assert paired(result, "b") and not any("weight" in r for r in result["rows"])
    again, _ = run_json(tmp_path, f"a={a}", f"b={b}", "--weights", weights, "--allow-unmatched")
    assert again == result
    bad = write(str(tmp_path / "bad.txt"), "stream/*/triad three\n")
    r = tool("karma-compare", f"a={a}", f"b={b}", "--weights", bad)
    assert r.returncode == 2 and f"{bad}:1: weight 'three' is not a number" in r.stderr


def test_the_set_table_shows_suite_git_and_flags_versions(tmp_path):
    a = one_set(tmp_path, "a", load_json(OLD))
    doc = newer(load_json(OLD), version="0.3.0")
    doc["suite"]["git_describe"] = "v0.3.0-7-gabc"
    b = one_set(tmp_path, "b", doc)
    r = tool("karma-compare", f"a={a}", f"b={b}")
    assert r.returncode == 0, r.stderr
    assert "| set | path | runs | suite | git | devices | Kokkos backend | Kokkos |" in r.stdout
    assert f"| b | `{b}` | 1 | 0.3.0 | v0.3.0-7-gabc |" in r.stdout
    assert "**Warning:** the sets ran different suite versions (a 0.1.0; b 0.3.0)" in r.stdout
    r = tool("karma-compare", f"a={a}", f"b={a}")
    assert "Warning" not in r.stdout


def test_skip_invalid_compares_the_rest(tmp_path):
    a = one_set(tmp_path, "a", load_json(OLD))
    b = one_set(tmp_path, "b", load_json(OLD))
    broken = write(str(tmp_path / "b" / "broken.json"), "{not json")
    out = tmp_path / "c.json"
    r = tool("karma-compare", f"a={a}", f"b={b}", "--json", out)
    assert r.returncode == 2 and "broken.json" in r.stderr and not out.exists()
    result, r = run_json(tmp_path, f"a={a}", f"b={b}", "--skip-invalid")
    assert [x["path"] for x in result["left_out"]] == [broken]
    assert "not valid JSON" in result["left_out"][0]["error"]
    assert f"karma-compare: left out {broken}" in r.stderr
    assert paired(result, "b")
    r = tool("karma-compare", f"a={a}", f"b={b}", "--skip-invalid")
    assert "## Files left out" in r.stdout and "broken.json" in r.stdout
