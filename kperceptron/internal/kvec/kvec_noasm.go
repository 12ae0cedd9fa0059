//go:build !amd64 || purego

package kvec

// expBlocks is the vector part of Exp: none here.
func expBlocks(x []float64) int { return 0 }

// addBlocks is the vector part of Add and Sub: none here.
func addBlocks(dst, src []float64, sub bool) int { return 0 }

// addScaledBlocks is the vector part of AddScaled: none here.
func addScaledBlocks(dst []float64, x []float32, a float64) int { return 0 }

// addScaledColsBlocks is the vector form of AddScaledCols: none here.
func addScaledColsBlocks(dst []float64, x []float32, offs []int, a []float64, zero bool) bool {
	return false
}

// rbfBlocks is the vector part of RBFKernel: none here.
func rbfBlocks(dst, xx []float64, yy, gamma float64) int { return 0 }

// rbfDotBlocks is the vector part of RBFDot: none here.
func rbfDotBlocks(dst, xx []float64, yy, gamma float64, alpha []float32, acc float64) (int, float64) {
	return 0, acc
}
