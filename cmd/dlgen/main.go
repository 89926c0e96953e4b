package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dlgen/dlgen/generate"
	"github.com/dlgen/dlgen/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it parses the flags, hands the request
// to generate.Run and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dlgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: dlgen [-lang %s] [-out DIR] [-schema FILE] [-dlpack-version X.Y] [-check]\n", strings.Join(generate.Languages(), ","))
		fmt.Fprintf(stderr, "       dlgen [-schema FILE] [-dlpack-version X.Y] -diff X.Y\n")
		fmt.Fprintf(stderr, "       dlgen [-schema FILE] [-schema-yaml] -identify FILE.h\n")
		fs.PrintDefaults()
	}
	var req generate.Request
	fs.StringVar(&req.Lang, "lang", "", "comma-separated languages to generate: "+strings.Join(generate.Languages(), ",")+" (default all)")
	fs.StringVar(&req.Out, "out", "", "output directory (default \".\")")
	fs.StringVar(&req.SchemaFile, "schema", "", "schema file (default: the embedded "+schema.DefaultFile+")")
	fs.StringVar(&req.Version, "dlpack-version", "", "DLPack release to emit (default: the newest in the schema)")
	fs.BoolVar(&req.Check, "check", false, "write nothing; print a diff and exit 1 if -out is not exactly what dlgen would write")
	fs.StringVar(&req.DiffFrom, "diff", "", "write nothing; report what changed from release `X.Y` to -dlpack-version, exit 1 if anything breaks")
	fs.StringVar(&req.Identify, "identify", "", "write nothing; name the release the DLPack header `FILE.h` is and list how it differs from it, exit 1 if it does")
	fs.BoolVar(&req.SchemaYAML, "schema-yaml", false, "with -identify: print, as schema YAML, what the header adds to the schema's newest release")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dlgen: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	err := generate.Run(req, stdout)
	var (
		usage      *generate.UsageError
		drift      *generate.DriftError
		positioned schema.ErrorList
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &drift):
		fmt.Fprintln(stderr, "dlgen:", err)
		return 1
	case errors.As(err, &positioned):
		fmt.Fprintln(stderr, err) // file:line:col: message, one per line
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "dlgen:", err)
		fmt.Fprintln(stderr, "run dlgen -h for usage")
	default:
		fmt.Fprintln(stderr, "dlgen:", err)
	}
	return 2
}
