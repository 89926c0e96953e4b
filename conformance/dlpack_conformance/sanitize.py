"""python -m dlpack_conformance.sanitize [OPTIONS] PROGRAM.py [ARGS] | -m MODULE [ARGS]

Runs a program unmodified and checks every DLPack exchange in it with the
kit's rules: what each producer's __dlpack__ puts in the capsule, what each
consumer's from_dlpack does with it, and every call of every tensor's
deleter. A second call of a deleter is reported and swallowed, so a program
that would abort on a double free goes on and says why. Reports name the
call site (the program's file:line), both libraries, the requirement broken
(the kit's id and text) and what was seen; a summary goes to stderr at exit.
Exit status: the program's own, or --error-exitcode N when anything was
reported.

How it works: the from_dlpack entry points of the libraries the kit knows
(and of --library adapters) are replaced, at import, by a wrapper that hands
the consumer a proxy of the producer (the producer is never changed). The
proxy's __dlpack__ calls the producer's, and puts the sanitizer's trampoline
in the managed tensor's deleter field: the trampoline forwards the first call
to the producer's deleter and reports any other. After the call the wrapper
judges the consumer: renamed or not, deleter calls, the values it imported.
Where a C compiler is at hand, the common exchange runs in C (_C_SOURCE): a
pre-screen that passes only what the kit's checks pass by construction and
hands everything else to the Python path, which makes every report.
Off (not enabled), nothing is imported or patched.

In a program that cannot be started by it: dlpack_conformance.sanitize.enable().
With pytest: pytest -p dlpack_conformance --dlpack-sanitize."""

import argparse
import atexit
import builtins
import collections
import contextlib
import ctypes
import errno
import gc
import importlib
import importlib.machinery
import importlib.util
import io
import json
import math
import os
import re
import runpy
import struct
import sys
import sysconfig
import threading
import types
import weakref

from . import adapters, reference
from . import dlpack_ctypes as dl
from .spec import REQUIREMENTS, Violation, basis

if __name__ == "__main__":
    # python -m runs this file as __main__: the package's module is the one
    # that runs, so that its C module is built and configured once (before
    # this copy sets up anything) and its state is the one the program sees.
    sys.exit(importlib.import_module("dlpack_conformance.sanitize").main())

MODULE = "python -m dlpack_conformance.sanitize"
COMMAND = "dlpack-sanitize"  # the console command pip installs
PREFIX = "dlpack-sanitize"  # the first word of every line it prints

_VERSIONED = dl.VERSIONED_CAPSULE_NAME.encode()
_LEGACY = dl.CAPSULE_NAME.encode()
_USED = frozenset({dl.USED_CAPSULE_NAME.encode(), dl.USED_VERSIONED_CAPSULE_NAME.encode()})
_DELETER_AT = {
    _VERSIONED: dl.DLManagedTensorVersioned.deleter.offset,
    _LEGACY: dl.DLManagedTensor.deleter.offset,
}
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# The most bytes a tensor's elements may span for its values to be compared
# with the consumer's result (when that result does not view them with the
# tensor's layout, which makes them the tensor's values by construction).
# Reading is the one check whose cost grows with the tensor, and the span is
# copied at export, on every exchange: bounded by bytes.
MAX_VALUE_BYTES = 1 << 16
# Finished tensors remembered, so that a late second deleter call is known.
RETIRED = 1 << 16

# Entry points the kit's adapters do not spell (aliases, legacy capsule-taking
# functions): (module, attribute path, library).
EXTRA_ENTRIES = (
    ("torch.utils.dlpack", "from_dlpack", "torch"),
    ("jax.dlpack", "from_dlpack", "jax"),
    ("cupy", "fromDlpack", "cupy"),
    ("dpctl.tensor", "from_dlpack", "dpctl"),
    ("mxnet.ndarray", "from_dlpack", "mxnet"),
    ("paddle", "from_dlpack", "paddle"),
)


# ---- reading a capsule without the C API's calls ---------------------------


def _capsule_offset():
    """Where a PyCapsule object keeps its pointer (then name, context,
    destructor), found on a capsule of a known pointer: the object header's
    size differs between builds (free-threaded, debug)."""
    marker = 0x5EED5EED5EED
    cap = reference._capsule_new(marker, None, None)
    words = (ctypes.c_size_t * 16).from_address(id(cap))
    return next(i for i in range(16) if words[i] == marker) * ctypes.sizeof(ctypes.c_void_p)


_WORD = ctypes.sizeof(ctypes.c_void_p)
# The address space as machine words: a capsule's fields and a tensor's
# deleter field read and written in place, with no ctypes object made.
_MEMORY = memoryview((ctypes.c_char * (sys.maxsize & -_WORD)).from_address(0)).cast("B")
_WORDS = _MEMORY.cast(
    "Q" if _WORD == 8 else "I"
)
_FIELDS_AT = _capsule_offset()
_NAMES = {}  # a name's address -> its bytes (capsule names are static strings)


def _fields(capsule):
    """The index in _WORDS of a capsule's pointer; its name, context and
    destructor follow."""
    return (id(capsule) + _FIELDS_AT) // _WORD


def _name(fields):
    at = _WORDS[fields + 1]
    name = _NAMES.get(at)
    if name is None:
        name = _NAMES[at] = ctypes.string_at(at) if at else b""
    return name


# ---- state -----------------------------------------------------------------


class _Options:
    strict = False
    json = None
    error_exitcode = None
    quiet_at_exit = False


OPTIONS = _Options()
_lock = threading.RLock()  # re-entered: a deleter may run inside another (a __del__, the collector)
_tracked = {}  # managed tensor address -> _Tensor
_retired = collections.deque()
_reports = {}  # (spec, site, side) -> result dict
_exchanges = [0]  # exchanges checked (under _lock)
_not_intercepted = {}  # entry point -> why
_entries = {}  # module -> [(attribute path, library)]
_enabled = []
_finished = []


class SanitizerError(Exception):
    """--strict: an exchange broke a requirement (its spec)."""

    def __init__(self, spec, message):
        super().__init__(message)
        self.spec = spec


class _Tensor:
    """One managed tensor handed to a consumer, and what became of it."""

    __slots__ = (
        "address",
        "calls",
        "capsule",
        "cell",
        "consumed",
        "consumer",
        "deleter",
        "fields",
        "forwarded",
        "had_destructor",
        "held",
        "producer",
        "refused",
        "result",
        "second_known",
        "site",
        "versioned",
    )

    def __init__(
        self, address, deleter, capsule, fields, versioned, site, producer, consumer, cell, had_destructor
    ):
        self.address = address
        self.deleter = deleter
        self.calls = 0
        self.capsule = capsule
        self.fields = fields
        self.versioned = versioned
        self.site = site
        self.producer = producer
        self.consumer = consumer
        self.result = None
        self.consumed = False
        self.refused = False
        self.held = False  # the first call came while the capsule still owned the tensor
        self.forwarded = False
        self.second_known = False  # the second call is a problem reported already
        self.had_destructor = had_destructor
        self.cell = cell

    def about(self):
        return f"a tensor from {self.producer}"


_deleters = {}  # a deleter's address -> its ctypes function


def _call_deleter(deleter, address, _deleters=_deleters, _DELETER=_DELETER):
    """Calls the producer's deleter (a C function's address) from Python."""
    f = _deleters.get(deleter)
    if f is None:
        f = _deleters[deleter] = _DELETER(deleter)
    f(address)


def _deleter_call(address, _tracked=_tracked, _options=OPTIONS, _error=SanitizerError):
    """A tracked tensor's deleter was called: counts the call, judges it, and
    returns the address of the producer's deleter to call now, or 0 (a
    second call, swallowed; or a call the tensor's capsule will repeat). The
    names it needs are bound: it may run while the interpreter tears the
    module down."""
    t = _tracked.get(address)
    if t is None:
        return 0  # forgotten long ago: nothing is forwarded twice
    # No lock: a deleter may run inside another (a __del__, the collector),
    # and two threads calling one tensor's deleter at once are rare enough.
    t.calls = calls = t.calls + 1
    if calls == 1:
        capsule, fields = t.capsule, t.fields  # once: the exchange's end may clear them meanwhile
        owned = fields is not None and _name(fields) in (_VERSIONED, _LEGACY) and _WORDS[fields + 3]
        if capsule is not None and owned:
            # The consumer calls the deleter while the capsule still owns the
            # tensor, whose destructor will call it again: the producer's
            # deleter runs at that call, after which nothing reads the tensor.
            t.held = True
            return 0
        t.forwarded = True
        _retire(t)
        return t.deleter
    if t.held and not t.forwarded:
        return _release(t)  # the consumer's first call was judged when from_dlpack returned
    if not t.second_known:
        try:
            reference.judge_release(
                consumed=t.consumed,
                by_consumer=calls - (0 if t.consumed else 1),
                destructor_calls=0 if t.consumed else 1,
                had_destructor=t.had_destructor,
                ours=False,
                versioned=t.versioned,
                about=t.about(),
            )
        except Violation as v:
            message = f"{v} (the second call was swallowed)"
            _report(v.spec, message, "consumer", t.site, t.producer, t.consumer)
            if _options.strict:
                # Nothing can be raised into the deleter's caller (C, maybe
                # with no Python frame): the trampoline hands it to
                # sys.unraisablehook, as Python does an error in __del__.
                raise _error(v.spec, f"{v.spec}: {message}") from None
    return 0


def _release(t):
    t.forwarded = True
    _retire(t)
    return t.deleter or 0


# The C module, built where a C compiler is at hand: the trampoline (it
# keeps the consumer's pending exception, which Python code cannot: NumPy and
# Paddle call deleters with theirs set), the deleter swap, and the fast path
# (_fast_path): a from_dlpack, a proxy and a tracked tensor in C, which
# pre-screen an exchange and hand anything unusual to the Python path.
_C_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __linux__
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>
#endif
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif
#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_T_INT T_INT
#define Py_T_BOOL T_BOOL
#define Py_T_ULONGLONG T_ULONGLONG
#define Py_READONLY READONLY
#endif
#ifndef Py_BEGIN_CRITICAL_SECTION
#define Py_BEGIN_CRITICAL_SECTION(o) {
#define Py_END_CRITICAL_SECTION() }
#endif

/* The deleter trampoline forwards a tracked tensor's first deleter call;
   every other call goes to the Python judge (_deleter_call). */
static PyObject *judge;

void dlpack_sanitize_judge(PyObject *f) {
    Py_XINCREF(f);
    Py_XSETREF(judge, f);
}

static PyObject *get_ref(PyObject *dict, PyObject *key) {
    /* dict[key] as a new reference, or NULL (no error set) */
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *got = NULL;
    if (PyDict_GetItemRef(dict, key, &got) < 0) {
        PyErr_Clear();
    }
    return got;
#else
    PyObject *got = PyDict_GetItemWithError(dict, key);
    if (got == NULL) {
        PyErr_Clear();
    }
    Py_XINCREF(got);
    return got;
#endif
}

/* ---- the C pre-screen --------------------------------------------------
   A C-clean exchange is one the kit's checks pass by construction: anything
   else (a check that fails, a field it does not read, an error) goes to the
   Python path, whose checks are the kit's, and which makes every report. */

typedef struct { int32_t type, id; } device_t;
typedef struct { uint8_t code, bits; uint16_t lanes; } dtype_t;
typedef struct {
    void *data;
    device_t device;
    int32_t ndim;
    dtype_t dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} dltensor_t;
typedef struct { uint32_t major, minor; } version_t;
typedef struct {
    version_t version;
    void *manager_ctx;
    void *deleter;
    uint64_t flags;
    dltensor_t dl_tensor;
} versioned_t;
typedef struct {
    dltensor_t dl_tensor;
    void *manager_ctx;
    void *deleter;
} legacy_t;

#define NDIM 8 /* the most dimensions the C path reads; more: Python's */
#define READ_ONLY 1u
#define IS_COPIED 2u

static struct {
    PyObject *tracked;        /* _tracked */
    PyObject *exported_by;    /* _exported_by(proxy, capsule, kwargs) */
    PyObject *after;          /* _after(proxy, result, error) */
    PyObject *kind_of;        /* _kind_of(type) -> int */
    PyObject *producer_label; /* _producer_label(x) */
    PyObject *producers;      /* type -> label */
    PyObject *user_file;      /* _user_file(name) -> bool, cached in user_files */
    PyObject *user_files;
    PyObject *library;        /* _library(name) */
    PyObject *capsule_info;   /* _capsule_info(...) -> reference.Capsule */
    PyObject *kinds;          /* type -> int */
    PyObject *apis;           /* type -> address of dltensor_from_py_object_no_sync, or 0 */
    PyObject *asked, *asked_names; /* max_version=VERSION, as a result's __dlpack__ is asked */
    uint32_t major;
    Py_ssize_t max_bytes;
    Py_ssize_t fields_at;     /* where a capsule keeps its pointer */
    Py_ssize_t api_entry_at;  /* DLPackExchangeAPI.dltensor_from_py_object_no_sync */
    unsigned char dtypes[256][9]; /* [code][bytes]: whole-byte dtypes the kit reads */
    uint64_t exchanges;
    size_t retired_at, retired_n, retired_max;
    uintptr_t *retired; /* pairs: a tensor's address, and its entry's number */
    uintptr_t retired_count;
    int ready;
} S;

