"""Static files through WhiteNoise without making every request synchronous.

WhiteNoise's middleware is sync only, so under daphne Django would run the whole chain for
every request, static or not, through a thread hop into sync code and back out to the async
views. This middleware is async capable: it hands only paths under ``STATIC_URL`` that
WhiteNoise knows to WhiteNoise and awaits the rest of the chain directly.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.whitenoise = WhiteNoiseMiddleware(get_response)
        self.prefix = "/" + settings.STATIC_URL.lstrip("/")
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self._acall(request)
        return self.whitenoise(request)

    async def _acall(self, request):
        path = request.path_info
        if path.startswith(self.prefix):
            if self.whitenoise.autorefresh:  # development: looks on disk each time
                found = await sync_to_async(self.whitenoise.find_file)(path)
            else:
                found = self.whitenoise.files.get(path)
            if found is not None:
                return self.whitenoise.serve(found, request)
        return await self.get_response(request)
