package python

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
)

// The fingerprint of the Python modules' sources: the release and a hash
// of every file dlgen writes under python/ for it. dlpack_cython.pyx and
// dlpack_ctypes.py carry it; the Cython module is built with it as a C
// string, so that a compiled module built from other sources than those
// beside it is found: at import (it refuses, naming the rebuild, in
// internal/backend/python/runtime/cython_fingerprint.pxi) and by dlgen -check
// (Backend.StaleBuilds), which reads the string from the compiled file.

// fingerprintPattern matches a fingerprint, in a source or a compiled
// module. internal/backend/python/runtime/cython_fingerprint.pxi spells it the same.
var fingerprintPattern = regexp.MustCompile(`dlgen fingerprint: DLPack [0-9a-z.]+, sources [0-9a-f]{16}`)

// fingerprint is the fingerprint of release's sources of the given hash.
func fingerprint(release, hash string) string {
	return "dlgen fingerprint: DLPack " + release + ", sources " + hash
}

// unhashed is what the files carry in place of the fingerprint while the
// hash is taken over them.
func unhashed(release string) string { return fingerprint(release, strings.Repeat("0", 16)) }

// stampFingerprint hashes files (rendered with unhashed(release)) and
// writes the fingerprint in place of unhashed(release).
func stampFingerprint(release string, files []backend.File) {
	sorted := append([]backend.File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		if f.Seed {
			continue // the user's, where there is one
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f.Path, len(f.Content))
		h.Write(f.Content)
	}
	placeholder := []byte(unhashed(release))
	stamp := []byte(fingerprint(release, hex.EncodeToString(h.Sum(nil))[:16]))
	for i := range files {
		files[i].Content = bytes.ReplaceAll(files[i].Content, placeholder, stamp)
	}
}

// compiledModule matches the file name of a built Cython module: a shared
// library named after dlpack_cython.pyx (dlpack_cython.so,
// dlpack_cython.cpython-312-x86_64-linux-gnu.so, dlpack_cython.cp312-win_amd64.pyd).
var compiledModule = regexp.MustCompile(`^dlpack_cython(\.[^/]*)?\.(so|pyd)$`)

// StaleBuilds lists, one line each, the compiled Cython modules beside
// the .pyx in out (the output directory, named name in the lines) whose
// fingerprint is not that of files, with the command that rebuilds them.
func (b Backend) StaleBuilds(out fs.FS, name string, files []backend.File) ([]string, error) {
	want := ""
	for _, f := range files {
		if f.Path == Dir+"/dlpack_cython.pyx" {
			want = string(fingerprintPattern.Find(f.Content))
		}
	}
	if want == "" {
		return nil, nil // no Cython module in this release
	}
	entries, err := fs.ReadDir(out, Dir)
	if err != nil {
		return nil, nil // nothing built: python/ is missing, which the diff says
	}
	var lines []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !compiledModule.MatchString(e.Name()) {
			continue
		}
		data, err := fs.ReadFile(out, path.Join(Dir, e.Name()))
		if err != nil {
			return nil, err
		}
		built := string(fingerprintPattern.Find(data))
		if built == want {
			continue
		}
		beside := strings.TrimPrefix(want, "dlgen fingerprint: ")
		what := "was built from " + strings.TrimPrefix(built, "dlgen fingerprint: ") + ", not from the sources beside it (" + beside + ")"
		if built == "" {
			what = "carries no dlgen fingerprint: it was built from sources older than those beside it (" + beside + ")"
		}
		lines = append(lines, fmt.Sprintf("%s %s; rebuild it: %s", filepath.Join(name, Dir, e.Name()), what, b.rebuild(name)))
	}
	return lines, nil
}

// rebuild is the command that builds the Cython module under the output
// directory out, as docs/python.md gives it.
func (b Backend) rebuild(out string) string {
	if b.Package == "" {
		return "cd " + filepath.Join(out, Dir) + " && cythonize -i dlpack_cython.pyx"
	}
	parts := strings.Split(b.Package, ".")
	top := filepath.Join(out, Dir)
	for range parts {
		top = filepath.Join(top, "..")
	}
	return "cd " + top + " && cythonize -i " + strings.Join(parts, "/") + "/dlpack_cython.pyx"
}
