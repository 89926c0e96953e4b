//go:build cgo && unix

package devices

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The CUDA driver API types (internal/cudaabi/cuda.h, shared with the fake
// driver) and entry points the backend uses, declared from NVIDIA's
// documentation so that building dlgen needs no CUDA toolkit: the driver
// (libcuda.so.1) is opened at run time.
#include "internal/cudaabi/cuda.h"

typedef struct {
	CUresult (*Init)(unsigned);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxPushCurrent)(CUcontext);
	CUresult (*CtxPopCurrent)(CUcontext *);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*Memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream);
	CUresult (*Memcpy3DAsync)(const CUDA_MEMCPY3D *, CUstream);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
	CUresult (*EventDestroy)(CUevent);
} dlgen_cu_api;

static char dlgen_cu_why[512];

// dlgen_cu_load opens the driver and finds every entry point; it returns
// NULL, or why not. Each backend has its entry points: the tests load more
// than one driver.
static const char *dlgen_cu_load(const char *name, dlgen_cu_api *cu) {
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(dlgen_cu_why, sizeof dlgen_cu_why, "%s", dlerror());
		return dlgen_cu_why;
	}
#define DLGEN_CU_SYM(f, sym) \
	if ((*(void **)&cu->f = dlsym(lib, sym)) == NULL) { \
		snprintf(dlgen_cu_why, sizeof dlgen_cu_why, "%s has no %s", name, sym); \
		return dlgen_cu_why; \
	}
	DLGEN_CU_SYM(Init, "cuInit") DLGEN_CU_SYM(GetErrorName, "cuGetErrorName")
	DLGEN_CU_SYM(DeviceGetCount, "cuDeviceGetCount") DLGEN_CU_SYM(DeviceGet, "cuDeviceGet")
	DLGEN_CU_SYM(DeviceGetName, "cuDeviceGetName") DLGEN_CU_SYM(DeviceGetAttribute, "cuDeviceGetAttribute")
	DLGEN_CU_SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") DLGEN_CU_SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
	DLGEN_CU_SYM(CtxPushCurrent, "cuCtxPushCurrent_v2") DLGEN_CU_SYM(CtxPopCurrent, "cuCtxPopCurrent_v2")
	DLGEN_CU_SYM(MemAlloc, "cuMemAlloc_v2") DLGEN_CU_SYM(MemFree, "cuMemFree_v2")
	DLGEN_CU_SYM(MemGetAddressRange, "cuMemGetAddressRange_v2") DLGEN_CU_SYM(MemsetD8Async, "cuMemsetD8Async")
	DLGEN_CU_SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") DLGEN_CU_SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
	DLGEN_CU_SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
	DLGEN_CU_SYM(Memcpy2DAsync, "cuMemcpy2DAsync_v2") DLGEN_CU_SYM(Memcpy3DAsync, "cuMemcpy3DAsync_v2")
	DLGEN_CU_SYM(MemcpyHtoD, "cuMemcpyHtoD_v2") DLGEN_CU_SYM(MemcpyDtoH, "cuMemcpyDtoH_v2")
	DLGEN_CU_SYM(StreamCreate, "cuStreamCreate") DLGEN_CU_SYM(StreamSynchronize, "cuStreamSynchronize")
	DLGEN_CU_SYM(EventCreate, "cuEventCreate") DLGEN_CU_SYM(EventRecord, "cuEventRecord")
	DLGEN_CU_SYM(StreamWaitEvent, "cuStreamWaitEvent") DLGEN_CU_SYM(EventDestroy, "cuEventDestroy_v2")
#undef DLGEN_CU_SYM
	return NULL;
}

static const char *dlgen_cu_error_name(const dlgen_cu_api *cu, CUresult r) {
	const char *name = NULL;
	return cu->GetErrorName(r, &name) == 0 ? name : NULL;
}

