//go:build cgo && unix

// Package fakecuda builds and controls the fake CUDA driver of
// driver/libcuda.c, for the tests of the copy engine's CUDA backend: a
// libcuda.so.1 over host memory that records every call, models streams
// (a queued copy runs only when something waits for it) and fails the
// calls a test names. What passes against it proves the backend's logic,
// not any hardware.
package fakecuda

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

static struct {
	void (*fail)(const char *, int, int, int);
	size_t (*log)(char *, size_t);
	void (*devices)(int);
	void (*hold)(void), (*held)(void), (*release)(void);
} fake;

static const char *dlgen_fake_open(const char *path) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		return dlerror();
	}
	*(void **)&fake.fail = dlsym(lib, "fakecuda_fail");
	*(void **)&fake.log = dlsym(lib, "fakecuda_log");
	*(void **)&fake.devices = dlsym(lib, "fakecuda_set_devices");
	*(void **)&fake.hold = dlsym(lib, "fakecuda_hold_sync");
	*(void **)&fake.held = dlsym(lib, "fakecuda_held_sync");
	*(void **)&fake.release = dlsym(lib, "fakecuda_release_sync");
	return fake.fail && fake.log && fake.devices && fake.hold && fake.held && fake.release ? NULL : "not the fake driver";
}
static void dlgen_fake_fail(const char *call, int result, int skip, int times) { fake.fail(call, result, skip, times); }
static size_t dlgen_fake_log(char *buf, size_t n) { return fake.log(buf, n); }
static void dlgen_fake_devices(int n) { fake.devices(n); }
static void dlgen_fake_hold(void) { fake.hold(); }
static void dlgen_fake_held(void) { fake.held(); }
static void dlgen_fake_release(void) { fake.release(); }
*/
import "C"

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/dlgen/dlgen/runtime/devices/internal/cudaabi"
)

//go:embed driver/libcuda.c
var source []byte

// CUresult values the tests inject, as the CUDA driver API numbers them.
const (
	ErrorInvalidValue   = 1
	ErrorOutOfMemory    = 2
	ErrorNotInitialized = 3
	ErrorNoDevice       = 100
	ErrorInvalidContext = 201
)

// Build compiles the fake driver with the C compiler cgo uses ($CC, else
// cc), under the pedantic C99 flags every C file of dlgen builds with, into
// dir/libcuda.so.1, and returns that path.
func Build(dir string) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	src, lib := filepath.Join(dir, "libcuda.c"), filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(filepath.Join(dir, "cuda.h"), cudaabi.Header, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	args := append(strings.Fields(cc), "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC", "-o", lib, src, "-lpthread")
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("fakecuda: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return lib, nil
}

// Driver controls the fake driver loaded from a path (the same library the
// backend loads from that path: dlopen hands both the one copy).
type Driver struct{}

// Open loads the fake driver at path.
func Open(path string) (Driver, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if why := C.dlgen_fake_open(cpath); why != nil {
		return Driver{}, errors.New("fakecuda: " + C.GoString(why))
	}
	return Driver{}, nil
}

// Fail makes the next times calls of the named entry point (-1: every
// call, 0: none) return result, after skip calls that succeed.
func (Driver) Fail(call string, result, skip, times int) {
	ccall := C.CString(call)
	defer C.free(unsafe.Pointer(ccall))
	C.dlgen_fake_fail(ccall, C.int(result), C.int(skip), C.int(times))
}

// Heal ends every failure Fail set.
func (d Driver) Heal() { d.Fail("", 0, 0, 0) }

// SetDevices sets the number of devices the driver reports (2 at first).
func (Driver) SetDevices(n int) { C.dlgen_fake_devices(C.int(n)) }

// HoldSync makes the next cuStreamSynchronize wait, before it does
// anything, until ReleaseSync; HeldSync returns once one waits.
func (Driver) HoldSync() { C.dlgen_fake_hold() }

// HeldSync waits until a cuStreamSynchronize that HoldSync holds waits.
func (Driver) HeldSync() { C.dlgen_fake_held() }

// ReleaseSync lets the held cuStreamSynchronize go on.
func (Driver) ReleaseSync() { C.dlgen_fake_release() }

// Log returns the calls logged since the last Log, one a line, as
// "name(arguments) = CUresult", then what a call made (d<device>:<n> for
// memory, s<n> for a stream, e<n> for an event), and empties the log.
// Copies name their memory d<device>:<n>+<offset> or host, their pitches,
// slice heights, extents and stream (legacy<device> and per-thread<device>
// for the default streams). Pushing and popping the current context are
// not logged.
func (Driver) Log() []string {
	n := C.dlgen_fake_log(nil, 0)
	buf := make([]byte, int(n)+1<<16) // the log may grow meanwhile
	C.dlgen_fake_log((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	text := C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}
