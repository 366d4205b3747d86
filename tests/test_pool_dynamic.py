"""The kernels' pool splits work dynamically: every thread claims spans until none is left.

Results do not depend on the thread count (each span computes the same elements as one thread
would), a thread the scheduler holds up delays a job by at most the span it holds, kernels run
from several Python threads at once, and an exception raised while a threaded kernel runs does
not strand the pool.  Expected values come from NumPy.
"""
import signal
import threading
import time

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import gather as gather_module
from nx_rune._kernels import pool, strided
from nx_rune._kernels import threefry as KT
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray

COUNTS = (1, 2, 3, 4)


@pytest.fixture
def threads():
    saved = pool.get_num_threads()
    yield pool.set_num_threads
    pool.set_num_threads(saved)


def _rng():
    return np.random.default_rng(30)


def _cases():
    """name -> (nx_rune callable, NumPy's result): kernels large enough to run threaded."""
    rng = _rng()
    a = rng.random((1536, 1100), dtype=np.float32)          # 6.4 MiB: a threaded copy
    d = rng.random((700, 1200))
    t = nx.asarray(a)
    x, i = rng.random((600, 500)), rng.integers(-500, 500, (600, 500))
    ti = rng.integers(0, 100, (400, 500))
    tu = rng.integers(-50, 50, (400, 500)).astype(np.int64)
    hi = rng.integers(0, 3000, 2**18)
    hu = rng.integers(-9, 9, 2**18).astype(np.int64)
    want_add2 = np.zeros((400, 100), np.int64)
    np.add.at(want_add2, (np.arange(400)[:, None], ti), tu)
    want_hist = np.zeros(3000, np.int64)
    np.add.at(want_hist, hi, hu)
    return {
        "transposed copy": (lambda: nx.contiguous(t.T).numpy(), np.ascontiguousarray(a.T)),
        "flipped f64 copy": (lambda: nx.contiguous(nx.asarray(d)[::-1, ::2]).numpy(),
                             np.ascontiguousarray(d[::-1, ::2])),
        "gather axis 1": (lambda: gather_module.gather(x, i, 1),
                          np.take_along_axis(x, i % 500, 1)),
        "scatter-add axis 1": (lambda: gather_module.scatter(np.zeros((400, 100), np.int64),
                                                             ti, tu, 1, "add"), want_add2),
        "scatter-add 1-D (private targets)": (
            lambda: gather_module.scatter(np.zeros(3000, np.int64), hi, hu, 0, "add"),
            want_hist),
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_threaded_kernels_match_numpy_for_every_thread_count(threads, name):
    fn, want = _cases()[name]
    for n in COUNTS:
        threads(n)
        got = fn()
        assert got.dtype == want.dtype and np.array_equal(got, want), (name, n)


def test_normal_draw_bits_do_not_depend_on_the_thread_count(threads):
    key = nx.random.key(5)
    draws = []
    for n in COUNTS:
        threads(n)
        draws.append(nx.random.normal(key, (2**20 + 333,), dtype=nx.float32).numpy())
        draws.append(KT.iota_bits32(3, 4, 2**20 + 333, start=2**32 - 5000))
    for k in range(2, len(draws)):
        assert np.array_equal(draws[k], draws[k % 2]), k
    assert np.isfinite(draws[0]).all() and abs(draws[0].mean()) < 0.01


def test_large_draws_are_cut_into_several_spans_per_thread():
    # a core the scheduler holds up then costs one short span, not half the draw
    for n_threads in (2, 3, 4):
        plan = KT._span_plan(2**24, n_threads)
        assert len(plan) >= 4 * n_threads
        assert plan[0][0] == 0 and plan[-1][1] == 2**24
        assert all(b == c for (_, b), (c, _) in zip(plan, plan[1:]))
        assert all(lo % 1024 == 0 for lo, _ in plan)
    assert len(KT._span_plan(2**15, 4)) == 1                 # small: one thread


@pytest.mark.parametrize("n_threads", [2, 3, 4])
def test_a_held_up_thread_keeps_only_the_span_it_claimed(n_threads):
    spans, stall_s = 32, 0.25
    start = time.perf_counter()
    caller = pool._probe_stall(spans, n_threads, stall_us=int(stall_s * 1e6), span_us=2000)
    elapsed = time.perf_counter() - start
    if n_threads == 2:
        # the one worker sleeps in its first span: the caller runs every other span
        assert caller >= spans - 1
    assert caller >= 1
    # the job lasts about the stall, not the stall plus the held-up thread's share of spans
    assert elapsed < stall_s + 0.5 * spans * 0.002 + 0.2


def test_kernels_in_two_python_threads_at_once(threads):
    threads(2)
    cases = _cases()
    errors = []

    def work(names):
        try:
            for _ in range(3):
                for name in names:
                    fn, want = cases[name]
                    assert np.array_equal(fn(), want), name
        except BaseException as e:          # reported by the main thread
            errors.append(e)

    names = sorted(cases)
    workers = [threading.Thread(target=work, args=(names,)),
               threading.Thread(target=work, args=(names[::-1],))]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert not any(w.is_alive() for w in workers)
    assert not errors, errors


def test_a_bad_index_in_a_threaded_gather_raises_and_the_pool_keeps_working(threads):
    threads(4)
    x = _rng().random((600, 500))
    i = _rng().integers(0, 500, (600, 500))
    i[417, 3] = 500
    with pytest.raises(IndexError):
        gather_module.gather(x, i, 1)
    i[417, 3] = 2
    assert np.array_equal(gather_module.gather(x, i, 1), np.take_along_axis(x, i, 1))


class _Interrupt(Exception):
    pass


def test_exceptions_from_a_signal_handler_during_threaded_copies_do_not_deadlock(threads):
    threads(2)
    a = _rng().random((2048, 1024), dtype=np.float32)     # 8 MiB: threaded
    src = buffer_from_ndarray(a.reshape(-1))
    dst = Buffer(a.size, np.float32)
    want = np.ascontiguousarray(a.T)
    hits = 0

    armed = [False]     # raise only inside the try below (the timer fires anywhere)

    def handler(signum, frame):
        if armed[0]:
            armed[0] = False
            raise _Interrupt

    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.0007, 0.0007)
        deadline = time.perf_counter() + 3.0
        while time.perf_counter() < deadline and hits < 20:
            try:
                armed[0] = True
                strided.copy_strided(src, 0, (1024, 2048), (1, 1024), dst, 0, (2048, 1))
                armed[0] = False
            except _Interrupt:
                hits += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)
    assert hits > 0
    strided.copy_strided(src, 0, (1024, 2048), (1, 1024), dst, 0, (2048, 1))
    assert np.array_equal(dst.as_ndarray((1024, 2048), (2048, 1), 0), want)


