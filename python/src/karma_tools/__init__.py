"""karma's cluster tools: packages results (documents, archives, run rules), campaign (files,
runs, job scripts), score (the procurement figure, the release), compare, report, bundle
(submission bundles), and cli, a thin module per command; core, what all share (names here)."""

from .core import (APPS, MAX_DEPTH, ToolError, __version__, atomic_write, describe,
                   too_deep, unreadable, write_all)

__all__ = ["APPS", "MAX_DEPTH", "ToolError", "__version__", "atomic_write", "describe",
           "too_deep", "unreadable", "write_all"]
