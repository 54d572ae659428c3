"""Leaderboards: the board registry, rating runs and snapshots, pages, plots and API."""
