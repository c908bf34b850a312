"""karma-validate-results: results documents against the schema; its command
line and main (the work is karma_tools.results.validate's)."""

import sys
from karma_tools.results import archive
from karma_tools import schemas
from karma_tools.core import APPS, __version__, main_wrapper
from karma_tools.results.resultset import other_tool
from karma_tools.results.validate import parse_json, is_reference, printable, validate


PROGRAM = "karma-validate-results"


EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def usage():
    return (f"usage: {PROGRAM} PATH... [--app {'|'.join(APPS)}] [--ranks N] "
            "[--result PASSED|FAILED] | --version\n"
            "  PATH            a results JSON file, or a directory: every *.json under it,\n"
            "                  recursively (hidden files and directories, and other karma tools'\n"
            "                  JSON such as Google Benchmark files, are skipped and named)\n"
            "  --app NAME      the mini-app the results must come from\n"
            "  --ranks N       the number of MPI ranks they must report\n"
            "  --result R      the verdict they must carry\n"
            "The schema: results.schema.json in the karma_tools package (karma_tools/schemas).\n"
            "exit codes: 0 every file valid, 1 a file not valid (its problems on stderr),\n"
            "2 bad usage, input that cannot be read or a wrong schema file (wins over 1)\n")


class _UsageError(Exception):
    pass


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


def _arguments(args):
    paths, expect, options_done, i, given = [], {}, False, 0, {}

    def value():
        nonlocal i
        if i + 1 >= len(args):
            raise _UsageError(f"{args[i]} needs a value")
        if args[i] in given:  # as core.ArgumentParser refuses it
            raise _UsageError(f"{args[i]} given twice: '{printable(given[args[i]])}' and "
                              f"'{printable(args[i + 1])}'")
        given[args[i]] = args[i + 1]
        i += 1
        return args[i]

    while i < len(args):
        arg = args[i]
        if options_done or not arg.startswith("-") or arg == "-":
            paths.append(arg)
        elif arg == "--":
            options_done = True
        elif arg == "--app":
            expect["app"] = value()
            if expect["app"] not in APPS:
                raise _UsageError(f"--app '{printable(expect['app'])}' is not a mini-app of "
                                  "the suite")
        elif arg == "--ranks":
            text = value()
            if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 2**31 - 1):
                raise _UsageError(f"--ranks '{printable(text)}' is not a whole number of ranks "
                                  ">= 1")
            expect["ranks"] = int(text)
        elif arg == "--result":
            expect["result"] = value()
            if expect["result"] not in ("PASSED", "FAILED"):
                raise _UsageError(f"--result '{printable(expect['result'])}': expected PASSED "
                                  "or FAILED")
        elif arg in ("--help", "-h"):
            return None, None
        elif arg == "--version":
            return "version", None
        else:
            raise _UsageError(f"unknown option '{printable(arg)}'")
        i += 1
    if not paths:
        raise _UsageError("no file or directory given")
    return paths, expect


def run(args):
    try:
        paths, expect = _arguments(args)
    except _UsageError as e:
        sys.stderr.write(f"{PROGRAM}: error: {e} (see {PROGRAM} --help)\n")
        return EXIT_USAGE
    if paths is None:
        sys.stdout.write(usage())
        return EXIT_VALID
    if paths == "version":
        print(f"{PROGRAM} {__version__}")
        return EXIT_VALID
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
    return main_wrapper(PROGRAM, lambda: run(sys.argv[1:] if argv is None else argv))
