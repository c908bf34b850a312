"""karma-compare: comparisons of two result sets or a campaign's sides; its
command line and main (the work is karma_tools.compare's)."""

import argparse
import csv
import fnmatch
import io
import json
import os
import re
import subprocess
import sys
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.compare import implementations
from karma_tools.compare import sides
from karma_tools.results.archive import read_json
from karma_tools.compare.compare import compare
from karma_tools.results.codestatus import SourceAt
from karma_tools.compare.energy import campaign_energy
from karma_tools.compare.text import blank_if_none, campaign_energy_markdown, csv_text, markdown
from karma_tools.core import ArgumentParser, ToolError, __version__, main_wrapper, write_all
from karma_tools.results import resultset


DESCRIPTION = """\
Compares karma results of two or more machines. Each SET is a directory (or
one JSON file) of results, optionally labelled LABEL=DIR; the first is the
baseline unless --baseline names another.

Rows: one per mini-app, case and kernel of the baseline. A case is a deck
configuration (its values apart from the run: section) at a number of ranks;
repeated runs of a case are aggregated (--aggregate, default median). Another
set's runs match a case exactly, or else by the same app and the same
non-numeric settings (layout, variant, scaling, ...), in which case what differs
is flagged: precision, problem size, other parameters. Flags also mark failed
verification (such runs count in no mean), a different Kokkos backend, and
different node counts. A deck key an older result lacks is read at the
default of the newest deck schema the sets recorded (deck.schema, from suite
0.2.0); of several runs that could stand for a case, the one with the fewest
differing keys is chosen. Case labels start with gpu: or host:.

Code: a pair whose kernels' code_version differ is "code changed", one side
without a code version, or versions of two schemes (code.scheme),
"code version unknown". --source LABEL=REV: that set's results without code
versions of this scheme ran the kernel source of git revision REV (of
--repo, default the repository the tool runs in): the other side's
code.symbols are hashed there and compared with its code.source (or with
their hash at the other side's own --source).

Coverage: the summary gives the share of the weight each set covers; below
100% the set is INCOMPLETE (the first line says so), it gets no mean, and the
exit status is 1. Unpaired rows are listed
with the differing key and its two values (or "no run"), and so are runs of
other sets that no baseline row stands for ("Only in other sets").

Ratio: > 1 means better than the baseline (a higher FOM, or a lower time).
--per-node multiplies each ratio by nodes(baseline run) / nodes(run). The
summary is the weighted geometric mean of each set's ratios (weights from
--weights; by default every mini-app weighs 1, shared by its rows), and, with
--system-nodes, that mean times the set's system size over the baseline's:
the system-level figure procurement suites such as ATS-5 use. Each ratio and
mean carries the interval its runs span (each side's worst run against the
other's best; the mean's bound by bound); '~' marks a ratio whose interval
holds 1: no measurable difference.

The procurement figure: for each other set, karma-score's figure of record
(docs/score.md) with the baseline set as the reference machine (its
reportable baseline results, as `karma-score reference` takes them) and the
weights (--weights, else campaigns/procurement/weights.txt), in the line
`karma-score SET --reference BASELINE` prints, made by the same code; where
the baseline has no reportable results, or the set lacks a scored row, it
says so instead. The weighted mean above is this tool's own
aggregate and is named as such.

Weights file: one 'PATTERN WEIGHT' per line, '#' comments. PATTERN is app,
app/kernel or app/case/kernel (shell globs allowed). Each row takes its most
specific pattern (the later line on a tie); a pattern's weight is shared
equally by the rows that take it; rows no pattern covers weigh 0. A pattern
that takes no row is an error (--allow-unmatched: a note), unless its case
names a device kind (gpu:, host:) no baseline row ran on. Without
--weights, rows of reference programs and of vendor libraries (an
implementation other than kokkos or mpi) weigh 0.

Energy: where both sides of a ratio measured the kernel's energy
(kernels[].energy.status "measured"), two ratios go beside the FOM ratio:
per W, the figures of merit per watt divided as the FOMs are (above 1:
better per watt), and energy, the baseline's joules per execution over the
set's (above 1: the set uses less energy); '-' where either side did not
measure it. Neither takes --per-node: the power is already the whole run's.
An energy table lists each set's power, FOM per watt, joules per execution
and fraction of peak bandwidth and FLOP/s where known. --energy adds the
weighted geometric mean of the per-watt ratios (same weights, over the rows
that have one) beside the performance mean.

Output: Markdown on stdout, or files with --markdown/--csv/--json (each
written whole or not at all). --skip-invalid leaves out files that are not
well-formed results, each listed with its error, and compares the rest.

Within one set: karma-compare --implementations OURS:THEIRS SET... compares
two implementations of each SET with each other (karma-microbench's karma
against its raw pointers: --implementations karma:raw), one comparison per
SET: its kernels of implementation THEIRS are the baseline (LABEL:THEIRS),
those of OURS the other side (LABEL:OURS), each kernel under its variant,
which names the work both do (karma-microbench's benchmark,
Sum3D/serial/right/static/20x20x20). The rows, ratios, repeated runs,
intervals, flags, weights and the weighted geometric mean are as above; a
ratio is OURS's figure of merit over THEIRS's, so for karma-microbench's
bandwidths it is raw's time over karma's: above 1 karma is faster (the
inverse of the karma / raw time ratios of the older Google Benchmark
tables). Every row weighs; there is no code column (the two run different
code by design) and no procurement figure. --csv puts every set's rows under
one header; --json writes {"karma_compare_implementations": 1,
"comparisons": [...]}.

Within one campaign: karma-compare --campaign OUT prints the ratio tables
that the campaign file's `compare:` section declares (OUT: the directory
`karma-batch generate` made; see karma-batch --help-campaign): numerator
and denominator results of the same round paired on the `match` deck keys
(karma / BabelStream per kernel and size, Kokkos / native-cuda per layout,
...), round by round, then the worst of the rounds (and the best or
median, as the campaign asks; --aggregate names one instead), each table
followed by the per-watt and energy ratios of its pairs where both sides
measured energy. Results of schema_version 2 name each kernel's
implementation and variant; for schema_version 1 the implementation is the
deck's <app>.implementation when it is one string, else one a kernel name
starts or ends with (cublas-dgemv), else kokkos."""