// Calls before a context: the device queries. *call names the one that failed.
static CUresult dlgen_cu_init(const dlgen_cu_api *cu, const char **call) { *call = "cuInit"; return cu->Init(0); }
static CUresult dlgen_cu_count(const dlgen_cu_api *cu, int *n, const char **call) { *call = "cuDeviceGetCount"; return cu->DeviceGetCount(n); }
static CUresult dlgen_cu_device(const dlgen_cu_api *cu, int ordinal, CUdevice *d, char *name, int len, int *pitch, const char **call) {
	CUresult r;
	*call = "cuDeviceGet";
	if ((r = cu->DeviceGet(d, ordinal)) != 0) return r;
	*call = "cuDeviceGetName";
	if ((r = cu->DeviceGetName(name, len, *d)) != 0) return r;
	*call = "cuDeviceGetAttribute";
	return cu->DeviceGetAttribute(pitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH, *d);
}

// Every call in a context pushes it on the calling thread and pops it in
// the same C call: Go may move a goroutine to another thread between two.
#define DLGEN_CU_TRY(name, expr) \
	do { \
		*call = name; \
		if ((r = (expr)) != 0) goto pop; \
	} while (0)
#define DLGEN_CU_PUSH(ctx) \
	CUresult r, p; \
	CUcontext popped; \
	*call = "cuCtxPushCurrent_v2"; \
	if ((r = cu->CtxPushCurrent(ctx)) != 0) return r;
#define DLGEN_CU_POP \
	pop: \
	p = cu->CtxPopCurrent(&popped); \
	if (r == 0 && p != 0) { \
		*call = "cuCtxPopCurrent_v2"; \
		r = p; \
	} \
	return r;

// dlgen_cu_stream makes the backend's stream in ctx.
static CUresult dlgen_cu_stream(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t *stream, const char **call) {
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuStreamCreate", cu->StreamCreate((CUstream *)stream, CU_STREAM_NON_BLOCKING));
	DLGEN_CU_POP
}

// dlgen_cu_start retains d's primary context and makes the backend's
// stream in it; if the stream cannot be made, it releases the context, so
// that a device tried again holds one reference, not one per try.
static CUresult dlgen_cu_start(const dlgen_cu_api *cu, CUdevice d, CUcontext *ctx, uintptr_t *stream, const char **call) {
	CUresult r;
	*call = "cuDevicePrimaryCtxRetain";
	if ((r = cu->DevicePrimaryCtxRetain(ctx, d)) != 0) return r;
	if ((r = dlgen_cu_stream(cu, *ctx, stream, call)) != 0) cu->DevicePrimaryCtxRelease(d);
	return r;
}

// dlgen_cu_alloc allocates n bytes and zeroes them on stream, waiting.
static CUresult dlgen_cu_alloc(const dlgen_cu_api *cu, CUcontext ctx, size_t n, uintptr_t stream, uintptr_t *out, const char **call) {
	CUdeviceptr d = 0;
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuMemAlloc_v2", cu->MemAlloc(&d, n));
	*out = (uintptr_t)d;
	DLGEN_CU_TRY("cuMemsetD8Async", cu->MemsetD8Async(d, 0, n, (CUstream)stream));
	DLGEN_CU_TRY("cuStreamSynchronize", cu->StreamSynchronize((CUstream)stream));
	DLGEN_CU_POP
}

static CUresult dlgen_cu_free(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t d, const char **call) {
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuMemFree_v2", cu->MemFree((CUdeviceptr)d));
	DLGEN_CU_POP
}

static CUresult dlgen_cu_range(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t d, uintptr_t *base, size_t *size, const char **call) {
	CUdeviceptr b = 0;
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuMemGetAddressRange_v2", cu->MemGetAddressRange(&b, size, (CUdeviceptr)d));
	*base = (uintptr_t)b;
	DLGEN_CU_POP
}

static CUresult dlgen_cu_sync(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t stream, const char **call) {
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuStreamSynchronize", cu->StreamSynchronize((CUstream)stream));
	DLGEN_CU_POP
}

