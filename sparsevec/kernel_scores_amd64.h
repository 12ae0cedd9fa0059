// The body of the score kernels (see kernel_amd64.s), included once per
// row encoding in its own TEXT after the arguments are loaded. The
// including file defines the per-nonzero loads and the argument and
// result operands of the epilogue:
//
//	SC_IDX(k)                AX = row offset of nonzero i+k, bounds-checked
//	                         (jumps to fail when out of range)
//	SC_ROW(k, bc)            SC_IDX(k) and the value of nonzero i+k
//	                         broadcast in bc
//	SC_LOAD4(tmp)            prepares the values of nonzeros i..i+3 in tmp
//	SC_VAL(k, imm, tmp, bc)  broadcasts the value of nonzero i+k in bc
//	                         (imm: the VSHUFPS selector of lane k)
//	SC_BEST, SC_OK           the offsets of the results best and ok
//
// The arguments w, k, s and b are at the offsets of scoresAVX2's
// signature in every variant.
//
// Only the loads differ between encodings: the FMAs, their order and the
// epilogue are this one text, so every encoding gives the same bits.

	SHLQ	$2, DX
	SHLQ	$2, R8
	SUBQ	DX, R8
	JCC	wok
	// w holds no whole row: only an empty x can be scored.
	TESTQ	R9, R9
	JNZ	failnovec

wok:
	MOVQ	R9, R13
	ANDQ	$-4, R13
	XORQ	R10, R10

colloop:
	CMPQ	R10, DX
	JAE	done
	LEAQ	(SI)(R10*1), R12
	MOVQ	DX, AX
	SUBQ	R10, AX
	CMPQ	AX, $160
	JEQ	block5
	CMPQ	AX, $128
	JAE	block4
	CMPQ	AX, $96
	JEQ	block3
	CMPQ	AX, $64
	JEQ	block2

	// One chunk: four accumulators Y0–Y3, one per nonzero of a step.
block1:
	VXORPS	Y0, Y0, Y0
	VXORPS	Y1, Y1, Y1
	VXORPS	Y2, Y2, Y2
	VXORPS	Y3, Y3, Y3
	XORQ	R11, R11
	CMPQ	R11, R13
	JAE	b1tail

b1loop:
	SC_LOAD4(Y12)
	SC_VAL(0, $0x00, Y12, Y8)
	SC_IDX(0)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	SC_VAL(1, $0x55, Y12, Y9)
	SC_IDX(1)
	VFMADD231PS	(R12)(AX*1), Y9, Y1
	SC_VAL(2, $0xaa, Y12, Y10)
	SC_IDX(2)
	VFMADD231PS	(R12)(AX*1), Y10, Y2
	SC_VAL(3, $0xff, Y12, Y11)
	SC_IDX(3)
	VFMADD231PS	(R12)(AX*1), Y11, Y3
	ADDQ	$4, R11
	CMPQ	R11, R13
	JB	b1loop

b1tail:
	CMPQ	R11, R9
	JAE	b1done
	SC_ROW(0, Y8)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	INCQ	R11
	JMP	b1tail

b1done:
	VADDPS	Y1, Y0, Y0
	VADDPS	Y3, Y2, Y2
	VADDPS	Y2, Y0, Y0
	VMOVUPS	Y0, (DI)(R10*1)
	ADDQ	$32, R10
	JMP	colloop

	// Two chunks: four accumulator sets (Y0,Y1) (Y2,Y3) (Y4,Y5) (Y6,Y7).
block2:
	VXORPS	Y0, Y0, Y0
	VXORPS	Y1, Y1, Y1
	VXORPS	Y2, Y2, Y2
	VXORPS	Y3, Y3, Y3
	VXORPS	Y4, Y4, Y4
	VXORPS	Y5, Y5, Y5
	VXORPS	Y6, Y6, Y6
	VXORPS	Y7, Y7, Y7
	XORQ	R11, R11
	CMPQ	R11, R13
	JAE	b2tail

