//go:build cgo && unix

package devices

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The OpenCL types and entry points the backend uses, declared here so that
// building dlgen needs no OpenCL headers or library: the system's ICD
// loader is opened at run time.
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;
typedef intptr_t cl_context_properties;

#define DLGEN_CL_CONTEXT_PLATFORM 0x1084
#define DLGEN_CL_MEM_READ_WRITE 1
#define DLGEN_CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3

static struct {
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_ulong, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void *, size_t *);
	cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *, void *, void *, cl_int *);
	cl_int (*GetContextInfo)(cl_context, cl_uint, size_t, void *, size_t *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_ulong, cl_int *);
	cl_mem (*CreateBuffer)(cl_context, cl_ulong, size_t, void *, cl_int *);
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*GetMemObjectInfo)(cl_mem, cl_uint, size_t, void *, size_t *);
	cl_int (*EnqueueReadBufferRect)(cl_command_queue, cl_mem, cl_uint, const size_t *, const size_t *, const size_t *,
		size_t, size_t, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueWriteBufferRect)(cl_command_queue, cl_mem, cl_uint, const size_t *, const size_t *, const size_t *,
		size_t, size_t, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueCopyBufferRect)(cl_command_queue, cl_mem, cl_mem, const size_t *, const size_t *, const size_t *,
		size_t, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueFillBuffer)(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *);
	cl_int (*Flush)(cl_command_queue);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*WaitForEvents)(cl_uint, const cl_event *);
	cl_int (*GetEventInfo)(cl_event, cl_uint, size_t, void *, size_t *);
	cl_int (*ReleaseEvent)(cl_event);
} cl;

static char dlgen_cl_why[512];

// dlgen_cl_load opens the ICD loader and finds every entry point; it
// returns NULL, or why not.
static const char *dlgen_cl_load(const char *name) {
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(dlgen_cl_why, sizeof dlgen_cl_why, "%s", dlerror());
		return dlgen_cl_why;
	}
