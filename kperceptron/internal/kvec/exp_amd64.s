//go:build amd64 && !purego

#include "textflag.h"

// Four-lane exponential, bit-identical to math.Exp on a CPU with AVX and
// FMA: the same operations as the FMA path of math.Exp's amd64 assembly
// (Naoki Shibata's method, "Efficient evaluation methods of elementary
// functions suitable for SIMD computation", ISC'10, as simplified in the
// Go standard library), applied to each lane:
//
//	k  = round(x·log2(e))                  (CVTPD2DQ, round to nearest even)
//	r  = fma(-k, ln2_hi, x); r = fma(-k, ln2_lo, r); r = r/16
//	p  = Horner(1/8!, 1/7!, …, 1/3!, 1/2, 1) in r with FMA;  e = r·p
//	e  = e·(e+2) three times;  e = fma(e, e+2, 1)
//	exp(x) = e·2^k
//
// A lane is handled only when the scalar code takes its normal path
// (−700 ≤ x ≤ 700: finite, no overflow, 2^k a normal number) or returns
// +0 (x < −800, including −Inf). A block with any other lane (NaN, +Inf,
// results near the overflow or in the denormal range) stops the loop, and
// the Go caller finishes that block with math.Exp.

// +0: LOG2E
DATA expc<>+0(SB)/8, $0x3ff71547652b82fe
DATA expc<>+8(SB)/8, $0x3ff71547652b82fe
DATA expc<>+16(SB)/8, $0x3ff71547652b82fe
DATA expc<>+24(SB)/8, $0x3ff71547652b82fe
// +32: LN2U
DATA expc<>+32(SB)/8, $0x3fe62e42fefa3000
DATA expc<>+40(SB)/8, $0x3fe62e42fefa3000
DATA expc<>+48(SB)/8, $0x3fe62e42fefa3000
DATA expc<>+56(SB)/8, $0x3fe62e42fefa3000
// +64: LN2L
DATA expc<>+64(SB)/8, $0x3d53de6af278ece6
DATA expc<>+72(SB)/8, $0x3d53de6af278ece6
DATA expc<>+80(SB)/8, $0x3d53de6af278ece6
DATA expc<>+88(SB)/8, $0x3d53de6af278ece6
// +96: 1/16
DATA expc<>+96(SB)/8, $0x3fb0000000000000
DATA expc<>+104(SB)/8, $0x3fb0000000000000
DATA expc<>+112(SB)/8, $0x3fb0000000000000
DATA expc<>+120(SB)/8, $0x3fb0000000000000
// +128: 1/8!
DATA expc<>+128(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+136(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+144(SB)/8, $0x3efa01a01a01a01a
DATA expc<>+152(SB)/8, $0x3efa01a01a01a01a
// +160: 1/7!
DATA expc<>+160(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+168(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+176(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+184(SB)/8, $0x3f2a01a01a01a01a
// +192: 1/6!
DATA expc<>+192(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+200(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+208(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+216(SB)/8, $0x3f56c16c16c16c17
// +224: 1/5!
DATA expc<>+224(SB)/8, $0x3f81111111111111
DATA expc<>+232(SB)/8, $0x3f81111111111111
DATA expc<>+240(SB)/8, $0x3f81111111111111
DATA expc<>+248(SB)/8, $0x3f81111111111111
// +256: 1/4!
DATA expc<>+256(SB)/8, $0x3fa5555555555555
DATA expc<>+264(SB)/8, $0x3fa5555555555555
DATA expc<>+272(SB)/8, $0x3fa5555555555555
DATA expc<>+280(SB)/8, $0x3fa5555555555555
// +288: 1/3!
DATA expc<>+288(SB)/8, $0x3fc5555555555555
DATA expc<>+296(SB)/8, $0x3fc5555555555555
DATA expc<>+304(SB)/8, $0x3fc5555555555555
DATA expc<>+312(SB)/8, $0x3fc5555555555555
// +320: 1/2
DATA expc<>+320(SB)/8, $0x3fe0000000000000
DATA expc<>+328(SB)/8, $0x3fe0000000000000
DATA expc<>+336(SB)/8, $0x3fe0000000000000
DATA expc<>+344(SB)/8, $0x3fe0000000000000
// +352: 1
DATA expc<>+352(SB)/8, $0x3ff0000000000000
DATA expc<>+360(SB)/8, $0x3ff0000000000000
DATA expc<>+368(SB)/8, $0x3ff0000000000000
DATA expc<>+376(SB)/8, $0x3ff0000000000000
// +384: 2
DATA expc<>+384(SB)/8, $0x4000000000000000
DATA expc<>+392(SB)/8, $0x4000000000000000
DATA expc<>+400(SB)/8, $0x4000000000000000
DATA expc<>+408(SB)/8, $0x4000000000000000
// +416: -700
DATA expc<>+416(SB)/8, $0xc085e00000000000
DATA expc<>+424(SB)/8, $0xc085e00000000000
DATA expc<>+432(SB)/8, $0xc085e00000000000
DATA expc<>+440(SB)/8, $0xc085e00000000000
// +448: 700
DATA expc<>+448(SB)/8, $0x4085e00000000000
DATA expc<>+456(SB)/8, $0x4085e00000000000
DATA expc<>+464(SB)/8, $0x4085e00000000000
DATA expc<>+472(SB)/8, $0x4085e00000000000
// +480: -800
DATA expc<>+480(SB)/8, $0xc089000000000000
DATA expc<>+488(SB)/8, $0xc089000000000000
DATA expc<>+496(SB)/8, $0xc089000000000000
DATA expc<>+504(SB)/8, $0xc089000000000000
// +512: exponent bias 1023, int32
DATA expc<>+512(SB)/4, $1023
DATA expc<>+516(SB)/4, $1023
DATA expc<>+520(SB)/4, $1023
DATA expc<>+524(SB)/4, $1023
DATA expc<>+528(SB)/4, $1023
DATA expc<>+532(SB)/4, $1023
DATA expc<>+536(SB)/4, $1023
DATA expc<>+540(SB)/4, $1023
// +544: sign bit
DATA expc<>+544(SB)/8, $0x8000000000000000
DATA expc<>+552(SB)/8, $0x8000000000000000
DATA expc<>+560(SB)/8, $0x8000000000000000
DATA expc<>+568(SB)/8, $0x8000000000000000
GLOBL expc<>(SB), RODATA|NOPTR, $576

// EXP_CHECK sets mask to the lanes of x on the normal path and ok to
// those or the lanes giving +0 (x < -800).
#define EXP_CHECK(x, mask, ok) \
	VCMPPD	$0x1d, expc<>+416(SB), x, mask \ // x >= -700, ordered
	VCMPPD	$0x12, expc<>+448(SB), x, ok \   // x <= 700, ordered
	VANDPD	ok, mask, mask \
	VCMPPD	$0x11, expc<>+480(SB), x, ok \   // x < -800, ordered
	VORPD	mask, ok, ok

// EXP_BLOCK sets x to exp(x) in the lanes of mask and to +0 in the others
// (k, kx, p and e are scratch; k is kx's low half).
#define EXP_BLOCK(x, mask, k, kx, p, e) \
	VMULPD	expc<>+0(SB), x, p \                 // x·log2(e)
	VCVTPD2DQY	p, k \                            // k, int32
	VCVTDQ2PD	k, p \                              // float64(k)
	VFNMADD231PD	expc<>+32(SB), p, x \          // r = x - k·ln2_hi
	VFNMADD231PD	expc<>+64(SB), p, x \          // r -= k·ln2_lo
	VMULPD	expc<>+96(SB), x, x \                // r /= 16
	VMOVUPD	expc<>+128(SB), p \                   // Taylor series in r, Horner's rule
	VFMADD213PD	expc<>+160(SB), x, p \
	VFMADD213PD	expc<>+192(SB), x, p \
	VFMADD213PD	expc<>+224(SB), x, p \
	VFMADD213PD	expc<>+256(SB), x, p \
	VFMADD213PD	expc<>+288(SB), x, p \
	VFMADD213PD	expc<>+320(SB), x, p \
	VFMADD213PD	expc<>+352(SB), x, p \
	VMULPD	p, x, x \
	VADDPD	expc<>+384(SB), x, p \               // e·(e+2), four times: (1+e)² − 1
	VMULPD	p, x, x \
	VADDPD	expc<>+384(SB), x, p \
	VMULPD	p, x, x \
	VADDPD	expc<>+384(SB), x, p \
	VMULPD	p, x, x \
	VADDPD	expc<>+384(SB), x, p \
	VFMADD213PD	expc<>+352(SB), p, x \       // e·(e+2) + 1
	VPADDD	expc<>+512(SB), k, k \               // times 2^k: the bits (k+1023)<<52
	VPMOVSXDQ	k, e \
	VPSLLQ	$52, e, e \
	VMULPD	e, x, x \
	VANDPD	mask, x, x                           // +0 in the lanes below -800

// func expAVX2(x []float64) (done int)
TEXT ·expAVX2(SB), NOSPLIT, $0-32
	MOVQ	x_base+0(FP), SI
	MOVQ	x_len+8(FP), CX
	ANDQ	$-4, CX
	XORQ	AX, AX

loop:
	CMPQ	AX, CX
	JAE	done
	VMOVUPD	(SI)(AX*8), Y0
	EXP_CHECK(Y0, Y5, Y6)
	VMOVMSKPD	Y6, DX
	CMPL	DX, $15
	JNE	done
	EXP_BLOCK(Y0, Y5, X2, Y2, Y3, Y4)
	VMOVUPD	Y0, (SI)(AX*8)
	ADDQ	$4, AX
	JMP	loop

done:
	VZEROUPPER
	MOVQ	AX, done+24(FP)
	RET

// RBF_ARG sets Y0 to the exponents arg = (-d2)·gamma of the four lanes
// at AX, d2 = (xx + yy) - (dot + dot) and 0 where d2 < 0 (ordered: NaN
// stays), from dot at SI, xx at DI, yy in Y8, gamma in Y9 and +0 in Y10.
#define RBF_ARG \
	VMOVUPD	(SI)(AX*8), Y0; \
	VADDPD	Y0, Y0, Y0; \
	VADDPD	(DI)(AX*8), Y8, Y1; \
	VSUBPD	Y0, Y1, Y1; \
	VCMPPD	$0x11, Y10, Y1, Y6; \
	VANDNPD	Y1, Y6, Y1; \
	VXORPD	expc<>+544(SB), Y1, Y1; \
	VMULPD	Y9, Y1, Y0

// func rbfAVX2(dst, xx []float64, yy, gamma float64) (done int)
//
// Per lane, as kernelFn.eval: d2 = (xx + yy) - (dot + dot); d2 = 0 where
// d2 < 0 (ordered: NaN stays); arg = (-d2)·gamma; then exp(arg) as
// expAVX2, stopping before a block expAVX2 would stop at (with dst
// unchanged there). len(xx) >= len(dst).
TEXT ·rbfAVX2(SB), NOSPLIT, $0-72
	MOVQ	dst_base+0(FP), SI
	MOVQ	dst_len+8(FP), CX
	MOVQ	xx_base+24(FP), DI
	VBROADCASTSD	yy+48(FP), Y8
	VBROADCASTSD	gamma+56(FP), Y9
	VXORPD	Y10, Y10, Y10 // +0
	ANDQ	$-4, CX
	XORQ	AX, AX

rbfloop:
	CMPQ	AX, CX
	JAE	rbfdone
	RBF_ARG
	EXP_CHECK(Y0, Y5, Y6)
	VMOVMSKPD	Y6, DX
	CMPL	DX, $15
	JNE	rbfdone
	EXP_BLOCK(Y0, Y5, X2, Y2, Y3, Y4)
	VMOVUPD	Y0, (SI)(AX*8)
	ADDQ	$4, AX
	JMP	rbfloop

rbfdone:
	VZEROUPPER
	MOVQ	AX, done+64(FP)
	RET

// func rbfDotAVX2(dst, xx []float64, yy, gamma float64, alpha []float32, acc float64) (done int, sum float64)
//
// rbfAVX2, and for each block done, in index order,
// acc = acc + float64(alpha[i])·dst[i] (VMULPD, then one VADDSD per
// lane: the scalar loop's rounding and order). The additions form one
// chain, which the exponentials of the next blocks overlap. Returns how
// many values it did and acc after them; len(xx), len(alpha) >= len(dst).
TEXT ·rbfDotAVX2(SB), NOSPLIT, $0-112
	MOVQ	dst_base+0(FP), SI
	MOVQ	dst_len+8(FP), CX
	MOVQ	xx_base+24(FP), DI
	VBROADCASTSD	yy+48(FP), Y8
	VBROADCASTSD	gamma+56(FP), Y9
	MOVQ	alpha_base+64(FP), R8
	VMOVSD	acc+88(FP), X11
	VXORPD	Y10, Y10, Y10 // +0
	ANDQ	$-4, CX
	XORQ	AX, AX

dotloop:
	CMPQ	AX, CX
	JAE	dotdone
	RBF_ARG
	EXP_CHECK(Y0, Y5, Y6)
	VMOVMSKPD	Y6, DX
	CMPL	DX, $15
	JNE	dotdone
	EXP_BLOCK(Y0, Y5, X2, Y2, Y3, Y4)
	VMOVUPD	Y0, (SI)(AX*8)
	VCVTPS2PD	(R8)(AX*4), Y7  // alpha
	VMULPD	Y0, Y7, Y7           // products
	VADDSD	X7, X11, X11         // acc += lane 0
	VPERMILPD	$1, X7, X12
	VADDSD	X12, X11, X11        // lane 1
	VEXTRACTF128	$1, Y7, X13
	VADDSD	X13, X11, X11        // lane 2
	VPERMILPD	$1, X13, X12
	VADDSD	X12, X11, X11        // lane 3
	ADDQ	$4, AX
	JMP	dotloop

dotdone:
	VZEROUPPER
	MOVQ	AX, done+96(FP)
	VMOVSD	X11, sum+104(FP)
	RET
