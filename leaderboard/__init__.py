"""Leaderboards: every board's outcomes rated, and the ratings shown.

* ``boards.py``: the board contract and registry, with which each mode registers its boards
  (``querysets.py`` and ``scans.py``: how a board reads its outcomes from a mode's table);
  ``estimates.py``: what a mode reads back (each subject's current rating and its error).
* ``runs/``: rating runs (a board's outcomes read, fitted and written as a snapshot) and the
  online Elo.
* ``pages/``: the leaderboard page, the model pages, the API and the stats, read from the
  snapshots.
* ``ratings/``: the maths alone (NumPy and SciPy, no Django).
* ``models.py``, ``migrations/``, ``admin.py``, ``tasks.py``, ``management/``,
  ``templatetags/``: where Django and Celery look for them.
"""
