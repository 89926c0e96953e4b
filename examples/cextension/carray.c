/* carray: a CPython extension in plain C whose float32 array type speaks
 * DLPack both ways with dlgen's helper header alone (c/dlpack/, vendored by
 * `dlgen -lang c -out .`): no check, capsule name, deleter rule or message
 * of its own.
 *
 *     a = carray.Array((2, 3))          # 0, 1, 2, ... row-major
 *     np.from_dlpack(a)                 # zero-copy into NumPy, PyTorch, ...
 *     b = carray.Array.from_dlpack(t)   # zero-copy from any DLPack producer
 *     b.sum()                           # reads through b's strides
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#include "dlpack/dlpack_helpers.h"

typedef struct {
  PyObject_HEAD
  DLTensor view; /* the elements, own or a producer's; shape and strides below */
  int64_t dims[2 * DLGEN_MAX_NDIM];
  int readonly;
  DLManagedTensorVersioned *versioned; /* a producer's tensor this array holds */
  DLManagedTensor *legacy;
} Array;

static PyTypeObject ArrayType;

static Array *array_new(PyTypeObject *type, int32_t ndim) {
  Array *a = (Array *)type->tp_alloc(type, 0);
  if (a != NULL) {
    a->view.device.device_type = kDLCPU;
    a->view.dtype.code = kDLFloat;
    a->view.dtype.bits = 32;
    a->view.dtype.lanes = 1;
    a->view.ndim = ndim;
    a->view.shape = a->dims;
    a->view.strides = a->dims + DLGEN_MAX_NDIM;
  }
  return a;
}

/* Array(shape): float32 elements 0, 1, 2, ... in row-major order. */
static PyObject *Array_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *shape;
  Array *a;
  Py_ssize_t i, ndim;
  int64_t count = 1;
  static char *keywords[] = {"shape", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!", keywords, &PyTuple_Type, &shape)) {
    return NULL;
  }
  ndim = PyTuple_GET_SIZE(shape);
  if (ndim > DLGEN_MAX_NDIM || (a = array_new(type, (int32_t)ndim)) == NULL) {
    return ndim > DLGEN_MAX_NDIM ? PyErr_Format(PyExc_ValueError, "at most %d dimensions", DLGEN_MAX_NDIM) : NULL;
  }
  for (i = ndim - 1; i >= 0; i--) {
    a->view.shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    a->view.strides[i] = count;
    count *= a->view.shape[i];
  }
  if (PyErr_Occurred() || (a->view.data = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(float))) == NULL) {
    Py_DECREF(a);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  for (i = 0; i < count; i++) {
    ((float *)a->view.data)[i] = (float)i;
  }
  return (PyObject *)a;
}

static void Array_dealloc(Array *a) {
  if (a->versioned == NULL && a->legacy == NULL) {
    PyMem_Free(a->view.data);
  }
  dlgen_release_versioned(a->versioned);
  dlgen_release_legacy(a->legacy);
  Py_TYPE(a)->tp_free((PyObject *)a);
}

/* sum(): every element, read through the strides. */
static PyObject *Array_sum(Array *a, PyObject *unused) {
  int64_t index[DLGEN_MAX_NDIM] = {0}, n, count = dlgen_element_count(&a->view);
  int32_t k;
  double total = 0;
  (void)unused;
  for (n = 0; n < count; n++) {
    total += *(float *)dlgen_element_address(&a->view, 0, index, NULL);
    for (k = a->view.ndim - 1; k >= 0 && ++index[k] == a->view.shape[k]; k--) {
      index[k] = 0;
    }
  }
  return PyFloat_FromDouble(total);
}

/* --- DLPack producer --- */
typedef struct {
  DLManagedTensorVersioned tensor; /* manager_ctx: the Array, referenced */
  dlgen_versioned_as_legacy legacy; /* for a consumer that asks for no version */
} Export;

static void export_deleter(DLManagedTensorVersioned *tensor) {
  if (Py_IsInitialized()) { /* any thread, GIL or not */
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)tensor->manager_ctx);
    PyGILState_Release(gil);
  }
  free(tensor); /* the Export, wrapper included */
}

