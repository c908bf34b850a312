"""karma-power-check's command line and main (the work is karma_tools.powercheck's)."""

import sys
from karma_tools import powercheck
from karma_tools.core import ToolError, __version__, atomic_write, unreadable
from karma_tools.cli import ArgumentParser, main_wrapper, refuse


def main(argv=None):
    p = ArgumentParser(prog="karma-power-check", description=powercheck.__doc__)
    p.add_argument("results", nargs="+", help="karma results JSON files")
    p.add_argument("--nvidia-smi", required=True, metavar="CSV",
                   help="nvidia-smi's samples taken during the runs")
    p.add_argument("--utc-offset", type=float, default=0.0, metavar="HOURS",
                   help="the sampling machine's offset from UTC (nvidia-smi writes local time)")
    p.add_argument("--tolerance", type=float, default=0.10,
                   help="largest relative difference that agrees (default 0.10)")
    p.add_argument("--skip", type=float, metavar="SECONDS",
                   help="leave out the samples of each window's first SECONDS (default: 1 "
                        "for power.draw, a mean over the last second; 0 for power.draw.instant)")
    p.add_argument("--markdown", metavar="FILE", help="write the table to FILE too")
    p.add_argument("--version", action="version", version=f"karma-power-check {__version__}")
    args = p.parse_args(argv)

    def run():
        try:
            samples, column = powercheck.read_samples(args.nvidia_smi, args.utc_offset)
            skip = powercheck.POWER_COLUMNS[column] if args.skip is None else args.skip
            rows = powercheck.check(args.results, samples, args.tolerance, skip)
        except OSError as e:
            raise unreadable(e.filename, e) from None
        except (ValueError, KeyError) as e:
            raise ToolError(e, 2) from None
        refuse((not rows, "no kernel with a measured energy window"))
        text = powercheck.markdown(rows, column, args.tolerance, skip)
        sys.stdout.write(text)
        checked = [r for r in rows if "ratio" in r]
        refuse((not checked, "no window holds enough samples"))  # bad input: nothing written
        if args.markdown:
            atomic_write(args.markdown, text)
        return 0 if all(r["agrees"] for r in checked) else 1

    return main_wrapper("karma-power-check", run)
