"""karma-report's command line (the work is karma_tools.report's)."""

import os
import shlex
import shutil
import sys
from collections import Counter
from karma_tools.results import archive, resultset
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.core import ToolError, __version__, unwritable, write_all
from karma_tools.cli import ArgumentParser, main_wrapper, warn
from karma_tools.compare.implementations import parse_pair
from karma_tools.report.report import Plotter, build
from karma_tools.report.comparison import read_comparison
from karma_tools.results.resultset import IGNORED, NOT_RESULTS
from karma_tools.bundle import bundle
from karma_tools.score import figure


DESCRIPTION = """\
Turns a directory of karma results into one Markdown report with plots; what
each part shows: docs/campaigns.md (karma-compare and karma-report). Plots
go to PLOTS (default: plots/ beside the report), replaced whole. For example:

  karma-report results --committed-only --intro results/README.md \\
      --compare-from campaigns/procurement/gpu-node.yaml -o results/report.md"""


EPILOG = "exit status: 0 written; 2 bad input (no results, schema version); 3 could not " \
         "write, or no matplotlib for plots (use --no-plots)"


def _skipped_lines(skipped):
    """What a set skipped: a line per file, but other tools' files counted."""
    counts = Counter(why for _, why in skipped if why not in (NOT_RESULTS, IGNORED))
    lines = [f"{path} ({why})" for path, why in skipped if why in (NOT_RESULTS, IGNORED)]
    if counts:
        lines.append(", ".join(f"{n} {why}" for why, n in counts.items())
                     + ": other karma tools' files")
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = ArgumentParser(prog="karma-report", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("results", help="results directory")
    p.add_argument("-o", "--output", metavar="FILE.md",
                   help="the report (default: RESULTS/report.md)")
    p.add_argument("--plots-dir", metavar="DIR",
                   help="where plots go (default: plots/ beside the report); replaced whole")
    p.add_argument("--format", choices=("svg", "png"), default="svg", help="plot format")
    p.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib needed)")
    p.add_argument("--title", default="karma results", help="the report's first heading")
    p.add_argument("--intro", metavar="FILE.md", help="Markdown to put under the title")
    p.add_argument("--committed-only", action="store_true",
                   help="skip files that git ignores (e.g. local runs in results/*.json)")
    p.add_argument("--microbench-pair", default="karma:raw", metavar="OURS:THEIRS",
                   help="implementations set against each other where a run measures both, "
                   "as karma-microbench does (default karma:raw; raw-twin:raw shows the "
                   "machine's own spread)")
    p.add_argument("--comparison", action="append", default=[], metavar="FILE.json",
                   help="a karma-compare --json document: each set's figure of record and a "
                   "plot per mini-app of each row's ratio (and per-watt ratio) to the baseline")
    p.add_argument("--compare-from", metavar="CAMPAIGN.yaml",
                   help="the ratio tables of the campaign directories of this campaign's "
                   "name from this file's compare: section (corrected after a run)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="leave out files that are not well-formed results, listed in the "
                   "report with their errors, and report the rest")
    p.add_argument("--score", action="store_true", help="also the procurement figure of RESULTS, "
                   "as karma-score prints it (against the shipped reference unless --reference)")
    p.add_argument("--reference", metavar="FILE|SET", help="with --score: karma-score's "
                   "--reference (a reference file or a result set made one)")
    p.add_argument("--weights", metavar="FILE", help="with --score: karma-score's --weights")
    p.add_argument("--version", action="version", version=f"karma-report {__version__}")
    args = p.parse_args(argv)

    def run():
        ours, theirs = parse_pair(args.microbench_pair, "--microbench-pair")
        if not archive.isdir(args.results):
            raise ToolError(f"{args.results}: not a directory or results archive", 2)
        if args.intro and not os.path.isfile(args.intro):
            raise ToolError(f"--intro {args.intro}: no such file", 2)
        for path in args.comparison:
            read_comparison(path)  # bad input stops the report before anything is written
        compare_from = campaign_mod.load(args.compare_from, check_keys=False) \
            if args.compare_from else None
        result_set = resultset.open(args.results, committed_only=args.committed_only,
                                    skip_invalid=args.skip_invalid)
        if (args.reference or args.weights) and not args.score:
            raise ToolError("--reference and --weights go with --score", 2)
        scored = bundle.mark_official(figure.score(
            [(figure.label_of(args.results), result_set)], args.reference, args.weights)) \
            if args.score else None
        out_path = args.output or (os.path.join(args.results, "report.md")
                                   if archive.split(args.results) is None else
                                   args.results.removesuffix(archive.SUFFIX) + ".report.md")
        out_dir = os.path.dirname(os.path.abspath(out_path))
        plots_dir = os.path.abspath(args.plots_dir or os.path.join(out_dir, "plots"))
        # Replaced whole where a folder; a file there is the user's, not old plots.
        if not args.no_plots and os.path.lexists(plots_dir) and not os.path.isdir(plots_dir):
            raise ToolError(f"{plots_dir}: a file, not a plots folder (--plots-dir)", 2)
        staging = os.path.join(os.path.dirname(plots_dir),
                               f".{os.path.basename(plots_dir)}.tmp.{os.getpid()}")
        plotter = Plotter(staging, args.format, not args.no_plots,
                          os.path.relpath(plots_dir, out_dir))
        try:
            if plotter.enabled:
                shutil.rmtree(staging, ignore_errors=True)
                os.makedirs(staging)
            text = build(result_set, out_path, plotter, args.title, args.intro, ours, theirs,
                         "karma-report " + shlex.join(argv), args.comparison, compare_from, scored)
            # The plots and the report, or neither; no folder without plots.
            write_all([(out_path, text)], [(staging, plots_dir)] if plotter.files else [])
        except OSError as e:
            raise unwritable(plots_dir, e, "the plots") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        for _, error in result_set.invalid:
            warn(f"karma-report: left out {error}")
        for line in _skipped_lines(result_set.skipped):
            warn(f"karma-report: skipped {line}")
        skipped = len(result_set.skipped)
        plots = f"{len(plotter.files)} plot(s) in {plots_dir}" if plotter.files else \
            "nothing to plot, no plots folder" if plotter.enabled else "no plots"
        warn(f"karma-report: wrote {out_path} ({len(result_set.runs)} runs, {plots}"
             + (f"; skipped {skipped} file(s), listed above" if skipped else "") + ")")

    return main_wrapper("karma-report", run)
