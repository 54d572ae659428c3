"""The operations page for staff (``/ops/``): how the providers, the modes, the workers and
the boards are doing. It reads the platform's ledger, every mode through its declared
``operations`` (:mod:`arena.operations`) and the leaderboard's snapshots; it imports no mode,
and nothing imports it."""
