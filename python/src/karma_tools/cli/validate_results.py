"""karma-validate-results' command line and main (karma_tools.results.validate)."""

import collections
import sys
from karma_tools.results import archive
from karma_tools import schemas
from karma_tools.core import APPS, __version__
from karma_tools.cli import ArgumentParser, main_wrapper, warn
from karma_tools.results.resultset import other_tool
from karma_tools.results.validate import parse_json, is_reference, printable, validate


PROGRAM = "karma-validate-results"


def _cannot_read(tally, path, why):
    warn(f"{PROGRAM}: {printable(path)}: {printable(why)}")
    tally["unreadable"] += 1


def check_file(path, in_directory, expect, tally):
    """One file's verdict counted in tally: karma, reference, invalid, skipped, unreadable."""
    if not archive.isfile(path):
        return _cannot_read(tally, path, "not a regular file")
    try:
        data = archive.read_bytes(path)
    except OSError as e:
        return _cannot_read(tally, path, f"cannot read: {e.strerror}")
    shown = printable(path)
    doc, why = parse_json(data)
    if not why and in_directory and (skip := other_tool(doc)):
        print(f"{shown}: skipped: {skip}, not karma results")
        tally["skipped"] += 1
        return
    problems = [f"not JSON: {why}"] if why else validate(doc, expect)
    for p in problems:
        warn(f"{shown}: {printable(p)}")
    kind = "invalid" if problems else "reference" if is_reference(doc) else "karma"
    if not problems:
        print(f"{shown}: valid {kind} results")
    tally[kind] += 1


def check_directory(directory, expect, tally):
    """Every *.json under directory, archives read as the folders they hold."""
    failure = []
    files = archive.walk_files(directory, ".json", onerror=failure.append)
    if failure:
        _cannot_read(tally, failure[0].filename or directory,
                     f"cannot read the directory: {failure[0].strerror}")
    elif not files:
        _cannot_read(tally, directory, "no *.json files in this directory or under it")
    for f in sorted(files):  # the same order on every file system
        check_file(f, True, expect, tally)


def run(paths, expect):
    schemas.load("results.schema.json")  # a wrong schema stops before any file
    tally = collections.Counter()
    for path in paths:
        if not archive.exists(path):
            _cannot_read(tally, path, "no such file or directory")
        elif archive.isdir(path):
            check_directory(path, expect, tally)
        else:
            check_file(path, False, expect, tally)
    if sum(tally.values()) > 1:
        print(f"{PROGRAM}: {tally['karma'] + tally['reference']} valid ({tally['karma']} karma "
              f"runs, {tally['reference']} reference results), {tally['invalid']} not valid, "
              f"{tally['unreadable']} unreadable, {tally['skipped']} skipped")
    return 2 if tally["unreadable"] else 1 if tally["invalid"] else 0


def main(argv=None):
    p = ArgumentParser(prog=PROGRAM, description="Checks karma results documents against "
                       "results.schema.json in the karma_tools package (karma_tools/schemas) "
                       "and the rules a schema cannot state: docs/results-format.md, section "
                       "Validation.",
                       epilog="exit codes: 0 every file valid, 1 a file not valid (its problems "
                       "on stderr), 2 bad usage, input that cannot be read or a wrong schema "
                       "file (wins over 1)")
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    p.add_argument("paths", nargs="*", metavar="PATH", help="a results JSON file, or a directory: "
                   "every *.json under it, recursively (hidden files and directories, and other "
                   "karma tools' JSON such as Google Benchmark files, are skipped and named)")
    p.add_argument("--app", metavar="|".join(APPS), help="the mini-app the results must come from")
    p.add_argument("--ranks", metavar="N", help="the number of MPI ranks they must report")
    p.add_argument("--result", metavar="PASSED|FAILED", help="the verdict they must carry")
    argv = sys.argv[1:] if argv is None else list(argv)
    # Paths and options in any order; after `--`, paths only (parse_intermixed_args mixes them).
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_intermixed_args(argv[:cut])
    args.paths += argv[cut + 1:]
    if not args.paths:
        p.error("no file or directory given")
    if args.app is not None and args.app not in APPS:
        p.error(f"--app '{printable(args.app)}' is not a mini-app of the suite")
    if args.ranks is not None and not (args.ranks.isascii() and args.ranks.isdigit()
                                       and 1 <= int(args.ranks) <= 2**31 - 1):
        p.error(f"--ranks '{printable(args.ranks)}' is not a whole number of ranks >= 1")
    if args.result not in (None, "PASSED", "FAILED"):
        p.error(f"--result '{printable(args.result)}': expected PASSED or FAILED")
    expect = {"app": args.app, "ranks": args.ranks and int(args.ranks), "result": args.result}
    return main_wrapper(PROGRAM, lambda: run(args.paths, expect))
