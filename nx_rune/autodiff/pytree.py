"""How the transformations read tangent and cotangent trees given by the user.

Pytrees themselves are ``nx_rune.tree_util`` (one implementation, one registry of node types);
the names are re-exported here for code that imported them from this module.  What is
autodiff's own is :func:`tree_flatten_up_to`'s leniency: a None where the structure has a
subtree stands for a zero tangent or cotangent, and lists and tuples (namedtuples included) are
interchangeable, so ``vjp_fn((ct,))`` and ``vjp_fn([ct])`` both work.
"""
from nx_rune.tree_util import (
    PyTreeDef,
    flatten_one_level,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "tree_flatten_up_to", "PyTreeDef"]


def tree_flatten_up_to(treedef, tree):
    """The leaves of ``tree`` read with ``treedef``'s structure: a None where treedef has a
    subtree stands for all-None leaves (a zero cotangent or tangent); lists and tuples are
    interchangeable.  ValueError when the structures differ otherwise."""
    out = []
    _up_to(treedef, tree, out)
    return out


def _sequence_type(t):
    return t is tuple or t is list or (issubclass(t, tuple) and hasattr(t, "_fields"))


def _up_to(td, tree, out):
    data = td.node_data()
    if data is None:                     # a leaf of the structure: take the subtree whole
        out.append(tree)
        return
    if tree is None:
        out.extend([None] * td.num_leaves)
        return
    node_type, aux = data
    if node_type is type(None):
        raise ValueError(f"expected None, got {type(tree).__name__}")
    kids = td.children()
    if type(tree) is not node_type and _sequence_type(node_type) and _sequence_type(type(tree)):
        children = tuple(tree)           # list <-> tuple <-> namedtuple
    else:
        one = flatten_one_level(tree)
        if one is None or one[1][0] is not node_type:
            raise ValueError(f"expected a {node_type.__name__} matching {td}, got "
                             f"{type(tree).__name__}")
        children, (_, tree_aux) = one
        if tree_aux != aux:
            what = "keys" if issubclass(node_type, dict) else "node data"
            raise ValueError(f"expected a {node_type.__name__} with {what} {aux!r:.100}, got "
                             f"{tree_aux!r:.100}")
    if len(children) != len(kids):
        raise ValueError(f"expected a sequence of {len(kids)} entries matching {td}, got "
                         f"{type(tree).__name__} of length {len(children)}")
    for c, sub in zip(kids, children):
        _up_to(c, sub, out)
