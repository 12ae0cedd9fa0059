//go:build amd64 && !purego

package sparsevec

// widenAVX2 sets dst[i] = src[i] for i < len(src) with VPMOVZXWD, eight
// at a time. It requires len(dst) >= len(src).
//
//go:noescape
func widenAVX2(dst []uint32, src []uint16)

// widen sets dst[i] = src[i]; it panics if len(dst) < len(src).
func widen(dst []uint32, src []uint16) {
	if len(dst) < len(src) {
		panic("sparsevec: widen into a short buffer")
	}
	if useAVX2 {
		widenAVX2(dst, src)
		return
	}
	widenGo(dst, src)
}

// decode sets dst[i] = dict[codes[i]]; it panics if len(dst) < len(codes).
// (VGATHERDPS takes longer than the scalar loop on the CPUs measured.)
func decode(dst []float32, codes []uint8, dict *[256]float32) { decodeGo(dst, codes, dict) }
