package generate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// LinkError is a symbolic link under -out that dlgen will not follow: it
// leads outside -out (or nowhere, round a loop). dlgen reads, writes and
// removes only inside -out, and finds such a link before it writes
// anything. dlgen exits 2.
type LinkError struct {
	Out  string // -out as given
	Link string // the link, as -out/path
	Err  error  // why it cannot be followed inside -out
}

// Error names the link and says where it leads.
func (e *LinkError) Error() string {
	if errors.Is(e.Err, syscall.ELOOP) {
		return fmt.Sprintf("%s is a loop of symbolic links; dlgen reads, writes and removes only inside -out %s", e.Link, e.Out)
	}
	return fmt.Sprintf("%s is a symbolic link that leads outside -out %s; dlgen reads, writes and removes only inside -out", e.Link, e.Out)
}

// Unwrap returns why the link cannot be followed.
func (e *LinkError) Unwrap() error { return e.Err }

// outDir is -out, resolved once and opened as an os.Root: every read,
// write, walk and removal of the output tree goes through it, so none can
// reach outside -out, whatever links the tree holds (a link that stays
// inside is followed, one that leads out is an error). Paths are relative
// to -out, slash-separated, as backend.File spells them. Nothing else in
// this package touches the output tree.
type outDir struct {
	name string   // -out as given, to name paths in reports
	root *os.Root // nil: -out does not exist (Check reads it as empty)
}

// openOut opens dir as the output tree; with create it makes dir first (dir
// itself is the user's to choose, links in it included).
func openOut(dir string, create bool) (*outDir, error) {
	if _, err := outExists(dir); err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("-out %s: %w", dir, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil && !create && errors.Is(err, fs.ErrNotExist) {
		return &outDir{name: dir}, nil
	}
	if err != nil {
		return nil, err
	}
	return &outDir{name: dir, root: root}, nil
}

// outExists says whether the directory dir, -out, exists; an error names
// -out when dir is something else (a file) or cannot be looked at.
func outExists(dir string) (bool, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("-out %s: %w", dir, err)
	case !info.IsDir():
		return true, fmt.Errorf("-out %s is a file, not a directory: name the directory to write into (dlgen makes it if missing)", dir)
	}
	return true, nil
}

// Close releases the root.
func (o *outDir) Close() error {
	if o.root == nil {
		return nil
	}
	return o.root.Close()
}

// path is rel as the user names it: under -out, in the host's separators.
func (o *outDir) path(rel string) string {
	return filepath.Join(o.name, filepath.FromSlash(rel))
}

// confine returns a *LinkError for the first of rels (files dlgen reads,
// writes or walks) that a link under -out would take outside it, naming
// that link; nil if every one stays inside.
func (o *outDir) confine(rels []string) error {
	if o.root == nil {
		return nil
	}
	for _, rel := range rels {
		_, err := o.root.Stat(rel)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// Find the link: the first component that is one and fails to resolve.
		parts := strings.Split(rel, "/")
		for i := range parts {
			prefix := path.Join(parts[:i+1]...)
			info, lerr := o.root.Lstat(prefix)
			if lerr != nil {
				break
			}
			if info.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			if _, serr := o.root.Stat(prefix); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
				var pe *fs.PathError
				if errors.As(serr, &pe) {
					serr = pe.Err
				}
				return &LinkError{Out: o.name, Link: o.path(prefix), Err: serr}
			}
		}
		return err
	}
	return nil
}

// readFile reads the file at rel.
func (o *outDir) readFile(rel string) ([]byte, error) {
	f, err := o.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// open opens the file at rel for reading.
func (o *outDir) open(rel string) (*os.File, error) {
	if o.root == nil {
		return nil, &fs.PathError{Op: "open", Path: o.path(rel), Err: fs.ErrNotExist}
	}
	return o.root.Open(rel)
}

// writeFile writes content to the file at rel, making its directories.
func (o *outDir) writeFile(rel string, content []byte) error {
	if err := o.mkdirAll(path.Dir(rel)); err != nil {
		return err
	}
	f, err := o.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirAll makes the directory rel and those above it (os.Root.MkdirAll
// is Go 1.25).
func (o *outDir) mkdirAll(rel string) error {
	if rel == "." {
		return nil
	}
	if info, err := o.root.Stat(rel); err == nil {
		if !info.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: o.path(rel), Err: syscall.ENOTDIR}
		}
		return nil
	}
	if err := o.mkdirAll(path.Dir(rel)); err != nil {
		return err
	}
	if err := o.root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// remove removes the file at rel.
func (o *outDir) remove(rel string) error { return o.root.Remove(rel) }

// walkDir walks the tree at rel as fs.WalkDir does, never into a link; a
// missing rel is an empty tree.
func (o *outDir) walkDir(rel string, fn fs.WalkDirFunc) error {
	if o.root == nil {
		return nil
	}
	return fs.WalkDir(o.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil && p == rel && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fn(p, d, err)
	})
}
