# The Cython module's last word at import: it refuses to be imported, or to
# have been built, under a name it was not generated for (name_check.py,
# included before this file, says why and in what words). dlgen ships this
# file as dlpack_cython_module_name.pxi, included last.
_check_name("dlpack_cython", Tensor.__module__)