#ifdef Py_GIL_DISABLED
static PyMutex retired_lock;
#endif

static PyObject *s_dlpack, *s_dlpack_device, *s_max_version, *s_dl_device, *s_copy, *s_stream, *s_flags,
    *s_writeable, *s_api;

/* ---- Tensor: one tracked managed tensor (what _Tensor is in Python) ---- */

typedef struct {
    PyObject_HEAD
    unsigned long long address, deleter, cell;
    int calls;
    char consumed, refused, held, forwarded, second_known, had_destructor, versioned;
    PyObject *capsule, *producer, *consumer, *result, *site, *site_code;
    int site_at;
    uintptr_t span_at;   /* where the bytes its elements span begin */
    Py_ssize_t span_len; /* how many, or -1: more than max_bytes, not copied */
    PyObject *snap;      /* their copy, taken when first needed */
    uintptr_t retired;   /* its entry in the ring of retired tensors, or 0 */
} Tensor;

static void tensor_dealloc(Tensor *t) {
    Py_XDECREF(t->capsule);
    Py_XDECREF(t->producer);
    Py_XDECREF(t->consumer);
    Py_XDECREF(t->result);
    Py_XDECREF(t->site);
    Py_XDECREF(t->site_code);
    Py_XDECREF(t->snap);
    PyObject_Free(t);
}

/* The call site (_site's file:line), formatted when first asked: the code
   object and its instruction (its line is found only then), or the line
   itself before 3.11. */
static PyObject *site_of(PyObject **site, PyObject *code, int at) {
    if (*site == NULL) {
#if PY_VERSION_HEX >= 0x030B0000
        int line = code != NULL ? PyCode_Addr2Line((PyCodeObject *)code, at) : 0;
#else
        int line = at;
#endif
        *site = code != NULL ? PyUnicode_FromFormat("%U:%d", ((PyCodeObject *)code)->co_filename, line)
                             : PyUnicode_FromString("?");
    }
    Py_XINCREF(*site);
    return *site;
}

static PyObject *tensor_site(Tensor *t, void *c) {
    (void)c;
    return site_of(&t->site, t->site_code, t->site_at);
}

static PyObject *tensor_fields(Tensor *t, void *c) {
    (void)c;
    if (t->capsule == NULL || t->capsule == Py_None) {
        Py_RETURN_NONE;
    }
    return PyLong_FromSsize_t((Py_ssize_t)(((uintptr_t)t->capsule + (uintptr_t)S.fields_at) / sizeof(void *)));
}

static int tensor_set_fields(Tensor *t, PyObject *v, void *c) {
    (void)t;
    (void)c;
    if (v != Py_None) { /* fields follow the capsule: only forgetting both is asked */
        PyErr_SetString(PyExc_TypeError, "fields follow the capsule");
        return -1;
    }
    return 0;
}

static PyObject *tensor_about(Tensor *t, PyObject *unused) {
    (void)unused;
    return PyUnicode_FromFormat("a tensor from %S", t->producer);
}

static PyMemberDef tensor_members[] = {
    {"address", Py_T_ULONGLONG, offsetof(Tensor, address), Py_READONLY, NULL},
    {"deleter", Py_T_ULONGLONG, offsetof(Tensor, deleter), Py_READONLY, NULL},
    {"cell", Py_T_ULONGLONG, offsetof(Tensor, cell), Py_READONLY, NULL},
    {"calls", Py_T_INT, offsetof(Tensor, calls), 0, NULL},
    {"consumed", Py_T_BOOL, offsetof(Tensor, consumed), 0, NULL},
    {"refused", Py_T_BOOL, offsetof(Tensor, refused), 0, NULL},
    {"held", Py_T_BOOL, offsetof(Tensor, held), 0, NULL},
    {"forwarded", Py_T_BOOL, offsetof(Tensor, forwarded), 0, NULL},
    {"second_known", Py_T_BOOL, offsetof(Tensor, second_known), 0, NULL},
    {"had_destructor", Py_T_BOOL, offsetof(Tensor, had_destructor), Py_READONLY, NULL},
    {"versioned", Py_T_BOOL, offsetof(Tensor, versioned), Py_READONLY, NULL},
    {"capsule", Py_T_OBJECT_EX, offsetof(Tensor, capsule), 0, NULL},
    {"producer", Py_T_OBJECT_EX, offsetof(Tensor, producer), Py_READONLY, NULL},
    {"consumer", Py_T_OBJECT_EX, offsetof(Tensor, consumer), Py_READONLY, NULL},
    {"result", Py_T_OBJECT_EX, offsetof(Tensor, result), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef tensor_getset[] = {
    {"site", (getter)tensor_site, NULL, NULL, NULL},
    {"fields", (getter)tensor_fields, (setter)tensor_set_fields, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"about", (PyCFunction)tensor_about, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dlpack_sanitize.Tensor",
    .tp_basicsize = sizeof(Tensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_members = tensor_members,
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
};

/* read_memory: n bytes at address as a new bytes object, or NULL with no
   error set where they cannot all be read. A producer may hand memory it
   does not have (a tensor the consumer must refuse unread): on Linux the
   bytes are read through process_vm_readv, which fails where a plain read
   would crash the program; elsewhere, or where the kernel refuses that call,
   by memcpy. */
static PyObject *read_memory(const void *address, Py_ssize_t n) {
    PyObject *b = PyBytes_FromStringAndSize(NULL, n);
    if (b == NULL || n == 0) {
        return b;
    }
#ifdef __linux__
    struct iovec local, remote;
    local.iov_base = PyBytes_AS_STRING(b);
    local.iov_len = (size_t)n;
    remote.iov_base = (void *)(uintptr_t)address;
    remote.iov_len = (size_t)n;
    errno = 0;
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == n) {
        return b;
    }
    if (errno != ENOSYS && errno != EPERM) {
        Py_DECREF(b);
        return NULL;
    }
#endif
    memcpy(PyBytes_AS_STRING(b), address, (size_t)n);
    return b;
}

static PyObject *read_memory_py(PyObject *self, PyObject *args) {
    unsigned long long address;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kn", &address, &n)) {
        return NULL;
    }
    if (n < 0 || address > (unsigned long long)UINTPTR_MAX - (unsigned long long)n) {
        Py_RETURN_NONE;
    }
    PyObject *b = read_memory((const void *)(uintptr_t)address, n);
    if (b == NULL && !PyErr_Occurred()) {
        Py_RETURN_NONE;
    }
    return b;
}

static PyMethodDef read_memory_def = {"read_memory", read_memory_py, METH_VARARGS, NULL};

PyObject *dlpack_sanitize_reader(void) {
    return PyCFunction_New(&read_memory_def, NULL);
}

/* The copy of the bytes a C-clean tensor's elements span, taken when the
   Python path first needs it (the consumer's array does not view the
   tensor), or before the producer's deleter may free them: its first call
   during the exchange. */
static PyObject *snapshot_of(Tensor *t) {
    if (t->snap == NULL && t->span_len >= 0) {
        t->snap = read_memory((const void *)t->span_at, t->span_len);
    }
    return t->snap;
}

/* ---- the retired tensors: a ring of addresses, the oldest forgotten ---- */

/* retire puts tensor t, whose first deleter call was forwarded, in the ring;
   the oldest entry leaves it, and its tensor is forgotten if its address
   still names it (a producer's allocator hands the same address to later
   tensors, which stay tracked). */
static void retire(uintptr_t address, Tensor *t) {
    uintptr_t old = 0, old_entry = 0;
#ifdef Py_GIL_DISABLED
    PyMutex_Lock(&retired_lock);
#endif
    if (S.retired_n == S.retired_max) {
        old = S.retired[2 * S.retired_at];
        old_entry = S.retired[2 * S.retired_at + 1];
    } else {
        S.retired_n++;
    }
    t->retired = ++S.retired_count ? S.retired_count : ++S.retired_count; /* never 0 */
    S.retired[2 * S.retired_at] = address;
    S.retired[2 * S.retired_at + 1] = t->retired;
    S.retired_at = (S.retired_at + 1) % S.retired_max;
#ifdef Py_GIL_DISABLED
    PyMutex_Unlock(&retired_lock);
#endif
    if (old) {
        PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)old), *was = NULL;
        /* the dict locked, so that no tensor tracked at the address meanwhile is dropped */
        Py_BEGIN_CRITICAL_SECTION(S.tracked);
        was = key != NULL ? get_ref(S.tracked, key) : NULL;
        if (was != NULL && Py_IS_TYPE(was, &TensorType) && ((Tensor *)was)->forwarded &&
            ((Tensor *)was)->retired == old_entry) {
            if (PyDict_DelItem(S.tracked, key) < 0) {
                PyErr_Clear();
            }
        }
        Py_END_CRITICAL_SECTION();
        Py_XDECREF(was);
        Py_XDECREF(key);
        PyErr_Clear();
    }
}

/* The first call of a C-tracked tensor's deleter after its exchange: the
   producer's deleter, or NULL (the Python judge decides). */
static void *first_call(void *address) {
    void *forward = NULL;
    if (!S.ready) {
        return NULL;
    }
    PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)address);
    PyObject *got = key != NULL ? get_ref(S.tracked, key) : NULL;
    Py_XDECREF(key);
    if (got != NULL && Py_IS_TYPE(got, &TensorType)) {
        Tensor *t = (Tensor *)got;
        Py_BEGIN_CRITICAL_SECTION(got);
        if (t->calls == 0 && t->capsule == Py_None && t->deleter) {
            t->calls = 1;
            t->forwarded = 1;
            forward = (void *)(uintptr_t)t->deleter;
        } else if (t->calls == 0 && snapshot_of(t) == NULL) {
            PyErr_Clear();
        }
        Py_END_CRITICAL_SECTION();
    }
    if (forward != NULL) {
        retire((uintptr_t)address, (Tensor *)got);
    }
    Py_XDECREF(got);
    PyErr_Clear();
    return forward;
}

void dlpack_sanitize_trampoline(void *address) {
    void (*forward)(void *) = NULL;
    /* Once the interpreter is finalizing, nothing is judged or forwarded (the
       process is ending: the tensor is left to it), and a thread without a
       thread state must not ask for one, which would hang it or end it. */
#if PY_VERSION_HEX >= 0x030D0000
    if (Py_IsFinalizing()) {
        return;
    }
#else
    if (_Py_IsFinalizing()) {
        return;
    }
#endif
    PyGILState_STATE state = PyGILState_Ensure();
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *pending = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
#endif
    if (judge != NULL) {
        void *first = first_call(address);
        if (first != NULL) {
            forward = (void (*)(void *))(uintptr_t)first;
        } else {
            PyObject *at = PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)address);
            PyObject *r = at != NULL ? PyObject_CallOneArg(judge, at) : NULL;
            Py_XDECREF(at);
            if (r == NULL) {
                /* --strict's error, which the caller cannot take: Python's
                   unraisable hook reports it, as it does an error in __del__ */
                PyErr_WriteUnraisable(judge);
            } else {
                forward = (void (*)(void *))(uintptr_t)PyLong_AsUnsignedLongLong(r);
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    forward = NULL;
                }
                Py_DECREF(r);
            }
        }
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(pending);
#else
    PyErr_Restore(type, value, traceback);
#endif
    PyGILState_Release(state);
    if (forward != NULL) {
        forward(address);
    }
}

/* swap(capsule): a DLPack capsule's managed tensor gets the trampoline in
   its deleter field, in one call: (address, the producer's deleter, the
   field's index in words, versioned, had a destructor), or None for anything
   else (another object, name or NULL pointer, a misaligned field), which the
   Python path judges and reports. */
static Py_ssize_t deleter_at[2]; /* legacy, versioned */

static PyObject *swap(PyObject *self, PyObject *capsule) {
    (void)self;
    if (!PyCapsule_CheckExact(capsule)) {
        Py_RETURN_NONE;
    }
    const char *name = PyCapsule_GetName(capsule);
    int versioned;
    if (name != NULL && strcmp(name, "dltensor_versioned") == 0) {
        versioned = 1;
    } else if (name != NULL && strcmp(name, "dltensor") == 0) {
        versioned = 0;
    } else {
        Py_RETURN_NONE;
    }
    char *address = PyCapsule_GetPointer(capsule, name);
    if (address == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    uintptr_t cell = (uintptr_t)(address + deleter_at[versioned]);
    if (cell % sizeof(void *) != 0) {
        Py_RETURN_NONE;
    }
    void **field = (void **)cell;
    void *deleter = *field;
    *field = (void *)(uintptr_t)dlpack_sanitize_trampoline;
    return Py_BuildValue("(KKKOO)", (unsigned long long)(uintptr_t)address,
                         (unsigned long long)(uintptr_t)deleter,
                         (unsigned long long)(cell / sizeof(void *)),
                         versioned ? Py_True : Py_False,
                         PyCapsule_GetDestructor(capsule) != NULL ? Py_True : Py_False);
}

static PyMethodDef swap_def = {"swap", swap, METH_O, NULL};

/* ---- the proxy a consumer gets ------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *x, *consumer, *site_code, *site;
    int site_at;
    int has_flags; /* whether x may have flags (_read_only asks x.flags.writeable) */
    int mode;      /* 0: no export yet, 1: one export, C-clean, 2: the Python path's */
    PyObject *tensor, *pending, *info, *requests, *snapshot;
    PyObject *kwnames, *kwvalues[4];
    Py_ssize_t nkw;
    /* what the C-clean export read */
    int lazy_snapshot; /* _snapshot is the C-clean tensor's, copied when first asked */
    Py_ssize_t snap_low;
    int versioned, ndim, shape_null, strides_null;
    version_t version;
    uint64_t flags, byte_offset;
    uintptr_t data;
    device_t device;
    dtype_t dtype;
    int64_t shape[NDIM], strides[NDIM];
} Proxy;

