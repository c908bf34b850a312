"""karma-score's command line (the work is karma_tools.score's)."""

import json
import os
import sys
import tempfile
from karma_tools.score import figure, page, release, weights
from karma_tools.core import CHECKOUT, ToolError, __version__, atomic_write, write_all
from karma_tools.cli import ArgumentParser, incomplete, main_wrapper, parse_set, warn
from karma_tools.bundle import bundle
from karma_tools.score.score import PROGRAM, markdown, with_span


USAGE = """karma-score [-h] [--version] [LABEL=]SET [[LABEL=]SET ...] [--reference FILE]
                   [--weights FILE] [--json OUT] [--page FILE.md]
       karma-score reference SET [SET ...] -o FILE [--name NAME] [--kind {gpu,host}]
       karma-score release [--bin-dir DIR] [--write]
       karma-score accept BID DELIVERED [--reference FILE] [--weights FILE] [--json OUT]"""


DESCRIPTION = """\
Scores result sets against a reference machine under the run rules and
gives each its procurement figure, karma's figure of record, with the
interval its rounds span, per-app, per-class and per-watt scores, and every
result and row left out, with why (docs/score.md says how and why). A
SET is a results directory, a campaign directory of karma-batch generate, a
.tar.xz archive of karma-batch archive or a karma-bundle; each set is scored
on its own. --reference is a reference file or a result set made one;
default the shipped reference machine's. A set that lacks a row the
weights give weight to is INCOMPLETE: no overall figure, exit status 1.

karma-score reference SET... -o FILE: makes a reference file from one set,
or from several, each of another unit of one machine type.
karma-score release: whether this checkout is still the release whose
reference it ships (docs/run-rules.md#releases). karma-score accept: a
delivered node's run against the bid's bundle (docs/run-rules.md#acceptance).

Output: Markdown on stdout; --json OUT the same as JSON; --page FILE.md the
decision page of the one set given, its chart beside it as FILE.png. A set
named 'reference' is given as ./reference."""


EPILOG = "exit status: 0 scored (or reference written); 1 a set is INCOMPLETE (it lacks a " \
    "row the weights give weight to: no overall is given) or UNOFFICIAL (not a valid and " \
    "reportable bundle scored with the release's reference and weights; --unofficial: 0); " \
    "2 bad input (one line naming the file; nothing written); 3 could not write an output"


def reference_main(argv):
    p = ArgumentParser(prog=f"{PROGRAM} reference", epilog=EPILOG, description="Makes a reference "
                       "file from one result set, or from several, each of another unit of one "
                       "machine type (see karma-score --help).")
    p.add_argument("sets", nargs="+", metavar="SET", help="results directory, campaign "
                   "directory, archive or bundle of a unit of the reference machine")
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="the reference file to write (JSON)")
    p.add_argument("--name", help="the reference machine's name (default: the set's)")
    p.add_argument("--kind", choices=figure.KINDS, help="the device kind, where the set has both")
    args = p.parse_args(argv)

    doc = figure.make_reference(args.sets, args.name, args.kind)
    atomic_write(args.output, json.dumps(doc, indent=2) + "\n")
    warn(f"{PROGRAM}: wrote {args.output} ({len(doc['rows'])} rows from {doc['results']} "
         f"results of {len(doc['units'])} unit(s))")
    for unit in doc["units"]:  # a unit is left out only for a fault: the tester decides
        if unit["held_back"]:
            warn(f"{PROGRAM}: {unit['source']}: {unit['held_back']} run(s) that power or "
                 "heat held back, or whose ECC errors grew (karma-score --page names them)")


def accept_main(argv):
    p = ArgumentParser(prog=f"{PROGRAM} accept", epilog="exit status: 0 accepted; 1 not (each "
                       "app short of the bid named, with its rows); 2 bad input",
                       description="Acceptance on delivery: a reportable run made on the "
                       "delivered node (one round at least) against the bid's bundle. Every "
                       "app's figure must reach the bid's, widened by the unit band of "
                       "--reference (a reference of several units) or else by "
                       f"{figure.ACCEPT_TOLERANCE:.0%} (docs/run-rules.md#acceptance).")
    p.add_argument("bid", metavar="BID", help="the bid's karma-bundle")
    p.add_argument("delivered", metavar="DELIVERED", help="a result set of the delivered node")
    p.add_argument("--reference", metavar="FILE", help="a reference of several units of the "
                   "machine type, whose band widens the bid's figures")
    p.add_argument("--weights", metavar="FILE", help=f"app weights (default {weights.DEFAULT})")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON")
    args = p.parse_args(argv)

    problems, _, reasons = bundle.examine(args.bid)
    if problems:
        raise ToolError(f"{args.bid}: not a valid karma-bundle ({len(problems)} problem(s): "
                        "karma-bundle check lists them)", 2)
    report = figure.accept(args.bid, args.delivered, args.reference, args.weights)
    apps = report["sets"][0]["tiers"][figure.TIER]["apps"]
    write_all([(args.json, json.dumps(report, indent=2) + "\n")] if args.json else [])
    for why in reasons:
        print(f"{PROGRAM} accept: note: the bid is not reportable: {why}")
    for app, a in apps.items():
        print(f"{app}: {with_span(a['score'], a['interval'])} of the bid; at least "
              f"{a['floor']:.3f}: " + ("accepted" if a["accepted"] else "**NOT ACCEPTED**"
                                       + (f" ({', '.join(a['short'])})" if a["short"] else
                                          "" if a["complete"] else " (rows missing)")))
    short = [app for app, a in apps.items() if not a["accepted"]]
    print(f"{PROGRAM} accept: {args.delivered} against {args.bid}: " + (
        f"NOT ACCEPTED ({', '.join(short)})" if short else "ACCEPTED"))
    return 1 if short else 0


