"""The commands of karma's tools, one module each (pyproject.toml's
[project.scripts]): its command line and main, calling karma_tools."""

import argparse
import sys

from karma_tools.core import ToolError


def main_wrapper(program, run):
    """run()'s exit status; a ToolError or Ctrl-C a message on stderr and a status."""
    try:
        return run()
    except ToolError as e:
        print(f"{program}: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


class _StoreOnce(argparse._StoreAction):
    """argparse's store, refusing an option given twice (the last won, hiding typos)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_karma_given", {})
        if option_string is not None and self.dest in seen:
            parser.error(f"{option_string} given twice: '{seen[self.dest]}' and '{values}'")
        seen[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class ArgumentParser(argparse.ArgumentParser):
    """Every command's parser: a usage error (an option twice too) is one line, exit 2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message):
        program = self.prog.split()[0]  # a subcommand's error is its command's
        self.exit(2, f"{program}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        known, rest = super().parse_known_args(args, namespace)
        known.__dict__.pop("_karma_given", None)
        return known, rest
