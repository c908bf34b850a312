"""karma-compare's command line and main (the work is karma_tools.compare's)."""

import fnmatch
import json
import subprocess
import sys

from karma_tools.campaign import campaign as campaign_mod
from karma_tools.cli import ArgumentParser, incomplete, main_wrapper, parse_set, refuse, warn
from karma_tools.compare import implementations, sides
from karma_tools.compare.compare import compare
from karma_tools.compare.text import csv_text, markdown
from karma_tools.core import ToolError, __version__, write_all
from karma_tools.results import resultset
from karma_tools.results.archive import read_json
from karma_tools.results.codestatus import SourceAt


DESCRIPTION = """\
Compares karma results of two or more machines. Each SET is a directory, a
campaign, an archive or a bundle of results, optionally labelled LABEL=DIR;
the first is the baseline unless --baseline names another. A row per
mini-app, case and kernel of the baseline; ratio > 1: better than the
baseline. The figure of record of each set is karma-score's with the
baseline as the reference (docs/score.md), as `karma-score SET --reference
BASELINE`; a set whose figure is INCOMPLETE exits 1, as there. How rows pair,
--implementations and --campaign, with examples: docs/campaigns.md
("karma-compare and karma-report", "Side by side on one node")."""


EPILOG = "exit status: 0 compared; 1 a set's figure of record is INCOMPLETE (as karma-score); " \
    "2 bad input (schema version, empty set, bad weights); 3 could not write an output"


def campaign_main(args):
    # --compare-from: a campaign file's compare: edited after its jobs ran, checked as generate's.
    specs = campaign_mod.load(args.compare_from, check_keys=False).compare \
        if args.compare_from else None
    name, manifest_path, tables, notes = sides.campaign_tables(args.campaign, specs,
                                                               args.aggregate, energy=True)
    if args.compare_from:
        ran = {j.get("run") for j in read_json(manifest_path)["jobs"]}  # checked: objects
        for spec in specs:
            for side in ("numerator", "denominator"):
                for pattern in spec[side].get("run", []):
                    refuse((not any(fnmatch.fnmatchcase(str(r), pattern) for r in ran),
                            f"--compare-from {args.compare_from}: compare {spec['name']}: "
                            f"{side}.run '{pattern}' is no run of {manifest_path}"))
    refuse((not tables, f"{manifest_path}: the campaign declares no comparisons (add a "
            "`compare:` section to its campaign file and generate again)"))
    lines = [f"# karma side by side: campaign {name}", ""] + sides.markdown(tables, "##") + (
        ["## Notes", ""] + [f"- {n}" for n in notes] + [""] if notes else [])
    doc = {"karma_compare_campaign": 1, "campaign": name, "manifest": manifest_path,
           "tables": tables, "notes": notes}
    return _write(args, "\n".join(lines), doc, lambda: sides.csv_text(tables), quiet=True)


def _write(args, md, doc, csv_text, results=(), quiet=False):
    """Writes the outputs asked for (all or none), else Markdown to stdout; 1 where INCOMPLETE."""
    outputs = [(path, text()) for path, text in (
        (args.markdown, lambda: md + "\n"), (args.csv, csv_text),
        (args.json, lambda: json.dumps(doc, indent=2) + "\n")) if path]
    write_all(outputs)
    if not outputs:
        sys.stdout.write(md + "\n")
    for path, _ in [] if quiet else outputs:
        warn(f"karma-compare: wrote {path}")
    for item in (x for r in results for x in r["left_out"]):
        warn(f"karma-compare: left out {item['error']}")
    return incomplete("karma-compare", (x for r in results for x in r["record"].items()))


