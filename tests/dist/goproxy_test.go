package dist

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoToolRecipeThroughAModuleProxy runs docs/go.md's recipe for dlgen
// as a tool of one's own module, its text as written, in a new module whose
// GOPROXY is a mirror as companies run them: it serves
// github.com/dlgen/dlgen at this release (this checkout, zipped as the
// proxy protocol ships a module) and the modules dlgen needs (from this
// machine's module cache), and refuses every other module path with 403
// Forbidden, or with 404 Not Found. `go get -tool PKG@VERSION`, the recipe
// it replaces, asks such a mirror for the package's path as a module
// (github.com/dlgen/dlgen/cmd/dlgen) and stops at the 403.
func TestGoToolRecipeThroughAModuleProxy(t *testing.T) {
	recipe := docsBlock(t, "docs/go.md", "TestGoToolRecipeThroughAModuleProxy")
	require.Len(t, recipe, 3)
	assert.Equal(t, recipe, docsBlock(t, "docs/ci.md", "TestGoToolRecipeThroughAModuleProxy"), "docs/ci.md gives the recipe of docs/go.md")
	for _, page := range []string{"cmd/dlgen/doc.go", "README.md"} {
		text, err := os.ReadFile(filepath.Join(tooltest.Root(), filepath.FromSlash(page)))
		require.NoError(t, err)
		assert.Contains(t, string(text), recipe[0], "%s gives the recipe of docs/go.md", page)
		assert.NotContains(t, string(text), "go get -tool github.com/dlgen/dlgen/cmd/dlgen@", "%s gives the recipe that stops at a 403", page)
	}
	env, refusals := mirrorEnv(t, http.StatusForbidden)
	scratch := func(path string) string {
		module := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(module, "go.mod"), []byte("module "+path+"\n\ngo 1.24.0\n"), 0o644))
		return module
	}

	module := scratch("example.com/myproj")
	var out string
	for _, cmd := range recipe {
		out = tooltest.Run(t, module, env, "sh", "-c", cmd)
	}
	assert.Equal(t, "dlgen "+dlgen.Tag+"\n", out, "the recipe's last command")
	assert.Empty(t, refusals.Paths(), "the recipe asked the mirror for what it does not hold")

	// The recipe it replaces stops at a 403; a 404 it gets past.
	getTool := []string{"get", "-tool", "github.com/dlgen/dlgen/cmd/dlgen@" + dlgen.Tag}
	out, err := tooltest.Try(scratch("example.com/old"), env, "go", getTool...)
	tooltest.Exited(t, err, "go get -tool through a mirror that answers 403")
	assert.Contains(t, out, "/github.com/dlgen/dlgen/cmd/dlgen/@v/"+dlgen.Tag+".info: 403 Forbidden")
	refusals.Answer(http.StatusNotFound)
	out, err = tooltest.Try(scratch("example.com/old"), env, "go", getTool...)
	assert.NoError(t, err, "go get -tool through a mirror that answers 404:\n%s", out)
}

// refusals is what a mirror refuses: the status it answers with (which a
// test may change between go commands) and the paths it refused. The
// mirror's handlers run on the server's goroutines, so both sit behind a
// lock.
type refusals struct {
	mu     sync.Mutex
	status int
	paths  []string
}

