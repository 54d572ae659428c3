"""The library's admin pages: a new topic, persona or evidence opens with its own fields."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("page", "first"), [("topic", "motion"), ("persona", "name"),
                                             ("evidence", "topic")])
def test_an_admin_add_page_opens_with_the_models_own_fields(admin_client, page, first):
    """The inherited created_at (arena.models.CreatedAtModel) comes last, not first: an add
    page puts the cursor in its first field."""
    form = admin_client.get(f"/admin/debates/{page}/add/").content.decode()
    assert form.index(f'name="{first}"') < form.index('name="created_at_0"')
    if page == "topic":  # and in each piece of evidence added with the topic
        assert (form.index('name="evidence-__prefix__-title"')
                < form.index('name="evidence-__prefix__-created_at_0"'))
