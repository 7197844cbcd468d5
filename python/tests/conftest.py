"""The pytest suites of the kbsim package: run by ctest (python.pytest) with the build tree's package."""

import os
import shutil
import subprocess

import pytest

BUILD = os.environ.get("KBSIM_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def cli(tmp_path):
    """Run the kbsim executable; (exit code, stdout, stderr)."""
    def run(*args):
        p = subprocess.run([os.path.join(BUILD, "bin", "kbsim"), *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr
    return run


needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun on this machine")


@pytest.fixture
def mpirun_cli():
    """Run the kbsim executable under ``mpirun -np ranks`` (as root too); (exit code, stdout, stderr)."""
    def run(ranks, *args):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        p = subprocess.run(["mpirun", "-q", "--oversubscribe", "-np", str(ranks), os.path.join(BUILD, "bin", "kbsim"),
                            *args], capture_output=True, text=True, env=env, timeout=300)
        return p.returncode, p.stdout, p.stderr
    return run