static PyTypeObject ProxyType, DeviceProxyType;

/* A proxy is collected as the Python path's is: a consumer's array that
   keeps it may close a cycle through its producer. */
static int proxy_traverse(Proxy *p, visitproc visit, void *arg) {
    Py_VISIT(p->x);
    Py_VISIT(p->tensor);
    Py_VISIT(p->pending);
    Py_VISIT(p->info);
    Py_VISIT(p->requests);
    Py_VISIT(p->snapshot);
    for (Py_ssize_t i = 0; i < p->nkw; i++) {
        Py_VISIT(p->kwvalues[i]);
    }
    return 0;
}

static int proxy_clear(Proxy *p) {
    Py_CLEAR(p->x);
    Py_CLEAR(p->consumer);
    Py_CLEAR(p->site_code);
    Py_CLEAR(p->site);
    Py_CLEAR(p->tensor);
    Py_CLEAR(p->pending);
    Py_CLEAR(p->info);
    Py_CLEAR(p->requests);
    Py_CLEAR(p->snapshot);
    Py_CLEAR(p->kwnames);
    for (Py_ssize_t i = 0; i < p->nkw; i++) {
        Py_CLEAR(p->kwvalues[i]);
    }
    p->nkw = 0;
    return 0;
}

static void proxy_dealloc(Proxy *p) {
    PyObject_GC_UnTrack(p);
    proxy_clear(p);
    PyObject_GC_Del(p);
}

static PyObject *tuple_of(const int64_t *v, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *e = PyLong_FromLongLong(v[i]);
        if (e == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, e);
    }
    return t;
}

/* The keyword arguments names/values (n of them) as a dict, or NULL. */
static PyObject *kwargs_of(PyObject *names, PyObject *const *values, Py_ssize_t n) {
    PyObject *kwargs = PyDict_New();
    for (Py_ssize_t i = 0; kwargs != NULL && i < n; i++) {
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(names, i), values[i]) < 0) {
            Py_CLEAR(kwargs);
        }
    }
    return kwargs;
}

/* A C-clean proxy handed to the Python path: what the Python path would have
   recorded at export (requests, the capsule as the kit reads it), made from
   what the C path kept; _snapshot copies the bytes when asked. */
static int materialize(Proxy *p) {
    if (p->mode != 1) {
        return 0;
    }
    p->mode = 2;
    PyObject *kwargs = kwargs_of(p->kwnames, p->kwvalues, p->nkw);
    if (kwargs == NULL) {
        return -1;
    }
    Py_XSETREF(p->requests, PyList_New(1));
    if (p->requests == NULL) {
        Py_DECREF(kwargs);
        return -1;
    }
    PyList_SET_ITEM(p->requests, 0, kwargs);
    PyObject *shape = p->shape_null ? (Py_INCREF(Py_None), Py_None) : tuple_of(p->shape, p->ndim);
    PyObject *strides = p->strides_null ? (Py_INCREF(Py_None), Py_None) : tuple_of(p->strides, p->ndim);
    PyObject *info = NULL;
    if (shape != NULL && strides != NULL) {
        PyObject *version = p->versioned ? Py_BuildValue("(II)", p->version.major, p->version.minor)
                                         : (Py_INCREF(Py_None), Py_None);
        if (version != NULL) {
            info = PyObject_CallFunction(S.capsule_info, "(OOK(ii)(iii)OOKK)",
                                         p->versioned ? Py_True : Py_False, version,
                                         (unsigned long long)p->flags, (int)p->device.type, (int)p->device.id,
                                         (int)p->dtype.code, (int)p->dtype.bits,
                                         (int)p->dtype.lanes, shape, strides,
                                         (unsigned long long)p->byte_offset, (unsigned long long)p->data);
            Py_DECREF(version);
        }
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (info == NULL) {
        return -1;
    }
    Py_XSETREF(p->info, info);
    return 0;
}

/* Whether x is read-only as the Python path asks (x.flags.writeable is
   False): 1, 0, or -1 where it cannot tell. */
static int read_only(Proxy *p) {
    if (!p->has_flags) {
        return 0;
    }
    PyObject *flags = PyObject_GetAttr(p->x, s_flags);
    if (flags == NULL) {
        return PyErr_ExceptionMatches(PyExc_AttributeError) ? (PyErr_Clear(), 0) : -1;
    }
    PyObject *w = PyObject_GetAttr(flags, s_writeable);
    Py_DECREF(flags);
    if (w == NULL) {
        return PyErr_ExceptionMatches(PyExc_AttributeError) ? (PyErr_Clear(), 0) : -1;
    }
    int ro = w == Py_False;
    Py_DECREF(w);
    return ro;
}

/* An exact int, or with as_int also an int whose type (an IntEnum, as
   PyTorch's device types) keeps int's conversion, as int() reads it; 0 for
   anything else or one out of range. */
static int int_of(PyObject *v, int as_int, long long *out) {
    int keeps_int = as_int && PyLong_Check(v) && Py_TYPE(v)->tp_as_number != NULL &&
                    Py_TYPE(v)->tp_as_number->nb_int == PyLong_Type.tp_as_number->nb_int;
    if (!PyLong_CheckExact(v) && !keeps_int) {
        return 0;
    }
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    return !overflow && !(*out == -1 && PyErr_Occurred());
}

/* A pair of exact ints (max_version, a device), or 0. */
static int int_pair(PyObject *v, long long *a, long long *b) {
    return PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) == 2 && int_of(PyTuple_GET_ITEM(v, 0), 0, a) &&
           int_of(PyTuple_GET_ITEM(v, 1), 0, b);
}

/* __dlpack_device__()'s answer as _dlpack_device reads it, or 0. */
static int device_pair(PyObject *v, long long *type, long long *id) {
    return PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) == 2 && int_of(PyTuple_GET_ITEM(v, 0), 1, type) &&
           int_of(PyTuple_GET_ITEM(v, 1), 1, id);
}

static int same_name(PyObject *k, PyObject *name) {
    return k == name || (PyUnicode_Check(k) && PyUnicode_Compare(k, name) == 0);
}

/* The C pre-screen of the capsule p's producer returned: 1 when it is clean
   (then the tensor is tracked, its deleter swapped, its bytes kept), 0 when
   the Python path must judge it (nothing was changed), -1 on an error. */
static int clean_export(Proxy *p, PyObject *capsule, PyObject *const *kwv, PyObject *kwnames) {
    PyObject *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nkw > 4 || !S.ready) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (same_name(k, s_max_version)) {
            max_version = kwv[i];
        } else if (same_name(k, s_dl_device)) {
            dl_device = kwv[i];
        } else if (same_name(k, s_copy)) {
            copy = kwv[i];
        } else if (same_name(k, s_stream)) {
            if (kwv[i] != Py_None) {
                return 0; /* a stream for a CPU tensor: consumer-stream-cpu, judged in Python */
            }
        } else {
            return 0;
        }
    }
    if (!PyCapsule_CheckExact(capsule)) {
        return 0;
    }
    const char *name = PyCapsule_GetName(capsule);
    if (name == NULL) {
        PyErr_Clear();
        return 0;
    }
    int versioned = strcmp(name, "dltensor_versioned") == 0;
    if (!versioned && strcmp(name, "dltensor") != 0) {
        return 0;
    }
    char *address = PyCapsule_GetPointer(capsule, name);
    if (address == NULL) {
        PyErr_Clear();
        return 0;
    }
    uintptr_t cell = (uintptr_t)(address + deleter_at[versioned]);
    if (cell % sizeof(void *) != 0) {
        return 0;
    }
    dltensor_t *t;
    uint64_t flags = 0;
    version_t version = {0, 0};
    if (versioned) {
        versioned_t *m = (versioned_t *)address;
        long long asked_major, asked_minor;
        version = m->version;
        if (version.major != S.major || max_version == Py_None ||
            !int_pair(max_version, &asked_major, &asked_minor) || asked_major < (long long)S.major) {
            PyErr_Clear();
            return 0;
        }
        flags = m->flags;
        t = &m->dl_tensor;
    } else {
        t = &((legacy_t *)address)->dl_tensor;
    }
    int ndim = t->ndim;
    if (ndim < 0 || ndim > NDIM || (ndim && (t->shape == NULL || t->strides == NULL)) || t->device.type != 1 ||
        t->byte_offset >= ((uint64_t)1 << 62) || (uintptr_t)t->data > UINTPTR_MAX - (uintptr_t)t->byte_offset) {
        return 0;
    }
    if (t->dtype.lanes != 1 || t->dtype.bits % 8 || t->dtype.bits > 64 ||
        !S.dtypes[t->dtype.code][t->dtype.bits / 8]) {
        return 0;
    }
    /* the device: dl_device asked for, else __dlpack_device__()'s */
    long long dev_type, dev_id;
    if (dl_device != Py_None) {
        if (!int_pair(dl_device, &dev_type, &dev_id)) {
            PyErr_Clear();
            return 0;
        }
    } else if (Py_IS_TYPE(p, &DeviceProxyType)) {
        PyObject *d = PyObject_CallMethodNoArgs(p->x, s_dlpack_device);
        int ok = d != NULL && device_pair(d, &dev_type, &dev_id);
        Py_XDECREF(d);
        if (!ok) {
            PyErr_Clear();
            return 0;
        }
    } else {
        dev_type = t->device.type;
        dev_id = t->device.id;
    }
    if (dev_type != t->device.type || dev_id != t->device.id) {
        return 0;
    }
    if (versioned) {
        if (copy == Py_False ? (flags & IS_COPIED) != 0
                             : copy == Py_True ? (flags & IS_COPIED) == 0 : copy != Py_None) {
            return 0;
        }
        if (!(flags & READ_ONLY)) {
            int ro = read_only(p);
            if (ro != 0) {
                PyErr_Clear();
                return 0;
            }
        }
    }
    /* the bytes the elements span (_span), kept when no more than max_bytes */
    int64_t size = t->dtype.bits / 8, low = 0, high = 0, count = 1;
    for (int i = 0; i < ndim; i++) {
        int64_t n = t->shape[i], step = t->strides[i];
        /* |step| * (n - 1) at most 2^56 items: with at most 8 dimensions of
           items of at most 8 bytes, no sum below overflows */
        if (n < 0 || n > ((int64_t)1 << 40) || step > ((int64_t)1 << 40) || step < -((int64_t)1 << 40) ||
            (n > 1 && (step < 0 ? -step : step) > ((int64_t)1 << 56) / (n - 1))) {
            return 0;
        }
        count = n == 0 || count == 0 ? 0 : (count > ((int64_t)1 << 40) / n ? ((int64_t)1 << 40) : count * n);
        if (n > 0) {
            if (step < 0) {
                low += step * (n - 1);
            } else {
                high += step * (n - 1);
            }
        }
    }
    low *= size;
    high = high * size + size;
    if (count == 0) {
        low = high = 0;
    } else if (t->data == NULL) {
        return 0; /* data-null, judged in Python */
    }
    uintptr_t first = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    /* clean: tracked, the deleter swapped */
    PyObject *producer = get_ref(S.producers, (PyObject *)Py_TYPE(p->x));
    if (producer == NULL) {
        producer = PyObject_CallOneArg(S.producer_label, p->x);
        if (producer == NULL) {
            return -1;
        }
    }
    Tensor *r = PyObject_New(Tensor, &TensorType);
    PyObject *key = PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)address);
    if (r == NULL || key == NULL) {
        Py_XDECREF(r);
        Py_XDECREF(key);
        Py_DECREF(producer);
        return -1;
    }
    r->address = (unsigned long long)(uintptr_t)address;
    r->deleter = (unsigned long long)(uintptr_t) * (void **)cell;
    r->cell = (unsigned long long)(cell / sizeof(void *));
    r->calls = 0;
    r->consumed = r->refused = r->held = r->forwarded = r->second_known = 0;
    r->had_destructor = PyCapsule_GetDestructor(capsule) != NULL;
    r->versioned = (char)versioned;
    Py_INCREF(capsule);
    r->capsule = capsule;
    r->producer = producer;
    Py_INCREF(p->consumer);
    r->consumer = p->consumer;
    Py_INCREF(Py_None);
    r->result = Py_None;
    r->site = NULL;
    Py_XINCREF(p->site_code);
    r->site_code = p->site_code;
    r->site_at = p->site_at;
    r->span_at = first + (uintptr_t)(intptr_t)low;
    r->span_len = high - low <= S.max_bytes ? (Py_ssize_t)(high - low) : -1;
    r->snap = NULL;
    r->retired = 0;
    if (PyDict_SetItem(S.tracked, key, (PyObject *)r) < 0) {
        Py_DECREF(key);
        Py_DECREF(r);
        return -1;
    }
    Py_DECREF(key);
    *(void **)cell = (void *)(uintptr_t)dlpack_sanitize_trampoline;
