"""Per-exchange cost of the generated Python modules, as ratios against a
peer measured in the same run.

    make bench-python        (builds dlpack_cython, then runs this)

Goals: dlpack_cython.from_dlpack(np_array) at most 1.2x NumPy's own
np.from_dlpack(np_array), dlpack_ctypes at most 10x; the C exchange API is
compared with __dlpack__ using apache-tvm-ffi on both sides.

Every group times its peer and candidates in turn, round after round, the
order rotating each round, so that a slow moment of the machine touches all
of them alike; a candidate's figure is the median over rounds of its time
divided by the peer's time in the same round, and the spread is the range
of the middle half of those ratios (quartiles). "floor" is the least any
ctypes consumer must do, written inline with nothing checked: take the
capsule (PyCapsule_GetPointer, PyCapsule_SetName), read the struct and the
shape in place (no foreign call: a ctypes array laid over the memory), keep
them in a Python object, and call the deleter when that object dies: three
foreign calls.
"""
import ctypes
import importlib
import os
import statistics
import struct
import sys
import timeit

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("DLGEN_CYTHON_DIR"):
    sys.path.insert(0, os.environ["DLGEN_CYTHON_DIR"])
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))  # the current ctypes module, not a build copy

ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "41"))
NUMBER = int(os.environ.get("DLGEN_BENCH_NUMBER", "2000"))


def compare(title, peer, candidates):
    """Prints peer and candidates ([(label, fn)]), interleaved over ROUNDS."""
    entries = [peer] + candidates
    times = {label: [] for label, _ in entries}
    for r in range(ROUNDS):
        k = r % len(entries)
        for label, fn in entries[k:] + entries[:k]:
            times[label].append(timeit.timeit(fn, number=NUMBER) / NUMBER)
    peer_times = times[peer[0]]
    print(title)
    print(f"  {peer[0] + '  [peer]':52s} {statistics.median(peer_times) * 1e9:7.0f} ns   1.00x")
    for label, _ in candidates:
        ratios = sorted(t / p for t, p in zip(times[label], peer_times))
        q1, med, q3 = statistics.quantiles(ratios, n=4)
        print(f"  {label:52s} {statistics.median(times[label]) * 1e9:7.0f} ns  {med:5.2f}x"
              f"  (middle half {q1:.2f}x to {q3:.2f}x)")


def ctypes_floor(a):
    """The least a pure-ctypes consumer of a's capsule must do."""
    py = ctypes.pythonapi
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", py))
    rename = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", py))
    import dlpack_ctypes as ct
    m = ct.DLManagedTensorVersioned
    shape_at = m.dl_tensor.offset + ct.DLTensor.shape.offset
    head = struct.Struct(f"={m.deleter.offset}xQ{shape_at - m.deleter.offset - 8}xQ")
    head_bytes = ctypes.c_char * ctypes.sizeof(m)
    dims = struct.Struct(f"={2 * a.ndim}q")
    dims_bytes = ctypes.c_char * dims.size
    deleter_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    deleters = {}
    name, used = b"dltensor_versioned", b"used_dltensor_versioned"
    max_version = (1, 0)

    class Held:
        __slots__ = ("address", "deleter", "shape")

        def __del__(self):
            deleters[self.deleter](self.address)

    def consume():
        cap = a.__dlpack__(max_version=max_version)
        p = get(cap, name)
        rename(cap, used)
        deleter, shape_p = head.unpack_from(head_bytes.from_address(p))
        held = Held()
        held.address, held.deleter = p, deleter
        held.shape = dims.unpack_from(dims_bytes.from_address(shape_p))
        if deleter not in deleters:
            deleters[deleter] = deleter_type(deleter)
        return held

    return consume


def main():
    a = np.arange(16, dtype=np.float32)
    modules = {}
    for name in ("dlpack_ctypes", "dlpack_cython"):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            print(f"{name}: not built, skipped")
    peer = ("np.from_dlpack(np_array)", lambda: np.from_dlpack(a))
    candidates = []
    for name, dl in modules.items():
        t = dl.from_dlpack(a)
        candidates.append((f"{name}.from_dlpack(np_array)", lambda dl=dl: dl.from_dlpack(a)))
        candidates.append((f"np.from_dlpack({name} tensor)", lambda t=t: np.from_dlpack(t)))
    if "dlpack_ctypes" in modules:
        candidates.append(("floor: a pure-ctypes consumer of np_array", ctypes_floor(a)))
    compare("Python exchange of 16 float32 elements:", peer, candidates)

    cy = modules.get("dlpack_cython")
    try:
        import tvm_ffi
    except ImportError:
        print("apache-tvm-ffi: not installed, exchange-API comparison skipped")
        return
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
    compare("tvm-ffi consuming a dlpack_cython tensor:",
            ("via __dlpack__", lambda: tvm_ffi.from_dlpack(DunderOnly(t))),
            [("via __dlpack_c_exchange_api__", lambda: tvm_ffi.from_dlpack(t))])
    x = tvm_ffi.from_dlpack(a)
    wrapped = tvm_ffi.core.DLTensorTestWrapper(x)
    compare("dlpack_cython consuming a tvm-ffi tensor:",
            ("via __dlpack__", lambda: cy.from_dlpack(x)),
            [("via __dlpack_c_exchange_api__", lambda: cy.from_dlpack(wrapped))])


if __name__ == "__main__":
    main()
