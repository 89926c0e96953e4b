"""dlpack_conformance: a DLPack conformance kit for array libraries.

Installed (pip install the directory holding this package, or the
dlpack-conformance wheel), run `dlpack-conformance LIBRARY...` or `python -m
dlpack_conformance LIBRARY...` from any directory, or pytest with `-p
dlpack_conformance --dlpack-library LIBRARY`; not installed, run `python -m
dlpack_conformance` from the directory holding this package. See its
README.md."""

from .adapters import Adapter, ViaNumPy
from .runner import run_library

__all__ = ["Adapter", "ViaNumPy", "run_library"]
