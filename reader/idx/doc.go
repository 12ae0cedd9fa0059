// Package idx decodes the MNIST handwritten-digit files in the idx format of
// LeCun et al. (http://yann.lecun.com/exdb/mnist/) into sparsevec rows:
//
//	images: uint32 0x00000803, uint32 n, uint32 rows, uint32 cols, n·rows·cols pixels (uint8)
//	labels: uint32 0x00000801, uint32 n, n labels (uint8)
//
// with every integer big-endian. Image i becomes row i with label
// float32(digit) and one nonzero per nonzero pixel: feature index
// 1 + r·cols + c (1-based, as in LIBSVM's mnist files) with value pixel/255.
//
// The headers are checked before anything is allocated: at most MaxItems
// images and MaxPixels pixels per image. Any malformed input is an *Error
// naming the file and the byte offset and wrapping one of the Err
// sentinels. Read takes uncompressed streams; reader.LoadIDX opens files,
// compressed or not.
package idx
