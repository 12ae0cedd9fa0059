package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

var kinds = []error{ErrNotModel, ErrVersion, ErrTruncated, ErrChecksum, ErrCorrupt}

// checkFormatError fails unless err is a *FormatError naming test.cpm that
// wraps want (or, if want is nil, any of the kinds).
func checkFormatError(t *testing.T, err, want error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	if fe.Name != "test.cpm" || !strings.HasPrefix(err.Error(), "test.cpm: ") {
		t.Fatalf("error %q does not name the file", err)
	}
	if want != nil {
		if !errors.Is(err, want) {
			t.Fatalf("error %q, want %v", err, want)
		}
		return
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return
		}
	}
	t.Fatalf("error %q wraps none of the kinds", err)
}

// fixCRC rewrites the trailing checksum of b so that only the check being
// tested can catch a modification.
func fixCRC(b []byte) []byte {
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], castagnoli))
	return b
}

func TestTruncatedEverywhere(t *testing.T) {
	for name, m := range testModels() {
		b := encodeT(t, m)
		for n := range len(b) {
			for how, read := range readers(b[:n]) {
				got, err := read()
				if got != nil || err == nil {
					t.Fatalf("%s: %s: Read of %d of %d bytes succeeded", name, how, n, len(b))
				}
				checkFormatError(t, err, ErrTruncated)
			}
		}
	}
}

func TestFlippedByteEverywhere(t *testing.T) {
	for name, m := range testModels() {
		b := encodeT(t, m)
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0xff
			for how, read := range readers(c) {
				if _, err := read(); err == nil {
					t.Fatalf("%s: %s: Read with byte %d flipped succeeded", name, how, i)
				} else {
					checkFormatError(t, err, nil)
				}
			}
		}
	}
}

// TestFlippedWeight checks that damage to the weights, which no header check
// can see, is reported as a checksum mismatch, even when it makes a NaN.
func TestFlippedWeight(t *testing.T) {
	m := testModels()["binary"]
	b := encodeT(t, m)
	// Start of the weights: fixed header, learner, classes, params, stored
	// rows, count.
	rows := len(m.storedRows())
	start := 80 + 4 + len(m.Learner) + 4 + 4*len(m.Classes) + 4 + 8 + 4*rows + 4
	for k, v := range m.Params {
		start += 8 + len(k) + len(v)
	}
	for i := start; i < start+4*rows*m.K; i++ {
		c := bytes.Clone(b)
		c[i] ^= 0xff
		_, err := Read(bytes.NewReader(c), "test.cpm")
		checkFormatError(t, err, ErrChecksum)
	}
}

