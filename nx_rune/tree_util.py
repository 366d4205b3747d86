"""Pytrees: nested containers with arrays (or any other objects) at the leaves, as jax.tree_util.

Nodes are tuples, lists, dicts, ``None`` (a node with no children, not a leaf), namedtuples,
``collections.OrderedDict`` and ``collections.defaultdict``, and any class registered with
:func:`register_pytree_node` or :func:`register_pytree_node_class`.  Everything else is a leaf.
A node is recognised by its exact type (a dict subclass that is not registered is a leaf).

``tree_flatten(tree) -> (leaves, treedef)`` and ``tree_unflatten(treedef, leaves)`` are inverse.
Leaves come in a fixed order: sequences in order, dict keys sorted (ValueError when they do not
sort), OrderedDict keys in insertion order, a registered class in the order its flatten function
gives.  The autodiff transformations (``nx.grad``, ``nx.vjp``, ...) flatten their inputs and
outputs with this module, so registered classes work there too.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from typing import Any, Callable, Iterable, NamedTuple, Sequence

__all__ = ["PyTreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure",
           "tree_map", "tree_reduce", "tree_all", "register_pytree_node",
           "register_pytree_node_class", "register_dataclass",
           "flatten_one_level", "treedef_children", "Partial",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
           "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey"]
# JAX's key-path names, nx_rune.tree's functions and classes (looked up by __getattr__ below)
__all__ += ["tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path"]  # noqa: F822
__all__ += ["keystr", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey"]  # noqa: F822

_NoneType = type(None)


class _Leaf:
    """The node type of a leaf in a PyTreeDef."""

    def __repr__(self):
        return "*"

    def __reduce__(self):
        return "_LEAF"      # unpickles as the module's one instance


_LEAF = _Leaf()


class _NodeKind:
    """How one node type flattens: ``flatten(x) -> (children, aux)``, ``unflatten(aux,
    children) -> x``; ``custom``: registered by a user (what its flatten returns is checked)."""
    __slots__ = ("flatten", "unflatten", "custom")

    def __init__(self, flatten, unflatten, custom):
        self.flatten, self.unflatten, self.custom = flatten, unflatten, custom


_registry: dict[type, _NodeKind] = {}


class PyTreeDef:
    """The structure of a pytree: a node type, its auxiliary data (dict keys, a registered
    class's static data) and the children's PyTreeDefs.  Immutable; equal treedefs describe
    trees of the same structure; hashable (unhashable auxiliary data, such as a dict, hashes
    by its type and compares by ==)."""
    __slots__ = ("_type", "_aux", "_children", "num_leaves", "num_nodes", "_hash")

    def __init__(self, node_type, aux, children):
        self._type, self._aux, self._children = node_type, aux, children
        leaves, nodes = (1 if node_type is _LEAF else 0), 1
        for c in children:
            leaves += c.num_leaves
            nodes += c.num_nodes
        self.num_leaves, self.num_nodes, self._hash = leaves, nodes, None

    def children(self) -> list[PyTreeDef]:
        """The PyTreeDefs of the root node's children (empty for a leaf or None)."""
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """``(node type, auxiliary data)`` of the root; None for a leaf."""
        return None if self._type is _LEAF else (self._type, self._aux)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """``tree_unflatten(self, leaves)``."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` that sit where this treedef has its leaves (``tree`` must
        have this structure, possibly with deeper subtrees at the leaves); ValueError naming
        the mismatch otherwise."""
        out: list[Any] = []
        _up_to(self, tree, out, ())
        return out

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return (self._type is other._type and self.num_leaves == other.num_leaves
                and self.num_nodes == other.num_nodes and _aux_equal(self._aux, other._aux)
                and self._children == other._children)

    def __hash__(self):
        if self._hash is None:
            try:
                aux = hash(self._aux)
            except TypeError:
                # unhashable static data (a dict, as JAX accepts): equal treedefs still hash
                # alike, by the data's type; equality compares the data itself
                aux = hash(type(self._aux))
            self._hash = hash((self._type, aux, self._children))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        t = self._type
        if t is _LEAF:
            return "*"
        if t is _NoneType:
            return "None"
        inner = ", ".join(c._str() for c in self._children)
        if t is tuple:
            return f"({inner}{',' if len(self._children) == 1 else ''})"
        if t is list:
            return f"[{inner}]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}"
                                   for k, c in zip(self._aux, self._children)) + "}"
        if _is_namedtuple_type(t) and t not in _registry:
            return f"CustomNode(namedtuple[{t.__name__}], [{inner}])"
        return f"CustomNode({t.__name__}[{self._aux}], [{inner}])"

    def __reduce__(self):
        return (PyTreeDef, (self._type, self._aux, self._children))


