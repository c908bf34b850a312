"""karma-archive's command line and main (the work is karma_tools.results.archive's)."""

import os
from karma_tools.results import archive, resultset
from karma_tools.core import ToolError, __version__, write_folder
from karma_tools.cli import ArgumentParser, main_wrapper, warn


def main(argv=None):
    p = ArgumentParser(prog="karma-archive", description=archive.__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"karma-archive {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="archive a folder of results that is no campaign "
                       "(karma-batch archive writes a campaign's)")
    w.add_argument("folder")
    w.add_argument("-o", "--output", required=True, metavar="FILE" + archive.SUFFIX)
    ls = sub.add_parser("list", help="the files an archive holds, with their sha256")
    ls.add_argument("archive")
    x = sub.add_parser("extract", help="the folder an archive holds, written to a new directory")
    x.add_argument("archive")
    x.add_argument("directory")
    r = sub.add_parser("register", help="add the measurements inside archives to a list of them "
                       "(results/measurements.sha256.xz), which the results tree's test checks")
    r.add_argument("list", metavar="LIST")
    r.add_argument("archives", nargs="+", metavar="ARCHIVE")
    args = p.parse_args(argv)

    def run():
        if args.command == "write":
            if not os.path.isdir(args.folder):
                raise ToolError(f"{args.folder}: not a directory", 2)
            if os.path.isfile(os.path.join(args.folder, resultset.MANIFEST)):
                raise ToolError(f"{args.folder}: a campaign directory; use karma-batch archive", 2)
            if not any(files for _, _, files in os.walk(args.folder)):
                raise ToolError(f"{args.folder}: holds no file; nothing to archive", 2)
            archive.write(args.folder, args.output, "results")
            warn(f"karma-archive: wrote {args.output}")
        elif args.command == "register":
            added, listed = archive.register(args.list, args.archives)
            warn(f"karma-archive: {added} measurement(s) added, {listed} listed in {args.list}")
        elif args.command == "list":
            for e in archive.open_archive(args.archive).index["files"]:
                print(f"{e['sha256']}  {e['path']}")
        else:  # extract: into a new directory, whole or not at all
            files = archive.open_archive(args.archive).files
            if os.path.exists(args.directory):
                raise ToolError(f"{args.directory}: exists; extract into a new directory", 2)
            write_folder(args.directory, files)

    return main_wrapper("karma-archive", run)