def main(argv=None):
    p = ArgumentParser(prog="karma-compare", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("sets", nargs="*", metavar="[LABEL=]SET",
                   help="results directory or file of one machine")
    p.add_argument("--implementations", metavar="OURS:THEIRS",
                   help="compare two implementations within each SET instead (e.g. karma:raw)")
    p.add_argument("--campaign", metavar="OUT",
                   help="the ratio tables of one campaign (its compare: section) instead")
    p.add_argument("--compare-from", metavar="CAMPAIGN.yaml",
                   help="with --campaign: the compare: section of this campaign file "
                   "instead of the one OUT was generated with (tables corrected after a run)")
    p.add_argument("--baseline", metavar="LABEL", help="the set others are divided by "
                   "(default: the first)")
    p.add_argument("--aggregate", choices=("median", "best", "mean", "worst"),
                   help="how repeated runs of a case combine (default: median; with "
                   "--campaign: the campaign's, worst unless it says)")
    p.add_argument("--weights", metavar="FILE",
                   help="the figure of record's weights, as karma-score's (docs/score.md)")
    p.add_argument("--per-node", action="store_true",
                   help="scale ratios by the node counts of the runs compared")
    p.add_argument("--system-nodes", action="append", metavar="LABEL=N",
                   help="removed in 1.1.0 with the system figure (exit 2)")
    p.add_argument("--energy", action="store_true", help="accepted for older commands; it changes "
                   "nothing (per-watt ratios are shown wherever both sides measured energy)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown table to FILE")
    p.add_argument("--csv", metavar="FILE", help="write one row per case, kernel and set")
    p.add_argument("--json", metavar="FILE", help="write everything as JSON")
    p.add_argument("--committed-only", action="store_true", help="skip files that git ignores")
    p.add_argument("--allow-partial", action="store_true",
                   help="with --campaign: accepted for older commands; it changes nothing")
    p.add_argument("--allow-unmatched", action="store_true",
                   help="accepted for older commands; it changes nothing")
    p.add_argument("--source", action="append", default=[], metavar="LABEL=REV",
                   help="the set LABEL's results without code versions ran the kernel "
                   "source of git revision REV (of --repo): compare source hashes")
    p.add_argument("--repo", metavar="PATH",
                   help="the git repository of --source (default: the one the tool runs in)")
    p.add_argument("--skip-invalid", action="store_true", help="leave out files that are not "
                   "well-formed results, listed with their errors, and compare the rest")
    p.add_argument("--version", action="version", version=f"karma-compare {__version__}")
    args = p.parse_args(argv)

    def run():
        # Kept so older commands still run; said, never silently ignored.
        for flag, given in (("--energy", args.energy), ("--allow-unmatched", args.allow_unmatched),
                            ("--allow-partial", args.allow_partial and args.campaign)):
            if given:
                warn(f"karma-compare: note: {flag} changes nothing since 1.1.0 (CHANGELOG.md)")
        refuse((args.system_nodes, "--system-nodes: removed in 1.1.0 with compare's weighted mean; "
                "the figure of record is karma-score's (CHANGELOG.md)"),
               (args.compare_from and not args.campaign, "--compare-from goes with --campaign"))
        if args.campaign:
            refuse((args.sets, "--campaign compares within one campaign: give no result sets "
                    "beside it"),
                   (args.aggregate == "mean", "--aggregate mean: the ratio tables take worst, "
                    "best or median"),
                   (args.implementations, "--implementations compares within result sets; a "
                    "campaign's pairs are its compare: section's"))
            return campaign_main(args)
        if args.implementations:
            return implementations_main(args)
        refuse((args.allow_partial, "--allow-partial goes with --campaign"),
               (args.repo and not args.source, "--repo goes with --source"),
               (len(args.sets) < 2, "give at least two result sets to compare"))
        sets = _open_sets(args)
        sources = _sources(args.source, args.repo, [s.label for s in sets])
        result = compare(sets, args.baseline or sets[0].label, how=args.aggregate or "median",
                         per_node=args.per_node, weights_path=args.weights, sources=sources)
        return _write(args, markdown(result), result, lambda: csv_text([result]), [result])

    return main_wrapper("karma-compare", run)


def _open_sets(args):
    return [resultset.open(path, label, committed_only=args.committed_only,
                           skip_invalid=args.skip_invalid)
            for label, path in map(parse_set, args.sets)]


def implementations_main(args):
    """--implementations OURS:THEIRS: one comparison per set."""
    ours, theirs = implementations.parse_pair(args.implementations, "--implementations")
    for given, option in ((args.baseline, "--baseline"), (args.weights, "--weights"),
                          (args.source, "--source"), (args.repo, "--repo"),
                          (args.per_node, "--per-node"), (args.allow_partial, "--allow-partial")):
        refuse((given, f"{option} does not go with --implementations: both sides are one set's "
                f"runs (the baseline is its {theirs} kernels)"))
    refuse((not args.sets, "give at least one result set whose implementations to compare"))
    sets = _open_sets(args)
    refuse((len({s.label for s in sets}) < len(sets),
            "two result sets have the same label; name them LABEL=DIR"))
    results = [implementations.compare_within(s, ours, theirs, how=args.aggregate or "median")
               for s in sets]
    doc = {"karma_compare_implementations": 1, "comparisons": results}
    return _write(args, "\n\n".join(markdown(r) for r in results), doc,
                  lambda: csv_text(results), results)


def _sources(items, repo, labels):
    """{label: SourceAt} of the --source LABEL=REV options, each checked."""
    if items and not repo:
        try:
            repo = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            raise ToolError("--source: not in a git repository (give --repo PATH)", 2) from None
    out = {}
    for item in items:
        label, sep, rev = item.partition("=")
        refuse((not sep or not label or not rev, f"--source {item}: expected LABEL=REV"),
               (label not in labels, f"--source {item}: no set of label '{label}' (sets: "
                f"{', '.join(labels)})"))
        check = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "--quiet",
                                f"{rev}^{{commit}}"], capture_output=True, text=True)
        refuse((check.returncode != 0, f"--source {item}: '{rev}' is no commit of {repo}"))
        out[label] = SourceAt(repo, rev)
    return out
