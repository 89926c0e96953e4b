package schema_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dlgen/dlgen/internal/abidiff"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestSweepOneChangeAtATime breaks the default schema one value at a time
// (a typo, an empty value, a negative, a huge number, the wrong kind of
// node, a deleted key or list entry, prose that would end a comment) and
// requires each variant either to be rejected with positioned errors or to
// go through every backend for every release and every -diff between
// releases. A backend may refuse what it cannot express (an error, logged
// here; dlgen exits 2), but nothing may panic. The variants are split
// among one shard per CPU, each breaking its own copy of the schema. Under
// the race detector, which checks that the shards share nothing but costs
// time, every 16th variant is tried.
func TestSweepOneChangeAtATime(t *testing.T) {
	stride := 1
	if raceDetector {
		stride = 16
	}
	// One shard per CPU, each with its own copy of the schema to break:
	// shard k tries the variants whose number is k modulo the shard count.
	shards := runtime.GOMAXPROCS(0)
	var variants, loaded atomic.Int64
	t.Run("shards", func(t *testing.T) {
		for k := range shards {
			t.Run(fmt.Sprint(k), func(t *testing.T) {
				t.Parallel()
				var root yaml.Node
				require.NoError(t, yaml.Unmarshal(schema.DefaultBytes(), &root))
				n := 0
				sweep(&root, "", func(what string) {
					n++
					if n%stride != 0 || (n/stride)%shards != k {
						return
					}
					ok, refusals, err := render(schema.DefaultFile, func() (*ir.Schema, error) { return schema.LoadNode(schema.DefaultFile, &root) })
					if err != nil {
						t.Errorf("%s: %v", what, err)
					}
					for _, r := range refusals {
						t.Logf("%s: loads, but %v", what, r)
					}
					if ok {
						loaded.Add(1)
					}
				})
				if k == 0 {
					variants.Store(int64(n))
				}
			})
		}
	})
	t.Logf("%d variants, %d of those tried load", variants.Load(), loaded.Load())
	require.Greater(t, variants.Load(), int64(5000), "the sweep must reach the whole schema")
}

