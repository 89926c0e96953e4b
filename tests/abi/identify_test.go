package abi

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/cheader"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/dlgen/dlgen/tests/numpy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// patched are what frameworks changed in their copies of upstream's
// header, as dlgen -identify must report them (docs/upstream.md quotes
// PyTorch's).
var patched = map[string][]string{
	// PyTorch 2.6 added kDLMAIA before upstream released it, and made shape
	// and strides pointers to const.
	"PyTorch 2.6 (Debian trixie libtorch-dev)": {
		"enumerator DLDeviceType.kDLMAIA: = 17, not in v0.8 (dlgen has it from v1.0)",
		"field DLTensor.shape: type const int64_t*; v0.8 has int64_t*",
		"field DLTensor.strides: type const int64_t*; v0.8 has int64_t*",
	},
}

func readHeader(t *testing.T, path string) *cheader.Header {
	t.Helper()
	h, err := cheader.ReadFile(path)
	require.NoError(t, err)
	return h
}

// TestIdentifyNamesEveryRealHeader runs dlgen -identify's reading on every
// upstream header the ABI test compares with: each is the release it was
// chosen for, equal to dlgen's declarations of it but for what its vendor
// patched.
func TestIdentifyNamesEveryRealHeader(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	for _, u := range upstreams {
		t.Run("v"+u.release.String(), func(t *testing.T) {
			path := filepath.Join(u.dir(t), "dlpack", "dlpack.h")
			if _, err := os.Stat(path); err != nil {
				tooltest.Missing(t, "the header of "+u.source+" is not there; scripts/deps.sh fetches it")
			}
			r := cheader.Identify(s, readHeader(t, path))
			assert.Equal(t, u.release, r.Release, "%s", r)
			assert.Equal(t, patched[u.source], findings(r), "%s", r)
			fmt.Printf("dlgen -identify %s: DLPack %s, %d differences\n", u.source, r.Release, len(r.Findings))
		})
	}
}

func findings(r cheader.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.String())
	}
	return out
}

// TestIdentifyListsTheFrameworksPatches (whose NumPy finding
// docs/upstream.md quotes): NumPy's copy of v1.0 (from its
// sdist) adds the typedef of DLManagedTensorVersioned; PyTorch's current
// ATen/dlpack.h (the wheel in .venv) is v1.3 unchanged but for a guard
// around it.
func TestIdentifyListsTheFrameworksPatches(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	t.Run("NumPy", func(t *testing.T) {
		sdist := numpy.Sdist(t)
		path := filepath.Join(t.TempDir(), "dlpack.h")
		require.NoError(t, os.WriteFile(path, numpy.SdistFile(t, sdist, numpy.VendoredHeader), 0o644))
		r := cheader.Identify(s, readHeader(t, path))
		assert.Equal(t, ir.Version{Major: 1, Minor: 0}, r.Release)
		assert.Equal(t, []string{"typedef DLManagedTensorVersioned: declared; v1.0 declares only struct DLManagedTensorVersioned" +
			" (the typedef arrived in v1.2; dlgen's header backports it where a repeated typedef is legal, see DLGEN_BACKPORTS)"}, findings(r))
	})
	t.Run("PyTorch wheel", func(t *testing.T) {
		paths, _ := filepath.Glob(filepath.Join(tooltest.Root(), ".venv", "lib", "python3*", "site-packages", "torch", "include", "ATen", "dlpack.h"))
		if len(paths) != 1 {
			tooltest.Missing(t, "torch is not installed in .venv; scripts/deps.sh installs it")
		}
		r := cheader.Identify(s, readHeader(t, paths[0]))
		assert.Equal(t, ir.Version{Major: 1, Minor: 3}, r.Release)
		assert.Empty(t, r.Findings, "%s", r)
	})
}

