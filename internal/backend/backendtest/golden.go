// Package backendtest is the golden test every backend runs on its own
// output, as cbindgen and stringer test theirs: each archive in the
// backend's testdata/ holds an input, schema.yaml, small enough to read,
// the flags it is rendered with (flags, optional: -dlpack-version and the
// backend's own flags), and the files the backend writes from it, paths as
// under -out. Hand-written sources the backend copies unchanged (its
// Verbatim) appear as one line naming the source, and a file equal to one
// listed before it as one line naming that file: a template change
// rewrites the few expected files whose feature it is about, and editing a
// source none. That the embedded schema's releases generate, compile and
// keep their ABI is proven elsewhere (generated/ and its drift test,
// tests/e2e, tests/abi, tests/rust, tests/python); these pin text.
//
// `go test ./internal/backend/LANG -update` rewrites a backend's archives;
// read the diff.
package backendtest

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// Verbatim is a backend that copies hand-written sources into its output
// unchanged: Verbatim maps each source's path in the repository (with what
// selects its part, where a release keeps only part of it) to the text of
// it the output holds.
type Verbatim interface {
	// Verbatim maps each source's name to the text of it the output holds.
	Verbatim() map[string]string
}

// inputs are the files of a golden archive that are not output.
var inputs = []string{"schema.yaml", "flags"}

// Golden checks the output of the registered backend lang against every
// archive in testdata/, or rewrites the archives when update is set.
func Golden(t *testing.T, lang string, update bool) {
	t.Helper()
	r, ok := backend.Lookup(lang)
	require.True(t, ok, "no backend %q is registered", lang)
	archives, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	require.NoError(t, err)
	require.NotEmpty(t, archives, "no golden archive in testdata/")
	for _, path := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			archive, err := txtar.ParseFile(path)
			require.NoError(t, err)
			in, want := split(archive)
			s, err := schema.Load("schema.yaml", in["schema.yaml"])
			require.NoError(t, err, "%s: schema.yaml", path)
			v, config, err := options(s, r, string(in["flags"]))
			require.NoError(t, err, "%s: flags", path)
			b := r.New(config)
			files, err := b.Generate(s.At(v))
			require.NoError(t, err)
			got := Files(b, files)
			if update {
				archive.Files = append(archive.Files[:len(archive.Files)-len(want)], got...)
				require.NoError(t, os.WriteFile(path, txtar.Format(archive), 0o644))
				return
			}
			var wantNames, gotNames []string
			for _, f := range want {
				wantNames = append(wantNames, f.Name)
			}
			for _, f := range got {
				gotNames = append(gotNames, f.Name)
			}
			require.Equal(t, wantNames, gotNames, "the files of %s; run go test ./internal/backend/%s -update", path, lang)
			for i, f := range want {
				assert.Equal(t, string(f.Data), string(got[i].Data), "%s in %s is stale; run go test ./internal/backend/%s -update", f.Name, path, lang)
			}
		})
	}
}

// split returns an archive's inputs by name and its expected output, which
// follows them.
func split(a *txtar.Archive) (map[string][]byte, []txtar.File) {
	in := map[string][]byte{}
	for i, f := range a.Files {
		if !slices.Contains(inputs, f.Name) {
			return in, a.Files[i:]
		}
		in[f.Name] = f.Data
	}
	return in, nil
}

// options reads an archive's flags: the release and r's own flags.
func options(s *ir.Schema, r backend.Registration, flags string) (ir.Version, backend.Config, error) {
	config := backend.Config{Schema: "schema.yaml", Options: map[string]string{}}
	fs := flag.NewFlagSet("golden", flag.ContinueOnError)
	release := fs.String("dlpack-version", "", "")
	for _, o := range r.Options {
		fs.Func(o.Flag, "", func(v string) error { config.Options[o.Flag] = v; return nil })
	}
	if err := fs.Parse(strings.Fields(flags)); err != nil {
		return ir.Version{}, config, err
	}
	if *release == "" {
		return s.Newest(), config, nil
	}
	v, err := s.ParseRelease(*release)
	return v, config, err
}

// Files is files as a golden archive holds them, sorted by path: b's
// verbatim sources elided, and a file equal to an earlier one named
// instead of repeated.
func Files(b backend.Backend, files []backend.File) []txtar.File {
	files = slices.Clone(files)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var out []txtar.File
	seen := map[string]string{}
	for _, f := range files {
		data := Elide(b, f.Content)
		if first, ok := seen[string(f.Content)]; ok {
			data = []byte("[same as " + first + "]\n")
		} else {
			seen[string(f.Content)] = f.Path
		}
		out = append(out, txtar.File{Name: f.Path, Data: data})
	}
	return out
}

// Elide replaces, in a file b wrote, the text of every source b copies
// unchanged by a line naming it.
func Elide(b backend.Backend, content []byte) []byte {
	v, ok := b.(Verbatim)
	if !ok {
		return content
	}
	type source struct{ path, text string }
	var all []source
	for path, text := range v.Verbatim() {
		all = append(all, source{path, text})
	}
	// The longest first, so that no source is cut by one it contains.
	sort.Slice(all, func(i, j int) bool {
		if len(all[i].text) != len(all[j].text) {
			return len(all[i].text) > len(all[j].text)
		}
		return all[i].path < all[j].path
	})
	out := string(content)
	for _, s := range all {
		line := "[" + s.path + ", verbatim]"
		if strings.HasSuffix(s.text, "\n") {
			line += "\n"
		}
		out = strings.ReplaceAll(out, s.text, line)
	}
	return []byte(out)
}
