"""Celery tasks of text battles: thin, they call services."""


from arena.steps import step_task


@step_task
def generate_response(response_id: str, generation: int) -> None:
    from battles.steps import response_generate

    response_generate(response_id=response_id, generation=generation)


@step_task
def classify_voted() -> None:
    from battles.categories import votes_classify_pending

    votes_classify_pending()
