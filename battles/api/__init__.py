"""The text-battle JSON API: battles (seed 000's shapes), sessions (seed 001's), regenerating
and sharing (battles.api.share), and seed 001's own paths beside them (last:
``/battles/{id}/...`` keeps its matches)."""

from ninja import Router

from battles.api.battles import router as battles_router
from battles.api.seed_paths import router as seed_paths_router
from battles.api.sessions import router as sessions_router
from battles.api.share import router as share_router

router = Router()
router.add_router("", battles_router)
router.add_router("", sessions_router)
router.add_router("", share_router)
router.add_router("", seed_paths_router)
