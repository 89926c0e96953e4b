//go:build cgo

package dltensor_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// olderRelease answers as dlgen's own generated package does, but for the
// version, flags and facts it changes: what dltensor reads of a release
// comes from it alone. tests/dist runs the generated packages of every
// release through a c-shared bridge into NumPy.
type olderRelease struct {
	name         string
	major, minor uint32
	versioned    bool
	flags        dlpack.FlagBitmask
	lacks        dlpack.DataTypeCode // a code it does not define
	alsoReadable dlpack.DeviceType   // a device type whose memory it reads too
}

func (r olderRelease) DLPackRelease() string { return r.name }
func (r olderRelease) DLPackVersion() (uint32, uint32, bool) {
	return r.major, r.minor, r.versioned
}
func (r olderRelease) DLPackFlags() uint64 { return uint64(r.flags) }
func (r olderRelease) DLPackDataTypeCode(c uint8) (bool, bool, uint8) {
	if dlpack.DataTypeCode(c) == r.lacks {
		return false, false, 0
	}
	return dlpack.Release.DLPackDataTypeCode(c)
}
func (r olderRelease) DLPackHostReadable(d int32) bool {
	return dlpack.DeviceType(d) == r.alsoReadable || dlpack.Release.DLPackHostReadable(d)
}

// v10 is DLPack 1.0 as far as these tests need it: no padded flag, no FP8.
var v10 = dltensor.WithRelease(olderRelease{name: "1.0", major: 1, versioned: true,
	flags: dlpack.FlagBitmaskReadOnly | dlpack.FlagBitmaskIsCopied, lacks: dlpack.DataTypeCodeFloat8E4m3fn})

func TestExportCarriesTheReleasesVersionAndFlags(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	tensor.SetReadOnly()
	m, err := tensor.Export(v10)
	require.NoError(t, err)
	assert.Equal(t, dlpack.Version{Major: 1, Minor: 0}, m.Version)
	assert.Equal(t, dlpack.FlagBitmaskReadOnly, m.Flags)
	dltensor.DeleteVersioned(m)
	m, err = tensor.Export()
	require.NoError(t, err)
	assert.Equal(t, dlpack.Version{Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion}, m.Version, "without WithRelease, the newest")
	dltensor.DeleteVersioned(m)
}

// goMemory is n bytes of Go memory that FromC may wrap (pinned, as cgo
// asks of Go memory C holds, until the test ends).
func goMemory(t *testing.T, n int) []byte {
	memory := make([]byte, n)
	var pinner runtime.Pinner
	pinner.Pin(&memory[0])
	t.Cleanup(pinner.Unpin)
	return memory
}

// TestExportRefusesWhatTheReleaseCannotSay: padded sub-byte elements
// before the flag existed, and a type code the release lacks; nothing is
// exported and the handle is as it was.
func TestExportRefusesWhatTheReleaseCannotSay(t *testing.T) {
	memory := goMemory(t, 4)
	padded, err := dltensor.FromC(unsafe.Pointer(&memory[0]), dltensor.Layout{
		DataType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat4E2m1fn, Bits: 4, Lanes: 1}, Shape: []int64{4}, SubbytePadded: true}, nil)
	require.NoError(t, err)
	defer padded.Close()
	_, err = padded.Export(v10)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
	assert.EqualError(t, err, "dltensor: DLPack 1.0 has no flag to say that the tensor is of padded sub-byte elements: "+dltensor.ErrNotInRelease.Error())

	fp8, err := dltensor.FromC(unsafe.Pointer(&memory[0]), dltensor.Layout{
		DataType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat8E4m3fn, Bits: 8, Lanes: 1}, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	defer fp8.Close()
	for _, export := range []func() error{
		func() error { _, err := fp8.Export(v10); return err },
		func() error { _, err := fp8.ExportLegacy(v10); return err },
	} {
		err := export()
		require.ErrorIs(t, err, dltensor.ErrNotInRelease)
		assert.Contains(t, err.Error(), "a consumer of DLPack 1.0 would refuse the tensor (unknown DLDataTypeCode 10)")
	}
	assert.EqualValues(t, 1, fp8.RefCount(), "no export holds the storage")
}

