"""What a framework pays for DLPack through dlgen's Python modules, as ratios
against a peer measured in the same run.

    make bench-framework     (builds dlpack_cython, then runs this)

Each comparison alternates peer and candidate over many rounds (each round
times a batch of calls of each, in turn) and prints the median of the
per-round ratios with the spread of the middle half of the rounds, so that a
slow moment of the machine hits both sides alike. Goals (issue #7):
  torch.from_dlpack(from_pointer(...))   <= 1.2x torch.from_dlpack(np_array)
  np.from_dlpack(from_buffer(bytearray)) <= 1.5x np.frombuffer(bytearray)
and the C exchange API against __dlpack__, PyTorch on either side (PyTorch's
own torch.from_dlpack always calls __dlpack__; dlpack_cython.to_type hands
a tensor to PyTorch through PyTorch's table instead).
"""
import importlib
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("DLGEN_CYTHON_DIR"):
    sys.path.insert(0, os.environ["DLGEN_CYTHON_DIR"])
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))

ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "41"))
BATCH = int(os.environ.get("DLGEN_BENCH_BATCH", "2000"))


def batch_time(fn):
    start = time.perf_counter()
    for _ in range(BATCH):
        fn()
    return (time.perf_counter() - start) / BATCH


def compare(title, peer_label, peer, candidates):
    """Prints peer and each candidate: median time per call and the median
    (and interquartile range) of candidate/peer over interleaved rounds."""
    for fn in [peer] + [fn for _, fn in candidates]:
        batch_time(fn)  # warm up
    times = {label: [] for label, _ in candidates}
    ratios = {label: [] for label, _ in candidates}
    peer_times = []
    for _ in range(ROUNDS):
        p = batch_time(peer)
        peer_times.append(p)
        for label, fn in candidates:
            c = batch_time(fn)
            times[label].append(c)
            ratios[label].append(c / p)
    print(title)
    print(f"  {peer_label + '  [peer]':52s} {statistics.median(peer_times) * 1e9:8.0f} ns   1.00x")
    for label, _ in candidates:
        q1, med, q3 = statistics.quantiles(ratios[label], n=4)
        print(f"  {label:52s} {statistics.median(times[label]) * 1e9:8.0f} ns  {med:5.2f}x"
              f"  (middle half {q1:.2f}-{q3:.2f})")


class DunderOnly:
    """The same object, reachable through __dlpack__ alone (no exchange API)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def main():
    modules = []
    for name in ("dlpack_cython", "dlpack_ctypes"):
        try:
            modules.append((name, importlib.import_module(name)))
        except ImportError:
            print(f"{name}: not built, skipped")
    print(f"{ROUNDS} rounds of {BATCH} calls each")

    raw = bytearray(64)
    compare("A bytearray in NumPy (64 bytes)", "np.frombuffer(bytearray, np.uint8)",
            lambda: np.frombuffer(raw, np.uint8),
            [(f"np.from_dlpack({name}.from_buffer(bytearray))",
              lambda dl=dl: np.from_dlpack(dl.from_buffer(raw)))
             for name, dl in modules])

    try:
        import torch
    except ImportError:
        print("torch: not installed, the PyTorch comparisons are skipped")
        return
    a = np.arange(16, dtype=np.float32)
    address = a.ctypes.data
    compare("Memory the framework owns, in PyTorch (16 float32)", "torch.from_dlpack(np_array)",
            lambda: torch.from_dlpack(a),
            [(f"torch.from_dlpack({name}.from_pointer(...))",
              lambda dl=dl: torch.from_dlpack(dl.from_pointer(address, (16,), "float32", owner=a)))
             for name, dl in modules])

    for name, dl in modules:
        if not hasattr(dl, "to_type") or not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
            continue  # the C exchange API: the Cython module and PyTorch 2.10+
        t = dl.from_dlpack(a)
        compare(f"PyTorch consuming a {name} tensor", "torch.from_dlpack(t)  (__dlpack__)",
                lambda: torch.from_dlpack(t),
                [("to_type(t, torch.Tensor)  (torch's exchange API)", lambda: dl.to_type(t, torch.Tensor))])
        x = torch.arange(16, dtype=torch.float32)
        compare(f"{name} consuming a PyTorch tensor", "from_dlpack, __dlpack__ only",
                lambda: dl.from_dlpack(DunderOnly(x)),
                [("from_dlpack(x)  (torch's exchange API)", lambda: dl.from_dlpack(x))])


if __name__ == "__main__":
    main()
