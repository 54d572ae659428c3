"""ASGI entry point: HTTP through Django (public answers repeated from memory before it,
arena.edge), websockets through each app's routing, each connection with a request id of its
own (arena.logs), all of it counted (arena.metrics); once daphne serves, the modes warm up
(arena.webserver.warm_up_once_serving)."""

import os

from arena import heap

heap.hold()  # no garbage collection while everything loads: settled below (settle_heap)

from django.core.asgi import get_asgi_application  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from arena.aio import reused_request_threads  # noqa: E402
from arena.edge import PublicAnswers  # noqa: E402
from arena.logs import RequestIds  # noqa: E402
from arena.metrics import RequestMetrics  # noqa: E402
from arena.routing import websocket_urlpatterns  # noqa: E402
from arena.webserver import (  # noqa: E402
    accept_one_at_a_time,
    access_log_through_logging,
    settle_heap,
    warm_up_once_serving,
)

accept_one_at_a_time()
access_log_through_logging()

application = RequestMetrics(ProtocolTypeRouter(
    {
        "http": PublicAnswers(reused_request_threads(django_asgi_app)),
        "websocket": RequestIds(AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        )),
    }
))
settle_heap()
warm_up_once_serving()