// TestSchemaYAMLRebuildsReleases proves the way from a new upstream header
// to the schema: with a release's additions cut from the schema, what
// dlgen -identify -schema-yaml writes for that release's real header,
// merged in, gives back the schema of every release up to it, as every
// C declaration, value and layout tells. What a C header cannot say (docs,
// the Python protocol's names) is left aside. Releases whose changes are
// all additions: 1.1 (fp8/fp6/fp4, the padded flag), 1.2 (the exchange
// API, kDLTrn, the typedef of DLManagedTensorVersioned), 1.3.
func TestSchemaYAMLRebuildsReleases(t *testing.T) {
	full, err := schema.Default()
	require.NoError(t, err)
	for _, release := range []string{"1.1", "1.2", "1.3"} {
		t.Run("v"+release, func(t *testing.T) {
			v, err := ir.ParseVersion(release)
			require.NoError(t, err)
			var header string
			for _, u := range upstreams {
				if u.release == v {
					header = filepath.Join(u.dir(t), "dlpack", "dlpack.h")
				}
			}
			if _, err := os.Stat(header); err != nil {
				tooltest.Missing(t, "the v"+release+" header is not there; scripts/deps.sh fetches it")
			}
			var root yaml.Node
			require.NoError(t, yaml.Unmarshal(schema.DefaultBytes(), &root))
			cut(t, root.Content[0], v)
			before := encode(t, &root)
			cutSchema, err := schema.Load("cut.yaml", before)
			require.NoError(t, err, "the schema without %s must load", release)
			require.Equal(t, ir.Version{Major: v.Major, Minor: v.Minor - 1}, cutSchema.Latest())

			additions, err := cheader.Additions(cutSchema, readHeader(t, header))
			require.NoError(t, err)
			var fragment yaml.Node
			require.NoError(t, yaml.Unmarshal(additions, &fragment))
			require.NotEmpty(t, fragment.Content, "nothing added:\n%s", additions)
			merge(t, root.Content[0], fragment.Content[0])
			rebuilt, err := schema.Load("rebuilt.yaml", encode(t, &root))
			require.NoError(t, err, "the schema with\n%s", additions)

			var want, got []string
			for _, r := range full.Releases {
				if !v.Less(r.Version) {
					want = append(want, r.Version.String())
				}
			}
			for _, r := range rebuilt.Releases {
				got = append(got, r.Version.String())
			}
			require.Equal(t, want, got)
			for _, r := range rebuilt.Releases {
				assert.Equal(t, declarations(full.At(r.Version)), declarations(rebuilt.At(r.Version)), "v%s rebuilt from\n%s", r.Version, additions)
			}
			t.Logf("dlgen -identify -schema-yaml on the v%s header:\n%s", release, additions)
		})
	}
}

// declarations are the C facts of api, one line each: macros with their
// values, enumerators, flag bits, structs with their typedef, tag, fields
// and field types, function types, layouts on every data model.
func declarations(api *ir.API) []string {
	var out []string
	for _, m := range api.Macros {
		out = append(out, fmt.Sprintf("macro %s kind %d role %s = %d", m.Name, m.Kind, m.Role, m.Value))
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			out = append(out, fmt.Sprintf("enum %s %s unsigned %v", d.Name, d.Storage, d.UnsignedLiterals))
			for _, e := range d.Values {
				out = append(out, fmt.Sprintf("enumerator %s.%s = %d", d.Name, e.Name, e.Value))
			}
		case *ir.Flags:
			for _, b := range d.Bits {
				out = append(out, fmt.Sprintf("flag %s.%s = bit %d", d.Name, b.Name, b.Bit))
			}
		case *ir.Struct:
			out = append(out, fmt.Sprintf("struct %s tag %q typedef %v", d.Name, d.Tag, d.Typedef(api.Version())))
			for _, f := range d.Fields {
				out = append(out, fmt.Sprintf("field %s.%s %s", d.Name, f.Name, cheader.Spell(f.Type)))
			}
			for _, abi := range ir.ABIs {
				out = append(out, fmt.Sprintf("layout %s on %s %v", d.Name, abi.Name, abi.Layout(d)))
			}
		case *ir.FuncType:
			out = append(out, fmt.Sprintf("functype %s %s", d.Name, cheader.Spell(&ir.Type{Kind: ir.Func, Sig: d.Sig})))
		}
	}
	sort.Strings(out)
	return out
}

func encode(t *testing.T, root *yaml.Node) []byte {
	out, err := yaml.Marshal(root)
	require.NoError(t, err)
	return out
}

