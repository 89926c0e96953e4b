package schema

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withMain lists upstream's main branch after the releases of base.
const withMain = "  - version: \"1.0\"\n  - version: main\n    commit: 94485e2\n"

func TestMainBranchLoads(t *testing.T) {
	src := strings.Replace(base, "  - version: \"1.0\"\n", withMain, 1)
	src = strings.Replace(src, "{name: kDLCUDA, value: 2, since: \"1.0\"}",
		"{name: kDLCUDA, value: 2, since: \"1.0\"}\n      - {name: kDLTPU, value: 19, since: main}", 1)
	s, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
	main := ir.Version{Major: 1, Minor: 0, Main: true}
	assert.Equal(t, main, s.Latest())
	assert.Equal(t, ir.Version{Major: 1, Minor: 0}, s.Newest(), "main is never the default")
	assert.Equal(t, "94485e2", s.Releases[2].Commit)
	names := func(v ir.Version) []string {
		var out []string
		for _, e := range s.At(v).Enums()[0].Values {
			out = append(out, e.Name)
		}
		return out
	}
	assert.Equal(t, []string{"kDLCPU", "kDLCUDA"}, names(ir.Version{Major: 1}))
	assert.Equal(t, []string{"kDLCPU", "kDLCUDA", "kDLTPU"}, names(main))
}

func TestMainBranchRejects(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"first", "  - version: \"0.6\"\n", "  - version: main\n    commit: 94485e2\n  - version: \"0.6\"\n",
			"base.yaml:4:14: main cannot be the first of the versions: it carries the version numbers of the release before it"},
		{"not last", "  - version: \"1.0\"\n", "  - version: main\n    commit: 94485e2\n  - version: \"1.0\"\n",
			"base.yaml:7:14: main must be the last of the versions"},
		{"without a commit", "  - version: \"1.0\"\n", "  - version: \"1.0\"\n  - version: main\n",
			"base.yaml:6:5: the main release must name the upstream commit its facts were checked against (commit)"},
		{"a commit that is no commit", "  - version: \"1.0\"\n", "  - version: \"1.0\"\n  - version: main\n    commit: HEAD\n",
			`base.yaml:7:13: commit "HEAD" is not a git commit id`},
		{"since main without main", `{name: kDLCUDA, value: 2, since: "1.0"}`, `{name: kDLCUDA, value: 2, since: main}`,
			"base.yaml:17:42: since: main is not one of the schema's versions"},
		{"a leading zero", `{name: kDLCUDA, value: 2, since: "1.0"}`, `{name: kDLCUDA, value: 2, since: "1.00"}`,
			`since: version "1.00" is not of the form MAJOR.MINOR (decimal numbers without leading zeros)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, tc.old, tc.new, 1)
			require.NotEqual(t, base, src)
			_, err := Load("base.yaml", []byte(src))
			requirePositioned(t, err, "base.yaml", tc.want)
		})
	}
}

// A release that adds a note to a doc keeps the older doc for the releases
// before it.
func TestRewordedDocsResolvePerRelease(t *testing.T) {
	src := strings.Replace(base, `{name: kDLCUDA, value: 2, since: "1.0"}`,
		`{name: kDLCUDA, value: 2, since: "0.6", doc: "CUDA memory; now with a note.", reworded: {in: "1.0", from: "CUDA memory."}}`, 1)
	s, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "CUDA memory.", s.At(ir.Version{Major: 0, Minor: 6}).Enums()[0].Values[1].Doc)
	assert.Equal(t, "CUDA memory; now with a note.", s.At(ir.Version{Major: 1}).Enums()[0].Values[1].Doc)
	_, err = Load("base.yaml", []byte(strings.Replace(src, `from: "CUDA memory."`, `from: "a */ b"`, 1)))
	requirePositioned(t, err, "base.yaml", "reworded.from may not contain /*, */")
}

// A doc that changed in several releases lists its older texts newest
// first, on structs as on fields; a list in another order is refused.
func TestStructDocsRewordedInSeveralReleases(t *testing.T) {
	src := strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n",
		"  - struct: DLDevice\n    since: \"0.6\"\n    doc: Where memory is, now.\n    reworded:\n"+
			"      - {in: \"1.0\", from: \"Where memory is, before 1.0.\"}\n      - {in: \"0.6\", from: Before 0.6.}\n", 1)
	s, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "Where memory is, before 1.0.", s.At(ir.Version{Major: 0, Minor: 6}).Structs()[0].Doc)
	assert.Equal(t, "Where memory is, now.", s.At(ir.Version{Major: 1}).Structs()[0].Doc)
	swapped := strings.Replace(strings.Replace(src, `in: "1.0"`, `in: "X"`, 1), `in: "0.6"`, `in: "1.0"`, 1)
	_, err = Load("base.yaml", []byte(strings.Replace(swapped, `in: "X"`, `in: "0.6"`, 1)))
	requirePositioned(t, err, "base.yaml", "reworded lists releases newest first: 1.0 after 0.6")
}

// The default schema carries upstream main's additions in main only.
func TestDefaultSchemaMainBranch(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	main, err := s.ParseRelease("main")
	require.NoError(t, err)
	v13 := ir.Version{Major: 1, Minor: 3}
	assert.Equal(t, ir.Version{Major: 1, Minor: 3, Main: true}, main)
	assert.Equal(t, v13, s.Newest())
	rel, _ := s.Lookup(main)
	assert.Equal(t, "94485e2", rel.Commit)
	values := func(v ir.Version, enum string) map[string]int64 {
		out := map[string]int64{}
		for _, e := range s.At(v).Enums() {
			if e.Name == enum {
				for _, ev := range e.Values {
					out[ev.Name] = ev.Value
				}
			}
		}
		return out
	}
	devices, codes := values(main, "DLDeviceType"), values(main, "DLDataTypeCode")
	assert.Equal(t, int64(19), devices["kDLTPU"])
	assert.Equal(t, int64(20), devices["kDLTPUHost"])
	assert.Equal(t, int64(21), devices["kDLAscend"])
	assert.Equal(t, int64(18), codes["kDLBcomplex"])
	assert.Len(t, devices, len(values(v13, "DLDeviceType"))+3)
	assert.Len(t, codes, len(values(v13, "DLDataTypeCode"))+1)
	assert.Equal(t, int64(3), s.At(main).Versions.Minor.Value, "DLPACK_MINOR_VERSION stays 3")
	data := func(v ir.Version) string {
		for _, st := range s.At(v).Structs() {
			if st.Name == "DLTensor" {
				return st.Fields[0].Doc
			}
		}
		return ""
	}
	assert.Contains(t, data(main), "id<MTLBuffer> under Metal")
	assert.NotContains(t, data(v13), "MTLBuffer")
}