EPILOG = "exit status: 0 compared; 1 a set covers less than all the weight (INCOMPLETE: no " \
    "mean); 2 bad input (schema version, empty set, bad weights, a pattern that " \
    "matches no row); 3 could not write an output"


def campaign_main(args):
    specs = None
    if args.compare_from:
        # The ratio tables of a campaign file edited after its jobs ran: its
        # compare: section, checked as generate checks it, on these results.
        specs = campaign_mod.load(args.compare_from, check_keys=False).compare
    name, manifest_path, tables, notes = sides.campaign_tables(args.campaign, specs)
    if args.compare_from:
        ran = {j.get("run") for j in read_json(manifest_path).get("jobs") or []
               if isinstance(j, dict)}
        for spec in specs:
            for side in ("numerator", "denominator"):
                for pattern in spec[side].get("run", []):
                    if not any(fnmatch.fnmatchcase(str(r), pattern) for r in ran):
                        raise ToolError(f"--compare-from {args.compare_from}: compare "
                                        f"{spec['name']}: {side}.run '{pattern}' is no run "
                                        f"of {manifest_path}", 2)
    if args.aggregate:
        for t in tables:
            for row in t["rows"]:
                ratios = list(row["rounds"].values())
                row["aggregates"] = {args.aggregate: sides.aggregate(ratios, args.aggregate)}
            t["aggregate"] = [args.aggregate]
    if not tables:
        raise ToolError(f"{manifest_path}: the campaign declares no comparisons (add a "
                        "`compare:` section to its campaign file and generate again)", 2)
    energy = campaign_energy(manifest_path, tables)
    lines = [f"# karma side by side: campaign {name}", ""]
    for t in tables:  # one at a time, each with its energy pairs after it
        lines += sides.markdown([t], "##")
        lines += campaign_energy_markdown(t, "##")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    md = "\n".join(lines)
    outputs = []
    if args.markdown:
        outputs.append((args.markdown, md + "\n"))
    if args.json:
        outputs.append((args.json, json.dumps({"karma_compare_campaign": 1, "campaign": name,
                                               "manifest": manifest_path, "tables": tables,
                                               "notes": notes}, indent=2) + "\n"))
    if args.csv:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["comparison", "match", "label", "numerator", "denominator", "round",
                    "numerator_value", "denominator_value", "ratio"]
                   + (["per_watt_ratio", "energy_ratio"] if energy else []))
        for t in tables:
            for row in t["rows"]:
                for rnd, ratio in row["rounds"].items():
                    a, b = row["values"][rnd]
                    cells = [blank_if_none(row.get(name, {"rounds": {}})["rounds"].get(rnd))
                             for name in ("per_watt", "energy")] if energy else []
                    w.writerow([t["name"], json.dumps(row["match"]), json.dumps(row["label"]),
                                row["numerator"], row["denominator"], rnd, a, b, ratio]
                               + cells)
        outputs.append((args.csv, buf.getvalue()))
    write_all(outputs)
    if not outputs:
        sys.stdout.write(md + "\n")
    return 0


