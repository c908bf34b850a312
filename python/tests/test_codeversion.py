"""Code versions (karma_tools.results.codeversion): what counts as the same code."""

import json
import os
import subprocess

import pytest
from conftest import ROOT, miniapp
from karma_tools.results import codeversion as cv
from karma_tools.cli import codeversion as codeversion_cli


KERNELS = """\
#pragma once
#include <functional>
namespace karma::demo {

template <class T, int U = 1>
constexpr int items() { return sizeof(T) >= 8 ? U : 2 * U; }

// The copy.
template <class T>
struct Copy {
  T* a;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const { a[i] = items<T>(); }
};

template <class T>
KOKKOS_INLINE_FUNCTION decltype(auto) first(const T& v) { return v[0]; }

inline void fill(int* a, int n, const Copy<int>& op = {}) { for (int i = 0; i < n; ++i) op(i); }

std::function<void()> launcher(int* a) { return [a] { fill(a, 1); }; }

template <class O>
int use_member(const O& o) { return o.items + std::min(1, 2); }
inline int min(int a, int b) { return a < b ? a : b; }

}  // namespace karma::demo
"""


def hashes(text):
    return cv.source_hashes({"demo.hpp": text})


def test_definitions_are_split_by_name():
    names = list(hashes(KERNELS))  # each definition, in the file's order
    assert names == ["karma::demo::items", "karma::demo::Copy", "karma::demo::first",
                     "karma::demo::fill", "karma::demo::launcher", "karma::demo::use_member",
                     "karma::demo::min"]


def test_a_change_reaches_what_uses_it_and_nothing_else():
    before = hashes(KERNELS)
    after = hashes(KERNELS.replace("2 * U", "4 * U"))
    changed = {q for q in before if before[q] != after[q]}
    # items changed; Copy names it, fill names Copy, launcher names fill.
    assert changed == {"karma::demo::items", "karma::demo::Copy", "karma::demo::fill",
                       "karma::demo::launcher"}


def test_comments_and_layout_do_not_count():
    moved = KERNELS.replace("// The copy.", "// Another comment.\n\n").replace(
        "{ return v[0]; }", "{\n  return v[0];\n}")
    assert hashes(moved) == hashes(KERNELS)


def test_members_and_other_namespaces_do_not_link():
    before = hashes(KERNELS)
    after = hashes(KERNELS.replace("a < b ? a : b", "b < a ? b : a"))
    # o.items is a member, std::min is not karma::demo::min.
    assert after["karma::demo::use_member"] == before["karma::demo::use_member"]
    assert after["karma::demo::min"] != before["karma::demo::min"]
    changed = hashes(KERNELS.replace("constexpr int items()", "constexpr int items_of()"))
    assert changed["karma::demo::use_member"] == before["karma::demo::use_member"]


# A kernel, Axpy, in one file and what it calls in another; beside them,
# code it does not use: `unrelated`, and an `offset` of another namespace.
AXPY = """\
#pragma once
namespace karma::demo {

template <class T>
struct Axpy {
  T* y;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    y[i] = scale<T>(i) + offset(i) + lanes;
  }
};

}  // namespace karma::demo
"""

HELPERS = """\
#pragma once
namespace karma::demo {

enum : unsigned { lanes = 4, spare = 8 };

template <class T>
KOKKOS_INLINE_FUNCTION T scale(int i) { return T(2) * i; }

KOKKOS_INLINE_FUNCTION int offset(int i) { return i + 1; }
KOKKOS_INLINE_FUNCTION double offset(double x) { return x + 1; }

inline int unrelated() { return 3; }

}  // namespace karma::demo

namespace karma::other {
inline int offset(int i) { return i - 1; }
}  // namespace karma::other
"""

SCALE = """template <class T>
KOKKOS_INLINE_FUNCTION T scale(int i) { return T(2) * i; }
"""
OFFSETS = """KOKKOS_INLINE_FUNCTION int offset(int i) { return i + 1; }
KOKKOS_INLINE_FUNCTION double offset(double x) { return x + 1; }
"""


def axpy(axpy_text=AXPY, helpers=HELPERS, **more):
    """Axpy's source hash over these files."""
    return cv.source_hashes({"axpy.hpp": axpy_text, "helpers.hpp": helpers, **more})[
        "karma::demo::Axpy"]


def edit(text, old, new):
    assert old in text
    return text.replace(old, new)


