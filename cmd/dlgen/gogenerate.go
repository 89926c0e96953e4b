package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// goGenerateLine finds the //go:generate line that writes out: one that
// runs dlgen (go tool dlgen, go run .../cmd/dlgen, dlgen) with an -out that
// is out, read from the directory of its file, in the Go module around the
// working directory. It returns the line's place as FILE:LINE, relative to
// the working directory, or "" for none: then go generate is no fix.
func goGenerateLine(out string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	target, err := filepath.Abs(out)
	if err != nil {
		return ""
	}
	module := wd
	for {
		if _, err := os.Stat(filepath.Join(module, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(module)
		if parent == module {
			return ""
		}
		module = parent
	}
	found := ""
	_ = filepath.WalkDir(module, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != module && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				fileExists(filepath.Join(path, "go.mod"))) { // as go generate ./... skips them
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		if line := generateLineIn(path, target); line > 0 {
			rel, err := filepath.Rel(wd, path)
			if err != nil {
				rel = path
			}
			found = rel + ":" + strconv.Itoa(line)
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// generateLineIn is the number of the first //go:generate line in the Go
// file at path that runs dlgen with an -out that is target, or 0.
func generateLineIn(path, target string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		command, ok := strings.CutPrefix(scanner.Text(), "//go:generate ")
		if !ok {
			continue
		}
		words := strings.Fields(command)
		runsDlgen := false
		for i, w := range words {
			if filepath.Base(w) == "dlgen" || strings.HasSuffix(w, "/cmd/dlgen") || strings.Contains(w, "/cmd/dlgen@") {
				runsDlgen = true
			}
			value, isOut := "", false
			switch {
			case (w == "-out" || w == "--out") && i+1 < len(words):
				value, isOut = words[i+1], true
			case strings.HasPrefix(w, "-out="), strings.HasPrefix(w, "--out="):
				_, value, _ = strings.Cut(w, "=")
				isOut = true
			}
			if !filepath.IsAbs(value) {
				value = filepath.Join(filepath.Dir(path), value)
			}
			if runsDlgen && isOut && filepath.Clean(value) == target {
				return n
			}
		}
	}
	return 0
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