func TestRefusals(t *testing.T) {
	valid := func() []byte { return encodeT(t, testModels()["binary"]) }
	twoParams := func() []byte {
		m := testModels()["binary"]
		m.Params = map[string]string{"a": "1", "b": "2"}
		return encodeT(t, m)
	}
	tests := []struct {
		name  string
		input func() []byte
		want  error
		msg   string // substring of the message
	}{
		{"empty", func() []byte { return nil }, ErrTruncated, "empty input"},
		{"magic prefix", func() []byte { return []byte("CPM") }, ErrTruncated, "truncated"},
		{"short garbage", func() []byte { return []byte("XY") }, ErrNotModel, "not a cpm model file"},
		{"libsvm text", func() []byte { return []byte("+1 1:0.5 3:1\n-1 2:1\n") }, ErrNotModel, "not a cpm model file"},
		{"wrong magic", func() []byte { b := valid(); b[7] = 'X'; return b }, ErrNotModel, `"CPMMODEX"`},
		{"future version", func() []byte { b := valid(); b[8] = 3; return b }, ErrVersion, "file has format version 3, this build reads versions 1 and 2"},
		{"version 0", func() []byte { b := valid(); b[8] = 0; return b }, ErrVersion, "version 0"},
		{"unknown flag", func() []byte { b := valid(); b[12] |= 0x80; return fixCRC(b) }, ErrCorrupt, "unknown flag bits 0x80"},
		{"sides 0", func() []byte { b := valid(); b[16] = 0; return fixCRC(b) }, ErrCorrupt, "sides = 0"},
		{"K 0", func() []byte { b := valid(); b[20] = 0; return fixCRC(b) }, ErrCorrupt, "K = 0"},
		{"D over cap", func() []byte { b := valid(); b[28] = 2; return fixCRC(b) }, ErrCorrupt, "D = 8589934596"},
		{"checksum", func() []byte { b := valid(); b[len(b)-1] ^= 1; return b }, ErrChecksum, "stored CRC-32C"},
		{"trailing byte", func() []byte { return append(valid(), 0) }, ErrCorrupt, "trailing bytes"},
		{"unsorted params", func() []byte {
			b := twoParams()
			i := bytes.Index(b, []byte("\x01\x00\x00\x00a"))
			j := bytes.Index(b, []byte("\x01\x00\x00\x00b"))
			b[i+4], b[j+4] = 'b', 'a'
			return fixCRC(b)
		}, ErrCorrupt, `param key "a" after "b"`},
		{"duplicate params", func() []byte {
			b := twoParams()
			b[bytes.Index(b, []byte("\x01\x00\x00\x00b"))+4] = 'a'
			return fixCRC(b)
		}, ErrCorrupt, "strictly ascending"},
		{"matrix count", func() []byte {
			m := testModels()["binary"]
			b := encodeT(t, m)
			at := 80 + 4 + 3 + 4 + 8 + 4 + 8 + len("epochs") + len("3") + 8 + 4*len(m.storedRows())
			b[at] = 2
			return fixCRC(b)
		}, ErrCorrupt, "2 weight matrices, header calls for 1"},
		{"NaN weight", func() []byte {
			m := testModels()["binary"]
			m.Weights[0].Set(0, 0, 1.5)
			b := encodeT(t, m)
			i := bytes.Index(b, binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5)))
			binary.LittleEndian.PutUint32(b[i:], 0x7fc00000)
			return fixCRC(b)
		}, ErrCorrupt, "feature 0 face 0 is NaN"},
		{"equal classes", func() []byte {
			b := valid()
			binary.LittleEndian.PutUint32(b[80+4+3+4:], math.Float32bits(1)) // outer := inner
			return fixCRC(b)
		}, ErrCorrupt, "outer label == inner label"},
		{"learner name", func() []byte { b := valid(); b[84] = ' '; return fixCRC(b) }, ErrCorrupt, "learner name"},
		{"zero row stored", func() []byte { return storeZeroRow(t, testModels()["compact"], 2) }, ErrCorrupt, "feature row 17 is stored with all its weights +0"},
		{"rows unsorted", func() []byte {
			b := encodeT(t, testModels()["compact"])
			i := bytes.Index(b, u32s(nil, 5, 17))
			copy(b[i:], u32s(nil, 17, 5))
			return fixCRC(b)
		}, ErrCorrupt, "not strictly ascending"},
		{"rows without 0", func() []byte {
			b := encodeT(t, testModels()["compact"])
			i := bytes.Index(b, u32s(nil, 0, 5, 17))
			copy(b[i:], u32s(nil, 1))
			return fixCRC(b)
		}, ErrCorrupt, "start at 1"},
		{"row beyond D", func() []byte {
			b := encodeT(t, testModels()["compact"])
			i := bytes.Index(b, u32s(nil, 17, 999))
			copy(b[i+4:], u32s(nil, 1000))
			return fixCRC(b)
		}, ErrCorrupt, "not below D = 1000"},
		{"hash bits", func() []byte {
			b := encodeT(t, testModels()["compact"])
			i := bytes.Index(b, u32s(nil, 9, 0xdeadbeef))
			copy(b[i:], u32s(nil, 32))
			return fixCRC(b)
		}, ErrCorrupt, "32 bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for how, read := range readers(tt.input()) {
				m, err := read()
				if m != nil {
					t.Fatalf("%s: Read succeeded", how)
				}
				checkFormatError(t, err, tt.want)
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("%s: error %q does not contain %q", how, err, tt.msg)
				}
			}
		})
	}
}