def _aux_equal(a, b):
    if a is b:
        return True
    eq = a == b
    return eq if isinstance(eq, bool) else bool(eq)


_LEAF_DEF = PyTreeDef(_LEAF, None, ())
_NONE_DEF = PyTreeDef(_NoneType, None, ())


def _is_namedtuple_type(t):
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError(f"tree: a dict's keys must be sortable to flatten it (JAX's rule), got "
                         f"keys {list(d)!r:.200}") from None


# -- the built-in node kinds ----------------------------------------------------------------

def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_ordered_dict(d):
    keys = tuple(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_registry[tuple] = _NodeKind(lambda x: (x, None), lambda aux, ch: tuple(ch), False)
_registry[list] = _NodeKind(lambda x: (x, None), lambda aux, ch: list(ch), False)
_registry[dict] = _NodeKind(_flatten_dict, lambda keys, ch: dict(zip(keys, ch)), False)
_registry[_NoneType] = _NodeKind(lambda x: ((), None), lambda aux, ch: None, False)
_registry[collections.OrderedDict] = _NodeKind(
    _flatten_ordered_dict, lambda keys, ch: collections.OrderedDict(zip(keys, ch)), False)
_registry[collections.defaultdict] = _NodeKind(
    _flatten_defaultdict, lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)), False)

_NAMEDTUPLE = _NodeKind(lambda x: (x, None), None, False)


_leaf_types: set[type] = set()     # types seen to be leaves (cleared when a type registers)


def _kind(t):
    """The _NodeKind of type t, or None when values of type t are leaves."""
    if t in _leaf_types:
        return None
    kind = _registry.get(t)
    if kind is None:
        if _is_namedtuple_type(t):
            return _NAMEDTUPLE
        _leaf_types.add(t)
    return kind


