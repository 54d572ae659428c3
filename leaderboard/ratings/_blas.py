"""Run OpenBLAS single-threaded around many small, latency-bound numerical calls.

SciPy's L-BFGS-B calls BLAS/LAPACK on tiny (tens × tens) matrices at every iteration.
OpenBLAS hands even those to its worker threads, and on a busy two-core machine the
hand-over costs far more than the arithmetic: a 100-round bootstrap on the 140k votes
took 4-12 s instead of 0.6 s while other processes were busy.  :func:`single_threaded`
sets the thread count of every OpenBLAS loaded in the process to 1 for the duration
of a ``with`` block and restores it after — the same calls ``threadpoolctl`` makes, found
the same way (the loaded libraries are listed in ``/proc/self/maps``).  Where that is
not possible (not Linux, another BLAS) it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
from collections.abc import Iterator
from pathlib import Path

_PREFIXES = ("openblas", "scipy_openblas")
_SUFFIXES = ("", "64_")

_lock = threading.Lock()
_depth = 0
_saved: list[int] = []


class _OpenBLAS:
    def __init__(self, lib: ctypes.CDLL) -> None:
        self.get = self.set = None
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if getter is not None and setter is not None:
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    self.get, self.set = getter, setter
                    return


@functools.cache
def _libraries() -> tuple[_OpenBLAS, ...]:
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return ()
    paths = {
        line.split(maxsplit=5)[-1]
        for line in maps.splitlines()
        if "openblas" in line.rsplit("/", 1)[-1].lower() and ".so" in line
    }
    found = []
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 0)
    for path in sorted(paths):
        try:
            lib = _OpenBLAS(ctypes.CDLL(path, mode=mode))
        except OSError:
            continue
        if lib.get is not None:
            found.append(lib)
    return tuple(found)


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Limit every loaded OpenBLAS to one thread inside the block (re-entrant, thread-safe)."""
    global _depth
    with _lock:
        if _depth == 0:
            libs = _libraries()
            _saved[:] = [lib.get() for lib in libs]
            for lib in libs:
                lib.set(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for lib, threads in zip(_libraries(), _saved, strict=True):
                    lib.set(threads)
