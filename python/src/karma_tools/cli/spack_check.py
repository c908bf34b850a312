"""karma-spack-check's command line and main (the work is karma_tools.spackcheck's)."""

import os
import sys
from karma_tools.core import CHECKOUT, __version__
from karma_tools.cli import ArgumentParser, main_wrapper
from karma_tools import spackcheck


def main(argv=None):
    # The recipe: PREFIX/share/karma/spack when installed, else the checkout's scripts/spack.
    candidates = (os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "..", "share",
                               "karma", "spack", "package.py"),
                  os.path.join(CHECKOUT, "scripts", "spack", "package.py"))
    default_recipe = next((p for p in candidates if os.path.exists(p)), candidates[-1])
    p = ArgumentParser(prog="karma-spack-check", description=spackcheck.__doc__,
                       epilog="exit status: 0 every karma spec fits the recipe; 2 one "
                       "does not (file:line:col, its key, what is wrong), or a file is "
                       "missing; 3 a file there cannot be read")
    p.add_argument("environments", nargs="+", metavar="spack.yaml")
    p.add_argument("--recipe", default=os.path.normpath(default_recipe),
                   help="the recipe (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--version", action="version", version=f"karma-spack-check {__version__}")
    args = p.parse_args(argv)

    def run():
        recipe = spackcheck.Recipe(args.recipe)
        for path in args.environments:
            n = spackcheck.check_environment(path, recipe)
            if not args.quiet:
                print(f"karma-spack-check: {path}: {n} karma spec(s) fit {args.recipe}")

    return main_wrapper("karma-spack-check", run)
