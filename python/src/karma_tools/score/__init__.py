"""The procurement figure: a result set scored against a reference under the
run rules, its decision page, and the release that fixes both."""
