/* The capsule helpers of dlpack_helpers.h, each used once, compiled by
 * helpers_test.go against this interpreter's Python.h as C and C++. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dlpack_helpers.h"

PyObject *round_trip(DLManagedTensor *managed);

PyObject *round_trip(DLManagedTensor *managed) {
  DLManagedTensor *legacy;
  dlgen_error err;
  PyObject *capsule = dlgen_capsule_legacy(managed);
#ifdef DLGEN_VERSIONED_CAPSULE
  DLManagedTensorVersioned *versioned;
  if (capsule == NULL || dlgen_consume_capsule(capsule, &versioned, &legacy) != 0) {
    Py_XDECREF(capsule);
    return NULL;
  }
  (void)dlgen_capsule_versioned;
#else
  if (capsule == NULL || dlgen_consume_capsule(capsule, &legacy) != 0) {
    Py_XDECREF(capsule);
    return NULL;
  }
#endif
  Py_DECREF(capsule);
  if (dlgen_check_legacy(legacy, &err) != DLGEN_OK) {
    dlgen_release_legacy(legacy);
    dlgen_raise(&err);
    return NULL;
  }
  return dlgen_capsule_legacy(legacy);
}
