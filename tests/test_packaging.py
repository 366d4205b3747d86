"""Packaging: what the build is configured to do (fast, by default) and, with ``-m slow``, a real
wheel and sdist built from a copy of the working tree, unpacked and checked: no generated C, the
extension modules stripped of debug information and symbol tables, the Cython sources and stubs
included, and the installed wheel importable and working."""
import glob
import importlib.util
import os
import re
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:           # Python < 3.11 is not supported; keep the error clear
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent
# the files that Cython modules include (tensor.pyx, gather.pyx, ...): sources the build needs
PXI = sorted(str(p.relative_to(ROOT)).replace(os.sep, "/")
             for p in (ROOT / "nx_rune").rglob("*.pxi"))
PYX = sorted(Path(p).stem for p in glob.glob(str(ROOT / "nx_rune" / "_kernels" / "*.pyx")))


def load_setup():
    """setup.py as a module (its ``setup()`` call only runs as ``__main__``)."""
    spec = importlib.util.spec_from_file_location("nx_rune_setup_under_test", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def setup_mod():
    return load_setup()


# -- the configuration (default suite) ------------------------------------------------------------

def test_kernels_found():
    assert PYX == ["buffer", "chol_adjoint", "fold", "fusion", "gather", "gemm", "lapack_loops",
                   "pool", "strided", "threefry", "ufdirect", "view"]
    # fusion: the jit's fused kernels; pool: the kernels' threads; chol_adjoint: the Cholesky
    # derivative; ufdirect: NumPy's inner loops called directly; lapack_loops: stacks of float32
    # factorizations through SciPy's LAPACK


def test_release_flags_drop_debug_info_and_strip(setup_mod):
    compile_args, link_args = setup_mod.build_flags({}, "linux")
    assert "-O3" in compile_args and "-g0" in compile_args and "-g" not in compile_args
    assert link_args == ["-Wl,--strip-all"]
    compile_args, link_args = setup_mod.build_flags({}, "darwin")   # no GNU ld option there
    assert "-g0" in compile_args and link_args == []


def test_debug_and_sanitizer_builds_keep_debug_info(setup_mod):
    compile_args, link_args = setup_mod.build_flags({"NX_RUNE_DEBUG": "1"}, "linux")
    assert "-g" in compile_args and "-g0" not in compile_args and link_args == []
    compile_args, link_args = setup_mod.build_flags({"NX_RUNE_SANITIZE": "address"}, "linux")
    assert "-g" in compile_args and "-fsanitize=address" in compile_args
    assert link_args == ["-fsanitize=address"]


def test_extensions_carry_the_flags(setup_mod):
    exts = setup_mod.extensions({})
    assert [e.name for e in exts] == [f"nx_rune._kernels.{n}" for n in PYX] + \
        ["nx_rune.tensor", "nx_rune.autodiff._tape"]   # the tape's loops in C
    flags = setup_mod.build_flags({})
    for e in exts:
        assert (e.extra_compile_args, e.extra_link_args) == flags
        assert e.sources == [e.name.replace(".", os.sep) + ".pyx"]
    only = setup_mod.extensions({"NX_RUNE_ONLY": "view,gather"})
    assert [e.name for e in only] == ["nx_rune._kernels.gather", "nx_rune._kernels.view"]


def test_parallel_jobs(setup_mod):
    if hasattr(os, "sched_getaffinity"):
        assert setup_mod.available_cores() == len(os.sched_getaffinity(0))
    assert setup_mod.build_jobs({}) == setup_mod.available_cores() >= 1
    assert setup_mod.build_jobs({"NX_RUNE_BUILD_JOBS": "3"}) == 3
    for bad in ("0", "-2", "many"):
        with pytest.raises(SystemExit, match="NX_RUNE_BUILD_JOBS"):
            setup_mod.build_jobs({"NX_RUNE_BUILD_JOBS": bad})


def test_build_ext_defaults_to_one_job_per_core(setup_mod, monkeypatch):
    from setuptools import Distribution

    monkeypatch.delenv("NX_RUNE_BUILD_JOBS", raising=False)

    def finalized(parallel=None):
        cmd = setup_mod.ParallelBuildExt(Distribution({"name": "t", "ext_modules": []}))
        cmd.initialize_options()
        if parallel is not None:
            cmd.parallel = parallel             # what ``build_ext -j 3`` sets
        cmd.finalize_options()
        return cmd.parallel
    assert finalized() == setup_mod.available_cores()
    assert finalized("3") == 3
    monkeypatch.setenv("NX_RUNE_BUILD_JOBS", "5")
    assert finalized() == 5


def test_build_reports_each_extension(setup_mod, monkeypatch, capsys):
    """pip install -v shows which extension is compiling, n of m, and how long each took."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    built = []
    monkeypatch.setattr(build_ext, "build_extension", lambda self, ext: built.append(ext.name))
    exts = [Extension(f"pkg.m{i}", [f"m{i}.c"]) for i in range(3)]
    for jobs in (1, 2):
        built.clear()
        cmd = setup_mod.ParallelBuildExt(Distribution({"name": "t", "ext_modules": exts}))
        cmd.initialize_options()
        cmd.parallel = jobs
        cmd.finalize_options()
        cmd.build_extensions()
        out = capsys.readouterr().out
        assert sorted(built) == ["pkg.m0", "pkg.m1", "pkg.m2"]
        assert f"nx_rune: 3 extension modules, {jobs} jobs at a time" in out
        started = re.findall(r"nx_rune: compiling extension (\d) of 3: (pkg\.m\d)", out)
        assert sorted(n for n, _ in started) == ["1", "2", "3"]
        assert sorted(name for _, name in started) == sorted(built)
        assert len(re.findall(r"extension \d of 3 \(pkg\.m\d\) done in \d+\.\d s", out)) == 3


def test_setup_runs_only_as_main():
    # importing setup.py (above) must not build; the call sits under the __main__ guard
    src = (ROOT / "setup.py").read_text()
    assert 'if __name__ == "__main__":\n    setup(' in src
    assert "ParallelBuildExt" in src.split('if __name__ == "__main__":')[1]


def test_package_data_ships_sources_not_generated_c():
    assert tomllib is not None
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert cfg["include-package-data"] is False
    data = cfg["package-data"]["nx_rune"]
    for pattern in ("py.typed", "*.pyx", "*.pyi", "_kernels/*.pyx", "_kernels/*.pxd",
                    "_kernels/*.pyi", "*.pxi", "_kernels/*.pxi"):
        assert pattern in data
    assert not any(p.endswith(".c") or p.endswith(".so") for p in data)
    assert set(cfg["packages"]) >= {"nx_rune", "nx_rune._kernels", "nx_rune.autodiff"}
    manifest = (ROOT / "MANIFEST.in").read_text().split("\n")
    assert "recursive-include nx_rune/_kernels *.pyx *.pxd *.pyi *.h" in manifest
    assert "include nx_rune/*.pyx nx_rune/*.pyi" in manifest
    assert "include nx_rune/autodiff/*.pyx nx_rune/autodiff/*.pyi" in manifest
    # the .pxi files a module includes are part of its source: the sdist cannot build without
    assert "recursive-include nx_rune *.pxi" in manifest
    assert "autodiff/*.pyx" in data and "autodiff/*.pyi" in data
    assert any(line.startswith("global-exclude") and "*.c" in line.split() and
               "*.so" in line.split() for line in manifest)


def test_every_subpackage_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {str(p.parent.relative_to(ROOT)).replace(os.sep, ".")
             for p in (ROOT / "nx_rune").rglob("__init__.py")}
    assert found == set(cfg["packages"]), "a package is missing from pyproject's list"


# -- a real build (slow: -m slow) ----------------------------------------------------------------

def elf_section_names(path):
    """The section names of an ELF file (to check for .debug_* and .symtab)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF", f"{path} is not ELF"
    e = "<" if data[5] == 1 else ">"
    if data[4] == 2:   # 64-bit
        shoff = struct.unpack_from(e + "Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        off_field, off_fmt = 0x18, "Q"
    else:
        shoff = struct.unpack_from(e + "I", data, 0x20)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
        off_field, off_fmt = 0x10, "I"

    def section(i):
        base = shoff + i * shentsize
        return (struct.unpack_from(e + "I", data, base)[0],
                struct.unpack_from(e + off_fmt, data, base + off_field)[0])
    strtab = section(shstrndx)[1]
    names = []
    for i in range(shnum):
        start = strtab + section(i)[0]
        names.append(data[start:data.index(b"\0", start)].decode())
    return names


def _copy_tree(dst):
    """The working tree's files (tracked and untracked, not ignored), as CI would see them."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for f in filter(None, files):
        src, out = ROOT / f.decode(), dst / f.decode()
        if src.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(src.read_bytes())


@pytest.mark.slow
def test_wheel_contents_and_install(tmp_path):
    src = tmp_path / "src"
    _copy_tree(src)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                    "--no-build-isolation", "-q", "-w", str(wheels)], check=True)
    (whl,) = wheels.glob("nx_rune-*.whl")
    names = zipfile.ZipFile(whl).namelist()
    assert not [n for n in names if n.endswith(".c")]
    for n in PYX:
        assert f"nx_rune/_kernels/{n}.pyx" in names
        assert [m for m in names if m.startswith(f"nx_rune/_kernels/{n}.") and m.endswith(
            (".so", ".pyd"))], f"no extension module for {n}"
    assert [m for m in names if m.startswith("nx_rune/tensor.") and m.endswith((".so", ".pyd"))]
    assert [m for m in names if m.startswith("nx_rune/autodiff/_tape.") and
            m.endswith((".so", ".pyd"))]
    for n in ("nx_rune/py.typed", "nx_rune/_kernels/_types.pxd", "nx_rune/_kernels/gather.pyi",
              "nx_rune/tensor.pyx", "nx_rune/tensor.pyi",
              "nx_rune/tree_util.py", "nx_rune/optimizers.py", "nx_rune/autodiff/api.py",
              *PXI):
        assert n in names
    # measured: 1.68 MB wheel, 4.39 MB unpacked (2026-12-03: eleven stripped extension modules,
    # among them the jit's fusion VM, the pool, gemm bands and the tape; 0.83 and 2.05 MB with
    # six), against 5.26 MB and 19.5 MB with the .c files and the debug information of six
    # 2026-12-04: 2.27 MB with the porting namespaces (autograd, nn, numpy, example_libraries),
    # lax, the samplers and the .pxi sources; the .c files or debug information would be >5 MB
    assert whl.stat().st_size < 2_700_000
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(whl).extractall(unpacked)
    total = sum(p.stat().st_size for p in unpacked.rglob("*") if p.is_file())
    assert total < 7_000_000     # 5.85 MB unpacked on 2026-12-04
    if sys.platform.startswith("linux"):
        for so in unpacked.rglob("*.so"):
            sections = elf_section_names(so)
            assert not [s for s in sections if s.startswith(".debug")], so
            assert ".symtab" not in sections, so          # stripped
            assert ".dynsym" in sections, so              # the entry point is still exported
    # the installed wheel imports and computes (the stripped modules load)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--target", str(target), str(whl)], check=True)
    code = ("import nx_rune as nx, numpy as np\n"
            f"assert nx.__file__.startswith({str(target)!r}), nx.__file__\n"
            "g = nx.grad(lambda x: nx.sum(nx.sin(x) ** 2))(nx.asarray(np.arange(3.0)))\n"
            "np.testing.assert_allclose(np.asarray(g), np.sin(2 * np.arange(3.0)), rtol=1e-12)\n"
            "k = nx.random.normal(nx.random.key(0), (1000,))\n"
            "x = nx.take(nx.asarray(np.arange(10.0)), nx.asarray([3, 1]))\n"
            "assert np.asarray(x).tolist() == [3.0, 1.0]\n"
            "print('ok', float(nx.sum(k)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(target)})
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stderr


@pytest.mark.slow
def test_sdist_has_the_cython_sources_and_no_build_outputs(tmp_path):
    src = tmp_path / "src"
    _copy_tree(src)
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "dist")],
                   cwd=src, check=True, capture_output=True)
    (sdist,) = (tmp_path / "dist").glob("nx_rune-*.tar.gz")
    names = [n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n]
    for n in PYX:
        assert f"nx_rune/_kernels/{n}.pyx" in names
    for n in PXI:
        assert n in names
    assert "nx_rune/_kernels/_types.pxd" in names and "setup.py" in names
    assert "nx_rune/tensor.pyx" in names and "nx_rune/autodiff/_tape.pyx" in names
    assert not [n for n in names if n.endswith((".c", ".so"))]