// render loads a schema and, if it loads, runs every backend for every
// release and compares every release with every other, as dlgen -diff
// does. It reports whether the schema loaded, the errors of backends that
// refused it, and an error for anything dlgen must never do: panic, or
// report a schema error without a position (line 0 included), or refuse
// it in a backend without one.
func render(file string, load func() (*ir.Schema, error)) (loaded bool, refusals []error, err error) {
	defer func() {
		if p := recover(); p != nil {
			loaded, err = false, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	s, err := load()
	if err != nil {
		list, ok := err.(schema.ErrorList)
		if !ok || len(list) == 0 {
			return false, nil, fmt.Errorf("not a list of positioned errors: %v", err)
		}
		if err := positioned(file, list); err != nil {
			return false, nil, err
		}
		return false, nil, nil
	}
	apis := make([]*ir.API, len(s.Releases))
	for i, r := range s.Releases {
		for _, lang := range generate.Languages() {
			if _, err := generate.Files(generate.Options{Schema: s, Version: r.Version, Langs: []string{lang}}); err != nil {
				// A refusal of an element is at its position; a release's
				// (the conformance kit's of 0.6) is a plain error.
				if list, ok := err.(schema.ErrorList); ok {
					if err := positioned(file, list); err != nil {
						return true, nil, fmt.Errorf("release %s: %w", r.Version, err)
					}
				}
				refusals = append(refusals, fmt.Errorf("release %s: %w", r.Version, err))
			}
		}
		apis[i] = s.At(r.Version)
	}
	for _, from := range apis {
		for _, to := range apis {
			abidiff.Compare(from, to)
		}
	}
	return true, refusals, nil
}

// positioned is an error for the first of list without a position in file.
func positioned(file string, list schema.ErrorList) error {
	if len(list) == 0 {
		return fmt.Errorf("an empty list of errors")
	}
	for _, e := range list {
		if e.Pos.File != file || e.Pos.Line < 1 || e.Pos.Col < 1 {
			return fmt.Errorf("error without position: %v", e)
		}
	}
	return nil
}

// sweep applies each single change to the tree under n in turn, calls try
// with a description of it, and undoes it. key is the mapping key n is the
// value of.
func sweep(n *yaml.Node, key string, try func(what string)) {
	sweepAt(n, key, "", try)
}

func sweepAt(n *yaml.Node, key, path string, try func(what string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			sweepAt(c, key, path, try)
		}
		return
	case yaml.ScalarNode:
		values := []string{n.Value + "x", "", "-1", "0", "99999999999999999999", "4294967296", "1.0"}
		switch key {
		case "struct", "enum", "flags", "functype":
			// Type names the output uses itself (issue 38): Python's, C's,
			// Rust's, and one the Go package writes.
			values = append(values, "ctypes", "int64_t", "c_int", "DLNullable")
		}
		if key == "doc" || key == "notes" {
			values = []string{"", "x", "ends */ a C comment", `ends """ a docstring`, `ends with a quote"`, `a \ backslash`, "a \x00 control", "opens /* a C comment", "reads \u202e backwards"}
		}
		old := *n
		for _, v := range values {
			n.Value, n.Tag, n.Style = v, "!!str", yaml.DoubleQuotedStyle
			try(fmt.Sprintf("%s = %q", path, v))
			*n = old
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := path + "." + k.Value
			old := k.Value
			k.Value += "x"
			try(p + " renamed to " + k.Value)
			k.Value = old
			without(n, i, 2, p+" deleted", try)
			sweepAt(v, k.Value, p, try)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			without(n, i, 1, p+" deleted", try)
			sweepAt(c, "", p, try)
		}
	}
	wrongKinds(n, path, try)
}

// without tries n with count nodes from i on removed.
func without(n *yaml.Node, i, count int, what string, try func(string)) {
	old := n.Content
	n.Content = append(append([]*yaml.Node(nil), old[:i]...), old[i+count:]...)
	try(what)
	n.Content = old
}

// wrongKinds tries n replaced by an empty mapping, an empty list, a null
// and a string.
func wrongKinds(n *yaml.Node, path string, try func(string)) {
	old := *n
	for _, repl := range []yaml.Node{
		{Kind: yaml.MappingNode, Tag: "!!map"},
		{Kind: yaml.SequenceNode, Tag: "!!seq"},
		{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "x"},
	} {
		if repl.Kind == old.Kind && repl.Tag == old.Tag {
			continue
		}
		repl.Line, repl.Column = old.Line, old.Column
		*n = repl
		try(fmt.Sprintf("%s replaced by %s", path, repl.Tag))
	}
	*n = old
}

// FuzzGenerate runs every backend for every release, and every -diff, on
// whatever loads. testdata/fuzz/FuzzGenerate keeps the crashers found so
// far as regression seeds.
func FuzzGenerate(f *testing.F) {
	f.Add([]byte(schema.BaseSchema))
	f.Add([]byte(schema.VersionedSchema))
	// The attacks of issue 38: prose the output would not build with, a
	// name the Go package writes itself.
	f.Add([]byte(strings.Replace(schema.BaseSchema, "  - struct: DLDevice\n", "  - struct: DLDevice\n    doc: \"opens /* a C comment, reads \u202e backwards\"\n", 1)))
	f.Add([]byte(strings.Replace(schema.BaseSchema, "  - struct: DLDevice\n", "  - struct: DLNullable\n    since: \"0.6\"\n    fields: [{name: a, type: int32_t, since: \"0.6\"}]\n  - struct: DLDevice\n", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := render("fuzz.yaml", func() (*ir.Schema, error) { return schema.Load("fuzz.yaml", data) }); err != nil {
			t.Fatal(err)
		}
	})
}
