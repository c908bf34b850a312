"""The procurement figure, its decision page and the release that fixes both."""
