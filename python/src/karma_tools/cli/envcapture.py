"""karma-envcapture's command line and main (the work is karma_tools.envcapture's)."""

import os
from karma_tools.core import ToolError, __version__, write_folder
from karma_tools.cli import ArgumentParser, main_wrapper
from karma_tools import envcapture


def main(argv=None):
    p = ArgumentParser(prog="karma-envcapture", description=envcapture.__doc__,
                       epilog="exit status: 0 written; 2 bad arguments (nothing "
                       "written); 3 could not write OUT")
    p.add_argument("-o", "--output", default="environment", metavar="OUT",
                   help="directory to write (default: ./environment); replaced if it exists")
    p.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="longest wait for any one command (default 20)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--version", action="version", version=f"karma-envcapture {__version__}")
    args = p.parse_args(argv)
    if not 0 < args.timeout < float("inf"):  # NaN fails this too
        p.error(f"--timeout {args.timeout:g}: expected a number of seconds > 0")

    def run():
        if os.path.lexists(args.output) and not os.path.isdir(args.output):
            raise ToolError(f"{args.output} exists and is not a directory; the capture "
                            "replaces a directory only", 2)
        doc, files = envcapture.capture(timeout=args.timeout)
        write_folder(args.output, files)  # whole or absent
        if not args.quiet:
            found = [k for k, v in doc["commands"].items() if v is not None]
            gpus = doc["gpu"]["count"] if doc["gpu"] else 0
            print(f"karma-envcapture: {args.output}/environment.json ({doc['hostname']}, "
                  f"{gpus} NVIDIA GPU(s); ran {', '.join(found)})")

    return main_wrapper("karma-envcapture", run)
