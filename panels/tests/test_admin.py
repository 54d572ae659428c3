import pytest

from panels.models import Panel, PanelStatus


@pytest.mark.django_db
def test_admin_lists_panels_with_their_answers(admin_client):
    panel = Panel.objects.create(question="What is 2+2?", status=PanelStatus.DONE)
    for url in ("/admin/panels/panel/", f"/admin/panels/panel/{panel.pk}/change/",
                "/admin/panels/panelanswer/", "/admin/panels/paneljudgement/"):
        response = admin_client.get(url)
        assert response.status_code == 200, url
    assert "What is 2+2?" in admin_client.get("/admin/panels/panel/").content.decode()
