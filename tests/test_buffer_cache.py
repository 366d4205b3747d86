"""Freed large buffers are kept for reuse (nx_rune/_kernels/buffer.pyx's cache): the next
buffer of about the same size takes the block back, already mapped, so a loop that makes one
large output a step pays the first touch of its pages once.  The tests check what it gives
back (the right size, never a zeroed buffer's, never more than the limit), that reused memory
yields the same values as fresh memory, and the limit's knobs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import buffer
from nx_rune._kernels.buffer import Buffer

MIB = 1 << 20


@pytest.fixture(autouse=True)
def fresh_cache():
    saved = buffer.set_cache_limit(256 * MIB)
    buffer.clear_cache()
    yield
    buffer.set_cache_limit(saved)
    buffer.clear_cache()


def test_a_freed_large_block_is_reused_by_the_next_buffer_of_its_size():
    b = Buffer(2 * MIB, np.float32)                 # 8 MiB
    address = b.address
    del b
    assert buffer.cached_bytes() >= 8 * MIB
    again = Buffer(2 * MIB, np.float32)
    assert again.address == address
    assert buffer.cached_bytes() == 0


def test_small_buffers_and_much_smaller_requests_do_not_take_a_kept_block():
    b = Buffer(4 * MIB, np.float32)                 # 16 MiB kept
    del b
    small = Buffer(1000, np.float32)
    assert buffer.cached_bytes() >= 16 * MIB         # small ones never come from the cache
    half = Buffer(2 * MIB, np.float32)               # 8 MiB: would waste half the block
    assert buffer.cached_bytes() >= 16 * MIB
    del small, half



def test_a_block_keeps_its_own_length_through_a_smaller_buffer():
    big = Buffer(9 * MIB // 4, np.float32)                  # 9 MiB
    address, length = big.address, big.nbytes
    del big
    smaller = Buffer(17 * MIB // 8, np.float32)             # 8.5 MiB: takes the 9 MiB block
    assert smaller.address == address
    del smaller
    assert buffer.cached_bytes() >= length                  # kept at its real length
    again = Buffer(9 * MIB // 4, np.float32)                # so 9 MiB fits it again
    assert again.address == address

def test_a_zeroed_buffer_never_takes_a_used_block():
    b = Buffer(2 * MIB, np.float64)
    np.asarray(b).view(np.float64)[:] = 7.0          # leave values behind
    del b
    z = Buffer(2 * MIB, np.float64, zero=True)
    assert not np.asarray(z).any()


def test_the_limit_bounds_what_is_kept_and_zero_frees_it():
    buffer.set_cache_limit(20 * MIB)
    blocks = [Buffer(MIB, np.float64) for _ in range(4)]    # 8 MiB each
    del blocks
    assert 0 < buffer.cached_bytes() <= 20 * MIB
    previous = buffer.set_cache_limit(0)
    assert previous == 20 * MIB
    assert buffer.cached_bytes() == 0
    b = Buffer(MIB, np.float64)
    del b
    assert buffer.cached_bytes() == 0                # limit 0: nothing is kept
    with pytest.raises(ValueError, match="nbytes"):
        buffer.set_cache_limit(-1)


def test_at_most_four_blocks_are_kept_the_oldest_going_first():
    blocks = [Buffer(MIB + k * 4096, np.float64) for k in range(6)]
    sizes = [b.nbytes for b in blocks]
    while blocks:                                    # freed in order: 0 first, 5 last
        del blocks[0]
    kept = buffer.cached_bytes()
    assert kept <= sum(sizes[-4:]) + 4 * 64 and kept >= sum(sizes[-4:])


def test_results_in_reused_memory_equal_numpy():
    rng = np.random.default_rng(0)
    a = rng.random((1024, 2048), dtype=np.float32)          # 8 MiB
    t = nx.asarray(a)
    for _ in range(3):                                       # later rounds reuse blocks
        np.testing.assert_array_equal(np.asarray(nx.copy(t.T)), a.T)
        np.testing.assert_array_equal(np.asarray(t.T + 1.0), a.T + np.float32(1.0))
    key = nx.random.PRNGKey(3)
    first = np.asarray(nx.random.normal(key, (1 << 21,), dtype=nx.float32)).copy()
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(nx.random.normal(key, (1 << 21,),
                                                                  dtype=nx.float32)), first)


def test_kernel_outputs_take_kept_blocks():
    key = nx.random.PRNGKey(0)
    y = nx.random.uniform(key, (1 << 21,), dtype=nx.float32)       # 8 MiB
    del y
    kept = buffer.cached_bytes()
    assert kept >= 8 * MIB
    y = nx.random.uniform(key, (1 << 21,), dtype=nx.float32)         # takes the block back
    assert buffer.cached_bytes() < kept
    assert y.shape == (1 << 21,)
    empty = buffer.empty((3, 4), np.float32)                       # small: NumPy's own
    assert empty.shape == (3, 4) and empty.dtype == np.float32
    large = buffer.empty(1 << 21, np.int64)
    assert large.shape == (1 << 21,) and isinstance(large.base, Buffer)


@pytest.mark.parametrize("value, ok", [("0", True), ("64", True), ("lots", False)])
def test_the_environment_sets_the_starting_limit(value, ok):
    code = ("from nx_rune._kernels import buffer\n"
            "print(buffer.set_cache_limit(0))\n")
    env = dict(os.environ, NX_RUNE_BUFFER_CACHE_MB=value)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if ok:
        assert run.returncode == 0, run.stderr
        assert int(run.stdout) == int(value) * MIB
    else:
        assert run.returncode != 0
        assert "NX_RUNE_BUFFER_CACHE_MB" in run.stderr
