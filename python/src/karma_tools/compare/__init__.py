"""Comparisons: two result sets, or the sides of one campaign, row by row."""
