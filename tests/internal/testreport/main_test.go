package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run of two packages as `go test -json` reports it: one passes with a
// test that prints, one expected and one unexpected skip; one fails.
const run = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestPrints"}
{"Action":"output","Package":"ex/a","Test":"TestPrints","Output":"=== RUN   TestPrints\n"}
{"Action":"output","Package":"ex/a","Test":"TestPrints","Output":"ABI v1.3: 135/135 probes equal\n"}
{"Action":"output","Package":"ex/a","Test":"TestPrints","Output":"    a_test.go:9: a log line plain go test hides\n"}
{"Action":"output","Package":"ex/a","Test":"TestPrints","Output":"--- PASS: TestPrints (0.00s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestPrints"}
{"Action":"output","Package":"ex/a","Test":"TestGPU","Output":"=== RUN   TestGPU\n"}
{"Action":"output","Package":"ex/a","Test":"TestGPU","Output":"    a_test.go:12: no GPU here\n"}
{"Action":"output","Package":"ex/a","Test":"TestGPU","Output":"--- SKIP: TestGPU (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestGPU"}
{"Action":"output","Package":"ex/a","Test":"TestCompiler","Output":"    a_test.go:20: gcc is not installed\n"}
{"Action":"skip","Package":"ex/a","Test":"TestCompiler"}
{"Action":"output","Package":"ex/a","Output":"PASS\n"}
{"Action":"output","Package":"ex/a","Output":"ok  \tex/a\t0.01s\n"}
{"Action":"pass","Package":"ex/a"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"    b_test.go:5: want 1, got 2\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"ex/b","Test":"TestBroken"}
{"Action":"output","Package":"ex/b","Output":"FAIL\n"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b\t0.01s\n"}
{"Action":"fail","Package":"ex/b"}
{"Action":"skip","Package":"ex/c"}
`

func TestRenderShowsWhatPlainGoTestShows(t *testing.T) {
	var out strings.Builder
	failed, skips, err := Render(strings.NewReader(run), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, "ABI v1.3: 135/135 probes equal\nok  \tex/a\t0.01s\n"+
		"    b_test.go:5: want 1, got 2\n--- FAIL: TestBroken (0.00s)\nFAIL\nFAIL\tex/b\t0.01s\n", out.String())
	assert.Equal(t, []Skip{{"ex/a.TestGPU", "no GPU here"}, {"ex/a.TestCompiler", "gcc is not installed"}}, skips)
}

func TestSummaryFailsOnASkipTheListLacks(t *testing.T) {
	expected, err := ParseExpected("# comment\n\ngo ex/a.TestG* | no * here\npython tests/x.py::test_gpu[cupy] | GPU only: *\n", "go")
	require.NoError(t, err)
	require.Len(t, expected, 1)
	var out strings.Builder
	n := Summarise(&out, []Skip{{"ex/a.TestGPU", "no GPU here"}, {"ex/a.TestCompiler", "gcc is not installed"}}, expected)
	assert.Equal(t, 1, n)
	assert.Equal(t, "== skipped Go tests: 2\n"+
		"ex/a.TestCompiler: gcc is not installed  <- not in tests/expected-skips.txt: a check CI must run did not\n"+
		"ex/a.TestGPU: no GPU here\n"+
		"FAIL: 1 Go tests skipped that must run\n", out.String())
	assert.False(t, Allowed(Skip{"ex/a.TestGPU", "no GPU"}, expected), "the reason must match too")
}

func TestTheListIsReadStrictly(t *testing.T) {
	_, err := ParseExpected("go ex/a.TestGPU no GPU here\n", "go")
	assert.EqualError(t, err, "line 1: \"go ex/a.TestGPU no GPU here\" is not `go|python TEST | REASON`")
}

func TestTheCheckedInListReads(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "expected-skips.txt"))
	require.NoError(t, err)
	for _, suite := range []string{"go", "python"} {
		list, err := ParseExpected(string(text), suite)
		require.NoError(t, err)
		assert.NotEmpty(t, list, suite)
	}
}
