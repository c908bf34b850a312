"""karma's cluster tools: a library and thin commands.

  karma_tools.lib   the library: results and their archives, the schemas,
                    YAML reading, campaigns and their jobs, the run rules,
                    code versions, the figures and the texts the tools write
  karma_tools.cli   one module per command (pyproject.toml's [project.scripts]),
                    its command line and main, calling the library

The names every part shares (the suite's version, its mini-apps, ToolError,
writing files whole) live in karma_tools.lib.core; they are named here too."""

from .lib.core import (APPS, MAX_DEPTH, ToolError, __version__, atomic_write, describe,
                       main_wrapper, too_deep, unreadable, write_all)

__all__ = ["APPS", "MAX_DEPTH", "ToolError", "__version__", "atomic_write", "describe",
           "main_wrapper", "too_deep", "unreadable", "write_all"]
