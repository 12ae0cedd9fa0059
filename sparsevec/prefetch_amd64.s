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
