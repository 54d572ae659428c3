"""The library's admin pages: a new topic, persona or evidence opens with its own fields."""

import pytest

pytestmark = [
    pytest.mark.django_db,
    # Evidence's URL field in an admin form: Django 6 will assume https (not this test's
    # concern; the form is unchanged here).
    pytest.mark.filterwarnings("ignore:The default scheme will be changed:"
                               "django.utils.deprecation.RemovedInDjango60Warning"),
]


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
