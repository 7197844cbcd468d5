"""The pytest suites of the kbsim package: run by ctest (python.pytest) with the build tree's package."""

import os
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
