package abi

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An upstream is a real DLPack header as a package ships it.
type upstream struct {
	source  string
	release ir.Version
	dir     func(t *testing.T) string // the directory holding dlpack/dlpack.h
	// vendorAdded names members the vendor added to its copy (by struct or
	// enum key of Declarations); they must be there and are then ignored.
	vendorAdded map[string][]string
}

// cached is a header scripts/deps.sh keeps under .cache/upstream/dir.
func cached(dir string) func(t *testing.T) string {
	return func(t *testing.T) string { return filepath.Join(tooltest.Root(), ".cache", "upstream", dir) }
}

// Upstreams cover every release of the schema, one header each.
var upstreams = []upstream{
	{source: "Debian bookworm libdlpack-dev", release: ir.Version{Major: 0, Minor: 6},
		dir: func(*testing.T) string { return "/usr/include" }},
	{source: "dlpack-sys 0.1.1 crate", release: ir.Version{Major: 0, Minor: 7}, dir: cached("dlpack-sys-0.1.1")},
	// PyTorch added kDLMAIA to its copy before upstream released it in v1.0.
	{source: "PyTorch 2.6 (Debian trixie libtorch-dev)", release: ir.Version{Major: 0, Minor: 8}, dir: cached("debian-trixie-libtorch-dev"),
		vendorAdded: map[string][]string{"enum DLDeviceType": {"kDLMAIA"}}},
	{source: "Debian trixie libdlpack-dev", release: ir.Version{Major: 1, Minor: 0}, dir: cached("debian-trixie-libdlpack-dev")},
	{source: "cuda-core 0.3.2", release: ir.Version{Major: 1, Minor: 1}, dir: cached("cuda-core-0.3.2")},
	{source: "apache-tvm-ffi 0.1.0", release: ir.Version{Major: 1, Minor: 2}, dir: cached("apache-tvm-ffi-0.1.0")},
	{source: "apache-tvm-ffi", release: ir.Version{Major: 1, Minor: 3}, dir: func(t *testing.T) string {
		config := os.Getenv("DLGEN_TVM_FFI_CONFIG")
		if config == "" {
			config = tooltest.Require(t, "tvm-ffi-config")
		}
		return strings.TrimSpace(tooltest.Run(t, "", nil, config, "--dlpack-includedir"))
	}},
}

// TestMatchesUpstreamHeaders compares every release with its real header.
func TestMatchesUpstreamHeaders(t *testing.T) {
	for _, u := range upstreams {
		t.Run("v"+u.release.String(), func(t *testing.T) {
			dir := u.dir(t)
			if _, err := os.Stat(filepath.Join(dir, "dlpack", "dlpack.h")); err != nil {
				tooltest.Missing(t, "the header of "+u.source+" is not there; scripts/deps.sh fetches it")
			}
			got := upstreamVersion(t, Declare(t, dir))
			require.Equal(t, u.release, got, "%s no longer ships the release it was chosen for", u.source)
			compareWithUpstream(t, u.source, dir, u.vendorAdded)
		})
	}
}

// TestEveryReleaseHasAnUpstreamHeader: upstream's main branch aside, which
// no package ships and the tests never download.
func TestEveryReleaseHasAnUpstreamHeader(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	var want, got []ir.Version
	for _, r := range s.Releases {
		if !r.Version.Main {
			want = append(want, r.Version)
		}
	}
	for _, u := range upstreams {
		got = append(got, u.release)
	}
	assert.Equal(t, want, got)
}

// upstreamVersion reads the release an upstream header declares.
func upstreamVersion(t *testing.T, d Declarations) ir.Version {
	if v, ok := d.Macros["DLPACK_VERSION"]; ok { // before 1.0: major*100 + minor*10
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		return ir.Version{Major: n / 100, Minor: n % 100 / 10}
	}
	major, err1 := strconv.Atoi(d.Macros["DLPACK_MAJOR_VERSION"])
	minor, err2 := strconv.Atoi(d.Macros["DLPACK_MINOR_VERSION"])
	require.NoError(t, err1)
	require.NoError(t, err2)
	return ir.Version{Major: major, Minor: minor}
}

