"""Random programs: small DAGs over the op table, written out as Python source.

A program is ``def f(x0, ..., [a], [s], [key]): ...; return (v.., ...)`` with
- tensor arguments ``x0..`` (float32 or float64; laid out C-contiguous, transposed, at an
  offset inside a larger buffer via ``as_strided(t[4:], ...)``, with a negative step, or at a
  byte offset that is not a multiple of the item size), drawn at hard points (ties, zeros,
  equal arguments) or anywhere;
- ``a``: a Python scalar passed as an ordinary (weak-typed) argument; ``s``: a static argument
  (1, 1.0, 2 or 2.0); ``key``: an ``nx.random`` key;
- captured constants ``C0..`` (tensors the function closes over);
- reused values (``d * d``, ``maximum(x, x)``), several outputs, views, in-place writes
  (``v += w``, ``v[0] = ...``, ``.at[].set``) into values the program made itself, and
  ``lax.cond``/``fori_loop``/``scan``/``while_loop``.

``generate(src, skip)`` draws one from a choice source (see source.py); ``skip`` is a set of
family/feature names to leave out.
"""
import dataclasses

import numpy as np

from .ops import OPS, _bshape

SHAPES = [(3,), (2, 3), (4,), (3, 4), (), (2, 2), (4, 3), (5, 4), (1, 3)]
VALUE_KINDS = ["normal", "ties", "zeros", "same"]
LAYOUTS = ["c", "T", "offset", "neg", "misaligned"]


@dataclasses.dataclass
class InputSpec:
    shape: tuple
    values: str
    layout: str


@dataclasses.dataclass
class Program:
    dtype: str
    x64: bool
    inputs: list
    scalar: object
    static: object
    key: bool
    consts: list
    body: list
    outputs: list
    line_tags: list
    exact: bool
    seed: int
    choices: list = None

    @property
    def tags(self):
        """Features of the program: its inputs' kinds and layouts, dtype and modes, and the ops
        and statements of its body (a shrunk program has fewer)."""
        t = {"dtype:" + self.dtype}
        for spec in self.inputs:
            t.add("values:" + spec.values)
            t.add("layout:" + spec.layout)
        if self.x64:
            t.add("x64")
        if self.scalar is not None:
            t.add("scalar_arg")
        if self.static is not None:
            t.add("static")
        if self.key:
            t.add("random")
        for lt in self.line_tags:
            t |= lt
        return frozenset(t)

    @property
    def params(self):
        ps = [f"x{i}" for i in range(len(self.inputs))]
        if self.scalar is not None:
            ps.append("a")
        if self.static is not None:
            ps.append("s")
        if self.key:
            ps.append("key")
        return ps

    def source(self):
        lines = [f"def f({', '.join(self.params)}):"]
        lines += ["    " + ln for ln in self.body]
        lines.append(f"    return ({', '.join(self.outputs)},)")
        return "\n".join(lines)

    def describe(self):
        """The program as a self-contained script (the reproducer)."""
        out = ["import numpy as np", "import nx_rune as nx", "from nx_rune import lax", ""]
        if any("np_shape(" in ln for ln in self.body):
            out[-1:-1] = ["from tests.program_fuzz.ops import np_shape"]
        if self.x64:
            out.append("# run with nx.enable_x64() active")
        out.append(f"# inputs: {[(s.shape, s.values, s.layout) for s in self.inputs]} {self.dtype}"
                   f", value seed {self.seed}")
        for i, shape in enumerate(self.consts):
            out.append(f"C{i} = nx.asarray(np.random.default_rng({self.seed + 1000 + i})"
                       f".uniform(-2, 2, {shape!r}).astype(np.{self.dtype}))")
        if self.scalar is not None:
            out.append(f"# a = {self.scalar!r} (Python scalar argument)")
        if self.static is not None:
            out.append(f"# s = {self.static!r} (static argument)")
        out.append(self.source())
        return "\n".join(out)


@dataclasses.dataclass
class Val:
    name: str
    shape: tuple
    root: str          # 'arg', 'const', 'ro' (not writable) or 'f<n>' (memory the program made)
    traced: bool = True   # depends on a tensor argument (so a transformation traces it)


