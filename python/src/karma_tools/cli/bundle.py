"""karma-bundle's command line (the work is karma_tools.bundle's)."""

import os
import sys
from karma_tools.results import archive, validate
from karma_tools.bundle import bundle, disclose
from karma_tools.bundle.bundle import PROGRAM, examine
from karma_tools.core import ToolError, __version__, atomic_write
from karma_tools.cli import ArgumentParser, main_wrapper, warn


EPILOG = """\
check's answer, its last line on stdout:
  valid and reportable       at least one reportable result, and a figure
                             for every row the procurement score weighs
  valid, not reportable: REASONS
                             valid, but not that: every reason, `; ` between
                             them
  NOT VALID (N problem(s))   each problem a line on stderr naming the file
                             inside the bundle and the key

exit status: 0 packed, or valid and reportable; 1 (check) valid, not
reportable, or not valid; 2 bad arguments, a bundle that cannot be read (one
line), or pack refused (each problem a line, nothing written); 3 a file
system error."""


def pack(args):
    if not archive.is_archive_name(args.output):
        raise ToolError(f"{args.output}: a bundle's name ends in {archive.SUFFIX}", 2)
    if os.path.exists(args.output) and not args.force:
        raise ToolError(f"{args.output}: exists (--force replaces it)", 2)
    data, summary, count = bundle.pack(args.campaign, args.disclosure, args.build_log,
                                       args.weights or [], args.campaign_file)
    atomic_write(args.output, data)
    print(*summary, f"{PROGRAM}: wrote {args.output} ({count} files)", sep="\n")


def check(path):
    problems, summary, reasons = examine(path)
    for line in summary:
        print(line)
    for where, why in problems:
        warn(f"{validate.printable(where)}: {why}")
    answer = f"NOT VALID ({len(problems)} problem(s))" if problems else \
        "valid, not reportable: " + "; ".join(reasons) if reasons else "valid and reportable"
    print(f"{PROGRAM}: {path}: {answer}")
    return 1 if problems or reasons else 0


def _ask(key, question):
    """An answer the tester types on the terminal."""
    print(f"{question} ({key}): ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip()


def write_disclosure(args):
    flags = {key: getattr(args, flag[2:].replace("-", "_")) for key, flag, _ in disclose.ASKED}
    if args.check_answers:
        disclose.answers(args.answers, flags, ask=None, require=args.no_input)
        return
    text = disclose.make(args.campaign, args.answers, flags,
                         ask=None if args.no_input or not sys.stdin.isatty() else _ask)
    atomic_write(args.output, text)
    print(f"{PROGRAM}: wrote {args.output}")


def main(argv=None):
    p = ArgumentParser(prog=PROGRAM, description=bundle.__doc__, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    p.add_argument("--check", metavar="BUNDLE", help="check a bundle (as `check BUNDLE`)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    k = sub.add_parser("pack", help="a finished campaign as one bundle",
                       description="Pack a finished campaign directory, its disclosure, "
                       "build logs and weights into one bundle.")
    k.add_argument("campaign", metavar="CAMPAIGN_DIR", help="karma-batch generate's OUT")
    k.add_argument("-o", "--output", required=True, metavar="BUNDLE" + archive.SUFFIX)
    k.add_argument("--disclosure", required=True, metavar="FILE",
                   help="the filled-in campaigns/procurement/disclosure.yaml")
    k.add_argument("--build-log", action="append", required=True, metavar="FILE",
                   help="a log of the build (repeatable; at least one)")
    k.add_argument("--weights", action="append", metavar="FILE",
                   help="karma-compare's weights (campaigns/procurement/weights.txt)")
    k.add_argument("--campaign-file", metavar="FILE",
                   help="the campaign file, where it is no longer where the manifest says")
    k.add_argument("--force", action="store_true", help="replace BUNDLE if it exists")
    c = sub.add_parser("check", help="check a received bundle",
                       description="Check a bundle without trusting it.")
    c.add_argument("bundle", metavar="BUNDLE" + archive.SUFFIX)
    d = sub.add_parser("disclose", help="a campaign's disclosure from its captures",
                       description="Write the disclosure of a finished campaign: every "
                       "field from its results and environment captures, as check holds "
                       "them, but what no capture knows, which comes from --answers, the "
                       "flags or, on a terminal, a question each.")
    d.add_argument("campaign", metavar="CAMPAIGN_DIR", nargs="?", help="karma-batch generate's OUT")
    d.add_argument("-o", "--output", metavar="FILE.yaml")
    d.add_argument("--check-answers", action="store_true",
                   help="only check --answers and the flags, as the disclosure will need "
                   "them (every one with --no-input), writing nothing: before a campaign")
    d.add_argument("--answers", metavar="FILE.yaml", help="YAML of the asked keys "
                   f"({', '.join(key for key, _, _ in disclose.ASKED)})")
    for key, flag, what in disclose.ASKED:
        d.add_argument(flag, metavar="TEXT", help=f"{key}: {what}")
    d.add_argument("--no-input", action="store_true",
                   help="never ask: what is not given is an error")
    args = p.parse_args(argv)
    if args.check and args.command:
        p.error("--check and a command together")
    if not args.check and not args.command:
        p.error("name a command: pack, check, disclose (or --check BUNDLE)")
    if args.command == "disclose" and not (args.campaign and args.output or args.check_answers):
        p.error("disclose needs CAMPAIGN_DIR and -o FILE.yaml (or --check-answers)")

    command = {"pack": pack, "disclose": write_disclosure}.get(args.command)
    return main_wrapper(PROGRAM, lambda: command(args) if command else
                        check(args.check or args.bundle))
