"""What people and the API read of the boards: the leaderboard page, a model's page, the
stats and worker status, and the plots, all from stored snapshots (nothing here fits)."""
