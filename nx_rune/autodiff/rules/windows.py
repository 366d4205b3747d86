"""Rules of ``unfold`` and ``fold``: each is the other's transpose; batching merges the batch
into the leading N axis and splits it off the result.

May import: primitives and this package's ``_common``/``_batch_common``.
"""
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import BATCH_RULES, moveaxis
from nx_rune.autodiff.rules._common import deflinear
from nx_rune.primitives import bind

# -- windows (unfold and fold are each other's adjoint) -------------------------------------------

deflinear(P.unfold_p, lambda g, ans, x, kernel_size, stride, dilation, padding: bind(
    P.fold_p, g, output_size=tuple(x.shape[2:]), kernel_size=kernel_size, stride=stride,
    dilation=dilation, padding=padding))
deflinear(P.fold_p, lambda g, ans, x, output_size, kernel_size, stride, dilation, padding: bind(
    P.unfold_p, g, kernel_size=kernel_size, stride=stride, dilation=dilation, padding=padding))


# -- batching ---------------------------------------------------------------------------------

def _defwindows(prim):
    """unfold/fold take (N, ...): the batch merges into N and splits off the result."""
    def rule(size, args, dims, **params):
        x = moveaxis(args[0], dims[0], 0)
        n = x.shape[1]
        out = bind(prim, bind(P.reshape_p, x, shape=(size * n,) + x.shape[2:]), **params)
        return bind(P.reshape_p, out, shape=(size, n) + out.shape[1:]), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


_defwindows(P.unfold_p)
_defwindows(P.fold_p)
