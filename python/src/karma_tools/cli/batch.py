"""karma-batch's command line and main (the work is karma_tools.campaign's)."""

import math
import sys
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.campaign import format as campaign_format
from karma_tools.campaign import reference as reference_mod
from karma_tools.campaign.batch import archive, cancel, status, submit, wait
from karma_tools.campaign.generate import generate
from karma_tools.core import __version__
from karma_tools.cli import ArgumentParser, main_wrapper


DESCRIPTION = """\
Writes one batch job script per run of a campaign (Slurm, PBS/Torque, or
local: this node), one MPI rank per GPU, each job with its own results
directory; submits them and shows what is submitted, running and left.

  karma-batch generate CAMPAIGN.yaml -o OUT   # OUT/jobs/*.sbatch|*.pbs|*.sh, OUT/campaign.json
      [--bin-dir build/<preset>/bin]          # where karma-<app> is (default: beside karma-batch)
  karma-batch submit OUT                      # sbatch/qsub every job not yet submitted
  karma-batch status OUT                      # one line per job, then the counts
  karma-batch wait OUT --timeout 3600         # until every job has ended
  karma-batch cancel OUT                      # scancel/qdel what is pending or running
  karma-batch archive OUT -o OUT.tar.xz       # a finished campaign as one archive (status,
                                              # karma-compare and karma-report read it)

Rounds and their order, the local scheduler, each job's files and how a
job fails: docs/campaigns.md ("karma-batch: campaigns"); the campaign file:
`karma-batch --help-campaign`. Compare machines with karma-compare, the
sides of one campaign with karma-compare --campaign OUT; report with
karma-report."""


EPILOG = """\
exit status: 0 done (status/wait, local submit: every job passed); 1 a job
failed or was lost; 2 bad campaign or arguments (nothing written); 3
scheduler or file system error; 5 (status) jobs still to run; 124 (wait)
timed out; 143 (local submit) cancelled."""


def parser():
    p = ArgumentParser(prog="karma-batch", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"karma-batch {__version__}")
    p.add_argument("--help-campaign", action="store_true",
                   help="describe the campaign file and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    g = sub.add_parser("generate", help="write the job scripts of a campaign",
                       description="Write one job script per job of the campaign into OUT/jobs and "
                       "the list of jobs into OUT/campaign.json. A campaign error writes nothing.")
    g.add_argument("campaign", help="campaign file (YAML; see --help-campaign)")
    g.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="directory to create for the job scripts and the manifest")
    g.add_argument("--scheduler", choices=campaign_format.SCHEDULERS,
                   help="overrides the campaign's scheduler (local: submit runs the jobs here)")
    g.add_argument("--var", action="append", metavar="NAME=VALUE", help="sets a campaign variable "
                   "(repeatable), e.g. --var babelstream=/opt/babelstream/cuda-stream")
    g.add_argument("--bin-dir", help="directory with the karma-<app> executables: a build's "
                   "build/<preset>/bin or PREFIX/bin (overrides the campaign's bin_dir; "
                   "default: beside this karma-batch, else PATH)")
    g.add_argument("--max-ranks-per-node", type=int, metavar="N",
                   help="leave out the jobs of more than N ranks a node (a node of N GPUs "
                   "at one GPU a rank); generate lists what it left out")
    g.add_argument("--no-key-check", action="store_true",
                   help="do not run karma-<app> --help to check set/sweep keys")
    g.add_argument("--force", action="store_true", help="replace OUT if it exists")
    g.set_defaults(func=generate)

    def on_jobs(name, help, description, func, only_help=None):
        c = sub.add_parser(name, help=help, description=description)
        c.add_argument("directory", metavar="OUT")
        c.add_argument("--only", action="append", metavar="GLOB", help=only_help)
        c.set_defaults(func=func)
        return c

    s = on_jobs("submit", "submit the jobs not yet submitted",
                "Submit (sbatch or qsub) every job of OUT that has no job id yet, creating its "
                "results directory first; job ids are recorded in OUT/campaign.json after each "
                "submission.", submit, "only jobs whose name matches (repeatable)")
    s.add_argument("--dry-run", action="store_true", help="print what would be submitted")
    s.add_argument("--resubmit-failed", action="store_true",
                   help="submit failed and lost jobs again")
    st = on_jobs("status", "what is done, running and left",
                 "One line per job (passed, failed, interrupted, lost, running, pending, not "
                 "submitted), then the counts and what is left.", status)
    st.add_argument("--json", dest="as_json", action="store_true",
                    help="the table as JSON on stdout")
    w = on_jobs("wait", "wait until every submitted job has ended",
                "Print the counts whenever they change until no job is pending or running, "
                "then the table.", wait)
    w.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="give up after this long (exit 124)")
    w.add_argument("--interval", type=float, default=10.0, metavar="SECONDS",
                   help="seconds between looks (default 10)")
    on_jobs("cancel", "cancel the jobs still pending or running",
            "scancel (or qdel) every job of OUT that the scheduler still has pending or "
            "running.", cancel)
    a = sub.add_parser("archive", help="one .tar.xz of a finished campaign directory",
                       description="Write OUT as one compressed archive that karma-compare, "
                       "karma-report, karma-validate-results and karma-batch status read as "
                       "they read OUT: its manifest, every job's results, exit code and log, "
                       "each distinct environment file once. Refused while jobs are pending, "
                       "running or not submitted (unless --partial).")
    a.add_argument("directory", metavar="OUT")
    a.add_argument("-o", "--output", required=True, metavar="FILE.tar.xz")
    a.add_argument("--partial", action="store_true",
                   help="archive even though some jobs have not finished")
    a.add_argument("--force", action="store_true", help="replace FILE if it exists")
    a.set_defaults(func=archive)
    r = sub.add_parser("reference-result", help="(job scripts) a reference program's "
                       "output -> karma results",
                       description="What the job script of a `reference:` run calls: reads "
                       "the program's output (BabelStream --csv) and writes a karma results "
                       "document of schema_version 2 whose kernels have the reference's "
                       "implementation, with the deck and --set values the campaign gave.")
    r.add_argument("format", choices=reference_mod.FORMATS)
    r.add_argument("--input", required=True, help="the program's output")
    r.add_argument("--exit-status", type=int, default=0, help="the program's exit status")
    r.add_argument("--app", required=True, help="the mini-app it stands beside")
    r.add_argument("--deck", required=True, help="the deck that describes what it ran")
    r.add_argument("--set", action="append", metavar="KEY=VALUE")
    r.add_argument("--device", choices=("gpu", "host"),
                   help="what it ran on (the job had a GPU, or not)")
    r.add_argument("--command", dest="reference_command", help="the command line, for the record")
    r.add_argument("--date", metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="when the program started (UTC), for the record")
    r.add_argument("--host", help="the host it ran on, for the record")
    r.add_argument("--output", required=True, metavar="FILE.json")
    r.set_defaults(func=reference_mod.reference_result)
    return p


def say(text, err=False):
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.help_campaign:
        print(campaign_mod.help_text(), end="")
        return 0
    if not args.command:
        p.error("name a command: generate, submit, status, wait, cancel or archive")
    # time.sleep takes no nan and nothing past its range; nan would never time out
    if not 0 < getattr(args, "interval", 1) <= 86400:
        p.error("--interval must be > 0 and at most 86400 (a day)")
    if math.isnan(getattr(args, "timeout", None) or 0):
        p.error("--timeout must be a number of seconds")
    options = {k: v for k, v in vars(args).items() if k not in ("func", "command", "help_campaign")}
    return main_wrapper("karma-batch", lambda: args.func(say=say, **options))
