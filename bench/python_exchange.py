"""Per-exchange cost of the generated Python modules, as ratios against a
peer measured in the same run.

    make bench-python        (builds dlpack_cython, then runs this)

Goals (issue #3): Cython <= 1.2x NumPy's own np.from_dlpack(np_array),
ctypes <= 10x. The C exchange API is compared with __dlpack__ using
apache-tvm-ffi on both sides of the exchange.
"""
import importlib
import os
import sys
import timeit

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("DLGEN_CYTHON_DIR"):
    sys.path.insert(0, os.environ["DLGEN_CYTHON_DIR"])
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))  # the current ctypes module, not a build copy


def best(fn, number=20000, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def row(label, seconds, peer):
    print(f"{label:44s} {seconds * 1e9:8.0f} ns  {seconds / peer:6.2f}x")


def main():
    a = np.arange(16, dtype=np.float32)
    peer = best(lambda: np.from_dlpack(a))
    row("np.from_dlpack(np_array)  [peer]", peer, peer)
    modules = {}
    for name in ("dlpack_ctypes", "dlpack_cython"):
        try:
            modules[name] = dl = importlib.import_module(name)
        except ImportError:
            print(f"{name}: not built, skipped")
            continue
        t = dl.from_dlpack(a)
        row(f"np.from_dlpack({name} tensor)", best(lambda: np.from_dlpack(t)), peer)
        row(f"{name}.from_dlpack(np_array)", best(lambda: dl.from_dlpack(a)), peer)

    try:
        import tvm_ffi
    except ImportError:
        print("apache-tvm-ffi: not installed, exchange-API comparison skipped")
        return
    cy = modules.get("dlpack_cython")
    if cy is None:
        return

    class DunderOnly:
        """The same tensor, reachable through __dlpack__ alone."""

        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self, **kwargs):
            return self.inner.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

    t = cy.from_dlpack(a)
    dunder = best(lambda: tvm_ffi.from_dlpack(DunderOnly(t)))
    table = best(lambda: tvm_ffi.from_dlpack(t))
    print("tvm-ffi consuming a dlpack_cython tensor:")
    row("  via __dlpack__  [peer]", dunder, dunder)
    row("  via __dlpack_c_exchange_api__", table, dunder)
    x = tvm_ffi.from_dlpack(a)
    wrapped = tvm_ffi.core.DLTensorTestWrapper(x)
    dunder = best(lambda: cy.from_dlpack(x))
    table = best(lambda: cy.from_dlpack(wrapped))
    print("dlpack_cython consuming a tvm-ffi tensor:")
    row("  via __dlpack__  [peer]", dunder, dunder)
    row("  via __dlpack_c_exchange_api__", table, dunder)


if __name__ == "__main__":
    main()
