"""The seed-shaped debate endpoints keep the contract their OpenAPI file states: the debate
JSON (currentRound, currentSpeaker, the judge's justification length), the token usage and
the leaderboard with its Glicko-2 and debate figures. schemathesis generates requests for
them and sends them to a live server; each is also asked about real data (a debate under
way and one judged, rated debate boards) and the answer checked against its schema."""

from __future__ import annotations

import pytest
from django.test.utils import override_settings

from arena.steps import StepStatus
from debates.models import DebateStep, JudgeEvaluation, StepKind
from debates.tests.debate_support import completed_debate, debate_row, justification
from leaderboard.models import RunTrigger
from leaderboard.runs.services import ratings_run
from testkit.contract import CHECKS, contract_failures
from testkit.visitors import visitor_session_key

pytestmark = pytest.mark.browser  # needs the live server, like the page tests

SEED_SHAPED = {"GET /api/debates/{debate_id}", "GET /api/debates/usage",
               "GET /api/leaderboard"}


@pytest.fixture
def live_debates(asgi_live_server):
    """A debate with the con side speaking, five judged ones (one with a short
    justification), and both debate boards rated."""
    under_way = debate_row(rounds=2)
    DebateStep.objects.create(debate=under_way, kind=StepKind.TURN, round=1, position="con",
                              status=StepStatus.RUNNING)
    judged = [completed_debate(under_way, ai="pro", crowd="con", tokens_a=900, tokens_b=800,
                               tokens_judging=300, cost_a=0.001, factuality=(0.8, 0.4))
              for _ in range(5)]
    JudgeEvaluation.objects.create(debate=judged[0], judge=under_way.model_a,
                                   order="pro_first", winner="pro",
                                   justification=justification("pro", 40),
                                   justification_reasks=2, justification_short=True)
    with override_settings(ARENA_LEADERBOARD_MIN_VOTES=1):
        ratings_run(trigger=RunTrigger.COMMAND, boards=["debate-ai", "debate-crowd"])
    return asgi_live_server, under_way, judged[0]


def _real_cases(base_url: str, under_way, judged):
    import schemathesis

    schema = schemathesis.openapi.from_url(f"{base_url}/api/openapi.json")
    debate = schema["/api/debates/{debate_id}"]["GET"]
    usage = schema["/api/debates/usage"]["GET"]
    board = schema["/api/leaderboard"]["GET"]
    return [debate.Case(path_parameters={"debate_id": str(under_way.pk)}),
            debate.Case(path_parameters={"debate_id": str(judged.pk)}),
            usage.Case(query={"by": "category"}), usage.Case(query={"by": "rounds"}),
            board.Case(query={"board": "debate-ai", "sort": "controversy"}),
            board.Case(query={"board": "debate-crowd", "sort": "factuality",
                              "order": "asc"})]


def test_the_seed_shaped_endpoints_keep_their_contract(live_debates):
    base_url, under_way, judged = live_debates
    headers = {"Origin": base_url}
    answers = []
    for case in _real_cases(base_url, under_way, judged):
        response = case.call_and_validate(checks=CHECKS, headers=headers)
        assert response.status_code == 200, response.text
        answers.append(response.json())
    assert (answers[0]["currentRound"], answers[0]["currentSpeaker"]) == (1, "con")
    assert answers[1]["evaluations"][0]["justification_short"] is True
    assert answers[2]["rows"][0]["tokens_per_debate"] == 2000
    top = answers[4]["leaderboard"][0]
    assert top["volatility"] is not None and top["controversy_index"] is not None
    failures = contract_failures(f"{base_url}/api/openapi.json", at_least=3,
                                 session_key=visitor_session_key(),
                                 labels=sorted(SEED_SHAPED))
    assert failures == [], "\n\n".join(failures)
