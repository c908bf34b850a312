"""The library of karma's tools: every module here is imported by the
commands in karma_tools.cli and by one another, never the other way round."""
