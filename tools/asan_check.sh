#!/usr/bin/env bash
# Build nx_rune's kernels with AddressSanitizer in a separate copy of the working tree and run
# the fuzz driver and the kernel tests under it.  The in-place .so files of the checkout are
# left alone (others use them).  See docs/reliability.md.
#
#   tools/asan_check.sh                 # 20,000 fuzz calls + kernel/movement/property tests
#   NX_RUNE_ASAN_CALLS=100000 tools/asan_check.sh
#
# Environment: NX_RUNE_ASAN_TREE (default /tmp/asan-tree), NX_RUNE_ASAN_CALLS (20000),
# NX_RUNE_ASAN_SEED (7), NX_RUNE_ASAN_TESTS (the pytest files to run; "" for none),
# PYTHON (python).  Exit status: 0 when the build, the fuzz run and the tests are all clean.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TREE="${NX_RUNE_ASAN_TREE:-/tmp/asan-tree}"
CALLS="${NX_RUNE_ASAN_CALLS:-20000}"
SEED="${NX_RUNE_ASAN_SEED:-7}"
PY="${PYTHON:-python}"
DEFAULT_TESTS="tests/test_kernels_gather.py tests/test_kernels_fold.py tests/test_threefry.py"
DEFAULT_TESTS+=" tests/test_buffer_view.py tests/test_movement.py tests/test_properties.py"
DEFAULT_TESTS+=" tests/test_fuzz.py tests/test_memory.py"
TESTS="${NX_RUNE_ASAN_TESTS-$DEFAULT_TESTS}"

echo "== copying the working tree (tracked and untracked, not ignored) to $TREE"
if [ -e "$TREE" ]; then
    [ -f "$TREE/.nx_rune_asan_tree" ] || { echo "$TREE exists and is not ours"; exit 2; }
    rm -rf "$TREE"         # a fresh copy: no stale build outputs can mask a failed build
fi
mkdir -p "$TREE"
touch "$TREE/.nx_rune_asan_tree"
(cd "$SRC" && git ls-files -co --exclude-standard -z |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$TREE"

echo "== building with NX_RUNE_SANITIZE=address (log: $TREE/asan_build.log)"
(cd "$TREE" && NX_RUNE_SANITIZE=address "$PY" setup.py build_ext --inplace -j 2 \
    > asan_build.log 2>&1) || { tail -40 "$TREE/asan_build.log"; exit 1; }
for so in "$TREE"/nx_rune/_kernels/*.so; do
    syms="$(nm -D "$so")"
    grep -q __asan_init <<< "$syms" || { echo "not instrumented: $so"; exit 1; }
done

LIBASAN="$(gcc -print-file-name=libasan.so)"
export LD_PRELOAD="$LIBASAN"
# detect_leaks=0: CPython keeps its objects to the end; allocator_may_return_null +
# max_allocation_size_mb: a huge allocation the fuzzer asks for returns NULL (MemoryError)
# instead of aborting or committing real memory; halt_on_error: the first report fails the run.
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=4096:halt_on_error=1:abort_on_error=1:print_summary=1:log_path=$TREE/asan"
export PYTHONMALLOC=malloc          # every Python allocation through ASan's malloc too
export NX_RUNE_FUZZ_MEMORY_LIMIT_GIB=0   # ASan reserves terabytes of shadow: no RLIMIT_AS
export PYTHONPATH="$TREE"
rm -f "$TREE"/asan.*

status=0
cd "$TREE"
"$PY" -c "import nx_rune._kernels.strided as s; assert s.__file__.startswith('$TREE'), s.__file__"

echo "== fuzz driver under ASan: $CALLS calls, seed $SEED"
if ! "$PY" -X faulthandler tests/fuzz_driver.py --calls "$CALLS" --seed "$SEED" \
        --json "$TREE/asan_fuzz.json" --call-timeout 300; then
    status=1
fi

if [ -n "$TESTS" ]; then
    echo "== pytest under ASan: $TESTS"
    # shellcheck disable=SC2086
    if ! "$PY" -m pytest -q -p no:cacheprovider -x $TESTS; then
        status=1
    fi
fi

# The logs also hold "failed to allocate" warnings: the fuzzer's huge allocations, refused as
# asked by allocator_may_return_null (they surface as MemoryError).  Errors are "ERROR:" lines.
if grep -l "ERROR: AddressSanitizer" "$TREE"/asan.* > /dev/null 2>&1; then
    echo "== AddressSanitizer errors:"
    grep -l "ERROR: AddressSanitizer" "$TREE"/asan.* | xargs cat
    status=1
else
    n=$(cat "$TREE"/asan.* 2>/dev/null | grep -c "failed to allocate" || true)
    echo "== no AddressSanitizer errors ($n refused huge allocations, as intended)"
fi
[ $status -eq 0 ] && echo "== ASan check: clean" || echo "== ASan check: FAILED"
exit $status