b2loop:
	SC_LOAD4(Y12)
	SC_VAL(0, $0x00, Y12, Y8)
	SC_VAL(1, $0x55, Y12, Y9)
	SC_VAL(2, $0xaa, Y12, Y10)
	SC_VAL(3, $0xff, Y12, Y11)
	SC_IDX(0)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	VFMADD231PS	32(R12)(AX*1), Y8, Y1
	SC_IDX(1)
	VFMADD231PS	(R12)(AX*1), Y9, Y2
	VFMADD231PS	32(R12)(AX*1), Y9, Y3
	SC_IDX(2)
	VFMADD231PS	(R12)(AX*1), Y10, Y4
	VFMADD231PS	32(R12)(AX*1), Y10, Y5
	SC_IDX(3)
	VFMADD231PS	(R12)(AX*1), Y11, Y6
	VFMADD231PS	32(R12)(AX*1), Y11, Y7
	ADDQ	$4, R11
	CMPQ	R11, R13
	JB	b2loop

b2tail:
	CMPQ	R11, R9
	JAE	b2done
	SC_ROW(0, Y8)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	VFMADD231PS	32(R12)(AX*1), Y8, Y1
	INCQ	R11
	JMP	b2tail

b2done:
	VADDPS	Y2, Y0, Y0
	VADDPS	Y3, Y1, Y1
	VADDPS	Y6, Y4, Y4
	VADDPS	Y7, Y5, Y5
	VADDPS	Y4, Y0, Y0
	VADDPS	Y5, Y1, Y1
	VMOVUPS	Y0, (DI)(R10*1)
	VMOVUPS	Y1, 32(DI)(R10*1)
	ADDQ	$64, R10
	JMP	colloop

	// Three chunks: four accumulator sets (Y0–Y2) (Y3–Y5) (Y6–Y8) (Y9–Y11).
block3:
	VXORPS	Y0, Y0, Y0
	VXORPS	Y1, Y1, Y1
	VXORPS	Y2, Y2, Y2
	VXORPS	Y3, Y3, Y3
	VXORPS	Y4, Y4, Y4
	VXORPS	Y5, Y5, Y5
	VXORPS	Y6, Y6, Y6
	VXORPS	Y7, Y7, Y7
	VXORPS	Y8, Y8, Y8
	VXORPS	Y9, Y9, Y9
	VXORPS	Y10, Y10, Y10
	VXORPS	Y11, Y11, Y11
	XORQ	R11, R11
	CMPQ	R11, R13
	JAE	b3tail

b3loop:
	SC_LOAD4(Y14)
	SC_VAL(0, $0x00, Y14, Y12)
	SC_IDX(0)
	VFMADD231PS	(R12)(AX*1), Y12, Y0
	VFMADD231PS	32(R12)(AX*1), Y12, Y1
	VFMADD231PS	64(R12)(AX*1), Y12, Y2
	SC_VAL(1, $0x55, Y14, Y13)
	SC_IDX(1)
	VFMADD231PS	(R12)(AX*1), Y13, Y3
	VFMADD231PS	32(R12)(AX*1), Y13, Y4
	VFMADD231PS	64(R12)(AX*1), Y13, Y5
	SC_VAL(2, $0xaa, Y14, Y12)
	SC_IDX(2)
	VFMADD231PS	(R12)(AX*1), Y12, Y6
	VFMADD231PS	32(R12)(AX*1), Y12, Y7
	VFMADD231PS	64(R12)(AX*1), Y12, Y8
	SC_VAL(3, $0xff, Y14, Y13)
	SC_IDX(3)
	VFMADD231PS	(R12)(AX*1), Y13, Y9
	VFMADD231PS	32(R12)(AX*1), Y13, Y10
	VFMADD231PS	64(R12)(AX*1), Y13, Y11
	ADDQ	$4, R11
	CMPQ	R11, R13
	JB	b3loop

b3tail:
	CMPQ	R11, R9
	JAE	b3done
	SC_ROW(0, Y12)
	VFMADD231PS	(R12)(AX*1), Y12, Y0
	VFMADD231PS	32(R12)(AX*1), Y12, Y1
	VFMADD231PS	64(R12)(AX*1), Y12, Y2
	INCQ	R11
	JMP	b3tail

