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

// NotFileError is something under -out, where dlgen reads or writes a
// file, that is not a regular file: a named pipe (reading it would block
// until some writer came), a device, a socket or a directory. dlgen finds
// it before it writes anything, and exits 2.
type NotFileError struct {
	Out  string      // -out as given
	Path string      // the path, as -out/path
	Mode fs.FileMode // what it is
}

// Error names the path and what it is.
func (e *NotFileError) Error() string {
	what := "not a regular file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case t&fs.ModeDir != 0:
		what = "a directory"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Sprintf("%s is %s, not a regular file; dlgen reads and writes only regular files under -out %s", e.Path, what, e.Out)
}

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
// that link, or a *NotFileError for the first that is there but not a
// regular file; nil if every one stays inside and is a file or missing.
func (o *outDir) confine(rels []string) error {
	if o.root == nil {
		return nil
	}
	for _, rel := range rels {
		info, err := o.root.Stat(rel)
		if err == nil && !info.Mode().IsRegular() {
			return &NotFileError{Out: o.name, Path: o.path(rel), Mode: info.Mode()}
		}
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

// open opens the regular file at rel for reading; anything else there is
// a *NotFileError. It opens without blocking, which a named pipe would.
func (o *outDir) open(rel string) (*os.File, error) {
	if o.root == nil {
		return nil, &fs.PathError{Op: "open", Path: o.path(rel), Err: fs.ErrNotExist}
	}
	f, err := o.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &NotFileError{Out: o.name, Path: o.path(rel), Mode: info.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeFile writes content to the file at rel, making its directories. It
// never writes into a file that is there: it writes a new one (replace),
// so a hard link there to a file outside -out leaves that file alone. The
// new file takes the mode of the regular file it replaces, else 0644 less
// the umask.
func (o *outDir) writeFile(rel string, content []byte) error {
	if err := o.mkdirAll(path.Dir(rel)); err != nil {
		return err
	}
	var keep fs.FileMode
	if info, err := o.root.Lstat(rel); err == nil && info.Mode().IsRegular() {
		keep = info.Mode().Perm()
	}
	return o.replace(rel, content, keep)
}

// create creates the file at rel, which must not exist, for writing: with
// mode keep, the mode of the file it is to replace, or, for none (0),
// 0644 less the umask.
func (o *outDir) create(rel string, keep fs.FileMode) (*os.File, error) {
	if keep == 0 {
		return o.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	f, err := o.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, keep)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(keep); err != nil { // the umask may have taken bits the replaced file had
		f.Close()
		o.root.Remove(rel)
		return nil, err
	}
	return f, nil
}

// writeNew writes content to f, which create made at rel, and closes it;
// on failure it removes the file.
func (o *outDir) writeNew(f *os.File, rel string, content []byte) error {
	_, err := f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		o.root.Remove(rel)
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
