// Command bridge is the c-shared library through which C and Python
// exchange tensors with Go:
//
//	go build -buildmode=c-shared -o libdlgen.so ./examples/gobridge
//
// The build also writes libdlgen.h; include it with generated/c on the
// include path. Tensors are named by handles (uintptr_t, 0 is no tensor).
//
//	uintptr_t dlgen_arange_f32(int64_t n);       // a Go-owned float32 tensor 0..n-1
//	DLManagedTensorVersioned* dlgen_export(uintptr_t h);
//	DLManagedTensor* dlgen_export_legacy(uintptr_t h);
//	uintptr_t dlgen_import(DLManagedTensorVersioned* m, char* err, size_t err_len);
//	uintptr_t dlgen_import_legacy(DLManagedTensor* m, char* err, size_t err_len);
//	void* dlgen_data(uintptr_t h);               // address of the first element
//	int dlgen_scale_f32(uintptr_t h, float k);   // multiplies in place, from Go
//	void dlgen_close(uintptr_t h);               // drops the handle's reference
//	int64_t dlgen_live_tensors(void), dlgen_live_exports(void), dlgen_leaked_imports(void);
//	void dlgen_collect(void);                    // runs Go's garbage collector
//
// Imports take ownership whatever happens: on error the producer's deleter
// has run and err holds the reason. Exports live until their deleter runs,
// which any thread may call, even after dlgen_close of their handle.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../generated/c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dlpack/dlpack.h>
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"unsafe"

	"github.com/dlgen/dlgen/dltensor"
	"github.com/dlgen/dlgen/generated/go/dlpack"
)

func main() {}

// held is what a handle names: the tensor, and a pin on its memory for as
// long as C holds the handle (dlgen_data hands C a raw pointer).
type held struct {
	t   *dltensor.Tensor
	pin runtime.Pinner
}

func tensorOf(h C.uintptr_t) *dltensor.Tensor { return cgo.Handle(h).Value().(*held).t }

func handle(t *dltensor.Tensor) C.uintptr_t {
	x := &held{t: t}
	if p := t.Data(); p != nil {
		x.pin.Pin(p) // a no-op for C memory
	}
	return C.uintptr_t(cgo.NewHandle(x))
}

func setErr(buf *C.char, n C.size_t, err error) {
	if buf == nil || n == 0 {
		return
	}
	msg := err.Error()
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	k := copy(dst[:n-1], msg)
	dst[k] = 0
}

//export dlgen_arange_f32
func dlgen_arange_f32(n C.int64_t) C.uintptr_t {
	data := make([]float32, int(n))
	for i := range data {
		data[i] = float32(i)
	}
	t, err := dltensor.FromSlice(data)
	if err != nil {
		return 0
	}
	return handle(t)
}

//export dlgen_export
func dlgen_export(h C.uintptr_t) *C.DLManagedTensorVersioned {
	m, err := tensorOf(h).Export()
	if err != nil {
		return nil
	}
	return (*C.DLManagedTensorVersioned)(unsafe.Pointer(m))
}

//export dlgen_export_legacy
func dlgen_export_legacy(h C.uintptr_t) *C.DLManagedTensor {
	m, err := tensorOf(h).ExportLegacy()
	if err != nil {
		return nil
	}
	return (*C.DLManagedTensor)(unsafe.Pointer(m))
}

//export dlgen_import
func dlgen_import(m *C.DLManagedTensorVersioned, errBuf *C.char, errLen C.size_t) C.uintptr_t {
	t, err := dltensor.Import((*dlpack.ManagedTensorVersioned)(unsafe.Pointer(m)))
	if err != nil {
		setErr(errBuf, errLen, err)
		return 0
	}
	return handle(t)
}

//export dlgen_import_legacy
func dlgen_import_legacy(m *C.DLManagedTensor, errBuf *C.char, errLen C.size_t) C.uintptr_t {
	t, err := dltensor.ImportLegacy((*dlpack.ManagedTensor)(unsafe.Pointer(m)))
	if err != nil {
		setErr(errBuf, errLen, err)
		return 0
	}
	return handle(t)
}

//export dlgen_data
func dlgen_data(h C.uintptr_t) unsafe.Pointer {
	t := tensorOf(h)
	return unsafe.Add(t.Data(), t.ByteOffset())
}

//export dlgen_scale_f32
func dlgen_scale_f32(h C.uintptr_t, k C.float) C.int {
	v, err := dltensor.View[float32](tensorOf(h))
	if err != nil {
		return -1
	}
	for i := range v {
		v[i] *= float32(k)
	}
	return 0
}

//export dlgen_close
func dlgen_close(h C.uintptr_t) {
	if h == 0 {
		return
	}
	x := cgo.Handle(h).Value().(*held)
	x.pin.Unpin()
	x.t.Close()
	cgo.Handle(h).Delete()
}

//export dlgen_live_tensors
func dlgen_live_tensors() C.int64_t { return C.int64_t(dltensor.LiveTensors()) }

//export dlgen_live_exports
func dlgen_live_exports() C.int64_t { return C.int64_t(dltensor.LiveExports()) }

//export dlgen_leaked_imports
func dlgen_leaked_imports() C.int64_t { return C.int64_t(dltensor.LeakedImports()) }

//export dlgen_collect
func dlgen_collect() { runtime.GC() }
