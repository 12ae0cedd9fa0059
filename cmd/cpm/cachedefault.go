package main

import (
	"fmt"
	"os"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/reader"
)

// cacheNone is the --cache value that asks for no cache.
const cacheNone = "none"

// cacheHelp is the help of --cache.
const cacheHelp = "binary row cache: a `file` (*.cpmcache), auto for TRAIN.cpmcache, temp for a temporary file removed at exit, or none. " +
	"A cache is written by the first pass over TRAIN and read by the later passes instead of parsing TRAIN again; a file or auto cache is also read by later runs while it matches TRAIN's size, mtime and first 64 KiB. " +
	"Default: none, except with --stream: TRAIN.cpmcache when TRAIN is a regular file whose directory takes it (kept only once training starts a second pass, so a run of one pass leaves none; " +
	"never over a file that is not a cpm cache), else a temporary cache (standard input: its spill file; a shard set trained for at most one pass, or a TRAIN that is a cache: none)"

// resolveCache sets the cache of the run from --cache: the file, auto or
// temp as given, none for no cache, and without the flag the default of
// defaultCache.
func (o *trainOptions) resolveCache() error {
	switch o.cache {
	case cacheNone:
		return nil
	case "":
		if o.stream {
			o.cachePath, o.cacheOptional, o.cacheWhy = o.defaultCache()
		}
		return nil
	}
	cache, err := input.CachePath(o.train, o.cache)
	if err != nil {
		return usagef("--cache %s: %w", o.cache, err)
	}
	o.cachePath = cache
	return nil
}

// defaultCache is the cache of a streamed run without --cache, so that
// passes after the first do not parse TRAIN again (none when TRAIN is a
// cache itself): TRAIN.cpmcache beside
// a regular file TRAIN, where checkOutputs allows it (a writable directory,
// no file there that is not a cpm cache), put in place only once a second
// pass starts; otherwise a temporary cache removed at exit, with why
// (for the note on stderr). Standard input keeps its spill file, and a
// shard set known to be read at most once (-i no more than its manifest's
// rows) gets no cache. The cache is optional (input.Config.Optional): an
// error writing it drops it instead of failing the run.
func (o *trainOptions) defaultCache() (cache string, optional bool, why string) {
	src, err := input.Resolve(o.train)
	if err != nil {
		return "", false, "" // opening -t reports it
	}
	switch src.Kind {
	case input.Stdin:
		return "", false, ""
	case input.ShardSet:
		if it := o.cpm.Iterations; it > 0 && it <= src.Manifest.Rows() {
			return "", false, ""
		}
		return input.TempCache, true, "a shard set has no file to put a cache beside"
	case input.ManyFiles:
		return input.TempCache, true, "a directory or glob has no manifest to check a kept cache against"
	}
	if fi, err := os.Stat(o.train); err != nil || !fi.Mode().IsRegular() {
		return input.TempCache, true, fmt.Sprintf("%s is not a regular file", o.train)
	}
	if f, err := reader.DetectFormat(o.train); err == nil && f == reader.Cache {
		return "", false, "" // TRAIN is a cache already
	}
	auto := o.train + ".cpmcache"
	out := outputPath{flag: "--cache", path: auto, inputs: []string{o.train, o.test, o.valid.file, o.ckpt.init, o.ckpt.resume}, opts: cacheRules()}
	if err := checkOutputs(out); err != nil {
		return input.TempCache, true, fmt.Sprintf("not beside the data: %v", err)
	}
	return auto, true, ""
}
