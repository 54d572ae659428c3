"""Protocol-faithful stand-ins for the managed voice providers, on real local sockets:
:class:`FakeVapi` (its REST API and its WebSocket transport), :class:`FakeRetell` (its REST
API) with :class:`FakeMediaLeg` (the LiveKit room's side of a Retell call)."""

from agents.tests.fakes.retell import FakeMediaLeg, FakeRetell
from agents.tests.fakes.vapi import FakeVapi

__all__ = ["FakeMediaLeg", "FakeRetell", "FakeVapi"]
