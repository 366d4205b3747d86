"""``vectorize`` and ``piecewise``: NumPy's function-applying array functions with JAX's
semantics (``jax.numpy.vectorize`` is built on ``vmap``: the function is traced once on one
example, not called once per element)."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["vectorize", "piecewise", "frompyfunc", "ufunc"]

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
    keyword names (strings) of arguments passed to ``pyfunc`` as they are, never mapped (a
    None argument is passed as it is too, as in JAX).
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
        dynamic = [i for i in range(len(args)) if i not in ex_pos]
        cores = [()] * len(dynamic) if in_core is None else list(in_core)
        if len(cores) != len(dynamic):
            raise ValueError(f"vectorize: the signature {signature!r} has {len(cores)} inputs, "
                             f"but the function was called with {len(dynamic)} (not excluded) "
                             f"positional arguments")
        # a None argument is passed as it is (JAX), and must have no core dimensions
        for i, core in zip(dynamic, cores):
            if args[i] is None and core:
                raise ValueError(f"vectorize: cannot pass None as argument {i}, whose core "
                                 f"dimensions in {signature!r} are {core}")
        mapped = [i for i in dynamic if args[i] is not None]
        cores = [c for i, c in zip(dynamic, cores) if args[i] is not None]
        arrays = [asarray(args[i]) for i in mapped]
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
        conds = [c] if c.ndim == x.ndim or c.ndim == 0 else [c[i] for i in range(c.shape[0])]  # type: ignore[index]
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


class ufunc:
    """A universal function made from a Python scalar function (JAX's ``jax.numpy.ufunc``, made
    by :func:`frompyfunc`): calling it maps the function over broadcast arrays (a
    ``vectorize``), and ``outer``, ``reduce``, ``accumulate``, ``reduceat`` and ``at`` work as
    NumPy's ufunc methods, built on ``vmap`` and ``lax.scan`` (so they differentiate, batch and
    compile)."""

    def __init__(self, func, nin, nout, identity=None):
        self._func = func
        self.nin = nin
        self.nout = nout
        self.nargs = nin
        self.identity = identity
        self.__name__ = getattr(func, "__name__", "ufunc")
        self._call = vectorize(func)

    def __repr__(self):
        return f"<nx_rune.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if len(args) != self.nin:
            raise TypeError(f"ufunc {self.__name__}: expected {self.nin} arguments, got "
                            f"{len(args)}")
        if out is not None:
            raise NotImplementedError(f"ufunc {self.__name__}: out= is not supported (arrays "
                                      f"are results, as in JAX)")
        if where is not None:
            raise NotImplementedError(f"ufunc {self.__name__}: where= is not supported")
        return self._call(*args)

    def _binary(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"ufunc.{method} is only supported for binary ufuncs with one "
                             f"output; {self.__name__} has nin={self.nin}, nout={self.nout}")

    def outer(self, A, B, /):
        """``self(a, b)`` for every pair: the result has shape ``A.shape + B.shape``."""
        from nx_rune.frontend import asarray, reshape
        self._binary("outer")
        A, B = asarray(A), asarray(B)
        r = self(reshape(A, (A.size, 1)), reshape(B, (B.size,)))
        return reshape(r, A.shape + B.shape)

    def _fold(self, a, axis, initial, keep_carries, method):
        from nx_rune import lax
        from nx_rune.frontend import asarray, broadcast_to, moveaxis, reshape
        a = asarray(a)
        if axis is None:
            a, axis = reshape(a, (a.size,)), 0
        if a.ndim == 0:
            raise ValueError(f"ufunc.{method}: the array must have at least one dimension")
        ax = int(axis)
        if not -a.ndim <= ax < a.ndim:
            raise ValueError(f"ufunc.{method}: axis {axis} is out of range for an array of "
                             f"rank {a.ndim}")
        a = moveaxis(a, ax % a.ndim, 0)
        if initial is None:
            if a.shape[0] == 0:
                raise ValueError(f"ufunc.{method} of {self.__name__}: zero-size array with "
                                 f"no identity and no initial value")
            init, xs = a[0], a[1:]
        else:
            init, xs = broadcast_to(asarray(initial, a.dtype), a.shape[1:]), a

        def body(c, x):
            n = self(c, x).astype(a.dtype)
            return n, (n if keep_carries else None)
        last, ys = lax.scan(body, init, xs)
        return a, ax, last, ys, init

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """The fold of ``self`` along ``axis`` (None: the flattened array), from ``initial``
        or else the ufunc's identity, or else the first element, as NumPy's reduce."""
        from nx_rune.frontend import asarray, astype, expand_dims
        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError("ufunc.reduce: out= and where= are not supported")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        start = initial if initial is not None else self.identity
        moved, ax, last, _, _ = self._fold(a, axis, start, False, "reduce")
        if keepdims:
            if axis is None:
                return last.reshape((1,) * a.ndim)
            return expand_dims(last, ax % a.ndim)
        return last

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running fold of ``self`` along ``axis`` (the first element first), as NumPy's
        accumulate."""
        from nx_rune.frontend import asarray, astype, concatenate, moveaxis
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError("ufunc.accumulate: out= is not supported")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        if a.ndim == 0:
            raise ValueError("ufunc.accumulate: the array must have at least one dimension")
        if a.shape[int(axis) % a.ndim] == 0:
            return a
        moved, ax, _, ys, init = self._fold(a, axis, None, True, "accumulate")
        res = concatenate([init[None], ys], axis=0)
        return moveaxis(res, 0, ax % a.ndim)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """NumPy's reduceat: for each ``i``, the reduce of ``a[indices[i]:indices[i+1]]``
        along ``axis`` (just ``a[indices[i]]`` where ``indices[i] >= indices[i+1]``); the
        indices must be concrete."""
        from nx_rune.frontend import asarray, astype, moveaxis, stack
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError("ufunc.reduceat: out= is not supported")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        idx = [int(i) for i in np.asarray(indices).ravel()]
        m = moveaxis(a, int(axis) % a.ndim, 0)
        n = m.shape[0]
        parts = []
        for k, i in enumerate(idx):
            if not 0 <= i < n:
                raise IndexError(f"ufunc.reduceat: index {i} is out of bounds for axis "
                                 f"{axis} of size {n}")
            j = idx[k + 1] if k + 1 < len(idx) else n
            # from the segment's first element (NumPy's reduceat uses no identity)
            parts.append(self._fold(m[i:j], 0, None, False, "reduceat")[2] if j > i else m[i])
        return moveaxis(stack(parts, axis=0), 0, int(axis) % a.ndim)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with ``self(a[i], b)`` applied at ``indices`` one index at a time (a repeated
        index is applied again, as NumPy's unbuffered ``at``); as in JAX, a new array is
        returned and ``inplace=False`` must be passed."""
        from nx_rune import lax
        from nx_rune.frontend import asarray, broadcast_to
        if inplace:
            raise NotImplementedError("ufunc.at: nx_rune returns a new array, as JAX does; "
                                      "pass inplace=False")
        a = asarray(a)
        idx = asarray(indices)
        flat = idx.reshape((idx.size,)) if idx.ndim else idx.reshape((1,))
        if self.nin == 2:
            if b is None:
                raise TypeError(f"ufunc.at of binary {self.__name__}: b is required")
            bb = broadcast_to(asarray(b), idx.shape + a.shape[1:]).reshape(
                (flat.shape[0],) + a.shape[1:])
        elif self.nin != 1:
            raise ValueError("ufunc.at is only supported for unary and binary ufuncs")

        def body(k, acc):
            i = flat[k]
            new = self(acc[i], bb[k]) if self.nin == 2 else self(acc[i])
            return acc.at[i].set(new.astype(a.dtype))
        return lax.fori_loop(0, flat.shape[0], body, a)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a Python function of scalars (JAX's ``jax.numpy.frompyfunc``):
    ``nin`` inputs, ``nout`` outputs, and the ``identity`` its ``reduce`` starts from.

    Examples
    --------
    >>> import nx_rune as nx
    >>> f = nx.numpy.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    >>> f.reduce(nx.arange(1.0, 5.0))
    Tensor(65., dtype=float32)
    """
    if not callable(func):
        raise TypeError(f"frompyfunc: func must be callable, got {type(func).__name__}")
    for name, v in (("nin", nin), ("nout", nout)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"frompyfunc: {name} must be a positive int, got {v!r}")
    return ufunc(func, int(nin), int(nout), identity)
