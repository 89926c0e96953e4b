package abi

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const useHeader = `#include <dlpack/dlpack.h>
DLManagedTensor *dlgen_use(DLManagedTensor *m) { m->dl_tensor.byte_offset = 0; return m; }
`

// TestGuardsPickTheModelOnEveryClangTarget preprocesses the header for each
// clang target and checks that exactly the expected data model's guards
// are left, or none where no model can be told apart.
func TestGuardsPickTheModelOnEveryClangTarget(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	dir := generatedC(t, s, s.Newest())
	src := filepath.Join(t.TempDir(), "use.c")
	require.NoError(t, os.WriteFile(src, []byte(useHeader), 0o644))
	for _, c := range ClangTargets {
		args := append(c.ClangArgs(t), "-std=c11", "-E", "-I", dir, src)
		out := tooltest.Run(t, "", nil, c.CC(), args...)
		var picked []string
		for _, abi := range ir.ABIs {
			if strings.Contains(out, " on "+abi.Name+`")`) {
				picked = append(picked, abi.Name)
			}
		}
		var want []string
		if c.ABI != nil {
			want = []string{c.ABI.Name}
		}
		assert.Equal(t, want, picked, "data models whose guards are on for %s", c.Name())
	}
}

// TestHeaderCompilesOnEveryClangTarget compiles every release's header with
// its guards on, as C11 and C++17, for every clang target (the measured
// ones for every release, the others for the newest).
func TestHeaderCompilesOnEveryClangTarget(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	tmp := t.TempDir()
	srcC, srcCXX := filepath.Join(tmp, "use.c"), filepath.Join(tmp, "use.cc")
	require.NoError(t, os.WriteFile(srcC, []byte(useHeader), 0o644))
	require.NoError(t, os.WriteFile(srcCXX, []byte(useHeader), 0o644))
	warnings := []string{"-Wall", "-Wextra", "-Werror", "-pedantic", "-Wundef"}
	for _, r := range s.Releases {
		v := r.Version
		dir := generatedC(t, s, v)
		t.Run("v"+v.String(), func(t *testing.T) {
			t.Parallel()
			for _, c := range ClangTargets {
				if !c.Measured && v != s.Newest() {
					continue
				}
				for _, lang := range [][]string{{"-std=c11", srcC}, {"-std=c++17", "-nostdinc++", srcCXX}} {
					args := append(append(append(warnings, c.ClangArgs(t)...), "-fsyntax-only", "-I", dir), lang...)
					if out, err := tooltest.Try("", nil, c.CC(), args...); err != nil {
						t.Errorf("v%s %s %s: %v\n%s", v, c.Name(), lang[0], err, out)
					}
				}
			}
		})
	}
}

var guardLine = regexp.MustCompile(`(?m)^(\s*_ = x\[unsafe\.(?:Sizeof|Offsetof)\([^\n]*\)-)(\d+)\]$`)

// TestGoLayoutMatchesClangOnEveryGOARCH builds the generated Go package for
// each GOOS/GOARCH that has a clang target, with compile-time checks whose
// numbers are clang's sizes and offsets of the generated C header for that
// target: the build succeeds only if Go lays every struct out as C does.
// The module has no go directive, so Go reads it as go1.16 code: the
// generated package vets and builds in any module, however old.
func TestGoLayoutMatchesClangOnEveryGOARCH(t *testing.T) {
	tooltest.Require(t, "go")
	s, err := schema.Default()
	require.NoError(t, err)
	v := s.Newest()
	api := s.At(v)
	cDir := generatedC(t, s, v)
	index := map[string]int{}
	for i, p := range Probes(api) {
		index[p.Name] = i
	}

	files, err := generate.Files(generate.Options{Schema: s, Version: v, Langs: []string{"go"}})
	require.NoError(t, err)
	out := t.TempDir()
	_, err = generate.Write(out, files)
	require.NoError(t, err)
	mod := filepath.Join(out, "go")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/vendored\n"), 0o644))
	// The 64-bit guard file lists every size and offset in IR order; its
	// numbers are replaced by each target's.
	template, err := os.ReadFile(filepath.Join(mod, "dlpack", "layout_64bit.go"))
	require.NoError(t, err)
	lines := guardLine.FindAllStringSubmatchIndex(string(template), -1)
	var wantLines int
	for _, st := range api.Structs() {
		wantLines += 1 + len(st.Fields)
	}
	require.Len(t, lines, wantLines, "guard lines in layout_64bit.go")

	seen := map[string]bool{}
	var platforms []string
	for _, c := range ClangTargets {
		if c.Go == "" || seen[c.Go] {
			continue
		}
		seen[c.Go] = true
		platforms = append(platforms, c.Go)
		vals := measureClang(t, c, Source(api, false, false), cDir)
		var numbers []uint64
		for _, st := range api.Structs() {
			numbers = append(numbers, vals[index["size of "+st.Name]])
			for _, f := range st.Fields {
				numbers = append(numbers, vals[index["offset of "+st.Name+"."+f.Name]])
			}
		}
		var b strings.Builder
		prev := 0
		text := string(template)
		for i, m := range lines {
			b.WriteString(text[prev:m[4]])
			fmt.Fprint(&b, numbers[i])
			prev = m[5]
		}
		b.WriteString(text[prev:])
		checks := "package dlpack\n\nimport \"unsafe\"\n\n// Measured by clang --target=" + c.Triple + ".\n" +
			b.String()[strings.Index(b.String(), "func _() {"):]
		check := filepath.Join(mod, "dlpack", "clang_layout.go")
		require.NoError(t, os.WriteFile(check, []byte(checks), 0o644))
		goos, goarch, _ := strings.Cut(c.Go, "/")
		env := []string{"GOOS=" + goos, "GOARCH=" + goarch, "CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
		if out, err := tooltest.Try(mod, env, "go", "build", "./..."); err != nil {
			t.Errorf("%s: the Go layout differs from clang --target=%s:\n%s", c.Go, c.Triple, out)
		} else if out, err := tooltest.Try(mod, env, "go", "vet", "./..."); err != nil {
			t.Errorf("%s: go vet in a module without a go directive:\n%s", c.Go, out)
		}
	}
	if !t.Failed() {
		fmt.Printf("Go layout equals clang's C layout on %s\n", strings.Join(platforms, ", "))
	}
}