// craft returns the first bytes of a version 1 file with the given header
// fields and learner "cpm"; callers append the rest.
func craft(flags, sides, k uint32, d uint64) []byte { return craftV(1, flags, sides, k, d) }

// craftV is craft of a file of the given format version.
func craftV(version, flags, sides, k uint32, d uint64) []byte {
	le := binary.LittleEndian
	b := append([]byte(magic), make([]byte, 72)...)
	le.PutUint32(b[8:], version)
	le.PutUint32(b[12:], flags)
	le.PutUint32(b[16:], sides)
	le.PutUint32(b[20:], k)
	le.PutUint64(b[24:], d)
	return append(le.AppendUint32(b, 3), "cpm"...)
}

func u32s(b []byte, vs ...uint32) []byte {
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func str(b []byte, s string) []byte { return append(u32s(b, uint32(len(s))), s...) }

func u64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// pad returns b extended with zero bytes to n bytes.
func pad(b []byte, n int) []byte { return append(b, make([]byte, max(n-len(b), 0))...) }

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLyingSizes checks that small inputs declaring huge sections are
// refused without allocating for the declared sizes, both when Read knows
// the input length and when it reads a stream.
func TestLyingSizes(t *testing.T) {
	one := math.Float32bits(1)
	minus := math.Float32bits(-1)
	// bin is a binary 1×1 model up to its single weight, with params and
	// blobs to follow.
	bin := u32s(craft(0, 1, 1, 1), 2, minus, one)
	withWeight := u32s(bytes.Clone(bin), 0, 1, 0)
	tests := []struct {
		name   string
		input  []byte
		want   error
		stream error // if the streamed read fails differently
	}{
		{"D 2^30", pad(u32s(craft(0, 1, 1, 1<<30), 2, minus, one, 0, 1), 128), ErrTruncated, nil},
		{"D 2^32 K 2^16", pad(u32s(craft(0, 2, 1<<16, 1<<32), 2, minus, one, 0, 2), 128), ErrCorrupt, nil},
		{"K 2^16 with counts", pad(u32s(craft(flagCounts, 1, 1<<16, 1<<10), 2, minus, one, 0, 1), 128), ErrTruncated, nil},
		{"classes 2^16", pad(u32s(craft(flagOvO, 2, 1, 1), 1<<16), 128), ErrTruncated, nil},
		{"classes over cap", pad(u32s(craft(flagOvO, 2, 1, 1), 1<<16+1), 128), ErrCorrupt, nil},
		{"learner length", pad(u32s(craft(0, 1, 1, 1)[:80], 1<<31), 128), ErrCorrupt, nil},
		// Streamed, the zero padding reads as empty keys, out of order.
		{"params 4096", pad(u32s(bytes.Clone(bin), 4096), 128), ErrTruncated, ErrCorrupt},
		{"params over cap", pad(u32s(bytes.Clone(bin), 4097), 128), ErrCorrupt, nil},
		{"param value", pad(u32s(str(u32s(bytes.Clone(bin), 1), "a"), 1<<16+1), 128), ErrCorrupt, nil},
		{"blobs 4096", pad(u32s(bytes.Clone(withWeight), 4096), 128), ErrTruncated, nil},
		{"blob 2^36", pad(u64(str(u32s(bytes.Clone(withWeight), 1), "a"), 1<<36), 256), ErrTruncated, nil},
		{"blob over cap", pad(u64(str(u32s(bytes.Clone(withWeight), 1), "a"), 1<<36+1), 256), ErrCorrupt, nil},
		// Version 2: the stored rows.
		{"v2 rows 2^32", pad(u64(u32s(craftV(2, 0, 1, 1, 1<<32), 2, minus, one, 0), 1<<32), 128), ErrTruncated, nil},
		{"v2 rows over D", pad(u64(u32s(craftV(2, 0, 1, 1, 1<<20), 2, minus, one, 0), 1<<20+1), 128), ErrCorrupt, nil},
		{"v2 no rows", pad(u64(u32s(craftV(2, 0, 1, 1, 1<<20), 2, minus, one, 0), 0), 128), ErrCorrupt, nil},
		{"v2 weights of 2^20 rows", pad(u32s(u64(u32s(craftV(2, 0, 1, 8, 1<<20), 2, minus, one, 0), 1), 0, 1), 128), ErrTruncated, nil},
		{"v2 calibration 2^16", pad(u32s(str(u32s(v2Bin(flagCalib), 0), "platt"), 1<<16), 128), ErrTruncated, nil},
		{"v2 calibration over cap", pad(u32s(str(u32s(v2Bin(flagCalib), 0), "platt"), 1<<16+1), 128), ErrCorrupt, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for how, read := range readers(tt.input) {
				var err error
				n := allocated(func() { _, err = read() })
				want := tt.want
				if how == "stream" && tt.stream != nil {
					want = tt.stream
				}
				checkFormatError(t, err, want)
				if n >= 1<<20 { // the budget is 10 MB; it takes about 40 KB
					t.Errorf("%s: Read of %d bytes allocated %d bytes", how, len(tt.input), n)
				}
				t.Logf("%s: %d bytes allocated: %v", how, n, err)
			}
		})
	}
}

