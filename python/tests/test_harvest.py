"""scripts/harvest: the ReFrame check's and the Ramble application's regular
expressions against committed output of every mini-app, read without either
tool (neither can be installed here), through stand-ins for their APIs as
test_spack.py does for Spack. A plain split of each line is the oracle
(harvest_lines.py)."""

import importlib.util
import os
import re
import sys
import types
import xml.etree.ElementTree as ET

import pytest

from conftest import DATA, ROOT, SCRIPTS
from harvest_lines import APPS, oracle

HARVEST = os.path.join(SCRIPTS, "harvest")
# Outputs no committed campaign has: karma-microbench's, and runs that printed
# their figures of merit and then failed (generated; see data/README.md).
HARVEST_DATA = os.path.join(DATA, "harvest")
FAILED_RUNS = ("hexgrad-wrong-answer.out", "stream-output-error.out")
SKIPPED_SUFFIXES = (".json", ".svg", ".png", ".md", ".pdf", ".yaml")


def committed_outputs():
    """{path: text} of every committed file holding a mini-app's FOM or RESULT
    lines: the campaigns' job.out, the logs under results/, and HARVEST_DATA."""
    from karma_tools.results import archive

    found = {}
    # The committed logs are inside the results archives; walk_files reads them.
    for top in (os.path.join(ROOT, "results"), HARVEST_DATA):
        for path in archive.walk_files(top):
            if path.endswith(SKIPPED_SUFFIXES + (archive.SUFFIX, ".sha256")):
                continue
            text = archive.read_bytes(path).decode("utf-8", errors="replace")
            if any(oracle(text)):
                found[os.path.relpath(path, ROOT)] = text
    return found


OUTPUTS = committed_outputs()
# Files of exactly one run, whose RESULT decides success.
SINGLE_RUNS = {p: t for p, t in OUTPUTS.items() if len(oracle(t)[1]) == 1}


def test_every_mini_app_has_committed_output():
    apps_seen = {fom[0] for text in OUTPUTS.values() for fom in oracle(text)[0]}
    assert apps_seen == APPS
    passed = {oracle(t)[0][0][0] for t in SINGLE_RUNS.values()
              if oracle(t)[1] == ["PASSED"] and oracle(t)[0]}
    assert passed == APPS
    for name in FAILED_RUNS:
        assert oracle(OUTPUTS[os.path.join("python/tests/data/harvest", name)])[1] == ["FAILED"]


# --- ReFrame ----------------------------------------------------------------


class SanityError(Exception):
    pass


