NAV_ITEMS = [
    ("battle", "Battle", "/battle/"),
    ("panel", "Panel", "/panel/"),
    ("debates", "Debates", "/debates/"),
    ("voice", "Voice", "/voice/"),
    ("leaderboard", "Leaderboard", "/leaderboard/"),
]


def navigation(request):
    path = request.path
    return {
        "nav_items": [
            {"key": key, "label": label, "url": url, "active": path.startswith(url)}
            for key, label, url in NAV_ITEMS
        ]
    }
