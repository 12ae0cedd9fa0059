//go:build !amd64 || purego

package sparsevec

// widen sets dst[i] = src[i]; it panics if len(dst) < len(src).
func widen(dst []uint32, src []uint16) { widenGo(dst, src) }

// decode sets dst[i] = dict[codes[i]]; it panics if len(dst) < len(codes).
func decode(dst []float32, codes []uint8, dict *[256]float32) { decodeGo(dst, codes, dict) }
