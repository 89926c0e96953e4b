"""Per-exchange cost of the generated Python modules, as ratios against a
peer measured in the same run.

    make bench-python        (builds dlpack_cython, then runs this)

Goals: dlpack_cython at most 1.0x NumPy's own exchange both ways
(dlpack_cython.from_dlpack(np_array) against np.from_dlpack(np_array), and
np.from_dlpack of a dlpack_cython tensor), dlpack_ctypes at most 10x; the C exchange API is
compared with __dlpack__ using apache-tvm-ffi on both sides. The figures are
also drawn in docs/bench/python-exchange.svg (bench/plot.py).

Peer and candidates are interleaved as bench/interleaved.py says. "floor" is the least any
ctypes consumer must do, written inline with nothing checked: take the
capsule in place as dlpack_ctypes does on CPython (holding a lock, as
another thread may take it too: read its pointer and its name, up to the
NUL, compare the name, write the used_ one), read the struct and the shape
in place (a ctypes array laid over the address space), keep them in a
Python object, and call the deleter when that object dies: one foreign call.
"""
import ctypes
import importlib
import os
import struct
import sys
import threading

import numpy as np
import plot
from interleaved import DunderOnly, compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("DLGEN_CYTHON_DIR"):
    sys.path.insert(0, os.environ["DLGEN_CYTHON_DIR"])
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))  # the current ctypes module, not a build copy

def ctypes_floor(a):
    """The least a pure-ctypes consumer of a's capsule must do."""
    import dlpack_ctypes as ct
    memory = memoryview((ctypes.c_char * (sys.maxsize & -8)).from_address(0)).cast("B")
    words = memory.cast("Q")
    capsule_at = object.__basicsize__  # a PyCapsule's pointer, then its name
    names = (ctypes.c_char_p * (sys.maxsize // 8)).from_address(0)  # names[i]: the string words[i] points to
    used = ctypes.create_string_buffer(b"used_dltensor_versioned")
    used_at = ctypes.addressof(used)
    name = b"dltensor_versioned"
    taking = threading.Lock()
    m = ct.DLManagedTensorVersioned
    shape_at = m.dl_tensor.offset + ct.DLTensor.shape.offset
    head = struct.Struct(f"={m.deleter.offset}xQ{shape_at - m.deleter.offset - 8}xQ")
    dims = struct.Struct(f"={2 * a.ndim}q")
    deleter_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    deleters = {}
    max_version = (1, 0)

    class Held:
        __slots__ = ("address", "deleter", "shape")

        def __del__(self):
            deleters[self.deleter](self.address)

    def consume():
        cap = a.__dlpack__(max_version=max_version)
        at = (id(cap) + capsule_at + 8) >> 3
        with taking:
            p = words[at - 1]
            if names[at] != name:
                raise ValueError("not a versioned capsule")
            words[at] = used_at
        deleter, shape_p = head.unpack_from(memory, p)
        held = Held()
        held.address, held.deleter = p, deleter
        held.shape = dims.unpack_from(memory, shape_p)
        if deleter not in deleters:
            deleters[deleter] = deleter_type(deleter)
        return held

    consume.keep = used  # the used_ name outlives every capsule renamed to it
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
    groups = [compare("Python exchange of 16 float32 elements:", peer, candidates)]
    groups += exchange_api(a, modules.get("dlpack_cython"))
    plot.ratios(plot.out("python-exchange.svg"), "Python exchange cost (make bench-python)",
                groups, plot.machine())


def exchange_api(a, cy):
    """The C exchange API against __dlpack__, tvm-ffi on the other side."""
    try:
        import tvm_ffi
    except ImportError:
        print("apache-tvm-ffi: not installed, exchange-API comparison skipped")
        return []
    if cy is None:
        return []
    t = cy.from_dlpack(a)
    x = tvm_ffi.from_dlpack(a)
    wrapped = tvm_ffi.core.DLTensorTestWrapper(x)
    return [
        compare("tvm-ffi consuming a dlpack_cython tensor:",
                ("via __dlpack__", lambda: tvm_ffi.from_dlpack(DunderOnly(t))),
                [("via __dlpack_c_exchange_api__", lambda: tvm_ffi.from_dlpack(t))]),
        compare("dlpack_cython consuming a tvm-ffi tensor:",
                ("via __dlpack__", lambda: cy.from_dlpack(x)),
                [("via __dlpack_c_exchange_api__", lambda: cy.from_dlpack(wrapped))]),
    ]


if __name__ == "__main__":
    main()
