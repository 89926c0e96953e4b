//go:build !go1.25

package generate

import (
	"errors"
	"io/fs"
)

// replace puts a new file of content at rel, its mode as create says:
// without os.Root's Rename (Go 1.25, outdir_rename.go), it removes what
// is there and creates the file anew, which is not atomic: a reader
// between the two finds no file.
func (o *outDir) replace(rel string, content []byte, keep fs.FileMode) error {
	if err := o.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := o.create(rel, keep)
	if err != nil {
		return err
	}
	return o.writeNew(f, rel, content)
}
