"""Celery tasks of text battles: thin, they call services."""


from arena.steps import step_task


@step_task
def run_response(response_id: str, generation: int) -> None:
    from battles.steps import response_run

    response_run(response_id=response_id, generation=generation)


@step_task
def classify_voted() -> None:
    from arena.llm.ledger import call_purpose
    from battles.categories import votes_classify_pending

    with call_purpose("battles", "classification"):  # its model calls, in the ledger
        votes_classify_pending()
