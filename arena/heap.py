"""What a long-lived process loads before it serves (Django, Twisted, the views, the provider
SDKs: hundreds of thousands of objects that live as long as it does), kept out of the garbage
collector's way: no collection while it loads, since each walked them all again (a sixth of
``import arena.asgi``, a quarter of a worker's start of 2.9 s, on this 2-core machine), then
one, and what is left is frozen out of the collector's sight for good (a full collection
under load walked it all again: a tenth of daphne's CPU under the load benchmark)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


def hold() -> None:
    """No garbage collection until :func:`settle`."""
    gc.disable()


def settle() -> None:
    """Collect once, freeze what is left, and collect as usual from now on."""
    gc.collect()
    gc.freeze()
    gc.enable()


@contextmanager
def loading_to_keep() -> Iterator[None]:
    """:func:`hold` while the block loads, then :func:`settle`."""
    hold()
    try:
        yield
    finally:
        settle()
