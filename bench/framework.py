"""What a framework pays for DLPack through dlgen's Python modules, as ratios
against a peer measured in the same run.

    make bench-framework     (builds dlpack_cython, then runs this)

Peer and candidates are interleaved as bench/interleaved.py says. Goals (issue #7):
  torch.from_dlpack(from_pointer(...))   <= 1.2x torch.from_dlpack(np_array)
  np.from_dlpack(from_buffer(bytearray)) <= 1.5x np.frombuffer(bytearray)
and the C exchange API against __dlpack__, PyTorch on either side (PyTorch's
own torch.from_dlpack always calls __dlpack__; dlpack_cython.to_type hands
a tensor to PyTorch through PyTorch's table instead). The figures are also
drawn in docs/bench/framework.svg (bench/plot.py).
"""
import importlib
import os
import sys

import numpy as np
import plot
from interleaved import NUMBER, ROUNDS, DunderOnly, compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("DLGEN_CYTHON_DIR"):
    sys.path.insert(0, os.environ["DLGEN_CYTHON_DIR"])
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))

def main():
    modules = []
    for name in ("dlpack_cython", "dlpack_ctypes"):
        try:
            modules.append((name, importlib.import_module(name)))
        except ImportError:
            print(f"{name}: not built, skipped")
    print(f"{ROUNDS} rounds of {NUMBER} calls each")

    raw = bytearray(64)
    groups = [compare("A bytearray in NumPy (64 bytes)", ("np.frombuffer(bytearray, np.uint8)",
                      lambda: np.frombuffer(raw, np.uint8)),
                      [(f"np.from_dlpack({name}.from_buffer(bytearray))",
                        lambda dl=dl: np.from_dlpack(dl.from_buffer(raw)))
                       for name, dl in modules])]
    groups += pytorch(modules)
    plot.ratios(plot.out("framework.svg"), "The framework-facing API (make bench-framework)",
                groups, plot.machine())


def pytorch(modules):
    """Memory a framework owns handed to PyTorch, and both exchange paths
    with PyTorch on the other side."""
    try:
        import torch
    except ImportError:
        print("torch: not installed, the PyTorch comparisons are skipped")
        return []
    a = np.arange(16, dtype=np.float32)
    address = a.ctypes.data
    groups = [compare("Memory the framework owns, in PyTorch (16 float32)", ("torch.from_dlpack(np_array)",
                      lambda: torch.from_dlpack(a)),
                      [(f"torch.from_dlpack({name}.from_pointer(...))",
                        lambda dl=dl: torch.from_dlpack(dl.from_pointer(address, (16,), "float32", owner=a)))
                       for name, dl in modules])]
    for name, dl in modules:
        if not hasattr(dl, "to_type") or not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
            continue  # the C exchange API: the Cython module and PyTorch 2.10+
        t = dl.from_dlpack(a)
        groups.append(compare(f"PyTorch consuming a {name} tensor", ("torch.from_dlpack(t)  (__dlpack__)",
                              lambda t=t: torch.from_dlpack(t)),
                              [("to_type(t, torch.Tensor)  (torch's exchange API)",
                                lambda dl=dl, t=t: dl.to_type(t, torch.Tensor))]))
        x = torch.arange(16, dtype=torch.float32)
        groups.append(compare(f"{name} consuming a PyTorch tensor", ("from_dlpack, __dlpack__ only",
                              lambda dl=dl, x=x: dl.from_dlpack(DunderOnly(x))),
                              [("from_dlpack(x)  (torch's exchange API)", lambda dl=dl, x=x: dl.from_dlpack(x))]))
    return groups

if __name__ == "__main__":
    main()