b3done:
	VADDPS	Y3, Y0, Y0
	VADDPS	Y4, Y1, Y1
	VADDPS	Y5, Y2, Y2
	VADDPS	Y9, Y6, Y6
	VADDPS	Y10, Y7, Y7
	VADDPS	Y11, Y8, Y8
	VADDPS	Y6, Y0, Y0
	VADDPS	Y7, Y1, Y1
	VADDPS	Y8, Y2, Y2
	VMOVUPS	Y0, (DI)(R10*1)
	VMOVUPS	Y1, 32(DI)(R10*1)
	VMOVUPS	Y2, 64(DI)(R10*1)
	ADDQ	$96, R10
	JMP	colloop

	// Four chunks: two accumulator sets (Y0–Y3) for even and (Y4–Y7) for
	// odd nonzeros; each set takes two FMAs per step of four, so its
	// latency chain (8–10 cycles) matches the step's 16 FMAs at two per
	// cycle.
block4:
	VXORPS	Y0, Y0, Y0
	VXORPS	Y1, Y1, Y1
	VXORPS	Y2, Y2, Y2
	VXORPS	Y3, Y3, Y3
	VXORPS	Y4, Y4, Y4
	VXORPS	Y5, Y5, Y5
	VXORPS	Y6, Y6, Y6
	VXORPS	Y7, Y7, Y7
	XORQ	R11, R11
	CMPQ	R11, R13
	JAE	b4tail

b4loop:
	SC_LOAD4(Y12)
	SC_VAL(0, $0x00, Y12, Y8)
	SC_IDX(0)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	VFMADD231PS	32(R12)(AX*1), Y8, Y1
	VFMADD231PS	64(R12)(AX*1), Y8, Y2
	VFMADD231PS	96(R12)(AX*1), Y8, Y3
	SC_VAL(1, $0x55, Y12, Y9)
	SC_IDX(1)
	VFMADD231PS	(R12)(AX*1), Y9, Y4
	VFMADD231PS	32(R12)(AX*1), Y9, Y5
	VFMADD231PS	64(R12)(AX*1), Y9, Y6
	VFMADD231PS	96(R12)(AX*1), Y9, Y7
	SC_VAL(2, $0xaa, Y12, Y10)
	SC_IDX(2)
	VFMADD231PS	(R12)(AX*1), Y10, Y0
	VFMADD231PS	32(R12)(AX*1), Y10, Y1
	VFMADD231PS	64(R12)(AX*1), Y10, Y2
	VFMADD231PS	96(R12)(AX*1), Y10, Y3
	SC_VAL(3, $0xff, Y12, Y11)
	SC_IDX(3)
	VFMADD231PS	(R12)(AX*1), Y11, Y4
	VFMADD231PS	32(R12)(AX*1), Y11, Y5
	VFMADD231PS	64(R12)(AX*1), Y11, Y6
	VFMADD231PS	96(R12)(AX*1), Y11, Y7
	ADDQ	$4, R11
	CMPQ	R11, R13
	JB	b4loop

b4tail:
	CMPQ	R11, R9
	JAE	b4done
	SC_ROW(0, Y8)
	VFMADD231PS	(R12)(AX*1), Y8, Y0
	VFMADD231PS	32(R12)(AX*1), Y8, Y1
	VFMADD231PS	64(R12)(AX*1), Y8, Y2
	VFMADD231PS	96(R12)(AX*1), Y8, Y3
	INCQ	R11
	JMP	b4tail

b4done:
	VADDPS	Y4, Y0, Y0
	VADDPS	Y5, Y1, Y1
	VADDPS	Y6, Y2, Y2
	VADDPS	Y7, Y3, Y3
	VMOVUPS	Y0, (DI)(R10*1)
	VMOVUPS	Y1, 32(DI)(R10*1)
	VMOVUPS	Y2, 64(DI)(R10*1)
	VMOVUPS	Y3, 96(DI)(R10*1)
	ADDQ	$128, R10
	JMP	colloop

	// Five chunks, the last five of the row: block4's pass and block1's
	// fused into one pass over the nonzeros, with each one's accumulator
	// sets and sums (the same operations in the same order per column):
	// (Y0–Y3) and (Y4–Y7) for even and odd nonzeros on the first four
	// chunks, Y8–Y11 for the nonzeros of a step on the fifth.
