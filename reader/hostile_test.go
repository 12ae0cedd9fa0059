package reader

import (
	"errors"
	"strings"
	"testing"
)

// zstdFrame returns a zstd frame whose header declares a window of
// 2^windowLog bytes, holding content in one raw block.
func zstdFrame(windowLog int, content []byte) []byte {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, byte(windowLog-10) << 3}
	h := 1 | len(content)<<3 // last block, raw
	return append(append(b, byte(h), byte(h>>8), byte(h>>16)), content...)
}

// A zstd frame may declare a window up to MaxZstdWindow, the zstd tool's
// own limit; a larger one is refused, saying why, before the decoder holds
// it.
func TestZstdWindowLimit(t *testing.T) {
	text := []byte("1 1:1\n-1 2:1\n")
	ok := writeTempFile(t, "ok.zst", zstdFrame(27, text))
	if m, err := Load(ok); err != nil || m.Rows() != 2 {
		t.Fatalf("2^27 window: %v, %v", m, err)
	}
	big := writeTempFile(t, "big.zst", zstdFrame(28, text))
	_, err := Load(big)
	var pe *ParseError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &pe) || pe.Path != big || !strings.Contains(err.Error(), "at most 128 MiB") {
		t.Fatalf("2^28 window: %v, want ErrCorrupt saying the limit", err)
	}
}