// dlgen_cu_copy queues one copy of depth slices of height rows of width
// bytes: linear, 2-D or 3-D, as its extents need. A side is device memory
// (addr) when its host pointer is NULL; pitches are bytes from row to row,
// heights rows from slice to slice.
#define DLGEN_CU_SIDES(m) \
	m.srcMemoryType = srcHost != NULL ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; \
	m.srcHost = srcHost; \
	m.srcDevice = (CUdeviceptr)srcDev; \
	m.srcPitch = spitch; \
	m.dstMemoryType = dstHost != NULL ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; \
	m.dstHost = dstHost; \
	m.dstDevice = (CUdeviceptr)dstDev; \
	m.dstPitch = dpitch; \
	m.WidthInBytes = width; \
	m.Height = height;
static CUresult dlgen_cu_copy(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t dstDev, void *dstHost, size_t dpitch, size_t dheight,
		uintptr_t srcDev, const void *srcHost, size_t spitch, size_t sheight, size_t width, size_t height, size_t depth,
		uintptr_t stream, const char **call) {
	CUstream s = (CUstream)stream;
	DLGEN_CU_PUSH(ctx)
	if (height == 1 && depth == 1) {
		if (srcHost != NULL) {
			DLGEN_CU_TRY("cuMemcpyHtoDAsync_v2", cu->MemcpyHtoDAsync((CUdeviceptr)dstDev, srcHost, width, s));
		} else if (dstHost != NULL) {
			DLGEN_CU_TRY("cuMemcpyDtoHAsync_v2", cu->MemcpyDtoHAsync(dstHost, (CUdeviceptr)srcDev, width, s));
		} else {
			DLGEN_CU_TRY("cuMemcpyDtoDAsync_v2", cu->MemcpyDtoDAsync((CUdeviceptr)dstDev, (CUdeviceptr)srcDev, width, s));
		}
	} else if (depth == 1) {
		CUDA_MEMCPY2D m = {0};
		DLGEN_CU_SIDES(m)
		DLGEN_CU_TRY("cuMemcpy2DAsync_v2", cu->Memcpy2DAsync(&m, s));
	} else {
		CUDA_MEMCPY3D m = {0};
		DLGEN_CU_SIDES(m)
		m.srcHeight = sheight;
		m.dstHeight = dheight;
		m.Depth = depth;
		DLGEN_CU_TRY("cuMemcpy3DAsync_v2", cu->Memcpy3DAsync(&m, s));
	}
	DLGEN_CU_POP
}

// dlgen_cu_handoff makes work queued later on consumer wait for the work
// queued so far on producer: an event recorded on one, waited for by the
// other, on the device.
static CUresult dlgen_cu_handoff(const dlgen_cu_api *cu, CUcontext ctx, uintptr_t producer, uintptr_t consumer, const char **call) {
	CUevent e = NULL;
	CUresult d;
	DLGEN_CU_PUSH(ctx)
	DLGEN_CU_TRY("cuEventCreate", cu->EventCreate(&e, CU_EVENT_DISABLE_TIMING));
	DLGEN_CU_TRY("cuEventRecord", cu->EventRecord(e, (CUstream)producer));
	DLGEN_CU_TRY("cuStreamWaitEvent", cu->StreamWaitEvent((CUstream)consumer, e, 0));
	pop:
	if (e != NULL && (d = cu->EventDestroy(e)) != 0 && r == 0) {
		*call = "cuEventDestroy_v2";
		r = d;
	}
	p = cu->CtxPopCurrent(&popped);
	if (r == 0 && p != 0) {
		*call = "cuCtxPopCurrent_v2";
		r = p;
	}
	return r;
}

static void *dlgen_cu_pointer(uintptr_t p) { return (void *)p; }

