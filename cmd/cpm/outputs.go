package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/reader/rowcache"
)

// outputPath is one output of a command, for checkOutputs.
type outputPath struct {
	flag   string // the flag that names it, for messages: "-o", "--json"
	path   string // "" when the output is not asked for
	stdout bool   // the command writes "-" to standard output
	// inputs are the command's input files that this output may not be;
	// an output that may legitimately replace an input (--checkpoint its
	// --resume file) leaves that input out.
	inputs []string
	opts   []atomicfile.Option // further rules, such as cacheRules
}

// checkOutputs checks every output of a command before the command reads
// or trains anything, by the rules of package internal/atomicfile: the
// directory that will hold the file exists and is writable, and the path
// is not a directory, block device or socket, not one of the output's
// inputs, and not a file its kind may not replace. It also refuses two
// outputs naming the same file. The error names the flag and the path: a
// path the command line should not have named wraps atomicfile.ErrRefused
// (exit status 2), an unwritable or missing directory is an I/O error
// (exit status 4). At most one output may be "-" (standard output), which
// then carries that output's data alone.
func checkOutputs(outs ...outputPath) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.path == "-" && o.stdout {
			if prev, dup := seen["-"]; dup {
				return usagef("%s - and %s: only one output can go to standard output", o.flag, prev)
			}
			seen["-"] = o.flag + " -"
			continue
		}
		if o.path == "" {
			continue
		}
		opts := append([]atomicfile.Option{atomicfile.NotSameAs(o.inputs...)}, o.opts...)
		if err := atomicfile.Check(o.path, opts...); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		key, ok := fileKey(o.path)
		if !ok {
			continue
		}
		if prev, dup := seen[key]; dup {
			return usagef("%s %s: the same file as %s", o.flag, o.path, prev)
		}
		seen[key] = o.flag + " " + o.path
	}
	return nil
}

// fileKey returns a name that is the same for two paths naming the same
// regular file, existing or to be created; ok is false for a device or
// FIFO, which several outputs may share.
func fileKey(path string) (key string, ok bool) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return "", false
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		// Not there yet: resolve its directory.
		dir, derr := filepath.EvalSymlinks(filepath.Dir(path))
		if derr != nil {
			dir = filepath.Dir(path)
		}
		p = filepath.Join(dir, filepath.Base(path))
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, true
}

// cacheRules are the rules of a --cache output: an existing file there
// must be a cpm cache (rowcache.Replaceable).
func cacheRules() []atomicfile.Option {
	return []atomicfile.Option{atomicfile.ReplaceOnly(rowcache.Replaceable)}
}

// checkInputs checks, before any work, that the named input files exist
// and, for regular files, can be opened for reading, and that a directory
// or glob names data files (input.Resolve) ("" and "-" are skipped; a FIFO is not opened, which would take its writer's data or
// block). The error names the flag and wraps the *fs.PathError (exit
// status 4). Standard input ("-") can be read once: two inputs naming it
// are a usage error.
func checkInputs(ins ...[2]string) error {
	stdin := ""
	for _, in := range ins {
		flag, path := in[0], in[1]
		if path == "-" && stdin != "" {
			return usagef("%s - and %s -: standard input can be read once", stdin, flag)
		}
		if path == "-" {
			stdin = flag
		}
		if path == "" || path == "-" {
			continue
		}
		if input.IsShardSet(path) {
			// A directory or glob: its files, as the command will read them.
			if _, err := input.Resolve(path); err != nil {
				return fmt.Errorf("%s: %w", flag, err)
			}
			continue
		}
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		f.Close()
	}
	return nil
}
