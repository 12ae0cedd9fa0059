package input

import (
	"errors"
	"io"
	"runtime/debug"

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
// (sgd.TrainPacked). The rows are those of Load, in the same order. Text
// is cut into chunks of packChunkBytes unless opts say otherwise.
func (s *Source) Pack(mode sparsevec.Packing, opts ...reader.Option) (*sparsevec.Packer, error) {
	opts = append([]reader.Option{reader.WithChunkBytes(packChunkBytes)}, opts...)
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