#ifdef Py_GIL_DISABLED
    __atomic_fetch_add(&S.exchanges, 1, __ATOMIC_RELAXED);
#else
    S.exchanges++;
#endif
    Py_XSETREF(p->tensor, (PyObject *)r);
    p->lazy_snapshot = r->span_len >= 0;
    p->snap_low = (Py_ssize_t)low;
    p->versioned = versioned;
    p->version = version;
    p->flags = flags;
    p->device = t->device;
    p->dtype = t->dtype;
    p->ndim = ndim;
    p->shape_null = t->shape == NULL;
    p->strides_null = t->strides == NULL;
    p->data = (uintptr_t)t->data;
    p->byte_offset = t->byte_offset;
    for (int i = 0; i < ndim; i++) {
        p->shape[i] = t->shape[i];
        p->strides[i] = t->strides[i];
    }
    if (kwnames != NULL) {
        Py_INCREF(kwnames);
        p->kwnames = kwnames;
        for (Py_ssize_t i = 0; i < nkw; i++) {
            Py_INCREF(kwv[i]);
            p->kwvalues[i] = kwv[i];
        }
        p->nkw = nkw;
    }
    return 1;
}

#define MAX_ARGS 16

static PyObject *proxy_dlpack(Proxy *p, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *stack[MAX_ARGS + 1];
    PyObject *capsule;
    if (nargs + nkw < MAX_ARGS) {
        stack[0] = p->x;
        for (Py_ssize_t i = 0; i < nargs + nkw; i++) {
            stack[i + 1] = args[i];
        }
        capsule = PyObject_VectorcallMethod(s_dlpack, stack, (size_t)(nargs + 1), kwnames);
    } else {
        PyObject *method = PyObject_GetAttr(p->x, s_dlpack);
        capsule = method != NULL ? PyObject_Vectorcall(method, args, (size_t)nargs, kwnames) : NULL;
        Py_XDECREF(method);
    }
    if (capsule == NULL) {
        return NULL;
    }
    if (p->mode == 0 && nargs == 0) {
        int clean = clean_export(p, capsule, args, kwnames);
        if (clean != 0) {
            if (clean > 0) {
                p->mode = 1;
                return capsule;
            }
            Py_DECREF(capsule);
            return NULL;
        }
    }
    if (materialize(p) < 0) {
        Py_DECREF(capsule);
        return NULL;
    }
    p->mode = 2;
    PyObject *kwargs = kwargs_of(kwnames, args + nargs, nkw);
    PyObject *r = kwargs != NULL
                      ? PyObject_CallFunctionObjArgs(S.exported_by, (PyObject *)p, capsule, kwargs, NULL)
                      : NULL;
    Py_XDECREF(kwargs);
    Py_DECREF(capsule);
    return r;
}

static PyObject *proxy_dlpack_device(Proxy *p, PyObject *unused) {
    (void)unused;
    return PyObject_CallMethodNoArgs(p->x, s_dlpack_device);
}

static PyObject *proxy_getattro(Proxy *p, PyObject *name) {
    PyObject *r = PyObject_GenericGetAttr((PyObject *)p, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return r;
    }
    /* The producer's other protocols (the C exchange API's
       __dlpack_c_exchange_api__, __array_interface__, ...) are not the
       proxy's: a consumer that would take them takes __dlpack__. */
    if (PyUnicode_Check(name) && PyUnicode_GET_LENGTH(name) >= 2 && PyUnicode_READ_CHAR(name, 0) == '_' &&
        PyUnicode_READ_CHAR(name, 1) == '_') {
        return NULL;
    }
    PyErr_Clear();
    return PyObject_GetAttr(p->x, name);
}

static PyObject *proxy_site(Proxy *p, void *c) {
    (void)c;
    return site_of(&p->site, p->site_code, p->site_at);
}

/* _snapshot: (bytes, lowest offset) or None, as the Python path's _snapshot. */
static PyObject *proxy_snapshot(Proxy *p, void *c) {
    (void)c;
    if (p->lazy_snapshot && Py_IS_TYPE(p->tensor, &TensorType)) {
        Tensor *t = (Tensor *)p->tensor;
        PyObject *got = NULL;
        /* locked, as the deleter's first call on another thread may copy too */
        Py_BEGIN_CRITICAL_SECTION(p->tensor);
        PyObject *snap = t->snap != NULL || t->calls == 0 ? snapshot_of(t) : NULL;
        got = snap != NULL ? Py_BuildValue("(On)", snap, p->snap_low) : NULL;
        Py_END_CRITICAL_SECTION();
        if (got == NULL && !PyErr_Occurred()) {
            Py_RETURN_NONE;
        }
        return got;
    }
    Py_INCREF(p->snapshot);
    return p->snapshot;
}

static int proxy_set_snapshot(Proxy *p, PyObject *v, void *c) {
    (void)c;
    if (v == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_snapshot");
        return -1;
    }
    p->lazy_snapshot = 0;
    Py_INCREF(v);
    Py_XSETREF(p->snapshot, v);
    return 0;
}

static PyObject *proxy_requests(Proxy *p, void *c) {
    (void)c;
    if (materialize(p) < 0) {
        return NULL;
    }
    if (p->requests == NULL) {
        p->requests = PyList_New(0);
    }
    Py_XINCREF(p->requests);
    return p->requests;
}

static PyMemberDef proxy_members[] = {
    {"_x", Py_T_OBJECT_EX, offsetof(Proxy, x), Py_READONLY, NULL},
    {"_consumer", Py_T_OBJECT_EX, offsetof(Proxy, consumer), Py_READONLY, NULL},
    {"_tensor", Py_T_OBJECT_EX, offsetof(Proxy, tensor), 0, NULL},
    {"_pending", Py_T_OBJECT_EX, offsetof(Proxy, pending), 0, NULL},
    {"_info", Py_T_OBJECT_EX, offsetof(Proxy, info), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef proxy_getset[] = {
    {"_site", (getter)proxy_site, NULL, NULL, NULL},
    {"requests", (getter)proxy_requests, NULL, NULL, NULL},
    {"_snapshot", (getter)proxy_snapshot, (setter)proxy_set_snapshot, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef proxy_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))proxy_dlpack, METH_FASTCALL | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef device_proxy_methods[] = {
    {"__dlpack_device__", (PyCFunction)proxy_dlpack_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProxyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dlpack_sanitize.Exchange",
    .tp_basicsize = sizeof(Proxy),
    .tp_dealloc = (destructor)proxy_dealloc,
    .tp_getattro = (getattrofunc)proxy_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)proxy_traverse,
    .tp_clear = (inquiry)proxy_clear,
    .tp_members = proxy_members,
    .tp_getset = proxy_getset,
    .tp_methods = proxy_methods,
};

static PyTypeObject DeviceProxyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dlpack_sanitize.DeviceExchange",
    .tp_basicsize = sizeof(Proxy),
    .tp_dealloc = (destructor)proxy_dealloc,
    .tp_getattro = (getattrofunc)proxy_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)proxy_traverse,
    .tp_clear = (inquiry)proxy_clear,
    .tp_methods = device_proxy_methods,
};

/* ---- after the consumer returned ---------------------------------------- */

/* The address of a type's dltensor_from_py_object_no_sync, or NULL. */
typedef int (*from_py_t)(void *, dltensor_t *);

static from_py_t exchange_entry(PyTypeObject *kind) {
    PyObject *cached = get_ref(S.apis, (PyObject *)kind);
    if (cached == NULL) {
        uintptr_t entry = 0;
        PyObject *table = PyObject_GetAttr((PyObject *)kind, s_api);
        if (table != NULL) {
            char *api = NULL;
            if (PyCapsule_CheckExact(table)) {
                api = PyCapsule_GetPointer(table, "dlpack_exchange_api");
            } else if (PyLong_Check(table)) {
                api = (char *)(uintptr_t)PyLong_AsUnsignedLongLong(table);
            }
            if (api != NULL && !PyErr_Occurred() && ((version_t *)api)->major == S.major) {
                entry = (uintptr_t) * (void **)(api + S.api_entry_at);
            }
            Py_DECREF(table);
        }
        PyErr_Clear();
        cached = PyLong_FromUnsignedLongLong((unsigned long long)entry);
        if (cached == NULL || PyDict_SetItem(S.apis, (PyObject *)kind, cached) < 0) {
            PyErr_Clear();
            Py_XDECREF(cached);
            return NULL;
        }
    }
    uintptr_t entry = (uintptr_t)PyLong_AsUnsignedLongLong(cached);
    Py_DECREF(cached);
    return (from_py_t)entry;
}

/* A buffer's format as a DLPack dtype (native order, one element), or 0. */
static int format_dtype(const char *f, Py_ssize_t itemsize, dtype_t *d) {
    if (f == NULL) {
        f = "B";
    }
    if (*f == '@') {
        f++;
    }
    int code;
    if (strcmp(f, "f") == 0 || strcmp(f, "d") == 0 || strcmp(f, "e") == 0) {
        code = 2;
    } else if (strcmp(f, "Zf") == 0 || strcmp(f, "Zd") == 0) {
        code = 5;
    } else if (strcmp(f, "?") == 0) {
        code = 6;
    } else if (strlen(f) == 1 && strchr("bhilq", f[0]) != NULL) {
        code = 0;
    } else if (strlen(f) == 1 && strchr("BHILQ", f[0]) != NULL) {
        code = 1;
    } else {
        return 0;
    }
    d->code = (uint8_t)code;
    d->bits = (uint8_t)(itemsize * 8);
    d->lanes = 1;
    return itemsize > 0 && itemsize <= 16;
}

/* Whether dims of extent > 1 step alike. */
static int same_steps(const Proxy *p, const int64_t *shape, const int64_t *strides) {
    int64_t row = 1;
    for (int i = p->ndim - 1; i >= 0; i--) {
        if (shape[i] != p->shape[i]) {
            return 0;
        }
        int64_t step = strides != NULL ? strides[i] : row;
        if (shape[i] > 1 && step != p->strides[i]) {
            return 0;
        }
        row *= shape[i];
    }
    return 1;
}

static int same_tensor(const Proxy *p, const dltensor_t *v) {
    return v->device.type == p->device.type && v->device.id == p->device.id &&
           (uintptr_t)v->data + (uintptr_t)v->byte_offset == p->data + (uintptr_t)p->byte_offset &&
           v->dtype.code == p->dtype.code && v->dtype.bits == p->dtype.bits &&
           v->dtype.lanes == p->dtype.lanes && v->ndim == p->ndim && (v->ndim == 0 || v->shape != NULL) &&
           same_steps(p, v->shape, v->strides);
}

/* The result's layout read from the capsule of its own __dlpack__
   (max_version asked, as _exported asks first), the capsule then dropped. */
static int exported_layout(Proxy *p, PyObject *y) {
    PyObject *capsule = NULL;
    if (S.asked != NULL) {
        PyObject *stack[2] = {y, S.asked};
        capsule = PyObject_VectorcallMethod(s_dlpack, stack, 1, S.asked_names);
    }
    if (capsule == NULL || !PyCapsule_CheckExact(capsule)) {
        PyErr_Clear();
        Py_XDECREF(capsule);
        return 0;
    }
    int same = 0;
    const char *name = PyCapsule_GetName(capsule);
    char *m = name != NULL ? PyCapsule_GetPointer(capsule, name) : NULL;
    if (m != NULL && strcmp(name, "dltensor_versioned") == 0) {
        same = ((versioned_t *)m)->version.major == S.major && same_tensor(p, &((versioned_t *)m)->dl_tensor);
    } else if (m != NULL && strcmp(name, "dltensor") == 0) {
        same = same_tensor(p, &((legacy_t *)m)->dl_tensor);
    }
    PyErr_Clear();
    Py_DECREF(capsule);
    return same;
}

/* Whether the result views the tensor's memory with its layout (_layout):
   1 yes, 0 no or cannot tell. */
