package libsvm

import (
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// noteFile writes text as zstd followed by a note (the layout of
// core.ZstdNote, built here by hand) saying whether it holds an index 0.
func noteFile(t *testing.T, text string, zero bool) string {
	t.Helper()
	b := zstdBytes([]byte(text))
	covered := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0x184D2A5E)
	b = binary.LittleEndian.AppendUint32(b, 20)
	b = append(b, "CPMZ"...)
	flags := byte(0)
	if zero {
		flags = 1
	}
	b = append(b, 1, flags, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(covered))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[covered+8:], crc32.MakeTable(crc32.Castagnoli)))
	return writeTempFile(t, "note.zst", b)
}

// A .zst written by core.CreateCompressed carries a note that spares
// ZeroBasedAuto its scan; a Stream of it gives the rows of Load, which
// decides in its own pass, whether the file is 1-based or 0-based.
func TestStreamZstdNote(t *testing.T) {
	for _, tc := range []struct {
		text string
		zero bool
	}{
		{"1 1:2 3:4\n-1 2:0.5\n1 10:1\n", false},
		{"1 1:2 3:4\n-1 0:0.5 7:1\n1 10:1\n", true},
	} {
		path := filepath.Join(t.TempDir(), "a.zst")
		o, err := core.CreateCompressed(path)
		mustNil(err)
		_, err = o.Write([]byte(tc.text))
		mustNil(err)
		mustNil(o.Close())
		if z, err := IsZeroBased(path); err != nil || z != tc.zero {
			t.Errorf("%q: IsZeroBased %v (%v), want %v", tc.text, z, err, tc.zero)
		}
		want, err := Load(path)
		mustNil(err)
		got, err := streamFile(path)
		if err != nil || !equalCSR(got, want) {
			t.Errorf("%q: Stream %v (%v), want the rows of Load %v", tc.text, got, err, want)
		}
	}
}

// A note that lies cannot make wrong rows. One saying "no index 0" on a
// 0-based file is believed (the scan would say 0-based): the file is read
// as 1-based and its index 0 is an error at its line and column. One
// saying "index 0" on a 1-based file is not used: the scan reads it as
// 1-based.
func TestStreamZstdNoteLies(t *testing.T) {
	path := noteFile(t, "1 1:2\n-1 0:0.5 7:1\n", false)
	if z, err := IsZeroBased(path); err != nil || z {
		t.Errorf("IsZeroBased of a file whose note says 1-based: %v (%v), want false (the note believed)", z, err)
	}
	_, err := streamFile(path)
	wantParseError(t, err, 2, 4, core.ErrIndexZero)

	text := "1 1:2\n-1 2:0.5 7:1\n"
	path = noteFile(t, text, true)
	if z, err := IsZeroBased(path); err != nil || z {
		t.Errorf("IsZeroBased of a 1-based file whose note says 0-based: %v (%v), want false", z, err)
	}
	want, err := scanAll([]byte(text), "x")
	mustNil(err)
	got, err := streamFile(path)
	if err != nil || !equalCSR(got, want) {
		t.Errorf("Stream %v (%v), want %v", got, err, want)
	}
}

// randomText makes LIBSVM text that may be 0-based or not: rows of
// ascending indices from 0 or 1, separators ' ' or '\t', comment lines
// and trailing comments that hold "0:" text, and "10:"-like near misses.
func randomText(rng interface{ IntN(int) int }) string {
	var b []byte
	for range 1 + rng.IntN(40) {
		if rng.IntN(8) == 0 {
			b = append(b, "# 0:1 header\n"...)
			continue
		}
		b = append(b, "-1"[rng.IntN(2):]...)
		j := 1 + rng.IntN(12)
		if rng.IntN(30) == 0 {
			j = 0
		}
		for range rng.IntN(6) {
			b = append(b, " \t"[rng.IntN(2)])
			b = strconv.AppendInt(b, int64(j), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(rng.IntN(11)), 10)
			j += 1 + rng.IntN(10)
		}
		if rng.IntN(6) == 0 {
			b = append(b, " # 0:2"...)
		}
		b = append(b, '\n')
	}
	return string(b)
}

// Differential: on random text, 0-based or not, a Stream of a .zst with
// the note (decided by the note, or by the scan when the note says index
// 0) gives the rows of Load (decided in its own pass) and of a Stream of
// the same zstd stream without the note (decided by the scan).
func TestStreamZstdNoteRandom(t *testing.T) {
	rng := testRand()
	dir := t.TempDir()
	zeros := 0
	for n := range 200 {
		text := randomText(rng)
		path := filepath.Join(dir, "a.zst")
		o, err := core.CreateCompressed(path)
		mustNil(err)
		_, err = o.Write([]byte(text))
		mustNil(err)
		mustNil(o.Close())
		want, werr := Load(path)
		got, gerr := streamFile(path)
		bare := writeTempFile(t, "bare.zst", zstdBytes([]byte(text)))
		scanned, serr := streamFile(bare)
		if (werr != nil) != (gerr != nil) || (werr == nil && !equalCSR(got, want)) {
			t.Fatalf("case %d %q: Stream with the note %v (%v), Load %v (%v)", n, text, got, gerr, want, werr)
		}
		if (serr != nil) != (gerr != nil) || (serr == nil && !equalCSR(got, scanned)) {
			t.Fatalf("case %d %q: Stream with the note %v (%v), without %v (%v)", n, text, got, gerr, scanned, serr)
		}
		if z, _ := IsZeroBased(path); z {
			zeros++
		}
	}
	t.Logf("%d of 200 0-based", zeros)
	if zeros == 0 || zeros == 200 {
		t.Errorf("%d of 200 texts 0-based: the cases do not cover both", zeros)
	}
}
