"""What the DLPack sanitizer (python -m dlpack_conformance.sanitize) costs an
exchange, as the ratio of each from_dlpack sanitized to the same call plain,
measured in the same run.

    make bench-sanitize      (writes the kit with dlgen, then runs this)

Plain and sanitized calls are interleaved as bench/interleaved.py says; the
plain function is the library's own, kept before the sanitizer patched it.
Each call imports a 4x6 float32 array and drops the result, so its deleter
(the sanitizer's trampoline, then the producer's) runs inside the timing.
Every exchange is checked in full, the consumer's array read back. Goal
(issue 40): NumPy -> PyTorch at most 2x. Off, the sanitizer costs nothing: nothing is patched
until it is enabled.
"""
import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np
from interleaved import compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "generated", "python"))


def kit():
    """The conformance kit's package, as dlgen writes it, importable."""
    out = tempfile.mkdtemp(prefix="dlgen-bench-kit-")
    subprocess.run(["go", "run", "./cmd/dlgen", "-lang", "conformance", "-out", out], cwd=ROOT, check=True)
    sys.path.insert(0, os.path.join(out, "conformance"))
    return importlib.import_module("dlpack_conformance.sanitize")


def main():
    consumers = {"numpy": np}
    for name in ("torch", "dlpack_ctypes"):
        try:
            consumers[name] = importlib.import_module(name)
        except ImportError:
            print(f"{name}: not installed, skipped")
    plain = {name: m.from_dlpack for name, m in consumers.items()}
    sanitize = kit()
    sanitize.enable(report_at_exit=False)
    sanitized = {name: m.from_dlpack for name, m in consumers.items()}
    assert all(sanitized[n] is not plain[n] for n in plain), "the sanitizer patched every from_dlpack"
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for name in consumers:
        title = f"NumPy -> {name} from_dlpack (4x6 float32)"
        compare(title, (f"{name}.from_dlpack(np_array)", lambda f=plain[name]: f(a)),
                [(f"{name}.from_dlpack(np_array), sanitized", lambda f=sanitized[name]: f(a))])
    if "torch" in consumers:
        t = consumers["torch"].arange(24, dtype=consumers["torch"].float32)
        compare("PyTorch -> NumPy from_dlpack (24 float32; the C exchange API's producer, through __dlpack__)",
                ("np.from_dlpack(tensor)", lambda: plain["numpy"](t)),
                [("np.from_dlpack(tensor), sanitized", lambda: sanitized["numpy"](t))])
    got = sanitize.finish()
    print(f"reports: {len(got)}; exchanges checked: {sanitize.exchanges()}")


if __name__ == "__main__":
    main()