# Moves and renames of code: the kernel's hash stays.
MOVES = {
    # what it calls, into the kernel's file, after a declaration where it was
    "to the kernel's file": lambda: axpy(
        edit(AXPY, "}  // namespace karma::demo", SCALE + "}  // namespace karma::demo"),
        edit(HELPERS, SCALE, "template <class T>\nT scale(int i);\n")),
    "overloads swapped": lambda: axpy(helpers=edit(
        HELPERS, OFFSETS, OFFSETS.split("\n", 1)[1] + OFFSETS.split("\n", 1)[0] + "\n")),
    "an overload to a third file": lambda: axpy(
        helpers=edit(HELPERS, OFFSETS, OFFSETS.split("\n", 1)[0] + "\n"),
        **{"a.hpp": "namespace karma::demo {\n" + OFFSETS.split("\n", 1)[1] + "}\n"}),
    "to the enclosing namespace": lambda: axpy(helpers=edit(
        HELPERS, SCALE, "}  // namespace karma::demo\nnamespace karma {\n" + SCALE +
        "}  // namespace karma\nnamespace karma::demo {\n")),
    "a declaration of it added": lambda: axpy(
        edit(AXPY, "namespace karma::demo {\n", "namespace karma::demo {\n" +
             "int offset(int i);\nint offset(int i = {});\nenum class Kind;\n")),
    "code it does not use renamed": lambda: axpy(helpers=edit(
        edit(HELPERS, "unrelated", "no_longer_used"), "inline int offset(int i) { return i - 1; }",
        "inline int shift(int i) { return i - 1; }")),
    "another namespace's namesake changed": lambda: axpy(helpers=edit(
        HELPERS, "return i - 1;", "return i - 2;")),
}


@pytest.mark.parametrize("move", sorted(MOVES))
def test_moving_code_or_renaming_what_the_kernel_does_not_use_keeps_its_hash(move):
    assert MOVES[move]() == axpy()


