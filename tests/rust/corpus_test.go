package rust

import (
	"strconv"
	"testing"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/tests/internal/corpustest"
	"github.com/stretchr/testify/require"
)

// TestCorpusWithTheCrate runs the conformance corpus
// (conformance/corpus/corpus.json) against the safe layer of the newest
// release's crate (the corpus's release):
// importer.rs makes each case a real managed tensor, versioned or legacy,
// with a deleter that counts its calls, and imports it with
// ManagedTensor::from_versioned or from_legacy. Every case gets the
// verdict, the rule and the words the corpus says; the deleter runs
// exactly once, at the refusal, or when the accepted tensor is dropped and
// not before; the elements of an accepted tensor on CPU memory are read,
// and lie in their buffer. It runs on this machine, for i686 (the cases of
// 32-bit pointers), and under Miri, which fails on undefined behaviour in
// the checks or the reads.
func TestCorpusWithTheCrate(t *testing.T) {
	c, err := corpus.Load()
	require.NoError(t, err)
	s, _ := Releases(t)
	newest := s.At(s.Newest())
	require.Equal(t, [2]uint32{uint32(newest.Versions.Major.Value), uint32(newest.Versions.Minor.Value)}, c.Consumer,
		"the corpus is written for another release than the newest crate's: update it")
	i686 := hosts[1]
	runs := []struct {
		name     string
		bits     int
		importer Importer
	}{
		{"host", strconv.IntSize, Importer{}},
		{i686.gcc, 32, Importer{Target: i686.triple, Env: i686.env}},
		// Miri reads the tensors from stdin, which its isolation forbids.
		{"miri", strconv.IntSize, Importer{Miri: true, Env: []string{"MIRIFLAGS=-Zmiri-disable-isolation"}}},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			corpustest.Check(t, c, "the Rust crate", run.name, run.bits, func(tensors []corpus.Tensor) []corpustest.Verdict {
				return run.importer.Run(t, tensors)
			})
		})
	}
}
