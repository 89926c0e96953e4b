"""A compiled dlpack_cython is built from the sources beside it, or says so:
regenerated for another release and not rebuilt, it refuses to import and
names the rebuild, and dlgen -check reports it (the fingerprint that
dlpack_cython.pyx and dlpack_ctypes.py carry and the module compiles in)."""
import os
import re
import subprocess
import sys

from test_vendoring import need_tools

CYTHONIZE_DIR = os.path.dirname(sys.executable)


def generate(dlgen, release, out, *more):
    return subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, "-out", str(out), *more],
                          capture_output=True, text=True, check=False)


def sh(command):
    """command run as a user would type it, with this venv's cythonize on PATH."""
    env = dict(os.environ, PATH=CYTHONIZE_DIR + os.pathsep + os.environ["PATH"])
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, f"{command}:\n{r.stdout}{r.stderr}"


def import_release(directory):
    """Imports dlpack_cython from directory in a new interpreter: (exit
    status, its release or its error)."""
    r = subprocess.run([sys.executable, "-c", "import dlpack_cython; print(dlpack_cython.DLPACK_VERSION_STRING)"],
                       cwd=directory, capture_output=True, text=True, check=False, env={
                           k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    return r.returncode, (r.stdout + r.stderr).strip()


def test_a_module_regenerated_but_not_rebuilt_refuses_and_check_reports_it(dlgen, tmp_path):
    need_tools()
    out = tmp_path / "out"
    python = out / "python"
    assert generate(dlgen, "1.3", out).returncode == 0
    sh(f"cd {python} && cythonize -i dlpack_cython.pyx")  # docs/python.md's command
    assert import_release(python) == (0, "1.3")
    r = generate(dlgen, "1.3", out, "-check")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")

    assert generate(dlgen, "1.1", out).returncode == 0  # and no rebuild
    rebuild = f"cd {python} && cythonize -i dlpack_cython.pyx"
    code, error = import_release(python)
    assert code != 0
    assert re.search(r"ImportError: dlpack_cython\.\S+ is stale: it was built from DLPack 1\.3, sources [0-9a-f]{16}, "
                     r"but dlpack_cython\.pyx beside it is DLPack 1\.1, sources [0-9a-f]{16}; rebuild it: "
                     + re.escape(rebuild) + "$", error), error

    r = generate(dlgen, "1.1", out, "-check")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.fullmatch(re.escape(str(python)) + r"/dlpack_cython\.\S+\.so was built from DLPack 1\.3, sources [0-9a-f]{16}, "
                        r"not from the sources beside it \(DLPack 1\.1, sources [0-9a-f]{16}\); rebuild it: "
                        + re.escape(rebuild) + "\n", r.stdout), r.stdout
    assert r.stderr == f"dlgen: a compiled module under {out} is older than its sources: rebuild it as above\n"

    sh(rebuild)  # the command both name
    assert import_release(python) == (0, "1.1")
    r = generate(dlgen, "1.1", out, "-check")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_a_vendored_module_names_the_rebuild_from_the_top_package(dlgen, tmp_path):
    need_tools()
    vendored = tmp_path / "mylib" / "_vendor"
    vendored.mkdir(parents=True)
    (tmp_path / "mylib" / "__init__.py").write_text("")
    args = ("-python-package", "mylib._vendor.python")
    assert generate(dlgen, "1.3", vendored, *args).returncode == 0
    sh(f"cd {tmp_path} && cythonize -i mylib/_vendor/python/dlpack_cython.pyx")
    assert generate(dlgen, "1.2", vendored, *args).returncode == 0
    r = subprocess.run([sys.executable, "-c", "import mylib._vendor.python.dlpack_cython"], cwd=tmp_path,
                       capture_output=True, text=True, check=False)
    assert r.returncode != 0
    assert r.stderr.strip().endswith(f"rebuild it: cd {tmp_path} && cythonize -i mylib/_vendor/python/dlpack_cython.pyx"), r.stderr
    r = generate(dlgen, "1.2", vendored, *args, "-check")
    assert r.returncode == 1
    assert r.stdout.endswith(f"; rebuild it: cd {tmp_path} && cythonize -i mylib/_vendor/python/dlpack_cython.pyx\n"), r.stdout