# Changes of the kernel's code: its hash changes.
CHANGES = {
    "its body": lambda: axpy(edit(AXPY, "+ lanes;", "- lanes;")),
    "a function it calls": lambda: axpy(helpers=edit(HELPERS, "T(2) * i", "T(3) * i")),
    "an overload of one": lambda: axpy(helpers=edit(HELPERS, "x + 1", "x + 2")),
    "an enumerator it names": lambda: axpy(helpers=edit(HELPERS, "lanes = 4", "lanes = 2")),
    "a nearer namesake hiding what it called": lambda: axpy(
        edit(AXPY, "template <class T>\nstruct Axpy", "inline int offset(int i) { return i; }\n"
             "template <class T>\nstruct Axpy")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changing_the_kernel_or_what_it_calls_changes_its_hash(change):
    assert CHANGES[change]() != axpy()


def test_a_member_defined_outside_its_class_is_part_of_the_class():
    header = "namespace karma::demo {\nstruct Launcher {\n  void run() const;\n};\n}\n"
    source = "namespace karma::demo {\nvoid Launcher::run() const { go(1); }\n}\n"
    before = cv.source_hashes({"l.hpp": header, "l.cpp": source})
    after = cv.source_hashes({"l.hpp": header, "l.cpp": source.replace("go(1)", "go(2)")})
    assert "karma::demo::Launcher::run" in before
    assert before["karma::demo::Launcher"] != after["karma::demo::Launcher"]


def test_a_core_function_is_hashed_by_its_definition(tmp_path):
    """A kernel that names a function of the core's header (comm's
    sum_in_place) covers its body in common/src."""
    (tmp_path / "miniapps" / "demo").mkdir(parents=True)
    (tmp_path / "common" / "include" / "karma").mkdir(parents=True)
    (tmp_path / "common" / "src").mkdir(parents=True)
    (tmp_path / "common" / "include" / "karma" / "comm.hpp").write_text(
        "namespace karma::comm {\nvoid sum_in_place(double* v, long n);\n}\n")
    source = tmp_path / "common" / "src" / "comm.cpp"
    source.write_text("namespace karma::comm {\nvoid sum_in_place(double* v, long n) { "
                      "reduce(v, n); }\n}\n")
    before = cv.source_hashes(cv.app_sources(str(tmp_path), "demo"))
    source.write_text(source.read_text().replace("reduce(v, n)", "reduce(v, n + 0)"))
    after = cv.source_hashes(cv.app_sources(str(tmp_path), "demo"))
    assert before["karma::comm::sum_in_place"] != after["karma::comm::sum_in_place"]


def test_combine_depends_on_order_and_launch():
    a, b = "0123456789abcdef", "fedcba9876543210"
    assert cv.combine([a, b], {})[0] != cv.combine([b, a], {})[0]
    assert cv.combine([a], {"team_size": 256})[1] != cv.combine([a], {"team_size": 128})[1]
    assert cv.combine([a], {"x": 1, "y": 2}) == cv.combine([a], {"y": 2, "x": 1})


def test_sources_of_a_git_revision(tmp_path):
    repo = tmp_path / "repo"
    (repo / "miniapps" / "demo").mkdir(parents=True)
    (repo / "common" / "include" / "karma").mkdir(parents=True)
    (repo / "miniapps" / "demo" / "demo.hpp").write_text(KERNELS)

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                              text=True, env=dict(os.environ, GIT_AUTHOR_NAME="t",
                                                  GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                                                  GIT_COMMITTER_EMAIL="t@t")).stdout.strip()
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    first = git("rev-parse", "HEAD")
    (repo / "miniapps" / "demo" / "demo.hpp").write_text(KERNELS.replace("2 * U", "3 * U"))
    git("commit", "-q", "-am", "two")
    old = cv.source_hashes(cv.git_sources(str(repo), first, "demo"))
    new = cv.source_hashes(cv.app_sources(str(repo), "demo"))
    assert old == hashes(KERNELS)
    assert old["karma::demo::Copy"] != new["karma::demo::Copy"]
    assert cv.git_sources(str(repo), "0" * 40, "demo") is None


def test_sources_in_subfolders_and_miniapps_common(tmp_path):
    """An app's subfolders and miniapps/common are covered, its tests are
    not, in the tree and at a git revision alike."""
    app = tmp_path / "miniapps" / "demo"
    (app / "kernels").mkdir(parents=True)
    (app / "tests").mkdir()
    (tmp_path / "miniapps" / "common").mkdir()
    (app / "kernels" / "demo.hpp").write_text(KERNELS)
    (app / "tests" / "test_demo.cpp").write_text("namespace karma::demo {\nint tested = 1;\n}\n")
    (tmp_path / "miniapps" / "common" / "vendor.hpp").write_text(
        "namespace karma::vendor {\ninline constexpr bool cuda = false;\n}\n")
    expected = ["miniapps/common/vendor.hpp", "miniapps/demo/kernels/demo.hpp"]
    assert sorted(cv.app_sources(str(tmp_path), "demo")) == expected

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True,
                              env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                                       GIT_COMMITTER_NAME="t",
                                       GIT_COMMITTER_EMAIL="t@t")).stdout.strip()
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    files = cv.git_sources(str(tmp_path), git("rev-parse", "HEAD"), "demo")
    assert sorted(files) == expected
    assert cv.source_hashes(files)["karma::demo::Copy"] == hashes(KERNELS)["karma::demo::Copy"]


def test_table_script_writes_only_on_change(tmp_path):
    out = tmp_path / "table.hpp"
    assert codeversion_cli.main([ROOT, "stream", str(out)]) == 0
    text = out.read_text()
    assert '{"karma::stream::Copy", "' in text
    stamp = out.stat().st_mtime_ns
    os.utime(out, ns=(stamp - 10**9, stamp - 10**9))
    assert codeversion_cli.main([ROOT, "stream", str(out)]) == 0
    assert out.stat().st_mtime_ns == stamp - 10**9


def test_results_carry_the_code_version_the_sources_give(tmp_path, stream_exe):
    """The C++ (karma/code_version.hpp) and this module agree: a run's code
    versions are those the sources of this tree give for its symbols."""
    table = cv.source_hashes(cv.app_sources(ROOT, "stream"))
    versions = set()
    for i, (shape, policy) in enumerate((("[4096]", "auto"), ("[8,8,8]", "range"),
                                         ("[8,8,8]", "mdrange"))):
        out = tmp_path / f"r{i}.json"
        subprocess.run([stream_exe, os.path.join(ROOT, "inputs", "stream", "small.yaml"),
                        "--set", f"stream.shape={shape}", "--set", f"stream.policy_3d={policy}",
                        "--set", "run.repetitions=2", "--set", "run.energy=off",
                        "--output", str(out)], check=True, capture_output=True, timeout=120)
        doc = json.loads(out.read_text())
        assert doc["deck"]["schema"]["properties"]["stream"]["properties"]["layout"]["default"]
        for k in doc["kernels"]:
            code = k["code"]
            source, version = cv.combine([table[s] for s in code["symbols"]], code["launch"])
            assert (code["source"], k["code_version"]) == (source, version), k["name"]
            assert code["scheme"] == cv.SCHEME
            versions.add(k["code_version"])
    # Each kernel, shape and policy its own code path: 6 kernels in 3 ways.
    assert len(versions) == 18