#define DLGEN_CL_SYM(f) \
	if ((*(void **)&cl.f = dlsym(lib, "cl" #f)) == NULL) { \
		snprintf(dlgen_cl_why, sizeof dlgen_cl_why, "%s has no cl" #f, name); \
		return dlgen_cl_why; \
	}
	DLGEN_CL_SYM(GetPlatformIDs) DLGEN_CL_SYM(GetPlatformInfo) DLGEN_CL_SYM(GetDeviceIDs) DLGEN_CL_SYM(GetDeviceInfo)
	DLGEN_CL_SYM(CreateContext) DLGEN_CL_SYM(GetContextInfo) DLGEN_CL_SYM(CreateCommandQueue) DLGEN_CL_SYM(CreateBuffer)
	DLGEN_CL_SYM(ReleaseMemObject) DLGEN_CL_SYM(GetMemObjectInfo) DLGEN_CL_SYM(EnqueueReadBufferRect)
	DLGEN_CL_SYM(EnqueueWriteBufferRect) DLGEN_CL_SYM(EnqueueCopyBufferRect) DLGEN_CL_SYM(EnqueueFillBuffer)
	DLGEN_CL_SYM(Flush) DLGEN_CL_SYM(Finish)
	DLGEN_CL_SYM(WaitForEvents) DLGEN_CL_SYM(GetEventInfo) DLGEN_CL_SYM(ReleaseEvent)
#undef DLGEN_CL_SYM
	return NULL;
}

// Go cannot call C function pointers: one trampoline per entry point.
static cl_int dlgen_clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *got) { return cl.GetPlatformIDs(n, p, got); }
static cl_int dlgen_clGetPlatformInfo(cl_platform_id p, cl_uint what, size_t n, void *v, size_t *got) {
	return cl.GetPlatformInfo(p, what, n, v, got);
}
static cl_int dlgen_clGetDeviceIDs(cl_platform_id p, cl_ulong type, cl_uint n, cl_device_id *d, cl_uint *got) {
	return cl.GetDeviceIDs(p, type, n, d, got);
}
static cl_int dlgen_clGetDeviceInfo(cl_device_id d, cl_uint what, size_t n, void *v, size_t *got) {
	return cl.GetDeviceInfo(d, what, n, v, got);
}
static cl_context dlgen_clCreateContext(cl_platform_id p, cl_uint n, const cl_device_id *d, cl_int *err) {
	cl_context_properties props[] = {DLGEN_CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
	return cl.CreateContext(props, n, d, NULL, NULL, err);
}
static cl_int dlgen_clGetContextInfo(cl_context c, cl_uint what, size_t n, void *v, size_t *got) {
	return cl.GetContextInfo(c, what, n, v, got);
}
static cl_command_queue dlgen_clCreateCommandQueue(cl_context c, cl_device_id d, cl_int *err) {
	return cl.CreateCommandQueue(c, d, 0, err);
}
static cl_mem dlgen_clCreateBuffer(cl_context c, size_t n, cl_int *err) {
	return cl.CreateBuffer(c, DLGEN_CL_MEM_READ_WRITE, n, NULL, err);
}
static cl_int dlgen_clReleaseMemObject(cl_mem m) { return cl.ReleaseMemObject(m); }
static cl_int dlgen_clGetMemObjectInfo(cl_mem m, cl_uint what, size_t n, void *v) { return cl.GetMemObjectInfo(m, what, n, v, NULL); }
static cl_int dlgen_clEnqueueReadBufferRect(cl_command_queue q, cl_mem m, const size_t *origin, const size_t *region,
		size_t row, size_t slice, size_t hostRow, size_t hostSlice, void *host, cl_event *ev) {
	size_t zero[3] = {0, 0, 0};
	return cl.EnqueueReadBufferRect(q, m, 0, origin, zero, region, row, slice, hostRow, hostSlice, host, 0, NULL, ev);
}
static cl_int dlgen_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem m, const size_t *origin, const size_t *region,
		size_t row, size_t slice, size_t hostRow, size_t hostSlice, const void *host, cl_event *ev) {
	size_t zero[3] = {0, 0, 0};
	return cl.EnqueueWriteBufferRect(q, m, 0, origin, zero, region, row, slice, hostRow, hostSlice, host, 0, NULL, ev);
}
static cl_int dlgen_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *srcOrigin,
		const size_t *dstOrigin, const size_t *region, size_t srcRow, size_t srcSlice, size_t dstRow, size_t dstSlice,
		cl_event *ev) {
	return cl.EnqueueCopyBufferRect(q, src, dst, srcOrigin, dstOrigin, region, srcRow, srcSlice, dstRow, dstSlice, 0, NULL, ev);
}
static cl_int dlgen_clEnqueueFillBuffer(cl_command_queue q, cl_mem m, size_t n, cl_event *ev) {
	unsigned char zero = 0;
	return cl.EnqueueFillBuffer(q, m, &zero, 1, 0, n, 0, NULL, ev);
}
static cl_int dlgen_clFlush(cl_command_queue q) { return cl.Flush(q); }
static cl_int dlgen_clFinish(cl_command_queue q) { return cl.Finish(q); }
static cl_int dlgen_clWaitForEvents(cl_uint n, const cl_event *ev) { return cl.WaitForEvents(n, ev); }
static cl_int dlgen_clEventStatus(cl_event ev, cl_int *status) {
	return cl.GetEventInfo(ev, DLGEN_CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, NULL);
}
static cl_int dlgen_clReleaseEvent(cl_event ev) { return cl.ReleaseEvent(ev); }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// OpenCL constants, as the Khronos headers define them.
const (
	clDeviceTypeAll             = 0xFFFFFFFF
	clPlatformName              = 0x0902
	clDeviceName                = 0x102B
	clDeviceMaxMemAlloc         = 0x1010
	clContextDevices            = 0x1081
	clMemSize                   = 0x1102
	clMemContext                = 0x1106
	clDeviceNotFound            = -1
	clPlatformNotFoundKHR       = -1001
	clExecStatusErrorInWaitList = -14
)

