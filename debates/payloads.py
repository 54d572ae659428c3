"""A debate as the JSON API shows it (from :class:`debates.selectors.DebateView`): a side's
figures (tokens, cost, milliseconds) only to a viewer who voted or revealed."""

from __future__ import annotations

from debates.selectors import DebateView


def _side(side) -> dict:
    return {"position": side.position, "persona": side.persona.name, "model_id": side.model_id,
            "model_name": side.model_name, "tokens": side.tokens,
            "cost_usd": round(side.cost_usd, 6) if side.cost_usd is not None else None}


def _check(check) -> dict:
    return {"claim": check.claim, "type": check.claim_type, "verdict": check.verdict,
            "confidence": check.confidence, "explanation": check.explanation,
            "evidence": check.evidence}


def _turn(view: DebateView, turn_view) -> dict:
    turn = turn_view.turn
    tokens = (turn.input_tokens or 0) + (turn.output_tokens or 0) if view.revealed else 0
    return {
        "round": turn.round, "position": turn.position,
        "persona": view.sides[turn.position].persona.name, "reflection": turn.reflection,
        "critique": turn.critique, "speech": turn.speech, "tags_missing": turn.tags_missing,
        "cut_at_word_limit": turn.cut_at_word_limit, "revised": turn.revised,
        "first_speech": turn.first_speech or None, "factuality": turn.factuality,
        "tokens": tokens or None, "latency_ms": turn.latency_ms if view.revealed else None,
        "fact_checks": [_check(c) for c in turn_view.checks],
    }


def debate_payload(view: DebateView) -> dict:
    debate = view.debate
    vote = view.viewer_vote
    return {
        "debate_id": str(debate.pk), "status": debate.status, "error": debate.error or None,
        **view.progress.as_json(),
        "motion": debate.topic.motion, "category": debate.topic.category,
        "rounds": debate.rounds, "word_limit": debate.word_limit,
        "fact_checking": debate.fact_checking, "strict_mode": debate.strict_mode,
        "listed": debate.is_listed, "chosen": debate.chosen,
        "sides": [_side(view.sides["pro"]), _side(view.sides["con"])],
        "moderator": [r["moderator"] for r in view.rounds if r["moderator"]],
        "transcript": [_turn(view, t) for r in view.rounds for t in r["turns"]],
        "evaluations": [
            {"role": e.role, "order": e.order, "winner": e.winner or None,
             "logical_coherence": e.logical_coherence,
             "rebuttal_strength": e.rebuttal_strength, "factuality": e.factuality,
             "justification": e.justification,
             "justification_words": e.justification_words,
             "justification_short": e.justification_short,
             "justification_reasks": e.justification_reasks,
             "flagged_fallacies": e.flagged_fallacies,
             "attempts": e.attempts, "error": e.error or None}
            for e in view.evaluations],
        "ai_winner": debate.ai_winner or None, "ai_consensus": debate.ai_consensus,
        "tiebreaker_used": debate.tiebreaker_used, "needs_review": debate.needs_review,
        "judged": debate.judge_model_id is not None, "judge": view.judge_name,
        "factuality": debate.factuality, "crowd": view.tally,
        "crowd_winner": debate.human_winner or None,
        "your_vote": vote.choice if vote else None, "your_wager": vote.wager if vote else None,
        "your_payout": vote.payout if vote else None, "your_points": view.points,
        "wagers_open": view.wagers_open,
        "cost_usd": round(debate.total_cost, 6) if view.revealed else None,
        "tokens": debate.total_tokens if view.revealed else None,
        "duration_ms": debate.duration_ms, "created_at": debate.created_at,
        "completed_at": debate.completed_at,
    }