// TestImportJudgesByTheRelease: a code the release lacks is refused (and
// the producer's deleter runs), a flag it does not define is not read,
// and the major version is the release's.
func TestImportJudgesByTheRelease(t *testing.T) {
	memory := goMemory(t, 4)
	fp8, err := dltensor.FromC(unsafe.Pointer(&memory[0]), dltensor.Layout{
		DataType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat8E4m3fn, Bits: 8, Lanes: 1}, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	m, err := fp8.ExportAndClose()
	require.NoError(t, err)
	_, err = dltensor.Import(m, v10)
	var rule *dltensor.RuleError
	require.ErrorAs(t, err, &rule)
	assert.Equal(t, dlpack.RuleDtypeUnknown, rule.Rule)
	assert.Zero(t, dltensor.LiveExports(), "the producer's deleter ran")

	padded, err := dltensor.FromC(unsafe.Pointer(&memory[0]), dltensor.Layout{
		DataType: dlpack.DataType{Code: dlpack.DataTypeCodeInt, Bits: 4, Lanes: 1}, Shape: []int64{4}, SubbytePadded: true}, nil)
	require.NoError(t, err)
	m, err = padded.ExportAndClose()
	require.NoError(t, err)
	require.Equal(t, dlpack.FlagBitmaskIsSubbyteTypePadded, m.Flags)
	in, err := dltensor.Import(m, v10)
	require.NoError(t, err)
	b, err := in.ReadBytes()
	require.NoError(t, err)
	assert.Len(t, b, 2, "a consumer of 1.0 reads four int4 packed")
	in.Close()

	tensor, err := dltensor.FromSlice([]float32{1})
	require.NoError(t, err)
	m, err = tensor.ExportAndClose()
	require.NoError(t, err)
	m.Version = dlpack.Version{Major: 2}
	_, err = dltensor.Import(m, v10)
	assert.EqualError(t, err, "dltensor: DLPack major version 2 is not supported (this consumer speaks 1.0): malformed DLPack tensor")
	assert.Zero(t, dltensor.LiveExports())
}

// TestBeforeOneZeroTheExchangeIsLegacy: a release without versioned
// tensors refuses Export and Import, naming their legacy counterparts,
// and exchanges legacy tensors by its rules.
func TestBeforeOneZeroTheExchangeIsLegacy(t *testing.T) {
	v08 := dltensor.WithRelease(olderRelease{name: "0.8", minor: 8, lacks: dlpack.DataTypeCodeFloat8E4m3fn})
	tensor, err := dltensor.FromSlice([]float32{1, 2})
	require.NoError(t, err)
	defer tensor.Close()
	_, err = tensor.Export(v08)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
	assert.EqualError(t, err, "dltensor: DLPack 0.8 has no versioned tensor (DLManagedTensorVersioned came with DLPack 1.0): call ExportLegacy: "+dltensor.ErrNotInRelease.Error())

	m, err := tensor.Export()
	require.NoError(t, err)
	_, err = dltensor.Import(m, v08)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
	assert.Contains(t, err.Error(), "call ImportLegacy")
	assert.EqualValues(t, 1, dltensor.LiveExports(), "refused unread: the deleter is still the caller's to call")
	dltensor.DeleteVersioned(m)

	legacy, err := tensor.ExportLegacy(v08)
	require.NoError(t, err)
	in, err := dltensor.ImportLegacy(legacy, v08)
	require.NoError(t, err)
	v, err := dltensor.ReadView[float32](in)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, v)
	in.Close()
	assert.Zero(t, dltensor.LiveExports())
}

func TestAReleaseOfAnotherMajorVersionIsRefused(t *testing.T) {
	v20 := dltensor.WithRelease(olderRelease{name: "2.0", major: 2, versioned: true})
	tensor, err := dltensor.FromSlice([]float32{1})
	require.NoError(t, err)
	defer tensor.Close()
	_, err = tensor.Export(v20)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
	assert.Contains(t, err.Error(), "DLPack 2.0 has major version 2, and dltensor's tensors are laid out as in major version 1")
}

// TestAnImportReadsWhatItsReleaseReads: memory of a device type the
// newest release cannot read, but the one imported at can (as upstream's
// main reads kDLTPUHost), is viewed in place.
func TestAnImportReadsWhatItsReleaseReads(t *testing.T) {
	const tpuHost = dlpack.DeviceType(20)
	reads := dltensor.WithRelease(olderRelease{name: "main", major: 1, minor: 3, versioned: true,
		flags: dlpack.FlagBitmaskReadOnly | dlpack.FlagBitmaskIsCopied | dlpack.FlagBitmaskIsSubbyteTypePadded, alsoReadable: tpuHost})
	memory := unsafe.Slice((*float32)(unsafe.Pointer(&goMemory(t, 8)[0])), 2)
	memory[0], memory[1] = 1, 2
	held, err := dltensor.FromC(unsafe.Pointer(&memory[0]), dltensor.Layout{Device: dlpack.Device{DeviceType: tpuHost},
		DataType: dltensor.DataTypeOf[float32](), Shape: []int64{2}}, nil)
	require.NoError(t, err)
	_, err = dltensor.ReadView[float32](held)
	require.ErrorIs(t, err, dltensor.ErrNotOnCPU)
	m, err := held.ExportAndClose()
	require.NoError(t, err)
	in, err := dltensor.Import(m, reads)
	require.NoError(t, err)
	defer in.Close()
	v, err := dltensor.ReadView[float32](in)
	require.NoError(t, err)
	assert.Equal(t, memory, v)
}

// unhashableRelease cannot be a map key, which WithRelease caches by;
// heldRelease is comparable as a type, but not as a value when what it
// holds is not.
type unhashableRelease struct {
	olderRelease
	Notes []string
}

type heldRelease struct {
	olderRelease
	Notes any
}

func TestAReleaseThatCannotBeAMapKeyIsReadEveryTime(t *testing.T) {
	v11 := olderRelease{name: "1.1", major: 1, minor: 1, versioned: true}
	for _, r := range []dltensor.Release{unhashableRelease{olderRelease: v11}, heldRelease{olderRelease: v11, Notes: []string{"x"}}} {
		tensor, err := dltensor.FromSlice([]float32{1})
		require.NoError(t, err)
		m, err := tensor.ExportAndClose(dltensor.WithRelease(r))
		require.NoError(t, err)
		assert.Equal(t, dlpack.Version{Major: 1, Minor: 1}, m.Version)
		dltensor.DeleteVersioned(m)
	}
}

// TestWithReleaseOfNilIsAnErrorNotAPanic: a bridge keeps the Option in a
// package variable, so a panic there would take the host process down as
// the library loads.
func TestWithReleaseOfNilIsAnErrorNotAPanic(t *testing.T) {
	pinned := dltensor.WithRelease(nil)
	tensor, err := dltensor.FromSlice([]float32{1})
	require.NoError(t, err)
	defer tensor.Close()
	_, err = tensor.Export(pinned)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
	assert.Contains(t, err.Error(), "WithRelease(nil): pass the Release of the package dlgen -lang go wrote")
	_, err = tensor.ExportLegacy(pinned)
	require.ErrorIs(t, err, dltensor.ErrNotInRelease)
}
