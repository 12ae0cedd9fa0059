//go:build amd64 && !purego

#include "textflag.h"

// func addScaledAVX2(dst []float64, x []float32, a float64)
//
// dst[i] = dst[i] + float64(x[i])·a, the product and the sum each rounded
// (VMULPD, VADDPD: no FMA), eight values per step, for the first
// len(dst) &^ 7 values; len(x) >= len(dst).
TEXT ·addScaledAVX2(SB), NOSPLIT, $0-56
	MOVQ	dst_base+0(FP), DI
	MOVQ	dst_len+8(FP), CX
	MOVQ	x_base+24(FP), SI
	VBROADCASTSD	a+48(FP), Y0
	ANDQ	$-8, CX
	XORQ	AX, AX

loop:
	CMPQ	AX, CX
	JAE	done
	VCVTPS2PD	(SI)(AX*4), Y1
	VCVTPS2PD	16(SI)(AX*4), Y2
	VMULPD	Y0, Y1, Y1
	VMULPD	Y0, Y2, Y2
	VADDPD	(DI)(AX*8), Y1, Y1
	VADDPD	32(DI)(AX*8), Y2, Y2
	VMOVUPD	Y1, (DI)(AX*8)
	VMOVUPD	Y2, 32(DI)(AX*8)
	ADDQ	$8, AX
	JMP	loop

done:
	VZEROUPPER
	RET
