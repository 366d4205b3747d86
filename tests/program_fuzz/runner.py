"""Running one program eagerly and under every transformation, and checking the results.

Each *mode* is one composition of transformations (``jit(grad(jit))``, ``vmap(jit)``, ...)
with the eager computation it must equal:

- forward modes (``jit``, ``jit(jit)``, ``jit(wrap(jit))``, ``jit:twin-x64``,
  ``jit:twin-static`` (the trace cache warmed with the other x64 mode or the static's twin
  1.0/1 first), ``jit:donate``,
  ``jit:capture``, ``vmap``, ``vmap(jit)``, ``jit(vmap)``, ``jit(vmap(jit))``): the eager outputs
  (per example for vmap), bit for bit when the program is made of exact ops (README: jit's
  elementwise arithmetic is NumPy's bit for bit), within a float tolerance otherwise; dtypes,
  shapes and memory sharing with the arguments as eager's;
- reverse modes (``grad``, ``jit(grad)``, ``grad(jit)``, ``jit(grad(jit))``, ``vjp``,
  ``vjp(jit)``, ``jit(vjp)``, ``vmap(grad)``, ``grad(vmap)``, ``vmap(grad(jit))``,
  ``jit(vmap(grad))``, ``vmap(jit(grad))``, ``grad(jit(vmap))``) of the loss
  ``sum_k sum(W_k * out_k)``: eager ``grad``, itself checked against float64 central
  differences (``grad``);
- forward-mode (``jvp``, ``jit(jvp)``, ``jvp(jit)``, ``vmap(jvp)``, ``jvp(vmap)``) and second
  order (``hvp`` = jvp of grad, ``jit(hvp)``, ``hvp(jit)``, ``grad(grad)``-like ``vjp(grad)``):
  eager ``jvp``/``hvp``, themselves checked against central differences;
- ``checkify``, ``jit(checkify)``, ``vmap(checkify)``, ``grad(checkify)``: the outputs (and
  gradients) of ``checkify(f, errors=float_checks | user_checks)``, which must be f's.

An exception is accepted only where eager raises the same class, or where the documentation
says the transformation refuses the program (``float()`` of a traced value, reverse mode
through ``while_loop`` under a trace).
"""
import contextlib
import functools
import re

import numpy as np

import nx_rune as nx
from nx_rune import errors as E
from nx_rune.experimental import checkify

from .compare import Mismatch, compare, fd_check, to_numpy
from .generator import const_values, input_values
from .ops import OPS_BY_TAG, np_shape

BATCH = 2


class Invalid(Exception):
    """The program itself fails eagerly: nothing to compare."""


def _is_refusal(prog, mode, exc):
    """Exceptions the documentation allows a transformation to raise for this program."""
    msg = str(exc)
    if "family:concrete" in prog.tags and isinstance(exc, (TypeError, E.ConcretizationTypeError,
                                                           RuntimeError, ValueError)):
        return True          # float()/item() of a traced value: refused under jit/vmap (and grad)
    if ("control:while" in prog.tags and isinstance(exc, TypeError)
            and "not reverse-mode differentiable" in msg):
        return True
    return False


