"""scripts/harvest/jube/karma.xml run for real (ctest -L harvest): Debian's
JUBE runs every mini-app of this build on its small deck and sweep (tag
`small`, 1 rank, 1 thread), `jube result` makes the tables, and each table
cell must hold what the run printed: every kernel's FOM value and units, the
count of FOM lines, RESULT PASSED, exit code 0; karma-microbench's table the
mean and count of its benchmarks' bandwidths per family and side. A pattern
that stops matching leaves a cell empty or wrong, and the test fails."""

import csv
import json
import math
import os
import shlex
import shutil
import subprocess

import pytest

from conftest import SCRIPTS, build_bin, miniapp
from harvest_lines import APPS, oracle

XML = os.path.join(SCRIPTS, "harvest", "jube", "karma.xml")
FAMILIES = ("Sum3D", "Stencil3D", "TinyMatrixSum", "Subspan3D", "MatVec")


def column(app, kernel):
    return f"{app}_{kernel}".replace("-", "_").replace(".", "_")


@pytest.fixture(scope="module")
def jube_run(tmp_path_factory):
    """The benchmark's output directory after `jube run --tag small` and `jube result`."""
    jube = shutil.which("jube")
    if jube is None:
        pytest.fail("jube is not installed (Debian's jube; scripts/bootstrap.sh installs it)")
    for app in APPS:
        miniapp(app)  # built
    tmp = tmp_path_factory.mktemp("jube")
    # The build folder itself, laid out as an install's prefix (bin/,
    # share/karma/inputs: scripts/CMakeLists.txt).
    prefix = os.path.dirname(build_bin())
    out = tmp / "runs"
    env = dict(os.environ, KARMA_PREFIX=str(prefix), OMP_NUM_THREADS="1",
               OMP_PROC_BIND="false")
    for command in (["run", XML, "-o", str(out), "--tag", "small"],
                    ["result", "-a", str(out)]):
        done = subprocess.run([jube, *command], capture_output=True, text=True, env=env,
                              timeout=240, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"jube {command[0]}: {done.stdout[-2000:]}{done.stderr}"
    return out / "000000"


def table(run, app):
    with open(run / "result" / f"{app}.dat", newline="") as f:
        # ";" between cells: the sweeps' overrides contain commas.
        return list(csv.DictReader(f, delimiter=";"))


def work(run, row):
    return run / f"{int(row['jube_wp_id']):06d}_run" / "work"


def printed(run, row):
    """What the row's run printed: its workpackage's stdout, by the oracle."""
    with open(work(run, row) / "stdout") as f:
        return oracle(f.read())


def test_every_mini_app_ran_and_passed(jube_run):
    for app in APPS:
        rows = table(jube_run, app)
        assert rows, f"no row in {app}'s table"
        for row in rows:
            assert (row["result"], row["exit_code"]) == ("PASSED", "0"), (app, row)
            assert printed(jube_run, row)[1] == ["PASSED"]
            # The sweep's overrides reached the run (its results record them).
            words = shlex.split(row["sets"])
            with open(work(jube_run, row) / f"karma-{app}.json") as f:
                overrides = json.load(f)["deck"]["overrides"]
            assert overrides == words[1::2] and set(words[::2]) == {"--set"}, row


@pytest.mark.parametrize("app", sorted(APPS - {"microbench"}))
def test_fom_columns_hold_every_printed_fom(jube_run, app):
    rows = table(jube_run, app)
    kernel_columns = {name for name in rows[0] if name.startswith(f"{app}_")
                      and not name.endswith("_units")}
    for row in rows:
        foms = printed(jube_run, row)[0]
        assert foms and int(row["fom_lines_cnt"]) == len(foms)
        for _, kernel, value, units in foms:
            name = column(app, kernel)
            assert name in row, f"{app}: no column for kernel {kernel} ({row['sets']})"
            assert row[name] and math.isclose(float(row[name]), value, rel_tol=1e-9), name
            assert row[f"{name}_units"] == units, name
        # Kernels that did not run leave their columns empty.
        ran = {column(app, kernel) for _, kernel, _, _ in foms}
        assert all(row[name] == "" for name in kernel_columns - ran), row


def test_microbench_columns_average_its_kernels(jube_run):
    for row in table(jube_run, "microbench"):
        foms = printed(jube_run, row)[0]
        assert foms and int(row["fom_lines_cnt"]) == len(foms)
        assert all(units == "GB/s" for *_, units in foms)
        for family in FAMILIES:
            for side in ("karma", "raw"):
                values = [value for _, name, value, _ in foms
                          if name.split("/")[0] == family and name.split("/")[-1] == side]
                prefix = f"microbench_{family}_{side}"
                assert values and int(row[f"{prefix}_cnt"]) == len(values), prefix
                assert math.isclose(float(row[f"{prefix}_avg[GB/s]"]),
                                    sum(values) / len(values), rel_tol=1e-6), prefix
