"""Campaigns: campaign files read strictly, expanded into runs and job
scripts (local, Slurm, PBS), submitted, watched and archived."""