def release_main(argv):
    p = ArgumentParser(
        prog=f"{PROGRAM} release", epilog="exit status: 0 the checkout is the release (or the "
        "file was written); 1 it differs, each difference a line; 2 bad input",
        description="Whether this checkout still is the release that "
        f"{release.RELEASE_FILE} records, its kernels' code versions computed from the "
        "sources (what a release fixes: docs/run-rules.md#releases).")
    p.add_argument("--bin-dir", metavar="DIR", help="a build's bin/ (or an installed PREFIX/bin) "
                   "whose karma-<app> --help=json gives the deck keys (default: PATH)")
    p.add_argument("--write", action="store_true", help="write the release file from this "
                   "checkout instead (making a release: every kernel must be the reference's)")
    p.add_argument("--at", metavar="REV", help="check the release as git holds it at commit "
                   "REV (a release's own commit) instead of this checkout's files; its deck "
                   "keys only with --bin-dir of a build of REV")
    args = p.parse_args(argv)
    if args.at and args.write:
        p.error("--at checks a commit; --write writes this checkout's release file")

    root = os.path.normpath(CHECKOUT)
    if not os.path.isdir(os.path.join(root, "inputs")):
        raise ToolError(f"{PROGRAM} release reads a checkout's sources; {root} is none", 2)
    if args.write:
        doc = release.new_record(root, args.bin_dir)
        atomic_write(os.path.join(root, release.RELEASE_FILE), json.dumps(doc, indent=2) + "\n")
        warn(f"{PROGRAM}: wrote {release.RELEASE_FILE} (karma {doc['version']})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:  # where --at's files go
        tree = release.tree_at(root, args.at, tmp) if args.at else root
        keys_too = not args.at or args.bin_dir is not None  # --at's need a build of it
        version, found = release.check(tree, args.bin_dir, keys_too)
    if not keys_too:
        print(f"{PROGRAM}: the deck keys are not compared: --bin-dir names no build of {args.at}")
    for line in found:
        print(f"{PROGRAM}: {line}")
    if not args.at and __version__ != version:
        if not __version__.endswith("-dev"):
            raise ToolError(f"this checkout says karma {__version__}, but {release.RELEASE_FILE} "
                            f"is karma {version}'s: write the release file (--write)", 1)
        print(f"{PROGRAM}: this checkout is karma {__version__}, a development version "
              f"that claims no release; it differs from karma {version}'s release in "
              f"{len(found)} way(s) (above); check {version} at its own commit with --at")
        return 0
    what = f"commit {args.at}" if args.at else "this checkout"
    print(f"{PROGRAM}: {len(found)} difference(s) of {what} from karma {version}'s release "
          f"({release.RELEASE_FILE}): {release.NEEDS}" if found else
          f"{PROGRAM}: {what} is karma {version}'s release")
    return 1 if found else 0


def score_main(argv):
    p = ArgumentParser(prog=PROGRAM, usage=USAGE, description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("sets", nargs="+", metavar="[LABEL=]SET", help="a result set to score")
    p.add_argument("--reference", metavar="FILE", help="the reference file (karma-score reference) "
                   "or a result set made one; default the shipped reference machine's, "
                   f"{figure.DEFAULT_REFERENCE})")
    p.add_argument("--weights", metavar="FILE", help=f"app weights (default {weights.DEFAULT}; its "
                   "grammar: docs/score.md)")
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON")
    p.add_argument("--page", metavar="FILE.md", help="also write the decision page of the "
                   "one set given (Markdown; its chart beside it as FILE.png)")
    p.add_argument("--unofficial", action="store_true", help="exit 0 for a set whose figure "
                   "is not of record (UNOFFICIAL, still said on every output)")
    p.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    args = p.parse_args(argv)

    if args.page and (len(args.sets) != 1 or not args.page.endswith(".md")):
        raise ToolError(f"--page {args.page}: a page is of one set and its name ends in .md", 2)
    sets = [parse_set(s, figure.label_of(s)) for s in args.sets]
    report = bundle.mark_official(figure.score(sets, args.reference, args.weights))
    sets = report["sets"]
    facts = [s.pop("facts") for s in sets]
    outputs = [(args.json, json.dumps(report, indent=2) + "\n")] if args.json else []
    if args.page:
        text, png = page.render(sets[0], report["weights"], report["reference"], args.page,
                                *facts[0])
        outputs += [(args.page, text + "\n"), (args.page[:-3] + ".png", png)]
    write_all(outputs)
    sys.stdout.write(markdown(report) + "\n")
    code = incomplete(PROGRAM, [(s["label"], s["record"]) for s in sets] + [
        (f"{s['label']} per node", s["node"]) for s in sets if s["node"]["scored"]])
    off = [s for s in sets if s["record"]["unofficial"] and not args.unofficial]
    for s in off:
        warn(f"{PROGRAM}: {s['label']} is UNOFFICIAL: "
             f"{'; '.join(s['record']['unofficial'])}; exit 1 (--unofficial: 0)")
    return 1 if off else code


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    commands = {"reference": reference_main, "release": release_main, "accept": accept_main}
    command = commands.get(argv[0]) if argv else None
    return main_wrapper(PROGRAM, lambda: command(argv[1:]) if command else score_main(argv))