static int same_layout(Proxy *p, PyObject *y) {
    uintptr_t first = p->data + (uintptr_t)p->byte_offset;
    from_py_t entry = S.api_entry_at >= 0 ? exchange_entry(Py_TYPE(y)) : NULL;
    if (entry != NULL) {
        dltensor_t v;
        if (entry(y, &v) != 0) {
            PyErr_Clear();
            return 0;
        }
        return same_tensor(p, &v);
    }
    if (!PyObject_CheckBuffer(y)) {
        return exported_layout(p, y);
    }
    if (p->device.type != 1 || p->device.id != 0) {
        return 0;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(y, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        return 0;
    }
    int same = 0;
    dtype_t d;
    if (view.ndim == p->ndim && (uintptr_t)view.buf == first && format_dtype(view.format, view.itemsize, &d) &&
        d.code == p->dtype.code && d.bits == p->dtype.bits && view.ndim <= NDIM) {
        int64_t shape[NDIM], strides[NDIM];
        same = 1;
        for (int i = 0; i < view.ndim; i++) {
            shape[i] = view.shape[i];
            if (view.strides[i] % view.itemsize) {
                same = 0;
            }
            strides[i] = view.strides[i] / view.itemsize;
        }
        same = same && same_steps(p, shape, strides);
    }
    PyBuffer_Release(&view);
    return same;
}

/* The C judge of a C-clean exchange: 1 when the consumer did what a
   correct one does (renamed the capsule, called no deleter, returned an
   array viewing the tensor with its layout), 0 for the Python judge. */
static int clean_result(Proxy *p, PyObject *y) {
    Tensor *t = (Tensor *)p->tensor;
    if (y == Py_None || !Py_IS_TYPE(p->tensor, &TensorType) || t->capsule == NULL || t->capsule == Py_None) {
        return 0;
    }
    const char *name = PyCapsule_GetName(t->capsule);
    if (name == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (strcmp(name, t->versioned ? "used_dltensor_versioned" : "used_dltensor") != 0) {
        return 0;
    }
    if (p->lazy_snapshot && !same_layout(p, y)) {
        return 0;
    }
    PyObject *ref = PyWeakref_NewRef(y, NULL);
    if (ref == NULL) {
        PyErr_Clear();
        ref = Py_None;
        Py_INCREF(ref);
    }
    int clean = 0;
    PyObject *capsule = NULL;
    Py_BEGIN_CRITICAL_SECTION(t);
    if (t->calls == 0) {
        t->consumed = 1;
        t->refused = 0;
        Py_XSETREF(t->result, ref);
        ref = NULL;
        capsule = t->capsule;
        Py_INCREF(Py_None);
        t->capsule = Py_None;
        clean = 1;
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(ref);
    Py_XDECREF(capsule);
    return clean;
}

/* ---- the patched from_dlpack ------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *fn, *library, *slow, *consumer, *dict;
    vectorcallfunc vectorcall;
} Entry;

/* Where in a frame's code it is: its instruction, or its line before 3.11. */
static int frame_at(PyFrameObject *f) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetLasti(f);
#else
    return PyFrame_GetLineNumber(f);
#endif
}

/* The program's code and where in it this exchange was made (_site). */
static int find_site(PyObject **site_code, int *at) {
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    PyObject *first = NULL;
    int first_at = 0;
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        if (first == NULL) {
            first = (PyObject *)code;
            Py_INCREF(first);
            first_at = frame_at(f);
        }
        PyObject *user = get_ref(S.user_files, code->co_filename);
        if (user == NULL) {
            user = PyObject_CallOneArg(S.user_file, code->co_filename);
            if (user == NULL) {
                Py_DECREF(code);
                Py_DECREF(f);
                Py_XDECREF(first);
                return -1;
            }
        }
        int is_user = user == Py_True;
        Py_DECREF(user);
        if (is_user) {
            *site_code = (PyObject *)code;
            *at = frame_at(f);
            Py_DECREF(f);
            Py_XDECREF(first);
            return 0;
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    *site_code = first;
    *at = first_at;
    return 0;
}

static PyObject *entry_call(Entry *e, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n < 1 || n + nkw > MAX_ARGS || !S.ready) {
        return PyObject_Vectorcall(e->slow, args, (size_t)n, kwnames);
    }
    PyObject *x = args[0];
    PyObject *kind = get_ref(S.kinds, (PyObject *)Py_TYPE(x));
    if (kind == NULL) {
        kind = PyObject_CallOneArg(S.kind_of, (PyObject *)Py_TYPE(x));
        if (kind == NULL) {
            return NULL;
        }
    }
    long how = PyLong_AsLong(kind);
    Py_DECREF(kind);
    if ((how & 3) == 0) {
        return PyObject_Vectorcall(e->fn, args, nargsf, kwnames);
    }
    if ((how & 3) == 3) {
        return PyObject_Vectorcall(e->slow, args, (size_t)n, kwnames);
    }
    if (e->consumer == NULL) { /* its label, once the library has its version */
        PyObject *label = PyObject_CallOneArg(S.library, e->library);
        if (label == NULL) {
            return NULL;
        }
        Py_BEGIN_CRITICAL_SECTION(e);
        if (e->consumer == NULL) {
            e->consumer = label;
            label = NULL;
        }
        Py_END_CRITICAL_SECTION();
        Py_XDECREF(label);
    }
    Proxy *p = PyObject_GC_New(Proxy, (how & 3) == 2 ? &DeviceProxyType : &ProxyType);
    if (p == NULL) {
        return NULL;
    }
    memset((char *)p + sizeof(PyObject), 0, sizeof(Proxy) - sizeof(PyObject));
    Py_INCREF(x);
    p->x = x;
    Py_INCREF(e->consumer);
    p->consumer = e->consumer;
    p->has_flags = (int)(how >> 2);
    PyObject **none[] = {&p->tensor, &p->pending, &p->info, &p->snapshot};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        Py_INCREF(Py_None);
        *none[i] = Py_None;
    }
    PyObject_GC_Track(p);
    if (find_site(&p->site_code, &p->site_at) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    PyObject *stack[MAX_ARGS];
    stack[0] = (PyObject *)p;
    for (Py_ssize_t i = 1; i < n + nkw; i++) {
        stack[i] = args[i];
    }
    PyObject *y = PyObject_Vectorcall(e->fn, stack, (size_t)n, kwnames);
    if (y != NULL && (p->mode == 0 || (p->mode == 1 && clean_result(p, y)))) {
        Py_DECREF(p);
        return y;
    }
    PyObject *error = NULL, *r;
    if (y == NULL) {
#if PY_VERSION_HEX >= 0x030C0000
        error = PyErr_GetRaisedException();
#else
        PyObject *type, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        PyErr_NormalizeException(&type, &error, &traceback);
        if (traceback != NULL) {
            PyException_SetTraceback(error, traceback);
        }
        Py_XDECREF(type);
        Py_XDECREF(traceback);
#endif
    }
    r = materialize(p) < 0 ? NULL
                           : PyObject_CallFunctionObjArgs(S.after, (PyObject *)p, y != NULL ? y : Py_None,
                                                          error != NULL ? error : Py_None, NULL);
    Py_DECREF(p);
    if (r == NULL) {
        if (error != NULL) {
#if PY_VERSION_HEX >= 0x030C0000
            PyObject *raised = PyErr_GetRaisedException();
            PyException_SetContext(raised, error);
            PyErr_SetRaisedException(raised);
#else
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            PyErr_NormalizeException(&type, &value, &traceback);
            PyException_SetContext(value, error);
            PyErr_Restore(type, value, traceback);
#endif
        }
        Py_XDECREF(y);
        return NULL;
    }
    Py_DECREF(r);
    if (error != NULL) {
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(error);
#else
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(error)), error, PyException_GetTraceback(error));
#endif
        return NULL;
    }
    return y;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *fn, *library, *slow;
    if (!PyArg_ParseTuple(args, "OOO", &fn, &library, &slow) || (kwargs != NULL && PyDict_Size(kwargs))) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "Entry(fn, library, slow)");
        }
        return NULL;
    }
    Entry *e = (Entry *)type->tp_alloc(type, 0);
    if (e == NULL) {
        return NULL;
    }
    Py_INCREF(fn);
    e->fn = fn;
    Py_INCREF(library);
    e->library = library;
    Py_INCREF(slow);
    e->slow = slow;
    e->vectorcall = (vectorcallfunc)entry_call;
    return (PyObject *)e;
}

static void entry_dealloc(Entry *e) {
    Py_XDECREF(e->fn);
    Py_XDECREF(e->library);
    Py_XDECREF(e->slow);
    Py_XDECREF(e->consumer);
    Py_XDECREF(e->dict);
    Py_TYPE(e)->tp_free(e);
}

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dlpack_sanitize.from_dlpack",
    .tp_basicsize = sizeof(Entry),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_dictoffset = offsetof(Entry, dict),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = entry_new,
};

static PyObject *exchanges(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong((unsigned long long)S.exchanges);
}

static PyMethodDef exchanges_def = {"exchanges", exchanges, METH_NOARGS, NULL};

PyObject *dlpack_sanitize_swap(Py_ssize_t legacy_at, Py_ssize_t versioned_at) {
    deleter_at[0] = legacy_at;
    deleter_at[1] = versioned_at;
    return PyCFunction_New(&swap_def, NULL);
}

/* The C path, configured by the Python path's functions and the release's
   facts: (Entry, Exchange, DeviceExchange, Tensor, exchanges), or an error
   where its structs are not the release's (the Python path stays). */
PyObject *dlpack_sanitize_fast(PyObject *config) {
    PyObject *dtypes;
    Py_ssize_t retired, offsets[6];
    if (!PyArg_ParseTuple(config, "OOOOOOOOOOOOOO!nnnO(nnnnnn)", &S.tracked, &S.exported_by, &S.after,
                          &S.kind_of, &S.producer_label, &S.producers, &S.user_file, &S.user_files, &S.library,
                          &S.capsule_info, &S.kinds, &S.apis, &dtypes, &PyTuple_Type, &S.asked, &S.max_bytes,
                          &S.fields_at, &retired, &s_api, &offsets[0], &offsets[1], &offsets[2], &offsets[3],
                          &offsets[4], &offsets[5])) {
        return NULL;
    }
    if (offsets[0] != (Py_ssize_t)sizeof(dltensor_t) ||
        offsets[1] != (Py_ssize_t)offsetof(versioned_t, dl_tensor) ||
        offsets[2] != (Py_ssize_t)offsetof(legacy_t, deleter) ||
        offsets[3] != (Py_ssize_t)offsetof(versioned_t, deleter) ||
        offsets[4] != (Py_ssize_t)offsetof(versioned_t, flags) || deleter_at[0] != offsets[2] ||
        deleter_at[1] != offsets[3]) {
        PyErr_SetString(PyExc_ValueError, "the release's structs are not the C path's");
        return NULL;
    }
    S.api_entry_at = offsets[5];
    S.major = PyTuple_GET_SIZE(S.asked) == 2 ? (uint32_t)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(S.asked, 0))
                                             : 0;
    S.asked_names = Py_BuildValue("(s)", "max_version");
    if (PyErr_Occurred() || S.asked_names == NULL) {
        return NULL;
    }
    PyObject *iter = PyObject_GetIter(dtypes), *item;
    while (iter != NULL && (item = PyIter_Next(iter)) != NULL) {
        int code, bits;
        if (PyArg_ParseTuple(item, "ii", &code, &bits) && code >= 0 && code < 256 && bits % 8 == 0 &&
            bits > 0 && bits <= 64) {
            S.dtypes[code][bits / 8] = 1;
        }
        Py_DECREF(item);
    }
    Py_XDECREF(iter);
    if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *held[] = {S.tracked, S.exported_by, S.after, S.kind_of, S.producer_label, S.producers,
                        S.user_file, S.user_files, S.library, S.capsule_info, S.kinds, S.apis, s_api, S.asked};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
        Py_INCREF(held[i]); /* kept to the interpreter's end: deleters may run then */
    }
    S.retired_max = (size_t)retired;
    S.retired = PyMem_RawCalloc(2 * S.retired_max, sizeof(uintptr_t));
    s_dlpack = PyUnicode_InternFromString("__dlpack__");
    s_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    s_max_version = PyUnicode_InternFromString("max_version");
    s_dl_device = PyUnicode_InternFromString("dl_device");
    s_copy = PyUnicode_InternFromString("copy");
    s_stream = PyUnicode_InternFromString("stream");
    s_flags = PyUnicode_InternFromString("flags");
    s_writeable = PyUnicode_InternFromString("writeable");
    DeviceProxyType.tp_base = &ProxyType;
    if (S.retired == NULL || PyType_Ready(&TensorType) < 0 || PyType_Ready(&ProxyType) < 0 ||
        PyType_Ready(&DeviceProxyType) < 0 || PyType_Ready(&EntryType) < 0) {
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    S.ready = 1;
    return Py_BuildValue("(OOOON)", &EntryType, &ProxyType, &DeviceProxyType, &TensorType,
                         PyCFunction_New(&exchanges_def, NULL));
}
"""


def _compiled():
    """The C module, built once per interpreter into the user's cache with
    the C compiler (cc, or $CC): (the trampoline's address, swap, the
    library), or None where it cannot be built."""
    import hashlib
    import shutil
    import subprocess
    import tempfile

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if os.environ.get("DLPACK_SANITIZE_PURE") or not cc or not include:
        return None
    tag = hashlib.sha256(f"{_C_SOURCE}{sys.version}{include}".encode()).hexdigest()[:16]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dlpack-sanitize")
    lib = os.path.join(cache, f"trampoline-{tag}.so")
    try:
        if not os.path.exists(lib):
            os.makedirs(cache, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                source = os.path.join(tmp, "trampoline.c")
                with open(source, "w") as f:
                    f.write(_C_SOURCE)
                built = os.path.join(tmp, "trampoline.so")
                subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", include, source, "-o", built],
                               check=True, capture_output=True)
                os.replace(built, lib)
        c = ctypes.PyDLL(lib)
    except (OSError, subprocess.CalledProcessError):
        return None
    c.dlpack_sanitize_judge.argtypes = [ctypes.py_object]
    c.dlpack_sanitize_judge.restype = None
    c.dlpack_sanitize_judge(_deleter_call)
    c.dlpack_sanitize_swap.argtypes = [ctypes.c_ssize_t, ctypes.c_ssize_t]
    c.dlpack_sanitize_swap.restype = ctypes.py_object
    swap = c.dlpack_sanitize_swap(_DELETER_AT[_LEGACY], _DELETER_AT[_VERSIONED])
    return ctypes.cast(c.dlpack_sanitize_trampoline, ctypes.c_void_p).value, swap, c


def _deleter_called(address, _deleter_call=_deleter_call, _call_deleter=_call_deleter, _error=SanitizerError):
    """The ctypes trampoline: a consumer's pending exception is lost here."""
    # Nothing is raised into the C caller (--strict's error goes to
    # sys.unraisablehook, as ctypes hands it any callback's); at shutdown the
    # module may be half gone.
    try:
        forward = _deleter_call(address)
        if forward:
            _call_deleter(forward, address)
    except _error:
        raise
    except Exception:  # noqa: BLE001, S110 - see above
        pass


