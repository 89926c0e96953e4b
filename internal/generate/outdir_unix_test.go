//go:build unix

package generate

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNonRegularFilesAreRefused: a named pipe (or a directory) where dlgen
// writes or -check reads a file is an error naming it, found before
// anything is written; dlgen never blocks opening it. The deadline only
// turns a hang into a failure.
func TestNonRegularFilesAreRefused(t *testing.T) {
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"c"}})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		check bool
		make  func(string) error
		what  string
	}{
		{"fifo", false, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe"},
		{"fifo -check", true, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a named pipe"},
		{"directory", false, func(p string) error { return os.Mkdir(p, 0o755) }, "a directory"},
		{"directory -check", true, func(p string) error { return os.Mkdir(p, 0o755) }, "a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			header := filepath.Join(out, "c", "dlpack", "dlpack.h")
			require.NoError(t, os.MkdirAll(filepath.Dir(header), 0o755))
			require.NoError(t, c.make(header))
			before, err := os.ReadDir(filepath.Dir(header))
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				var err error
				if c.check {
					_, err = Check(out, files)
				} else {
					_, err = Write(out, files)
				}
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Equal(t, header+" is "+c.what+", not a regular file; dlgen reads and writes only regular files under -out "+out, err.Error())
			case <-time.After(time.Minute):
				t.Fatalf("dlgen blocks on %s", header)
			}
			after, err := os.ReadDir(filepath.Dir(header))
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing written")
		})
	}
}
