//go:build amd64 && !purego

#include "textflag.h"

// func addScaledColsAVX2(dst []float64, x []float32, offs []int, a []float64, zero bool)
//
// For every i < len(dst), with k running over the columns in order:
//
//	dst[i] = dst[i] + float64(x[offs[k]+i])·a[k]
//
// the product and the sum each rounded (VMULPD, VADDPD, and VMULSD,
// VADDSD for the last len(dst) mod 4 values: no FMA): the operations of
// one AddScaled pass per column, with dst held in registers across the
// columns, sixteen values at a time, then four, then one. With zero,
// dst[i] starts from +0 instead of its value (which is not read). len(a)
// >= len(offs) and every offs[k] + len(dst) <= len(x) (checked by the
// caller).
TEXT ·addScaledColsAVX2(SB), NOSPLIT, $0-97
	MOVQ	dst_base+0(FP), DI
	MOVQ	dst_len+8(FP), CX
	MOVQ	x_base+24(FP), SI
	MOVQ	offs_base+48(FP), R8
	MOVQ	offs_len+56(FP), R10
	MOVQ	a_base+72(FP), R9
	MOVQ	CX, R12 // len(dst)
	MOVBQZX	zero+96(FP), R13
	ANDQ	$-16, CX
	XORQ	AX, AX

rows:
	CMPQ	AX, CX
	JAE	quads
	TESTQ	R13, R13
	JNZ	zero16
	VMOVUPD	(DI)(AX*8), Y1
	VMOVUPD	32(DI)(AX*8), Y2
	VMOVUPD	64(DI)(AX*8), Y3
	VMOVUPD	96(DI)(AX*8), Y4
	JMP	start16

zero16:
	VXORPD	Y1, Y1, Y1
	VXORPD	Y2, Y2, Y2
	VXORPD	Y3, Y3, Y3
	VXORPD	Y4, Y4, Y4

start16:
	LEAQ	(SI)(AX*4), DX // &x[i]
	XORQ	BX, BX

cols:
	CMPQ	BX, R10
	JAE	store
	MOVQ	(R8)(BX*8), R11 // offs[k]
	VBROADCASTSD	(R9)(BX*8), Y0
	VCVTPS2PD	(DX)(R11*4), Y5
	VCVTPS2PD	16(DX)(R11*4), Y6
	VCVTPS2PD	32(DX)(R11*4), Y7
	VCVTPS2PD	48(DX)(R11*4), Y8
	VMULPD	Y0, Y5, Y5
	VMULPD	Y0, Y6, Y6
	VMULPD	Y0, Y7, Y7
	VMULPD	Y0, Y8, Y8
	VADDPD	Y5, Y1, Y1
	VADDPD	Y6, Y2, Y2
	VADDPD	Y7, Y3, Y3
	VADDPD	Y8, Y4, Y4
	INCQ	BX
	JMP	cols

store:
	VMOVUPD	Y1, (DI)(AX*8)
	VMOVUPD	Y2, 32(DI)(AX*8)
	VMOVUPD	Y3, 64(DI)(AX*8)
	VMOVUPD	Y4, 96(DI)(AX*8)
	ADDQ	$16, AX
	JMP	rows

quads: // then four values at a time
	MOVQ	R12, CX
	ANDQ	$-4, CX

quadrows:
	CMPQ	AX, CX
	JAE	singles
	VXORPD	Y1, Y1, Y1
	TESTQ	R13, R13
	JNZ	start4
	VMOVUPD	(DI)(AX*8), Y1

start4:
	LEAQ	(SI)(AX*4), DX
	XORQ	BX, BX

quadcols:
	CMPQ	BX, R10
	JAE	quadstore
	MOVQ	(R8)(BX*8), R11
	VBROADCASTSD	(R9)(BX*8), Y0
	VCVTPS2PD	(DX)(R11*4), Y5
	VMULPD	Y0, Y5, Y5
	VADDPD	Y5, Y1, Y1
	INCQ	BX
	JMP	quadcols

quadstore:
	VMOVUPD	Y1, (DI)(AX*8)
	ADDQ	$4, AX
	JMP	quadrows

singles:
	VXORPD	X14, X14, X14 // the upper half of each conversion: no dependency on X5

tail: // the last values, one at a time
	CMPQ	AX, R12
	JAE	done
	VXORPD	X1, X1, X1
	TESTQ	R13, R13
	JNZ	start1
	VMOVSD	(DI)(AX*8), X1

start1:
	LEAQ	(SI)(AX*4), DX
	XORQ	BX, BX

tailcols:
	CMPQ	BX, R10
	JAE	tailstore
	MOVQ	(R8)(BX*8), R11
	VCVTSS2SD	(DX)(R11*4), X14, X5
	VMULSD	(R9)(BX*8), X5, X5
	VADDSD	X5, X1, X1
	INCQ	BX
	JMP	tailcols

tailstore:
	VMOVSD	X1, (DI)(AX*8)
	INCQ	AX
	JMP	tail

done:
	VZEROUPPER
	RET
