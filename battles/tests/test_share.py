"""Sharing a voted battle: the link, its public read-only page, its image card, revoking."""

from __future__ import annotations

import io

import pytest
from django.test import Client
from PIL import Image, ImageFont

from arena.errors import RuleError
from arena.models import AIModel
from battles import cards, selectors, sharing
from battles.models import Share
from battles.tests.factories import AIModelFactory, answered_battle, vote_on

GOLD, EDGE, GROUND = (250, 204, 21), (55, 65, 81), (17, 24, 39)
LONG_NAME = "Mixture-of-Experts-Instruct-Preview-2026-10-01-Extended-Context-Edition " * 3
# As long as the registry's columns hold (PostgreSQL refuses more; SQLite would not).
NAME_MAX = AIModel._meta.get_field("name").max_length
ORGANIZATION_MAX = AIModel._meta.get_field("organization").max_length


def owner_client(client: Client) -> tuple[Client, str]:
    session = client.session
    session["visitor"] = True
    session.save()
    return client, session.session_key


def shared_battle(choice="left_better", **fields):
    battle = answered_battle(**fields)
    vote_on(battle, choice=choice)
    return battle, sharing.battle_share(battle=battle)


def card_of(battle) -> Image.Image:
    view = selectors.battle_view(battle=selectors.battle_get(battle_id=battle.id))
    image = Image.open(io.BytesIO(cards.battle_card_png(view)))
    assert (image.format, image.size) == ("PNG", (cards.WIDTH, cards.HEIGHT))
    return image.convert("RGB")


def untouched(image: Image.Image, box: tuple[int, int, int, int]) -> bool:
    """Nothing is drawn in the box: every pixel is the card's background."""
    return image.crop(box).getcolors() == [((box[2] - box[0]) * (box[3] - box[1]), GROUND)]


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


class TestCardText:
    FONT = ImageFont.load_default(size=38)

    def test_letters_the_font_lacks_are_folded_and_a_script_it_cannot_draw_is_one_ellipsis(
            self):
        assert cards.card_text("Café Straße — naïve Œuvre ×2") == "Cafe Strasse - naive OEuvre x2"
        assert cards.card_text("“解释量子纠缠” in   simple\nterms 🙂") == "“…” in simple terms …"
        assert cards.card_text("Объясни 光") == "…"
        assert cards.card_text("请用简单的语言，举一个例子。好吗？ ok") == "…? ok"

    def test_a_long_text_is_wrapped_to_the_width_and_cut_with_an_ellipsis(self):
        text = "word " * 400 + "x" * 2000
        lines = cards.wrap(text, self.FONT, 1060, 3)
        assert len(lines) == 3 and lines[-1].endswith("…")
        assert all(self.FONT.getlength(line) <= 1060 for line in lines)

    def test_a_word_wider_than_a_line_is_broken_inside(self):
        lines = cards.wrap("y" * 2000, self.FONT, 1060, 3)
        assert len(lines) == 3 and lines[-1].endswith("…") and "".join(lines).startswith("yyy")
        assert all(self.FONT.getlength(line) <= 1060 for line in lines)
        assert cards.wrap("short", self.FONT, 1060, 3) == ["short"]
        assert cards.clip("Mixture" * 50, self.FONT, 300).endswith("…")


@pytest.mark.django_db
class TestCard:
    def test_the_card_is_a_1200_by_630_png_that_outlines_the_winner(self):
        battle, _ = shared_battle(prompt="Is <b>this</b> & that safe?")
        image = card_of(battle)
        left, right = cards.SIDES["left"], cards.SIDES["right"]
        assert image.getpixel((left + 2, 400)) == GOLD  # the chosen side's outline
        assert image.getpixel((right + 1, 400)) == EDGE

    def test_a_tie_outlines_neither_side(self):
        battle, _ = shared_battle(choice="tie")
        image = card_of(battle)
        for x in cards.SIDES.values():
            assert image.getpixel((x + 1, 400)) == EDGE

    @pytest.mark.parametrize("prompt", ["Why? " * 400, "z" * 2000, "解释量子纠缠。" * 300,
                                        "Объясни квантовую запутанность 🙂 " * 60])
    def test_long_and_non_latin_text_stays_inside_its_boxes(self, prompt):
        battle, _ = shared_battle(prompt=prompt, model_a=AIModelFactory(name=LONG_NAME[:NAME_MAX]),
                                  model_b=AIModelFactory(name="模型" * 40,
                                                         organization=LONG_NAME[:ORGANIZATION_MAX]))
        image = card_of(battle)
        gap = cards.SIDES["right"] - 30
        assert untouched(image, (cards.WIDTH - cards.MARGIN + 4, 100, cards.WIDTH, 320))
        assert untouched(image, (gap, 330, gap + 20, 500))  # between the two sides
        assert untouched(image, (0, 220, cards.MARGIN - 4, 320))


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
        assert f'src="http://testserver/battle/shared/{token}/card.png"' in box
        assert client.post(f"/battle/{battle.id}/share").content.decode() == box
        assert f"/battle/shared/{token}/" in client.get(f"/battle/{battle.id}/").content.decode()

        gone = client.post(f"/battle/{battle.id}/share/revoke").content.decode()
        assert 'data-testid="share"' in gone and token not in gone
        assert client.post(f"/battle/{battle.id}/share/revoke").status_code == 404
        assert Client().get(f"/battle/shared/{token}/").status_code == 404
        assert Client().get(f"/battle/shared/{token}/card.png").status_code == 404

    def test_the_public_page_shows_the_battle_read_only_with_its_card(self):
        battle, share = shared_battle(turns=2, prompt="Why is the sky blue?")
        page = Client().get(f"/battle/shared/{share.token}/")
        assert page.status_code == 200
        html = page.content.decode()
        for text in ("Why is the sky blue?", "prompt 2", "answer a1", "answer b2",
                     battle.model_a.name, battle.model_b.name, "Left is Better"):
            assert text in html
        card = f"http://testserver/battle/shared/{share.token}/card.png"
        for meta in (f'<meta property="og:image" content="{card}">',
                     '<meta property="og:image:type" content="image/png">',
                     '<meta property="og:image:width" content="1200">',
                     '<meta property="og:image:height" content="630">',
                     '<meta name="twitter:card" content="summary_large_image">',
                     f'<meta name="twitter:image" content="{card}">'):
            assert meta in html
        # Read-only, and nothing leads from the link to the battle's own id.
        assert str(battle.id) not in html
        assert 'data-testid="share-box"' not in html and "hx-post" not in html
        image = Client().get(f"/battle/shared/{share.token}/card.png")
        assert image.status_code == 200 and image["Content-Type"] == "image/png"
        assert image["Cache-Control"] == "private, max-age=300"  # see CARD_MAX_AGE
        png = Image.open(io.BytesIO(image.content))
        assert (png.format, png.size) == ("PNG", (1200, 630))
        png.load()  # decodes whole

    def test_an_unknown_link_is_404(self):
        shared_battle()
        assert Client().get("/battle/shared/not-a-token/").status_code == 404
        assert Client().get("/battle/shared/not-a-token/card.png").status_code == 404
