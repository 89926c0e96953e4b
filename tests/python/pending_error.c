/* A foreign consumer that misbehaves the way NumPy 2.4 and Paddle do: it
 * releases capsules and calls deleters while its own exception is set, and
 * calls exchange-API entries with an exception set. Built by
 * test_pending_error.py at test time; every function returns NULL with
 * whatever exception is set when it is done, so the caller sees whether
 * the first one survived. */
#include <Python.h>
#include <stdint.h>

static void fail(void) { PyErr_SetString(PyExc_RuntimeError, "the consumer's own error"); }

/* Takes item 0 out of holder and releases it, with an error set. */
PyObject *drop_with_error(PyObject *holder) {
    PyObject *item = PyList_GetItem(holder, 0);
    if (item == NULL) return NULL;
    Py_INCREF(item);
    if (PyList_SetSlice(holder, 0, 1, NULL) < 0) {
        Py_DECREF(item);
        return NULL;
    }
    fail();
    Py_DECREF(item);
    return NULL;
}

/* Calls deleter(managed) with an error set. */
PyObject *delete_with_error(void (*deleter)(void *), void *managed) {
    fail();
    deleter(managed);
    return NULL;
}

/* Calls an entry taking two pointers (the exchange API's from/to
 * py_object entries) with an error set; its result goes to *rc. */
PyObject *call2_with_error(int (*entry)(void *, void *), void *a, void *b, int *rc) {
    fail();
    *rc = entry(a, b);
    return NULL;
}

/* The exchange API's allocator, with an error set. */
PyObject *allocate_with_error(int (*entry)(void *, void *, void *, void (*)(void *, const char *, const char *)),
                              void *prototype, void *out, void (*set_error)(void *, const char *, const char *),
                              int *rc) {
    fail();
    *rc = entry(prototype, out, NULL, set_error);
    return NULL;
}

/* The exchange API's current_work_stream, with an error set. */
PyObject *stream_with_error(int (*entry)(int32_t, int32_t, void **), int32_t type, int32_t id, void **out,
                            int *rc) {
    fail();
    *rc = entry(type, id, out);
    return NULL;
}
