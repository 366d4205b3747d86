"""``vectorize`` and ``piecewise``: NumPy's function-applying array functions with JAX's
semantics (``jax.numpy.vectorize`` is built on ``vmap``: the function is traced once on one
example, not called once per element)."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["vectorize", "piecewise"]

_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    """``"(m,n),(n)->(m)"`` -> ``([("m", "n"), ("n",)], [("m",)])`` (NumPy's gufunc form)."""
    s = signature.replace(" ", "")
    if not _SIGNATURE.match(s):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (expected a "
                         f"form like '(m,n),(n)->(m)')")
    ins, outs = s.split("->")

    def args(part):
        return [tuple(d for d in a.split(",") if d) for a in re.findall(r"\(([^)]*)\)", part)]
    return args(ins), args(outs)


def _broadcast_shapes(shapes, what):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"vectorize: the loop dimensions of the arguments do not broadcast "
                         f"together: {what}") from None


def vectorize(pyfunc: Callable[..., Any], *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` applied over the leading ("loop") dimensions of its array arguments, which
    broadcast together, as NumPy's ``vectorize`` with JAX's implementation: nested ``vmap``s,
    so ``pyfunc`` is traced once (with one example of each argument) and the whole call is one
    batched computation that differentiates and compiles like any other.

    ``signature``: NumPy's generalized-ufunc signature, e.g. ``"(n),(n)->()"``: each argument's
    trailing core dimensions (named, sizes checked for agreement) are passed to ``pyfunc``
    whole; without it every argument's core is a scalar.  ``excluded``: positions (ints) and
    keyword names (strings) of arguments passed to ``pyfunc`` as they are, never mapped.
    Other keyword arguments are passed as they are too (not mapped).  Returns a function
    whose output has the broadcast loop shape followed by each output's core dimensions
    (a tuple of outputs for a signature with several).

    ValueError for a malformed signature, an argument with fewer dimensions than its core, core
    sizes that disagree, loop shapes that do not broadcast, or an output whose core dimensions
    do not match the signature.

    Examples
    --------
    >>> import nx_rune as nx
    >>> dot = nx.numpy.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    >>> dot(nx.ones((4, 3)), nx.arange(3.0)).shape
    (4,)
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (int, str)) or isinstance(e, bool):
            raise TypeError(f"vectorize: excluded must hold ints (positions) and strings "
                            f"(keyword names), got {e!r}")
    if signature is not None:
        if not isinstance(signature, str):
            raise TypeError(f"vectorize: signature must be a string, got "
                            f"{type(signature).__name__}")
        in_core, out_core = _parse_signature(signature)
    else:
        in_core = out_core = None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        from nx_rune.autodiff.batching import vmap
        from nx_rune.frontend import asarray, reshape
        for e in excluded:
            if isinstance(e, int) and not -len(args) <= e < len(args):
                raise ValueError(f"vectorize: excluded position {e} is out of range for "
                                 f"{len(args)} positional arguments")
        ex_pos = {e % len(args) for e in excluded if isinstance(e, int)} if args else set()
        mapped = [i for i in range(len(args)) if i not in ex_pos]
        arrays = [asarray(args[i]) for i in mapped]
        cores = [()] * len(arrays) if in_core is None else in_core
        if len(cores) != len(arrays):
            raise ValueError(f"vectorize: the signature {signature!r} has {len(cores)} inputs, "
                             f"but the function was called with {len(arrays)} (not excluded) "
                             f"positional arguments")
        sizes: dict[str, int] = {}
        loops = []
        for k, (a, core) in enumerate(zip(arrays, cores)):
            if a.ndim < len(core):
                raise ValueError(f"vectorize: input {k} has {a.ndim} dimensions, fewer than "
                                 f"the {len(core)} core dimensions {core} of the signature "
                                 f"{signature!r}")
            nl = a.ndim - len(core)
            for name, n in zip(core, a.shape[nl:]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"vectorize: inconsistent size for core dimension "
                                     f"{name!r}: {sizes[name]} and {n} (input {k}, shape "
                                     f"{a.shape})")
            loops.append(tuple(a.shape[:nl]))
        loop = _broadcast_shapes(loops, ", ".join(str(s) for s in loops))
        depth = len(loop)
        # each argument with its loop shape left-padded to the full depth; a loop dimension
        # of size 1 (or absent) where the loop is longer is dropped and that argument is
        # shared (in_axes None) at that level instead of broadcast
        present = []
        prepared = []
        for a, lp in zip(arrays, loops):
            pad = (1,) * (depth - len(lp)) + lp
            keep = [pad[d] != 1 or loop[d] == 1 for d in range(depth)]
            core_shape = tuple(a.shape[len(lp):])
            new = tuple(n for d, n in enumerate(pad) if keep[d]) + core_shape
            prepared.append(reshape(a, new) if new != a.shape else a)
            present.append(keep)

        def call(*xs):
            full = list(args)
            for i, x in zip(mapped, xs):
                full[i] = x
            out = pyfunc(*full, **kwargs)
            if out_core is not None:
                _check_outputs(out, out_core, sizes, signature)
            return out

        f = call
        for d in reversed(range(depth)):
            axes = tuple(0 if p[d] else None for p in present)
            f = vmap(f, in_axes=axes, axis_size=loop[d])
        return f(*prepared)

    return wrapped


def _check_outputs(out, out_core, sizes, signature):
    outs = out if len(out_core) > 1 else (out,)
    if len(out_core) > 1 and (not isinstance(out, tuple) or len(out) != len(out_core)):
        raise ValueError(f"vectorize: the signature {signature!r} has {len(out_core)} "
                         f"outputs, the function returned "
                         f"{len(out) if isinstance(out, tuple) else 1}")
    for k, (o, core) in enumerate(zip(outs, out_core)):
        shape = tuple(getattr(o, "shape", np.shape(o)))
        if len(shape) != len(core):
            raise ValueError(f"vectorize: output {k} has shape {shape}, but the signature "
                             f"{signature!r} gives it {len(core)} core dimensions {core}")
        for name, n in zip(core, shape):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"vectorize: output {k}'s core dimension {name!r} has size "
                                 f"{n}, the inputs gave it {sizes[name]}")


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``x`` evaluated piecewise, as NumPy's ``piecewise``: where ``condlist[k]`` holds,
    ``funclist[k](x, *args, **kw)`` (or the constant ``funclist[k]``); where several hold,
    the last one; where none holds, ``funclist[len(condlist)]`` if given, else 0.

    As in JAX, every function is evaluated on the whole of ``x`` (they must be elementwise and
    defined everywhere: their values are selected, so a derivative sees only the selected
    piece, as long as the others are finite) and the result has ``x``'s dtype.
    ValueError when ``funclist`` has neither ``len(condlist)`` nor ``len(condlist) + 1``
    entries, or a condition's shape differs from ``x``'s.
    """
    from nx_rune.frontend import asarray, astype, broadcast_to, where
    from nx_rune.frontend import full as _full
    x = asarray(x)
    if isinstance(condlist, (list, tuple)):
        conds = [asarray(c) for c in condlist]
    else:
        c = asarray(condlist)
        conds = [c] if c.ndim == x.ndim or c.ndim == 0 else [c[i] for i in range(c.shape[0])]
    funclist = list(funclist)
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        default = funclist[-1]
        funclist = funclist[:-1]
    elif nf == nc:
        default = 0
    else:
        raise ValueError(f"piecewise: funclist has {nf} entries; it must have one per "
                         f"condition ({nc}) or one more (the default)")
    dtype = x.dtype

    def value(f):
        if callable(f):
            return astype(broadcast_to(asarray(f(x, *args, **kw)), x.shape), dtype)
        return _full(x.shape, f, dtype)

    out = value(default)
    for k, (c, f) in enumerate(zip(conds, funclist)):
        if c.shape not in (x.shape, ()):
            raise ValueError(f"piecewise: condition {k} has shape {c.shape}, x has shape "
                             f"{x.shape}")
        out = where(astype(c, np.bool_), value(f), out)
    return out
