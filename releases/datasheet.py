"""The datasheet of a release (Markdown, after "Datasheets for Datasets"): what it holds,
the period, the licence, the columns, what was left out or removed and why, and how to
reproduce a board from it."""

from __future__ import annotations

from datetime import date, datetime

from django.conf import settings

from releases.sources import Source

# One line per item: the page renders the datasheet with line breaks kept.
REMOVED_WHY = "\n".join((
    "- **Votes that do not count are left out.** A vote that the arena does not count for its "
    "leaderboard is not published either, so that every board can be reproduced from the "
    "file: votes past a visitor's daily cap, votes flagged by the integrity sweep (a voter who "
    "always picks one side or one model far beyond chance), votes on a contest whose "
    "conversation named a model, votes whose answers failed, a debate creator's own vote on a "
    "debate whose models they chose, and a panel judge's ranking of its own answer when "
    "self-votes are switched off. Each vote appears once (one vote per contest and session is "
    "a database rule), as LMArena publishes deduplicated, filtered votes. Their numbers, by "
    "board and reason, are below.",
    "- **Contests nobody voted on are not here**, nor anything of a contest still blind: a "
    "release holds only voted contests, and a debate's crowd votes only once it has ended.",
    "- **Text only by consent.** Prompts and answers are published only where the voter ticked "
    "\"my prompts and answers may be published\" (unticked by default) when voting; elsewhere "
    "the conversation columns are empty. A debate's speeches are published only for a listed "
    "debate; a panel's question never (nobody voted).",
    "- **Redacted:** in published text, e-mail addresses, phone numbers and keys (API keys, "
    "tokens, passwords, private keys) are replaced by `[email removed]`, `[phone removed]` and "
    "`[key removed]` (libphonenumber, detect-secrets and Django's e-mail validator).",
    "- **No arena ids.** `id` and `contest_id` are opaque keyed hashes, the same in every "
    "release (the rows of one contest share its `contest_id`), not the ids of the arena's "
    "pages: an id would open a contest whose voter did not let its text be published, or name "
    "a still-blind debate's models.",
    "- **Not published:** who voted (sessions, accounts, addresses), wagers, answer timings, "
    "tokens spent and costs.",
))

COLUMNS = """\
| column | meaning |
|---|---|
| id, contest_id | opaque ids of the vote (or outcome) and its battle, debate or panel |
| mode | battle (text), debate, voice or panel |
| board | the leaderboard board the vote counts on |
| voter, judge | `human`, or `ai` for a panel's judges (`judge` names the judging model) |
| synthetic | a demo battle's made-up vote (`seed_demo`): rated, but no person's choice |
| model_a, model_b | the two models (agent configurations on the voice boards) |
| winner | `model_a`, `model_b`, `tie` or `both_bad` |
| timestamp, date | when the vote was cast (UTC) |
| language | the language of the first prompt, a debate's motion, a panel's question, a caller |
| turns | prompts in a battle, rounds of a debate, caller turns of a voice battle |
| coding … long_query | the prompt's categories, `true`/`false` (debates, panels: rules only) |
| tokens_a … bold_b | each side's answer tokens, headers, list items, bold spans (text battles) |
| publish_text | the voter let the conversation be published |
| conversation_a, conversation_b | JSON `[{"role", "content"}]`, redacted; else empty |"""


def datasheet_text(*, day: date, start: datetime | None, end: datetime, counts: dict,
                   sources: list[Source]) -> str:
    boards = counts["boards"]
    lines = [
        f"# Arena votes, release {day.isoformat()}",
        "",
        f"- **Votes:** {sum(boards.values()):,}, {counts['with_text']:,} of them with "
        "their conversation.",
        f"- **Period:** {_when(start)} to {_when(end)} (UTC; the release was cut at the end).",
        f"- **Licence:** {settings.ARENA_RELEASE_LICENSE}.",
        "- **Files:** `votes.parquet` and `votes.csv` (the same rows), this datasheet, and "
        "`SHA256SUMS` (`sha256sum -c SHA256SUMS`).",
        "",
        "## Boards",
        "",
        "| board | mode | judged by | votes | how the board rates them |",
        "|---|---|---|---|---|",
        *(f"| {s.board} | {s.mode} | {s.voter} | {boards.get(s.board, 0):,} | {s.note} |"
          for s in sources),
        "",
        "## What was left out, and why",
        "",
        REMOVED_WHY,
        "",
        "| board | reason | votes |",
        "|---|---|---|",
        *(_removed_rows(counts["removed"]) or ["| – | nothing was left out | 0 |"]),
        "",
        "Redacted in published text: " + ", ".join(
            f"{n:,} {kind}" for kind, n in counts["redacted"].items()) + ".",
        "",
        "## Columns",
        "",
        COLUMNS,
        "",
        "## Reproducing a board",
        "",
        "A Bradley–Terry board's latest rating run is reproduced exactly from `votes.csv` with "
        "the options the leaderboard shows beside it, e.g. `manage.py rate --input votes.csv "
        "--board text --until <run start> --ci sandwich --min-votes "
        f"{settings.ARENA_LEADERBOARD_MIN_VOTES}` (`--until` keeps the votes the run read).",
        "",
    ]
    return "\n".join(lines)


def _removed_rows(removed: dict) -> list[str]:
    return [f"| {board} | {reason} | {n:,} |" for board, reasons in removed.items()
            for reason, n in reasons.items() if n]


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else "(no votes)"