def _children_of(kind, x):
    """``(children, aux)`` of node x, checking what a registered flatten function returns."""
    out = kind.flatten(x)
    if kind.custom:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"tree: the flatten function registered for {type(x).__name__} "
                            f"must return (children, aux_data), got {type(out).__name__}")
        children, aux = out
        try:
            return tuple(children), aux
        except TypeError:
            raise TypeError(f"tree: the flatten function registered for {type(x).__name__} "
                            f"returned children of type {type(children).__name__}, not an "
                            f"iterable") from None
    return out


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF_DEF
    t = type(x)
    # fast paths for the common containers (the transformations flatten on every call)
    if t is tuple or t is list:
        return PyTreeDef(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = _sorted_keys(x)
        return PyTreeDef(dict, keys, tuple([_flatten(x[k], leaves, is_leaf) for k in keys]))
    if t is _NoneType:
        return _NONE_DEF
    kind = _kind(t)
    if kind is None:
        leaves.append(x)
        return _LEAF_DEF
    children, aux = _children_of(kind, x)
    return PyTreeDef(t, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def _rebuild(td, it):
    t = td._type
    if t is _LEAF:
        return next(it)
    if t is _NoneType:
        return None
    children = [_rebuild(c, it) for c in td._children]
    if t is tuple:
        return tuple(children)
    if t is list:
        return children
    if t is dict:
        return dict(zip(td._aux, children))
    kind = _kind(t)
    if kind is _NAMEDTUPLE:
        return t(*children)
    if kind is None:
        raise ValueError(f"treedef: {t.__name__} is no longer a registered pytree node type")
    return kind.unflatten(td._aux, tuple(children))


# -- the public functions -------------------------------------------------------------------

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)`` of a pytree: the leaves as a list in a fixed order, and the
    structure.  ``is_leaf(x) -> bool``, if given, stops the descent at the subtrees it accepts
    (they become leaves).  ValueError for a dict whose keys do not sort."""
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The pytree of structure ``treedef`` with ``leaves`` (in flatten order) as its leaves;
    ValueError when the number of leaves differs from ``treedef.num_leaves``."""
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"treedef: expected a PyTreeDef (from tree_flatten or tree_structure), "
                        f"got {type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"leaves: expected {treedef.num_leaves} leaves for {treedef}, "
                         f"got {len(leaves)}")
    return _rebuild(treedef, iter(leaves))


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` as a list, in flatten order."""
    leaves: list[Any] = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The PyTreeDef of ``tree``."""
    return _flatten(tree, [], is_leaf)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The PyTreeDefs of the root's children (``treedef.children()``)."""
    return treedef.children()


def flatten_one_level(tree: Any) -> tuple[tuple[Any, ...], tuple[type, Any]] | None:
    """``(children, (node type, aux data))`` of the root node of ``tree``; None for a leaf."""
    t = type(tree)
    kind = _kind(t)
    if kind is None:
        return None
    children, aux = _children_of(kind, tree)
    return tuple(children), (t, aux)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied leafwise: a tree of ``tree``'s structure whose leaves are ``f(x, *ys)``,
    x a leaf of ``tree`` and ys the subtrees of ``rest`` at the same place.  Each of ``rest``
    must have ``tree``'s structure (or have it as a prefix: deeper subtrees are passed to f
    whole); ValueError naming both structures otherwise.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.tree_util.tree_map(lambda a, b: a + b, {"w": 1, "b": (2, 3)}, {"w": 10, "b": (20, 30)})
    {'b': (22, 33), 'w': 11}
    """
    leaves, td = tree_flatten(tree, is_leaf)
    if not rest:
        return _rebuild(td, iter([f(x) for x in leaves]))
    others = []
    for i, r in enumerate(rest):
        try:
            others.append(td.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(f"tree_map: argument {i + 2} (rest[{i}]) has structure "
                             f"{_structure_str(r)}, which does not match the first tree's "
                             f"structure {td}: {e}") from None
    return _rebuild(td, iter([f(*xs) for xs in zip(leaves, *others)]))


_NO_INITIAL = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, tree_leaves(tree)[, initializer])``; TypeError for a tree
    without leaves and no initializer."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        if not leaves:
            raise TypeError("tree_reduce: the tree has no leaves and no initializer was given")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy (True for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
                         unflatten_func: Callable[[Any, Iterable[Any]], Any]) -> None:
    """Make ``nodetype`` a pytree node: ``flatten_func(x) -> (children, aux_data)`` (children
    an iterable of subtrees, aux_data hashable static data compared with ==) and
    ``unflatten_func(aux_data, children) -> x``.  ValueError when the type is already a node
    (the built-in kinds included); TypeError for a non-type or non-callable argument."""
    if not isinstance(nodetype, type):
        raise TypeError(f"nodetype: expected a class, got {type(nodetype).__name__}")
    for name, fn in (("flatten_func", flatten_func), ("unflatten_func", unflatten_func)):
        if not callable(fn):
            raise TypeError(f"{name}: expected a function, got {type(fn).__name__}")
    if nodetype in _registry:
        raise ValueError(f"nodetype: {nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeKind(flatten_func, unflatten_func, True)
    _leaf_types.discard(nodetype)


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Register a dataclass (or any class built from keyword arguments) as a pytree node, as
    JAX's: ``data_fields`` are its children (arrays, subtrees), ``meta_fields`` static data
    (hashable, compared with ==, part of the tree structure); both None: read from the
    dataclass's fields, a field with ``metadata=dict(static=True)`` being meta, the others
    data, those in ``drop_fields`` and those with ``init=False`` left out.  Rebuilds with
    ``nodetype(**fields)``.  Returns ``nodetype`` (usable as a class decorator).

    Examples
    --------
    >>> import dataclasses
    >>> import nx_rune as nx
    >>> @nx.tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Scaled:
    ...     x: object
    ...     n: int = dataclasses.field(default=2, metadata=dict(static=True))
    >>> nx.tree_util.tree_leaves(Scaled(nx.ones(2)))
    [Tensor([1., 1.], dtype=float32)]
    >>> nx.grad(lambda s: nx.sum(s.x ** 2) * s.n)(Scaled(nx.ones(2))).x
    Tensor([4., 4.], dtype=float32)
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"nodetype: expected a class, got {type(nodetype).__name__}")
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither "
                        "(to read them from the dataclass's fields)")
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"nodetype: {nodetype.__name__} is not a dataclass; pass "
                            f"data_fields and meta_fields")
        dropped = set(drop_fields)
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in dropped]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data = tuple(data_fields)
    meta = tuple(meta_fields or ())
    for arg, names in (("data_fields", data), ("meta_fields", meta)):
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"{arg}: expected field names (str), got {names!r}")
    if set(data) & set(meta):
        raise ValueError(f"data_fields and meta_fields share {sorted(set(data) & set(meta))}")

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` with its ``tree_flatten(self) -> (children,
    aux_data)`` method and ``tree_unflatten(cls, aux_data, children)`` classmethod; returns
    ``cls``."""
    if not isinstance(cls, type):
        raise TypeError(f"cls: expected a class, got {type(cls).__name__}")
    for name in ("tree_flatten", "tree_unflatten"):
        if not callable(getattr(cls, name, None)):
            raise TypeError(f"cls: {cls.__name__} has no {name} method")
    unflatten = cls.tree_unflatten  # type: ignore[attr-defined]  # (checked just above)
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), unflatten)
    return cls


def _custom_registrations() -> list[tuple[type, Any, Any]]:
    """``[(type, flatten_func, unflatten_func)]`` of every registered class, in registration
    order (registrations are never removed, so a longer list only adds to a shorter one):
    what nx.distributed replays on its worker processes."""
    return [(t, k.flatten, k.unflatten) for t, k in _registry.items() if k.custom]


# -- prefix matching ------------------------------------------------------------------------

def _path_str(path):
    return "".join(path) or "the root"


def _up_to(td, tree, out, path):
    t = td._type
    if t is _LEAF:
        out.append(tree)
        return
    tt = type(tree)
    if tt is not t:
        raise ValueError(f"at {_path_str(path)}: expected {_node_name(t)}, got "
                         f"{_node_name(tt)}")
    if t is _NoneType:
        return
    children, aux = _children_of(_kind(t), tree)
    if len(children) != len(td._children) or not _aux_equal(aux, td._aux):
        what = "keys" if t in (dict, collections.OrderedDict) else "node data"
        if t in (tuple, list) or _kind(t) is _NAMEDTUPLE:
            raise ValueError(f"at {_path_str(path)}: expected a {t.__name__} of length "
                             f"{len(td._children)}, got length {len(children)}")
        raise ValueError(f"at {_path_str(path)}: {t.__name__} {what} differ: expected "
                         f"{_short(td._aux)}, got {_short(aux)}")
    keys = td._aux if t in (dict, collections.OrderedDict) else \
        td._aux[1] if t is collections.defaultdict else None
    for i, (c, sub) in enumerate(zip(td._children, children)):
        _up_to(c, sub, out, path + (f"[{keys[i]!r}]" if keys is not None else f"[{i}]",))


def _structure_str(tree):
    try:
        return repr(tree_structure(tree))
    except (TypeError, ValueError) as e:
        return f"<{type(tree).__name__} that does not flatten: {e}>"


def _node_name(t):
    if t is _LEAF:
        return "a leaf"
    if t is _NoneType:
        return "None"
    return f"a {t.__name__}" if _kind(t) is not None else f"a leaf of type {t.__name__}"


def _short(x):
    s = repr(x)
    return s if len(s) <= 120 else s[:117] + "..."


# -- Partial: a partial function that is a pytree ----------------------------------------------

class Partial(functools.partial):
    """JAX's ``jax.tree_util.Partial``: ``functools.partial`` that is a pytree, whose bound
    arguments are its leaves and its function the static part, so that it can be passed to and
    returned from transformed functions (``jit``, ``vmap``, ``grad``): ``Partial(f, x)(y)`` is
    ``f(x, y)``.  A Partial of a Partial (or of a functools.partial) keeps the inner one's
    arguments as leaves too."""

    def __new__(cls, func, *args, **kw):
        if not callable(func):
            raise TypeError(f"Partial: func must be callable, got {type(func).__name__}")
        if isinstance(func, functools.partial):
            # one level: the inner partial's arguments first, leaves like the outer's
            args = func.args + args
            kw = {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


def _unflatten_partial(func, children):
    args, keywords = children
    return Partial(func, *args, **keywords)


# a node kind of the module's own (as tuple's), not a user registration: nx.distributed does
# not ship it to its workers, whose nx_rune has it already
_registry[Partial] = _NodeKind(lambda p: ((p.args, p.keywords), p.func), _unflatten_partial,
                               False)


# -- key paths (JAX's tree_flatten_with_path and friends) -----------------------------------

class SequenceKey(NamedTuple):
    """The key of a tuple or list entry: its index ``idx``."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(NamedTuple):
    """The key of a dict (OrderedDict, defaultdict) entry: the dict key ``key``."""
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(NamedTuple):
    """The key of a namedtuple field: its ``name``."""
    name: str

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    """The key of a registered class's child: its index ``key`` among the children."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys: tuple) -> str:
    """A key path as text, e.g. ``"['w'][0]"``."""
    return "".join(str(k) for k in keys)


def _with_path(x, path, out, is_leaf):
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return
    one = flatten_one_level(x)
    if one is None:
        out.append((path, x))
        return
    children, (t, aux) = one
    if t in (dict, collections.OrderedDict):
        keys = [DictKey(k) for k in aux]
    elif t is collections.defaultdict:
        keys = [DictKey(k) for k in aux[1]]
    elif t in (tuple, list):
        keys = [SequenceKey(i) for i in range(len(children))]
    elif issubclass(t, tuple) and hasattr(t, "_fields") and not _kind(t).custom:
        keys = [GetAttrKey(f) for f in t._fields]
    else:
        keys = [FlattenedIndexKey(i) for i in range(len(children))]
    for k, c in zip(keys, children):
        _with_path(c, path + (k,), out, is_leaf)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """``([(key path, leaf), ...], treedef)``: the leaves in flatten order, each with the keys
    from the root down to it."""
    out: list = []
    _with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                     ) -> list[tuple[tuple, Any]]:
    """``[(key path, leaf), ...]`` in flatten order."""
    out: list = []
    _with_path(tree, (), out, is_leaf)
    return out


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """As :func:`tree_map`, with the leaf's key path as ``f``'s first argument:
    ``f(path, x, *ys)``."""
    return _map_with_path(f, tree, rest, is_leaf, "tree_map_with_path")


def _map_with_path(f, tree, rest, is_leaf, name):
    pairs, td = tree_flatten_with_path(tree, is_leaf)
    others = []
    for i, r in enumerate(rest):
        try:
            others.append(td.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(f"{name}: argument {i + 2} (rest[{i}]) does not match the "
                             f"first tree's structure {td}: {e}") from None
    return tree_unflatten(td, [f(p, x, *ys) for (p, x), *ys in zip(pairs, *others)])


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
