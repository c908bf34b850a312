"""The commands of karma's tools, one module each (pyproject.toml's
[project.scripts]): its command line and main, calling karma_tools."""