// dlgen_cu_driver_copy is the driver's own synchronous copy, which the GPU
// check measures the backend against.
static CUresult dlgen_cu_driver_copy(const dlgen_cu_api *cu, CUcontext ctx, int toDevice, uintptr_t d, void *host, size_t n, const char **call) {
	DLGEN_CU_PUSH(ctx)
	if (toDevice) {
		DLGEN_CU_TRY("cuMemcpyHtoD_v2", cu->MemcpyHtoD((CUdeviceptr)d, host, n));
	} else {
		DLGEN_CU_TRY("cuMemcpyDtoH_v2", cu->MemcpyDtoH(host, (CUdeviceptr)d, n));
	}
	DLGEN_CU_POP
}
*/
import "C"

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// The CUDA backend is loaded once, when first asked for.
var cudaBuiltin = builtin[*cudaBackend]{load: func() (*cudaBackend, error) { return loadCUDA("libcuda.so.1", "libcuda.so") }}

func cuda() (Backend, error) { return cudaBuiltin.get() }

// CUDADevices names the CUDA devices in the order of their device ids
// (the driver's ordinals, as CUDA_VISIBLE_DEVICES leaves them). The error
// wraps ErrNoBackend when CUDA is not available.
func CUDADevices() ([]string, error) { return cudaBuiltin.deviceNames() }

func (b *cudaBackend) names() []string {
	names := make([]string, len(b.devices))
	for i, d := range b.devices {
		names[i] = d.name
	}
	return names
}

// cuError says which driver call failed (*call, which the C call that
// returned code set: read here, after that call, as Go does not order the
// read of a variable among a call's arguments against the calls in them)
// and its CUresult's name.
func cuError(api *C.dlgen_cu_api, call **C.char, code C.CUresult) error {
	if code == 0 {
		return nil
	}
	name := "an unknown CUresult"
	if n := C.dlgen_cu_error_name(api, code); n != nil {
		name = C.GoString(n)
	}
	return fmt.Errorf("%s: %s (%d)", C.GoString(*call), name, int(code))
}

// loadCUDA opens the first of the libraries that loads, initialises the
// driver and lists its devices; contexts are made when a device is first
// used.
func loadCUDA(names ...string) (*cudaBackend, error) {
	var whys []string
	for _, name := range names {
		cname := C.CString(name)
		api := (*C.dlgen_cu_api)(C.calloc(1, C.size_t(unsafe.Sizeof(C.dlgen_cu_api{}))))
		why := C.dlgen_cu_load(cname, api)
		C.free(unsafe.Pointer(cname))
		if why == nil {
			b, err := listCUDA(api)
			if err != nil {
				C.free(unsafe.Pointer(api))
			}
			return b, err
		}
		C.free(unsafe.Pointer(api))
		whys = append(whys, C.GoString(why))
	}
	return nil, cudaNotAvailable(strings.Join(whys, "; "))
}

func listCUDA(api *C.dlgen_cu_api) (*cudaBackend, error) {
	var call *C.char
	if err := cuError(api, &call, C.dlgen_cu_init(api, &call)); err != nil {
		return nil, cudaNotAvailable(err.Error())
	}
	var n C.int
	if err := cuError(api, &call, C.dlgen_cu_count(api, &n, &call)); err != nil {
		return nil, cudaNotAvailable(err.Error())
	}
	if n == 0 {
		return nil, cudaNotAvailable("the driver sees no CUDA device")
	}
	b := &cudaBackend{}
	for i := range int32(n) {
		d := &cudaDevice{api: api, id: i, pending: map[C.uintptr_t][]*runtime.Pinner{}}
		var name [256]C.char
		var pitch C.int
		if err := cuError(api, &call, C.dlgen_cu_device(api, C.int(i), &d.handle, &name[0], C.int(len(name)), &pitch, &call)); err != nil {
			return nil, cudaNotAvailable(fmt.Sprintf("device %d: %v", i, err))
		}
		d.name, d.maxPitch = C.GoString(&name[0]), int64(pitch)
		b.devices = append(b.devices, d)
	}
	return b, nil
}

// cudaBackend serves kDLCUDA: device id N is the driver's ordinal N, used
// through its primary context (the one CUDA's runtime API, PyTorch and CuPy
// use, so their pointers are valid in it). Copies without a stream go on
// one stream of the backend's per device; CopyOn puts them on the caller's.
type cudaBackend struct {
	devices []*cudaDevice
}

