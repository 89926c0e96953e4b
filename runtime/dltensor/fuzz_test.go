//go:build cgo

package dltensor_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
)

// FuzzImport feeds Import arbitrary field values. Whatever it decides, the
// deleter must run exactly once; and whatever it accepts must be readable
// (the producer's buffer is sized to the extent Import accepted).
func FuzzImport(f *testing.F) {
	f.Add(uint32(1), uint32(3), uint64(0), int32(1), uint8(2), uint8(32), uint16(1), int32(2), int64(2), int64(3), int64(3), int64(1), uint64(0), false)
	f.Add(uint32(1), uint32(3), uint64(1), int32(1), uint8(0), uint8(8), uint16(1), int32(2), int64(4), int64(5), int64(-5), int64(-1), uint64(19), false)
	f.Add(uint32(1), uint32(1), uint64(0), int32(1), uint8(1), uint8(16), uint16(2), int32(1), int64(0), int64(7), int64(0), int64(0), uint64(0), true)
	f.Add(uint32(0), uint32(0), uint64(0), int32(2), uint8(5), uint8(64), uint16(1), int32(-1), int64(-1), int64(-1), int64(0), int64(0), uint64(1<<63), false)
	f.Fuzz(func(t *testing.T, major, minor uint32, flags uint64, device int32, code, bits uint8, lanes uint16,
		ndim int32, d0, d1, s0, s1 int64, byteOffset uint64, nullStrides bool) {
		spec := cproducer.Spec{
			Major: major, Minor: minor, Flags: dlpack.FlagBitmask(flags),
			Device: dlpack.Device{DeviceType: dlpack.DeviceType(device)},
			DType:  dlpack.DataType{Code: dlpack.DataTypeCode(code), Bits: bits, Lanes: lanes},
			NDim:   ndim, Shape: []int64{d0, d1}, Strides: []int64{s0, s1}, ByteOffset: byteOffset,
		}
		if nullStrides {
			spec.Strides = nil
		}
		// Size the buffer for the layout if it is small enough to allocate;
		// otherwise leave it tiny, and Import must refuse or never read.
		spec.BufferBytes = 64
		if need, ok := extent(spec); ok && need <= 1<<20 {
			spec.BufferBytes = int(need) + 64
		}
		r := cproducer.New(spec)
		data := r.Versioned().DLTensor.Data
		tensor, err := dltensor.Import(r.Versioned())
		checkFromCAgrees(t, spec, data, err == nil)
		if err != nil {
			if !errors.Is(err, dltensor.ErrMalformed) {
				t.Fatalf("error not wrapping ErrMalformed: %v", err)
			}
			if r.Calls() != 1 {
				t.Fatalf("refused tensor: deleter ran %d times", r.Calls())
			}
			return
		}
		if need, ok := extent(spec); ok && need <= 1<<20 && tensor.Device().DeviceType == dlpack.DeviceTypeCPU {
			if c, err := tensor.Contiguous(); err == nil {
				c.Close()
			}
		}
		tensor.Close()
		if r.Calls() != 1 {
			t.Fatalf("accepted tensor: deleter ran %d times", r.Calls())
		}
	})
}

// extent is the number of bytes from the buffer start that the elements of
// spec reach, if the layout lies at or after the start.
func extent(s cproducer.Spec) (int64, bool) {
	if s.NDim < 0 || s.NDim > 2 || s.DType.Bits == 0 || s.DType.Lanes == 0 || s.ByteOffset > 1<<20 {
		return 0, false
	}
	item := (int64(s.DType.Bits)*int64(s.DType.Lanes) + 7) / 8
	shape := s.Shape[:s.NDim]
	strides := devices.ContiguousStrides(shape)
	if s.Strides != nil {
		strides = s.Strides[:s.NDim]
	}
	lo, hi := int64(0), int64(0)
	for i, n := range shape {
		if n < 0 || n > 1<<20 || strides[i] > 1<<20 || strides[i] < -1<<20 {
			return 0, false
		}
		if n == 0 {
			return 0, true
		}
		if strides[i] < 0 {
			lo += (n - 1) * strides[i]
		} else {
			hi += (n - 1) * strides[i]
		}
	}
	if int64(s.ByteOffset)+lo*item < 0 {
		return 0, false // the layout reaches before the buffer: keep it unreadable
	}
	return int64(s.ByteOffset) + (hi+1)*item, true
}

// checkFromCAgrees: what Go makes with FromC from the same description is
// accepted exactly when Import accepts it, and Import takes its export.
func checkFromCAgrees(t *testing.T, s cproducer.Spec, data unsafe.Pointer, imported bool) {
	if s.Major != dlpack.MajorVersion || s.NDim < 0 || s.NDim > 2 || s.Device.DeviceType == 0 || s.Strides == nil && s.Minor >= 2 {
		return // descriptions FromC cannot express
	}
	l := dltensor.Layout{
		Device: s.Device, DataType: s.DType, Shape: s.Shape[:s.NDim], ByteOffset: s.ByteOffset,
		SubbytePadded: s.Flags&dlpack.FlagBitmaskIsSubbyteTypePadded != 0,
	}
	if s.Strides != nil {
		l.Strides = s.Strides[:s.NDim]
	}
	made, err := dltensor.FromC(data, l, nil)
	if (err == nil) != imported {
		t.Fatalf("Import accepted: %v, FromC: %v", imported, err)
	}
	if err != nil {
		return
	}
	defer made.Close()
	m, err := made.Export()
	if err != nil {
		t.Fatal(err)
	}
	back, err := dltensor.Import(m)
	if err != nil {
		t.Fatalf("Import refuses what Go exported: %v", err)
	}
	back.Close()
}