// v2Bin is a version-2 binary 1×1 model with the given flags up to its
// blob count: one stored row, the weight 1.
func v2Bin(flags uint32) []byte {
	return u32s(u64(u32s(craftV(2, flags, 1, 1, 1), 2, math.Float32bits(-1), math.Float32bits(1), 0), 1), 0, 1, math.Float32bits(1))
}

// TestStreamMemory checks that a streamed model with a lying D holds memory
// proportional to the bytes present: 1 MiB of weights of a header claiming
// 2^32 rows must not cost more than a small multiple of 1 MiB.
func TestStreamMemory(t *testing.T) {
	one := math.Float32bits(1)
	b := pad(u32s(craft(0, 1, 8, 1<<32), 2, math.Float32bits(-1), one, 0, 1), 1<<20)
	var err error
	n := allocated(func() { _, err = Read(streamOnly{bytes.NewReader(b)}, "test.cpm") })
	checkFormatError(t, err, ErrTruncated)
	if n > 8<<20 {
		t.Errorf("streamed 1 MiB, allocated %d bytes", n)
	}
}

func TestReadIOError(t *testing.T) {
	b := encodeT(t, testModels()["double"])
	boom := errors.New("boom")
	_, err := Read(io.MultiReader(bytes.NewReader(b[:100]), iotest.ErrReader(boom)), "test.cpm")
	var fe *FormatError
	if !errors.Is(err, boom) || errors.As(err, &fe) || !strings.Contains(err.Error(), "test.cpm") {
		t.Fatalf("Read = %v, want the I/O error naming the file, not a FormatError", err)
	}
	m, err := Read(iotest.OneByteReader(bytes.NewReader(b)), "test.cpm")
	if err != nil {
		t.Fatalf("one byte at a time: %v", err)
	}
	if d := diff(testModels()["double"], m); d != "" {
		t.Fatal(d)
	}
}

// TestReadAllocs pins the allocations of reading a small model: the decoder
// and its buffer, the Model, one per string and array, and three per matrix
// (struct, Data, the section name kept for error messages); none per
// weight. The "double" model has two matrices, counts and the stored rows
// of version 2: 19.
func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	b := encodeT(t, testModels()["double"])
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := Read(bytes.NewReader(b), "test.cpm"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 19 {
		t.Errorf("Read made %v allocations, want <= 19", allocs)
	}
}
