package input

import (
	"errors"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// packBlockRows and packChunkBytes are the block size and the text chunk
// size (reader.WithChunkBytes) of Source.Pack: small ones keep the rows
// in flight in the reader's pipeline (a few blocks and chunks at once) to
// a few megabytes beside the packed rows (MNIST-2: 37 MB resident after
// reading with 256 KiB chunks, 44 MB with the default 1 MiB).
const (
	packBlockRows  = 512
	packChunkBytes = 256 << 10
)

// Pack reads one pass of the source into a sparsevec.Packer, packing each
// block with the encodings of mode as it arrives, so that the rows never
// exist in memory as one CSR: for a learner that keeps its own packed copy
// (sgd.TrainPacked). The rows, and the error if any, are those of Load, in
// the same order. Text is cut into chunks of packChunkBytes unless opts
// say otherwise.
//
// Reading LIBSVM text in blocks with reader.ZeroBasedAuto (the default)
// scans each file for an index 0 before parsing it (about a sixth of the
// reading time). Pack first reads the source with OneBasedFirst's options
// when it gives some (1-based, without the scan): if that pass succeeds no
// index 0 occurred, the files are 1-based and the rows are those the scan
// would give; if it fails for any reason the source is read again with
// opts as given, whose rows or error are returned. Otherwise the source is
// read once, as opts say.
func (s *Source) Pack(mode sparsevec.Packing, opts ...reader.Option) (*sparsevec.Packer, error) {
	opts = append([]reader.Option{reader.WithChunkBytes(packChunkBytes)}, opts...)
	if first := s.OneBasedFirst(opts); first != nil {
		p, err := s.pack(mode, first)
		if err == nil {
			return p, nil
		}
		debug.FreeOSMemory() // the first pass's rows
	}
	return s.pack(mode, opts)
}

// OneBasedFirst returns opts with reader.ZeroBasedNo added when opts read
// LIBSVM text with reader.ZeroBasedAuto (the default) and every file of s
// is LIBSVM text in a regular file, which can be read again (not standard
// input, a pipe or a FIFO; Arrow and Parquet files follow their metadata
// under auto instead); else nil. A pass with the options it returns skips
// auto's scan for an index 0 (for a file without cpm's zstd note, a
// second read and decompression) and gives auto's rows when no file holds
// an index 0, and an error when one does: a caller that reads s once
// reads it again with opts when that pass fails, for any reason, and gets
// auto's rows or error either way (Pack, cpm's scoring); Run restarts a
// training run.
func (s *Source) OneBasedFirst(opts []reader.Option) []reader.Option {
	if reader.ZeroBasedOf(opts...) != reader.ZeroBasedAuto || s.Kind == Stdin || len(s.Files) == 0 {
		return nil
	}
	for _, f := range s.Files {
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
		if format, err := reader.DetectFormat(f); err != nil || format != reader.LIBSVM {
			return nil
		}
	}
	return append(slices.Clip(opts), reader.WithZeroBased(reader.ZeroBasedNo))
}

// pack is one pass of Pack with opts.
func (s *Source) pack(mode sparsevec.Packing, opts []reader.Option) (*sparsevec.Packer, error) {
	b, err := s.OpenBlocks(packBlockRows, 0, opts...)
	if err != nil {
		return nil, err
	}
	p := sparsevec.NewPacker(mode)
	for {
		blk, err := b.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Close()
			return nil, err
		}
		p.Append(blk)
		b.Release(blk)
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	debug.FreeOSMemory() // the reader's buffers: what stays is the packed rows
	return p, nil
}