# _swap: the C helper that tracks a capsule in one call, or None (Python's path).
_TRAMPOLINE_AT, _swap, _C = _compiled() or (None, None, None)


class _IOVec(ctypes.Structure):
    _fields_ = (("base", ctypes.c_void_p), ("len", ctypes.c_size_t))


def _memory_reader():
    """read(address, n): n bytes of this process's memory, or None where they
    are not all there. A producer may hand memory it does not have (a tensor
    a consumer must refuse unread): on Linux they are read through
    process_vm_readv, which fails where a plain read would crash the program;
    elsewhere, or where the kernel refuses that call, as they are. The C
    module's where it is built, else the same through ctypes."""
    if _C is not None:
        _C.dlpack_sanitize_reader.argtypes = []
        _C.dlpack_sanitize_reader.restype = ctypes.py_object
        return _C.dlpack_sanitize_reader()
    readv = None
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            readv = ctypes.CDLL(None, use_errno=True).process_vm_readv
            vec = ctypes.POINTER(_IOVec)
            readv.argtypes = [ctypes.c_int, vec, ctypes.c_ulong, vec, ctypes.c_ulong, ctypes.c_ulong]
            readv.restype = ctypes.c_ssize_t
    top = 1 << (8 * ctypes.sizeof(ctypes.c_void_p))

    def read(address, n):
        if n < 0 or address < 0 or address + n > top:
            return None
        if n == 0:
            return b""
        buffer = ctypes.create_string_buffer(n)
        if readv is not None:
            local, remote = _IOVec(ctypes.addressof(buffer), n), _IOVec(address, n)
            if readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) == n:
                return buffer.raw
            if ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
                return None
        return ctypes.string_at(address, n)

    return read


_read_memory = _memory_reader()
if _TRAMPOLINE_AT is None:
    _TRAMPOLINE = _DELETER(_deleter_called)
    _TRAMPOLINE_AT = ctypes.cast(_TRAMPOLINE, ctypes.c_void_p).value
    # Deleter fields name it until the last tensor is gone, at the
    # interpreter's very end too: it is never freed.
    reference._incref(_TRAMPOLINE)


def _retire(t):
    _retired.append((t.address, t))
    if len(_retired) > RETIRED:
        _forget()


def _forget():
    """Forgets the oldest finished tensor, if its address still names it (a
    producer's allocator hands the same address to later tensors, which stay
    tracked)."""
    old, t = _retired.popleft()
    if _tracked.get(old) is t and t.forwarded:
        _tracked.pop(old, None)


def _track(capsule, site, producer, consumer):
    """Puts the trampoline in the capsule's deleter field; the _Tensor, or a
    Violation when the capsule is none DLPack names."""
    with _lock:
        _exchanges[0] += 1
    swapped = _swap(capsule) if _swap is not None else None
    if swapped is not None:  # the common path: the C helper checked the name and swapped the deleter
        address, deleter, cell, versioned, had_destructor = swapped
        t = _Tensor(address, deleter, capsule, _fields(capsule), versioned, site, producer, consumer, cell,
                    had_destructor)
        _tracked[address] = t
        return t
    fields = _fields(capsule) if type(capsule) is _CAPSULE else None
    name = _name(fields) if fields is not None else None
    if name not in _DELETER_AT:
        reference.Capsule(capsule)  # raises the kit's Violation
    address = _WORDS[fields]
    if not address:
        raise Violation("capsule-name", "the capsule holds a NULL pointer")
    cell, misaligned = divmod(address + _DELETER_AT[name], _WORD)
    if misaligned:
        return None  # a managed tensor no C compiler would place: left alone
    t = _Tensor(address, _WORDS[cell], capsule, fields, name == _VERSIONED, site, producer, consumer, cell,
                bool(_WORDS[fields + 3]))
    _tracked[address] = t
    _WORDS[cell] = _TRAMPOLINE_AT
    return t


_CAPSULE = type(reference._capsule_new(1, None, None))


# ---- who is who ------------------------------------------------------------

