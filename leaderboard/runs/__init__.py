"""Rating runs: a board's outcomes read, fitted and written as a snapshot, and the online Elo
each counted outcome moves at once."""
