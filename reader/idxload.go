package reader

import (
	"github.com/polyhedral/cpm/reader/idx"
	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// LoadIDX opens an MNIST image file and label file with Open and decodes
// them with idx.Read. Either file may be compressed — gzip as distributed by
// LeCun et al. (train-images-idx3-ubyte.gz), zstd or bzip2 — which Open
// detects from the magic bytes, not from the file name. Errors name the paths.
func LoadIDX(imagesPath, labelsPath string) (*sparsevec.CSR, error) {
	images, err := core.Open(imagesPath)
	if err != nil {
		return nil, err
	}
	defer images.Close()
	labels, err := core.Open(labelsPath)
	if err != nil {
		return nil, err
	}
	defer labels.Close()
	return idx.Read(images, labels, imagesPath, labelsPath)
}
