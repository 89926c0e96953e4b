//go:build go1.25

package generate

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"path"
)

// replace puts a new file of content at rel, its mode as create says,
// atomically: it writes a temporary file in the same directory and
// renames it over rel (os.Root's Rename is Go 1.25; outdir_remove.go does
// without it). A reader sees the old file or the new one, never half of
// one.
func (o *outDir) replace(rel string, content []byte, keep fs.FileMode) error {
	for {
		tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".dlgen-"+rand.Text()[:8])
		f, err := o.create(tmp, keep)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := o.writeNew(f, tmp, content); err != nil {
			return err
		}
		if err := o.root.Rename(tmp, rel); err != nil {
			o.root.Remove(tmp)
			return err
		}
		return nil
	}
}
