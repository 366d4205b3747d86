"""Fuzzing of every kernel and primitive (and much of the front end) with bad arguments.

The calls run in a separate process (``tests/fuzz_driver.py`` under ``python -X
faulthandler``), so a segfault or a hang shows up here as a failure that names the call,
instead of killing pytest.  Pass criterion, per call: NumPy's (or the reference model's)
answer, or a Python exception from ``fuzz_driver.ACCEPTED`` with a message.

* ``test_fuzz_short``: a few thousand calls, in the default suite (a few seconds);
  ``test_fuzz_issue_13_targets_short``: 1,500 calls of the five targets of issue 13 (containers
  of tracers, NumPy on tracers, huge sizes, in-place writes, the Array API functions).
* ``test_fuzz_long`` (``python -m pytest -m fuzz tests/test_fuzz.py``): 120,000 calls in four
  processes (two at a time).  ``NX_RUNE_FUZZ_CALLS``, ``NX_RUNE_FUZZ_SEED`` and
  ``NX_RUNE_FUZZ_JOBS`` override the size, seed and parallelism; ``NX_RUNE_FUZZ_REPORT`` names a
  JSON file for the merged report.

The rest of the file holds regression tests for the bugs the fuzzer found (crash-prone ones run
in a subprocess too).
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune._kernels import buffer as KB
from nx_rune._kernels import fold as KF
from nx_rune._kernels import gather as KG
from nx_rune._kernels import strided as KS
from nx_rune._kernels import view as KV

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DRIVER = os.path.join(HERE, "fuzz_driver.py")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_driver(calls, seed, start=0, timeout=1800, extra=()):
    """Run the driver in its own process; returns its report, or fails naming the call that
    crashed or hung."""
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "report.json")
        progress_path = os.path.join(tmp, "progress")
        cmd = [sys.executable, "-X", "faulthandler", DRIVER, "--calls", str(calls), "--seed",
               str(seed), "--start", str(start), "--json", report_path, "--progress",
               progress_path, *extra]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=_env(), cwd=ROOT)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"fuzz driver (seed {seed}) did not finish in {timeout} s "
                        f"(at call {_progress(progress_path)})\n{(e.stderr or '')[-3000:]}")
        if not os.path.exists(report_path):
            where = _progress(progress_path)
            what = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else \
                "hung (faulthandler timeout)" if "Timeout" in proc.stderr else \
                f"exited with {proc.returncode}"
            call = where.split()[0] if where else "?"
            pytest.fail(f"fuzz driver {what} at call {where!r} (seed {seed}); reproduce with\n"
                        f"  python -X faulthandler {DRIVER} --seed {seed} --start {call} "
                        f"--calls 1 --verbose\nstderr:\n{proc.stderr[-4000:]}")
        with open(report_path) as f:
            report = json.load(f)
    report["stdout"] = proc.stdout
    return report


def _progress(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _check(report):
    fails = report["failures"]
    lines = [f"call {f['call']} [{f['target']}] {f['kind']}: {f.get('desc', '')}\n"
             f"    {f['error']}" for f in fails[:15]]
    assert not fails, (f"{len(fails)} fuzz failures (seed {report['seed']}):\n" +
                       "\n".join(lines))


def test_fuzz_short():
    calls = 4000
    report = run_driver(calls, seed=20240611, timeout=300)
    print(report["stdout"])
    assert report["calls"] == calls
    # the run exercised both outcomes of every target
    for name, st in report["targets"].items():
        assert st["calls"] > 0, name
    assert report["checked"] > calls // 3
    assert sum(report["raised"].values()) > calls // 3
    # the issue-13 targets checked results (values and derivatives) and saw refusals
    for name in ISSUE_13_TARGETS:
        st = report["targets"][name]
        assert st["checked"] > 10 and sum(st["raised"].values()) > 10, (name, st)
    assert report["targets"]["NumPy on tracers"]["raised"].get("TracerArrayConversionError")
    _check(report)


ISSUE_13_TARGETS = ("containers of tracers", "NumPy on tracers", "huge sizes", "in-place writes",
                    "Array API functions")


def test_fuzz_issue_13_targets_short():
    """The five issue-13 targets alone, 1,500 calls (they are a quarter of a mixed run)."""
    report = run_driver(1500, seed=13, timeout=300,
                        extra=[a for n in ISSUE_13_TARGETS for a in ("--only", n)])
    assert set(report["targets"]) == set(ISSUE_13_TARGETS)
    _check(report)


def _merge(reports):
    out = {"calls": 0, "returned": 0, "checked": 0, "raised": {}, "failures": [],
           "stricter_than_reference": 0, "seconds": 0.0, "seeds": []}
    for r in reports:
        for k in ("calls", "returned", "checked", "stricter_than_reference"):
            out[k] += r[k]
        out["seconds"] = max(out["seconds"], r["seconds"])
        out["seeds"].append(r["seed"])
        for k, v in r["raised"].items():
            out["raised"][k] = out["raised"].get(k, 0) + v
        out["failures"] += r["failures"]
    return out


@pytest.mark.fuzz
def test_fuzz_long():
    total = int(os.environ.get("NX_RUNE_FUZZ_CALLS", "120000"))
    seed = int(os.environ.get("NX_RUNE_FUZZ_SEED", "1"))
    jobs = int(os.environ.get("NX_RUNE_FUZZ_JOBS", "2"))
    chunks = 4
    per = -(-total // chunks)
    with ThreadPoolExecutor(jobs) as pool:
        reports = list(pool.map(lambda k: run_driver(per, seed + k, timeout=3600),
                                range(chunks)))
    merged = _merge(reports)
    summary = (f"fuzz: {merged['calls']} calls (seeds {merged['seeds']}): "
               f"{merged['returned']} returned, {merged['checked']} checked against the "
               f"reference, raised {merged['raised']}, "
               f"{merged['stricter_than_reference']} refused where the reference answers; "
               f"{len(merged['failures'])} failures")
    print(summary)
    out = os.environ.get("NX_RUNE_FUZZ_REPORT")
    if out:
        with open(out, "w") as f:
            json.dump({"summary": summary, **merged,
                       "targets": [r["targets"] for r in reports]}, f, indent=1)
    assert merged["calls"] >= total
    _check({**merged, "seed": merged["seeds"]})


# ---------------------------------------------------------------------------------------------
# regressions found by the fuzzer
# ---------------------------------------------------------------------------------------------

def run_isolated(code):
    """Run ``code`` in a fresh interpreter: a segfault fails this test, not the whole run."""
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_unfold_fold_huge_stride_and_padding_raise_instead_of_crashing():
    # was: a segfault (64-bit overflow in the window bounds -> out-of-bounds reads/writes)
    out = run_isolated("""
        import numpy as np
        from nx_rune._kernels import fold as F
        x = np.arange(1, 4, dtype=np.float32).reshape(1, 1, 3)
        for st, pd in [(2**62, 2**63 - 1), (2**62, 2**63 - 2**61), (2**61, 2**63 - 5)]:
            try:
                F.unfold(x, kernel_size=1, stride=st, padding=pd)
                print("returned")
            except ValueError as e:
                assert "too large" in str(e), e
            try:
                F.fold(np.ones((1, 1, 4), np.float32), (3,), kernel_size=1, stride=st,
                       padding=pd)
                print("returned")
            except ValueError as e:
                assert "too large" in str(e) or "window" in str(e) or "L =" in str(e), e
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_unfold_one_window_with_a_huge_stride_still_works():
    x = np.arange(18.0).reshape(2, 1, 3, 3)
    got = KF.unfold(x, (1, 2), 2**62, 1, 0)      # one window position per axis
    np.testing.assert_array_equal(got, KF.unfold(x, (1, 2), 5, 1, 0))