block5:
	VXORPS	Y0, Y0, Y0
	VXORPS	Y1, Y1, Y1
	VXORPS	Y2, Y2, Y2
	VXORPS	Y3, Y3, Y3
	VXORPS	Y4, Y4, Y4
	VXORPS	Y5, Y5, Y5
	VXORPS	Y6, Y6, Y6
	VXORPS	Y7, Y7, Y7
	VXORPS	Y8, Y8, Y8
	VXORPS	Y9, Y9, Y9
	VXORPS	Y10, Y10, Y10
	VXORPS	Y11, Y11, Y11
	XORQ	R11, R11
	CMPQ	R11, R13
	JAE	b5tail

b5loop:
	SC_LOAD4(Y12)
	SC_VAL(0, $0x00, Y12, Y13)
	SC_IDX(0)
	VFMADD231PS	(R12)(AX*1), Y13, Y0
	VFMADD231PS	32(R12)(AX*1), Y13, Y1
	VFMADD231PS	64(R12)(AX*1), Y13, Y2
	VFMADD231PS	96(R12)(AX*1), Y13, Y3
	VFMADD231PS	128(R12)(AX*1), Y13, Y8
	SC_VAL(1, $0x55, Y12, Y14)
	SC_IDX(1)
	VFMADD231PS	(R12)(AX*1), Y14, Y4
	VFMADD231PS	32(R12)(AX*1), Y14, Y5
	VFMADD231PS	64(R12)(AX*1), Y14, Y6
	VFMADD231PS	96(R12)(AX*1), Y14, Y7
	VFMADD231PS	128(R12)(AX*1), Y14, Y9
	SC_VAL(2, $0xaa, Y12, Y13)
	SC_IDX(2)
	VFMADD231PS	(R12)(AX*1), Y13, Y0
	VFMADD231PS	32(R12)(AX*1), Y13, Y1
	VFMADD231PS	64(R12)(AX*1), Y13, Y2
	VFMADD231PS	96(R12)(AX*1), Y13, Y3
	VFMADD231PS	128(R12)(AX*1), Y13, Y10
	SC_VAL(3, $0xff, Y12, Y14)
	SC_IDX(3)
	VFMADD231PS	(R12)(AX*1), Y14, Y4
	VFMADD231PS	32(R12)(AX*1), Y14, Y5
	VFMADD231PS	64(R12)(AX*1), Y14, Y6
	VFMADD231PS	96(R12)(AX*1), Y14, Y7
	VFMADD231PS	128(R12)(AX*1), Y14, Y11
	ADDQ	$4, R11
	CMPQ	R11, R13
	JB	b5loop

b5tail:
	CMPQ	R11, R9
	JAE	b5done
	SC_ROW(0, Y13)
	VFMADD231PS	(R12)(AX*1), Y13, Y0
	VFMADD231PS	32(R12)(AX*1), Y13, Y1
	VFMADD231PS	64(R12)(AX*1), Y13, Y2
	VFMADD231PS	96(R12)(AX*1), Y13, Y3
	VFMADD231PS	128(R12)(AX*1), Y13, Y8
	INCQ	R11
	JMP	b5tail

b5done:
	VADDPS	Y4, Y0, Y0
	VADDPS	Y5, Y1, Y1
	VADDPS	Y6, Y2, Y2
	VADDPS	Y7, Y3, Y3
	VADDPS	Y9, Y8, Y8
	VADDPS	Y11, Y10, Y10
	VADDPS	Y10, Y8, Y8
	VMOVUPS	Y0, (DI)(R10*1)
	VMOVUPS	Y1, 32(DI)(R10*1)
	VMOVUPS	Y2, 64(DI)(R10*1)
	VMOVUPS	Y3, 96(DI)(R10*1)
	VMOVUPS	Y8, 128(DI)(R10*1)
	ADDQ	$160, R10
	JMP	colloop