// compareWithUpstream compares dlgen's header of the release upstream's
// header declares with it: the same declarations, and the same value of
// every probe on every target. vendorAdded names members a vendor added to
// its copy (by struct or enum), which must be there and are then ignored.
func compareWithUpstream(t *testing.T, source, upstreamDir string, vendorAdded map[string][]string) {
	s, err := schema.Default()
	require.NoError(t, err)
	upstreamDir = isolated(t, upstreamDir)
	theirs := Declare(t, upstreamDir)
	v := upstreamVersion(t, theirs)
	_, ok := s.Lookup(v)
	require.True(t, ok, "%s ships DLPack %s, which the schema does not describe", source, v)

	ourDir := generatedC(t, s, v)

	// The same declarations: macros with their definitions, every struct
	// and enum with its members in order, every function-pointer typedef.
	for key, added := range vendorAdded {
		for _, name := range added {
			i := slices.Index(theirs.Members[key], name)
			require.GreaterOrEqual(t, i, 0, "%s no longer adds %s to %s", source, name, key)
			theirs.Members[key] = slices.Delete(theirs.Members[key], i, i+1)
		}
	}
	ours := Declare(t, ourDir)
	assert.Equal(t, theirs.Macros, ours.Macros, "DLPACK_* macros differ from %s", source)
	assert.Equal(t, theirs.Members, ours.Members, "struct/enum members differ from %s", source)
	assert.Equal(t, theirs.FuncPtrs, ours.FuncPtrs, "function-pointer typedefs differ from %s", source)

	api := s.At(v)
	probes := Probes(api)
	clangEqual, clangTotal, clangTargets := 0, 0, 0
	for _, target := range allTargets() {
		want := Measure(t, target, api, upstreamDir)
		got := Measure(t, target, api, ourDir)
		equal := 0
		for i, p := range probes {
			if want[i] == got[i] {
				equal++
				continue
			}
			t.Errorf("v%s %s: %s: upstream %d, dlgen %d", v, target.Name, p.Name, want[i], got[i])
		}
		// The IR's own layout must agree with what the compiler measured
		// for upstream's header.
		index := map[string]int{}
		for i, p := range probes {
			index[p.Name] = i
		}
		for _, st := range api.Structs() {
			l := target.ABI.Layout(st)
			assert.EqualValues(t, l.Size, want[index["size of "+st.Name]], "IR size of %s on %s", st.Name, target.Name)
			for _, f := range l.Fields {
				assert.EqualValues(t, f.Offset, want[index["offset of "+st.Name+"."+f.Name]], "IR offset of %s.%s on %s", st.Name, f.Name, target.Name)
			}
		}
		if target.Clang != nil {
			clangEqual, clangTotal, clangTargets = clangEqual+equal, clangTotal+len(probes), clangTargets+1
			continue
		}
		fmt.Printf("ABI v%s vs %s on %s: %d/%d probes equal (%.0f%%)\n", v, source, target.Name, equal, len(probes), 100*float64(equal)/float64(len(probes)))
	}
	fmt.Printf("ABI v%s vs %s on %d clang targets: %d/%d probes equal (%.0f%%)\n", v, source, clangTargets, clangEqual, clangTotal, 100*float64(clangEqual)/float64(clangTotal))
}

// generatedC writes dlgen's header of release v and returns the directory
// to put on the include path.
func generatedC(t *testing.T, s *ir.Schema, v ir.Version) string {
	dir := t.TempDir()
	files, err := generate.Files(generate.Options{Schema: s, Version: v, Langs: []string{"c"}})
	require.NoError(t, err)
	_, err = generate.Write(dir, files)
	require.NoError(t, err)
	return filepath.Join(dir, "c")
}

// allTargets are the GCC targets and the measured clang targets.
func allTargets() []Target {
	out := append([]Target{}, Targets...)
	for _, c := range ClangTargets {
		if c.Measured {
			out = append(out, c.Target())
		}
	}
	return out
}

// TestProbesSeeDifferences guards the guard: a header with one wrong
// enumerator value and one widened field must fail the comparison exactly
// there.
func TestProbesSeeDifferences(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	api := s.At(s.Newest())
	files, err := generate.Files(generate.Options{Schema: s, Langs: []string{"c"}})
	require.NoError(t, err)
	good, bad := t.TempDir(), t.TempDir()
	_, err = generate.Write(good, files)
	require.NoError(t, err)
	text := string(files[0].Content)
	text = strings.Replace(text, "kDLCUDA = 2,", "kDLCUDA = 5,", 1)
	text = strings.Replace(text, "uint16_t lanes;", "uint32_t lanes;", 1)
	files[0].Content = []byte(text)
	_, err = generate.Write(bad, files)
	require.NoError(t, err)

	decl := Declare(t, filepath.Join(good, "c"))
	assert.Equal(t, []string{"data", "device", "ndim", "dtype", "shape", "strides", "byte_offset"}, decl.Members["struct DLTensor"])
	assert.Contains(t, decl.Members["enum DLDeviceType"], "kDLTrn")

	a := Measure(t, Targets[0], api, filepath.Join(good, "c"))
	b := Measure(t, Targets[0], api, filepath.Join(bad, "c"))
	var differ []string
	for i, p := range Probes(api) {
		if a[i] != b[i] {
			differ = append(differ, p.Name)
		}
	}
	assert.Contains(t, differ, "value of kDLCUDA")
	assert.Contains(t, differ, "size of DLDataType.lanes")
	assert.Contains(t, differ, "size of DLTensor")
	assert.Contains(t, differ, "offset of DLTensor.shape")
}
