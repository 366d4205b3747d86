# The kernels' thread pool (see pool.pyx): nogil span functions run on up to num_threads()
# threads.  One process-wide pool; a call owns it between pool_acquire() and pool_release().

# fn(ctx, lo, hi): one span [lo, hi) of a job; runs without the GIL, on any thread.
ctypedef void (*span_fn)(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil

# With the GIL: 1 if this call now owns the pool, 0 if another call does (or no threads).
cdef int pool_acquire() noexcept
# With the GIL, by the owner once pool_run returned.
cdef void pool_release() noexcept
# The owner's run, without the GIL: fn over the `count` spans [k * step, min((k + 1) * step,
# n)) on up to count - 1 workers and this thread; returns when every span is done.
cdef void pool_run(span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                   Py_ssize_t count) noexcept nogil
# Whether this platform has the pool at all (otherwise pool_run runs one span [0, n)).
cdef bint pool_has_threads() noexcept
# With the GIL (released meanwhile): every span, on up to `threads` threads of the pool if
# it is free, else in this thread.  Spans are claimed one at a time: more spans than threads
# let the others take over the share of a thread the scheduler holds up.
cdef void run_spans(span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                    Py_ssize_t count, Py_ssize_t threads) noexcept
# The thread count the next calls use (set_num_threads, env NX_RUNE_NUM_THREADS).
cdef Py_ssize_t num_threads() noexcept
