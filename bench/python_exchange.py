"""Per-exchange cost of the generated Python modules, as ratios against
NumPy's own np.from_dlpack(np_array), all measured in this one run.

    .venv/bin/python bench/python_exchange.py

Goals (issue #3): Cython <= 1.2x NumPy's own, ctypes <= 10x.
"""
import importlib
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "generated", "python"))


def best(stmt, number=20000, repeat=5):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def main():
    a = np.arange(16, dtype=np.float32)
    peer = best(lambda: np.from_dlpack(a))
    print(f"np.from_dlpack(np_array)           {peer * 1e9:8.0f} ns  1.00x (peer)")
    for name in ("dlpack_ctypes", "dlpack_cython"):
        try:
            dl = importlib.import_module(name)
        except ImportError:
            print(f"{name}: not built, skipped")
            continue
        t = dl.from_dlpack(a)
        export = best(lambda: np.from_dlpack(t))
        imp = best(lambda: dl.from_dlpack(a).close())
        print(f"np.from_dlpack({name} tensor) {export * 1e9:8.0f} ns  {export / peer:5.2f}x")
        print(f"{name}.from_dlpack(np_array)   {imp * 1e9:8.0f} ns  {imp / peer:5.2f}x")


if __name__ == "__main__":
    main()