type cudaDevice struct {
	api      *C.dlgen_cu_api // the driver's entry points
	id       int32
	handle   C.CUdevice
	name     string
	maxPitch int64 // the longest pitch of a 2-D or 3-D copy

	mu  sync.Mutex
	ctx C.CUcontext // the primary context, retained on first use
	// syncing lets one Sync run at a time: one that takes the pending
	// streams while another waits for those it took would return first.
	syncing sync.Mutex
	own     C.uintptr_t // the backend's stream (non-blocking)
	// pending holds the streams used since the last Sync, each with the
	// host memory its copies may still read or write, pinned.
	pending map[C.uintptr_t][]*runtime.Pinner
}

func (b *cudaBackend) device(dev dlpack.Device) (*cudaDevice, error) {
	if dev.DeviceType != dlpack.DeviceTypeCUDA || dev.DeviceID < 0 || int(dev.DeviceID) >= len(b.devices) {
		return nil, fmt.Errorf("devices: no CUDA device %d (there are %d)", dev.DeviceID, len(b.devices))
	}
	d := b.devices[dev.DeviceID]
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		var call *C.char
		var ctx C.CUcontext
		var own C.uintptr_t
		if err := cuError(d.api, &call, C.dlgen_cu_start(d.api, d.handle, &ctx, &own, &call)); err != nil {
			return nil, d.wrap(err)
		}
		d.ctx, d.own = ctx, own
	}
	return d, nil
}

func (d *cudaDevice) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("devices: CUDA device %d (%s): %w", d.id, d.name, err)
}

// use records that stream has work whose host memory pin holds.
func (d *cudaDevice) use(stream C.uintptr_t, pin *runtime.Pinner) {
	d.mu.Lock()
	d.pending[stream] = append(d.pending[stream], pin)
	d.mu.Unlock()
}

// Allocate returns device memory from cuMemAlloc_v2, zeroed on the
// backend's stream before it returns.
func (b *cudaBackend) Allocate(dev dlpack.Device, nbytes int) (unsafe.Pointer, error) {
	d, err := b.device(dev)
	if err != nil || nbytes == 0 {
		return nil, err
	}
	if nbytes < 0 {
		return nil, fmt.Errorf("devices: cannot allocate %d bytes on CUDA device %d (%s)", nbytes, d.id, d.name)
	}
	var call *C.char
	var p C.uintptr_t
	if err := cuError(d.api, &call, C.dlgen_cu_alloc(d.api, d.ctx, C.size_t(nbytes), d.own, &p, &call)); err != nil {
		if p != 0 {
			C.dlgen_cu_free(d.api, d.ctx, p, &call)
		}
		return nil, d.wrap(fmt.Errorf("allocating %d bytes: %w", nbytes, err))
	}
	return cudaPointer(p), nil
}

// Free waits for the device's copies, as Sync does, and frees the memory
// with cuMemFree_v2.
func (b *cudaBackend) Free(dev dlpack.Device, data unsafe.Pointer) error {
	if _, err := b.device(dev); err != nil || data == nil {
		return err
	}
	synced := b.Sync(dev)
	d := b.devices[dev.DeviceID]
	var call *C.char
	return errors.Join(synced, d.wrap(cuError(d.api, &call, C.dlgen_cu_free(d.api, d.ctx, C.uintptr_t(uintptr(data)), &call))))
}

// Sync waits, with cuStreamSynchronize, for each stream copies went on
// since the last Sync (the backend's own always), then lets go of the host
// memory they used. A Sync begun while another runs waits for it first.
func (b *cudaBackend) Sync(dev dlpack.Device) error {
	d, err := b.device(dev)
	if err != nil {
		return err
	}
	d.syncing.Lock()
	defer d.syncing.Unlock()
	d.mu.Lock()
	pending := d.pending
	d.pending = map[C.uintptr_t][]*runtime.Pinner{}
	d.mu.Unlock()
	if _, ok := pending[d.own]; !ok {
		pending[d.own] = nil
	}
	var first error
	var call *C.char
	for _, stream := range slices.Sorted(maps.Keys(pending)) {
		if err := cuError(d.api, &call, C.dlgen_cu_sync(d.api, d.ctx, stream, &call)); err != nil && first == nil {
			first = d.wrap(err)
		}
		for _, pin := range pending[stream] {
			pin.Unpin()
		}
	}
	return first
}

