"""Compatibility: the front end's public functions, as before it became ``nx_rune.frontend``.

New code imports from ``nx_rune`` (``import nx_rune as nx``) or from the family modules of
``nx_rune.frontend``.
"""
from nx_rune.frontend import *  # noqa: F401,F403
from nx_rune.frontend import __all__  # noqa: F401
