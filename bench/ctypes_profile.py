"""Where the ctypes module's import and export of 16 float32 elements spend
their time, step by step, beside NumPy's own exchange and the floor of
python_exchange.py.

    make bench-python        (runs this after python_exchange.py)

Each step is timed in CPU time of this thread (time.thread_time_ns, so that
other processes of a loaded machine count less), the steps in turn round
after round with the garbage collector off; a figure is the median over
rounds. A step is a part of the work, done alone: the figures of the parts
add up to about the whole, not exactly. It reads the module's private names
(_adopt, _read_versioned, ...): it profiles this source, nothing else.
"""
import ctypes
import gc
import os
import statistics
import sys
import time

import numpy as np
from python_exchange import ctypes_floor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))
import dlpack_ctypes as dl

ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "21"))
NUMBER = 3000


def median_ns(steps):
    """The median CPU time per call of each step, over ROUNDS interleaved rounds."""
    times = {label: [] for label, _ in steps}
    clock = time.thread_time_ns
    gc.disable()
    try:
        for _ in range(ROUNDS):
            for label, fn in steps:
                t0 = clock()
                for _ in range(NUMBER):
                    fn()
                times[label].append((clock() - t0) / NUMBER)
    finally:
        gc.enable()
    return {label: statistics.median(t) for label, t in times.items()}


def main():
    a = np.arange(16, dtype=np.float32)
    version = (dl.DLPACK_MAJOR_VERSION, dl.DLPACK_MINOR_VERSION)
    get, name = dl._capsule_get_pointer, dl._VNAME

    def take_and_delete():  # in place, as from_dlpack does, then the deleter
        capsule = a.__dlpack__(max_version=version)
        at = (id(capsule) + dl._NAME_AT) >> dl._WORD_SHIFT
        dl._take_turn()
        try:
            p = dl._WORDS[at - 1]
            if p and dl._NAME_STRINGS[at] == dl._VNAME_TEXT:
                dl._WORDS[at] = dl._USED_VNAME_ADDRESS
        finally:
            dl._end_turn()
        dl._deleter(dl._read_versioned(dl._MEMORY, p)[3])(p)

    # A copy of a NumPy export's struct with no deleter: _adopt's own work.
    capsule = a.__dlpack__(max_version=version)
    p = get(id(capsule), name)
    copy = ctypes.create_string_buffer(ctypes.string_at(p, dl._VSIZE), dl._VSIZE)
    ctypes.c_void_p.from_address(ctypes.addressof(copy) + dl.DLManagedTensorVersioned.deleter.offset).value = None
    head = dl._read_versioned(dl._MEMORY, p)
    dims = dl._read_unsigned_dims[a.ndim]

    def reads():
        dl._read_versioned(dl._MEMORY, p)
        dims(dl._MEMORY, head[-3])
        dims(dl._MEMORY, head[-2])

    t = dl.from_dlpack(a)
    scratch = (ctypes.c_char * 1024)()  # packed into, and lent to capsules, as a slot is
    float32 = dl._dtype_word(2, 32, 1)  # a dtype as one word, as a Tensor keeps it
    at = ctypes.addressof(scratch)
    steps = [
        ("np.from_dlpack(np_array)", lambda: np.from_dlpack(a)),
        ("import", lambda: dl.from_dlpack(a)),
        ("floor", ctypes_floor(a)),
        ("__dlpack__", lambda: a.__dlpack__(max_version=version)),
        ("__dlpack__ + take + deleter", take_and_delete),
        ("reads", reads),
        ("_adopt", lambda: dl._adopt(ctypes.addressof(copy), True, None)),
        ("export", lambda: np.from_dlpack(t)),
        ("pack", lambda: dl._pack_versioned[1](
            scratch, 0, 1, 3, at, 0, 0, t._head[dl._DATA], 1, 0, 1, float32, 0, 0, 0, 16, 1)),
        ("capsule", lambda: dl._capsule_new(at, dl._VNAME, None)),
    ]
    ns = median_ns(steps)
    peer = ns["np.from_dlpack(np_array)"]

    def row(what, value):
        print(f"  {what:72s} {value:6.0f} ns  {value / peer:5.2f}x")

    print(f"ctypes import and export, CPU time per call (NumPy's exchange {peer:.0f} ns = 1x):")
    row("dlpack_ctypes.from_dlpack(np_array), whole", ns["import"])
    row("  __dlpack__ (NumPy makes the capsule)", ns["__dlpack__"])
    row("  take the capsule in place, rename it; the deleter (1 foreign call)",
        ns["__dlpack__ + take + deleter"] - ns["__dlpack__"])
    row("  read the struct, shape and strides", ns["reads"])
    row("  the checks, the Tensor and its fields", ns["_adopt"] - ns["reads"])
    row("  the rest: from_dlpack, the lease and its __del__",
        ns["import"] - ns["__dlpack__ + take + deleter"] - ns["_adopt"])
    row("floor: a pure-ctypes consumer that checks nothing", ns["floor"])
    row("np.from_dlpack(dlpack_ctypes tensor), whole", ns["export"])
    row("  pack the struct, shape and strides", ns["pack"])
    row("  1 foreign call: make the capsule", ns["capsule"])
    row("  the rest: NumPy's part, the keyword rules, the look at earlier exports",
        ns["export"] - ns["pack"] - ns["capsule"])


if __name__ == "__main__":
    main()
