//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels; see kernel_amd64.go for the contracts.
//
// The kernels compute the byte offset of feature row j as j·strideBytes
// and check it against lim = len(w)·4 - strideBytes before touching the
// row, so an index past the weights (possible only for an unsorted row,
// which breaks the Vector contract) makes them return false instead of
// reading or writing out of bounds.
//
// Register use (all kernels):
//	BX  idx base       CX  val (or codes) base    DX  strideBytes
//	R8  lim            R9  n = len(idx)           R11 i (nonzero counter)
//	AX  row offset of the current nonzero, in bytes
//	R15 dictionary, R14 code (coded rows only; ABI0 code may use both)

// lanes<> holds the int32 lane numbers 0..7 of a YMM register.
DATA lanes<>+0(SB)/4, $0
DATA lanes<>+4(SB)/4, $1
DATA lanes<>+8(SB)/4, $2
DATA lanes<>+12(SB)/4, $3
DATA lanes<>+16(SB)/4, $4
DATA lanes<>+20(SB)/4, $5
DATA lanes<>+24(SB)/4, $6
DATA lanes<>+28(SB)/4, $7
GLOBL lanes<>(SB), RODATA|NOPTR, $32

// Row encodings. Each TEXT below loads its arguments and includes the
// shared body; the macros give the body its per-nonzero loads:
//	4-byte indices, float32 values: MOVL idx, VBROADCASTSS / one
//	  VBROADCASTF128 plus a VSHUFPS per nonzero for four values;
//	2-byte indices, 1-byte codes into a [256]float32 dictionary (R15):
//	  MOVWLZX idx; MOVBLZX code, R14; VBROADCASTSS (R15)(R14*4). A code
//	  cannot leave the dictionary, so it needs no check.

#define IDX32(k, fail) \
	MOVL	(4*k)(BX)(R11*4), AX; \
	IMULQ	DX, AX; \
	CMPQ	AX, R8; \
	JA	fail

#define IDX16(k, fail) \
	MOVWLZX	(2*k)(BX)(R11*2), AX; \
	IMULQ	DX, AX; \
	CMPQ	AX, R8; \
	JA	fail

#define VALF32(k, bc) VBROADCASTSS	(4*k)(CX)(R11*4), bc

#define VALC8(k, bc) \
	MOVBLZX	k(CX)(R11*1), R14; \
	VBROADCASTSS	(R15)(R14*4), bc

// func scoresAVX2(dst, w []float32, idx []uint32, val []float32, k int, s, b float32) (best int, ok bool)
//
// The row is cut into column blocks of up to 4 chunks of 8 floats, and a
// last block of 5 when 5 remain; for each block one pass over the
// nonzeros accumulates in YMM registers, with independent accumulator sets
// for consecutive nonzeros so that the FMA latency (4–5 cycles) is hidden,
// and the sets are summed at the end. With k > 0 the bias epilogue and
// argmax follow (see epilogue below).
// Extra registers: DI dst, SI w, R10 column offset in bytes, R12 w + R10,
// R13 n rounded down to a multiple of 4.
#define SC_IDX(k) IDX32(k, fail)
#define SC_ROW(k, bc) IDX32(k, fail); VALF32(k, bc)
#define SC_LOAD4(tmp) VBROADCASTF128	(CX)(R11*4), tmp
#define SC_VAL(k, imm, tmp, bc) VSHUFPS	imm, tmp, tmp, bc
#define SC_BEST 112
#define SC_OK 120
TEXT ·scoresAVX2(SB), NOSPLIT, $0-121
	MOVQ	dst_base+0(FP), DI
	MOVQ	dst_len+8(FP), DX
	MOVQ	w_base+24(FP), SI
	MOVQ	w_len+32(FP), R8
	MOVQ	idx_base+48(FP), BX
	MOVQ	idx_len+56(FP), R9
	MOVQ	val_base+72(FP), CX
#include "kernel_scores_amd64.h"

