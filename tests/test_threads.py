"""Thread safety and GIL release.

* Eight threads, each differentiating its own function (grad, value_and_grad, jvp, vjp,
  grad-of-grad) over and over, concurrently, get exactly (bit for bit) their serial results:
  the interpreter stack lives in a ContextVar, so transformations in one thread never see
  another's.
* The kernels release the GIL: while one thread runs a large strided copy (``nx.contiguous``
  of a transposed 4096 x 4096 float32, ``nx.copy``), a threefry hash (``nx.random.bits`` of
  2**24), a gather or an unfold, a second, pure-Python thread keeps making progress.  This is
  measured as the second thread's iteration rate during the kernel relative to its rate when
  alone, and validated with a negative control (``sorted`` of a big list, which holds the GIL in
  C for its whole run): robust on a loaded 2-core machine, unlike wall-clock speed-ups, which
  are reported (``-s``) but asserted only loosely.

The autodiff API (``nx.grad``, ``nx.jvp``, ...) must exist: a missing one fails these tests.
"""
import os
import threading
import time

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import threefry as KT

N_THREADS = 8
ROUNDS = 12


def _api(name):
    fn = getattr(nx, name, None)
    if fn is None:
        pytest.fail(f"nx.{name} is missing: the autodiff API is not exported (nx_rune/autodiff)")
    return fn


# ---------------------------------------------------------------------------------------------
# eight different functions and their derivatives
# ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(1234)
X = nx.asarray(RNG.standard_normal((6, 5)).astype(np.float32))
V = nx.asarray(RNG.standard_normal((6, 5)).astype(np.float32))
W = nx.asarray(RNG.standard_normal((5, 4)).astype(np.float32))
IMG = nx.asarray(RNG.standard_normal((2, 3, 6, 6)).astype(np.float32))
KER = nx.asarray(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32))
IDX = nx.asarray(RNG.integers(0, 6, (4, 5)).astype(np.int32))
Y = nx.asarray(RNG.integers(0, 4, 6).astype(np.int32))


def f_mlp(x):
    h = nx.tanh(x @ W)
    return nx.sum(nx.log_softmax(h, axis=-1) * nx.sigmoid(h))


def f_trig(x):
    return nx.sum(nx.sin(x) * nx.cos(2.0 * x) + nx.exp(-nx.square(x)))


def f_moves(x):
    y = nx.pad(nx.flip(x.T, 0), ((1, 2), (0, 1)), constant_values=0.5)
    y = nx.shrink(y, [(1, 5), (0, 6)])
    return nx.sum(nx.reshape(y, (-1,))[::3] ** 2)


def f_reduce(x):
    return nx.sum(nx.max(x, axis=0)) + nx.logsumexp(x) - nx.mean(nx.min(x, axis=1))


def f_gather(x):
    g = nx.take_along_axis(x, IDX, axis=0)
    s = nx.put_along_axis(x, IDX, g * 2.0, axis=0, mode="add")
    return nx.sum(g * g) + nx.sum(nx.sqrt(nx.abs(s) + 1.0))


def f_conv(x):
    img = IMG * nx.reshape(nx.sum(x), (1, 1, 1, 1))
    return nx.sum(nx.relu(nx.conv2d(img, KER, padding=1)))


def f_loss(x):
    logits = x @ W
    lp = nx.log_softmax(logits, axis=-1)
    return -nx.mean(nx.take_along_axis(lp, nx.reshape(Y, (-1, 1)), axis=1))


def f_scan(x):
    return nx.sum(nx.cumsum(x, axis=1) * nx.cumprod(nx.tanh(x) + 1.5, axis=0))


FUNCS = [f_mlp, f_trig, f_moves, f_reduce, f_gather, f_conv, f_loss, f_scan]


def derivatives(k):
    """Every derivative we compute for function k (as ndarrays), one kind per k."""
    f = FUNCS[k]
    grad, jvp, vag = _api("grad"), _api("jvp"), _api("value_and_grad")
    out = {"grad": np.asarray(grad(f)(X))}
    value, g = vag(f)(X)
    out["value"], out["vag"] = np.asarray(value), np.asarray(g)
    y, t = jvp(f, (X,), (V,))
    out["jvp"], out["jvp_primal"] = np.asarray(t), np.asarray(y)
    if k % 2 == 0:   # second order: grad of (grad . v), and vjp
        gv = grad(lambda x: nx.sum(grad(f)(x) * V))
        out["hvp"] = np.asarray(gv(X))
        vjp = _api("vjp")
        _, pull = vjp(f, X)
        out["vjp"] = np.asarray(pull(nx.ones_like(f(X)))[0])
    return out


