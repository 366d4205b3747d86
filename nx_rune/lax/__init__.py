"""``nx.lax``: JAX's ``jax.lax`` on nx_rune.

Structured control flow with JAX's semantics (``cond``, ``scan``, ``fori_loop``,
``while_loop``; in eager mode each is plain Python, under ``nx.jit`` one equation of the
program, its bodies traced once: see ``nx_rune.compiler.control``), and the rest of lax's
names with JAX's signatures: ``switch``, ``map``, ``associative_scan``, ``select_n``, the
dynamic slices (traced starts, clamped as JAX clamps them), ``dot_general``,
``conv_general_dilated``, ``reduce_window``, ``sort``, ``top_k``, the cumulative reductions,
``pad`` (interior and negative padding), the shape functions and the elementwise functions
(JAX's integer division and remainder, rounding, saturating conversions), and the
collectives over the named axes of ``vmap``/``pmap`` (``psum``, ``pmean``, ``all_gather``,
...).  Each is a composition of nx_rune's front-end ops, so it differentiates, batches and
compiles like them.
"""
from nx_rune.lax import _control, _elementwise, _linear, _loops, _parallel, _structural
from nx_rune.lax._control import *  # noqa: F401,F403
from nx_rune.lax._elementwise import *  # noqa: F401,F403
from nx_rune.lax._linear import *  # noqa: F401,F403
from nx_rune.lax._loops import cond, fori_loop, scan, while_loop  # noqa: F401
from nx_rune.lax._parallel import *  # noqa: F401,F403
from nx_rune.lax._structural import *  # noqa: F401,F403

__all__ = sorted(_loops.__all__ + _control.__all__
                 + _elementwise.__all__ + _linear.__all__ + _parallel.__all__
                 + _structural.__all__)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
