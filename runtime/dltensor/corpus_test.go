//go:build cgo

package dltensor_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance corpus (conformance/corpus/corpus.json, described in
// docs/corpus.md): every case, made a real managed tensor by a C
// producer whose deleter counts its calls, gets the verdict, the rule and
// the words the corpus says, and the deleter runs exactly once.

// produce makes the case's managed tensor in C.
func produce(ct corpus.Tensor) cproducer.Record {
	spec := cproducer.Spec{
		Flags: dlpack.FlagBitmask(ct.Flags), NDim: ct.NDim, Shape: ct.Shape, Strides: ct.Strides, ByteOffset: ct.ByteOffset,
		Device:      dlpack.Device{DeviceType: dlpack.DeviceType(ct.Device[0]), DeviceID: ct.Device[1]},
		DType:       dlpack.DataType{Code: dlpack.DataTypeCode(ct.Code), Bits: ct.Bits, Lanes: ct.Lanes},
		BufferBytes: ct.BufferBytes, NullData: ct.Data == corpus.Null,
	}
	if ct.Version != nil {
		spec.Major, spec.Minor = ct.Version[0], ct.Version[1]
	}
	r := cproducer.New(spec)
	if ct.Data == corpus.Address {
		r.SetAddress(ct.Address)
	}
	return r
}

func TestCorpus(t *testing.T) {
	c, err := corpus.Load()
	require.NoError(t, err)
	require.Equal(t, [2]uint32{dlpack.MajorVersion, dlpack.MinorVersion}, c.Consumer,
		"the corpus is written for another DLPack release than this runtime's: update it")
	for _, cc := range c.Cases {
		t.Run(cc.Name, func(t *testing.T) {
			if !cc.For(8 * int(unsafe.Sizeof(uintptr(0)))) {
				t.Skipf("for %d-bit pointers", cc.PointerBits)
			}
			ct := cc.Tensor
			r := produce(ct)
			var tensor *dltensor.Tensor
			var err error
			if ct.Version == nil {
				tensor, err = dltensor.ImportLegacy(r.Legacy())
			} else {
				tensor, err = dltensor.Import(r.Versioned())
			}
			if cc.Accept {
				require.NoError(t, err)
				assert.Zero(t, r.Calls(), "the deleter ran before Close")
				if ct.Data == corpus.Buffer && tensor.Size() <= 1<<12 && tensor.Device().DeviceType.HostReadable() {
					copied, err := tensor.Contiguous() // reads every element from the buffer
					require.NoError(t, err)
					copied.Close()
				}
				tensor.Close()
			} else {
				var broken *dltensor.RuleError
				require.ErrorAs(t, err, &broken)
				assert.ErrorIs(t, err, dltensor.ErrMalformed)
				assert.Equal(t, cc.Rule, broken.Rule.String())
				assert.Equal(t, cc.Message, broken.Message)
			}
			assert.Equal(t, 1, r.Calls(), "the deleter runs exactly once")
		})
	}
}

// TestCorpusCoversEveryImportRule: every import check has a
// case on each side, and every refusal names a rule with its Python
// exception, BufferError.
func TestCorpusCoversEveryImportRule(t *testing.T) {
	c, err := corpus.Load()
	require.NoError(t, err)
	refused := map[string]bool{}
	for _, cc := range c.Cases {
		if !cc.Accept {
			refused[cc.Rule] = true
		}
	}
	apiOnly := map[dlpack.Rule]bool{dlpack.RuleStridesCount: true, dlpack.RuleDeviceUnreadable: true, dlpack.RuleDtypeName: true, dlpack.RuleStreamRefused: true}
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
