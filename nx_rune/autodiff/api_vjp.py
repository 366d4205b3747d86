"""The VJP object: what ``nx.vjp`` returns as its backward function (JAX's first-class VJPs).

A :class:`VJP` is callable (``f_vjp(cotangent)``) and is a pytree, so it can be returned out of
``jit``, passed into another jitted function, mapped over or stored like other data (JAX's
``fwd, bwd = jit(fwd), jit(bwd)`` pattern).  Its leaves are what the backward pass needs
(``args_res``: the primal arguments, mirroring them; ``opaque_residuals``: values computed by
the forward pass, empty here).

nx_rune's reverse mode records a tape of Python objects (each entry keeps the values its rule
reads and the rule itself), which is not data a compiled program can hand over.  So a VJP
object keeps the arguments as its residuals: called as made by ``vjp`` (its arguments
unchanged) it runs the recorded tape's backward pass; rebuilt from its leaves (after ``jit``
returned it, inside a jitted function, after ``args_res`` was edited) it runs the forward pass
again on ``args_res`` and then the backward pass, as ``checkpoint`` would.  The values are the
same; the forward computation is done twice on that path.
"""
from __future__ import annotations

from typing import Any, Callable

from nx_rune.tree_util import register_pytree_node_class

__all__ = ["VJP"]

# nx_rune.autodiff.api.vjp, set by that module (which imports this one), for the rebuilt path
VJP_OF: list = [None]


@register_pytree_node_class
class VJP:
    """The backward function of ``nx.vjp``: ``f_vjp(cotangent)`` gives the cotangents of the
    primal arguments (a tuple, one per argument).  A pytree whose leaves are ``args_res``
    (the primal arguments, a list: editable, as JAX's) and ``opaque_residuals`` (empty: see
    the module doc), so it passes in and out of ``jit``.  ``fun``: the differentiated
    function.

    Examples
    --------
    >>> import nx_rune as nx
    >>> def layer(W, x):
    ...     return nx.tanh(x @ W)
    >>> fwd = nx.jit(lambda W, x: nx.vjp(layer, W, x))
    >>> bwd = nx.jit(lambda f_vjp, ct: f_vjp(ct))
    >>> y, f_vjp = fwd(nx.ones((3, 3)), nx.ones((2, 3)))
    >>> [a.shape for a in f_vjp.args_res]
    [(3, 3), (2, 3)]
    >>> dW, dx = bwd(f_vjp, nx.ones_like(y))
    >>> dW.shape, dx.shape
    ((3, 3), (2, 3))
    """
    __slots__ = ("fun", "_args", "_list", "_opaque", "_fn", "_has_aux", "_wrote")

    def __init__(self, fun: Callable[..., Any], args_res: Any,
                 opaque_residuals: list | None = None, _fn: Callable[[Any], Any] | None = None,
                 _has_aux: bool = False, _wrote: bool = False) -> None:
        self.fun = fun
        # the arguments as given (a tuple); the list args_res is made when first read, so
        # that a call of the object vjp made, its args_res never looked at, checks nothing
        self._args = tuple(args_res)
        self._list: list | None = None
        self._opaque = opaque_residuals
        self._fn = _fn
        self._has_aux = _has_aux
        self._wrote = _wrote

    @property
    def args_res(self) -> list:
        """The primal arguments the backward pass uses, mirroring them (a list: an entry
        may be replaced, as in JAX; the object then runs the function again on them)."""
        lst = self._list
        if lst is None:
            lst = self._list = list(self._args)
        return lst

    @args_res.setter
    def args_res(self, value: Any) -> None:
        self._list = list(value)

    @property
    def opaque_residuals(self) -> list:
        """Values computed by the forward pass and kept for the backward pass: none here
        (see the module doc)."""
        if self._opaque is None:
            self._opaque = []
        return self._opaque

    def _unedited(self) -> bool:
        """Whether args_res still holds the arguments the recorded tape ran on."""
        lst, args = self._list, self._args
        return lst is None or (len(lst) == len(args) and all(a is b for a, b in zip(lst, args)))

    def __call__(self, cotangent: Any) -> tuple[Any, ...]:
        fn = self._fn
        if fn is not None and (self._list is None or self._unedited()):
            return fn(cotangent)
        if self._wrote:
            raise ValueError("vjp_fn: this VJP object was rebuilt from its leaves (or its "
                             "args_res edited), which runs the function again on args_res, "
                             "but the function wrote into its arguments in place: their "
                             "values before the call are gone.  Call the VJP object vjp "
                             "returned as it is, or do not write into the arguments")
        res = VJP_OF[0](self.fun, *self.args_res, has_aux=self._has_aux)
        return res[1](cotangent)

    def replace(self, **changes: Any) -> VJP:
        """A copy with attributes replaced (``args_res=[...]``), as JAX's ``VJP.replace``."""
        unknown = set(changes) - {"args_res", "opaque_residuals"}
        if unknown:
            raise TypeError(f"VJP.replace: unknown fields {sorted(unknown)}; the fields are "
                            f"args_res and opaque_residuals")
        keep = "args_res" not in changes and self._unedited()
        return VJP(self.fun, changes.get("args_res", self.args_res),
                   changes.get("opaque_residuals", self.opaque_residuals),
                   self._fn if keep else None, self._has_aux, self._wrote)

    def __repr__(self) -> str:
        name = getattr(self.fun, "__qualname__", None) or repr(self.fun)
        return f"VJP(fun={name}, args_res={self.args_res!r}, " \
               f"opaque_residuals={self.opaque_residuals!r})"

    def tree_flatten(self):
        return (self.args_res, self.opaque_residuals), (self.fun, self._has_aux, self._wrote)

    @classmethod
    def tree_unflatten(cls, aux, children):
        fun, has_aux, wrote = aux
        args_res, opaque = children
        return cls(fun, args_res, opaque, None, has_aux, wrote)
