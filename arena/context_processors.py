from arena.modes import modes


def navigation(request):
    path = request.path
    return {
        "nav_items": [
            {"key": m.key, "label": m.label, "url": m.url, "active": path.startswith(m.url)}
            for m in modes()
        ]
    }
