"""Threads, signals and interpreter shutdown (issue 13, "Trust").

Kernels (each check in its own interpreter, so a crash or a hang fails the test instead of
killing pytest):

* An exception raised by a signal handler (a SIGALRM timeout handler, Ctrl-C's
  KeyboardInterrupt sent to the main thread) while large ``nx.random`` draws run on several
  threads: the process exits 0, every draw that completes is bit-identical to a fresh one, and
  freshly allocated zeros stay zeros (no worker writes into freed memory).  This crashed with
  the ThreadPoolExecutor the threefry kernel used (the exception skipped the wait for the
  workers, the output was freed, the workers kept writing).
* ``set_num_threads`` while other threads draw: every draw gives the reference values.
* Draws in an atexit handler and in a non-daemon thread that outlives the main thread work and
  give the reference values (they failed with "cannot schedule new futures after interpreter
  shutdown"); so do draws in a child forked while another thread was drawing.

The reference values come from ``fuzz_driver.threefry_reference`` (Threefry-2x32 in NumPy,
written from the algorithm's description).

Autodiff (in this process):

* One ``nx.no_grad()`` instance shared by threads and by asyncio tasks, entered in overlapping
  order, nested in itself, and as a decorator (also of an ``async def``): each thread/task is in
  no-grad mode exactly inside its own blocks (checked through derivatives, against float64
  central finite differences).
* A tracer used in a worker thread inside a transformed function raises
  ``UnexpectedTracerError`` naming the thread and ``contextvars.copy_context``; running the
  worker in a copy of the context gives the right gradient, also with eight threads recording
  on one tape at once.
"""
import asyncio
import contextvars
import hashlib
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import nx_rune as nx
from fuzz_driver import threefry_reference
from nx_rune import primitives as P
from nx_rune._kernels import threefry as KT
from nx_rune.autodiff.core import NoGradInterpreter, UnexpectedTracerError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_script(code, timeout=240, **env_extra):
    """Run ``code`` in a fresh interpreter (tests/ and the checkout on its path); returns its
    stdout, or fails on a crash, a hang or a non-zero exit."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, HERE, env.get("PYTHONPATH", "")])
    env.update({k: str(v) for k, v in env_extra.items()})
    cmd = [sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script hung ({timeout} s)\nstdout:\n{(e.stdout or '')[-2000:]}\n"
                    f"stderr:\n{(e.stderr or '')[-3000:]}")
    what = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else \
        f"exited with {proc.returncode}"
    assert proc.returncode == 0, f"{what}\nstdout:\n{proc.stdout[-2000:]}\n" \
                                 f"stderr:\n{proc.stderr[-3000:]}"
    return proc.stdout


def bits_reference(k0, k1, n):
    """``nx.random.bits(key, (n,))`` / ``iota_bits32(k0, k1, n)``: y0 ^ y1 of the blocks at
    counters (0, i), i < n < 2**32."""
    y0, y1 = threefry_reference(k0, k1, np.zeros(n, np.uint32), np.arange(n, dtype=np.uint32),
                                20)
    return y0 ^ y1


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# kernels: exceptions from signal handlers during threaded draws
# ---------------------------------------------------------------------------------------------

# Each draw splits into at least 4 spans (asserted), so 3 worker threads write while the main thread
# hashes its span. OPENBLAS_NUM_THREADS=1: with a foreign thread that does not block signals,
# the kernel may hand SIGALRM to it, and CPython 3.11 then may not run the Python handler until
# another signal comes; the loops are bounded, so that would only lower the count of hits.
SIGNAL_SCRIPT = """
    import signal, sys, threading, time
    import numpy as np
    import nx_rune as nx
    from nx_rune._kernels import threefry as KT
    from fuzz_driver import threefry_reference

    KIND, ITERATIONS = sys.argv[1], int(sys.argv[2])
    N = 1 << 21
    assert KT.get_num_threads() == 4 and len(KT._span_plan(N, 4)) >= 4
    key = nx.random.key(7)
    X0 = np.arange(N, dtype=np.uint32)
    X1 = X0[::-1].copy()
    DRAWS = {
        "bits": lambda: nx.random.bits(key, (N,)).numpy(),
        "uniform": lambda: nx.random.uniform(key, (N,)).numpy(),
        "normal": lambda: nx.random.normal(key, (N // 2,)).numpy(),
        "split": lambda: nx.random.split(key, N // 2).numpy(),
        "block": lambda: np.stack(KT.threefry2x32_block(1, 2, X0, X1)),
        "bits64": lambda: KT.iota_bits64(3, 4, N // 2, start=2**32 - 1000),
    }
    NAMES = sorted(DRAWS)
    FRESH = {name: fn().copy() for name, fn in DRAWS.items()}
    y0, y1 = threefry_reference(0, 7, np.zeros(N, np.uint32), X0, 20)
    assert np.array_equal(FRESH["bits"], y0 ^ y1)

    class Interrupt(Exception):
        pass

    armed = False

    def handler(signum, frame):
        global armed
        if armed:          # a signal handled late (after the block) is ignored
            armed = False
            raise Interrupt if KIND == "alarm" else KeyboardInterrupt

    rng = np.random.default_rng(0)
    stop = threading.Event()
    if KIND == "alarm":
        signal.signal(signal.SIGALRM, handler)
        arm = lambda: signal.setitimer(signal.ITIMER_REAL, float(rng.uniform(1e-4, 1.5e-2)))
        disarm = lambda: signal.setitimer(signal.ITIMER_REAL, 0)
        caught = Interrupt
    else:                  # Ctrl-C: SIGINT to the main thread, from another thread
        signal.signal(signal.SIGINT, handler)
        main = threading.get_ident()

        def ctrl_c():
            r = np.random.default_rng(1)
            while not stop.wait(float(r.uniform(1e-4, 1.5e-2))):
                signal.pthread_kill(main, signal.SIGINT)

        threading.Thread(target=ctrl_c, daemon=True).start()
        arm = disarm = lambda: None
        caught = KeyboardInterrupt

    hits = done = 0
    for i in range(ITERATIONS):
        try:
            armed = True
            arm()
            try:
                for j in range(4):         # bounded, in case the signal is late
                    name = NAMES[(i + j) % len(NAMES)]
                    out = DRAWS[name]()
                    # not np.array_equal: it returns False when an exception (the handler's)
                    # is raised inside it
                    assert out.shape == FRESH[name].shape and (out == FRESH[name]).all(), (i, name)
                    done += 1
            finally:
                armed = False
                disarm()
        except caught:
            hits += 1
        # memory a stray worker would write into
        z = np.zeros(N, np.uint32)
        time.sleep(0.0005)
        assert not z.any(), f"iteration {i}: a worker wrote into freed memory"
    stop.set()
    for name, fn in DRAWS.items():
        assert np.array_equal(fn(), FRESH[name]), name
    print("hits", hits, "draws", done)
"""


@pytest.mark.parametrize("kind", ["alarm", "sigint"])
def test_exceptions_from_signal_handlers_during_threaded_draws(kind):
    iterations = 80
    out = run_script(SIGNAL_SCRIPT.replace("sys.argv[1], int(sys.argv[2])",
                                           f"{kind!r}, {iterations}"),
                     NX_RUNE_NUM_THREADS=4, OPENBLAS_NUM_THREADS=1)
    hits, draws = (int(v) for v in out.split()[1::2])
    print(f"\n{kind}: {hits} of {iterations} iterations interrupted, {draws} draws completed")
    # the exception did interrupt the loops (mostly in the middle of a draw), many times
    assert hits >= iterations // 4, out
    assert draws > 0


# ---------------------------------------------------------------------------------------------
# kernels: set_num_threads while other threads draw
# ---------------------------------------------------------------------------------------------

def test_set_num_threads_while_other_threads_draw():
    out = run_script("""
        import threading, time
        import numpy as np
        import nx_rune as nx
        from nx_rune._kernels import threefry as KT
        from fuzz_driver import threefry_reference

        SIZES = [(1 << 17) + 5, 1 << 19, (1 << 20) + 1000]
        REF = {}
        for n in SIZES:
            y0, y1 = threefry_reference(3, 11, np.zeros(n, np.uint32),
                                        np.arange(n, dtype=np.uint32), 20)
            REF[n] = (y0 ^ y1, np.stack([y0, y1], axis=1))
        errors, counts = [], [0] * 4
        stop = threading.Event()

        def drawer(t):
            rng = np.random.default_rng(t)
            try:
                while not stop.is_set():
                    n = SIZES[int(rng.integers(len(SIZES)))]
                    if rng.random() < 0.5:
                        got, want = KT.iota_bits32(3, 11, n), REF[n][0]
                    elif rng.random() < 0.5:
                        got, want = KT.iota_pairs(3, 11, n), REF[n][1]
                    else:
                        got = nx.random.bits(nx.random.key(11), (n,)).numpy()
                        want = bits0[:n]
                    if not np.array_equal(got, want):
                        errors.append(f"thread {t}: wrong values (n={n})")
                    counts[t] += 1
            except BaseException as e:
                errors.append(f"thread {t}: {type(e).__name__}: {e}")

        y0, y1 = threefry_reference(0, 11, np.zeros(SIZES[-1], np.uint32),
                                    np.arange(SIZES[-1], dtype=np.uint32), 20)
        bits0 = y0 ^ y1
        threads = [threading.Thread(target=drawer, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        rng = np.random.default_rng(99)
        resizes = 0
        t0 = time.time()
        while time.time() - t0 < 2.0 and not errors:
            KT.set_num_threads(int(rng.integers(1, 7)))
            resizes += 1
            time.sleep(float(rng.uniform(0, 2e-3)))
        stop.set()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a drawing thread hung"
        assert not errors, errors[:5]
        assert min(counts) > 0, counts
        print("draws", sum(counts), "resizes", resizes)
    """, NX_RUNE_NUM_THREADS=4)
    print("\n" + out.strip())


def test_concurrent_draws_share_the_pool_safely():
    """Two Python threads draw at once (one gets the pool, the other hashes alone), in this
    process; values against the reference."""
    n = (1 << 19) + 77
    want = bits_reference(5, 6, n)
    old = KT.get_num_threads()
    KT.set_num_threads(4)
    results, errors = [], []
    barrier = threading.Barrier(3)

    def work():
        try:
            barrier.wait()
            for _ in range(6):
                results.append(np.array_equal(KT.iota_bits32(5, 6, n), want))
        except BaseException as e:              # noqa: BLE001 (reported below)
            errors.append(e)

    try:
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        KT.set_num_threads(old)
    assert not errors, errors
    assert len(results) == 18 and all(results)


# ---------------------------------------------------------------------------------------------
# kernels: interpreter shutdown and fork
# ---------------------------------------------------------------------------------------------

N_SHUTDOWN = 1 << 20


def test_draws_during_interpreter_shutdown():
    out = run_script(f"""
        import atexit, hashlib, threading, time
        import nx_rune as nx
        from nx_rune._kernels import threefry as KT

        N = {N_SHUTDOWN}
        assert len(KT._span_plan(N, KT.get_num_threads())) >= 4

        def sha(a):
            return hashlib.sha256(a.tobytes()).hexdigest()

        def at_exit():
            print("atexit", sha(KT.iota_bits32(5, 6, N)), flush=True)

        def after_main():
            # non-daemon: runs on while the interpreter shuts down
            while threading.main_thread().is_alive():
                time.sleep(0.002)
            print("late", sha(nx.random.bits(nx.random.key(9), (N,)).numpy()), flush=True)

        atexit.register(at_exit)
        nx.random.bits(nx.random.key(1), (N,))     # the pool is up before shutdown
        threading.Thread(target=after_main).start()
        print("main done", flush=True)
    """, NX_RUNE_NUM_THREADS=4)
    lines = dict(line.rsplit(" ", 1) for line in out.strip().splitlines())
    assert lines["main"] == "done"
    assert lines["late"] == sha(bits_reference(0, 9, N_SHUTDOWN)), out
    assert lines["atexit"] == sha(bits_reference(5, 6, N_SHUTDOWN)), out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_draws_in_a_child_forked_while_another_thread_draws():
    run_script("""
        import os, threading, time
        import numpy as np
        from nx_rune._kernels import threefry as KT
        from fuzz_driver import threefry_reference

        N = (1 << 19) + 3
        y0, y1 = threefry_reference(1, 2, np.zeros(N, np.uint32),
                                    np.arange(N, dtype=np.uint32), 20)
        REF = y0 ^ y1
        stop = threading.Event()

        def busy():
            while not stop.is_set():
                KT.iota_bits32(1, 2, N)

        t = threading.Thread(target=busy)
        t.start()
        rng = np.random.default_rng(3)
        for i in range(6):
            time.sleep(float(rng.uniform(0, 5e-3)))
            pid = os.fork()
            if pid == 0:
                try:
                    ok = all(np.array_equal(KT.iota_bits32(1, 2, N), REF) for _ in range(3))
                    os._exit(0 if ok else 1)
                except BaseException:
                    os._exit(2)
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (i, status)
        stop.set()
        t.join()
        print("ok")
    """, NX_RUNE_NUM_THREADS=4)


def test_set_num_threads_checks_its_argument():
    old = KT.get_num_threads()
    for bad in (0, -3, np.int64(-1)):
        with pytest.raises(ValueError, match="n must be >= 1"):
            KT.set_num_threads(bad)
    for bad in (2.0, True, "4", None):
        with pytest.raises(TypeError, match="n must be an int"):
            KT.set_num_threads(bad)
    assert KT.get_num_threads() == old
    KT.set_num_threads(np.int32(3))
    try:
        assert KT.get_num_threads() == 3 and type(KT.get_num_threads()) is int
    finally:
        KT.set_num_threads(old)


def test_more_threads_than_spans_and_odd_sizes_give_the_reference():
    old = KT.get_num_threads()
    try:
        for threads in (1, 2, 3, 7, 64):
            KT.set_num_threads(threads)
            for n in ((1 << 17) - 1, (1 << 17) + 1023, 5 * (1 << 16) + 1):
                np.testing.assert_array_equal(KT.iota_bits32(9, 8, n), bits_reference(9, 8, n),
                                              err_msg=f"{threads} threads, n={n}")
    finally:
        KT.set_num_threads(old)


# ---------------------------------------------------------------------------------------------
# no_grad shared by threads and tasks
# ---------------------------------------------------------------------------------------------

X = np.linspace(-1.0, 1.5, 5)


def fd_grad(f, x, h=1e-6):
    """Central finite differences of the scalar NumPy function f at x (float64)."""
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# Inside the no_grad block sin(x) is a constant; outside, x * cos(x) is differentiated.
D_OUTSIDE = fd_grad(lambda x: np.sum(x * np.cos(x)), X)


def _in_and_out(x, block, sync=lambda: None):
    """sum(sin(x)) computed inside ``block`` (a no_grad instance), plus sum(x cos x) outside;
    ``sync`` runs inside the block (to interleave threads).  Its gradient is D_OUTSIDE iff the
    block stopped the gradient exactly inside it."""
    with block:
        sync()
        inside = nx.sum(nx.sin(x))
        sync()
    return inside + nx.sum(x * nx.cos(x))


def test_no_grad_instance_shared_by_threads_in_overlapping_order():
    shared = nx.no_grad()
    n = 6
    barrier = threading.Barrier(n)
    results, errors = {}, []

    def worker(k):
        try:
            def sync():
                barrier.wait(30)          # all threads are inside the block at once

            for r in range(4):
                g = nx.grad(lambda x: _in_and_out(x, shared, sync))(nx.asarray(X))
                results[(k, r)] = np.asarray(g)
                assert P.current_interpreter() is None
        except BaseException as e:                  # noqa: BLE001 (reported below)
            errors.append(f"thread {k}: {type(e).__name__}: {e}")
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(results) == 4 * n
    for key, g in results.items():
        np.testing.assert_allclose(g, D_OUTSIDE, rtol=1e-7, atol=1e-9, err_msg=str(key))


def test_no_grad_shared_decorator_and_nesting_in_threads():
    shared = nx.no_grad()

    @nx.no_grad
    def constant_sin(x):
        return nx.sum(nx.sin(x))

    def f(x):
        with shared:
            with shared:                       # re-entrant in one thread
                a = nx.sum(nx.exp(x))
            b = nx.sum(nx.cos(x))              # still inside the outer block
        return a + b + constant_sin(x) + nx.sum(x * nx.cos(x))

    with ThreadPoolExecutor(4) as pool:
        grads = list(pool.map(lambda _: np.asarray(nx.grad(f)(nx.asarray(X))), range(24)))
    for g in grads:
        np.testing.assert_allclose(g, D_OUTSIDE, rtol=1e-7, atol=1e-9)
    assert P.current_interpreter() is None


def test_no_grad_instance_shared_by_asyncio_tasks():
    """Six tasks (run inside grad: they inherit its context) enter one instance and exit it in
    another order, each awaiting inside; plus an ``async def`` decorated with no_grad."""
    shared = nx.no_grad()
    events = []

    @nx.no_grad
    async def constant_sin(x):
        await asyncio.sleep(0)
        s = nx.sum(nx.sin(x))
        await asyncio.sleep(0)
        return s * 2.0

    left = None

    async def task(x, k):
        with shared:
            events.append(("enter", k))
            await asyncio.sleep(0)                     # the others enter meanwhile
            if k < 5:                                  # leave after task k + 1: in reverse order
                await left[k + 1].wait()
            inside = nx.sum(nx.sin(x))
            if k % 2:
                with shared:                           # re-entrant inside a task
                    await asyncio.sleep(0)
                    inside = inside + nx.sum(nx.exp(x))
                await asyncio.sleep(0)
                inside = inside * nx.sum(nx.cos(x))    # still in the outer block
            assert isinstance(P.current_interpreter(), NoGradInterpreter)
            events.append(("exit", k))
        left[k].set()
        assert not isinstance(P.current_interpreter(), NoGradInterpreter)
        outside = nx.sum(x * nx.cos(x))
        return inside + outside + await constant_sin(x)

    def f(x):
        async def main():
            nonlocal left
            left = [asyncio.Event() for _ in range(6)]
            return await asyncio.gather(*(task(x, k) for k in range(6)))
        parts = asyncio.run(main())
        return sum(parts[1:], parts[0]) / 6.0

    g = nx.grad(f)(nx.asarray(X))
    np.testing.assert_allclose(np.asarray(g), D_OUTSIDE, rtol=1e-7, atol=1e-9)
    # every task was inside before the first left, and they left in reverse order
    assert [e for e, _ in events[:6]] == ["enter"] * 6
    assert [k for e, k in events[6:]] == [5, 4, 3, 2, 1, 0]
    assert P.current_interpreter() is None


def test_no_grad_exit_without_enter_in_this_context_raises():
    block = nx.no_grad()
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        block.__exit__(None, None, None)
    block.__enter__()
    errors = []

    def other_thread():
        try:
            block.__exit__(None, None, None)
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert len(errors) == 1 and "another" in str(errors[0])
    assert isinstance(P.current_interpreter(), NoGradInterpreter)   # still ours to exit
    block.__exit__(None, None, None)
    assert P.current_interpreter() is None


# ---------------------------------------------------------------------------------------------
# tracers in worker threads
# ---------------------------------------------------------------------------------------------

def f_np(x):
    return np.sum(np.sin(x) * x ** 2)


def f_nx(x):
    return nx.sum(nx.sin(x) * x ** 2)


D_F = fd_grad(f_np, X)


def _in_thread(fn, *args):
    """fn(*args) in a new thread; returns its result or raises its exception here."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:                   # noqa: BLE001 (re-raised below)
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp"])
def test_a_tracer_in_a_worker_thread_raises_a_clear_error(transform):
    def f(x):
        return _in_thread(f_nx, x)

    x = nx.asarray(X)
    with pytest.raises(UnexpectedTracerError) as info:
        if transform == "grad":
            nx.grad(f)(x)
        elif transform == "jvp":
            nx.jvp(f, (x,), (nx.ones_like(x),))
        else:
            nx.vjp(f, x)
    msg = str(info.value)
    assert "thread" in msg and "contextvars.copy_context()" in msg and ".run(" in msg, msg
    assert "still running" in msg
    assert P.current_interpreter() is None


def test_a_tracer_through_a_thread_pool_raises_the_same_error():
    def f(x):
        with ThreadPoolExecutor(2) as pool:
            return pool.submit(f_nx, x).result()

    with pytest.raises(UnexpectedTracerError, match="copy_context"):
        nx.grad(f)(nx.asarray(X))


def test_copy_context_run_in_the_thread_gives_the_gradient():
    def f(x):
        return _in_thread(contextvars.copy_context().run, f_nx, x)

    g = nx.grad(f)(nx.asarray(X))
    np.testing.assert_allclose(np.asarray(g), D_F, rtol=1e-7, atol=1e-9)
    # forward mode, and a pool with one context copy per task
    def f_pool(x):
        with ThreadPoolExecutor(3) as pool:
            parts = [pool.submit(contextvars.copy_context().run, f_nx, x * c)
                     for c in (1.0, 2.0, 3.0)]
            return sum(p.result() for p in parts)

    v = np.linspace(0.5, -0.5, X.size)
    _, t = nx.jvp(f_pool, (nx.asarray(X),), (nx.asarray(v),))
    d = sum(c * fd_grad(f_np, c * X) for c in (1.0, 2.0, 3.0))
    np.testing.assert_allclose(float(t), d @ v, rtol=1e-7)


def test_eight_threads_record_on_one_tape_at_once():
    """Threads in copies of one context record on the same tape concurrently; a tiny switch
    interval makes them interleave inside the recording (it used to mix up tape positions:
    wrong gradients or errors in the backward pass)."""
    cs = [0.3 + 0.1 * k for k in range(8)]

    def piece(x, k):
        y = x * cs[k]
        for _ in range(150):
            y = y * 0.99 + x
        return nx.sum(y) * (k + 1.0)

    def f(x):
        with ThreadPoolExecutor(8) as pool:
            parts = [pool.submit(contextvars.copy_context().run, piece, x, k) for k in range(8)]
            return sum(p.result() for p in parts)

    def f_np_pieces(x):
        total = 0.0
        for k in range(8):
            y = x * cs[k]
            for _ in range(150):
                y = y * 0.99 + x
            total += np.sum(y) * (k + 1.0)
        return total

    want = fd_grad(f_np_pieces, X)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        grads = [np.asarray(nx.grad(f)(nx.asarray(X))) for _ in range(6)]
    finally:
        sys.setswitchinterval(old)
    for g in grads:
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_a_tracer_of_a_finished_transformation_in_a_thread_still_says_leaked():
    box = {}

    def f(x):
        box["x"] = x
        return nx.sum(x)

    nx.grad(f)(nx.asarray(X))
    with pytest.raises(UnexpectedTracerError, match="finished grad transformation"):
        _in_thread(f_nx, box["x"])
