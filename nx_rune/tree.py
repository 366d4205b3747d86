"""``nx_rune.tree``: the pytree functions under JAX's short names (``jax.tree``):
``tree.map``, ``tree.leaves``, ``tree.structure``, ``tree.flatten``, ``tree.unflatten``,
``tree.reduce``, ``tree.reduce_associative``, ``tree.all``, ``tree.transpose``,
``tree.broadcast``, and the key-path forms
``tree.flatten_with_path``, ``tree.leaves_with_path``, ``tree.map_with_path``.

The functions are those of :mod:`nx_rune.tree_util` (same node types, same leaf order, same
errors); see there for what a pytree is.  A key path is a tuple of keys, one per node from the
root down to the leaf, as in JAX: :class:`SequenceKey` (``idx``) for a tuple or list entry,
:class:`DictKey` (``key``) for a dict, OrderedDict or defaultdict entry, :class:`GetAttrKey`
(``name``) for a namedtuple field and :class:`FlattenedIndexKey` (``key``, the child's index)
for a child of a registered class.
"""
from __future__ import annotations

from typing import Any, Callable

from nx_rune import tree_util as _tu
from nx_rune.tree_util import PyTreeDef

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose",
           "broadcast", "reduce_associative",
           "flatten_with_path", "leaves_with_path", "map_with_path", "SequenceKey", "DictKey",
           "GetAttrKey", "FlattenedIndexKey", "keystr"]

_NO_INITIAL = _tu._NO_INITIAL


def map(f: Callable[..., Any], tree: Any, *rest: Any,  # noqa: A001  (JAX's name)
        is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied to the leaves: a tree of ``tree``'s structure whose leaves are
    ``f(x, *ys)``, x a leaf of ``tree`` and ys the subtrees of ``rest`` at the same place
    (:func:`nx_rune.tree_util.tree_map`)."""
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` as a list, in flatten order."""
    return _tu.tree_leaves(tree, is_leaf)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The PyTreeDef (structure) of ``tree``."""
    return _tu.tree_structure(tree, is_leaf)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
            ) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)`` of ``tree``; :func:`unflatten` is its inverse."""
    return _tu.tree_flatten(tree, is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The pytree of structure ``treedef`` with ``leaves`` (in flatten order) as its leaves."""
    return _tu.tree_unflatten(treedef, leaves)


def reduce(function: Callable[[Any, Any], Any], tree: Any,  # noqa: A001
           initializer: Any = _NO_INITIAL, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, leaves(tree)[, initializer])``."""
    return _tu.tree_reduce(function, tree, initializer, is_leaf)


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:  # noqa: A001
    """Whether every leaf of ``tree`` is truthy (True for a tree without leaves)."""
    return _tu.tree_all(tree, is_leaf)


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
              pytree_to_transpose: Any) -> Any:
    """Swap the outer and inner levels of a tree of trees, as ``jax.tree.transpose``.

    ``pytree_to_transpose`` has structure ``outer_treedef`` with a tree of structure
    ``inner_treedef`` at each outer leaf; the result has structure ``inner_treedef`` with a
    tree of structure ``outer_treedef`` at each inner leaf.  ``inner_treedef=None``: the
    structure of the first outer leaf.  ValueError when a part does not have its structure.
    Example: ``transpose(structure([0, 0]), structure((0, 0)), [(1, 2), (3, 4)])`` is
    ``([1, 3], [2, 4])``.
    """
    for name, td in (("outer_treedef", outer_treedef), ("inner_treedef", inner_treedef)):
        if not (td is None and name == "inner_treedef") and not isinstance(td, PyTreeDef):
            raise TypeError(f"transpose: {name}: expected a PyTreeDef, got {type(td).__name__}")
    try:
        outer = outer_treedef.flatten_up_to(pytree_to_transpose)
    except ValueError as e:
        raise ValueError(f"transpose: pytree_to_transpose does not have outer_treedef's "
                         f"structure {outer_treedef}: {e}") from None
    if inner_treedef is None:
        if not outer:
            raise ValueError("transpose: inner_treedef=None needs at least one outer leaf")
        inner_treedef = structure(outer[0])
    columns = []
    for i, sub in enumerate(outer):
        try:
            columns.append(inner_treedef.flatten_up_to(sub))
        except ValueError as e:
            raise ValueError(f"transpose: outer leaf {i} does not have inner_treedef's "
                             f"structure {inner_treedef}: {e}") from None
    rows = [unflatten(outer_treedef, [col[j] for col in columns])
            for j in range(inner_treedef.num_leaves)]
    return unflatten(inner_treedef, rows)


def reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                       identity: Any = _NO_INITIAL,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The leaves combined with the associative ``operation`` as a balanced tree of calls
    (halves first, as JAX's): the result of ``reduce`` up to the order of the combinations.
    ``identity`` is the result for a tree without leaves (TypeError when it is not given)."""
    def combine(seq):
        if len(seq) == 1:
            return seq[0]
        half = len(seq) // 2
        return operation(combine(seq[:half]), combine(seq[half:]))
    seq = leaves(tree, is_leaf)
    if not seq:
        if identity is _NO_INITIAL:
            raise TypeError("reduce_associative: the tree has no leaves: give identity")
        return identity
    return combine(seq)


def broadcast(prefix_tree: Any, full_tree: Any,
              is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """A tree of ``full_tree``'s structure whose leaves under each leaf of ``prefix_tree``
    (a prefix of full_tree's structure) are that leaf; ValueError when it is not a prefix."""
    prefix_leaves, prefix_def = flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(f"broadcast: prefix_tree's structure {prefix_def} is not a prefix of "
                         f"full_tree's: {e}") from None
    out: list = []
    for x, sub in zip(prefix_leaves, subtrees):
        out.extend([x] * structure(sub).num_leaves)
    return unflatten(structure(full_tree), out)


# -- key paths (nx_rune.tree_util's, under jax.tree's short names) -------------------------------

SequenceKey = _tu.SequenceKey
DictKey = _tu.DictKey
GetAttrKey = _tu.GetAttrKey
FlattenedIndexKey = _tu.FlattenedIndexKey
keystr = _tu.keystr


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """``([(key path, leaf), ...], treedef)``: the leaves in flatten order, each with the keys
    from the root down to it."""
    return _tu.tree_flatten_with_path(tree, is_leaf)


def leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                     ) -> list[tuple[tuple, Any]]:
    """``[(key path, leaf), ...]`` in flatten order."""
    return _tu.tree_leaves_with_path(tree, is_leaf)


def map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                  is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """As :func:`map`, with the leaf's key path as ``f``'s first argument:
    ``f(path, x, *ys)``."""
    return _tu._map_with_path(f, tree, rest, is_leaf, "map_with_path")


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
