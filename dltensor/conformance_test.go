//go:build cgo

package dltensor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/dltensor"
	"github.com/dlgen/dlgen/dltensor/internal/cproducer"
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance corpus (tests/conformance/corpus.json, described in
// docs/conformance.md): every case, made a real managed tensor by a C
// producer whose deleter counts its calls, gets the verdict, the rule and
// the words the corpus says, and the deleter runs exactly once.

type corpus struct {
	Format   string                     `json:"format"`
	About    string                     `json:"about"`
	Consumer [2]uint32                  `json:"consumer"`
	Defaults map[string]json.RawMessage `json:"defaults"`
	Cases    []corpusCase               `json:"cases"`
}

type corpusCase struct {
	Name        string                     `json:"name"`
	Why         string                     `json:"why"`
	PointerBits int                        `json:"pointer_bits"`
	Tensor      map[string]json.RawMessage `json:"tensor"`
	Verdict     string                     `json:"verdict"`
	Rule        string                     `json:"rule"`
	Message     string                     `json:"message"`
}

// caseTensor is a case's tensor, its defaults applied.
type caseTensor struct {
	Version     *[2]uint32      `json:"version"` // nil: a legacy DLManagedTensor
	Flags       uint64          `json:"flags"`
	Device      [2]int32        `json:"device"`
	DType       [3]uint64       `json:"dtype"`
	NDim        int32           `json:"ndim"`
	Shape       []int64         `json:"shape"`   // nil: NULL
	Strides     []int64         `json:"strides"` // nil: NULL
	ByteOffset  uint64          `json:"byte_offset"`
	Data        json.RawMessage `json:"data"` // "buffer", null or an address
	BufferBytes int             `json:"buffer_bytes"`
}

func loadCorpus(t *testing.T) corpus {
	raw, err := os.ReadFile(filepath.Join("..", "tests", "conformance", "corpus.json"))
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c corpus
	require.NoError(t, dec.Decode(&c))
	require.Equal(t, "dlgen-conformance 1", c.Format)
	return c
}

// tensor applies the defaults to the case's tensor.
func (c corpus) tensor(t *testing.T, cc corpusCase) caseTensor {
	merged := map[string]json.RawMessage{}
	for k, v := range c.Defaults {
		merged[k] = v
	}
	for k, v := range cc.Tensor {
		merged[k] = v
	}
	raw, err := json.Marshal(merged)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ct caseTensor
	require.NoError(t, dec.Decode(&ct), "case %q", cc.Name)
	require.True(t, ct.DType[0] < 256 && ct.DType[1] < 256 && ct.DType[2] < 1<<16, "dtype %v", ct.DType)
	require.True(t, ct.Version != nil || ct.Flags == 0, "a legacy tensor has no flags")
	require.LessOrEqual(t, len(ct.Shape), 64)
	require.LessOrEqual(t, len(ct.Strides), 64)
	return ct
}

// produce makes the case's managed tensor in C.
func produce(t *testing.T, ct caseTensor) cproducer.Record {
	spec := cproducer.Spec{
		Flags: dlpack.FlagBitmask(ct.Flags), NDim: ct.NDim, Shape: ct.Shape, Strides: ct.Strides, ByteOffset: ct.ByteOffset,
		Device: dlpack.Device{DeviceType: dlpack.DeviceType(ct.Device[0]), DeviceID: ct.Device[1]},
		DType:  dlpack.DataType{Code: dlpack.DataTypeCode(ct.DType[0]), Bits: uint8(ct.DType[1]), Lanes: uint16(ct.DType[2])},
	}
	if ct.Version != nil {
		spec.Major, spec.Minor = ct.Version[0], ct.Version[1]
	}
	var address *uint64
	switch string(ct.Data) {
	case `"buffer"`:
		require.Positive(t, ct.BufferBytes)
		spec.BufferBytes = ct.BufferBytes
	case "null":
		spec.NullData = true
	default:
		var a uint64
		require.NoError(t, json.Unmarshal(ct.Data, &a), "data is \"buffer\", null or an address")
		require.True(t, a >= 4096, "addresses below 4096 are reserved")
		address = &a
	}
	r := cproducer.New(spec)
	if address != nil {
		r.SetAddress(*address)
	}
	return r
}

func TestConformanceCorpus(t *testing.T) {
	c := loadCorpus(t)
	require.Equal(t, [2]uint32{dlpack.MajorVersion, dlpack.MinorVersion}, c.Consumer,
		"the corpus is written for another DLPack release than this runtime's: update it")
	names := map[string]bool{}
	for _, cc := range c.Cases {
		require.False(t, names[cc.Name], "two cases are called %q", cc.Name)
		names[cc.Name] = true
		t.Run(cc.Name, func(t *testing.T) {
			if cc.PointerBits != 0 && cc.PointerBits != 8*int(unsafe.Sizeof(uintptr(0))) {
				t.Skipf("for %d-bit pointers", cc.PointerBits)
			}
			ct := c.tensor(t, cc)
			r := produce(t, ct)
			var tensor *dltensor.Tensor
			var err error
			if ct.Version == nil {
				tensor, err = dltensor.ImportLegacy(r.Legacy())
			} else {
				tensor, err = dltensor.Import(r.Versioned())
			}
			switch cc.Verdict {
			case "accept":
				require.NoError(t, err)
				assert.Zero(t, r.Calls(), "the deleter ran before Close")
				if string(ct.Data) == `"buffer"` && tensor.Size() <= 1<<12 && tensor.Device().DeviceType.HostReadable() {
					copied, err := tensor.Contiguous() // reads every element from the buffer
					require.NoError(t, err)
					copied.Close()
				}
				tensor.Close()
			case "refuse":
				var broken *dltensor.RuleError
				require.ErrorAs(t, err, &broken)
				assert.ErrorIs(t, err, dltensor.ErrMalformed)
				assert.Equal(t, cc.Rule, broken.Rule.String())
				assert.Equal(t, cc.Message, broken.Message)
			default:
				t.Fatalf("verdict %q is neither accept nor refuse", cc.Verdict)
			}
			assert.Equal(t, 1, r.Calls(), "the deleter runs exactly once")
		})
	}
}

// TestConformanceCorpusCoversEveryImportRule: every import check has a
// case on each side, and every refusal names a rule with its Python
// exception, BufferError.
func TestConformanceCorpusCoversEveryImportRule(t *testing.T) {
	c := loadCorpus(t)
	refused := map[string]bool{}
	for _, cc := range c.Cases {
		if cc.Verdict == "refuse" {
			refused[cc.Rule] = true
		}
	}
	apiOnly := map[dlpack.Rule]bool{dlpack.RuleStridesCount: true, dlpack.RuleDeviceUnreadable: true, dlpack.RuleDtypeName: true}
	for r := dlpack.Rule(0); r < dlpack.NumRules; r++ {
		if apiOnly[r] {
			assert.False(t, refused[r.String()], "%s is no import check", r)
			continue
		}
		assert.True(t, refused[r.String()], "no case breaks %s", r)
		assert.Equal(t, "BufferError", r.Python(), "an import refusal is a BufferError in Python")
		delete(refused, r.String())
	}
	assert.Empty(t, refused, "cases name rules that do not exist")
}

// TestRuleErrorsAreTheirMessages: what a caller sees is the message of the
// corpus, in dltensor's error convention.
func TestRuleErrorsAreTheirMessages(t *testing.T) {
	spec := goodSpec()
	spec.NDim = -1
	r := cproducer.New(spec)
	_, err := dltensor.Import(r.Versioned())
	assert.EqualError(t, err, "dltensor: ndim -1 is outside [0, 64]: malformed DLPack tensor")
	var broken *dltensor.RuleError
	require.True(t, errors.As(err, &broken))
	assert.Equal(t, dlpack.RuleNdimRange, broken.Rule)
}
