package reader

import (
	"io"

	"github.com/polyhedral/cpm/reader/idx"
	"github.com/polyhedral/cpm/sparsevec"
)

// The MNIST idx decoder lives in package reader/idx; these names are its
// API under the names the rest of the module uses.
type IDXError = idx.Error

// Sentinel errors of the idx decoder (see package idx).
var (
	ErrIDXMagic     = idx.ErrMagic
	ErrIDXCount     = idx.ErrCount
	ErrIDXTruncated = idx.ErrTruncated
	ErrIDXTrailing  = idx.ErrTrailing
	ErrIDXLabel     = idx.ErrLabel
	ErrIDXTooLarge  = idx.ErrTooLarge
)

// Limits of the idx decoder (see package idx).
const (
	MaxIDXPixels = idx.MaxPixels
	MaxIDXItems  = idx.MaxItems
)

// ReadIDX decodes an MNIST image file and its label file with idx.Read.
func ReadIDX(images, labels io.Reader, imagesName, labelsName string) (*sparsevec.CSR, error) {
	return idx.Read(images, labels, imagesName, labelsName)
}

// LoadIDX opens an MNIST image file and label file with Open and decodes
// them with idx.Read. Either file may be compressed — gzip as distributed by
// LeCun et al. (train-images-idx3-ubyte.gz), zstd or bzip2 — which Open
// detects from the magic bytes, not from the file name. Errors name the paths.
func LoadIDX(imagesPath, labelsPath string) (*sparsevec.CSR, error) {
	images, err := Open(imagesPath)
	if err != nil {
		return nil, err
	}
	defer images.Close()
	labels, err := Open(labelsPath)
	if err != nil {
		return nil, err
	}
	defer labels.Close()
	return idx.Read(images, labels, imagesPath, labelsPath)
}
