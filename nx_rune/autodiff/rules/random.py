"""Rules of the random-bit primitives (threefry, threefry_bits, threefry_sample): integer data
with no derivative; batching hashes every example's counters in one call, or a batch of keys.

May import: primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import BATCH_RULES, batch_at, moveaxis
from nx_rune.autodiff.rules._common import defnondiff
from nx_rune.primitives import bind

# -- random ---------------------------------------------------------------------------------------
defnondiff(P.threefry_p)


def _halves(c, h):
    return (bind(P.shrink_p, c, limits=((0, c.shape[0]), (0, h))),
            bind(P.shrink_p, c, limits=((0, c.shape[0]), (h, 2 * h))))


def _batch_threefry(size, args, dims):
    """threefry(key, count) hashes the pairs (flat[i], flat[i + h]) of the flattened count
    (padded with a zero to an even length 2h): with one key, every example's halves go into
    one call (all first halves, then all second halves) and its results are put back; with a
    key per example (or a batch of keys already), the keys go in as a batch (*batch, 2), each
    hashing its own example's count."""
    (key, ctr), (dk, dc) = args, dims
    if dk is not None or key.ndim > 1:
        return bind(P.threefry_p, batch_at(key, dk, size, 0), batch_at(ctr, dc, size, 0)), 0
    c = moveaxis(ctr, dc, 0)
    shape = c.shape[1:]
    n = math.prod(shape)
    h = (n + 1) // 2
    c = bind(P.reshape_p, c, shape=(size, n))
    if 2 * h != n:
        c = bind(P.pad_p, c, config=((0, 0), (0, 1)), fill=0)
    x0, x1 = _halves(c, h)
    flat = (size * h,)
    y = bind(P.threefry_p, key, bind(P.cat_p, bind(P.reshape_p, x0, shape=flat),
                                      bind(P.reshape_p, x1, shape=flat), axis=0))
    y0 = bind(P.reshape_p, bind(P.shrink_p, y, limits=((0, size * h),)), shape=(size, h))
    y1 = bind(P.reshape_p, bind(P.shrink_p, y, limits=((size * h, 2 * size * h),)),
              shape=(size, h))
    out = bind(P.shrink_p, bind(P.cat_p, y0, y1, axis=1), limits=((0, size), (0, n)))
    return bind(P.reshape_p, out, shape=(size,) + shape), 0


BATCH_RULES[P.threefry_p] = _batch_threefry


# the samples of a traced key: integer data, no derivative (the parameters' derivatives come
# from the nx operations that nx.random applies outside these primitives)
defnondiff(P.threefry_bits_p)
defnondiff(P.threefry_sample_p)


def _batch_random(prim):
    """threefry_bits/threefry_sample of a batch of keys: the keys go in as one (*batch, 2) operand,
    each drawing its own sample (the batch axis first)."""
    def rule(size, args, dims, **params):
        return bind(prim, moveaxis(args[0], dims[0], 0), **params), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


_batch_random(P.threefry_bits_p)
_batch_random(P.threefry_sample_p)


def _batch_rejection(prim):
    """The rejection samplers of batched operands: every operand's batch axis first (an
    unbatched one broadcast along it), so the key of shape (size, ..., 2) draws for each of its
    keys, as JAX batches these primitives."""
    def rule(size, args, dims, **params):
        moved = [ops.broadcast_to(x, (size,) + tuple(x.shape)) if d is None else moveaxis(x, d, 0)
                 for x, d in zip(args, dims)]
        return bind(prim, *moved, **params), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


# random_gamma, random_poisson, random_binomial: integer keys and counts; gamma's derivative in
# its shape parameter is attached around the primitive by nx_rune.random (a custom JVP)
for _p in (P.random_gamma_p, P.random_poisson_p, P.random_binomial_p):
    _batch_rejection(_p)
    defnondiff(_p)
del _p