class _Gen:
    def __init__(self, src, skip):
        self.src = src
        self.skip = skip
        self.vals = []
        self.body = []
        self.line_tags = []
        self.tags = set()
        self.consts = []
        self.exact = True
        self.n = 0
        self.nfresh = 0
        self.extra_outputs = []

    def new_name(self):
        self.n += 1
        return f"v{self.n}"

    def new_const(self, shape):
        self.consts.append(tuple(shape))
        self.tags.add("const")
        return f"C{len(self.consts) - 1}"

    def pick(self, pred=lambda v: True):
        """An operand: recent values more often (so chains form), any value sometimes."""
        cands = [v for v in self.vals if pred(v)]
        if not cands:
            return None
        if self.src.chance(60):
            return cands[-1 - self.src.below(min(3, len(cands)))]
        return cands[self.src.below(len(cands))]

    def emit(self, line):
        """One statement; the tags added since the previous one are its tags."""
        self.body.append(line)
        self.line_tags.append(frozenset(self.tags))
        self.tags = set()

    def add_val(self, expr, shape, root):
        name = self.new_name()
        self.emit(f"{name} = {expr}")
        v = Val(name, tuple(shape), root)
        self.vals.append(v)
        return v

    def fresh(self):
        self.nfresh += 1
        return f"f{self.nfresh}"


def _ok(skip, *names):
    return not any(n in skip for n in names)


def generate(src, skip=frozenset()):
    skip = set(skip)
    g = _Gen(src, skip)
    x64 = _ok(skip, "x64") and src.chance(45)
    # float64 arrays exist with x64 off too (NumPy arrays keep their dtype): weak-typed
    # Python scalars must then stay float64-precise under jit as they are eagerly
    dtype = "float64" if src.chance(80 if x64 else 20) else "float32"
    g.dtype = dtype
    base = SHAPES[src.below(len(SHAPES))]
    n_in = 1 + src.below(3)
    inputs = []
    for i in range(n_in):
        kind = src.below(4) if base else 0
        shape = {0: base, 1: base, 2: base[-1:], 3: base[::-1]}[kind]
        values = src.weighted([(5, "normal"), (3, "ties"), (2, "zeros"), (2, "same")])
        if values == "same" and (i == 0 or inputs[0].shape != shape):
            values = "ties"
        layout = src.weighted([(6, "c"), (2, "T"), (2, "offset"), (1, "neg"), (1, "misaligned")])
        if layout in ("T", "neg") and not shape:
            layout = "c"
        if layout in ("offset", "misaligned") and "layout" in skip:
            layout = "c"
        inputs.append(InputSpec(shape, values, layout))
        g.vals.append(Val(f"x{i}", shape, "arg"))
    scalar = (src.choice([0.1, 3, 1e300, -1.5, 2.5, 1])
              if _ok(skip, "scalar_arg") and src.chance(20) else None)
    static = src.choice([1, 1.0, 2, 2.0]) if _ok(skip, "static") and src.chance(15) else None
    key = _ok(skip, "random") and src.chance(20)
    g.has_scalar, g.has_static, g.has_key = scalar is not None, static is not None, key

    ops = [op for op in OPS if _ok(skip, op.family, op.tag)
           and (op.family != "random" or key)
           and (op.family != "static" or static is not None)
           and (op.family != "scalar_arg" or scalar is not None)]
    # a program with a static or scalar argument uses it at once (else it rarely would)
    for fam in ("static", "scalar_arg"):
        fops = [op for op in ops if op.family == fam]
        if fops:
            op = fops[src.below(len(fops))]
            res = op.build(g, g.vals[0])
            if res is not None:
                g.tags.update({op.tag, "family:" + fam})
                if op.tag == "static_out":
                    name = g.new_name()
                    g.emit(f"{name} = {res[0]}")
                    g.extra_outputs.append(name)
                else:
                    g.add_val(res[0], res[1], g.fresh())
    n_ops = 2 + src.below(11)
    steps = 0
    while steps < n_ops:
        steps += 1
        what = src.weighted([(20, "op"), (3, "inplace"), (2, "control"), (1, "layer")])
        if what == "layer" and _ok(skip, "matmul", "layer"):
            if _layer(g):
                g.line_tags[-1] = g.line_tags[-1] | g.tags
                g.tags = set()
                continue
        if what == "inplace" and _ok(skip, "inplace"):
            if _inplace(g):
                g.line_tags[-1] = g.line_tags[-1] | g.tags
                g.tags = set()
                continue
        if what == "control" and _ok(skip, "control"):
            if _control(g):
                g.line_tags[-1] = g.line_tags[-1] | g.tags
                g.tags = set()
                continue
        g.tags = set()
        op = ops[src.below(len(ops))]
        if op.family in _BOOST and src.chance(50):
            # matmul and captured constants are one entry each among many: drawn more often
            op = _BOOST[op.family](ops, src) or op
        operands = [g.pick() for _ in range(op.arity)]
        if op.arity == 2 and src.chance(15):
            operands[1] = operands[0]           # one value as both operands
        res = op.build(g, *operands)
        if res is None:
            continue
        expr, shape = res[0], res[1]
        if op.tag == "static_out":
            # its dtype is the static's type (int32 for 1): an output only, never an operand
            g.tags.update({op.tag, "family:" + op.family})
            name = g.new_name()
            g.emit(f"{name} = {expr}")
            g.extra_outputs.append(name)
            continue
        if len(res) == 3:
            view_of = res[2]
            root = view_of.root
        elif op.family == "view":
            root = "ro"
        else:
            root = g.fresh()
        g.tags.add(op.tag)
        g.tags.add("family:" + op.family)
        v = g.add_val(expr, shape, root)
        v.traced = any(o.traced for o in operands)
        g.exact = g.exact and op.exact
    computed = [v for v in g.vals if not v.name.startswith("x")]
    if not computed:
        computed = [g.add_val(f"{g.vals[0].name} + 0.0", g.vals[0].shape, g.fresh())]
    # several outputs: the last value, others the program made (a value that is both an
    # output and an operand of a later fused op is where buffer planning goes wrong), now and
    # then an argument or a view of one (aliasing)
    outs = [computed[-1].name] + g.extra_outputs[:1]
    for v in computed[-2::-1]:
        if len(outs) < 4 and src.chance(35):
            outs.append(v.name)
    if src.chance(10):
        outs.append(g.vals[src.below(len(g.vals))].name)
    outs = list(dict.fromkeys(outs))
    return Program(dtype, x64, inputs, scalar, static, key, g.consts, g.body, outs, g.line_tags,
                   g.exact, seed=src.below(2**20), choices=src.record)


