"""fillarray: the example framework, an array type over libfill twice over,
in Cython (fillarray.cyarray) and in pure Python over ctypes
(fillarray.pyarray). Both speak DLPack through dlgen's modules, vendored as
fillarray._vendor.python (dlgen -lang python -python-package
fillarray._vendor.python -out fillarray/_vendor): nothing claims a
top-level name, so another package's vendored copy, of any release, lives
in the same process."""