// cudaStream turns a stream as DLPack passes it to __dlpack__(stream=)
// into a CUstream: 1 is CUDA's legacy default stream and 2 its per-thread
// default stream, as the driver's own handles for them are; any other
// positive number is a CUstream handle.
func cudaStream(stream int64) (C.uintptr_t, error) {
	switch {
	case stream == 0:
		return 0, errors.New("devices: CUDA stream 0 is ambiguous and the array API disallows it: pass 1 for the legacy default stream, 2 for the per-thread default stream, or a CUstream")
	case stream < 0:
		return 0, fmt.Errorf("devices: CUDA stream %d is no stream (-1 asks for no synchronisation)", stream)
	}
	return C.uintptr_t(stream), nil
}

// Handoff makes work queued on consumer after it wait, on the device, for
// the work queued on producer so far: cuEventRecord on producer and
// cuStreamWaitEvent on consumer, no wait on the host. Consumer -1 (no
// synchronisation) and producer == consumer need nothing.
func (b *cudaBackend) Handoff(dev dlpack.Device, producer, consumer int64) error {
	d, err := b.device(dev)
	if err != nil || consumer == -1 || producer == consumer {
		return err
	}
	p, err := cudaStream(producer)
	if err != nil {
		return err
	}
	c, err := cudaStream(consumer)
	if err != nil {
		return err
	}
	var call *C.char
	return d.wrap(cuError(d.api, &call, C.dlgen_cu_handoff(d.api, d.ctx, p, c, &call)))
}

// cuSide is one side of a copy: host memory, or device memory of a device.
type cuSide struct {
	host unsafe.Pointer // the element at index 0, on the host
	dev  *cudaDevice
	addr uintptr // the element at index 0, on the device
}

func (b *cudaBackend) side(a Array) (cuSide, error) {
	switch a.Device.DeviceType {
	case dlpack.DeviceTypeCPU:
		return cuSide{host: unsafe.Add(a.Data, a.ByteOffset)}, nil
	case dlpack.DeviceTypeCUDA:
	default:
		return cuSide{}, fmt.Errorf("devices: the CUDA backend cannot reach %v", a.Device)
	}
	d, err := b.device(a.Device)
	if err != nil {
		return cuSide{}, err
	}
	var call *C.char
	var base C.uintptr_t
	var size C.size_t
	if err := cuError(d.api, &call, C.dlgen_cu_range(d.api, d.ctx, C.uintptr_t(uintptr(a.Data)), &base, &size, &call)); err != nil {
		return cuSide{}, d.wrap(err)
	}
	lo, hi, ok := span(a.Shape, a.Strides, int64(a.ItemSize))
	start := int64(uintptr(a.Data) - uintptr(base)) // within the allocation: the driver found it there
	if off := int64(a.ByteOffset); !ok || a.ByteOffset > 1<<62 || start+off+lo < 0 || start+off+hi > int64(size) {
		return cuSide{}, fmt.Errorf("devices: shape %v, strides %v and byte offset %d reach outside a CUDA allocation of %d bytes",
			a.Shape, a.Strides, a.ByteOffset, size)
	}
	return cuSide{dev: d, addr: uintptr(a.Data) + uintptr(a.ByteOffset)}, nil
}

// Copy queues the copy on the backend's stream of the device side.
func (b *cudaBackend) Copy(dst, src Array) error { return b.copy(dst, src, 0) }

// CopyOn queues the copy on the caller's stream (see cudaStream) of the
// device side; a copy between two CUDA devices takes no stream.
func (b *cudaBackend) CopyOn(dst, src Array, stream int64) error {
	s, err := cudaStream(stream)
	if err != nil {
		return err
	}
	return b.copy(dst, src, s)
}