// Answer makes the mirror refuse with status from now on.
func (r *refusals) Answer(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

// Paths is the paths refused so far.
func (r *refusals) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

func (r *refusals) refuse(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	status := r.status
	r.mu.Unlock()
	http.Error(w, "not on this mirror", status)
}

// mirrorEnv starts a mirror (below) that refuses with status and returns
// the go command's environment that uses it and what it refuses.
func mirrorEnv(t *testing.T, status int) ([]string, *refusals) {
	refused := &refusals{status: status}
	proxy := httptest.NewServer(mirror(moduleZip(t), goEnv(t, "GOMODCACHE"), refused.refuse))
	t.Cleanup(proxy.Close)
	// A module cache of its own (a fake v0.1.0 of dlgen stays there), and no
	// checksum database: dlgen is not in it yet.
	return []string{"GOPROXY=" + proxy.URL, "GOMODCACHE=" + t.TempDir(), "GOFLAGS=-mod=mod -modcacherw",
		"GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local"}, refused
}

// mirror is the module proxy: github.com/dlgen/dlgen at this release from
// release, every module this machine's module cache (cache) holds, and
// refuse for any other path. A module whose go.mod the cache holds but not
// its code (a test-only dependency of a dependency, which go mod tidy
// resolves but nothing builds) gets a stand-in: its go.mod and an empty
// package at its root.
func mirror(release map[string][]byte, cache string, refuse http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		module, file, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/@v/")
		if !ok || strings.Contains(module, "..") || strings.Contains(file, "/") {
			refuse(w, r)
			return
		}
		if module == "github.com/dlgen/dlgen" {
			if data := release[file]; data != nil {
				_, _ = w.Write(data)
			} else {
				refuse(w, r)
			}
			return
		}
		dir := filepath.Join(cache, "cache", "download", filepath.FromSlash(module), "@v")
		version, isZip := strings.CutSuffix(file, ".zip")
		switch {
		case fileExists(filepath.Join(dir, file)):
			http.ServeFile(w, r, filepath.Join(dir, file))
		case isZip && fileExists(filepath.Join(dir, version+".mod")):
			mod, err := os.ReadFile(filepath.Join(dir, version+".mod"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_, _ = w.Write(zipOf(module+"@"+version+"/", map[string][]byte{"go.mod": mod, "standin.go": []byte("package standin\n")}))
		default:
			refuse(w, r)
		}
	}
}

// zipOf is a module zip: files, by path, under prefix (module@version/).
func zipOf(prefix string, files map[string][]byte) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, data := range files {
		if f, err := w.Create(prefix + name); err == nil {
			_, _ = f.Write(data)
		}
	}
	_ = w.Close()
	return buf.Bytes()
}

// docsBlock returns the commands of the code block that the snippet marker
// naming test precedes in page, comments and blank lines dropped.
func docsBlock(t *testing.T, page, test string) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(tooltest.Root(), filepath.FromSlash(page)))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)<!-- snippet: tested by [^>]*" + test + " -->\n```sh\n(.*?)\n```").FindStringSubmatch(string(text))
	require.NotNil(t, m, "%s has no sh block tested by %s", page, test)
	return commands(m[1])
}

// moduleZip is github.com/dlgen/dlgen at this release as a module proxy
// serves it, by file name under @v/: its list, .info, .mod and .zip. The
// zip holds the files of this checkout that git does not ignore, as the
// release's tag would (less the nested module out/).
func moduleZip(t *testing.T) map[string][]byte {
	root := tooltest.Root()
	files := map[string][]byte{}
	listed := tooltest.Run(t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, f := range strings.Split(strings.TrimRight(listed, "\x00"), "\x00") {
		if inNestedModule(root, f) {
			continue
		}
		info, err := os.Lstat(filepath.Join(root, f))
		if os.IsNotExist(err) || (err == nil && !info.Mode().IsRegular()) {
			continue // deleted in the work tree, or a link
		}
		require.NoError(t, err)
		files[f], err = os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	return map[string][]byte{
		"list":              []byte(dlgen.Tag + "\n"),
		dlgen.Tag + ".info": []byte(`{"Version":"` + dlgen.Tag + `","Time":"2026-01-01T00:00:00Z"}`),
		dlgen.Tag + ".mod":  mod,
		dlgen.Tag + ".zip":  zipOf("github.com/dlgen/dlgen@"+dlgen.Tag+"/", files),
	}
}

// inNestedModule reports whether the file f (slash-separated, under root)
// belongs to another module: a directory between it and root has a go.mod.
func inNestedModule(root, f string) bool {
	for dir := path.Dir(f); dir != "."; dir = path.Dir(dir) {
		if fileExists(filepath.Join(root, filepath.FromSlash(dir), "go.mod")) {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// goEnv is the value of the go command's variable name.
func goEnv(t *testing.T, name string) string {
	return strings.TrimSpace(tooltest.Run(t, tooltest.Root(), nil, "go", "env", name))
}
