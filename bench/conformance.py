"""The conformance kit's speed: a full run of every case against one library,
isolation included (a worker process, a fresh one after each crash), next to
its floor, a bare `import LIBRARY` in a fresh process of the same venv,
measured in the same run. The two take turns for ROUNDS rounds; the table
gives the median run and its spread, the case count, the crashes (each costs
one more import) and the run's ratio to the import.

    .venv/bin/python bench/conformance.py [LIBRARY...]    (after make deps)

Goal: a full run takes at most 60 s on a 2-core machine."""
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("matrix", os.path.join(ROOT, "conformance", "matrix.py"))
matrix = importlib.util.module_from_spec(_spec)  # by its file: the kit's folder is not put on sys.path
sys.modules["matrix"] = matrix
_spec.loader.exec_module(matrix)

ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "3"))
GOAL = 60.0
MODULE = {"jax": "jax.numpy", "mlx": "mlx.core", "pyarrow.Tensor": "pyarrow"}


def bare_import(library, pythonpath):
    env = dict(os.environ)
    if library == "dpnp":
        env.update(matrix._dpnp_env())
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    start = time.monotonic()
    subprocess.run([matrix.python_of(library), "-c", f"import {MODULE.get(library, library)}"], env=env,
                   check=True)
    return time.monotonic() - start


def main():
    libraries = sys.argv[1:] or [lib for lib in matrix.LIBRARIES if os.path.exists(matrix.python_of(lib))]
    cython_dir = matrix.build_cython() if "dlpack_cython" in libraries else None
    print(f"{'library':18} {'cases':>5} {'crashes':>7} {'run s':>7} {'spread':>13} {'import s':>8} {'ratio':>6}  goal")
    with tempfile.TemporaryDirectory() as tmp:
        kit = matrix.make_kit(tmp)
        for library in libraries:
            path = matrix.pythonpath_for(library, cython_dir)
            runs, imports = [], []
            for i in range(ROUNDS):
                order = (0, 1) if i % 2 == 0 else (1, 0)
                for which in order:
                    if which == 0:
                        results, _, seconds = matrix.run(library, kit, path)
                        runs.append(seconds)
                    else:
                        imports.append(bare_import(library, path))
            crashes = sum(r["verdict"] == "crash" for r in results)
            run, imp = statistics.median(runs), statistics.median(imports)
            verdict = "met" if run <= GOAL else "MISSED"
            print(f"{library:18} {len(results):5} {crashes:7} {run:7.1f} {min(runs):6.1f}-{max(runs):6.1f} "
                  f"{imp:8.1f} {run / imp:6.1f}  <= {GOAL:.0f} s {verdict}", flush=True)


if __name__ == "__main__":
    main()
