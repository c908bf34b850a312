"""One module per command (pyproject.toml's [project.scripts]): its command line and main."""

import argparse
import functools
import os
import sys

from karma_tools.core import ToolError

warn = functools.partial(print, file=sys.stderr)


def main_wrapper(program, run):
    """run()'s exit status (0 for None); a ToolError or Ctrl-C a message on stderr and a status."""
    try:
        return run() or 0
    except ToolError as e:
        warn(f"{program}: error: {e}")
        return e.code
    except KeyboardInterrupt:
        warn(f"{program}: interrupted")
        return 130
    except BrokenPipeError:
        return 0


def refuse(*rules):
    """ToolError (2) with the reason of the first (given, reason) whose given is true."""
    for given, why in rules:
        if given:
            raise ToolError(why, 2)


def parse_set(text, label=None):
    """A [LABEL=]SET argument's (label, path); a path that exists is one, `=` and all."""
    given, sep, path = text.partition("=")
    return (given, path) if sep and given and not os.path.exists(text) else (label, text)


def incomplete(program, records):
    """1 where a set's figure of record, of (label, record), is INCOMPLETE, each said; else 0."""
    short = [(label, r) for label, r in records if r.get("complete") is False]
    for label, r in short:
        warn(f"{program}: {label} is INCOMPLETE: it lacks {len(r['missing'])} of the "
             f"{r['rows']} rows the weights give weight to; no overall figure; exit 1")
    return 1 if short else 0


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
        if "\n" in (kwargs.get("description") or ""):
            kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
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