def test_the_1d_dot_is_versioned_by_the_functor_it_runs(tmp_path, stream_exe):
    """A change to the functor the 1D dot runs (DotTeams on a GPU, DotBlocks
    on a host) changes the dot's code version and nothing else's, and its
    launch says how many elements an item takes."""
    out = tmp_path / "r.json"
    subprocess.run([stream_exe, os.path.join(ROOT, "inputs", "stream", "small.yaml"),
                    "--set", "run.repetitions=2", "--set", "run.energy=off",
                    "--output", str(out)],
                   check=True, capture_output=True, timeout=120)
    kernels = {k["name"]: k["code"] for k in json.loads(out.read_text())["kernels"]}
    on_gpu = "team_size" in kernels["dot"]["launch"]
    functor = "DotTeams" if on_gpu else "DotBlocks"
    assert kernels["dot"]["launch"]["elements_per_item"] == (1 if on_gpu else 8)
    sources = cv.app_sources(ROOT, "stream")
    path = next(p for p, text in sources.items() if f"struct {functor} {{" in text)
    changed = {**sources, path: sources[path].replace(
        f"struct {functor} {{", f"struct {functor} {{\n  int changed;", 1)}
    assert changed[path] != sources[path]
    before, after = cv.source_hashes(sources), cv.source_hashes(changed)
    moved = {name for name, code in kernels.items()
             if cv.combine([before[s] for s in code["symbols"]], code["launch"])
             != cv.combine([after[s] for s in code["symbols"]], code["launch"])}
    assert moved == {"dot"}


def matvec_kernels(tmp_path, *sets, threads=1, launcher=()):
    """{kernel: its entry} of a run of karma-matvec on the small deck."""
    exe = miniapp("matvec")
    out = tmp_path / f"matvec-{len(list(tmp_path.iterdir()))}.json"
    argv = [*launcher, exe, os.path.join(ROOT, "inputs", "matvec", "small.yaml"),
            "--set", "run.repetitions=2", "--output", str(out)]
    for s in sets:
        argv += ["--set", s]
    subprocess.run(argv, check=True, capture_output=True, timeout=120,
                   env=dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false"))
    doc = json.loads(out.read_text())
    return doc["kokkos"]["concurrency"], {k["name"]: k for k in doc["kernels"]}


def versions(kernels):
    return {name: k["code_version"] for name, k in kernels.items()}


@pytest.mark.parametrize("layout", ["left", "right"])
def test_matvec_code_versions_follow_the_code_not_the_run(tmp_path, layout):
    """The same karma-matvec on 1 and 2 threads, on two problem sizes and
    on 1 and 2 ranks: the same code versions, though mdrange's tiling (rows
    an item, column blocks) follows the threads and the sizes."""
    deck = f"matvec.layout={layout}"
    threads1, one = matvec_kernels(tmp_path, deck, threads=1)
    threads2, two = matvec_kernels(tmp_path, deck, threads=2)
    assert versions(two) == versions(one)
    if threads2 != threads1:  # a threaded host build: the run chose otherwise
        assert [one["mdrange"][key] for key in ("rows_per_item", "column_blocks")] != \
            [two["mdrange"][key] for key in ("rows_per_item", "column_blocks")]
    _, bigger = matvec_kernels(tmp_path, deck, "matvec.m=1200", "matvec.n=512", threads=2)
    assert versions(bigger) == versions(one)
    mpiexec = os.environ.get("KARMA_MPIEXEC")
    if mpiexec:
        _, ranks = matvec_kernels(tmp_path, deck, launcher=(mpiexec, "-n", "2"))
        assert {name: versions(ranks)[name] for name in one} == versions(one)


def test_a_launch_the_deck_fixes_is_part_of_the_code_version(tmp_path):
    _, auto = matvec_kernels(tmp_path)
    _, fixed = matvec_kernels(tmp_path, "matvec.column_blocks=2", "matvec.team_size=1")
    changed = {name for name in auto if versions(auto)[name] != versions(fixed)[name]}
    assert changed == {"mdrange", "team-per-row"}
    assert fixed["mdrange"]["code"]["launch"] == {"column_blocks": 2}
