package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	version "github.com/dlgen/dlgen" // package dlgen; the tests' helper is named dlgen
	"github.com/dlgen/dlgen/internal/backend"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it parses the flags, hands the request
// to generate.Run and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dlgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, to stdout when asked for
	usage := func(w io.Writer) {
		var backendFlags strings.Builder
		for _, r := range backend.Registered() {
			for _, o := range r.Options {
				fmt.Fprintf(&backendFlags, " [-%s %s]", o.Flag, o.Arg)
			}
		}
		fmt.Fprintf(w, "usage: dlgen [-lang %s] -out DIR [-schema FILE] [-dlpack-version X.Y]%s [-check]\n", strings.Join(generate.Languages(), ","), backendFlags.String())
		fmt.Fprintf(w, "       dlgen [-schema FILE] [-dlpack-version X.Y] -diff X.Y\n")
		fmt.Fprintf(w, "       dlgen [-schema FILE] [-schema-yaml] -identify FILE.h\n")
		fmt.Fprintf(w, "       dlgen -diff-rules\n")
		fmt.Fprintf(w, "       dlgen -version\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	var req generate.Request
	fs.StringVar(&req.Lang, "lang", "", "comma-separated languages to generate: "+strings.Join(generate.Languages(), ",")+" (default all but conformance, the conformance kit)")
	fs.StringVar(&req.Out, "out", "", "the directory to write into (required to generate or -check; -out . for the current one)")
	fs.StringVar(&req.SchemaFile, "schema", "", "schema file (default: the embedded "+schema.DefaultFile+")")
	fs.StringVar(&req.Version, "dlpack-version", "", "DLPack release to emit (default: the newest in the schema)")
	fs.BoolVar(&req.Check, "check", false, "write nothing; print a diff and exit 1 if -out is not exactly what dlgen would write")
	backendFlags := map[string]*string{}
	for _, r := range backend.Registered() {
		for _, o := range r.Options {
			backendFlags[o.Flag] = fs.String(o.Flag, "", o.Usage)
		}
	}
	fs.StringVar(&req.DiffFrom, "diff", "", "write nothing; report what changed from release `X.Y` to -dlpack-version, exit 1 if anything breaks")
	fs.StringVar(&req.Identify, "identify", "", "write nothing; name the release the DLPack header `FILE.h` is and list how it differs from it, exit 1 if it does")
	fs.BoolVar(&req.SchemaYAML, "schema-yaml", false, "with -identify: print, as schema YAML, what the header adds to the schema's newest release")
	fs.BoolVar(&req.DiffRules, "diff-rules", false, "write nothing; list the rules of -diff with their category and purpose")
	showVersion := fs.Bool("version", false, "print dlgen's version and exit")
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp): // -h, -help, --help: the manual, as go doc prints it
		fmt.Fprint(stdout, manual())
		return 0
	case err != nil: // the flag package has said what is wrong
		usage(stderr)
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, "dlgen", version.Tag)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dlgen: unexpected argument %q\n", fs.Arg(0))
		usage(stderr)
		return 2
	}
	req.BackendOptions = map[string]string{}
	for flag, value := range backendFlags {
		req.BackendOptions[flag] = *value
	}
	err := generate.Run(req, stdout)
	var (
		usageErr   *generate.UsageError
		drift      *generate.DriftError
		breaking   *generate.BreakingChangeError
		positioned schema.ErrorList
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &drift) && drift.Dir != "" && os.Getenv("PRE_COMMIT") != "":
		// pre-commit's hook has no dlgen on PATH: name the one it runs.
		fmt.Fprintf(stderr, "dlgen: %s is stale; to update it, run the hook's dlgen without -check:\n  %s\n", drift.Dir, updateCommand(args))
		return 1
	case errors.As(err, &drift), errors.As(err, &breaking):
		fmt.Fprintln(stderr, "dlgen:", err)
		return 1
	case errors.As(err, &positioned):
		fmt.Fprintln(stderr, err) // file:line:col: message, one per line
	case errors.As(err, &usageErr):
		fmt.Fprintln(stderr, "dlgen:", err)
		fmt.Fprintln(stderr, "run dlgen -h for usage")
	default:
		fmt.Fprintln(stderr, "dlgen:", err)
	}
	return 2
}

// updateCommand is the command line that updates what args checked: this
// executable with args less -check, quoted for a POSIX shell.
func updateCommand(args []string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "dlgen"
	}
	words := []string{shellQuote(exe)}
	for _, a := range args {
		if a != "-check" && a != "--check" && a != "-check=true" && a != "--check=true" {
			words = append(words, shellQuote(a))
		}
	}
	return strings.Join(words, " ")
}

// shellQuote leaves words of safe characters alone and single-quotes the
// rest.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
