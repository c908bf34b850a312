"""ReFrame run-only checks for the karma mini-apps (ReFrame 4).

One test per mini-app: it runs an installed suite's `karma-<app>` on a deck,
passes when the run prints `RESULT: PASSED`, and reports one performance
variable per `FOM:` line, named after the kernel, in the units the line gives.
Usage: scripts/harvest/README.md.

The patterns are module-level constants so that python/tests/test_harvest.py
checks them against committed output of every mini-app without ReFrame.
"""

import os
import re

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

APPS = ("stream", "hexgrad", "mgs", "matvec", "contact", "microbench")

# printf's %.6g (common/runtime/src/console.cpp).
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def fom_pattern(kernel=r"\S+"):
    """A mini-app's `FOM: app=A kernel=K value=V units=U ...` line (rank 0)."""
    return (r"^FOM: app=(?P<app>\S+) kernel=(?P<kernel>" + kernel + r") "
            r"value=(?P<value>" + NUMBER + r") units=(?P<units>\S+)")


FOM_PATTERN = fom_pattern()
# Every way a run ends (PASSED, FAILED reason=...).
RESULT_PATTERN = r"^RESULT: (?P<result>[A-Z]+)"
PASSED_PATTERN = r"^RESULT: PASSED\s*$"
NOT_PASSED_PATTERN = r"^RESULT: (?!PASSED\s*$)"


def pattern_for(app, kernel=None):
    """The pattern of app's figures of merit, of one kernel when named."""
    return fom_pattern() if kernel is None else fom_pattern(re.escape(kernel))


def figures_of_merit(app, text):
    """(kernel, value, units) of every figure of merit in a run's output."""
    return [(m["kernel"], float(m["value"]), m["units"])
            for m in re.finditer(pattern_for(app), text, re.MULTILINE)]


@rfm.simple_test
class KarmaRun(rfm.RunOnlyRegressionTest):
    """One mini-app of an installed karma suite on one deck."""

    app = parameter(APPS)
    # The install prefix (cmake --install ... --prefix): bin/karma-*, share/karma/inputs.
    karma_prefix = variable(str, value=os.environ.get("KARMA_PREFIX", "/usr/local"))
    # share/karma/inputs/<app>/<deck>.yaml; a path ending in .yaml is taken as is.
    deck = variable(str, value="small")
    sets = variable(typ.List[str], value=[])  # deck overrides, each passed as --set KEY=VALUE
    ranks = variable(int, value=1)
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    tags = {"karma"}

    @run_after("init")
    def set_command(self):
        self.descr = f"karma-{self.app}"
        self.executable = os.path.join(self.karma_prefix, "bin", f"karma-{self.app}")
        deck = self.deck if self.deck.endswith(".yaml") else os.path.join(
            self.karma_prefix, "share", "karma", "inputs", self.app, f"{self.deck}.yaml")
        self.executable_opts = [deck, "--output", f"karma-{self.app}.json"]
        for s in self.sets:
            self.executable_opts += ["--set", s]
        self.num_tasks = self.ranks
        self.keep_files = [f"karma-{self.app}.json"]

    @sanity_function
    def passed(self):
        # A run that printed its figures of merit and then failed (verification,
        # the results file) is not a pass: its RESULT line decides.
        return sn.all([
            sn.assert_found(PASSED_PATTERN, self.stdout),
            sn.assert_not_found(NOT_PASSED_PATTERN, self.stdout),
            sn.assert_found(pattern_for(self.app), self.stdout),
        ])

    @run_before("performance")
    def set_perf_variables(self):
        # The kernels depend on the deck and the build (cuBLAS only on CUDA,
        # ...), so the variables are the ones this run printed.
        with open(os.path.join(self.stagedir, sn.evaluate(self.stdout))) as out:
            foms = figures_of_merit(self.app, out.read())
        self.perf_variables = {
            kernel: sn.make_performance_function(
                sn.extractsingle(pattern_for(self.app, kernel), self.stdout, "value", float),
                units)
            for kernel, _, units in foms}
