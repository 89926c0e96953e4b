"""dlpack_conformance: a DLPack conformance kit for array libraries.

Run `python -m dlpack_conformance LIBRARY...` from the directory holding this
package. See README.md beside it."""

from .adapters import Adapter
from .runner import run_library

__all__ = ["Adapter", "run_library"]
