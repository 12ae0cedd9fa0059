// The body of the AddOuter kernels (see kernel_amd64.s), included once per
// row encoding in its own TEXT after the arguments are loaded. The
// including file defines AO_ROW(k, bc) (row offset of nonzero i+k in AX,
// bounds-checked, jumping to aofail when out of range; its value
// broadcast in bc) and AO_OK (the offset of
// the result ok); AO_CHUNK is defined there.

	XORQ	R11, R11
	TESTQ	R9, R9
	JZ	aodone
	SHLQ	$2, DX
	SHLQ	$2, R8
	SUBQ	DX, R8
	JCS	aofailnovec
	CMPQ	DX, $32
	JEQ	ao1
	CMPQ	DX, $64
	JEQ	ao2

aoloop:
	AO_ROW(0, Y8)
	LEAQ	(SI)(AX*1), R13
	XORQ	R10, R10

aochunk:
	VMOVUPS	(R12)(R10*1), Y9
	VFMADD213PS	(R13)(R10*1), Y8, Y9
	VMOVUPS	Y9, (R13)(R10*1)
	ADDQ	$32, R10
	CMPQ	R10, DX
	JB	aochunk
	INCQ	R11
	CMPQ	R11, R9
	JB	aoloop
	JMP	aodone

ao1:
	VMOVUPS	(R12), Y0

ao1loop:
	AO_ROW(0, Y8)
	AO_CHUNK(0, Y0, Y8, Y10)
	INCQ	R11
	CMPQ	R11, R9
	JB	ao1loop
	JMP	aodone

ao2:
	VMOVUPS	(R12), Y0
	VMOVUPS	32(R12), Y1

ao2loop:
	AO_ROW(0, Y8)
	AO_CHUNK(0, Y0, Y8, Y10)
	AO_CHUNK(32, Y1, Y8, Y11)
	INCQ	R11
	CMPQ	R11, R9
	JB	ao2loop

aodone:
	VZEROUPPER
	MOVB	$1, ok+AO_OK(FP)
	RET

aofail:
	VZEROUPPER

aofailnovec:
	MOVB	$0, ok+AO_OK(FP)
	RET
