package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dlgen/dlgen/abidiff"
	"github.com/dlgen/dlgen/generate"
	"github.com/dlgen/dlgen/ir"
	"github.com/dlgen/dlgen/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dlgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: dlgen [-lang %s] [-out DIR] [-schema FILE] [-dlpack-version X.Y] [-check | -diff X.Y]\n", strings.Join(generate.Languages(), ","))
		fs.PrintDefaults()
	}
	lang := fs.String("lang", strings.Join(generate.Languages(), ","), "comma-separated languages to generate")
	out := fs.String("out", ".", "output directory")
	schemaFile := fs.String("schema", "", "schema file (default: the embedded "+schema.DefaultFile+")")
	version := fs.String("dlpack-version", "", "DLPack release to emit (default: the newest in the schema)")
	check := fs.Bool("check", false, "write nothing; print a diff and exit 1 if -out is not current")
	diffFrom := fs.String("diff", "", "write nothing; report what changed from release `X.Y` to -dlpack-version, exit 1 if anything breaks")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dlgen: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	fail := func(err error) int {
		var positioned schema.ErrorList
		if errors.As(err, &positioned) {
			fmt.Fprintln(stderr, err) // file:line:col: message, one per line
		} else {
			fmt.Fprintln(stderr, "dlgen:", err)
		}
		return 2
	}

	s, err := loadSchema(*schemaFile)
	if err != nil {
		return fail(err)
	}
	opts := generate.Options{Schema: s, SchemaName: schema.DefaultFile, Langs: splitList(*lang)}
	if *schemaFile != "" {
		opts.SchemaName = *schemaFile
	}
	if *version != "" {
		v, err := ir.ParseVersion(*version)
		if err != nil {
			return fail(fmt.Errorf("-dlpack-version: %v (known: %s)", err, strings.Join(generate.Versions(s), ", ")))
		}
		opts.Version = v
	}
	if *diffFrom != "" {
		return runDiff(s, *diffFrom, opts.Version, stdout, fail)
	}
	files, err := generate.Files(opts)
	if err != nil {
		return fail(err)
	}
	if *check {
		diff, err := generate.Check(*out, files)
		if err != nil {
			return fail(err)
		}
		if diff != "" {
			fmt.Fprint(stdout, diff)
			fmt.Fprintf(stderr, "dlgen: %s is stale; run dlgen without -check to update it\n", *out)
			return 1
		}
		return 0
	}
	if _, err := generate.Write(*out, files); err != nil {
		return fail(err)
	}
	return 0
}

// runDiff prints the findings of abidiff between two releases.
func runDiff(s *ir.Schema, from string, to ir.Version, stdout io.Writer, fail func(error) int) int {
	if to == (ir.Version{}) {
		to = s.Newest()
	}
	old, err := ir.ParseVersion(from)
	if err != nil {
		return fail(fmt.Errorf("-diff: %v", err))
	}
	for _, v := range []ir.Version{old, to} {
		if _, ok := s.Lookup(v); !ok {
			return fail(fmt.Errorf("unknown DLPack version %s (known: %s)", v, strings.Join(generate.Versions(s), ", ")))
		}
	}
	status := 0
	for _, f := range abidiff.Compare(s.At(old), s.At(to)) {
		fmt.Fprintln(stdout, f)
		if f.Breaking() {
			status = 1
		}
	}
	return status
}

func loadSchema(path string) (*ir.Schema, error) {
	if path == "" {
		return schema.Default()
	}
	return schema.LoadFile(path)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
