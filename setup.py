"""Build the typed Cython kernels in nx_rune/_kernels.

Every ``nx_rune/_kernels/*.pyx`` is compiled with -O3 against NumPy's headers.
Compiler directives are set once here.  ``NX_RUNE_BOUNDSCHECK=1`` turns bounds and
wrap-around checks back on (for debugging a kernel); ``NX_RUNE_ONLY=name1,name2`` builds only
the named modules (a development convenience); ``NX_RUNE_SANITIZE=address`` builds with
AddressSanitizer.
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

debug_checks = os.environ.get("NX_RUNE_BOUNDSCHECK", "0") == "1"
only = {n for n in os.environ.get("NX_RUNE_ONLY", "").split(",") if n}
sanitize = os.environ.get("NX_RUNE_SANITIZE", "")

compile_args = ["-O3", "-fno-strict-aliasing"]
link_args = []
if sanitize:
    compile_args = ["-O1", "-g", "-fno-omit-frame-pointer", f"-fsanitize={sanitize}"]
    link_args = [f"-fsanitize={sanitize}"]

extensions = []
for path in sorted(glob.glob(os.path.join("nx_rune", "_kernels", "*.pyx"))):
    name = os.path.splitext(os.path.basename(path))[0]
    if only and name not in only:
        continue
    extensions.append(
        Extension(
            f"nx_rune._kernels.{name}",
            [path],
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=compile_args,
            extra_link_args=link_args,
        )
    )

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": debug_checks,
            "wraparound": debug_checks,
            "initializedcheck": debug_checks,
            "cdivision": True,
            "embedsignature": True,
        },
    ),
)
