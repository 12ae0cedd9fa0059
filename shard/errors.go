package shard

import "errors"

// Sentinel errors name the kind of failure; errors returned by the package
// wrap them with the file or directory concerned. Test with errors.Is.
var (
	// ErrIncomplete: a directory with no manifest, a manifest that does
	// not parse, or a shard file that is missing or has another size than
	// the manifest records. The shard set is being written, its writing
	// failed, or it was changed afterwards.
	ErrIncomplete = errors.New("shard set is incomplete")
	// ErrManifestMismatch: a shard whose rows or nonzeros, as read, are
	// not the counts its manifest records (a shard changed after it was
	// written).
	ErrManifestMismatch = errors.New("shard does not match its manifest")
	// ErrNoMatch: a glob that matches no shard file.
	ErrNoMatch = errors.New("pattern matches no shard file")
	// ErrNotEmpty: Split's output directory holds files that are not part
	// of the shard set being written (use Config.Force to go ahead).
	ErrNotEmpty = errors.New("output directory holds files of another shard set or other files")
	// ErrFormat: a shard extension whose format Split cannot write (the
	// binary cache).
	ErrFormat = errors.New("unsupported shard format")
)