def test_copy_strided_checks_both_buffers():
    # was: a segfault (the kernel trusted its caller's offsets and strides)
    run_isolated("""
        import numpy as np, pytest
        from nx_rune._kernels import strided as S
        from nx_rune._kernels.buffer import Buffer
        b = Buffer(4, np.float32)
        for args in [(b, 10**6, (4,), (1,), b, 0, (1,)), (b, 0, (4,), (1,), b, 1, (1,)),
                     (b, 0, (2,), (-1,), b, 0, (1,)), (b, 0, (2, 2), (2**62, 1), b, 0, (2, 1)),
                     (b, 3, (2,), (-2**63 + 1,), b, 0, (1,))]:
            with pytest.raises(ValueError, match="outside the buffer"):
                S.copy_strided(*args)
        print("ok")
    """)
    src = KB.buffer_from_ndarray(np.arange(6, dtype=np.int16))
    dst = KB.Buffer(6, np.int16)
    KS.copy_strided(src, 5, (2, 3), (-3, -1), dst, 0, (3, 1))
    np.testing.assert_array_equal(dst.as_ndarray((6,), (1,), 0), np.arange(6)[::-1])


def test_masked_view_outside_its_buffer_raises():
    buf = KB.Buffer(4, np.float32)
    bad = KV.View((3,), (100,), 0, mask=((1, 2),), fill=0)
    with pytest.raises(ValueError, match="outside the buffer"):
        KV.materialize(buf, bad)
    with pytest.raises(ValueError):
        nx.Tensor(buf, bad).numpy()


