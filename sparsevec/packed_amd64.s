//go:build amd64 && !purego

#include "textflag.h"

// func widenAVX2(dst []uint32, src []uint16)
// dst[i] = src[i] for i < len(src); the Go caller checks len(dst) >= len(src).
TEXT ·widenAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
loop16:
	CMPQ CX, $16
	JB   tail8
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y1, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop16
tail8:
	CMPQ CX, $8
	JB   tail
	VPMOVZXWD (SI), Y0
	VMOVDQU   Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
tail:
	TESTQ CX, CX
	JZ    done
	MOVWLZX (SI), AX
	MOVL    AX, (DI)
	ADDQ $2, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail
done:
	VZEROUPPER
	RET
