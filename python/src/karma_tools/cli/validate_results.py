"""karma-validate-results: results documents against the schema; its command
line and main (the work is karma_tools.results.validate's)."""

import sys
from karma_tools.results import archive
from karma_tools import schemas
from karma_tools.core import APPS, ArgumentParser, __version__, main_wrapper
from karma_tools.results.resultset import other_tool
from karma_tools.results.validate import parse_json, is_reference, printable, validate


PROGRAM = "karma-validate-results"
EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class _Tally:
    def __init__(self):
        self.valid = self.invalid = self.unreadable = self.skipped = 0
        self.references = 0  # of the valid ones

    def summary(self):
        return (f"{PROGRAM}: {self.valid} valid ({self.valid - self.references} karma runs, "
                f"{self.references} reference results), {self.invalid} not valid, "
                f"{self.unreadable} unreadable, {self.skipped} skipped")

    def cannot_read(self, path, why):
        print(f"{PROGRAM}: {printable(path)}: {printable(why)}", file=sys.stderr)
        self.unreadable += 1


def check_file(path, in_directory, expect, tally):
    if not archive.isfile(path):
        tally.cannot_read(path, "not a regular file")
        return
    try:
        data = archive.read_bytes(path)
    except OSError as e:
        tally.cannot_read(path, f"cannot read: {e.strerror}")
        return
    doc, why = parse_json(data)
    if why:
        print(f"{printable(path)}: not JSON: {printable(why)}", file=sys.stderr)
        tally.invalid += 1
        return
    if in_directory and other_tool(doc):
        print(f"{printable(path)}: skipped: {other_tool(doc)}, not karma results")
        tally.skipped += 1
        return
    problems = validate(doc, expect)
    for p in problems:
        print(f"{printable(path)}: {printable(p)}", file=sys.stderr)
    if problems:
        tally.invalid += 1
    elif is_reference(doc):
        print(f"{printable(path)}: valid reference results")
        tally.valid += 1
        tally.references += 1
    else:
        print(f"{printable(path)}: valid karma results")
        tally.valid += 1


def check_directory(directory, expect, tally):
    """Every *.json under directory, results archives (a directory's or
    directory itself) read as the folders they hold."""
    failure = []
    files = archive.walk_files(directory, ".json", onerror=failure.append)
    if failure:
        tally.cannot_read(failure[0].filename or directory,
                          f"cannot read the directory: {failure[0].strerror}")
    elif not files:
        tally.cannot_read(directory, "no *.json files in this directory or under it")
    for f in sorted(files):  # the same order on every file system
        check_file(f, True, expect, tally)


def parser():
    p = ArgumentParser(prog=PROGRAM, description="Checks karma results documents against "
                       "results.schema.json in the karma_tools package (karma_tools/schemas) "
                       "and the rules a schema cannot state: docs/results-format.md, section "
                       "Validation.",
                       epilog="exit codes: 0 every file valid, 1 a file not valid (its problems "
                       "on stderr), 2 bad usage, input that cannot be read or a wrong schema "
                       "file (wins over 1)")
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="a results JSON file, or a directory: every *.json under it, "
                   "recursively (hidden files and directories, and other karma tools' JSON "
                   "such as Google Benchmark files, are skipped and named)")
    p.add_argument("--app", metavar="|".join(APPS), help="the mini-app the results must come "
                   "from")
    p.add_argument("--ranks", metavar="N", help="the number of MPI ranks they must report")
    p.add_argument("--result", metavar="PASSED|FAILED", help="the verdict they must carry")
    return p


def _expectations(p, args):
    """What --app, --ranks and --result ask of every file."""
    if not args.paths:
        p.error("no file or directory given")
    if args.app is not None and args.app not in APPS:
        p.error(f"--app '{printable(args.app)}' is not a mini-app of the suite")
    ranks = args.ranks
    if ranks is not None and not (ranks.isascii() and ranks.isdigit()
                                  and 1 <= int(ranks) <= 2**31 - 1):
        p.error(f"--ranks '{printable(ranks)}' is not a whole number of ranks >= 1")
    if args.result not in (None, "PASSED", "FAILED"):
        p.error(f"--result '{printable(args.result)}': expected PASSED or FAILED")
    return {"app": args.app, "ranks": ranks and int(ranks), "result": args.result}


def run(paths, expect):
    schemas.load("results.schema.json")  # a wrong schema stops before any file
    tally = _Tally()
    for path in paths:
        if not archive.exists(path):
            tally.cannot_read(path, "no such file or directory")
        elif archive.isdir(path):
            check_directory(path, expect, tally)
        else:
            check_file(path, False, expect, tally)
    if tally.valid + tally.invalid + tally.unreadable + tally.skipped > 1:
        print(tally.summary())
    if tally.unreadable:
        return EXIT_USAGE
    return EXIT_INVALID if tally.invalid else EXIT_VALID


def main(argv=None):
    p = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    # Paths and options in any order; after `--`, paths only (which
    # parse_intermixed_args does not keep apart).
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_intermixed_args(argv[:cut])
    args.paths += argv[cut + 1:]
    expect = _expectations(p, args)
    return main_wrapper(PROGRAM, lambda: run(args.paths, expect))