def _same(a, b, what):
    assert a.keys() == b.keys(), what
    for key in a:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, (what, key)
        assert np.array_equal(a[key], b[key], equal_nan=True), f"{what}: {key} differs"


def test_eight_threads_get_their_serial_derivatives():
    serial = [derivatives(k) for k in range(N_THREADS)]
    errors, mismatches = [], []
    barrier = threading.Barrier(N_THREADS)

    def worker(k):
        try:
            barrier.wait()
            for r in range(ROUNDS):
                # rotate through the functions so that different ones run at the same moment
                j = (k + r) % N_THREADS
                got = derivatives(j)
                try:
                    _same(got, serial[j], f"thread {k}, round {r}, {FUNCS[j].__name__}")
                except AssertionError as e:
                    mismatches.append(str(e))
        except BaseException as e:                 # noqa: BLE001 (reported below)
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    assert not mismatches, mismatches[:5]


def test_a_transformation_in_one_thread_is_invisible_in_another():
    """Thread A sits inside grad (its function blocks on an event) while thread B computes
    plain ops and its own grad: B sees concrete Tensors and its own correct derivative."""
    grad = _api("grad")
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def blocking(x):
        inside.set()
        release.wait(30)
        return nx.sum(x * x)

    def thread_a():
        seen["a"] = np.asarray(grad(blocking)(X))

    def thread_b():
        inside.wait(30)
        y = nx.exp(X) + 1.0
        seen["b_type"] = type(y)
        seen["b_grad"] = np.asarray(grad(f_trig)(X))
        release.set()

    ta, tb = threading.Thread(target=thread_a), threading.Thread(target=thread_b)
    ta.start()
    tb.start()
    ta.join(60)
    tb.join(60)
    assert seen["b_type"] is nx.Tensor
    np.testing.assert_array_equal(seen["b_grad"], np.asarray(grad(f_trig)(X)))
    np.testing.assert_array_equal(seen["a"], 2 * X.numpy())


# ---------------------------------------------------------------------------------------------
# the kernels release the GIL
# ---------------------------------------------------------------------------------------------

class Counter:
    """A pure-Python thread counting loop iterations (it needs the GIL to make progress); it
    stamps the time every 256 iterations."""

    def __init__(self):
        self.stamps = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        n, stamps, clock = 0, self.stamps, time.perf_counter
        while not self.stop:
            n += 1
            if not n & 255:
                stamps.append(clock())

    def __enter__(self):
        self.thread.start()
        time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()

    def count(self, t0, t1):
        return sum(1 for t in list(self.stamps) if t0 <= t < t1)

    def idle_rate(self, seconds=0.05):
        t0 = time.perf_counter()
        time.sleep(seconds)
        return self.count(t0, time.perf_counter()) / seconds


def progress_ratio(fn, tries=5):
    """The counter thread's progress during the first half of one call of ``fn``, over its
    progress when alone, best of a few tries.

    Only the first half counts: when ``fn`` returns, a GIL-holding caller hands the GIL over
    to the waiting counter at the next switch interval (5 ms), which would show as progress
    at the end of the call.  So a held GIL gives exactly 0, a released one ~0.5..1 (less on a
    loaded machine: the counter must also get a CPU).
    """
    best = 0.0
    with Counter() as c:
        for _ in range(tries):
            rate = c.idle_rate()
            c.stamps.clear()
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            mid = (t0 + t1) / 2
            if rate:
                best = max(best, c.count(t0, mid) / (rate * (mid - t0)))
            if best > 0.5:
                break
    return best


BIG = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)


@pytest.fixture(scope="module")
def big():
    return nx.asarray(BIG)


def test_the_progress_detector_sees_a_held_gil():
    data = list(np.random.default_rng(0).permutation(1_500_000).tolist())
    ratio = progress_ratio(lambda: sorted(data))
    print(f"\nsorted(): a Python thread ran at {ratio:.2f} of its idle rate")
    assert ratio < 0.02, f"sorted() holds the GIL, yet the counter ran at {ratio:.2f} of its rate"