def _layer(g):
    """A dense layer as research code writes it: the product read by two consumers (its
    pre-activation plus a bias, and an activation of it), each usable later."""
    src = g.src
    a = g.pick(lambda v: len(v.shape) == 2)
    if a is None:
        return False
    b = g.pick(lambda v: len(v.shape) == 2 and v.shape[0] == a.shape[1])
    if b is None:
        b_expr, n = f"{a.name}.T", a.shape[0]
    else:
        b_expr, n = b.name, b.shape[1]
    bias = g.pick(lambda v: v.shape in ((n,), (a.shape[0], n)))
    h = g.add_val(f"{a.name} @ {b_expr}", (a.shape[0], n), g.fresh())
    act = src.choice(["nx.tanh", "nx.relu", "nx.sigmoid", "nx.exp"])
    first = [f"{h.name} + {bias.name if bias is not None else '0.5'}", f"{act}({h.name})"]
    if src.chance(50):
        first.reverse()
    for expr in first:
        g.add_val(expr, h.shape, g.fresh())
    g.tags.update({"layer", "matmul"})
    if act == "nx.relu":
        g.tags.add("relu")      # a kink: the finite-difference checks treat it as relu's
    g.exact = False
    return True


def _boost(*tags):
    def pick(ops, src):
        cands = [op for op in ops if op.tag in tags]
        return cands[src.below(len(cands))] if cands else None
    return pick


# a draw of an op of one of these families is turned, half the time, into one of the listed ops
_BOOST = {"unary": _boost("matmul", "const"), "scalar": _boost("matmul", "square_self")}