// cut removes from a schema (its top mapping) release v and everything
// after it: the releases, what they add, and what they change (values,
// renames, retypes, rewordings, typedefs, removals), as if v were never
// written.
func cut(t *testing.T, top *yaml.Node, v ir.Version) {
	late := func(n *yaml.Node) bool {
		if n == nil {
			return false
		}
		if n.Value == ir.MainName {
			return true
		}
		x, err := ir.ParseVersion(n.Value)
		require.NoError(t, err)
		return !x.Less(v)
	}
	var prune func(list *yaml.Node)
	entry := func(m *yaml.Node) bool { // false: drop the entry
		if late(get(m, "since")) || late(get(m, "version")) {
			return false
		}
		// A later typedef stays: it says the struct has none before.
		if late(get(m, "until")) {
			del(m, "until")
		}
		if b := get(m, "cxx_base"); b != nil && late(get(b, "since")) {
			del(m, "cxx_base")
		}
		for key, field := range map[string]string{"renamed": "name", "retyped": "type", "reworded": "doc", "nullable_changed": "nullable"} {
			if h := get(m, key); h != nil && h.Kind == yaml.SequenceNode {
				// A list, newest first: the doc before the oldest late
				// change is that change's from.
				kept := h.Content[:0]
				for _, c := range h.Content {
					if late(get(c, "in")) {
						set(m, field, get(c, "from"))
					} else {
						kept = append(kept, c)
					}
				}
				if h.Content = kept; len(kept) == 0 {
					del(m, key)
				}
			} else if h != nil && late(get(h, "in")) {
				set(m, field, get(h, "from"))
				del(m, key)
			}
		}
		for _, key := range []string{"values", "fields", "bits"} {
			if l := get(m, key); l != nil && l.Kind == yaml.SequenceNode {
				prune(l)
			}
		}
		return true
	}
	prune = func(list *yaml.Node) {
		kept := list.Content[:0]
		for _, item := range list.Content {
			if item.Kind != yaml.MappingNode || entry(item) {
				kept = append(kept, item)
			}
		}
		list.Content = kept
	}
	for _, key := range []string{"versions", "macros", "declarations", "python"} {
		prune(get(top, key))
	}
}

// merge adds a fragment as dlgen -identify -schema-yaml writes it to a
// schema, as its comment tells a maintainer to: an entry naming an element
// of the schema adds its lists and keys to it, any other is appended.
func merge(t *testing.T, top, fragment *yaml.Node) {
	for i := 0; i+1 < len(fragment.Content); i += 2 {
		list := get(top, fragment.Content[i].Value)
		require.NotNil(t, list, "the schema has no %s", fragment.Content[i].Value)
		for _, item := range fragment.Content[i+1].Content {
			var into *yaml.Node
			for _, old := range list.Content {
				if old.Content[0].Value == item.Content[0].Value && old.Content[1].Value == item.Content[1].Value {
					into = old
				}
			}
			if into == nil {
				list.Content = append(list.Content, item)
				continue
			}
			for j := 2; j+1 < len(item.Content); j += 2 {
				key, value := item.Content[j].Value, item.Content[j+1]
				if old := get(into, key); old != nil && old.Kind == yaml.SequenceNode && value.Kind == yaml.SequenceNode {
					old.Content = append(old.Content, value.Content...)
					continue
				}
				set(into, key, value)
			}
		}
	}
}

func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, value)
}

func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// TestCutAndMergeAreInverse guards the two helpers above on what is known:
// cutting v1.2 and merging back what was cut gives the schema again.
func TestCutAndMergeAreInverse(t *testing.T) {
	var a, b yaml.Node
	require.NoError(t, yaml.Unmarshal(schema.DefaultBytes(), &a))
	require.NoError(t, yaml.Unmarshal(schema.DefaultBytes(), &b))
	cut(t, a.Content[0], ir.Version{Major: 1, Minor: 2})
	s, err := schema.Load("cut.yaml", encode(t, &a))
	require.NoError(t, err)
	assert.Equal(t, ir.Version{Major: 1, Minor: 1}, s.Latest())
	assert.NotContains(t, strings.Join(declarations(s.At(s.Latest())), "\n"), "kDLTrn")
	frag := &yaml.Node{Kind: yaml.MappingNode}
	trn := &yaml.Node{Kind: yaml.MappingNode}
	require.NoError(t, yaml.Unmarshal([]byte("{declarations: [{enum: DLDeviceType, values: [{name: kDLTrn, value: 18, since: \"1.1\"}]}]}"), trn))
	frag = trn.Content[0]
	merge(t, a.Content[0], frag)
	s, err = schema.Load("merged.yaml", encode(t, &a))
	require.NoError(t, err)
	assert.Contains(t, declarations(s.At(s.Latest())), "enumerator DLDeviceType.kDLTrn = 18")
}
