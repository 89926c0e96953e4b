# The import-time layout check of the generated dlpack_ctypes module, for
# every release: dlgen places it after the generated declarations, whose
# _LAYOUT lists every struct's size and field offsets on the ABIs the C
# header knows (none for other machines). Its import lines join the module's
# import block; the rest is copied verbatim.
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