done:
	MOVQ	k+96(FP), AX
	TESTQ	AX, AX
	JNZ	epilogue
	VZEROUPPER
	MOVQ	$0, best+SC_BEST(FP)
	MOVB	$1, ok+SC_OK(FP)
	RET

fail:
	VZEROUPPER

failnovec:
	MOVQ	$0, best+SC_BEST(FP)
	MOVB	$0, ok+SC_OK(FP)
	RET

	// The bias epilogue and argmax (k > 0), over the scores just stored
	// in dst. First pass, per chunk of 8 columns: t = row0·b, u = t + dst,
	// v = u·s, each rounded (the operand order of the scalar Go expression
	// s*(dst + b*row0), which decides which NaN comes out when two meet),
	// with row0 the first row of w; dst = v on live columns (column < k)
	// and 0 on padding; a running maximum M of v over live columns.
	// VMAXPS returns its second source when either source is NaN, and M
	// is never NaN, so NaN scores are passed over. If dst[0] is NaN the
	// answer is 0; otherwise M is a live non-NaN score, and the answer is
	// the first column whose stored score equals M (ordered equality: the
	// scan's first maximum, -0 and +0 being equal; padding columns come
	// after every live one).
	//
	// Registers: DI dst, SI row0, DX strideBytes, R10 byte offset, Y9
	// running maximum, Y10 -Inf, Y11 eight int32 8s, Y12 column numbers of
	// the chunk, Y13 k, Y14 s, Y15 b.
epilogue:
	// row0 must lie inside w (an empty x is accepted without a row).
	MOVQ	w_len+32(FP), R8
	SHLQ	$2, R8
	CMPQ	R8, DX
	JB	fail
	VPBROADCASTD	k+96(FP), Y13
	VBROADCASTSS	s+104(FP), Y14
	VBROADCASTSS	b+108(FP), Y15
	VMOVDQU	lanes<>(SB), Y12
	MOVL	$8, AX
	MOVQ	AX, X11
	VPBROADCASTD	X11, Y11
	MOVL	$0xff800000, AX
	MOVQ	AX, X10
	VPBROADCASTD	X10, Y10
	VMOVAPS	Y10, Y9
	XORQ	R10, R10

bmscore:
	VMOVUPS	(SI)(R10*1), Y0
	VMULPS	Y15, Y0, Y0
	VADDPS	(DI)(R10*1), Y0, Y0
	VMULPS	Y14, Y0, Y0
	VPCMPGTD	Y12, Y13, Y1
	VANDPS	Y1, Y0, Y2
	VMOVUPS	Y2, (DI)(R10*1)
	VBLENDVPS	Y1, Y0, Y10, Y3
	VMAXPS	Y9, Y3, Y9
	VPADDD	Y11, Y12, Y12
	ADDQ	$32, R10
	CMPQ	R10, DX
	JB	bmscore

	VMOVSS	(DI), X0
	VUCOMISS	X0, X0
	JPS	bmzero
	VEXTRACTF128	$1, Y9, X1
	VMAXPS	X1, X9, X9
	VPERMILPS	$0x4e, X9, X1
	VMAXPS	X1, X9, X9
	VPERMILPS	$0xb1, X9, X1
	VMAXPS	X1, X9, X9
	VBROADCASTSS	X9, Y9

	// The chunks are searched from the last to the first, without a
	// data-dependent branch: BX ends as the first match of the lowest
	// chunk that has one.
	XORQ	BX, BX
	MOVQ	DX, R10
	MOVQ	DX, CX
	SHRQ	$2, CX

bmfind:
	SUBQ	$32, R10
	SUBQ	$8, CX
	VCMPPS	$0, (DI)(R10*1), Y9, Y1
	VMOVMSKPS	Y1, AX
	BSFL	AX, AX
	LEAQ	(AX)(CX*1), AX
	CMOVQNE	AX, BX
	TESTQ	R10, R10
	JNZ	bmfind
	VZEROUPPER
	MOVQ	BX, best+SC_BEST(FP)
	MOVB	$1, ok+SC_OK(FP)
	RET

bmzero:
	VZEROUPPER
	MOVQ	$0, best+SC_BEST(FP)
	MOVB	$1, ok+SC_OK(FP)
	RET
