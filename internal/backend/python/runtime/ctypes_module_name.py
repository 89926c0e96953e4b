# The ctypes module's last word at import, in the Cython module's words
# (name_check.py): generated for a package, it refuses any other name. A
# top-level ctypes module is one file of the standard library's ctypes that
# a package may carry under its own name (the conformance kit does): it is
# built under no name, and claims none.
if _GENERATED_NAME != "dlpack_ctypes":
    _check_name("dlpack_ctypes", _GENERATED_NAME)
