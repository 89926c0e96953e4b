// Package corpustest runs the conformance corpus (conformance/corpus)
// through an importer written in another language and checks its verdicts:
// the loop that every such runner shares (tests/chelpers, tests/rust).
//
// An importer reads one tensor a line (corpus.Tensor.Line) and prints one
// verdict a line: "accept CALLS_BEFORE CALLS READ" or "refuse CALLS RULE
// MESSAGE", where CALLS_BEFORE counts the deleter's calls before an accepted
// tensor was released and CALLS after it (or after the refusal), and READ is
// how many bytes of an accepted tensor were read, "-" for none, "outside"
// when an element lay outside its buffer.
package corpustest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/stretchr/testify/assert"
)

// Verdict is what an importer concluded on one tensor, and how often the
// producer's deleter ran.
type Verdict struct {
	Accept bool // the tensor was accepted
	// CallsBefore counts the deleter's calls before an accepted tensor was
	// released; Calls, after it (or after the refusal).
	CallsBefore, Calls int
	// Read is, for an accepted tensor whose elements were read, how many
	// bytes; "-" when none were, "outside" when one lay outside its buffer.
	Read          string
	Rule, Message string // for a refusal; Rule is "-" for none
}

// Parse reads a line an importer prints.
func Parse(line string) (Verdict, error) {
	f := strings.SplitN(line, " ", 4)
	number := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	switch {
	case len(f) == 4 && f[0] == "accept":
		return Verdict{Accept: true, CallsBefore: number(f[1]), Calls: number(f[2]), Read: f[3]}, nil
	case len(f) == 4 && f[0] == "refuse":
		return Verdict{Calls: number(f[1]), Rule: f[2], Message: f[3]}, nil
	}
	return Verdict{}, fmt.Errorf("not a verdict: %q", line)
}

// Check hands the cases of c for pointers of bits bits to importer, which
// returns one verdict a tensor, and checks each against its case: the
// verdict, the rule and the words the corpus says; the deleter called
// exactly once, at the refusal or after the accepted tensor is released and
// not before; the elements read of an accepted tensor inside its buffer. It
// prints the tally, naming the importer by who and the run by run.
func Check(t *testing.T, c *corpus.Corpus, who, run string, bits int, importer func([]corpus.Tensor) []Verdict) {
	t.Helper()
	var cases []corpus.Case
	var tensors []corpus.Tensor
	for _, cc := range c.Cases {
		if cc.For(bits) {
			cases = append(cases, cc)
			tensors = append(tensors, cc.Tensor)
		}
	}
	verdicts := importer(tensors)
	if !assert.Len(t, verdicts, len(cases), "one verdict a tensor") {
		return
	}
	refused, read := 0, 0
	for i, cc := range cases {
		v := verdicts[i]
		if cc.Accept {
			if assert.True(t, v.Accept, "%s: refused: %s", cc.Name, v.Message) {
				assert.Zero(t, v.CallsBefore, "%s: the deleter ran before the release", cc.Name)
				assert.NotEqual(t, "outside", v.Read, "%s: an element lies outside its buffer", cc.Name)
				if v.Read != "-" {
					read++
				}
			}
		} else {
			refused++
			if assert.False(t, v.Accept, "%s: accepted", cc.Name) {
				assert.Equal(t, cc.Rule, v.Rule, cc.Name)
				assert.Equal(t, cc.Message, v.Message, cc.Name)
			}
		}
		assert.Equal(t, 1, v.Calls, "%s: the deleter runs exactly once", cc.Name)
	}
	fmt.Printf("conformance corpus with %s (%s, %d-bit pointers): %d cases agree (%d refused, %d read), %d for other pointers not run\n",
		who, run, bits, len(cases), refused, read, len(c.Cases)-len(cases))
}