// copy moves data between the host and a device, or on devices, by
// linear, 2-D and 3-D copies where the two layouts allow, else through a
// packed staging buffer on the host that the CPU engine fills or empties.
// Copies between two devices pass through the host.
func (b *cudaBackend) copy(dst, src Array, stream C.uintptr_t) error {
	if err := check(dst, src); err != nil {
		return err
	}
	if n, _ := Elements(src.Shape); n == 0 {
		return nil
	}
	d, err := b.side(dst)
	if err != nil {
		return err
	}
	s, err := b.side(src)
	if err != nil {
		return err
	}
	size := int64(src.ItemSize)
	if d.dev == nil && s.dev == nil {
		copyHost(d.host, s.host, byteDims(src.Shape, dst.Strides, src.Strides, size), size)
		return nil
	}
	if d.dev != nil && s.dev != nil && d.dev != s.dev {
		if stream != 0 {
			return fmt.Errorf("devices: a copy from CUDA device %d to CUDA device %d goes through the host, on no one stream; use Copy", s.dev.id, d.dev.id)
		}
		return b.throughHost(d, dst, d.dev.own, s, src, s.dev.own)
	}
	on := d.dev
	if on == nil {
		on = s.dev
	}
	if stream == 0 {
		stream = on.own
	}
	if p := planRects(byteDims(src.Shape, dst.Strides, src.Strides, size), size, 0, 0); p.direct() {
		return on.submit(p, d, s, stream)
	}
	switch {
	case s.dev == nil: // host to device
		return on.stageWrite(d, dst, stream, func(stage unsafe.Pointer, packed []int64) {
			copyHost(stage, s.host, byteDims(src.Shape, packed, src.Strides, size), size)
		})
	case d.dev == nil: // device to host
		return on.stageRead(s, src, stream, func(stage unsafe.Pointer, packed []int64) {
			copyHost(d.host, stage, byteDims(src.Shape, dst.Strides, packed, size), size)
		})
	}
	return b.throughHost(d, dst, stream, s, src, stream)
}

// throughHost copies between device memory through the host: the source
// is read whole on srcStream and waited for before the destination is
// written on dstStream, which also makes copies within one allocation
// safe.
func (b *cudaBackend) throughHost(d cuSide, dst Array, dstStream C.uintptr_t, s cuSide, src Array, srcStream C.uintptr_t) error {
	size := int64(src.ItemSize)
	var werr error
	rerr := s.dev.stageRead(s, src, srcStream, func(from unsafe.Pointer, fromPacked []int64) {
		werr = d.dev.stageWrite(d, dst, dstStream, func(to unsafe.Pointer, toPacked []int64) {
			copyHost(to, from, byteDims(src.Shape, toPacked, fromPacked, size), size)
		})
	})
	return errors.Join(rerr, werr)
}

// byteDims pairs the destination's and the source's strides, in elements,
// as a copy's dimensions in bytes.
func byteDims(shape, dst, src []int64, size int64) []dim {
	out := make([]dim, len(shape))
	for k, n := range shape {
		out[k] = dim{n, dst[k] * size, src[k] * size}
	}
	return out
}

// stageWrite fills a staging buffer packed for a's layout with fill, then
// queues its copies to the device on stream.
func (d *cudaDevice) stageWrite(a cuSide, arr Array, stream C.uintptr_t, fill func(stage unsafe.Pointer, packed []int64)) error {
	size := int64(arr.ItemSize)
	packed, base, length := staging(arr.Shape, arr.Strides, size)
	buf := make([]byte, length)
	stage := unsafe.Add(unsafe.Pointer(&buf[0]), base)
	fill(stage, packed)
	p := planRects(byteDims(arr.Shape, arr.Strides, packed, size), size, 0, 0)
	return d.submit(p, a, cuSide{host: stage}, stream)
}

