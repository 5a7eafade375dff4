"""Builds flynn._flynn with this repository's CMake (see pyproject.toml for the metadata).

The extension is configured with -DFLYNN_BUILD_PYTHON=ON, the evaluation layer (for
flynn.tune) and everything else off (tests, benchmarks, CLI, MPI), for the interpreter
running this script,
in build-python/cmake-<python tag> (kept between builds, so reinstalling recompiles
nothing). ccache is used when it is on PATH. Environment knobs:
  FLYNN_CMAKE_BUILD_DIR  another CMake build directory
  FLYNN_BUILD_JOBS       parallel compile jobs (default: all cores)
  FLYNN_CMAKE_ARGS       extra -D options, space-separated
  FLYNN_PYTHON_TUNE=0    build without flynn.tune (no evaluation layer, no FAISS)
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        tag = sysconfig.get_config_var("SOABI") or f"py{sys.version_info[0]}{sys.version_info[1]}"
        build_dir = Path(os.environ.get("FLYNN_CMAKE_BUILD_DIR", ROOT / "build-python" / f"cmake-{tag}"))
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DFLYNN_PYTHON_OUTPUT_DIR={out_dir}",
            "-DFLYNN_BUILD_PYTHON=ON",
            "-DFLYNN_BUILD_TESTS=OFF", "-DFLYNN_BUILD_BENCH=OFF", "-DFLYNN_BUILD_APPS=OFF",
            "-DFLYNN_WITH_MPI=OFF",
        ]
        # flynn.tune needs flynn::eval (no FAISS); FLYNN_PYTHON_TUNE=0 leaves it out for a
        # smaller, faster build without tune.
        with_tune = os.environ.get("FLYNN_PYTHON_TUNE", "1") != "0"
        args += [f"-DFLYNN_BUILD_EXPERIMENTS={'ON' if with_tune else 'OFF'}",
                 "-DFLYNN_WITH_FAISS=OFF"]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"] if not (build_dir / "CMakeCache.txt").exists() else []
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        args += os.environ.get("FLYNN_CMAKE_ARGS", "").split()
        env = dict(os.environ)
        # Let ccache share objects between checkouts (worktrees) of this repository.
        env.setdefault("CCACHE_BASEDIR", str(ROOT.parent))
        env.setdefault("CCACHE_NOHASHDIR", "true")
        subprocess.run(args, check=True, env=env)
        jobs = os.environ.get("FLYNN_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "flynn_python",
                        "-j", jobs], check=True, env=env)


setup(
    ext_modules=[CMakeExtension("flynn._flynn")],
    cmdclass={"build_ext": CMakeBuild},
    # Keep setuptools' own build tree out of build/, the CMake build directory of the C++
    # project.
    options={"build": {"build_base": "build-python/setuptools"}},
)