def _kernel_calls(big):
    """Each call is one kernel run of >= ~25 ms (long next to the 5 ms switch interval)."""
    key = nx.random.key(0)
    t = big.T
    image = nx.asarray(np.ascontiguousarray(BIG[:1024].reshape(1, 16, 512, 512)))
    idx = nx.asarray(np.random.default_rng(1).integers(0, 4096, (4096, 1024)).astype(np.int32))
    return {
        "contiguous(T)": lambda: nx.contiguous(t),
        "copy": lambda: nx.copy(big),
        "copy(broadcast)": lambda: nx.copy(nx.broadcast_to(nx.flip(big), (4, 4096, 4096))),
        "random.bits(2**24)": lambda: nx.random.bits(key, (2**24,)),
        "take_along_axis": lambda: nx.take_along_axis(big, idx, axis=1),
        "unfold": lambda: nx.unfold(image, 3, padding=1),
    }


@pytest.mark.parametrize("name", ["contiguous(T)", "copy(broadcast)", "random.bits(2**24)",
                                  "take_along_axis", "unfold"])
def test_kernels_release_the_gil(big, name):
    fn = _kernel_calls(big)[name]
    old = KT.get_num_threads()
    KT.set_num_threads(1)      # one threefry call = one long nogil run in this thread
    try:
        fn()                                # warm up (page faults, thread pools)
        ratio = progress_ratio(fn)
    finally:
        KT.set_num_threads(old)
    print(f"\n{name}: a Python thread ran at {ratio:.2f} of its idle rate during the kernel")
    assert ratio > 0.1, (f"{name}: a pure-Python thread ran at only {ratio:.2f} of its idle "
                          f"rate during the kernel: the GIL looks held")


def _speedup(fn, n=4):
    """(serial seconds for 2n calls, seconds for 2 threads of n calls each), best of 2."""
    fn()
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        for _ in range(2 * n):
            fn()
        serial = time.perf_counter() - t0
        threads = [threading.Thread(target=lambda: [fn() for _ in range(n)]) for _ in range(2)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        par = time.perf_counter() - t0
        if best is None or serial / par > best[0] / best[1]:
            best = (serial, par)
    return best


def test_two_threads_of_kernels_speed_up(big, record_property):
    """Wall times of 2 x n calls serially and in two threads (printed with -s, recorded as
    junit properties; asserted > 1.2x with NX_RUNE_STRICT_TIMING=1)."""
    calls = _kernel_calls(big)
    lines, ratios = [], {}
    old = KT.get_num_threads()
    KT.set_num_threads(1)      # threefry's own pool off: two callers, one core each
    try:
        for name in ["contiguous(T)", "copy", "random.bits(2**24)"]:
            serial, par = _speedup(calls[name])
            ratios[name] = serial / par
            lines.append(f"{name}: serial {serial:.3f} s, 2 threads {par:.3f} s, speed-up "
                         f"{serial / par:.2f}x")
            record_property(f"speedup {name}", round(serial / par, 2))
    finally:
        KT.set_num_threads(old)
    print("\n" + "\n".join(lines))
    # The figures swing with the load of this shared 2-vCPU machine (0.7x..1.8x for the same
    # copy; NumPy's own np.sin on preallocated arrays gets 1.1x here), so they are asserted only
    # on request.  test_kernels_release_the_gil is the robust check of the GIL.
    if os.environ.get("NX_RUNE_STRICT_TIMING") == "1":
        assert max(ratios.values()) > 1.2, lines


def test_public_thread_count_setting():
    """``nx.set_num_threads``/``nx.get_num_threads`` set the kernels' pool (what the README
    documents), with clear errors for bad counts; the draws do not depend on it."""
    from nx_rune._kernels import pool
    old = nx.get_num_threads()
    key = nx.random.key(3)
    try:
        nx.set_num_threads(1)
        assert nx.get_num_threads() == 1 == pool.get_num_threads()
        one = np.asarray(nx.random.normal(key, (1 << 18,)))
        nx.set_num_threads(3)
        assert nx.get_num_threads() == 3 == pool.get_num_threads()
        np.testing.assert_array_equal(np.asarray(nx.random.normal(key, (1 << 18,))), one)
        with pytest.raises(ValueError, match="n must be >= 1"):
            nx.set_num_threads(0)
        with pytest.raises(TypeError, match="n must be an int"):
            nx.set_num_threads(2.0)
        with pytest.raises(TypeError, match="n must be an int"):
            nx.set_num_threads(True)
        assert nx.get_num_threads() == 3
    finally:
        nx.set_num_threads(old)