_LIBRARY_DIRS = tuple(
    {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {os.path.dirname(os.path.abspath(__file__))}
)
_user_files = {}


def _site(depth):
    """The program's file:line that made this exchange: the first caller
    outside the standard library, site-packages and the kit."""
    frame = sys._getframe(depth)
    first = frame
    while frame is not None:
        name = frame.f_code.co_filename
        if _user_files.get(name) or _user_file(name):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return f"{first.f_code.co_filename}:{first.f_lineno}"


def _user_file(name):
    """Whether code in the file name is the program's (remembered)."""
    user = _user_files.get(name)
    if user is None:
        user = _user_files[name] = not (
            name.startswith(_LIBRARY_DIRS)
            or name.startswith("<frozen")
            or f"{os.sep}site-packages{os.sep}" in name
            or f"{os.sep}dist-packages{os.sep}" in name
        )
    return user


_versions = {}


def _library(module_name):
    """'name version' of the top-level package of module_name."""
    top = (module_name or "?").split(".")[0]
    label = _versions.get(top)
    if label is None:
        version = getattr(sys.modules.get(top), "__version__", None)
        label = _versions[top] = f"{top} {version}" if version else top
    return label


_producers = {}


def _producer_label(x):
    kind = type(x)
    label = _producers.get(kind)
    if label is None:
        module = getattr(kind, "__module__", "?")
        label = _producers[kind] = (
            f"{kind.__qualname__} of {module}" if module == "__main__" or module not in sys.modules
            or module.split(".")[0] in ("__main__", "builtins") else f"{_library(module)} ({kind.__qualname__})"
        )
    return label


# ---- reports ---------------------------------------------------------------


def _report(spec, message, side, site, producer, consumer, pending=None):
    """Records one problem; one report per requirement, call site and side."""
    key = (spec, site, side)
    with _lock:
        r = _reports.get(key)
        if r is not None:
            r["count"] += 1
            return
        strength, source, text = REQUIREMENTS[spec]
        library = consumer if side == "consumer" else producer
        r = _reports[key] = {
            "library": library,
            "case": f"sanitize/{site}",
            "side": side,
            "verdict": "fail" if strength == "must" else "warn",
            "message": message,
            "about": f"{producer} -> {consumer} at {site}",
            "spec": spec,
            "strength": strength,
            "basis": basis(spec),
            "source": source,
            "requirement": text,
            "reproducer": None,
            "declared": False,
            "malformed": False,
            "traceback": None,
            "site": site,
            "producer": producer,
            "consumer": consumer,
            "count": 1,
        }
    word = "FAIL" if r["verdict"] == "fail" else "WARN"
    print(f"{PREFIX}: {word} {spec} at {site}: {consumer if side == 'consumer' else producer}: {message}",
          file=sys.stderr)
    if pending is not None:
        pending.append((spec, message))


def reports():
    """Every report so far, as the kit's results (--json writes them)."""
    with _lock:
        return [dict(r) for r in _reports.values()]


# ---- the exchange ----------------------------------------------------------


class _Exchange:
    """The proxy a consumer gets in place of the producer: __dlpack__ calls
    the producer's and tracks the capsule; every other attribute is the
    producer's."""

    __slots__ = (
        "_consumer",
        "_info",
        "_pending",
        "_site",
        "_snapshot",
        "_tensor",
        "_x",
        "requests",
    )

    def __init__(self, x, consumer, site):
        self._x = x
        self._consumer = consumer
        self._site = site
        self._tensor = self._pending = self._snapshot = self._info = None
        self.requests = []

    def __dlpack__(self, *args, **kwargs):
        return _exported_by(self, self._x.__dlpack__(*args, **kwargs), kwargs)

    def __getattr__(self, name):
        # The producer's other protocols (the C exchange API's
        # __dlpack_c_exchange_api__, whose functions a consumer would call
        # with the proxy, __array_interface__, ...) are not the proxy's: a
        # consumer that would take them takes __dlpack__.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._x, name)


class _DeviceExchange(_Exchange):
    """The proxy of a producer that has __dlpack_device__."""

    __slots__ = ()

    def __dlpack_device__(self):
        return self._x.__dlpack_device__()


_PROXIES = (_Exchange, _DeviceExchange)


def _exported_by(proxy, capsule, kwargs):
    """Tracks and checks the capsule the proxy's producer exported when
    asked with kwargs; returns it."""
    producer = _producers.get(type(proxy._x)) or _producer_label(proxy._x)
    if proxy._tensor is None:
        try:
            proxy._tensor = _track(capsule, proxy._site, producer, proxy._consumer)
        except Violation as v:
            proxy._pending = []
            _report(v.spec, str(v), "producer", proxy._site, producer, proxy._consumer, proxy._pending)
            return capsule
        except Exception as e:  # noqa: BLE001 - the sanitizer's bug: the capsule goes on untouched
            _internal_error(e)
            return capsule
    proxy.requests.append(kwargs)
    if proxy._pending is None:
        proxy._pending = []
    try:
        proxy._info = reference.check_capsule(
            proxy._x, capsule, max_version=kwargs.get("max_version"), dl_device=kwargs.get("dl_device")
        )
        reference.check_strides_and_flags(proxy._info, copy=kwargs.get("copy"), readonly=_read_only(proxy._x))
    except Violation as v:
        _report(v.spec, str(v), "producer", proxy._site, producer, proxy._consumer, proxy._pending)
        if proxy._info is None:  # what the consumer was handed, for its checks
            with contextlib.suppress(Violation):
                proxy._info = reference.Capsule(capsule)
    except Exception as e:  # noqa: BLE001 - the sanitizer's bug, not the program's
        _internal_error(e)
    proxy._snapshot = _snapshot(proxy._info)
    if proxy._info is not None:
        # Only the tracked tensor holds the capsule: a consumer that drops
        # it lets it die when the call is over, as it would unsanitized.
        proxy._info.capsule = None
    return capsule


def _read_only(x):
    flags = getattr(x, "flags", None)
    return getattr(flags, "writeable", True) is False


def _elements(cap):
    """The elements of a reference.Capsule as the kit reads them, or None
    where it cannot (another device, a dtype it does not read, too many)."""
    if cap is None:
        return None
    try:
        if cap.versioned and cap.version[0] != reference.VERSION[0]:
            return None
        if cap.device[0] not in reference.HOST_READABLE or not reference.decodable(cap.dtype):
            return None
        if cap.shape is None or _span(cap) is None or (not cap.data and math.prod(cap.shape)):
            return None
        return cap.elements()
    except Exception:  # noqa: BLE001 - a capsule the kit cannot read is judged elsewhere
        return None


def _span(cap):
    """(lowest, highest) byte offset past data + byte_offset that the
    tensor's elements occupy, or None: sub-byte or undecodable elements,
    or more than MAX_VALUE_BYTES."""
    dtype = cap.dtype
    decodable = _decodable.get(dtype)
    if decodable is None:
        decodable = _decodable[dtype] = not dtype[1] % 8 and reference.decodable(dtype)
    if not decodable:
        return None
    size = dtype[1] // 8 * dtype[2]
    shape, strides = cap.shape, cap.strides
    count = math.prod(shape)
    if not count:
        return (0, 0)
    if not strides:  # row-major (or no dimension: one element)
        return (0, count * size) if count * size <= MAX_VALUE_BYTES else None
    low = high = 0
    for n, step in zip(shape, strides, strict=True):
        if step < 0:
            low += step * (n - 1)
        else:
            high += step * (n - 1)
    low, high = low * size, high * size + size
    return (low, high) if high - low <= MAX_VALUE_BYTES else None


_decodable = {}  # a dtype -> whether the kit reads its elements, whole bytes each


def _snapshot(cap):
    """A copy of the bytes the tensor's elements occupy, taken at export
    (the producer may free them once the consumer is done): (bytes, lowest
    offset), or None where the CPU cannot read them or they are too many."""
    if cap is None or (cap.versioned and cap.version[0] != reference.VERSION[0]):
        return None
    if cap.device[0] not in reference.HOST_READABLE or cap.shape is None:
        return None
    span = _span(cap)
    if span is None or (not cap.data and span[1] > span[0]):
        return None
    low, high = span
    data = _read_memory(cap.first + low, high - low)
    return None if data is None else (data, low)


def _expected(cap, snapshot):
    """The tensor's elements, read by the kit's reader from the snapshot."""
    data, low = snapshot
    buffer = ctypes.create_string_buffer(data, max(len(data), 1))
    return reference.read_elements(ctypes.addressof(buffer) - low, 0, cap.shape, cap.strides, cap.dtype,
                                   cap.flags)


def _exported(y):
    """The capsule of the consumer's result, from its own __dlpack__, or None."""
    export = getattr(y, "__dlpack__", None)
    if export is None:
        return None
    try:
        return export(max_version=reference.VERSION)
    except Exception:  # noqa: BLE001, S110 - a legacy export, or none: tried next
        pass
    try:
        return export()
    except Exception:  # noqa: BLE001 - the result does not export: not read
        return None


def _layout(cap):
    """What decides which bytes each element is: the device, the first
    element's address, dtype, shape and the strides of the dimensions longer
    than 1 (a reference.Capsule's)."""
    return _normal(cap.device, cap.first, cap.dtype, cap.shape, cap.strides)


def _normal(device, first, dtype, shape, strides):
    strides = strides or reference.row_major(shape)
    return device, first, dtype, shape, tuple(s for n, s in zip(shape, strides, strict=True) if n > 1)


# A DLTensor as struct reads it (native alignment is C's), and where a
# managed tensor holds it.
_DLTENSOR = struct.Struct("@PiiiBBHPPQ")
_DLTENSOR_AT = {
    _VERSIONED: dl.DLManagedTensorVersioned.dl_tensor.offset,
    _LEGACY: dl.DLManagedTensor.dl_tensor.offset,
}
_MAJOR_AT = dl.DLManagedTensorVersioned.version.offset + dl.DLPackVersion.major.offset


def _capsule_layout(capsule):
    """_layout of a capsule of this release, read in place (no ctypes
    object made), or None where the kit's reader is needed."""
    if type(capsule) is not _CAPSULE or _DLTENSOR.size != ctypes.sizeof(dl.DLTensor):
        return None
    fields = _fields(capsule)
    name = _name(fields)
    at = _DLTENSOR_AT.get(name)
    address = _WORDS[fields]
    if at is None or not address:
        return None
    if name == _VERSIONED and struct.unpack_from("@I", _MEMORY, address + _MAJOR_AT)[0] != reference.VERSION[0]:
        return None
    data, kind, device_id, ndim, code, bits, lanes, shape, strides, byte_offset = _DLTENSOR.unpack_from(
        _MEMORY, address + at)
    if not 0 <= ndim <= dl._MAX_NDIM or (ndim and not shape):
        return None
    shape = struct.unpack_from(f"@{ndim}q", _MEMORY, shape) if ndim else ()
    strides = struct.unpack_from(f"@{ndim}q", _MEMORY, strides) if ndim and strides else None
    return _normal((kind, device_id), data + byte_offset, (code, bits, lanes), shape, strides)


class _Judged:
    """What the kit's consumer checks ask of a producer, for one tracked tensor."""

    buffer = None  # the memory is the producer's: the kit does not write it

    def __init__(self, t, capsule_info):
        self.t = t
        self.dtype = capsule_info.dtype
        self.version = capsule_info.version
        self.shape = capsule_info.shape
        self.device = capsule_info.device

    def __dlpack_device__(self):
        return self.device

    @property
    def calls(self):
        return self.t.calls

    def about(self):
        return self.t.about()


def _finish(*args):
    """_judge, whose own failure (the sanitizer's bug) never reaches the program."""
    try:
        _judge(*args)
    except Exception as e:  # noqa: BLE001 - reported as the sanitizer's, not the program's
        _internal_error(e)


def _internal_error(e):
    import traceback

    with _lock:
        first = not _internal_errors
        _internal_errors.append(f"{type(e).__name__}: {e}")
    if first:
        print(f"{PREFIX}: the sanitizer failed to judge an exchange (its own bug, not the program's):",
              file=sys.stderr)
        traceback.print_exception(type(e), e, e.__traceback__)


_internal_errors = []


def _judge(t, result, error, pending, info=None, snapshot=None, requests=None, device=None):
    """Judges the consumer of tensor t after its from_dlpack returned result
    or raised error; info (the reference.Capsule read at export) when it
    is checked in full (values, version, stream requests)."""
    if t is None:
        return
    capsule = t.capsule
    consumed = _name(t.fields) in _USED
    t.consumed = consumed
    t.refused = error is not None
    if not consumed and t.calls:
        destructor = _WORDS[t.fields + 3]
        try:
            reference.judge_release(
                consumed=False,
                by_consumer=t.calls,
                destructor_calls=0,
                had_destructor=t.had_destructor,
                ours=bool(destructor),
                versioned=t.versioned,
                about=t.about(),
            )
        except Violation as v:
            when = "after refusing it" if error is not None else "after importing it"
            _report(v.spec, f"{v} [{when}]", "consumer", t.site, t.producer, t.consumer, pending)
        if destructor:
            t.second_known = True
        elif t.held and not t.forwarded:
            t.held = False
            deleter = _release(t)
            if deleter:
                _call_deleter(deleter, t.address)
    if result is not None:
        try:
            t.result = weakref.ref(result)
        except TypeError:
            t.result = None
    if info is not None and result is not None:
        _check_result(t, info, result, snapshot, pending)
    if requests is not None and device is not None:
        try:
            reference.check_requests(_Requests(requests, device))
        except Violation as v:
            _report(v.spec, str(v), "consumer", t.site, t.producer, t.consumer, pending)
    t.capsule = t.fields = None
    del capsule
    if not consumed and result is not None and t.calls and not t.held:
        _report(
            "consumer-deleter-early",
            "from_dlpack returned an array but neither renamed the capsule nor kept it: the capsule's "
            f"destructor freed the tensor as soon as the call was over ({t.about()})",
            "consumer", t.site, t.producer, t.consumer, pending,
        )


class _Requests:
    def __init__(self, requests, device):
        self.requests = requests
        self._device = device

    def __dlpack_device__(self):
        return self._device


def _check_result(t, info, y, snapshot, pending):
    judged = _Judged(t, info)
    try:
        if info.versioned and info.version[0] != reference.VERSION[0]:
            reference.accepted(judged, y, "consumer-major-version")
        if snapshot is None:
            return
        exported = _exported(y)
        if exported is None or _capsule_layout(exported) == _layout(info):
            return  # the tensor's own bytes, read as the tensor's layout says: its values
        try:
            values = _elements(reference.Capsule(exported))
        except Exception:  # noqa: BLE001 - a result that exports no readable capsule: not read
            return
        del exported  # released: y keeps the memory it views
        if values is not None:
            reference.check_values(judged, y, lambda _: values, _expected(info, snapshot))
    except Violation as v:
        _report(v.spec, str(v), "consumer", t.site, t.producer, t.consumer, pending)


def _wrap(fn, library):
    """fn (a from_dlpack of library) as the sanitizer calls it."""

    consumer = []  # its label, once the library has its version

    def from_dlpack(x, *args, **kwargs):
        kind = type(x)
        if kind is _CAPSULE:
            return _exchange_capsule(fn, library, x, args, kwargs)
        proxy_class = _proxy_class(kind)
        if proxy_class is False:
            return fn(x, *args, **kwargs)
        site = _site(2)
        if not consumer:
            consumer.append(_library(library))
        proxy = proxy_class(x, consumer[0], site)
        try:
            y = fn(proxy, *args, **kwargs)
        except BaseException as e:
            _after(proxy, None, e)
            raise
        _after(proxy, y, None)
        return y

    # The C path's from_dlpack calls this one for what it does not take (a
    # capsule, a call without the producer first).
    entry = from_dlpack if _FAST is None else _FAST.Entry(fn, library, from_dlpack)
    entry.__dlpack_sanitized__ = fn
    entry.__name__ = getattr(fn, "__name__", "from_dlpack")
    entry.__qualname__ = getattr(fn, "__qualname__", entry.__name__)
    entry.__doc__ = getattr(fn, "__doc__", None)
    entry.__wrapped__ = fn
    return entry


def _after(proxy, y, error):
    """Judges the consumer of the proxy's tensor once its from_dlpack
    returned y or raised error; --strict raises here."""
    pending = proxy._pending or []
    if error is not None:
        _finish(proxy._tensor, None, error, pending)
    else:
        # The snapshot is asked for only where values may be compared: the C
        # path copies the bytes then.
        _finish(proxy._tensor, y, None, pending, proxy._info, None if y is None else proxy._snapshot,
                proxy.requests, reference._dlpack_device(proxy._x))
    _strict(pending)


_proxy_classes = {}  # a producer's type -> its proxy class, or False (no __dlpack__, or a proxy)


def _proxy_class(kind):
    """The proxy class of a producer's type (remembered), or False (no
    __dlpack__, or a proxy)."""
    proxy = _proxy_classes.get(kind)
    if proxy is None:
        if kind in _PROXIES or getattr(kind, "__dlpack__", None) is None:
            proxy = False
        else:
            # A producer that publishes the C exchange API
            # (__dlpack_c_exchange_api__) is proxied too: the proxy does not
            # publish the table, so the consumer takes __dlpack__, the
            # protocol every producer has and the one checked.
            proxy = _DeviceExchange if hasattr(kind, "__dlpack_device__") else _Exchange
        _proxy_classes[kind] = proxy
    return proxy


def _kind_of(kind):
    """How the C path's from_dlpack takes a producer of type kind
    (remembered): 0 calls the library's as it is, 1 or 2 with a proxy (2:
    one with __dlpack_device__), 3 hands the call to the Python path; 4 is
    added where its producers may have flags (_read_only asks them)."""
    proxy = _proxy_class(kind)
    how = 3 if kind is _CAPSULE else 0 if proxy is False else 2 if proxy is _DeviceExchange else 1
    if how in (1, 2) and (hasattr(kind, "flags") or hasattr(kind, "__getattr__") or kind.__dictoffset__):
        how |= 4
    _kinds[kind] = how
    return how


_kinds = {}


def _capsule_info(versioned, version, flags, device, dtype, shape, strides, byte_offset, data):
    """The reference.Capsule of a tensor the C path read at export, for the
    Python path's judges (the capsule renamed since, the tensor maybe freed)."""
    cap = reference.Capsule.__new__(reference.Capsule)
    cap.capsule = None
    cap.name = dl.VERSIONED_CAPSULE_NAME if versioned else dl.CAPSULE_NAME
    cap.versioned, cap.version, cap.flags = versioned, version, flags
    cap.ndim, cap.device, cap.dtype = len(shape or ()), device, dtype
    cap.shape, cap.strides, cap.byte_offset, cap.data = shape, strides, byte_offset, data
    return cap


def _fast_path():
    """The C path's types (from_dlpack, the proxies, the tracked tensor),
    configured with the Python path's functions; None where there is no C
    module or its structs are not the release's."""
    if _C is None:
        return None
    _C.dlpack_sanitize_fast.argtypes = [ctypes.py_object]
    _C.dlpack_sanitize_fast.restype = ctypes.py_object
    dtypes = []
    for code in range(32):
        for bits in (8, 16, 32, 64):
            with contextlib.suppress(Exception):
                if reference.decodable((code, bits, 1)):
                    dtypes.append((code, bits))
    api = -1  # where a DLPackExchangeAPI keeps dltensor_from_py_object_no_sync
    if reference.EXCHANGE and not (dl.DLPackExchangeAPI.header.offset or
                                   dl.DLPackExchangeAPIHeader.version.offset):
        api = dl.DLPackExchangeAPI.dltensor_from_py_object_no_sync.offset
    structs = (ctypes.sizeof(dl.DLTensor), dl.DLManagedTensorVersioned.dl_tensor.offset,
               dl.DLManagedTensor.deleter.offset, dl.DLManagedTensorVersioned.deleter.offset,
               dl.DLManagedTensorVersioned.flags.offset, api)
    try:
        entry, proxy, device_proxy, tensor, count = _C.dlpack_sanitize_fast((
            _tracked, _exported_by, _after, _kind_of, _producer_label, _producers, _user_file, _user_files,
            _library, _capsule_info, _kinds, {}, dtypes, tuple(reference.VERSION), MAX_VALUE_BYTES, _FIELDS_AT,
            RETIRED, "__dlpack_c_exchange_api__", structs))
    except (ValueError, TypeError):
        return None
    return types.SimpleNamespace(Entry=entry, proxies=(proxy, device_proxy), Tensor=tensor, exchanges=count)


_FAST = _fast_path()
if _FAST is not None:
    _PROXIES += _FAST.proxies


def _exchange_capsule(fn, library, capsule, args, kwargs):
    """A legacy entry point handed a capsule: tracked in place."""
    address = _WORDS[_fields(capsule)]
    if address in _tracked and _tracked[address].capsule is capsule:
        return fn(capsule, *args, **kwargs)  # an inner entry point of the same exchange
    site = _site(3)
    consumer = _consumer_label(library)
    pending = []
    t = None
    try:
        t = _track(capsule, site, "a capsule", consumer)
    except Violation as v:
        _report(v.spec, str(v), "producer", site, "a capsule", consumer, pending)
    info = None
    if t is not None:
        try:
            info = reference.Capsule(capsule)
            info.capsule = None  # only the tracked tensor holds it
        except Violation:
            info = None
    try:
        y = fn(capsule, *args, **kwargs)
    except BaseException as e:
        _finish(t, None, e, pending)
        _strict(pending)
        raise
    _finish(t, y, None, pending, info, _snapshot(info))
    _strict(pending)
    return y


def _consumer_label(library):
    return _library(library)


def _strict(pending):
    if pending and OPTIONS.strict:
        spec, message = pending[0]
        raise SanitizerError(spec, f"{spec}: {message}")


# ---- interception ----------------------------------------------------------


def _entry_points(adapter):
    """(module, attribute path) of an adapter's from_dlpack, read from its
    spelling (xp.PATH(producer) or xp.PATH(producer.__dlpack__())), or None."""
    try:
        spelled = adapter.from_dlpack("producer")
    except Exception:  # noqa: BLE001 - an adapter without a consumer
        return None
    m = re.fullmatch(r"xp\.([\w.]+)\(producer(?:\.__dlpack__\(\))?\)", spelled)
    return (adapter.module, m.group(1)) if m else None


def add_library(adapter_or_file):
    """Intercepts the from_dlpack of an Adapter, or of an adapter file (the
    kit's format)."""
    adapter = adapter_or_file
    if isinstance(adapter_or_file, str):
        adapter = adapters.adapter_for(adapter_or_file)
    entry = _entry_points(adapter)
    if entry is None:
        raise adapters.AdapterError(f"{adapter.name}: its from_dlpack is not spelled xp.NAME(producer)")
    _add_entry(entry[0], entry[1], adapter.name)


_tops = set()  # the top-level packages of the modules with entry points


def _add_entry(module, path, library):
    _tops.add(module.split(".")[0])
    got = _entries.setdefault(module, [])
    if (path, library) not in got:
        got.append((path, library))
    if module in sys.modules and _enabled:
        _patch(module)


def _builtin_entries():
    for name in adapters.BUILTIN:
        adapter = adapters.adapter_for(name)
        if "consumer" not in getattr(adapter, "sides", adapters.Adapter.sides):
            continue
        entry = _entry_points(adapter)
        if entry is not None:
            _add_entry(entry[0], entry[1], adapter.module.split(".")[0])
    for module, path, library in EXTRA_ENTRIES:
        _add_entry(module, path, library)


def _patch(module_name):
    module = sys.modules.get(module_name)
    if module is None:
        return
    for path, library in _entries.get(module_name, ()):
        owner_path, _, attr = path.rpartition(".")
        owner = _attribute(module, owner_path)
        fn = getattr(owner, attr, None)
        if fn is None or getattr(fn, "__dlpack_sanitized__", None) is not None:
            continue  # this version of the library lacks it, or it is patched
        wrapper = _wrap(fn, library)
        try:
            setattr(owner, attr, staticmethod(wrapper) if isinstance(owner, type) else wrapper)
        except (TypeError, AttributeError) as e:
            _not_intercepted[f"{module_name}.{path}"] = f"{type(e).__name__}: {e}"


def _attribute(owner, path):
    """owner.path (dotted), or None."""
    for part in filter(None, path.split(".")):
        try:
            owner = getattr(owner, part)
        except Exception:  # noqa: BLE001 - a lazy module that fails to load lacks it too
            return None
    return owner


class _Finder:
    """A meta path finder that finds nothing itself: it marks the loader of
    a module with entry points so that they are patched once it has run."""

    def __init__(self):
        self._busy = set()

    def find_spec(self, name, path=None, target=None):
        # A package's own submodules may never pass through the import
        # system (open3d.core is made by its extension): the top-level
        # package is watched too, and every entry point present is patched.
        if (name not in _entries and name not in _tops) or name in self._busy:
            return None
        self._busy.add(name)
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.discard(name)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module, _run=run):
            _run(module)
            for present in [m for m in _entries if m in sys.modules]:
                _patch(present)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            _not_intercepted[name] = "its loader takes no wrapper: patched only if imported before enable()"
        return spec


