// Command gobridge is an example: a c-shared library through which C and
// Python exchange tensors with Go, built on package dltensor.
//
//	go build -buildmode=c-shared -o libdlgen.so ./examples/gobridge
//
// The build also writes libdlgen.h; include it with generated/c on the
// include path. Tensors are named by handles (uintptr_t; 0 is never a
// handle). Every function that can fail returns a status, DLGEN_OK (0) or
// a negative DLGEN_E* code, and writes its result through an out pointer;
// a bad handle or argument is reported, never a crash of the host process:
//
//	int dlgen_arange_f32(int64_t n, uintptr_t* out);  // a Go float32 tensor 0..n-1
//	int dlgen_export(uintptr_t h, DLManagedTensorVersioned** out);
//	int dlgen_export_legacy(uintptr_t h, DLManagedTensor** out);
//	int dlgen_import(DLManagedTensorVersioned* m, uintptr_t* out, char* err, size_t err_len);
//	int dlgen_import_legacy(DLManagedTensor* m, uintptr_t* out, char* err, size_t err_len);
//	int dlgen_data(uintptr_t h, void** out);          // address of the first element
//	int dlgen_scale_f32(uintptr_t h, float k);        // multiplies in place, from Go
//	int dlgen_close(uintptr_t h);                     // drops the handle's reference
//	int64_t dlgen_live_tensors(void), dlgen_live_exports(void), dlgen_leaked_imports(void);
//	void dlgen_collect(void);                         // runs Go's garbage collector
//
// Imports take ownership whatever happens (except DLGEN_EIMPORTED: the
// pointer is already owned by a live import): on error the producer's
// deleter has run and err holds the reason. Exports live until their
// deleter runs, which any thread may call, even after dlgen_close of their
// handle. Any thread may call any function, but dlgen_close of a handle
// must not race another call on that handle (dlgen_scale_f32 could then
// write to memory the close just gave back to its producer), nor may a
// pointer from dlgen_data be used after it.
//
// It lives in dlgen's tree, so cgo finds DLPack's header in dlgen's own
// generated/c (the #cgo line below) and the bridge speaks the newest
// release. A bridge in your own module generates the header and the Go
// package for the release it pins into the module (-lang c,go), includes
// that copy, and passes dltensor.WithRelease: docs/go.md, "A cgo bridge in
// your own module".
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../generated/c
#include <stdint.h>
#include <stddef.h>
#include <dlpack/dlpack.h>

enum {
  DLGEN_OK = 0,
  DLGEN_EHANDLE = -1,   // not a live handle
  DLGEN_EINVAL = -2,    // a bad argument: NULL out pointer, negative size
  DLGEN_EREFUSED = -3,  // the tensor refuses: read-only, wrong dtype, strided, closed
  DLGEN_EMALFORMED = -4,// an import broke the DLPack rules; its deleter ran
  DLGEN_EIMPORTED = -5  // an import of a pointer a live import owns; no deleter ran
};
*/
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
)

func main() {}

// held is what a handle names: the tensor, and a pin on its memory for as
// long as C holds the handle (dlgen_data hands C a raw pointer).
type held struct {
	t   *dltensor.Tensor
	pin runtime.Pinner
}

// handles are the live handles; unknown values are looked up, never
// trusted.
var handles struct {
	sync.Mutex
	next uintptr
	m    map[uintptr]*held
}

func init() { handles.m = map[uintptr]*held{} }

func lookup(h C.uintptr_t) (*held, bool) {
	handles.Lock()
	defer handles.Unlock()
	x, ok := handles.m[uintptr(h)]
	return x, ok
}

func newHandle(t *dltensor.Tensor) C.uintptr_t {
	x := &held{t: t}
	if p, err := t.Data(); err == nil && p != nil {
		x.pin.Pin(p) // a no-op for C memory
	}
	handles.Lock()
	defer handles.Unlock()
	handles.next++
	handles.m[handles.next] = x
	return C.uintptr_t(handles.next)
}

// status maps a dltensor error to a DLGEN_E* code.
func status(err error) C.int {
	switch {
	case err == nil:
		return C.DLGEN_OK
	case errors.Is(err, dltensor.ErrMalformed):
		return C.DLGEN_EMALFORMED
	case errors.Is(err, dltensor.ErrAlreadyImported):
		return C.DLGEN_EIMPORTED
	default:
		return C.DLGEN_EREFUSED
	}
}

// setErr writes err's message, truncated and NUL-terminated, into the n
// bytes at buf; it touches no more bytes than the message needs, whatever
// n claims.
func setErr(buf *C.char, n C.size_t, err error) {
	if buf == nil || n == 0 {
		return
	}
	msg := err.Error()
	k := min(uint64(n)-1, uint64(len(msg)))
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), k+1)
	copy(dst, msg[:k])
	dst[k] = 0
}

