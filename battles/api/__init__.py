"""The text-battle JSON API: battles (seed 000's shapes) and sessions (seed 001's)."""

from ninja import Router

from battles.api.battles import router as battles_router
from battles.api.sessions import router as sessions_router

router = Router()
router.add_router("", battles_router)
router.add_router("", sessions_router)
