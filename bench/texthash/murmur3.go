package main

import (
	"encoding/binary"
	"math/bits"
)

// murmur3x86_32 is Austin Appleby's MurmurHash3_x86_32 of key with the
// given seed (the reference is MurmurHash3.cpp in SMHasher). Blocks are read
// little-endian, as on x86. scikit-learn's murmurhash3_32 is the same
// function; it returns the result as a signed int32 unless positive=True.
func murmur3x86_32(key []byte, seed uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	h := seed
	n := len(key)
	for len(key) >= 4 {
		k := binary.LittleEndian.Uint32(key)
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
		key = key[4:]
	}
	var k uint32
	switch len(key) {
	case 3:
		k ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(key[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
