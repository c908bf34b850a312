"""Results: reading, checking and grouping the documents the mini-apps write
(and their archives), the run rules read back, code versions."""