// stageRead copies a's elements into a staging buffer packed for its
// layout on stream, waits for that stream, and hands the buffer to empty.
func (d *cudaDevice) stageRead(a cuSide, arr Array, stream C.uintptr_t, empty func(stage unsafe.Pointer, packed []int64)) error {
	size := int64(arr.ItemSize)
	packed, base, length := staging(arr.Shape, arr.Strides, size)
	buf := make([]byte, length)
	stage := unsafe.Add(unsafe.Pointer(&buf[0]), base)
	p := planRects(byteDims(arr.Shape, packed, arr.Strides, size), size, 0, 0)
	if err := d.submit(p, cuSide{host: stage}, a, stream); err != nil {
		return err
	}
	var call *C.char
	if err := cuError(d.api, &call, C.dlgen_cu_sync(d.api, d.ctx, stream, &call)); err != nil {
		return d.wrap(err)
	}
	empty(stage, packed)
	return nil
}

// submit queues the copies of plan p (side 0 the destination dst, side 1
// the source src) on stream. The host memory of either side stays pinned
// until a Sync that began after the copies were queued. A rectangle whose row pitch is longer than the
// device takes is queued row by row.
func (d *cudaDevice) submit(p rectPlan, dst, src cuSide, stream C.uintptr_t) error {
	pin := new(runtime.Pinner)
	for _, host := range []unsafe.Pointer{dst.host, src.host} {
		if host != nil {
			pin.Pin(host)
		}
	}
	err := p.each(func(r rect) error {
		if r.region[1]*r.region[2] > 1 && max(r.row[0], r.row[1]) > d.maxPitch {
			for z := int64(0); z < r.region[2]; z++ {
				for y := int64(0); y < r.region[1]; y++ {
					line := rect{region: [3]int64{r.region[0], 1, 1}, row: r.row, slice: r.slice}
					line.off = [2]int64{r.off[0] + z*r.slice[0] + y*r.row[0], r.off[1] + z*r.slice[1] + y*r.row[1]}
					if err := d.queue(line, dst, src, stream); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return d.queue(r, dst, src, stream)
	})
	d.use(stream, pin) // after queueing: a Sync meanwhile must not unpin it
	return err
}

// queue queues one rectangle.
func (d *cudaDevice) queue(r rect, dst, src cuSide, stream C.uintptr_t) error {
	var dstHost, srcHost unsafe.Pointer
	var dstDev, srcDev C.uintptr_t
	if dst.host != nil {
		dstHost = unsafe.Add(dst.host, r.off[0])
	} else {
		dstDev = C.uintptr_t(dst.addr + uintptr(r.off[0]))
	}
	if src.host != nil {
		srcHost = unsafe.Add(src.host, r.off[1])
	} else {
		srcDev = C.uintptr_t(src.addr + uintptr(r.off[1]))
	}
	var call *C.char
	code := C.dlgen_cu_copy(d.api, d.ctx, dstDev, dstHost, C.size_t(r.row[0]), C.size_t(r.slice[0]/r.row[0]),
		srcDev, srcHost, C.size_t(r.row[1]), C.size_t(r.slice[1]/r.row[1]),
		C.size_t(r.region[0]), C.size_t(r.region[1]), C.size_t(r.region[2]), stream, &call)
	return d.wrap(cuError(d.api, &call, code))
}

// cudaPointer turns a device address into DLTensor's data field.
func cudaPointer(p C.uintptr_t) unsafe.Pointer { return C.dlgen_cu_pointer(p) }

// driverCopy is the driver's own synchronous copy of n contiguous bytes
// between host memory and device memory (cuMemcpyHtoD_v2, cuMemcpyDtoH_v2):
// the peer the GPU check measures the backend's copies against.
func (b *cudaBackend) driverCopy(dev dlpack.Device, toDevice bool, mem, host unsafe.Pointer, n int) error {
	d, err := b.device(dev)
	if err != nil {
		return err
	}
	to := C.int(0)
	if toDevice {
		to = 1
	}
	var call *C.char
	return d.wrap(cuError(d.api, &call, C.dlgen_cu_driver_copy(d.api, d.ctx, to, C.uintptr_t(uintptr(mem)), host, C.size_t(n), &call)))
}
