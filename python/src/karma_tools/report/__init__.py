"""karma-report: a result set as a Markdown report with plots."""
