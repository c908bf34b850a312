"""Ramble application definition of the karma mini-apps.

One workload per mini-app. Each runs an installed suite's `karma-<app>` on a
deck with optional `--set` overrides; its figures of merit are the `FOM:`
lines the mini-app prints (one per kernel, named after it), and an experiment
succeeds when the run prints `RESULT: PASSED`. Usage: scripts/harvest/README.md.

Ramble reads a figure of merit's units from its definition, not from the
line, so there is one definition per unit the mini-apps print; the regular
expressions are module-level constants that python/tests/test_harvest.py
checks against committed output of every mini-app without Ramble.
"""

import re

from ramble.appkit import *  # Ramble's directives, as its own definitions take them

DECK_APPS = ("stream", "hexgrad", "mgs", "matvec", "contact", "microbench")

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"

# Each unit a mini-app's FOM line prints, and the name of its quantity.
FOM_UNITS = {
    "GB/s": "bandwidth",
    "GFLOP/s": "flop rate",
    "Melements/s": "element rate",
    "pairs/s": "pair rate",
}


def fom_regex(units):
    """A `FOM: app=A kernel=K value=V units=U ...` line whose units are `units`."""
    return (r"^FOM: app=(?P<app>\S+) kernel=(?P<kernel>\S+) value=(?P<value>" + NUMBER
            + r") units=(?P<units>" + re.escape(units) + r")(?:\s|$)")


FOM_REGEXES = {units: fom_regex(units) for units in FOM_UNITS}
PASSED_REGEX = r"^RESULT: PASSED\s*$"


class Karma(ExecutableApplication):
    """karma: Kokkos ARray Mini-Apps (memory bandwidth, hexahedral gradients,
    Gram-Schmidt QR, dense and sparse y = Ax, contact search on ragged arrays,
    karma's arrays against raw pointers)."""

    name = "karma"

    tags("kokkos", "mini-app", "memory-bandwidth", "mpi")

    workload_variable("karma_prefix", default="/usr/local",
                      description="where the suite is installed: bin/karma-*, share/karma/inputs",
                      workloads=list(DECK_APPS))
    workload_variable("karma_set_args", default="",
                      description="deck overrides, e.g. --set run.repetitions=20",
                      workloads=list(DECK_APPS))

    for _app in DECK_APPS:
        executable(_app, f"{{karma_prefix}}/bin/karma-{_app} {{deck}} {{karma_set_args}} "
                   f"--output {{experiment_run_dir}}/karma-{_app}.json", use_mpi=True)
        workload(_app, executables=[_app])
        workload_variable("deck", default=f"{{karma_prefix}}/share/karma/inputs/{_app}/small.yaml",
                          description=f"karma-{_app}'s deck", workloads=[_app])
    del _app

    for _units, _quantity in FOM_UNITS.items():
        figure_of_merit(f"{{kernel}} {_quantity}", fom_regex=FOM_REGEXES[_units],
                        group_name="value", units=_units)
    del _units, _quantity

    # A run that printed its figures and then failed prints RESULT: FAILED instead.
    success_criteria("karma-passed", mode="string", match=PASSED_REGEX, file="{log_file}")