def _parse_set(text):
    label, sep, path = text.partition("=")
    if sep and label and not os.path.exists(text):
        return label, path
    return None, text


def parser():
    p = ArgumentParser(prog="karma-compare", description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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
    p.add_argument("--weights", metavar="FILE", help="weights of the rows (see above)")
    p.add_argument("--per-node", action="store_true",
                   help="scale ratios by the node counts of the runs compared")
    p.add_argument("--system-nodes", action="append", metavar="LABEL=N",
                   help="nodes in a set's whole system, for the system figure (give all sets)")
    p.add_argument("--energy", action="store_true",
                   help="also the weighted geometric mean of the per-watt ratios (rows where "
                   "both sides measured energy)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown table to FILE")
    p.add_argument("--csv", metavar="FILE", help="write one row per case, kernel and set")
    p.add_argument("--json", metavar="FILE", help="write everything as JSON")
    p.add_argument("--committed-only", action="store_true",
                   help="skip files that git ignores")
    p.add_argument("--allow-partial", action="store_true",
                   help="with --campaign: accepted for older commands; it changes nothing")
    p.add_argument("--allow-unmatched", action="store_true",
                   help="a weights pattern that matches no row is a note, not an error")
    p.add_argument("--source", action="append", default=[], metavar="LABEL=REV",
                   help="the set LABEL's results without code versions ran the kernel "
                   "source of git revision REV (of --repo): compare source hashes")
    p.add_argument("--repo", metavar="PATH",
                   help="the git repository of --source (default: the one the tool runs in)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="leave out files that are not well-formed results, listed with "
                   "their errors, and compare the rest")
    p.add_argument("--version", action="version", version=f"karma-compare {__version__}")
    return p


def _system_nodes(items, sets):
    """{label: nodes} of --system-nodes LABEL=N, which names every set."""
    nodes = {}
    for item in items:
        label, sep, n = item.partition("=")
        if not sep or not re.match(r"^[0-9]{1,12}$", n) or int(n) < 1:
            raise ToolError(f"--system-nodes {item}: expected LABEL=N with N >= 1", 2)
        nodes[label] = int(n)
    missing = [s.label for s in sets if s.label not in nodes]
    unknown = [n for n in nodes if n not in [s.label for s in sets]]
    if missing or unknown:
        raise ToolError("--system-nodes must name every set exactly: " +
                        (f"missing {', '.join(missing)}" if missing else "") +
                        ("; " if missing and unknown else "") +
                        (f"unknown {', '.join(unknown)}" if unknown else ""), 2)
    return nodes


def main(argv=None):
    args = parser().parse_args(argv)

    def run():
        if args.campaign:
            if args.sets:
                raise ToolError("--campaign compares within one campaign: give no result "
                                "sets beside it", 2)
            if args.aggregate == "mean":
                raise ToolError("--aggregate mean: the ratio tables take worst, best or "
                                "median", 2)
            if args.energy:
                raise ToolError("--energy: the ratio tables have no weighted mean; they show "
                                "per-watt and energy ratios wherever both sides measured "
                                "energy", 2)
            if args.implementations:
                raise ToolError("--implementations compares within result sets; a campaign's "
                                "pairs are its compare: section's", 2)
            return campaign_main(args)
        if args.compare_from:
            raise ToolError("--compare-from goes with --campaign", 2)
        if args.implementations:
            return implementations_main(args)
        if args.allow_partial:
            raise ToolError("--allow-partial goes with --campaign: a comparison of sets that "
                            "pairs less than all the weight gives no mean and exits 1", 2)
        if args.repo and not args.source:
            raise ToolError("--repo goes with --source", 2)
        if len(args.sets) < 2:
            raise ToolError("give at least two result sets to compare", 2)
        sets = []
        for text in args.sets:
            label, path = _parse_set(text)
            sets.append(resultset.open(path, label, committed_only=args.committed_only,
                                       skip_invalid=args.skip_invalid))
        sources = _sources(args.source, args.repo, [s.label for s in sets])
        nodes = _system_nodes(args.system_nodes, sets) if args.system_nodes else None
        result = compare(sets, args.baseline or sets[0].label, how=args.aggregate or "median",
                         per_node=args.per_node, weights_path=args.weights, system_nodes=nodes,
                         energy_mean=args.energy, allow_unmatched=args.allow_unmatched,
                         sources=sources)
        md = markdown(result)
        outputs = []
        if args.markdown:
            outputs.append((args.markdown, md + "\n"))
        if args.csv:
            outputs.append((args.csv, csv_text(result)))
        if args.json:
            outputs.append((args.json, json.dumps(result, indent=2) + "\n"))
        write_all(outputs)
        if not outputs:
            sys.stdout.write(md + "\n")
        else:
            for path, _ in outputs:
                print(f"karma-compare: wrote {path}", file=sys.stderr)
        for item in result["left_out"]:
            print(f"karma-compare: left out {item['error']}", file=sys.stderr)
        return _coverage_status(result)

    return main_wrapper("karma-compare", run)


def implementations_main(args):
    """--implementations OURS:THEIRS: one comparison per set."""
    ours, theirs = implementations.parse_pair(args.implementations, "--implementations")
    for given, option in ((args.baseline, "--baseline"), (args.system_nodes, "--system-nodes"),
                          (args.source, "--source"), (args.repo, "--repo"),
                          (args.per_node, "--per-node"), (args.allow_partial, "--allow-partial")):
        if given:
            raise ToolError(f"{option} does not go with --implementations: both sides are one "
                            f"set's runs (the baseline is its {theirs} kernels)", 2)
    if not args.sets:
        raise ToolError("give at least one result set whose implementations to compare", 2)
    sets = [resultset.open(path, label, committed_only=args.committed_only,
                           skip_invalid=args.skip_invalid)
            for label, path in map(_parse_set, args.sets)]
    if len({s.label for s in sets}) < len(sets):
        raise ToolError("two result sets have the same label; name them LABEL=DIR", 2)
    results = [implementations.compare_within(s, ours, theirs, how=args.aggregate or "median",
                                              weights_path=args.weights, energy_mean=args.energy,
                                              allow_unmatched=args.allow_unmatched)
               for s in sets]
    md, csv_out, json_out = implementations.outputs(results)
    outputs = [(path, text) for path, text in ((args.markdown, md + "\n"), (args.csv, csv_out),
                                               (args.json, json_out)) if path]
    write_all(outputs)
    if not outputs:
        sys.stdout.write(md + "\n")
    for path, _ in outputs:
        print(f"karma-compare: wrote {path}", file=sys.stderr)
    for result in results:
        for item in result["left_out"]:
            print(f"karma-compare: left out {item['error']}", file=sys.stderr)
    return max(_coverage_status(r) for r in results)


def _coverage_status(result):
    """1 (with a line saying so) when a set covers less than all the
    weight: it has no mean; else 0."""
    short = [(label, v["coverage"]) for label, v in result["summary"].items()
             if v["coverage"] is not None and v["geometric_mean"] is None]
    for label, share in short:
        print(f"karma-compare: {label} is INCOMPLETE: it covers {share:.1%} of the weight (see "
              "Unpaired rows); no mean; exit 1", file=sys.stderr)
    return 1 if short else 0


def _git_root():
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise ToolError("--source: not in a git repository (give --repo PATH)", 2) from None
    return out.stdout.strip()


def _sources(items, repo, labels):
    """{label: SourceAt} of the --source LABEL=REV options, each checked."""
    out = {}
    if not items:
        return out
    repo = repo or _git_root()
    for item in items:
        label, sep, rev = item.partition("=")
        if not sep or not label or not rev:
            raise ToolError(f"--source {item}: expected LABEL=REV", 2)
        if label not in labels:
            raise ToolError(f"--source {item}: no set of label '{label}' (sets: "
                            f"{', '.join(labels)})", 2)
        check = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "--quiet",
                                f"{rev}^{{commit}}"], capture_output=True, text=True)
        if check.returncode != 0:
            raise ToolError(f"--source {item}: '{rev}' is no commit of {repo}", 2)
        out[label] = SourceAt(repo, rev)
    return out
