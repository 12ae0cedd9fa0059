//go:build amd64 && !purego

#include "textflag.h"

// func prefetchRange(p unsafe.Pointer, n uintptr)
// Prefetch hints never fault, so touching the line that holds the last
// byte (which may straddle past the slice) is harmless.
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*1), DX   // end
	ANDQ $-64, AX         // first line
loop:
	CMPQ AX, DX
	JAE  done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP  loop
done:
	RET

// func prefetchPair(p, q unsafe.Pointer, n uintptr)
// PREFETCHT0 for every 64-byte line of [p, p+n) and of [q, q+n), in one
// loop (the nonzeros of a CSR row: its indices and its values).
// Both loops run over the lines of [p, p+n) plus one, so that the lines of
// q are covered however the two are aligned (a prefetch past the end is
// harmless).
TEXT ·prefetchPair(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), AX
	MOVQ q+8(FP), BX
	MOVQ n+16(FP), CX
	LEAQ 64(AX)(CX*1), DX // end of p, plus a line
	ANDQ $-64, AX
	ANDQ $-64, BX
pairloop:
	CMPQ AX, DX
	JAE  pairdone
	PREFETCHT0 (AX)
	PREFETCHT0 (BX)
	ADDQ $64, AX
	ADDQ $64, BX
	JMP  pairloop
pairdone:
	RET

// func prefetchRows(w unsafe.Pointer, d, strideBytes int, idx []uint32)
// PREFETCHT0 for the first 64-byte line of row idx[i] of the d rows of
// strideBytes at w, for every idx[i] < d.
TEXT ·prefetchRows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ d+8(FP), R8
	MOVQ strideBytes+16(FP), DX
	MOVQ idx_base+24(FP), BX
	MOVQ idx_len+32(FP), CX
	XORQ R11, R11
rowloop:
	CMPQ R11, CX
	JAE  rowdone
	MOVL (BX)(R11*4), AX
	INCQ R11
	CMPQ AX, R8
	JAE  rowloop
	IMULQ DX, AX
	PREFETCHT0 (SI)(AX*1)
	JMP  rowloop
rowdone:
	RET
