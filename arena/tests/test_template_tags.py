"""The platform's template filters."""

from datetime import timedelta

from django.utils import timezone

from arena.templatetags.arena_tags import ago, markdown


def test_ago_says_just_now_under_a_minute_then_counts():
    now = timezone.now()
    assert ago(now) == "just now"
    assert ago(now - timedelta(seconds=59)) == "just now"
    assert ago(now - timedelta(minutes=3, seconds=5)) == "3\xa0minutes ago"
    assert ago(None) == ""


def test_markdown_is_sanitised():
    html = markdown("**bold** <script>alert(1)</script>")
    assert "<strong>bold</strong>" in html and "<script" not in html