def test_a_held_up_worker_makes_the_next_jobs_run_on_the_caller_for_a_while():
    """When the caller waits for a held-up worker longer than it worked itself, the pool runs
    the next jobs on the caller alone for a while (the same spans, the same results): a busy
    core then costs one stall per back-off period, not one per job."""
    pool._end_backoff()
    before, _ = pool._backoffs()
    pool._probe_stall(8, 2, stall_us=100000, span_us=1000)    # the caller waits ~100 ms
    count, active = pool._backoffs()
    assert count == before + 1 and active
    key = nx.random.key(3)
    backing_off = nx.random.normal(key, (2**20,), dtype=nx.float32).numpy()
    pool._end_backoff()
    assert pool._backoffs()[1] is False
    threaded = nx.random.normal(key, (2**20,), dtype=nx.float32).numpy()
    assert np.array_equal(backing_off, threaded)
    # the probes end a back-off first: their workers run again
    pool._probe_stall(8, 2, stall_us=100000, span_us=1000)
    assert pool._probe_threads(8, 2, sleep_us=2000) == 2


def _wait_out_backoff(extra_s=0.0):
    left, _ = pool._backoff_ns()
    time.sleep(left / 1e9 + 0.005 + extra_s)


def test_a_worker_late_again_right_after_a_back_off_doubles_the_next_one():
    """A core that stays busy (another process running all along) makes a worker late again
    as soon as a back-off ends: each such retry costs a whole stall, so the next back-off is
    twice as long (up to a bound); a late worker long after the last back-off ended (a passing
    load) starts again from the first length."""
    pool._end_backoff()
    pool._probe_stall(8, 2, stall_us=100000, span_us=1000)
    left, first = pool._backoff_ns()
    assert 0 < left <= first
    lengths = [first]
    for _ in range(4):
        _wait_out_backoff()
        pool._probe_stall(8, 2, stall_us=100000, span_us=1000, end_backoff=False)
        lengths.append(pool._backoff_ns()[1])
    assert lengths[:4] == [first, 2 * first, 4 * first, 8 * first]
    assert lengths[4] == 8 * first                    # the bound: 8 x the first length
    # a late worker more than the first length after the back-off's end: the first length
    _wait_out_backoff(extra_s=first / 1e9 + 0.05)
    pool._probe_stall(8, 2, stall_us=100000, span_us=1000, end_backoff=False)
    assert pool._backoff_ns()[1] == first
    pool._end_backoff()
    assert pool._backoff_ns() == (0, first)
    assert pool._probe_threads(8, 2, sleep_us=2000) == 2
