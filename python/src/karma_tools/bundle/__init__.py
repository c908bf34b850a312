"""Submission bundles: a campaign packed with its disclosure, and their check."""