def test_as_ndarray_refuses_offsets_that_would_wrap():
    # was: offset * itemsize wrapped around 2**64 and read element 0
    b = KB.buffer_from_ndarray(np.arange(10, dtype=np.int64))
    for off in (2**62, -2**63, 10, -1):
        with pytest.raises((ValueError, OverflowError)):
            b.as_ndarray((1,), (3,), off)
    # and an empty buffer has nothing to show
    with pytest.raises(ValueError, match="empty"):
        KB.Buffer(0, np.bool_).as_ndarray((4, 3), (0, 0), 1)
    assert KB.Buffer(0, np.bool_).as_ndarray((0, 3), (3, 1), 0).shape == (0, 3)


def test_kernels_refuse_long_double():
    # was: complex256 gathered/unfolded as half items (garbage), float128 scatter KeyError
    a = np.arange(6).astype(np.clongdouble).reshape(2, 3)
    with pytest.raises(TypeError, match="dtype"):
        KG.gather(a, np.zeros((2, 3), np.int64), 1)
    with pytest.raises(TypeError, match="dtype"):
        KG.scatter(np.zeros(3, np.longdouble), np.zeros(1, np.int64), 1.0, 0, "add")
    with pytest.raises(TypeError, match="dtype"):
        KF.unfold(np.zeros((1, 1, 4), np.clongdouble), 2)
    with pytest.raises(TypeError, match="dtype"):
        KF.fold(np.ones((1, 2, 3), np.longdouble), (4,), 2)


def test_assign_from_an_overlapping_view():
    # was: silently wrong (the strided copy overwrote elements it had not read yet)
    x = nx.array(np.arange(8, dtype=np.float32))
    nx.assign(x, nx.flip(x))
    np.testing.assert_array_equal(x.numpy(), np.arange(8)[::-1])
    m = nx.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    nx.assign(m, m.T)
    np.testing.assert_array_equal(m.numpy(), np.arange(16).reshape(4, 4).T)
    v = nx.array(np.arange(8, dtype=np.int32))
    nx.assign(v[1:], v[:-1])
    np.testing.assert_array_equal(v.numpy(), [0, 0, 1, 2, 3, 4, 5, 6])