class Ctx:
    def __init__(self, prog, exact=True):
        self.prog = prog
        self.exact = exact and prog.exact
        self.code = compile(prog.source(), "<program>", "exec")
        self.dt = np.dtype(prog.dtype)
        self.vals = input_values(prog)
        self.bvals = input_values(prog, batch=BATCH)
        self.consts = const_values(prog)
        self.n_in = len(prog.inputs)
        self.params = prog.params
        self.static_idx = self.params.index("s") if "s" in self.params else None
        self.argnums = tuple(range(self.n_in))
        self._refs = {}
        self.weights = None
        self.nudging = False

    # ------------------------------------------------------------------ building blocks
    def x64(self, on=None):
        return nx.enable_x64(self.prog.x64 if on is None else on)

    def make_fn(self, consts=None):
        ns = {"nx": nx, "lax": nx.lax, "np": np, "np_shape": np_shape}
        cs = self.consts if consts is None else consts
        for i, c in enumerate(cs):
            ns[f"C{i}"] = nx.asarray(np.asarray(c, self.dt).copy())
        exec(self.code, ns)
        return ns["f"], ns

    def tensor(self, arr64, layout):
        arr = np.asarray(arr64, self.dt)
        shape = arr.shape
        if layout == "T" and arr.ndim >= 2:
            return nx.transpose(nx.asarray(np.ascontiguousarray(arr.transpose())))
        if layout == "neg" and arr.ndim >= 1:
            return nx.asarray(np.ascontiguousarray(arr[::-1]))[::-1]
        if layout == "offset" and arr.size >= 1:
            big = np.zeros(arr.size + 4, self.dt)
            big[4:] = arr.reshape(-1)
            strides = tuple(int(s // self.dt.itemsize) for s in np.zeros(shape, self.dt).strides)
            return nx.as_strided(nx.asarray(big)[4:], shape, strides, 0)
        if layout == "misaligned" and arr.size >= 1:
            # an ndarray at a byte offset (not a multiple of the item size) inside a tensor
            base = nx.zeros((arr.size + 2,), self.dt)
            isz = self.dt.itemsize
            raw = np.asarray(base).view(np.uint8)[2: 2 + arr.size * isz]
            a = raw.view(self.dt).reshape(shape)
            a[...] = arr
            return nx.asarray(a)
        return nx.asarray(arr.copy())

    def args(self, layouts=True):
        ts = [self.tensor(v, s.layout if layouts else "c")
              for v, s in zip(self.vals, self.prog.inputs)]
        return ts + self.rest()

    def rest(self, static=None):
        r = []
        if self.prog.scalar is not None:
            r.append(self.prog.scalar)
        if self.prog.static is not None:
            r.append(self.prog.static if static is None else static)
        if self.prog.key:
            r.append(nx.random.key(self.prog.seed % 1000))
        return r

    def example_args(self, b):
        ts = [self.tensor(v[b], "c") for v in self.bvals]
        return ts + self.rest()

    def batched_args(self):
        ts = [self.tensor(v, s.layout) for v, s in zip(self.bvals, self.prog.inputs)]
        return ts + self.rest()

    def in_axes(self):
        return tuple([0] * self.n_in + [None] * (len(self.params) - self.n_in))

    def jit(self, fn, **kw):
        if self.static_idx is not None:
            kw["static_argnums"] = self.static_idx
        return nx.jit(fn, **kw)

    def loss(self, f):
        W = self.weights

        def L(*args):
            outs = f(*args)
            tot = 0.0
            for o, w in zip(outs, W):
                if w is not None:
                    tot = tot + nx.sum(o * nx.asarray(w, dtype=o.dtype))
            return tot
        return L

    def tangents(self, batch=False):
        rng = np.random.default_rng(self.prog.seed + 11)
        vals = self.bvals if batch else self.vals
        tans = [rng.uniform(-1, 1, v.shape) for v in vals]
        if not self.nudging:
            return tans
        return [self._nudge(t, 1000 * self.nudging + k + 101) for k, t in enumerate(tans)]

    def _nudge(self, arr, salt):
        """``arr`` with each element moved by 4 units in the last place of the program's
        dtype, up or down at random (``nudged``)."""
        a = np.asarray(arr, np.float64)
        if a.dtype.kind != "f" or not a.size:
            return arr
        sign = np.random.default_rng(self.prog.seed + salt).choice([-1.0, 1.0], a.shape)
        return a * (1 + 4 * float(np.finfo(self.dt).eps) * sign)

    @contextlib.contextmanager
    def nudged(self, trial=1):
        """Inputs and tangents moved by a few units in the last place while the block runs
        (``trial`` picks the directions): a reference computed so shows how much of it is
        rounding (see ``_within_noise``)."""
        vals, bvals = self.vals, self.bvals
        self.vals = [self._nudge(v, 1000 * trial + k + 1) for k, v in enumerate(vals)]
        self.bvals = [self._nudge(v, 1000 * trial + k + 51) for k, v in enumerate(bvals)]
        self.nudging = trial
        try:
            yield
        finally:
            self.vals, self.bvals, self.nudging = vals, bvals, False

    # ------------------------------------------------------------------ references
    def ref(self, name):
        if name not in self._refs:
            try:
                with self.x64():
                    self._refs[name] = ("ok", getattr(self, "_ref_" + name)())
            except Mismatch:
                raise
            except Exception as e:     # noqa: BLE001 - recorded, compared with the transform's
                if name == "fwd":
                    raise Invalid(f"{type(e).__name__}: {e}") from e
                self._refs[name] = ("err", e)
        return self._refs[name]

    def _ref_fwd(self):
        f, _ = self.make_fn()
        args = self.args()
        for i, (t, v) in enumerate(zip(args, self.vals)):
            # the argument reads as the values it was made from, also through a reversed view
            # and a pad (which address its memory from its offset, whatever its layout)
            v = np.asarray(v, self.dt)
            checks = [("itself", np.asarray(t), v)]
            if v.ndim:
                checks += [("[::-1]", np.asarray(t[::-1]), v[::-1]),
                           ("nx.pad(x, 1)", np.asarray(nx.pad(t, 1)), np.pad(v, 1))]
            for what, got, want in checks:
                if not np.array_equal(got, want):
                    raise Mismatch("input-fidelity", f"argument x{i} ({self.prog.inputs[i].layout})"
                                   f" through {what} reads {got!r}, made from {want!r}")
        outs = f(*args)
        res = to_numpy(outs)
        self.alias = _alias_table(outs, args[:self.n_in])
        self.writable = [_writable(o) for o in outs]
        self.weights = [np.random.default_rng(self.prog.seed + 7 + k).uniform(-1, 1, np.shape(o))
                        if np.asarray(o).dtype.kind == "f" else None for k, o in enumerate(res)]
        return res

    def _ref_fwd_new_consts(self):
        # the constants as m_jit_capture leaves them: rounded to the program's dtype, then
        # 1 added in it (float32(c) + 1, not float32(c + 1): seed 277, program 2760)
        f, _ = self.make_fn([np.asarray(c, self.dt) + self.dt.type(1) for c in self.consts])
        return to_numpy(f(*self.args()))

    def _ref_grad(self):
        f, _ = self.make_fn()
        return to_numpy(nx.grad(self.loss(f), argnums=self.argnums)(*self.args()))

    def _ref_jvp(self):
        f, _ = self.make_fn()
        args = self.args()
        rest = args[self.n_in:]
        tans = [self.tensor(t, "c") for t in self.tangents()]
        out, tout = nx.jvp(lambda *t: f(*t, *rest), args[:self.n_in], tans)
        return to_numpy(tout)

    def _hvp(self, f, jit_outer=False, jit_inner=False):
        L = self.loss(f)
        if jit_inner:
            L = self.jit(L)
        gL = nx.grad(L, argnums=self.argnums)
        args = self.args()
        rest = args[self.n_in:]
        tans = [self.tensor(t, "c") for t in self.tangents()]

        def h(*t):
            return nx.jvp(lambda *u: gL(*u, *rest), t, tans)[1]
        if jit_outer:
            h = nx.jit(h)
        return to_numpy(h(*args[:self.n_in]))

    def _ref_hvp(self):
        f, _ = self.make_fn()
        return self._hvp(f)

    def _per_example(self, fn_of_f):
        outs = []
        for b in range(BATCH):
            f, _ = self.make_fn()
            outs.append(fn_of_f(f, self.example_args(b)))
        return _stack(outs)

    def _ref_vfwd(self):
        return self._per_example(lambda f, a: to_numpy(f(*a)))

    def _ref_vgrad(self):
        return self._per_example(
            lambda f, a: to_numpy(nx.grad(self.loss(f), argnums=self.argnums)(*a)))

    def _ref_vjvp(self):
        tb = self.tangents(batch=True)

        def one(b):
            f, _ = self.make_fn()
            a = self.example_args(b)
            rest = a[self.n_in:]
            return to_numpy(nx.jvp(lambda *t: f(*t, *rest), a[:self.n_in],
                                   [self.tensor(t[b], "c") for t in tb])[1])
        return _stack([one(b) for b in range(BATCH)])


def _stack(per):
    if isinstance(per[0], (list, tuple)):
        return [_stack([p[i] for p in per]) for i in range(len(per[0]))]
    return np.stack([np.asarray(p) for p in per])


def _alias_table(outs, args):
    """Which outputs share memory with which tensor arguments and with each other."""
    tab = set()
    for i, o in enumerate(outs):
        if not isinstance(o, nx.Tensor):
            continue
        for j, a in enumerate(args):
            if nx.shares_memory(o, a):
                tab.add(("arg", i, j))
        for k in range(i):
            if isinstance(outs[k], nx.Tensor) and nx.shares_memory(o, outs[k]):
                tab.add(("out", i, k))
    return tab


def _writable(o):
    try:
        return bool(np.asarray(o).flags.writeable)
    except Exception:       # noqa: BLE001
        return None


# ---------------------------------------------------------------------------------- modes
def _fwd_check(ctx, got, mode, want_key="fwd"):
    _, want = ctx.ref(want_key)
    got = to_numpy(got)
    try:
        compare(got, want, exact=ctx.exact, dtype=ctx.prog.dtype)
    except Mismatch as m:
        if m.kind != "value" or not _within_noise(ctx, want_key, got, want):
            raise


def m_jit(ctx):
    f, _ = ctx.make_fn()
    args = ctx.args()
    outs = ctx.jit(f)(*args)
    _fwd_check(ctx, outs, "jit")
    tab = _alias_table(outs, args[:ctx.n_in])
    extra = tab - ctx.alias
    if extra:
        raise Mismatch("alias-extra", f"jit's results share memory where eager's do not: "
                       f"{sorted(extra)} (('arg', out, arg) / ('out', out, out))")
    missing = ctx.alias - tab
    if missing:
        raise Mismatch("alias-missing", f"eager's results share memory, jit's do not: "
                       f"{sorted(missing)}")
    for i, o in enumerate(outs):
        if ctx.writable[i] and _writable(o) is False:
            raise Mismatch("readonly", f"output {i} is read-only under jit, writable eagerly")


def m_jit_jit(ctx):
    f, _ = ctx.make_fn()
    _fwd_check(ctx, nx.jit(ctx.jit(f), **({"static_argnums": ctx.static_idx}
                                         if ctx.static_idx is not None else {}))(*ctx.args()),
               "jit(jit)")


def _wrap(g):
    @functools.wraps(g)
    def wrapped(*a):
        return tuple(o * 2 for o in g(*a))
    return wrapped


def m_jit_wrap_jit(ctx):
    f, _ = ctx.make_fn()
    want = to_numpy(_wrap(f)(*ctx.args()))
    got = to_numpy(ctx.jit(_wrap(ctx.jit(f)))(*ctx.args()))
    ctx.ref("fwd")
    try:
        compare(got, want, exact=ctx.exact, dtype=ctx.prog.dtype)
    except Mismatch as m:
        def again():
            return to_numpy(_wrap(ctx.make_fn()[0])(*ctx.args()))
        if m.kind != "value" or not _within_noise(ctx, again, got, want):
            raise


def _twin(ctx, warm):
    f, _ = ctx.make_fn()
    jf = ctx.jit(f)
    with contextlib.suppress(Exception):
        warm(jf)
    _fwd_check(ctx, jf(*ctx.args()), "jit:twin")


def m_jit_twin_x64(ctx):
    """The jitted function called first in the other x64 mode, then in the program's: the
    trace cache must tell the modes apart."""
    def warm(jf):
        with ctx.x64(not ctx.prog.x64):
            jf(*ctx.args())
    _twin(ctx, warm)


def m_jit_twin_static(ctx):
    """Called first with the static argument's twin (1.0 for 1, 2 for 2.0): the cache must
    tell 1 from 1.0."""
    if ctx.prog.static is None:
        return

    def warm(jf):
        s = ctx.prog.static
        # the twin of 1 is 1.0 and back (equal as dict keys: the very confusion looked for)
        jf(*ctx.args()[:ctx.n_in], *ctx.rest(static=float(s) if isinstance(s, int) else int(s)))
    _twin(ctx, warm)


def m_jit_donate(ctx):
    f, _ = ctx.make_fn()
    jf = ctx.jit(f, donate_argnums=(0,))
    np0 = np.asarray(ctx.vals[0], ctx.dt).copy()
    before = np0.copy()
    args = ctx.args()
    args[0] = nx.asarray(np0)
    outs = to_numpy(jf(*args))
    _fwd_check(ctx, outs, "jit:donate")
    if not np.array_equal(np0, before, equal_nan=True):
        raise Mismatch("donate-numpy", "the caller's NumPy array under a donated argument "
                       "changed")
    try:
        now = np.asarray(args[0]).copy()
    except Exception:      # noqa: BLE001 - a donated tensor may refuse to be read: fine
        return
    if not np.array_equal(now, before, equal_nan=True):
        raise Mismatch("donate-silent", "a donated argument reads as other values afterwards "
                       "instead of raising")


def m_jit_capture(ctx):
    """Write into the captured constants after the first call: the next call must give either
    all trace-time values (JAX's rule) or all new ones, never a mixture."""
    if not ctx.prog.consts:
        return
    f, ns = ctx.make_fn()
    jf = ctx.jit(f)
    _fwd_check(ctx, jf(*ctx.args()), "jit:capture")
    for i in range(len(ctx.prog.consts)):
        c = ns[f"C{i}"]
        c += 1
    got = to_numpy(jf(*ctx.args()))
    with ctx.x64():
        new = ctx.ref("fwd_new_consts")
    try:
        compare(got, ctx.ref("fwd")[1], exact=ctx.exact, dtype=ctx.prog.dtype)
    except Mismatch as e1:
        if new[0] == "ok":
            try:
                compare(got, new[1], exact=ctx.exact, dtype=ctx.prog.dtype)
                return
            except Mismatch:
                pass
        raise Mismatch("capture", "after writing into the captured constants the jitted "
                       "function gives neither the trace-time nor the new values: "
                       + e1.detail) from None


def _vmap_mode(wrap):
    def mode(ctx):
        f, _ = ctx.make_fn()
        g = wrap(ctx, f)
        got = to_numpy(g(*ctx.batched_args()))
        ctx.ref("fwd")
        st, want = ctx.ref("vfwd")
        try:
            _expect(st, want, got, ctx, exact=ctx.exact)
        except Mismatch as m:
            if m.kind != "value" or st != "ok" or not _within_noise(ctx, "vfwd", got, want):
                raise
    return mode


def _zero_times_inf_through_control(prog):
    """Traced control flow (a lax.cond, or a loop) over values whose partial derivatives are
    infinite (x * 1e300 * 1e-300 in float32, or a Python scalar past 1e6 scaling the inputs).
    Eagerly a cond's predicate is concrete and a loop is Python's: only the taken branch, only
    the steps run are differentiated, and an operand nobody reads gets no (co)tangent.  Traced
    (jit, vmap), the control equation's derivative gives it a zero one, and 0 * inf is NaN, as
    in JAX (documented in docs/reliability.md): a NaN there is the known difference."""
    huge = "mul_1e300" in prog.tags or (prog.scalar is not None and abs(prog.scalar) > 1e6)
    return huge and _has_control(prog)


def _has_control(prog):
    return any(t.startswith(("control:cond", "control:fori", "control:while", "control:scan"))
               for t in prog.tags)


def _expect(st, want, got, ctx, exact=False, derivative=False):
    if derivative and st != "err" and (
            _zero_times_inf_through_control(ctx.prog)
            or (_has_control(ctx.prog) and _has_nan(got) and _forward_overflows(ctx))):
        # the same 0 * inf where the forward pass overflows by itself (an exp of a large
        # value read only by the branch not taken: seed 277, program 1166)
        got = _eager_where_nan(got, want)
    if st == "err" and isinstance(want, E.ModifiedInPlaceError):
        return      # eager's tape refuses a write into a concrete tensor it recorded (README);
                    # a trace rebinds instead, so the transformation may well succeed
    if st == "err":
        raise Mismatch("exception-missing", f"eager raises {type(want).__name__}: {want}; the "
                       "transformation returns values")
    compare(got, want, exact=exact, dtype=ctx.prog.dtype)


def _grad_mode(build, ref="grad"):
    def mode(ctx):
        ctx.ref("fwd")
        if not any(w is not None for w in ctx.weights):
            return
        f, _ = ctx.make_fn()
        st, want = ctx.ref(ref)
        try:
            got = build(ctx, f)
        except Exception as e:   # noqa: BLE001
            if st == "err" and isinstance(e, type(want)):
                return
            raise
        try:
            _expect(st, want, to_numpy(got), ctx, derivative=True)
        except Mismatch as m:
            if m.kind != "value" or st != "ok" or not _within_noise(ctx, ref, got, want):
                raise
    return mode


def _within_noise(ctx, ref, got, want):
    """Whether ``got`` differs from the reference ``want`` (a value, or a derivative; ``ref``
    the name of the Ctx reference that computed it, or a function computing it again) by no
    more than the reference's own rounding: the reference computed again from inputs and
    tangents moved by a few units in the last place (three ways) moves by at least an eighth
    of that difference somewhere among them, elementwise.  A result
    that cancels terms far larger than itself (``sum(p_i (t_i - mean(t))) * 1e300``) is
    rounding in every evaluation order, eager's too; a well-conditioned one moves by a few
    ulps, far less than a wrong rule's difference."""
    kept = (getattr(ctx, "alias", None), getattr(ctx, "writable", None), ctx.weights)
    agains = []
    try:
        for trial in (1, 2, 3):
            with ctx.x64(), ctx.nudged(trial):
                fn = ref if callable(ref) else getattr(ctx, "_ref_" + ref)
                agains.append(list(_flat(to_numpy(fn()))))
    except Exception:       # noqa: BLE001 - no second reference: the mismatch stands
        return False
    finally:
        ctx.alias, ctx.writable, ctx.weights = kept     # _ref_fwd sets them
    gl, wl = list(_flat(to_numpy(got))), list(_flat(want))
    if not all(len(gl) == len(wl) == len(a) for a in agains):
        return False
    for i, (g, w) in enumerate(zip(gl, wl)):
        g, w = np.asarray(g), np.asarray(w)
        runs = [np.asarray(a[i]) for a in agains]
        if g.shape != w.shape or any(a.shape != w.shape for a in runs) or \
                w.dtype.kind not in "fc":
            return False
        with np.errstate(all="ignore"):
            diff = np.abs(g.astype(np.complex128) - w.astype(np.complex128))
            noise = np.max([np.abs(a.astype(np.complex128) - w.astype(np.complex128))
                            for a in runs], axis=0)
        fin = np.isfinite(diff)
        if not np.array_equal(np.isfinite(g), np.isfinite(w)) or \
                np.any(diff[fin] > 8 * noise[fin]):
            return False
    return True


def _flat(tree):
    if isinstance(tree, (list, tuple)):
        for t in tree:
            yield from _flat(t)
    else:
        yield tree


def _has_nan(tree):
    return any(np.asarray(x).dtype.kind in "fc" and np.isnan(np.asarray(x)).any()
               for x in _flat(tree))


def _eager_where_nan(got, want):
    """``got`` with its NaNs replaced by eager's values where eager's are not NaN."""
    if isinstance(got, (list, tuple)):
        return type(got)(_eager_where_nan(g, w) for g, w in zip(got, want))
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype.kind not in "fc" or w.dtype != g.dtype:
        return got
    return np.where(np.isnan(g) & ~np.isnan(w), w, g)


def _grad(ctx, L):
    return nx.grad(L, argnums=ctx.argnums)


def _vjp_apply(ctx, f, args, jit_inner=False):
    """A function of the tensor arguments: the VJP of f with the loss's weights as cotangents
    (so it equals the loss's gradient)."""
    rest = args[ctx.n_in:]
    g = ctx.jit(f) if jit_inner else f

    def run(*t):
        out, back = nx.vjp(lambda *u: g(*u, *rest), *t)
        c = tuple(nx.asarray(w, dtype=o.dtype) if w is not None else nx.zeros_like(o)
                  for o, w in zip(out, ctx.weights))
        return back(c)
    return run


def _fd_applies(ctx):
    """Finite differences mean something: float64, and no value near 1e300 (a step of 1e-5
    vanishes when added to it)."""
    p = ctx.prog
    # Inputs drawn at ties and kinks on purpose meet the non-smooth ops' conventions there
    # (JAX's, the README's): a tie splits the derivative equally, sort's tangent follows the
    # stable order.  Those are not directional derivatives where the function is locally
    # constant or linear across the kink (clip(clip(x) + 1) at x = -0.5; the middle of three
    # tied values in sort), which one-sided differences cannot tell from a smooth point; such
    # programs are compared between transformations only, not with finite differences.
    hard = any(s.values in ("ties", "zeros", "same") for s in p.inputs)
    # lax.cond's predicate on such a value switches branches right there (a branch that meets
    # a tie of its own, maximum(p, q) at p == q, while the function is the other, smooth,
    # branch on one side: one-sided differences agree, the convention's value differs)
    rough = (any(not OPS_BY_TAG[t].smooth for t in p.tags if t in OPS_BY_TAG)
             or any(t.startswith("control:cond") for t in p.tags))
    # gamma's derivative in its shape parameter is the implicit one (JAX's): the derivative of
    # the distribution's quantile at the draw's level, not of the draw with the key fixed (the
    # rejection sampler's accepted proposal moves with the parameter), so differences of the
    # sample along the parameter do not measure it (tests/test_random_samplers.py does)
    return (p.dtype == "float64" and "mul_1e300" not in p.tags and "gamma" not in p.tags
            and not (p.scalar is not None and abs(p.scalar) > 1e6)
            and not (hard and rough))


def _fd_eps(ctx):
    """The relative rounding of a float64 program's values: float64's, but float32's where
    samplers run without x64 (they round their parameters to float32 first, JAX's canonical
    dtypes: the sample is then a staircase in the inputs, steps of a float32 ulp, which
    differences over h = 1e-5 see; seed 257, program 913)."""
    if "random" in ctx.prog.tags and not ctx.prog.x64:
        return float(np.finfo(np.float32).eps)
    return float(np.finfo(np.float64).eps)


def _forward_overflows(ctx):
    """Whether an operation of the eager forward pass gives an infinity (``nx.debug_infs``)."""
    f, _ = ctx.make_fn()
    try:
        with ctx.x64(), nx.debug_infs():
            f(*ctx.args())
    except FloatingPointError:
        return True
    except Exception:       # noqa: BLE001 - anything else: no overflow shown
        return False
    return False


def _fd_check(ctx, got, at, h, what):
    """``fd_check`` with the program's rounding (``_fd_eps``).  A NaN derivative where the
    differences are finite is accepted only where the forward pass overflowed: reverse mode
    multiplies the zero cotangent of an element that a min, max or where did not select by
    that element's infinite local derivative (an exp that overflowed), 0 * inf, as JAX and
    PyTorch do (seed 257, program 916; docs/reliability.md)."""
    try:
        fd_check(got, at, h, what, _fd_eps(ctx))
    except Mismatch:
        if not np.isnan(np.asarray(got, np.float64)).any() or not _forward_overflows(ctx):
            raise
        fd_check(got, at, h, what, _fd_eps(ctx), skip_nan=True)


def m_grad_fd(ctx):
    """Eager grad against float64 central differences along a random direction."""
    if not _fd_applies(ctx):
        return
    ctx.ref("fwd")
    if not any(w is not None for w in ctx.weights):
        return
    st, g = ctx.ref("grad")
    if st == "err":
        return
    v = ctx.tangents()
    f, _ = ctx.make_fn()
    L = ctx.loss(f)
    rest = ctx.rest()

    def at(h):
        with ctx.x64():
            ts = [ctx.tensor(x + h * d, s.layout)
                  for x, d, s in zip(ctx.vals, v, ctx.prog.inputs)]
            return np.asarray(L(*ts, *rest), np.float64)
    got = sum(np.sum(np.asarray(gi, np.float64) * d) for gi, d in zip(g, v))
    _fd_check(ctx, np.asarray(got), at, 1e-5, "grad . v")


def m_jvp_fd(ctx):
    if not _fd_applies(ctx):
        return
    ctx.ref("fwd")
    st, tout = ctx.ref("jvp")
    if st == "err":
        return
    v = ctx.tangents()
    f, _ = ctx.make_fn()
    rest = ctx.rest()
    for k, w in enumerate(ctx.weights):
        if w is None:
            continue

        def at(h, k=k):
            with ctx.x64():
                ts = [ctx.tensor(x + h * d, s.layout)
                      for x, d, s in zip(ctx.vals, v, ctx.prog.inputs)]
                return np.asarray(f(*ts, *rest)[k], np.float64)
        _fd_check(ctx, np.asarray(tout[k]), at, 1e-5, f"jvp output {k}")


def m_hvp_fd(ctx):
    if not _fd_applies(ctx):
        return
    ctx.ref("fwd")
    if not any(w is not None for w in ctx.weights):
        return
    st, hv = ctx.ref("hvp")
    if st == "err":
        return
    v = ctx.tangents()
    f, _ = ctx.make_fn()
    gL = nx.grad(ctx.loss(f), argnums=ctx.argnums)
    rest = ctx.rest()
    for k in range(ctx.n_in):
        def at(h, k=k):
            with ctx.x64():
                ts = [ctx.tensor(x + h * d, s.layout)
                      for x, d, s in zip(ctx.vals, v, ctx.prog.inputs)]
                return np.asarray(gL(*ts, *rest)[k], np.float64)
        _fd_check(ctx, np.asarray(hv[k]), at, 1e-4, f"hvp (jvp of grad) w.r.t. x{k}")


def _jvp_build(jit_outer=False, jit_inner=False):
    def build(ctx, f):
        args = ctx.args()
        rest = args[ctx.n_in:]
        g = ctx.jit(f) if jit_inner else f
        tans = [ctx.tensor(t, "c") for t in ctx.tangents()]

        def run(*t):
            return nx.jvp(lambda *u: g(*u, *rest), t, tans)[1]
        if jit_outer:
            run = nx.jit(run)
        return run(*args[:ctx.n_in])
    return build


def _vmap_grad(ctx, f, order):
    ax = ctx.in_axes()
    L = ctx.loss(f)
    if order == "vmap(grad)":
        g = nx.vmap(_grad(ctx, L), in_axes=ax)
    elif order == "vmap(grad(jit))":
        g = nx.vmap(_grad(ctx, ctx.jit(L)), in_axes=ax)
    elif order == "vmap(jit(grad))":
        g = nx.vmap(ctx.jit(_grad(ctx, L)), in_axes=ax)
    elif order == "jit(vmap(grad))":
        g = ctx.jit(nx.vmap(_grad(ctx, L), in_axes=ax))
    else:
        inner = nx.vmap(L, in_axes=ax)
        if order == "grad(jit(vmap))":
            inner = ctx.jit(inner)

        def total(*a):
            return nx.sum(inner(*a))
        g = _grad(ctx, total)
    return g(*ctx.batched_args())


def _vmap_jvp(ctx, f, order):
    tb = [ctx.tensor(t, "c") for t in ctx.tangents(batch=True)]
    args = ctx.batched_args()
    rest = args[ctx.n_in:]
    if order == "vmap(jvp)":
        def one(*a):
            t, r = a[:ctx.n_in], a[ctx.n_in:ctx.n_in * 2]
            return nx.jvp(lambda *u: f(*u, *rest), t, r)[1]
        return nx.vmap(one, in_axes=(0,) * (2 * ctx.n_in))(*args[:ctx.n_in], *tb)
    vf = nx.vmap(lambda *u: f(*u, *rest), in_axes=(0,) * ctx.n_in)
    return nx.jvp(vf, args[:ctx.n_in], tb)[1]


def _checked(f, static_idx=None):
    """f under checkify with the float checks (NaN, division by zero): the outputs only, which
    must be f's (checks never change values).  A static argument is closed over (checkify,
    as JAX's, traces every argument: a Python number there is weak, as under jit)."""
    def run(*a):
        if static_idx is None:
            _, out = checkify.checkify(f, errors=_CHECKS)(*a)
            return out
        s = a[static_idx]
        rest = a[:static_idx] + a[static_idx + 1:]
        g = lambda *r: f(*r[:static_idx], s, *r[static_idx:])  # noqa: E731
        _, out = checkify.checkify(g, errors=_CHECKS)(*rest)
        return out
    return functools.wraps(f)(run)


_CHECKS = checkify.float_checks | checkify.user_checks


def m_checkify(ctx):
    f, _ = ctx.make_fn()
    _fwd_check(ctx, _checked(f, ctx.static_idx)(*ctx.args()), "checkify")


def m_jit_checkify(ctx):
    f, _ = ctx.make_fn()
    _fwd_check(ctx, ctx.jit(_checked(f, ctx.static_idx))(*ctx.args()), "jit(checkify)")


MODES = {
    "jit": m_jit,
    "jit(jit)": m_jit_jit,
    "jit(wrap(jit))": m_jit_wrap_jit,
    "jit:twin-x64": m_jit_twin_x64,
    "jit:twin-static": m_jit_twin_static,
    "jit:donate": m_jit_donate,
    "jit:capture": m_jit_capture,
    "vmap": _vmap_mode(lambda c, f: nx.vmap(f, in_axes=c.in_axes())),
    "vmap(jit)": _vmap_mode(lambda c, f: nx.vmap(c.jit(f), in_axes=c.in_axes())),
    "jit(vmap)": _vmap_mode(lambda c, f: c.jit(nx.vmap(f, in_axes=c.in_axes()))),
    "jit(vmap(jit))": _vmap_mode(lambda c, f: c.jit(nx.vmap(c.jit(f), in_axes=c.in_axes()))),
    "grad": m_grad_fd,
    "jit(grad)": _grad_mode(lambda c, f: c.jit(_grad(c, c.loss(f)))(*c.args())),
    "grad(jit)": _grad_mode(lambda c, f: _grad(c, c.jit(c.loss(f)))(*c.args())),
    "jit(grad(jit))": _grad_mode(
        lambda c, f: c.jit(_grad(c, c.jit(c.loss(f))))(*c.args())),
    "value_and_grad(jit)": _grad_mode(
        lambda c, f: nx.value_and_grad(c.jit(c.loss(f)), argnums=c.argnums)(*c.args())[1]),
    "vjp": _grad_mode(lambda c, f: _vjp_apply(c, f, c.args())(*c.args()[:c.n_in])),
    "vjp(jit)": _grad_mode(
        lambda c, f: _vjp_apply(c, f, c.args(), jit_inner=True)(*c.args()[:c.n_in])),
    "jit(vjp)": _grad_mode(
        lambda c, f: nx.jit(_vjp_apply(c, f, c.args()))(*c.args()[:c.n_in])),
    "vmap(grad)": _grad_mode(lambda c, f: _vmap_grad(c, f, "vmap(grad)"), ref="vgrad"),
    "grad(vmap)": _grad_mode(lambda c, f: _vmap_grad(c, f, "grad(vmap)"), ref="vgrad"),
    "vmap(grad(jit))": _grad_mode(lambda c, f: _vmap_grad(c, f, "vmap(grad(jit))"),
                                  ref="vgrad"),
    "vmap(jit(grad))": _grad_mode(lambda c, f: _vmap_grad(c, f, "vmap(jit(grad))"),
                                  ref="vgrad"),
    "jit(vmap(grad))": _grad_mode(lambda c, f: _vmap_grad(c, f, "jit(vmap(grad))"),
                                  ref="vgrad"),
    "grad(jit(vmap))": _grad_mode(lambda c, f: _vmap_grad(c, f, "grad(jit(vmap))"),
                                  ref="vgrad"),
    "jvp": m_jvp_fd,
    "jit(jvp)": _grad_mode(_jvp_build(jit_outer=True), ref="jvp"),
    "jvp(jit)": _grad_mode(_jvp_build(jit_inner=True), ref="jvp"),
    "vmap(jvp)": _grad_mode(lambda c, f: _vmap_jvp(c, f, "vmap(jvp)"), ref="vjvp"),
    "jvp(vmap)": _grad_mode(lambda c, f: _vmap_jvp(c, f, "jvp(vmap)"), ref="vjvp"),
    "hvp": m_hvp_fd,
    "jit(hvp)": _grad_mode(lambda c, f: c._hvp(f, jit_outer=True), ref="hvp"),
    "hvp(jit)": _grad_mode(lambda c, f: c._hvp(f, jit_inner=True), ref="hvp"),
    "checkify": m_checkify,
    "jit(checkify)": m_jit_checkify,
    "vmap(checkify)": _vmap_mode(
        lambda c, f: nx.vmap(_checked(f, c.static_idx), in_axes=c.in_axes())),
    "grad(checkify)": _grad_mode(
        lambda c, f: _grad(c, c.loss(_checked(f, c.static_idx)))(*c.args())),
}


class Failure:
    def __init__(self, mode, kind, detail):
        self.mode, self.kind, self.detail = mode, kind, detail

    @property
    def key(self):
        return f"{self.mode} / {self.kind}"

    def __repr__(self):
        return f"Failure({self.key}: {self.detail[:200]})"


def run_mode(ctx, mode):
    """None, or the Failure of this mode on this program."""
    prog = ctx.prog
    try:
        with ctx.x64():
            MODES[mode](ctx)
    except Invalid:
        raise
    except Mismatch as m:
        return Failure(mode, m.kind, m.detail)
    except Exception as e:     # noqa: BLE001 - every other exception is compared with eager's
        if _is_refusal(prog, mode, e):
            return None
        name = type(e).__name__
        msg = str(e).split("\n")[0][:300]
        kind = "exception:" + name
        if isinstance(e, (SystemError, MemoryError, AssertionError, AttributeError, KeyError,
                          IndexError, NameError, UnboundLocalError)):
            kind = "internal-error:" + name
        return Failure(mode, kind, f"{name}: {msg}")
    return None


def _library_refusal(exc):
    """Whether an eager exception is nx_rune's own clear refusal of an invalid program: a
    TypeError or ValueError raised by nx_rune's Python code with a message that names the
    function (``lax.while_loop: the carry ...``).  A raw error of the interpreter or of
    NumPy inside the library, or any other class (AttributeError, KeyError, IndexError, ...),
    is a crash, not a refusal."""
    if type(exc) not in (TypeError, ValueError) and not (
            isinstance(exc, (TypeError, ValueError))
            and type(exc).__module__.startswith("nx_rune")):
        return False
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is None or "/nx_rune/" not in last.replace("\\", "/") or not last.endswith(".py"):
        return False
    return bool(re.match(r"[A-Za-z_.]+(\(\))?: ", str(exc)))


def _refused_everywhere(ctx, modes, want):
    """Failures of the forward modes that return values for a program that eager refuses."""
    fails = []
    for mode in ("jit", "vmap"):
        if mode not in modes:
            continue
        f, _ = ctx.make_fn()
        try:
            with ctx.x64():
                if mode == "jit":
                    ctx.jit(f)(*ctx.args())
                else:
                    nx.vmap(f, in_axes=ctx.in_axes())(*ctx.batched_args())
        except (TypeError, ValueError):
            continue
        except Exception as e:  # noqa: BLE001
            fails.append(Failure(mode, "internal-error:" + type(e).__name__,
                                 f"eager raises {type(want).__name__}: {want}; {mode} raises "
                                 f"{type(e).__name__}: {e}"[:400]))
            continue
        fails.append(Failure(mode, "exception-missing", f"eager raises {type(want).__name__}: "
                             f"{want}; {mode} returns values"[:400]))
    return fails


def run_program(prog, modes, exact=True):
    """Run the program under each mode; returns (failures, invalid_reason or None).
    ``exact=False`` compares forward values within the float tolerance only."""
    ctx = Ctx(prog, exact)
    try:
        with ctx.x64():
            ctx.ref("fwd")
    except Invalid as e:
        if _library_refusal(e.__cause__):
            # the program is invalid for nx_rune (its NumPy promotion differs from JAX's, so a
            # generated program may be valid in JAX only): every transformation must refuse it
            return _refused_everywhere(ctx, modes, e.__cause__), str(e)
        # the generator writes only programs that are valid in JAX: any other eager exception
        # is a failure (lax's carry promotion of Python scalars, memory addressing, ...)
        return [Failure("eager", "exception:" + str(e).split(":")[0], str(e)[:400])], None
    except Mismatch as m:
        return [Failure("eager", m.kind, m.detail)], None
    fails = []
    for mode in modes:
        try:
            f = run_mode(ctx, mode)
        except Invalid as e:
            return fails, str(e)
        if f is not None:
            fails.append(f)
    return fails, None
