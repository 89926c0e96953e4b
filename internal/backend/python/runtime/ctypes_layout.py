# The ctypes module's import-time layout check, for every release: dlgen
# copies it into dlpack_ctypes.py after the generated _LAYOUT, which lists
# every struct's size and field offsets on the ABIs the C header knows (none
# for other machines).
import ctypes


def _check_layout():
    """Refuses to import on an ABI whose layout differs from the C header."""
    for ctype, name, want in _LAYOUT:
        got = ctypes.sizeof(ctype) if name is None else getattr(ctype, name).offset
        if got != want:
            what = ctype.__name__ + ("." + name if name else "")
            raise ImportError(f"dlpack_ctypes: {what} is {got} bytes/offset here, "
                              f"the C ABI says {want}")


_check_layout()
