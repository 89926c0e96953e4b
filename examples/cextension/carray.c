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

#include "dlpack/dlpack_helpers.h"

typedef struct {
  PyObject_HEAD
  DLTensor view;   /* the elements, own or a producer's; own shape and strides in dims */
  int64_t dims[2 * DLGEN_MAX_NDIM];
  PyObject *owner; /* keeps the elements alive: a bytearray, or an imported tensor */
  uint64_t flags;  /* DLGEN_READ_ONLY_FLAG: the elements are read-only */
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
  for (i = ndim - 1; i >= 0 && !PyErr_Occurred(); i--) {
    a->view.shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    a->view.strides[i] = count;
    if (a->view.shape[i] < 0 || (a->view.shape[i] > 0 && count > PY_SSIZE_T_MAX / 4 / a->view.shape[i])) {
      PyErr_Format(PyExc_ValueError, "shape %R: extents must be >= 0 and the array must fit in memory", shape);
    }
    count *= a->view.shape[i];
  }
  if (PyErr_Occurred() ||
      (a->owner = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count ? count : 1) * (Py_ssize_t)sizeof(float))) == NULL) {
    Py_DECREF(a);
    return NULL;
  }
  a->view.data = PyByteArray_AS_STRING(a->owner);
  for (i = 0; i < count; i++) {
    ((float *)a->view.data)[i] = (float)i;
  }
  return (PyObject *)a;
}

static void Array_dealloc(Array *a) {
  Py_XDECREF(a->owner);
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

static PyObject *Array_readonly(Array *a, void *closure) {
  (void)closure;
  return PyBool_FromLong((a->flags & DLGEN_READ_ONLY_FLAG) != 0);
}

/* --- DLPack producer --- */
DLGEN_PY_EXPORT(Array, view, flags);

/* --- DLPack consumer --- */
static PyObject *Array_from_dlpack(PyObject *type, PyObject *x) {
  Array *a = array_new((PyTypeObject *)type, 0);
  if (a == NULL || (a->owner = dlgen_py_from_dlpack(x, Py_None, &a->view, &a->flags)) == NULL ||
      a->view.dtype.code != kDLFloat || a->view.dtype.bits != 32 || a->view.dtype.lanes != 1 ||
      !dlgen_host_readable(a->view.device.device_type)) {
    Py_XDECREF(a); /* an imported tensor's deleter runs here */
    return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "carray holds float32 CPU memory");
  }
  return (PyObject *)a;
}
/* --- end of DLPack --- */

static PyMethodDef Array_methods[] = {
    {"sum", (PyCFunction)Array_sum, METH_NOARGS, "The sum of every element."},
    /* --- DLPack methods --- */
    DLGEN_PY_EXPORT_METHODS(Array),
    {"from_dlpack", (PyCFunction)Array_from_dlpack, METH_O | METH_CLASS, "An Array over a producer's tensor."},
    /* --- end of DLPack --- */
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Array_getset[] = {
    {"readonly", (getter)Array_readonly, NULL, "Whether the elements are read-only.", NULL},
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
