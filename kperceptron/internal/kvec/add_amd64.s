//go:build amd64 && !purego

#include "textflag.h"

// func addAVX2(dst, src []float64, sub bool)
//
// dst[i] += src[i] (or -= if sub) for the first len(dst) &^ 7 values;
// len(src) >= len(dst).
TEXT ·addAVX2(SB), NOSPLIT, $0-49
	MOVQ	dst_base+0(FP), DI
	MOVQ	dst_len+8(FP), CX
	MOVQ	src_base+24(FP), SI
	ANDQ	$-8, CX
	XORQ	AX, AX
	CMPB	sub+48(FP), $0
	JNE	subloop

addloop:
	CMPQ	AX, CX
	JAE	done
	VMOVUPD	(DI)(AX*8), Y0
	VMOVUPD	32(DI)(AX*8), Y1
	VADDPD	(SI)(AX*8), Y0, Y0
	VADDPD	32(SI)(AX*8), Y1, Y1
	VMOVUPD	Y0, (DI)(AX*8)
	VMOVUPD	Y1, 32(DI)(AX*8)
	ADDQ	$8, AX
	JMP	addloop

subloop:
	CMPQ	AX, CX
	JAE	done
	VMOVUPD	(DI)(AX*8), Y0
	VMOVUPD	32(DI)(AX*8), Y1
	VSUBPD	(SI)(AX*8), Y0, Y0 // Y0 = dst - src
	VSUBPD	32(SI)(AX*8), Y1, Y1
	VMOVUPD	Y0, (DI)(AX*8)
	VMOVUPD	Y1, 32(DI)(AX*8)
	ADDQ	$8, AX
	JMP	subloop

done:
	VZEROUPPER
	RET
