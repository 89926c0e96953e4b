package generate

import (
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
)

// BenchmarkGenerateAll measures one full dlgen run minus file I/O: load and
// validate the embedded schema, then render every backend for the newest
// release.
func BenchmarkGenerateAll(b *testing.B) {
	for b.Loop() {
		s, err := schema.Default()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Files(Options{Schema: s}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerateEveryRelease renders all backends for all releases.
func BenchmarkGenerateEveryRelease(b *testing.B) {
	s, err := schema.Default()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, r := range s.Releases {
			if _, err := Files(Options{Schema: s, Version: r.Version}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
