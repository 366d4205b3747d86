"""Build the typed Cython kernels in nx_rune/_kernels.

Every ``nx_rune/_kernels/*.pyx`` is translated to C and compiled with -O3 against NumPy's
headers, both steps in parallel: one job per available core (``build_ext -j N`` or
``NX_RUNE_BUILD_JOBS=N`` sets another number).  Release builds carry no debug information
(``-g0``) and are stripped at link time on Linux, so the wheel holds only what runs.
Compiler directives are set once here.

Environment: ``NX_RUNE_DEBUG=1`` keeps debug information (``-g``, no stripping);
``NX_RUNE_BOUNDSCHECK=1`` turns bounds and wrap-around checks back on (for debugging a
kernel); ``NX_RUNE_ONLY=name1,name2`` builds only the named modules (a development
convenience); ``NX_RUNE_SANITIZE=address`` builds with AddressSanitizer (and debug
information).
"""
import glob
import os
import re
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = os.path.join("nx_rune", "_kernels")


def available_cores():
    """The number of cores this process may run on (its CPU affinity where the OS has one)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:          # macOS, Windows
        return max(os.cpu_count() or 1, 1)


def build_jobs(env=None):
    """Parallel jobs for the build: ``NX_RUNE_BUILD_JOBS`` if set (a positive int), else the
    number of available cores."""
    env = os.environ if env is None else env
    value = env.get("NX_RUNE_BUILD_JOBS", "")
    if value:
        try:
            jobs = int(value)
        except ValueError:
            raise SystemExit(f"NX_RUNE_BUILD_JOBS: expected a positive integer, got {value!r}")
        if jobs < 1:
            raise SystemExit(f"NX_RUNE_BUILD_JOBS: expected a positive integer, got {value!r}")
        return jobs
    return available_cores()


def build_flags(env=None, platform=None):
    """``(extra_compile_args, extra_link_args)`` for the kernels under ``env``."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    sanitize = env.get("NX_RUNE_SANITIZE", "")
    if sanitize:
        return (["-O1", "-g", "-fno-omit-frame-pointer", f"-fsanitize={sanitize}"],
                [f"-fsanitize={sanitize}"])
    compile_args = ["-O3", "-fno-strict-aliasing"]
    if env.get("NX_RUNE_DEBUG", "0") == "1":
        return compile_args + ["-g"], []
    # -g0 overrides the -g in Python's own CFLAGS; the extension modules' entry points live in
    # the dynamic symbol table, which stripping keeps
    link_args = ["-Wl,--strip-all"] if platform.startswith("linux") else []
    return compile_args + ["-g0"], link_args


_HEADER = re.compile(r'(?:include|extern from) *"([A-Za-z0-9_]+\.(?:h|pxi))"')


def _local_headers(path):
    """The headers (and .pxi includes) of this directory that ``path`` includes, transitively:
    the Extension's depends, so that editing a header alone rebuilds the modules using it."""
    folder, seen, todo = os.path.dirname(path), set(), [path]
    while todo:
        with open(todo.pop(), encoding="utf-8") as f:
            names = _HEADER.findall(f.read())
        for name in names:
            dep = os.path.join(folder, name)
            if dep not in seen and os.path.exists(dep):
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


def extensions(env=None):
    """One Extension per kernel module (all of them, or those named in NX_RUNE_ONLY)."""
    import numpy as np

    env = os.environ if env is None else env
    only = {n for n in env.get("NX_RUNE_ONLY", "").split(",") if n}
    compile_args, link_args = build_flags(env)
    out = []
    paths = sorted(glob.glob(os.path.join(KERNELS, "*.pyx"))) + \
        sorted(glob.glob(os.path.join("nx_rune", "*.pyx"))) + \
        sorted(glob.glob(os.path.join("nx_rune", "autodiff", "*.pyx")))   # the tape's loops
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        if only and name not in only:
            continue
        package = os.path.dirname(path).replace(os.sep, ".")
        out.append(Extension(
            f"{package}.{name}",
            [path],
            depends=_local_headers(path),
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=compile_args,
            extra_link_args=link_args,
        ))
    return out


class ParallelBuildExt(build_ext):
    """build_ext that compiles the extensions in parallel by default (one job per core), and
    reports each one ("nx_rune: compiling extension 3 of 13: ...", then its time) where pip
    shows the build's output (``pip install -v .``): a build is otherwise silent for a minute."""

    def finalize_options(self):
        if self.parallel is None:
            self.parallel = build_jobs()
        super().finalize_options()

    def build_extensions(self):
        import threading

        self._progress = {"done": 0, "lock": threading.Lock(), "total": len(self.extensions)}
        print(f"nx_rune: {len(self.extensions)} extension modules, {self.parallel or 1} "
              "jobs at a time", flush=True)
        super().build_extensions()

    def build_extension(self, ext):
        import time

        progress = getattr(self, "_progress", None)
        if progress is None:            # called directly, not through build_extensions
            return super().build_extension(ext)
        with progress["lock"]:
            progress["done"] += 1
            n = progress["done"]
        print(f"nx_rune: compiling extension {n} of {progress['total']}: {ext.name}",
              flush=True)
        start = time.perf_counter()
        super().build_extension(ext)
        print(f"nx_rune: extension {n} of {progress['total']} ({ext.name}) done in "
              f"{time.perf_counter() - start:.1f} s", flush=True)


def cythonized(env=None):
    from Cython.Build import cythonize

    env = os.environ if env is None else env
    debug_checks = env.get("NX_RUNE_BOUNDSCHECK", "0") == "1"
    exts = extensions(env)
    return cythonize(
        exts,
        language_level=3,
        nthreads=min(build_jobs(env), len(exts)) if len(exts) > 1 else 0,
        compiler_directives={
            "boundscheck": debug_checks,
            "wraparound": debug_checks,
            "initializedcheck": debug_checks,
            "cdivision": True,
            "embedsignature": True,
        },
    )


if __name__ == "__main__":
    setup(ext_modules=cythonized(), cmdclass={"build_ext": ParallelBuildExt})
