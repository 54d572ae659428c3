"""Sharing a voted battle: the link, its public read-only page, its image card, revoking."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from arena.errors import RuleError
from battles import selectors, sharing
from battles.cards import battle_card_svg
from battles.models import Position, Share
from battles.tests.factories import answered_battle, vote_on

SVG = "{http://www.w3.org/2000/svg}"


def owner_client(client: Client) -> tuple[Client, str]:
    session = client.session
    session["visitor"] = True
    session.save()
    return client, session.session_key


def shared_battle(**fields):
    battle = answered_battle(**fields)
    vote_on(battle, choice="left_better")
    return battle, sharing.battle_share(battle=battle)


@pytest.mark.django_db
class TestShareService:
    def test_an_unvoted_battle_cannot_be_shared(self):
        battle = answered_battle()
        with pytest.raises(RuleError) as err:
            sharing.battle_share(battle=battle)
        assert (err.value.message, err.value.status) == (sharing.SHARE_NOT_VOTED, 409)
        assert not Share.objects.exists()

    def test_a_voted_battle_gets_one_random_link_not_made_of_its_id(self):
        battle, share = shared_battle()
        assert len(share.token) == 22
        assert str(battle.id) not in share.token and battle.id.hex not in share.token
        assert sharing.battle_share(battle=battle).token == share.token  # pressed twice
        assert selectors.share_get(token=share.token).battle_id == battle.id

    def test_revoking_ends_the_link_and_sharing_again_makes_a_new_one(self):
        battle, share = shared_battle()
        sharing.battle_unshare(battle=battle)
        assert selectors.share_get(token=share.token) is None
        with pytest.raises(RuleError) as err:
            sharing.battle_unshare(battle=battle)
        assert (err.value.message, err.value.status) == (sharing.SHARE_NOT_FOUND, 404)
        assert sharing.battle_share(battle=battle).token != share.token

    @pytest.mark.parametrize("token", ["", "nope", "x" * 500])
    def test_an_unknown_token_finds_nothing(self, token):
        shared_battle()
        assert selectors.share_get(token=token) is None


@pytest.mark.django_db
class TestCard:
    def test_the_card_names_both_models_and_marks_the_winner(self):
        battle, _ = shared_battle(prompt="Is <b>this</b> & that safe?")
        view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
        svg = battle_card_svg(view)
        root = ET.fromstring(svg)  # well-formed: the prompt's markup is escaped
        assert root.tag == f"{SVG}svg" and root.get("width") == "1200"
        texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
        left = battle.model_in(battle.slot_at(Position.LEFT))
        right = battle.model_in(battle.slot_at(Position.RIGHT))
        assert left.name in texts and right.name in texts
        assert "Is <b>this</b> & that safe?" in texts
        assert "Verdict: Left is Better" in texts
        winners = [r.get("data-side") for r in root.iter(f"{SVG}rect") if r.get("data-winner")]
        assert winners == ["left"]


@pytest.mark.django_db
class TestSharePages:
    def test_the_share_button_shows_only_to_the_owner_and_only_after_the_vote(self, client):
        client, key = owner_client(client)
        battle = answered_battle(session_key=key)
        assert 'data-testid="share"' not in client.get(f"/battle/{battle.id}/").content.decode()
        refused = client.post(f"/battle/{battle.id}/share")
        assert refused.status_code == 409
        assert sharing.SHARE_NOT_VOTED in refused.content.decode()

        voted = client.post(f"/battle/{battle.id}/vote", {"vote": "tie"}).content.decode()
        assert 'data-testid="share"' in voted
        stranger = Client().get(f"/battle/{battle.id}/").content.decode()
        assert 'data-testid="share-box"' not in stranger
        assert Client().post(f"/battle/{battle.id}/share").status_code == 404

    def test_sharing_shows_the_link_and_card_and_revoking_takes_them_away(self, client):
        client, key = owner_client(client)
        battle = answered_battle(session_key=key)
        vote_on(battle, choice="tie")
        box = client.post(f"/battle/{battle.id}/share").content.decode()
        token = Share.objects.get(battle=battle).token
        assert f'value="http://testserver/battle/shared/{token}/"' in box
        assert f'src="http://testserver/battle/shared/{token}/card.svg"' in box
        assert client.post(f"/battle/{battle.id}/share").content.decode() == box
        assert f"/battle/shared/{token}/" in client.get(f"/battle/{battle.id}/").content.decode()

        gone = client.post(f"/battle/{battle.id}/share/revoke").content.decode()
        assert 'data-testid="share"' in gone and token not in gone
        assert client.post(f"/battle/{battle.id}/share/revoke").status_code == 404
        assert Client().get(f"/battle/shared/{token}/").status_code == 404
        assert Client().get(f"/battle/shared/{token}/card.svg").status_code == 404

    def test_the_public_page_shows_the_battle_read_only_with_its_card(self):
        battle, share = shared_battle(turns=2, prompt="Why is the sky blue?")
        page = Client().get(f"/battle/shared/{share.token}/")
        assert page.status_code == 200
        html = page.content.decode()
        for text in ("Why is the sky blue?", "prompt 2", "answer a1", "answer b2",
                     battle.model_a.name, battle.model_b.name, "Left is Better"):
            assert text in html
        card = f"http://testserver/battle/shared/{share.token}/card.svg"
        assert f'<meta property="og:image" content="{card}">' in html
        assert f'<meta name="twitter:image" content="{card}">' in html
        # Read-only, and nothing leads from the link to the battle's own id.
        assert str(battle.id) not in html
        assert 'data-testid="share-box"' not in html and "hx-post" not in html
        image = Client().get(f"/battle/shared/{share.token}/card.svg")
        assert image.status_code == 200 and image["Content-Type"] == "image/svg+xml"
        ET.fromstring(image.content)

    def test_an_unknown_link_is_404(self):
        shared_battle()
        assert Client().get("/battle/shared/not-a-token/").status_code == 404
        assert Client().get("/battle/shared/not-a-token/card.svg").status_code == 404