@pytest.fixture(scope="module")
def reframe_check():
    """scripts/harvest/reframe/karma_check.py against a stand-in ReFrame whose
    sanity functions evaluate at once, on files in the current directory."""
    rfm = types.ModuleType("reframe")
    rfm.simple_test = lambda cls: cls
    rfm.RunOnlyRegressionTest = type("RunOnlyRegressionTest", (), {})

    def text_of(filename):
        with open(filename) as f:
            return f.read()

    def assert_found(pattern, filename):
        if not re.search(pattern, text_of(filename), re.MULTILINE):
            raise SanityError(f"{pattern} not found")
        return True

    def assert_not_found(pattern, filename):
        if re.search(pattern, text_of(filename), re.MULTILINE):
            raise SanityError(f"{pattern} found")
        return True

    def extractsingle(pattern, filename, tag, conv):
        return conv(next(re.finditer(pattern, text_of(filename), re.MULTILINE))[tag])

    sn = types.ModuleType("reframe.utility.sanity")
    sn.__dict__.update(assert_found=assert_found, assert_not_found=assert_not_found,
                       extractsingle=extractsingle, all=all, evaluate=lambda x: x,
                       make_performance_function=lambda value, units: (value, units))
    typecheck = types.ModuleType("reframe.utility.typecheck")
    typecheck.List = {str: list}
    builtins = types.ModuleType("reframe.core.builtins")
    builtins.parameter = lambda values: tuple(values)
    builtins.variable = lambda *types_, value: value
    hook = lambda stage: (lambda f: f)  # noqa: E731
    builtins.__dict__.update(run_after=hook, run_before=hook, sanity_function=lambda f: f)
    utility = types.ModuleType("reframe.utility")
    utility.sanity, utility.typecheck = sn, typecheck
    core = types.ModuleType("reframe.core")
    core.builtins = builtins
    modules = {"reframe": rfm, "reframe.utility": utility, "reframe.utility.sanity": sn,
               "reframe.utility.typecheck": typecheck, "reframe.core": core,
               "reframe.core.builtins": builtins}
    saved = {k: sys.modules.get(k) for k in modules}
    sys.modules.update(modules)
    path = os.path.join(HARVEST, "reframe", "karma_check.py")
    spec = importlib.util.spec_from_file_location("karma_reframe_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def reframe_harvest(check, text):
    """What the check's patterns take from an output: (app, kernel, value, units), results."""
    foms = [(m["app"], m["kernel"], float(m["value"]), m["units"])
            for m in re.finditer(check.FOM_PATTERN, text, re.MULTILINE)]
    results = [m["result"] for m in re.finditer(check.RESULT_PATTERN, text, re.MULTILINE)]
    return sorted(foms), results


def mismatches(expected, harvested):
    """The files whose harvest differs from the oracle's, with both (a few)."""
    wrong = [(path, expected(text), harvested(text)) for path, text in sorted(OUTPUTS.items())
             if expected(text) != harvested(text)]
    return [f"{path}: expected {e}, harvested {h}" for path, e, h in wrong[:3]] + \
        ([f"... and {len(wrong) - 3} more files"] if len(wrong) > 3 else [])


def test_reframe_patterns_take_every_fom_and_result(reframe_check):
    # One test over every file: ~480 parametrized cases would cost 20 s of pytest.
    assert not mismatches(lambda text: (sorted(oracle(text)[0]), oracle(text)[1]),
                          lambda text: reframe_harvest(reframe_check, text))


def run_reframe_check(check, app, text, tmp_path, monkeypatch):
    """The check's hooks on one output, as ReFrame calls them after the run."""
    test = check.KarmaRun()
    test.app, test.stagedir, test.stdout = app, str(tmp_path), "rfm_job.out"
    (tmp_path / "rfm_job.out").write_text(text)
    monkeypatch.chdir(tmp_path)
    test.set_command()
    try:
        test.passed()
    except SanityError:
        return test, False
    test.set_perf_variables()
    return test, True


def test_reframe_check_on_every_single_run(reframe_check, tmp_path, monkeypatch):
    wrong = []
    for path, text in sorted(SINGLE_RUNS.items()):
        foms, results = oracle(text)
        app = foms[0][0] if foms else "stream"
        test, passed = run_reframe_check(reframe_check, app, text, tmp_path, monkeypatch)
        expected = results == ["PASSED"] and bool(foms)
        # One variable per kernel, its units from its own line.
        if passed != expected or (passed and test.perf_variables != {
                kernel: (value, units) for _, kernel, value, units in foms}):
            wrong.append(path)
    assert not wrong


def test_reframe_check_fails_a_run_that_printed_foms_and_failed(reframe_check, tmp_path,
                                                                monkeypatch):
    for name in FAILED_RUNS:
        text = OUTPUTS[os.path.join("python/tests/data/harvest", name)]
        app = oracle(text)[0][0][0]
        assert oracle(text)[0], f"{name} must have FOM lines for this test to mean anything"
        assert not run_reframe_check(reframe_check, app, text, tmp_path, monkeypatch)[1]
        # The same lines with RESULT: PASSED pass: the RESULT line alone decided.
        ok = re.sub(r"^RESULT: .*$", "RESULT: PASSED", text, flags=re.MULTILINE)
        assert run_reframe_check(reframe_check, app, ok, tmp_path, monkeypatch)[1]


def test_reframe_check_command(reframe_check):
    test = reframe_check.KarmaRun()
    test.app, test.karma_prefix, test.sets = "mgs", "/opt/karma", ["mgs.algorithm=cgs2"]
    test.set_command()
    assert test.executable == "/opt/karma/bin/karma-mgs"
    assert test.executable_opts == ["/opt/karma/share/karma/inputs/mgs/small.yaml", "--output",
                                    "karma-mgs.json", "--set", "mgs.algorithm=cgs2"]


# --- Ramble -----------------------------------------------------------------


@pytest.fixture(scope="module")
def ramble_app():
    """scripts/harvest/ramble/applications/karma/application.py against a stand-in
    `ramble.appkit` recording every directive: (kind, args, kwargs)."""
    recorded = []
    appkit = types.ModuleType("ramble.appkit")

    def directive(kind):
        def record(*args, **kwargs):
            recorded.append((kind, args, kwargs))
        return record

    kinds = ("executable", "workload", "workload_variable", "figure_of_merit",
             "success_criteria", "tags")
    for kind in kinds:
        setattr(appkit, kind, directive(kind))
    appkit.ExecutableApplication = type("ExecutableApplication", (), {})
    appkit.__all__ = ["ExecutableApplication", *kinds]
    ramble = types.ModuleType("ramble")
    ramble.appkit = appkit
    saved = {k: sys.modules.get(k) for k in ("ramble", "ramble.appkit")}
    sys.modules.update({"ramble": ramble, "ramble.appkit": appkit})
    path = os.path.join(HARVEST, "ramble", "applications", "karma", "application.py")
    spec = importlib.util.spec_from_file_location("karma_ramble_application", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module, recorded
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def ramble_analysis(recorded, text):
    """Ramble's analysis of a log: each line against each figure of merit's
    regex (re.match, one line at a time), the name formatted with the match's
    groups; success when a line matches a success criterion."""
    foms = [(re.compile(kw["fom_regex"]), args[0], kw["group_name"], kw["units"])
            for kind, args, kw in recorded if kind == "figure_of_merit"]
    criteria = [re.compile(kw["match"]) for kind, _, kw in recorded
                if kind == "success_criteria" and kw["mode"] == "string"]
    found, success = [], bool(criteria)
    for line in text.splitlines(keepends=True):
        for regex, name, group, units in foms:
            m = regex.match(line)
            if m:
                found.append((name.format(**m.groupdict()), float(m[group]), units))
    for regex in criteria:
        success = success and any(regex.match(line) for line in text.splitlines(keepends=True))
    return found, success


def test_ramble_figures_of_merit_take_every_fom(ramble_app):
    _, recorded = ramble_app
    # Each FOM line gives exactly one figure of merit, named after its kernel,
    # with the line's value and units.
    assert not mismatches(
        lambda text: [(kernel, value, units) for _, kernel, value, units in oracle(text)[0]],
        lambda text: [(name.split(" ")[0], value, units)
                      for name, value, units in ramble_analysis(recorded, text)[0]])


def test_ramble_success_is_result_passed(ramble_app):
    _, recorded = ramble_app
    wrong = [path for path, text in sorted(SINGLE_RUNS.items())
             if ramble_analysis(recorded, text)[1] != (oracle(text)[1] == ["PASSED"])]
    assert not wrong
    for name in FAILED_RUNS:
        text = OUTPUTS[os.path.join("python/tests/data/harvest", name)]
        assert ramble_analysis(recorded, text)[0] and not ramble_analysis(recorded, text)[1]


def test_ramble_workloads_cover_the_suite(ramble_app):
    _, recorded = ramble_app
    workloads = {args[0] for kind, args, kw in recorded if kind == "workload"}
    executables = {args[0]: args[1] for kind, args, kw in recorded if kind == "executable"}
    assert workloads == APPS == set(executables)
    for app, template in executables.items():
        assert template.startswith(f"{{karma_prefix}}/bin/karma-{app} ")
    decks = {kw["workloads"][0]: kw["default"] for kind, args, kw in recorded
             if kind == "workload_variable" and args[0] == "deck"}
    assert decks == {app: f"{{karma_prefix}}/share/karma/inputs/{app}/small.yaml"
                     for app in APPS}
    for app in decks:
        assert os.path.isfile(os.path.join(ROOT, "inputs", app, "small.yaml"))


def test_every_tool_knows_every_mini_app(reframe_check):
    built = {name for name in os.listdir(os.path.join(ROOT, "miniapps"))
             if os.path.isfile(os.path.join(ROOT, "miniapps", name, "CMakeLists.txt"))}
    assert set(reframe_check.APPS) == built == APPS
    jube = ET.parse(os.path.join(HARVEST, "jube", "karma.xml")).getroot()
    apps = jube.find("./benchmark/parameterset/parameter[@name='app']").text.split(",")
    assert set(apps) == APPS
    tables = {t.get("name") for t in jube.iter("table")}
    assert tables == APPS