static PyObject *Array_dlpack(Array *a, PyObject *args, PyObject *kwargs) {
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  static char *keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
  int device_type = kDLCPU, device_id = 0;
  Export *e;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO", keywords, &stream, &max_version, &dl_device, &copy) ||
      (dl_device != Py_None && !PyArg_ParseTuple(dl_device, "ii", &device_type, &device_id))) {
    return NULL;
  }
  if (stream != Py_None || PyObject_IsTrue(copy) == 1 || device_type != kDLCPU || device_id != 0) {
    return PyErr_Format(PyExc_BufferError, "carray exports CPU memory as it is: no stream, copy or other device");
  }
  if ((e = (Export *)calloc(1, sizeof *e)) == NULL) {
    return PyErr_NoMemory();
  }
  e->tensor.version.major = DLPACK_MAJOR_VERSION;
  e->tensor.version.minor = DLPACK_MINOR_VERSION;
  e->tensor.manager_ctx = a;
  e->tensor.deleter = export_deleter;
  e->tensor.flags = a->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  e->tensor.dl_tensor = a->view;
  Py_INCREF(a);
  if (max_version != Py_None && PyLong_AsLong(PyTuple_GetItem(max_version, 0)) >= 1) {
    return dlgen_capsule_versioned(&e->tensor);
  }
  return PyErr_Occurred() ? (dlgen_release_versioned(&e->tensor), NULL)
                          : dlgen_capsule_legacy(dlgen_wrap_versioned(&e->legacy, &e->tensor, NULL));
}

static PyObject *Array_dlpack_device(Array *a, PyObject *unused) {
  (void)a;
  (void)unused;
  return Py_BuildValue("(ii)", kDLCPU, 0);
}

/* --- DLPack consumer --- */
static PyObject *Array_from_dlpack(PyObject *type, PyObject *x) {
  DLManagedTensorVersioned *versioned;
  DLManagedTensor *legacy;
  dlgen_error err;
  const DLTensor *t;
  Array *a;
  /* A versioned capsule if the producer makes one; an older producer takes
   * no keywords. */
  PyObject *dlpack = PyObject_GetAttrString(x, "__dlpack__"), *empty = PyTuple_New(0), *capsule = NULL;
  PyObject *kwargs = Py_BuildValue("{s(ii)}", "max_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (dlpack && empty && kwargs && (capsule = PyObject_Call(dlpack, empty, kwargs)) == NULL &&
      PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    capsule = PyObject_Call(dlpack, empty, NULL);
  }
  Py_XDECREF(dlpack);
  Py_XDECREF(empty);
  Py_XDECREF(kwargs);
  if (capsule == NULL || dlgen_consume_capsule(capsule, &versioned, &legacy) != 0) {
    Py_XDECREF(capsule);
    return NULL;
  }
  Py_DECREF(capsule);
  if ((versioned ? dlgen_check_versioned(versioned, &err) : dlgen_check_legacy(legacy, &err)) != DLGEN_OK) {
    dlgen_release_versioned(versioned);
    dlgen_release_legacy(legacy);
    return dlgen_raise(&err), NULL;
  }
  t = versioned ? &versioned->dl_tensor : &legacy->dl_tensor;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1 ||
      !dlgen_host_readable(t->device.device_type) || (a = array_new((PyTypeObject *)type, t->ndim)) == NULL) {
    dlgen_release_versioned(versioned);
    dlgen_release_legacy(legacy);
    return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "carray holds float32 CPU memory");
  }
  a->view.data = (char *)t->data + t->byte_offset;
  memcpy(a->view.shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
  for (a->view.ndim = 0; a->view.ndim < t->ndim; a->view.ndim++) {
    a->view.strides[a->view.ndim] = dlgen_stride(t, a->view.ndim);
  }
  a->readonly = versioned != NULL && (versioned->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  a->versioned = versioned;
  a->legacy = legacy;
  return (PyObject *)a;
}
/* --- end of DLPack --- */

static PyObject *Array_readonly(Array *a, void *closure) {
  (void)closure;
  return PyBool_FromLong(a->readonly);
}

static PyMethodDef Array_methods[] = {
    {"sum", (PyCFunction)Array_sum, METH_NOARGS, "The sum of every element."},
    {"__dlpack__", (PyCFunction)(void (*)(void))Array_dlpack, METH_VARARGS | METH_KEYWORDS, "A DLPack capsule."},
    {"__dlpack_device__", (PyCFunction)Array_dlpack_device, METH_NOARGS, "(kDLCPU, 0)."},
    {"from_dlpack", (PyCFunction)Array_from_dlpack, METH_O | METH_CLASS, "An Array over a producer's tensor."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Array_getset[] = {
    {"readonly", (getter)Array_readonly, NULL, "Whether the producer lent read-only memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "carray.Array",
    .tp_basicsize = sizeof(Array),
    .tp_dealloc = (destructor)Array_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A float32 array that speaks DLPack both ways.",
    .tp_methods = Array_methods,
    .tp_getset = Array_getset,
    .tp_new = Array_new,
};

static struct PyModuleDef carray_module = {PyModuleDef_HEAD_INIT, "carray", NULL, -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_carray(void) {
  PyObject *m;
  if (PyType_Ready(&ArrayType) < 0 || (m = PyModule_Create(&carray_module)) == NULL) {
    return NULL;
  }
  Py_INCREF(&ArrayType);
  if (PyModule_AddObject(m, "Array", (PyObject *)&ArrayType) < 0) {
    Py_DECREF(&ArrayType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
