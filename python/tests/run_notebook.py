"""Execute a notebook headless, as CI does (ctest python.notebook): every cell must run without an error.

    /usr/bin/python3 python/tests/run_notebook.py NOTEBOOK [WORKDIR]

The kernel is this interpreter (a kernel spec of its own, so another python3 first on PATH or a user's 'python3'
kernel cannot stand in), with this process's environment (PYTHONPATH: the build tree's package).
"""

import json
import os
import sys
import tempfile

import nbclient
import nbformat


def main():
    path = sys.argv[1]
    workdir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="kbsim-notebook-")
    with tempfile.TemporaryDirectory(prefix="kbsim-kernel-") as spec_root:
        spec = os.path.join(spec_root, "kernels", "kbsim-python3")
        os.makedirs(spec)
        with open(os.path.join(spec, "kernel.json"), "w") as f:
            json.dump({"argv": [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"],
                       "display_name": "kbsim (Debian's python3)", "language": "python"}, f)
        os.environ["JUPYTER_PATH"] = spec_root
        os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        # The kernel runs in WORKDIR: the package's path must not be relative to here.
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in paths)
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        nb = nbformat.read(path, as_version=4)
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="kbsim-python3",
                                         resources={"metadata": {"path": workdir}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as e:
            print("{}: a cell failed:\n{}".format(path, e), file=sys.stderr)
            return 1
    shown = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    print("{}: {} cells ran, {} outputs".format(path, sum(c.cell_type == "code" for c in nb.cells), shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