_FINDER = _Finder()


def enable(*, strict=False, json=None, libraries=(), report_at_exit=True):
    """Turns the sanitizer on in this process: every from_dlpack of the
    libraries the kit knows (and of the adapters in libraries, files or
    Adapter objects) is checked from now on, modules imported later
    included. Idempotent. report_at_exit: print the summary (and write json)
    when the interpreter exits."""
    OPTIONS.strict = strict
    if json is not None:
        OPTIONS.json = json
    for library in libraries:
        add_library(library)
    if _enabled:
        return
    _enabled.append(True)
    _builtin_entries()
    for module in list(_entries):
        _patch(module)
    sys.meta_path.insert(0, _FINDER)
    if report_at_exit:
        atexit.register(finish)


def finish(out=None):
    """Ends the run: reports the tensors whose deleter never ran though their
    consumer is gone, hands the live tensors their producer's deleter back (so
    that nothing calls into Python while it shuts down), prints the summary
    and writes --json. Returns the reports. Runs once."""
    if _finished:
        return reports()
    _finished.append(True)
    gc.collect()
    for t in list(_tracked.values()):
        if t.calls == 0 and t.consumed and (t.refused or (t.result is not None and t.result() is None)):
            try:
                reference.judge_release(
                    consumed=True, by_consumer=0, destructor_calls=0, had_destructor=t.had_destructor,
                    ours=False, versioned=t.versioned, about=t.about(),
                )
            except Violation as v:
                what = "the consumer refused the tensor" if t.refused else "the consumer's array is gone"
                _report(v.spec, f"{v}: a leak ({what}, the program is exiting)", "consumer", t.site, t.producer,
                        t.consumer)
        if t.calls == 0 and t.consumed:
            # The consumer holds the tensor: from now on it calls the
            # producer's deleter directly, not Python as it shuts down.
            _WORDS[t.cell] = t.deleter
    got = reports()
    _summary(got, out or sys.stderr)
    if OPTIONS.json:
        with open(OPTIONS.json, "w") as f:
            json.dump(got + _unchecked(), f, indent=1)
            f.write("\n")
    return got


def exchanges():
    """How many exchanges the sanitizer has checked."""
    with _lock:
        return _exchanges[0] + (_FAST.exchanges() if _FAST is not None else 0)


def not_intercepted():
    """What the sanitizer could not intercept, a line per reason."""
    by_reason = {}
    for where, why in sorted(_not_intercepted.items()):
        by_reason.setdefault(why, []).append(where)
    return [f"{', '.join(wheres)}: {why}" for why, wheres in by_reason.items()]


def _unchecked():
    """A skip result (the kit's shape) per entry point the sanitizer could
    not intercept: --json says so even when nothing was reported."""
    return [
        {
            "library": _library(where), "case": f"sanitize/not-intercepted/{where}", "side": "consumer",
            "verdict": "skip", "message": f"not intercepted ({why}): its exchanges are not checked",
            "about": where, "spec": None, "strength": None, "basis": None, "source": None, "requirement": None,
            "reproducer": None, "declared": False, "malformed": False, "traceback": None,
        }
        for where, why in sorted(_not_intercepted.items())
    ]


def _summary(got, out):
    if got:
        for note in not_intercepted():
            print(f"{PREFIX}: not intercepted: {note}", file=out)
    if not got:
        return
    n = sum(r["count"] for r in got)
    print(f"{PREFIX}: {len(got)} problem{'s' * (len(got) != 1)} ({n} exchange{'s' * (n != 1)}):", file=out)
    by_spec = {}
    for r in got:
        by_spec.setdefault(r["spec"], []).append(r)
    for spec, rs in sorted(by_spec.items(), key=lambda kv: (kv[1][0]["verdict"] != "fail", kv[0])):
        first = rs[0]
        print(f"{first['verdict'].upper()} {spec} [{first['basis']}]: {first['requirement']}", file=out)
        print(f"  where it is written: {first['source']}", file=out)
        for r in rs:
            times = f" ({r['count']} times)" if r["count"] > 1 else ""
            print(f"  at {r['site']}{times}: {r['producer']} -> {r['consumer']}: {r['message']}", file=out)


# ---- the command -----------------------------------------------------------


def main(argv=None, prog=MODULE):
    """Runs a program under the sanitizer; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=f"{prog} [OPTIONS] PROGRAM.py [ARGS] | -m MODULE [ARGS]",
        description=__doc__.split("\n\n")[1],
        allow_abbrev=False,  # _split knows the options by their whole names
    )
    parser.add_argument("--json", metavar="FILE", help="write every report to FILE, as the kit's --json does")
    parser.add_argument("--strict", action="store_true",
                        help="raise SanitizerError at the offending call instead of only reporting")
    parser.add_argument("--error-exitcode", type=_exit_code, metavar="N",
                        help="exit N at the end when anything was reported (default: the program's status)")
    parser.add_argument("--library", action="append", default=[], metavar="ADAPTER.py",
                        help="also intercept the from_dlpack of an adapter file (the kit's format); repeatable")
    ours, module, program, rest = _split(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(ours)
    if module == "":
        parser.error("argument -m: expected a MODULE, as python -m takes one")
    if module is None and program is None:
        parser.error("name a PROGRAM.py, or -m MODULE")
    try:
        json_file = open(args.json, "w") if args.json else None  # noqa: SIM115 - checked now, written at exit
    except OSError as e:
        print(f"{prog}: --json: {e}", file=sys.stderr)
        return 2
    if json_file is not None:
        json_file.close()
    try:
        enable(strict=args.strict, json=args.json, libraries=args.library,
               report_at_exit=False)
    except adapters.AdapterError as e:
        print(f"{prog}: --library: {e}", file=sys.stderr)
        return 2
    status = _run(module, program, rest, prog)
    _join_threads()
    got = finish()
    if got and args.error_exitcode is not None:
        return args.error_exitcode
    return status


def _exit_code(text):
    """--error-exitcode's N: an exit status a process can have."""
    code = int(text)
    if not 0 <= code <= 255:
        raise ValueError(text)
    return code


_exit_code.__name__ = "exit status (0 to 255)"  # argparse's words: "invalid exit status (0 to 255) value"


def _split(argv):
    """(the sanitizer's options, -m's MODULE, PROGRAM.py, the program's
    arguments): everything after the program or module is the program's,
    and so is everything after "--"."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            rest = argv[i + 1:]
            if rest[:1] == ["-m"]:
                return argv[:i], (rest[1] if len(rest) > 1 else ""), None, rest[2:]
            return argv[:i], None, (rest[0] if rest else None), rest[1:]
        if word == "-m":
            return argv[:i], (argv[i + 1] if i + 1 < len(argv) else ""), None, argv[i + 2:]
        if not word.startswith("-") or word == "-":
            return argv[:i], None, word, argv[i + 1:]
        i += 2 if word in ("--json", "--error-exitcode", "--library") else 1
    return argv, None, None, []


def _findable(module):
    """Whether python -m could find module (its parent packages imported,
    as python -m imports them)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _run(module, program, rest, prog=PREFIX):
    """Runs the program as python does; its exit status."""
    if module is not None:
        sys.argv = [module, *rest]
        sys.path.insert(0, os.getcwd())
        if not _findable(module):
            print(f"{prog}: no module named {module!r}", file=sys.stderr)
            return 1
        runner = lambda: runpy.run_module(module, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        if not os.path.exists(program):
            print(f"{prog}: can't open file {program!r}: no such file", file=sys.stderr)
            return 2
        if os.path.isdir(program) and not os.path.exists(os.path.join(program, "__main__.py")):
            print(f"{prog}: can't find '__main__' module in {program!r}", file=sys.stderr)
            return 1
        sys.argv = [program, *rest]
        path = os.path.abspath(program)  # python's __main__.__file__ is absolute, its argv[0] as given
        if os.path.isfile(path):
            sys.path.insert(0, os.path.dirname(path))
            runner = lambda: _run_file(path)  # noqa: E731
        else:  # a directory or zip file with a __main__.py
            runner = lambda: runpy.run_path(program, run_name="__main__")  # noqa: E731
    try:
        runner()
    except SystemExit as e:
        return _exit_status(e.code)
    except BaseException:  # noqa: BLE001 - reported as python reports it
        import traceback

        kind, value, tb = sys.exc_info()
        traceback.print_exception(kind, value, _program_frames(tb))
        return 130 if kind is KeyboardInterrupt else 1
    return 0


def _run_file(path):
    """Runs the script at path as python runs one: a new __main__ module
    whose __file__ is path (absolute), sys.argv left as it is (runpy's
    run_path would put path in sys.argv[0])."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    with io.open_code(path) as f:
        code = compile(f.read(), path, "exec")
    exec(code, main.__dict__)  # noqa: S102 - the user's program, as python runs it


def _program_frames(tb):
    """tb less its first frames, the sanitizer's and runpy's, as python's
    own traceback starts at the program."""
    ours = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name not in ours and not name.startswith("<frozen runpy"):
            break
        tb = tb.tb_next
    return tb


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _join_threads():
    """Waits for the program's non-daemon threads, as the interpreter does at exit."""
    me = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not me and not thread.daemon and thread.is_alive():
            thread.join()


def command():
    """The dlpack-sanitize command."""
    return main(prog=COMMAND)

