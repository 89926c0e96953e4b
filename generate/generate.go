// Package generate runs backends over a schema and writes or checks their
// output. It is everything cmd/dlgen does, minus flag parsing.
package generate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/backend"
	"github.com/dlgen/dlgen/backend/c"
	"github.com/dlgen/dlgen/backend/golang"
	"github.com/dlgen/dlgen/backend/python"
	"github.com/dlgen/dlgen/ir"
	"github.com/pmezard/go-difflib/difflib"
)

// Backends returns every backend in the order -lang lists them by default.
// schemaName is how generated files refer to their schema.
func Backends(schemaName string) []backend.Backend {
	return []backend.Backend{
		c.Backend{Schema: schemaName},
		golang.Backend{Schema: schemaName},
		python.Backend{Schema: schemaName},
	}
}

// Languages returns the names of all backends.
func Languages() []string {
	var names []string
	for _, b := range Backends("") {
		names = append(names, b.Name())
	}
	return names
}

// Options says what to generate.
type Options struct {
	Schema     *ir.Schema
	SchemaName string     // how generated files name the schema
	Version    ir.Version // zero means the newest
	Langs      []string   // empty means all
}

// Files renders the selected backends for the selected release, sorted by
// path.
func Files(opts Options) ([]backend.File, error) {
	v := opts.Version
	if v == (ir.Version{}) {
		v = opts.Schema.Newest()
	}
	if _, ok := opts.Schema.Lookup(v); !ok {
		return nil, fmt.Errorf("unknown DLPack version %s (known: %s)", v, strings.Join(Versions(opts.Schema), ", "))
	}
	selected, err := selectBackends(opts.SchemaName, opts.Langs)
	if err != nil {
		return nil, err
	}
	api := opts.Schema.At(v)
	var files []backend.File
	for _, b := range selected {
		fs, err := b.Generate(api)
		if err != nil {
			return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
		}
		files = append(files, fs...)
		if hu, ok := b.(backend.HeaderUser); ok && hu.Header(api) != "" {
			header, err := cHeader(opts.SchemaName, api)
			if err != nil {
				return nil, err
			}
			files = append(files, backend.File{Path: hu.Header(api), Content: header})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// cHeader renders the C header of api, for backends that ship a copy.
func cHeader(schemaName string, api *ir.API) ([]byte, error) {
	fs, err := c.Backend{Schema: schemaName}.Generate(api)
	if err != nil {
		return nil, fmt.Errorf("c backend: %w", err)
	}
	for _, f := range fs {
		if f.Path == c.Path {
			return f.Content, nil
		}
	}
	return nil, fmt.Errorf("c backend wrote no %s", c.Path)
}

// Versions lists the releases of s, oldest first.
func Versions(s *ir.Schema) []string {
	var out []string
	for _, r := range s.Releases {
		out = append(out, r.Version.String())
	}
	return out
}

func selectBackends(schemaName string, langs []string) ([]backend.Backend, error) {
	all := Backends(schemaName)
	if len(langs) == 0 {
		return all, nil
	}
	var out []backend.Backend
	seen := map[string]bool{}
	for _, l := range langs {
		found := false
		for _, b := range all {
			if b.Name() == l {
				found = true
				if !seen[l] {
					out = append(out, b)
				}
				seen[l] = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown language %q (known: %s)", l, strings.Join(Languages(), ", "))
		}
	}
	return out, nil
}

// Write writes files under dir, touching only files whose content changed,
// and returns the paths it wrote.
func Write(dir string, files []backend.File) ([]string, error) {
	var written []string
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// Check compares files with what is under dir and returns a unified diff of
// every difference (a missing file diffs against nothing); "" means current.
func Check(dir string, files []backend.File) (string, error) {
	var out strings.Builder
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		if err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		from := filepath.ToSlash(path)
		if os.IsNotExist(err) {
			from = "/dev/null"
		}
		diff, derr := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(f.Content)),
			FromFile: from, ToFile: filepath.ToSlash(path) + " (generated)", Context: 3,
		})
		if derr != nil {
			return "", derr
		}
		out.WriteString(diff)
	}
	return out.String(), nil
}