#undef SC_IDX
#undef SC_ROW
#undef SC_LOAD4
#undef SC_VAL
#undef SC_BEST
#undef SC_OK

// func scoresC8W16AVX2(dst, w []float32, idx []uint16, codes []uint8, k int, s, b float32, dict *[256]float32) (best int, ok bool)
//
// scoresAVX2 over 2-byte indices and value codes: val[i] = dict[codes[i]].
// The unrolled loops load the codes of four nonzeros with one MOVL into
// R14 and take them from its low byte, shifting (the kernel is bound by
// loads); the byte goes through AX before the nonzero's index load.
// Extra registers: R15 dict, R14 codes.
#define SC_IDX(k) IDX16(k, fail)
#define SC_ROW(k, bc) IDX16(k, fail); VALC8(k, bc)
#define SC_LOAD4(tmp) MOVL	(CX)(R11*1), R14
#define SC_VAL(k, imm, tmp, bc) \
	MOVBLZX	R14B, AX; \
	SHRL	$8, R14; \
	VBROADCASTSS	(R15)(AX*4), bc
#define SC_BEST 120
#define SC_OK 128
TEXT ·scoresC8W16AVX2(SB), NOSPLIT, $0-129
	MOVQ	dst_base+0(FP), DI
	MOVQ	dst_len+8(FP), DX
	MOVQ	w_base+24(FP), SI
	MOVQ	w_len+32(FP), R8
	MOVQ	idx_base+48(FP), BX
	MOVQ	idx_len+56(FP), R9
	MOVQ	codes_base+72(FP), CX
	MOVQ	dict+112(FP), R15
#include "kernel_scores_amd64.h"

// AO_CHUNK performs w[off:off+8] += bc·c[off:off+8] for the current row,
// with the c chunk in register cr, using tmp.
#define AO_CHUNK(off, cr, bc, tmp) \
	VMOVUPS	off(SI)(AX*1), tmp; \
	VFMADD231PS	cr, bc, tmp; \
	VMOVUPS	tmp, off(SI)(AX*1)

// func addOuterAVX2(w, c []float32, idx []uint32, val []float32) (ok bool)
//
// Every nonzero's row is loaded, updated and stored before the next
// nonzero's row is loaded, so a repeated index (an invalid row) still
// gives the sequential result. For strides of one and two chunks c stays
// in registers; wider strides loop over the chunks, reading c from L1.
// Extra registers: SI w, R12 c, R13 w + row offset, R10 chunk offset.
#define AO_ROW(k, bc) IDX32(k, aofail); VALF32(k, bc)
#define AO_OK 96
TEXT ·addOuterAVX2(SB), NOSPLIT, $0-97
	MOVQ	w_base+0(FP), SI
	MOVQ	w_len+8(FP), R8
	MOVQ	c_base+24(FP), R12
	MOVQ	c_len+32(FP), DX
	MOVQ	idx_base+48(FP), BX
	MOVQ	idx_len+56(FP), R9
	MOVQ	val_base+72(FP), CX
#include "kernel_addouter_amd64.h"

#undef AO_ROW
#undef AO_OK

// func addOuterC8W16AVX2(w, c []float32, idx []uint16, codes []uint8, dict *[256]float32) (ok bool)
//
// addOuterAVX2 over 2-byte indices and value codes: val[i] = dict[codes[i]].
// Extra registers: R15 dict, R14 the code being looked up.
#define AO_ROW(k, bc) IDX16(k, aofail); VALC8(k, bc)
#define AO_OK 104
TEXT ·addOuterC8W16AVX2(SB), NOSPLIT, $0-105
	MOVQ	w_base+0(FP), SI
	MOVQ	w_len+8(FP), R8
	MOVQ	c_base+24(FP), R12
	MOVQ	c_len+32(FP), DX
	MOVQ	idx_base+48(FP), BX
	MOVQ	idx_len+56(FP), R9
	MOVQ	codes_base+72(FP), CX
	MOVQ	dict+96(FP), R15
#include "kernel_addouter_amd64.h"