def _inplace(g):
    src = g.src
    # a target the program made and that depends on the arguments: a concrete tensor refuses
    # a traced value in place under a transformation (README), which eager cannot show
    target = g.pick(lambda v: v.root.startswith("f") and v.shape and v.traced)
    if target is None:
        return False
    kind = src.below(5)
    t = target.name
    if kind == 0:
        other = g.pick(lambda v: _bshape(target.shape, v.shape) == target.shape)
        if other is None:
            return False
        g.emit(f"{t} += {other.name}")
        g.tags.add("inplace:iadd")
    elif kind == 1:
        g.emit(f"{t} *= 2")
        g.tags.add("inplace:imul")
    elif kind == 2:
        row = g.pick(lambda v: v.shape == target.shape[1:])
        val = row.name if row is not None and src.chance(50) else "0.25"
        g.emit(f"{t}[0] = {val}")
        g.tags.add("inplace:setitem")
    elif kind == 3:
        g.add_val(f"{t}.at[0].set(0.25)", target.shape, g.fresh())
        g.tags.add("inplace:at_set")
        return True
    else:
        g.add_val(f"{t}.at[-1].add(1.5)", target.shape, g.fresh())
        g.tags.add("inplace:at_add")
        return True
    g.tags.add("inplace")
    return True


_BODY = ["nx.sin({c})", "{c} * 0.9 + nx.tanh({o})", "{c} * {c}", "nx.maximum({c}, {o})",
         "{c} + {o} * 0.5", "nx.logaddexp({c}, {o})", "nx.sqrt({c} * {c} + 0.5)"]


def _elementwise_body(g, c, o):
    return g.src.choice(_BODY).format(c=c, o=o)


def _control(g):
    src = g.src
    kind = src.below(6)
    x = g.pick()
    if x is None:
        return False
    if kind == 5:
        # the branch not taken is NaN (log of a negative): vmap turns the cond into a select,
        # whose derivative must still be the taken branch's (JAX: 0 from the other)
        g.add_val(f"lax.cond(nx.min({x.name}) > 0, lambda p: nx.log(p), lambda p: p * p, "
                  f"{x.name})", x.shape, g.fresh())
        g.tags.update({"control:cond_nan", "control"})
        g.exact = False
        return True
    other = g.pick(lambda v: _bshape(x.shape, v.shape) == x.shape) or x
    if kind == 0:
        pred = src.choice([f"nx.sum({x.name}) > 0", f"nx.max({other.name}) > 0.5"])
        t = _elementwise_body(g, "p", "q")
        f = _elementwise_body(g, "p", "q")
        g.add_val(f"lax.cond({pred}, lambda p, q: {t}, lambda p, q: {f}, {x.name}, {other.name})",
                  x.shape, g.fresh())
        g.tags.add("control:cond")
    elif kind == 1:
        body = _elementwise_body(g, "c", other.name)
        n = src.choice([2, 3, 0])
        g.add_val(f"lax.fori_loop(0, {n}, lambda i, c: {body}, {x.name})", x.shape, g.fresh())
        g.tags.add("control:fori")
    elif kind == 2:
        init = src.choice(["0.0", "0"])
        g.add_val(f"lax.fori_loop(0, 2, lambda i, c: c + nx.sum({x.name}), {init})", (),
                  g.fresh())
        g.tags.add("control:fori_pyinit")
    elif kind == 3:
        if not x.shape:
            return False
        body = _elementwise_body(g, "c", "r")
        name = g.new_name()
        ys = g.new_name()
        g.emit(f"{name}, {ys} = lax.scan(lambda c, r: ({body}, c * r), {x.name}[0], "
                      f"{x.name})")
        g.vals.append(Val(name, x.shape[1:], g.fresh()))
        g.vals.append(Val(ys, x.shape, g.fresh()))
        g.tags.add("control:scan")
    else:
        body = _elementwise_body(g, "c[1]", other.name)
        g.add_val(f"lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, {body}), "
                  f"(0, {x.name}))[1]", x.shape, g.fresh())
        g.tags.add("control:while")
    g.tags.add("control")
    g.exact = False
    return True


# ---------------------------------------------------------------------------- input values
def input_values(prog, batch=None):
    """The float64 values of each tensor argument (with a leading batch axis when batch)."""
    rng = np.random.default_rng(prog.seed)
    vals = []
    for spec in prog.inputs:
        shape = ((batch,) if batch else ()) + spec.shape
        if spec.values == "ties":
            v = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], shape)
        elif spec.values == "zeros":
            v = rng.uniform(-2, 2, shape) * (rng.random(shape) < 0.6)
        elif spec.values == "same":
            v = vals[0].copy()
        else:
            v = rng.uniform(-2, 2, shape)
        vals.append(np.asarray(v, np.float64))
    return vals


def const_values(prog):
    return [np.random.default_rng(prog.seed + 1000 + i).uniform(-2, 2, shape)
            for i, shape in enumerate(prog.consts)]