def test_assign_primitive_refuses_mismatched_dtypes():
    # was: the bits of an int32 copied into a float32 tensor
    dst = nx.zeros((3,), nx.float32)
    with pytest.raises(TypeError, match="dtype"):
        P.assign_p.bind(dst, nx.asarray(np.arange(3, dtype=np.int32)))
    nx.assign(dst, np.arange(3, dtype=np.int32))          # the front end casts
    np.testing.assert_array_equal(dst.numpy(), [0, 1, 2])


def test_scan_primitive_unknown_op_is_a_value_error():
    with pytest.raises(ValueError, match="op"):
        P.associative_scan_p.bind(nx.zeros(3), axis=0, op="bogus")


def test_float_sizes_are_refused_not_truncated():
    # was: int(1.5) == 1 silently
    x = nx.arange(12).reshape(3, 4)
    with pytest.raises(TypeError):
        nx.shrink(x, [(0.5, 2), (0, 4)])
    with pytest.raises(TypeError):
        nx.as_strided(x, (2,), (1.5,))
    with pytest.raises(TypeError):
        P.pad_p.bind(x, config=((1.5, 1), (0, 0)), fill=0)
    with pytest.raises(TypeError):
        KV.View((3,), ("1",))


def test_views_with_more_than_2_63_elements_are_refused():
    # was: a Tensor of shape (2**63 + 3, 2**63) (NumPy refuses such shapes)
    with pytest.raises(ValueError, match="too many elements"):
        nx.pad(nx.zeros((3, 0), nx.int64), 2**62)
    with pytest.raises(ValueError, match="too many elements"):
        nx.broadcast_to(nx.zeros(3), (2**40, 2**40, 3))
    with pytest.raises(ValueError, match="too many elements"):
        nx.as_strided(nx.zeros(3), (2**40, 2**40), (0, 0))
    assert nx.broadcast_to(nx.zeros(3), (2**20, 2**20, 3)).shape == (2**20, 2**20, 3)
    # empty, but the other sizes multiply past 2**63 (NumPy refuses these too)
    with pytest.raises(ValueError, match="too many elements"):
        nx.reshape(nx.zeros((3, 0)), (-1, 2, 2**63 - 1))
    with pytest.raises(ValueError, match="too many elements"):
        nx.broadcast_to(nx.zeros(()), (0, 4, 2**62))
    # NumPy's rule: the nonzero sizes times the item size must fit in a signed word, even for
    # an empty view (every tensor can then be read as an ndarray)
    with pytest.raises(ValueError, match="too large to address"):
        nx.broadcast_to(nx.zeros(()), (0, 4, 2**60))
    with pytest.raises(ValueError, match="too large to address"):
        nx.broadcast_to(nx.zeros((1, 0)), (2**62, 0))
    with pytest.raises(ValueError):
        np.broadcast_to(np.zeros((1, 0)), (2**62, 0))
    assert nx.broadcast_to(nx.zeros(()), (0, 4, 2**58)).shape == (0, 4, 2**58)
    assert nx.broadcast_to(nx.zeros(()), (0, 4, 2**58)).numpy().shape == (0, 4, 2**58)


def test_expand_primitive_checks_new_leading_axes():
    # was: a Tensor of shape (-1, 3)
    with pytest.raises(ValueError, match="negative"):
        P.expand_p.bind(nx.zeros(3), shape=(-1, 3))


def test_squeeze_repeated_axis():
    with pytest.raises(ValueError, match="repeated"):
        nx.squeeze(nx.zeros((1, 4)), (0, 0))


def test_argmax_of_an_empty_tensor_along_a_nonempty_axis():
    # as NumPy: only an empty reduced axis has no arg-extremum
    x = nx.zeros((0, 3, 1), nx.uint64)
    assert nx.argmin(x, 1, keepdims=True).shape == (0, 1, 1)
    assert nx.argmax(x, 1).shape == (0, 1)
    with pytest.raises(ValueError):
        nx.argmax(x, 0)
