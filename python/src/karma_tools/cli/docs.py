"""karma-docs' command line and main (the work is karma_tools.docgen's)."""

import os
from karma_tools.core import __version__, write_all
from karma_tools.cli import ArgumentParser, main_wrapper, refuse, warn
from karma_tools.docgen import PROGRAM, RESULTS_DOC, find_root, first_difference, read_text, wanted


def run(argv):
    p = ArgumentParser(prog=PROGRAM, description="Writes the generated parts of karma's "
                       f"documentation: {RESULTS_DOC} from the results schema, and the deck table "
                       "of each miniapps/<app>/README.md and the tools' data of the apps "
                       "(data/apps/head.json) from karma-<app> --help=json.",
                       epilog="exit codes: 0 written or up to date, 1 stale (--check), 2 bad "
                       "input, 3 a mini-app that cannot be run or a file that cannot be written")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale "
                   "file and its first differing line")
    p.add_argument("--bin-dir", metavar="DIR", help="where the mini-apps are: a build's "
                   "build/<preset>/bin or an installed PREFIX/bin (DIR/karma-<app>; a build "
                   "folder: DIR/bin/karma-<app>); default: PATH")
    p.add_argument("--root", metavar="DIR",
                   help="the karma checkout (default: the one that holds the current folder)")
    p.add_argument("--only", choices=("results", "decks"),
                   help="only the results format, or only the deck tables and the apps' data")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = p.parse_args(argv)
    root = find_root(args.root or os.getcwd())
    refuse((args.root and os.path.abspath(args.root) != root,
            f"--root {args.root}: not a karma checkout (no miniapps/ and python/pyproject.toml)"),
           (args.bin_dir is not None and not os.path.isdir(args.bin_dir),
            f"--bin-dir {args.bin_dir}: not a folder"))
    changed = {path: text for path, text in wanted(args, root).items() if read_text(path) != text}
    if args.check:
        for path in changed:
            old = read_text(path)
            where = " missing" if old is None else first_difference(old, changed[path])
            warn(f"{PROGRAM}: stale: {os.path.relpath(path, root)}:{where}")
        if changed:
            warn(f"{PROGRAM}: run {PROGRAM} to write them")
        return 1 if changed else 0
    for path in changed:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    write_all(changed.items())  # every stale file, or none
    for path in changed:
        print(f"{PROGRAM}: wrote {os.path.relpath(path, root)}")
    return 0


def main(argv=None):
    return main_wrapper(PROGRAM, lambda: run(argv))