var clErrorNames = map[C.cl_int]string{
	-1: "CL_DEVICE_NOT_FOUND", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -5: "CL_OUT_OF_RESOURCES",
	-6: "CL_OUT_OF_HOST_MEMORY", -8: "CL_MEM_COPY_OVERLAP", -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-30: "CL_INVALID_VALUE", -33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT", -36: "CL_INVALID_COMMAND_QUEUE",
	-38: "CL_INVALID_MEM_OBJECT", -57: "CL_INVALID_EVENT_WAIT_LIST", -58: "CL_INVALID_EVENT", -61: "CL_INVALID_BUFFER_SIZE",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

func clError(call string, code C.cl_int) error {
	if code == 0 {
		return nil
	}
	name := clErrorNames[code]
	if name == "" {
		name = "error"
	}
	return fmt.Errorf("devices: OpenCL %s: %s (%d)", call, name, int32(code))
}

// The OpenCL backend is loaded once, when first asked for.
var clBuiltin = builtin[*openCLBackend]{load: func() (*openCLBackend, error) { return loadOpenCL("libOpenCL.so.1", "libOpenCL.so") }}

func openCL() (Backend, error) { return clBuiltin.get() }

// OpenCLDevices names the OpenCL devices ("platform: device") in the order
// of their device ids: id N is the N-th device of all platforms, platforms
// in the order the ICD loader lists them, each platform's devices in its
// own order. The error wraps ErrNoBackend when OpenCL is not available.
func OpenCLDevices() ([]string, error) { return clBuiltin.deviceNames() }

func (b *openCLBackend) names() []string {
	names := make([]string, len(b.devices))
	for i, d := range b.devices {
		names[i] = d.name
	}
	return names
}

// loadOpenCL opens the first of the libraries that loads and lists the
// devices of every platform.
func loadOpenCL(names ...string) (*openCLBackend, error) {
	var whys []string
	for _, name := range names {
		cname := C.CString(name)
		why := C.dlgen_cl_load(cname)
		C.free(unsafe.Pointer(cname))
		if why == nil {
			return listDevices()
		}
		whys = append(whys, C.GoString(why))
	}
	return nil, notAvailable(strings.Join(whys, "; "))
}

type clDevice struct {
	id       C.cl_device_id
	platform C.cl_platform_id
	name     string
	maxAlloc int64
}

func listDevices() (*openCLBackend, error) {
	var n C.cl_uint
	if code := C.dlgen_clGetPlatformIDs(0, nil, &n); code == clPlatformNotFoundKHR || code == 0 && n == 0 {
		return nil, notAvailable("no OpenCL platform is installed (an ICD such as Debian's pocl-opencl-icd)")
	} else if code != 0 {
		return nil, notAvailable(clError("clGetPlatformIDs", code).Error())
	}
	platforms := make([]C.cl_platform_id, n)
	if err := clError("clGetPlatformIDs", C.dlgen_clGetPlatformIDs(n, &platforms[0], nil)); err != nil {
		return nil, notAvailable(err.Error())
	}
	b := &openCLBackend{contexts: map[C.cl_platform_id]C.cl_context{}, queues: map[queueKey]*clQueue{}, members: map[C.cl_context][]C.cl_device_id{}}
	for _, p := range platforms {
		var nd C.cl_uint
		if code := C.dlgen_clGetDeviceIDs(p, clDeviceTypeAll, 0, nil, &nd); code == clDeviceNotFound || nd == 0 {
			continue
		} else if code != 0 {
			return nil, notAvailable(clError("clGetDeviceIDs", code).Error())
		}
		ids := make([]C.cl_device_id, nd)
		if err := clError("clGetDeviceIDs", C.dlgen_clGetDeviceIDs(p, clDeviceTypeAll, nd, &ids[0], nil)); err != nil {
			return nil, notAvailable(err.Error())
		}
		platform := infoString(func(n C.size_t, v unsafe.Pointer, got *C.size_t) C.cl_int {
			return C.dlgen_clGetPlatformInfo(p, clPlatformName, n, v, got)
		})
		for _, id := range ids {
			var maxAlloc C.cl_ulong
			if err := clError("clGetDeviceInfo", C.dlgen_clGetDeviceInfo(id, clDeviceMaxMemAlloc, C.size_t(unsafe.Sizeof(maxAlloc)), unsafe.Pointer(&maxAlloc), nil)); err != nil {
				return nil, notAvailable(err.Error())
			}
			name := infoString(func(n C.size_t, v unsafe.Pointer, got *C.size_t) C.cl_int {
				return C.dlgen_clGetDeviceInfo(id, clDeviceName, n, v, got)
			})
			b.devices = append(b.devices, clDevice{id, p, platform + ": " + name, int64(min(maxAlloc, 1<<62))})
		}
	}
	if len(b.devices) == 0 {
		return nil, notAvailable(fmt.Sprintf("%d OpenCL platforms and no device", n))
	}
	return b, nil
}

// infoString reads a string property through one of OpenCL's Get*Info.
func infoString(get func(n C.size_t, v unsafe.Pointer, got *C.size_t) C.cl_int) string {
	var n C.size_t
	if get(0, nil, &n) != 0 || n == 0 {
		return "?"
	}
	buf := make([]byte, n)
	if get(n, unsafe.Pointer(&buf[0]), nil) != 0 {
		return "?"
	}
	return strings.TrimRight(string(buf), "\x00 ")
}

// openCLBackend serves kDLOpenCL. It makes one context per platform, over
// all its devices, for the memory it allocates, and accepts buffers of any
// context (an imported tensor's): each buffer is used through an in-order
// command queue of its own context on the device its array names.
type openCLBackend struct {
	devices []clDevice

	mu       sync.Mutex
	contexts map[C.cl_platform_id]C.cl_context
	queues   map[queueKey]*clQueue
	members  map[C.cl_context][]C.cl_device_id
}

type queueKey struct {
	ctx C.cl_context
	dev int32
}

// clQueue is an in-order command queue with what its commands still hold:
// their events, to report failures at Sync, and the pins of host memory
// they read from.
//
// Commands are enqueued on a queue by one goroutine at a time (mu is held
// around every clEnqueue call). Drivers that run a command inside the
// clEnqueue call that submits it, such as PoCL's "basic" CPU device, then
// see a queue whose earlier commands have all ended. Enqueued from several
// threads at once, PoCL 3.1's basic device deadlocks: the thread that
// finishes a command runs the next command of the queue, which another
// thread had enqueued meanwhile, while still holding that command's lock,
// and waits for it forever.
type clQueue struct {
	q    C.cl_command_queue
	dev  int32
	name string // of the device, for errors

	mu     sync.Mutex
	events []C.cl_event
	pins   []*runtime.Pinner
}

func (b *openCLBackend) device(dev dlpack.Device) (clDevice, error) {
	if dev.DeviceType != dlpack.DeviceTypeOpenCL || dev.DeviceID < 0 || int(dev.DeviceID) >= len(b.devices) {
		return clDevice{}, fmt.Errorf("devices: no OpenCL device %d (there are %d)", dev.DeviceID, len(b.devices))
	}
	return b.devices[dev.DeviceID], nil
}

// context returns the backend's own context for a device's platform.
func (b *openCLBackend) context(d clDevice) (C.cl_context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ctx, ok := b.contexts[d.platform]; ok {
		return ctx, nil
	}
	var ids []C.cl_device_id
	for _, o := range b.devices {
		if o.platform == d.platform {
			ids = append(ids, o.id)
		}
	}
	var code C.cl_int
	ctx := C.dlgen_clCreateContext(d.platform, C.cl_uint(len(ids)), &ids[0], &code)
	if err := clError("clCreateContext", code); err != nil {
		return nil, err
	}
	b.contexts[d.platform] = ctx
	return ctx, nil
}

// queue returns the command queue of a context on device id, making it
// first; it refuses a context without that device.
func (b *openCLBackend) queue(ctx C.cl_context, id int32) (*clQueue, error) {
	key := queueKey{ctx, id}
	b.mu.Lock()
	defer b.mu.Unlock()
	if q, ok := b.queues[key]; ok {
		return q, nil
	}
	members, ok := b.members[ctx]
	if !ok {
		var n C.size_t
		if err := clError("clGetContextInfo", C.dlgen_clGetContextInfo(ctx, clContextDevices, 0, nil, &n)); err != nil {
			return nil, err
		}
		members = make([]C.cl_device_id, int(n)/int(unsafe.Sizeof(C.cl_device_id(nil))))
		if len(members) > 0 {
			if err := clError("clGetContextInfo", C.dlgen_clGetContextInfo(ctx, clContextDevices, n, unsafe.Pointer(&members[0]), nil)); err != nil {
				return nil, err
			}
		}
		b.members[ctx] = members
	}
	if !slices.Contains(members, b.devices[id].id) {
		return nil, fmt.Errorf("devices: the buffer's OpenCL context does not include device %d (%s)", id, b.devices[id].name)
	}
	var code C.cl_int
	q := C.dlgen_clCreateCommandQueue(ctx, b.devices[id].id, &code)
	if err := clError("clCreateCommandQueue", code); err != nil {
		return nil, err
	}
	cq := &clQueue{q: q, dev: id, name: b.devices[id].name}
	b.queues[key] = cq
	return cq, nil
}

// Allocate makes a buffer in the backend's context of dev's platform and
// fills it with zeros before returning.
func (b *openCLBackend) Allocate(dev dlpack.Device, nbytes int) (unsafe.Pointer, error) {
	d, err := b.device(dev)
	if err != nil {
		return nil, err
	}
	switch {
	case nbytes < 0 || int64(nbytes) > d.maxAlloc:
		return nil, fmt.Errorf("devices: cannot allocate %d bytes on OpenCL device %d (%s), which allocates at most %d", nbytes, dev.DeviceID, d.name, d.maxAlloc)
	case nbytes == 0:
		return nil, nil
	}
	ctx, err := b.context(d)
	if err != nil {
		return nil, err
	}
	q, err := b.queue(ctx, dev.DeviceID)
	if err != nil {
		return nil, err
	}
	var code C.cl_int
	mem := C.dlgen_clCreateBuffer(ctx, C.size_t(nbytes), &code)
	if err := clError("clCreateBuffer", code); err != nil {
		return nil, err
	}
	var ev C.cl_event
	q.mu.Lock()
	err = clError("clEnqueueFillBuffer", C.dlgen_clEnqueueFillBuffer(q.q, mem, C.size_t(nbytes), &ev))
	q.mu.Unlock()
	if err == nil {
		err = q.await("clEnqueueFillBuffer", func() error { return wait([]C.cl_event{ev}, "clEnqueueFillBuffer") }, nil)
	}
	if err != nil {
		// OpenCL keeps the buffer until the fill has ended, also when that
		// is after Allocate gave up waiting.
		C.dlgen_clReleaseMemObject(mem)
		return nil, err
	}
	return unsafe.Pointer(mem), nil
}

// Free releases the buffer; OpenCL keeps it until commands using it end.
func (b *openCLBackend) Free(dev dlpack.Device, data unsafe.Pointer) error {
	if _, err := b.device(dev); err != nil || data == nil {
		return err
	}
	return clError("clReleaseMemObject", C.dlgen_clReleaseMemObject(C.cl_mem(data)))
}

// Sync finishes every queue on dev and reports the first command that
// failed since the last Sync.
func (b *openCLBackend) Sync(dev dlpack.Device) error {
	if _, err := b.device(dev); err != nil {
		return err
	}
	b.mu.Lock()
	var queues []*clQueue
	for _, q := range b.queues {
		if q.dev == dev.DeviceID {
			queues = append(queues, q)
		}
	}
	b.mu.Unlock()
	var first error
	for _, q := range queues {
		if err := q.finish(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// finish waits for every command submitted so far, then drops what they
// held (also when that is after finish gave up waiting).
func (q *clQueue) finish() error {
	q.mu.Lock()
	events, pins := q.events, q.pins
	q.events, q.pins = nil, nil
	q.mu.Unlock()
	return q.await("clFinish", func() error {
		err := clError("clFinish", C.dlgen_clFinish(q.q))
		for _, ev := range events {
			var status C.cl_int
			if code := C.dlgen_clEventStatus(ev, &status); (code != 0 || status < 0) && err == nil {
				err = clError("queued copy", min(code, status))
			}
			C.dlgen_clReleaseEvent(ev)
		}
		return err
	}, func() {
		for _, p := range pins {
			p.Unpin()
		}
	})
}

// waitLimit bounds every wait for an OpenCL device. The other calls do not
// wait for one: copies are enqueued without blocking (a driver that runs
// them inside the clEnqueue call takes as long as the copy, and no longer,
// since the queue's earlier commands have ended), and clFlush, clRelease*
// and the Get*Info queries return without waiting for commands.
var waitLimit = 5 * time.Minute

// await bounds a call that waits for the device (clFinish,
// clWaitForEvents): it runs wait on a goroutine of its own and waits for
// it at most waitLimit, then returns an error naming call and the device.
// Whenever wait returns, done (if not nil) runs on that goroutine: it
// unpins the host memory the device may still be using, so that a wait
// given up on leaves that memory in use until the device has finished
// with it.
func (q *clQueue) await(call string, wait func() error, done func()) error {
	result := make(chan error, 1)
	go func() {
		err := wait()
		if done != nil {
			done()
		}
		result <- err
	}()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case err := <-result:
		return err
	case <-timer.C:
		return fmt.Errorf("devices: OpenCL device %d (%s): %s has not finished after %v; the device is stuck or overloaded, and the memory of the copy stays in use until it finishes",
			q.dev, q.name, call, waitLimit)
	}
}

// wait waits for events and releases them.
func wait(events []C.cl_event, call string) error {
	if len(events) == 0 {
		return nil
	}
	code := C.dlgen_clWaitForEvents(C.cl_uint(len(events)), &events[0])
	var err error
	if code == clExecStatusErrorInWaitList {
		for _, ev := range events {
			var status C.cl_int
			if C.dlgen_clEventStatus(ev, &status); status < 0 && err == nil {
				err = clError(call, status)
			}
		}
	} else {
		err = clError("clWaitForEvents", code)
	}
	for _, ev := range events {
		C.dlgen_clReleaseEvent(ev)
	}
	return err
}

// clArray is one side of a copy: host memory, or a buffer with its queue.
type clArray struct {
	host   unsafe.Pointer // the element at index 0, on the host
	mem    C.cl_mem
	ctx    C.cl_context
	q      *clQueue
	offset int64 // of the element at index 0 in mem
}

func (b *openCLBackend) side(a Array) (clArray, error) {
	switch a.Device.DeviceType {
	case dlpack.DeviceTypeCPU:
		return clArray{host: unsafe.Add(a.Data, a.ByteOffset)}, nil
	case dlpack.DeviceTypeOpenCL:
	default:
		return clArray{}, fmt.Errorf("devices: the OpenCL backend cannot reach %v", a.Device)
	}
	if _, err := b.device(a.Device); err != nil {
		return clArray{}, err
	}
	mem := C.cl_mem(a.Data)
	var ctx C.cl_context
	var size C.size_t
	if err := clError("clGetMemObjectInfo", C.dlgen_clGetMemObjectInfo(mem, clMemContext, C.size_t(unsafe.Sizeof(ctx)), unsafe.Pointer(&ctx))); err != nil {
		return clArray{}, err
	}
	if err := clError("clGetMemObjectInfo", C.dlgen_clGetMemObjectInfo(mem, clMemSize, C.size_t(unsafe.Sizeof(size)), unsafe.Pointer(&size))); err != nil {
		return clArray{}, err
	}
	lo, hi, ok := span(a.Shape, a.Strides, int64(a.ItemSize))
	if off := int64(a.ByteOffset); !ok || a.ByteOffset > 1<<62 || off+lo < 0 || off+hi > int64(size) {
		return clArray{}, fmt.Errorf("devices: shape %v, strides %v and byte offset %d reach outside an OpenCL buffer of %d bytes",
			a.Shape, a.Strides, a.ByteOffset, size)
	}
	q, err := b.queue(ctx, a.Device.DeviceID)
	if err != nil {
		return clArray{}, err
	}
	return clArray{mem: mem, ctx: ctx, q: q, offset: int64(a.ByteOffset)}, nil
}

// Copy moves data between the host and a buffer, or between buffers, by
// rectangle copies where the two layouts allow, else through a packed
// staging buffer on the host that the CPU engine fills or empties. Reads
// into host memory are complete when Copy returns; writes to buffers and
// copies between them are queued, their host memory pinned until Sync.
func (b *openCLBackend) Copy(dst, src Array) error {
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
	dims := func(d, s []int64) []dim {
		out := make([]dim, len(src.Shape))
		for k, n := range src.Shape {
			out[k] = dim{n, d[k] * size, s[k] * size}
		}
		return out
	}
	switch {
	case d.mem == nil && s.mem == nil:
		copyHost(d.host, s.host, dims(dst.Strides, src.Strides), size)
		return nil
	case s.mem == nil: // host to device
		if p := planRects(dims(dst.Strides, src.Strides), size, d.offset, 0); p.direct() {
			return d.q.write(d.mem, p, s.host)
		}
		return b.stageWrite(d, dst, func(stage unsafe.Pointer, packed []int64) {
			copyHost(stage, s.host, dims(packed, src.Strides), size)
		})
	case d.mem == nil: // device to host
		if p := planRects(dims(src.Strides, dst.Strides), size, s.offset, 0); p.direct() {
			return s.q.read(s.mem, p, d.host)
		}
		return b.stageRead(s, src, func(stage unsafe.Pointer, packed []int64) {
			copyHost(d.host, stage, dims(dst.Strides, packed), size)
		})
	}
	if d.ctx == s.ctx && d.mem != s.mem {
		if p := planRects(dims(dst.Strides, src.Strides), size, d.offset, s.offset); p.direct() {
			return copyBuffers(d, s, p)
		}
	}
	// Through the host: the source read whole before the destination is
	// written, which also makes copies within one buffer safe.
	var werr error
	rerr := b.stageRead(s, src, func(from unsafe.Pointer, fromPacked []int64) {
		werr = b.stageWrite(d, dst, func(to unsafe.Pointer, toPacked []int64) {
			copyHost(to, from, dims(toPacked, fromPacked), size)
		})
	})
	return errors.Join(rerr, werr)
}

// stageWrite fills a staging buffer packed for a's layout with fill, then
// queues its rectangle copies to the device.
func (b *openCLBackend) stageWrite(a clArray, arr Array, fill func(stage unsafe.Pointer, packed []int64)) error {
	size := int64(arr.ItemSize)
	packed, base, length := staging(arr.Shape, arr.Strides, size)
	buf := make([]byte, length)
	stage := unsafe.Add(unsafe.Pointer(&buf[0]), base)
	fill(stage, packed)
	p := planRects(stagingDims(arr, packed), size, a.offset, 0)
	return a.q.write(a.mem, p, stage)
}

// stageRead reads a's elements into a staging buffer packed for its layout,
// waits, and hands it to empty.
func (b *openCLBackend) stageRead(a clArray, arr Array, empty func(stage unsafe.Pointer, packed []int64)) error {
	size := int64(arr.ItemSize)
	packed, base, length := staging(arr.Shape, arr.Strides, size)
	buf := make([]byte, length)
	stage := unsafe.Add(unsafe.Pointer(&buf[0]), base)
	p := planRects(stagingDims(arr, packed), size, a.offset, 0)
	if err := a.q.read(a.mem, p, stage); err != nil {
		return err
	}
	empty(stage, packed)
	return nil
}

func stagingDims(a Array, packed []int64) []dim {
	size := int64(a.ItemSize)
	out := make([]dim, len(a.Shape))
	for k, n := range a.Shape {
		out[k] = dim{n, a.Strides[k] * size, packed[k] * size}
	}
	return out
}

func origin(off int64) [3]C.size_t { return [3]C.size_t{C.size_t(off), 0, 0} }

func region(r rect) [3]C.size_t {
	return [3]C.size_t{C.size_t(r.region[0]), C.size_t(r.region[1]), C.size_t(r.region[2])}
}

// write queues the rectangles of p from host memory (side 1, offsets from
// host) to mem (side 0). The host memory stays pinned until Sync.
func (q *clQueue) write(mem C.cl_mem, p rectPlan, host unsafe.Pointer) error {
	pin := new(runtime.Pinner)
	pin.Pin(host)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pins = append(q.pins, pin)
	err := p.each(func(r rect) error {
		o, reg := origin(r.off[0]), region(r)
		var ev C.cl_event
		code := C.dlgen_clEnqueueWriteBufferRect(q.q, mem, &o[0], &reg[0], C.size_t(r.row[0]), C.size_t(r.slice[0]),
			C.size_t(r.row[1]), C.size_t(r.slice[1]), unsafe.Add(host, r.off[1]), &ev)
		if code == 0 {
			q.events = append(q.events, ev)
		}
		return clError("clEnqueueWriteBufferRect", code)
	})
	return errors.Join(err, q.flush())
}

// flush hands what is queued to the device: OpenCL promises that queued
// commands reach it only once their queue is flushed or finished, and
// commands of other queues may be waiting for them.
func (q *clQueue) flush() error { return clError("clFlush", C.dlgen_clFlush(q.q)) }

// read copies the rectangles of p from mem (side 0) to host memory (side 1,
// offsets from host) and waits for them.
func (q *clQueue) read(mem C.cl_mem, p rectPlan, host unsafe.Pointer) error {
	pin := new(runtime.Pinner)
	pin.Pin(host)
	var events []C.cl_event
	q.mu.Lock()
	err := p.each(func(r rect) error {
		o, reg := origin(r.off[0]), region(r)
		var ev C.cl_event
		code := C.dlgen_clEnqueueReadBufferRect(q.q, mem, &o[0], &reg[0], C.size_t(r.row[0]), C.size_t(r.slice[0]),
			C.size_t(r.row[1]), C.size_t(r.slice[1]), unsafe.Add(host, r.off[1]), &ev)
		if code == 0 {
			events = append(events, ev)
		}
		return clError("clEnqueueReadBufferRect", code)
	})
	q.mu.Unlock()
	return errors.Join(err, q.await("clEnqueueReadBufferRect", func() error { return wait(events, "clEnqueueReadBufferRect") }, pin.Unpin))
}

// copyBuffers copies the rectangles of p from s.mem (side 1) to d.mem
// (side 0) on the destination's queue. When the source is used through
// another queue (another device), that queue is finished first and the
// copy waited for, so that it is ordered with the commands of both queues.
func copyBuffers(d, s clArray, p rectPlan) error {
	other := s.q != d.q
	if other {
		err := s.q.await("clFinish", func() error { return clError("clFinish", C.dlgen_clFinish(s.q.q)) }, nil)
		if err != nil {
			return err
		}
	}
	var events []C.cl_event
	d.q.mu.Lock()
	err := p.each(func(r rect) error {
		so, do, reg := origin(r.off[1]), origin(r.off[0]), region(r)
		var ev C.cl_event
		code := C.dlgen_clEnqueueCopyBufferRect(d.q.q, s.mem, d.mem, &so[0], &do[0], &reg[0], C.size_t(r.row[1]), C.size_t(r.slice[1]),
			C.size_t(r.row[0]), C.size_t(r.slice[0]), &ev)
		if code == 0 {
			events = append(events, ev)
		}
		return clError("clEnqueueCopyBufferRect", code)
	})
	if !other {
		d.q.events = append(d.q.events, events...)
		events = nil
		err = errors.Join(err, d.q.flush())
	}
	d.q.mu.Unlock()
	if len(events) == 0 {
		return err
	}
	return errors.Join(err, d.q.await("clEnqueueCopyBufferRect", func() error { return wait(events, "clEnqueueCopyBufferRect") }, nil))
}
