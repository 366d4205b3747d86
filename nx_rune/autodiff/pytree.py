"""Pytrees: tuples, lists, dicts and None nested arbitrarily, with arrays (or numbers) as leaves.

``tree_flatten(tree) -> (leaves, treedef)`` and ``tree_unflatten(treedef, leaves)`` are inverse;
dict keys are visited in sorted order (insertion order when keys do not sort), as in JAX.
Namedtuples keep their type.  None is an empty subtree, not a leaf.
"""

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "tree_flatten_up_to", "TreeDef"]

_LEAF = "*"


class TreeDef:
    """The structure of a pytree: node kind, static data and children's TreeDefs."""
    __slots__ = ("kind", "data", "children", "num_leaves")

    def __init__(self, kind, data, children, num_leaves):
        self.kind, self.data, self.children, self.num_leaves = kind, data, children, num_leaves

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self.kind == other.kind
                and self.data == other.data and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.data, self.children))

    def __repr__(self):
        if self.kind is _LEAF:
            return "*"
        if self.kind is None:
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.data, self.children)) + "}"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        return f"{self.kind.__name__}({inner})"


_LEAF_DEF = TreeDef(_LEAF, None, (), 1)
_NONE_DEF = TreeDef(None, None, (), 0)


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:
        return tuple(d)


def _flatten(tree, leaves):
    t = type(tree)
    if tree is None:
        return _NONE_DEF
    if t is tuple or t is list or (isinstance(tree, tuple) and hasattr(tree, "_fields")):
        children = tuple(_flatten(c, leaves) for c in tree)
        return TreeDef(t, None, children, sum(c.num_leaves for c in children))
    if isinstance(tree, dict):
        keys = _sorted_keys(tree)
        children = tuple(_flatten(tree[k], leaves) for k in keys)
        return TreeDef(dict, keys, children, sum(c.num_leaves for c in children))
    leaves.append(tree)
    return _LEAF_DEF


def tree_flatten(tree):
    """``(leaves, treedef)`` of a pytree; leaves in a fixed, deterministic order."""
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _unflatten(td, it):
    kind = td.kind
    if kind is _LEAF:
        return next(it)
    if kind is None:
        return None
    children = [_unflatten(c, it) for c in td.children]
    if kind is dict:
        return dict(zip(td.data, children))
    if kind is tuple or kind is list:
        return kind(children)
    return kind(*children)  # a namedtuple


def tree_unflatten(treedef, leaves):
    """The pytree of structure ``treedef`` with ``leaves`` (in flatten order) as its leaves."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"leaves: expected {treedef.num_leaves} leaves for {treedef}, "
                         f"got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_map(f, tree, *rest):
    """``f`` applied leafwise; ``rest`` must have the structure of ``tree``."""
    leaves, td = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r)
        if rtd != td:
            raise ValueError(f"tree_map: structures differ: {td} and {rtd}")
        others.append(rl)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def tree_flatten_up_to(treedef, tree):
    """The leaves of ``tree`` read with ``treedef``'s structure: a None where treedef has a
    subtree stands for all-None leaves (a zero cotangent or tangent); lists and tuples are
    interchangeable.  ValueError when the structures differ otherwise."""
    out = []
    _up_to(treedef, tree, out)
    return out


def _up_to(td, tree, out):
    kind = td.kind
    if kind is _LEAF:
        out.append(tree)
        return
    if tree is None:
        out.extend([None] * td.num_leaves)
        return
    if kind is None:
        raise ValueError(f"expected None, got {type(tree).__name__}")
    if kind is dict:
        if not isinstance(tree, dict) or set(tree) != set(td.data):
            raise ValueError(f"expected a dict with keys {list(td.data)}, got {tree!r:.80}")
        for k, c in zip(td.data, td.children):
            _up_to(c, tree[k], out)
        return
    if not isinstance(tree, (tuple, list)) or len(tree) != len(td.children):
        raise ValueError(f"expected a sequence of {len(td.children)} entries matching {td}, "
                         f"got {type(tree).__name__}")
    for c, sub in zip(td.children, tree):
        _up_to(c, sub, out)
