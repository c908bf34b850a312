"""karma's cluster tools: a library and thin commands.

  karma_tools.results    results documents, their archives, checks and run rules
  karma_tools.campaign   campaign files, their runs and job scripts
  karma_tools.score      the procurement figure against a reference, the release
  karma_tools.compare    comparisons of result sets and of a campaign's sides
  karma_tools.report     the Markdown report with plots
  karma_tools.bundle     submission bundles: pack, check, disclose
  karma_tools.cli        one module per command (pyproject.toml's [project.scripts]),
                         its command line and main, calling the packages above

karma_tools.core holds what every part shares; its main names are here too."""

from .core import (APPS, MAX_DEPTH, ToolError, __version__, atomic_write, describe,
                   too_deep, unreadable, write_all)

__all__ = ["APPS", "MAX_DEPTH", "ToolError", "__version__", "atomic_write", "describe",
           "too_deep", "unreadable", "write_all"]