//export dlgen_arange_f32
func dlgen_arange_f32(n C.int64_t, out *C.uintptr_t) C.int {
	if out == nil || n < 0 || n > 1<<30 {
		return C.DLGEN_EINVAL
	}
	data := make([]float32, int(n))
	for i := range data {
		data[i] = float32(i)
	}
	t, err := dltensor.FromSlice(data)
	if err != nil {
		return status(err)
	}
	*out = newHandle(t)
	return C.DLGEN_OK
}

//export dlgen_export
func dlgen_export(h C.uintptr_t, out **C.DLManagedTensorVersioned) C.int {
	return exportTo(h, out, func(t *dltensor.Tensor) (*C.DLManagedTensorVersioned, error) {
		m, err := t.Export()
		return (*C.DLManagedTensorVersioned)(unsafe.Pointer(m)), err
	})
}

//export dlgen_export_legacy
func dlgen_export_legacy(h C.uintptr_t, out **C.DLManagedTensor) C.int {
	return exportTo(h, out, func(t *dltensor.Tensor) (*C.DLManagedTensor, error) {
		m, err := t.ExportLegacy()
		return (*C.DLManagedTensor)(unsafe.Pointer(m)), err
	})
}

// exportTo checks the handle and out pointer of dlgen_export and
// dlgen_export_legacy, and stores what export makes.
func exportTo[M any](h C.uintptr_t, out **M, export func(*dltensor.Tensor) (*M, error)) C.int {
	x, ok := lookup(h)
	switch {
	case out == nil:
		return C.DLGEN_EINVAL
	case !ok:
		return C.DLGEN_EHANDLE
	}
	m, err := export(x.t)
	if err != nil {
		return status(err)
	}
	*out = m
	return C.DLGEN_OK
}

// imported finishes dlgen_import and dlgen_import_legacy. The import has
// already happened (and on error, the deleter has run), so a NULL out
// pointer only loses the handle: the tensor is closed again.
func imported(t *dltensor.Tensor, err error, out *C.uintptr_t, errBuf *C.char, errLen C.size_t) C.int {
	if err != nil {
		setErr(errBuf, errLen, err)
		return status(err)
	}
	if out == nil {
		t.Close()
		return C.DLGEN_EINVAL
	}
	*out = newHandle(t)
	return C.DLGEN_OK
}

//export dlgen_import
func dlgen_import(m *C.DLManagedTensorVersioned, out *C.uintptr_t, errBuf *C.char, errLen C.size_t) C.int {
	t, err := dltensor.Import((*dlpack.ManagedTensorVersioned)(unsafe.Pointer(m)))
	return imported(t, err, out, errBuf, errLen)
}

//export dlgen_import_legacy
func dlgen_import_legacy(m *C.DLManagedTensor, out *C.uintptr_t, errBuf *C.char, errLen C.size_t) C.int {
	t, err := dltensor.ImportLegacy((*dlpack.ManagedTensor)(unsafe.Pointer(m)))
	return imported(t, err, out, errBuf, errLen)
}

//export dlgen_data
func dlgen_data(h C.uintptr_t, out *unsafe.Pointer) C.int {
	x, ok := lookup(h)
	switch {
	case out == nil:
		return C.DLGEN_EINVAL
	case !ok:
		return C.DLGEN_EHANDLE
	}
	p, err := x.t.Data()
	if err != nil {
		return status(err)
	}
	if x.t.Size() > 0 {
		p = unsafe.Add(p, x.t.ByteOffset())
	}
	*out = p
	return C.DLGEN_OK
}

//export dlgen_scale_f32
func dlgen_scale_f32(h C.uintptr_t, k C.float) C.int {
	x, ok := lookup(h)
	if !ok {
		return C.DLGEN_EHANDLE
	}
	v, err := dltensor.View[float32](x.t)
	if err != nil {
		return status(err)
	}
	for i := range v {
		v[i] *= float32(k)
	}
	return C.DLGEN_OK
}

//export dlgen_close
func dlgen_close(h C.uintptr_t) C.int {
	handles.Lock()
	x, ok := handles.m[uintptr(h)]
	delete(handles.m, uintptr(h))
	handles.Unlock()
	if !ok {
		return C.DLGEN_EHANDLE
	}
	x.pin.Unpin()
	x.t.Close()
	return C.DLGEN_OK
}

//export dlgen_live_tensors
func dlgen_live_tensors() C.int64_t { return C.int64_t(dltensor.LiveTensors()) }

//export dlgen_live_exports
func dlgen_live_exports() C.int64_t { return C.int64_t(dltensor.LiveExports()) }

//export dlgen_leaked_imports
func dlgen_leaked_imports() C.int64_t { return C.int64_t(dltensor.LeakedImports()) }

//export dlgen_collect
func dlgen_collect() { runtime.GC() }
