package assign

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// trained returns an Assigner after n random assignments over ids.
func trained(t *testing.T, k int, h float64, ids, n int) *Assigner {
	t.Helper()
	a, err := New(k, h)
	if err != nil {
		t.Fatal(err)
	}
	a.Reserve(ids)
	rng := rand.New(rand.NewPCG(3, 4))
	sc := make([]float32, k)
	for range n {
		for j := range sc {
			sc[j] = float32(rng.NormFloat64())
		}
		a.Assign(sc, rng.IntN(ids))
	}
	return a
}

// The encoding restores the state exactly: the restored Assigner encodes to
// the same bytes and makes the same assignments as the original.
func TestStateRoundTrip(t *testing.T) {
	a := trained(t, 5, 1.2, 300, 2000)
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c Assigner
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if b2, _ := c.AppendBinary([]byte("x")); !bytes.Equal(b2[1:], b) {
		t.Fatal("restored state encodes differently")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	sc := make([]float32, 5)
	for i := range 5000 {
		for j := range sc {
			sc[j] = float32(rng.NormFloat64())
		}
		id := rng.IntN(350) // some ids beyond the reserved dictionary
		if x, y := a.Assign(sc, id), c.Assign(sc, id); x != y {
			t.Fatalf("call %d: original assigns %d, restored %d", i, x, y)
		}
	}
	if a.Entropy() != c.Entropy() {
		t.Fatal("entropies diverge")
	}
	// Unmarshal copies: changing the restored state leaves b alone.
	b3, _ := a.MarshalBinary()
	if err := c.UnmarshalBinary(b3); err != nil {
		t.Fatal(err)
	}
	c.Assign(sc, 0)
	if b4, _ := a.MarshalBinary(); !bytes.Equal(b3, b4) {
		t.Fatal("restored Assigner shares memory with the encoding's source")
	}
}

// Every truncation and inconsistent encoding is refused without panicking,
// and the receiver is left unchanged.
func TestStateRefusesDamage(t *testing.T) {
	a := trained(t, 3, 0.5, 20, 200)
	good, _ := a.MarshalBinary()
	keep, _ := a.MarshalBinary()
	for n := range len(good) {
		if err := a.UnmarshalBinary(good[:n]); !errors.Is(err, ErrState) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	if now, _ := a.MarshalBinary(); !bytes.Equal(now, keep) {
		t.Fatal("a failed UnmarshalBinary changed the receiver")
	}
	mutate := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	for name, b := range map[string][]byte{
		"version":       mutate(0, 2),
		"K = 0":         append([]byte{1, 0, 0, 0, 0}, good[5:]...),
		"count":         mutate(stateFixed, good[stateFixed]+1),
		"n":             mutate(13, good[13]+1),
		"face beyond K": mutate(len(good)-2, 9),
		"trailing":      append(bytes.Clone(good), 0),
		"huge length":   mutate(36, 0xff),
	} {
		if err := new(Assigner).UnmarshalBinary(b); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", name, err)
		}
	}
}

// FuzzStateUnmarshal checks that UnmarshalBinary never panics and accepts
// only encodings that AppendBinary reproduces.
func FuzzStateUnmarshal(f *testing.F) {
	a, _ := New(2, 0.3)
	a.Reserve(4)
	a.Assign([]float32{1, 0}, 1)
	a.Assign([]float32{0, 1}, 3)
	b, _ := a.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var a Assigner
		if err := a.UnmarshalBinary(b); err != nil {
			return
		}
		if out, _ := a.MarshalBinary(); !bytes.Equal(out, b) {
			t.Fatalf("non-canonical encoding accepted")
		}
	})
}
