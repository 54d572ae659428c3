from arena import modes


class ReleasesConfig(modes.ModeConfig):
    """Open data: dated releases of the public, voted contests of every mode (``/data/``,
    ``GET /api/data/releases``, ``manage.py release_data``). Not a mode of comparison, but it
    takes its place in the navigation, URLs and API the same way."""

    name = "releases"
    mode = modes.Mode(
        key="data", label="Open data", path="data/", order=95,
        summary="Every voted contest, published: Parquet and CSV with a datasheet.",
        urls="releases.urls", api_router="releases.api.router",
        beat="releases.tasks.BEAT",  # daily, after midnight UTC: a crontab
    )

    def ready(self) -> None:
        from django.utils.module_loading import autodiscover_modules

        # Every installed app's open_data.py registers the rows it publishes (this app
        # imports no mode).
        autodiscover_modules("open_data")
