"""Vote outcomes as small integer codes, shared by every rating engine.

Mapping (stable: these codes may be stored):

====  ============  ==========================================  =========  ========
code  constant      accepted spellings                          Elo score  BT label
====  ============  ==========================================  =========  ========
0     ``A_WINS``    ``model_a``, ``left_better``, ``a``          1 / 0      1
1     ``B_WINS``    ``model_b``, ``right_better``, ``b``         0 / 1      0
2     ``TIE``       ``tie``                                     0.5 / 0.5  0.5
3     ``BOTH_BAD``  ``both_bad``, ``tie (bothbad)``, ``bothbad``  .25 / .25  0.5
====  ============  ==========================================  =========  ========

The Elo scores of ``BOTH_BAD`` (0.25 each) are deliberately not zero-sum: a vote that
both answers are bad takes rating points from both models.  Bradley–Terry counts a tie and
a both-bad vote alike as half a win for each side (as FastChat's ``compute_bt`` does).
"""

from __future__ import annotations

import numpy as np

A_WINS = 0
B_WINS = 1
TIE = 2
BOTH_BAD = 3
N_OUTCOMES = 4

#: Spelling (lower case, surrounding blanks stripped) -> outcome code.
OUTCOME_CODES: dict[str, int] = {
    "model_a": A_WINS,
    "left_better": A_WINS,
    "a": A_WINS,
    "model_b": B_WINS,
    "right_better": B_WINS,
    "b": B_WINS,
    "tie": TIE,
    "both_bad": BOTH_BAD,
    "bothbad": BOTH_BAD,
    "tie (bothbad)": BOTH_BAD,
}

#: Canonical spelling of each code (index = code).
OUTCOME_NAMES: tuple[str, ...] = ("model_a", "model_b", "tie", "both_bad")

#: Elo scores ``(score_a, score_b)`` per outcome code, shape (4, 2).
ELO_SCORES = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.25, 0.25]])

#: Bradley–Terry label ``y`` (share of a win credited to model a) per outcome code.
BT_LABELS = np.array([1.0, 0.0, 0.5, 0.5])


def parse_outcome(value: str) -> int:
    """Return the outcome code of ``value`` (case-insensitive); raise ``ValueError`` if unknown."""
    try:
        return OUTCOME_CODES[value.strip().lower()]
    except KeyError:
        expected = ", ".join(OUTCOME_NAMES)
        raise ValueError(f"unknown outcome {value!r} (expected one of {expected})") from None


def check_codes(outcome: np.ndarray) -> np.ndarray:
    """Return ``outcome`` as an int array, raising ``ValueError`` on codes outside 0..3."""
    codes = np.asarray(outcome)
    if codes.size and (codes.min() < 0 or codes.max() >= N_OUTCOMES):
        raise ValueError(f"outcome codes must lie in 0..{N_OUTCOMES - 1}")
    return codes.astype(np.int64, copy=False)
