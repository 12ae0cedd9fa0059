package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nats-io/nats.go/jetstream"
)

// PutData stores the file at path in cpm-data under the hex SHA-256 of its
// bytes and returns that digest. The file is uploaded (in the object
// store's chunks) only if no object of that digest and size exists yet, so
// a data set shared by several jobs is stored once. A file that changes
// while it is uploaded is an error, and the partial object is deleted.
func (c *Cluster) PutData(ctx context.Context, path string) (digest string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cluster: put data: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return "", fmt.Errorf("cluster: put data: hash %s: %w", path, err)
	}
	sum := h.Sum(nil)
	digest = hex.EncodeToString(sum)
	info, err := c.data.GetInfo(ctx, digest)
	switch {
	case err == nil && int64(info.Size) == size:
		// Stored already: touch it, so that cpm cluster gc, which keeps
		// data modified within its bound, does not take it from the job
		// about to name it.
		if err := c.data.UpdateMeta(ctx, digest, info.ObjectMeta); err != nil {
			return "", fmt.Errorf("cluster: put data: %w", err)
		}
		return digest, nil
	case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
		return "", fmt.Errorf("cluster: put data: %w", err)
	}
	info, err = retry(ctx, func(ctx context.Context) (*jetstream.ObjectInfo, error) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return c.data.Put(ctx, jetstream.ObjectMeta{Name: digest}, io.LimitReader(f, size))
	})
	if err != nil {
		return "", fmt.Errorf("cluster: put data %s: %w", path, err)
	}
	stored, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil || int64(info.Size) != size || !bytes.Equal(stored, sum) {
		_ = c.data.Delete(ctx, digest)
		return "", fmt.Errorf("cluster: put data: %s changed while it was uploaded", path)
	}
	return digest, nil
}

// maxFetchResult bounds a result Do fetches.
const maxFetchResult = 4 << 30

// fetchResult reads the result a record names and checks its size and
// SHA-256 against the record.
func (c *Cluster) fetchResult(ctx context.Context, job string, index int, r *resultRecord) ([]byte, error) {
	if r.Object != resultObject(job, index, r.SHA256) {
		return nil, fmt.Errorf("result record names object %q", r.Object)
	}
	var err error
	for range 2 { // a duplicate upload can replace the object under a reader once
		var b []byte
		if b, err = c.readResult(ctx, r); err == nil {
			return b, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, err
}

func (c *Cluster) readResult(ctx context.Context, r *resultRecord) ([]byte, error) {
	obj, err := c.results.Get(ctx, r.Object)
	if err != nil {
		return nil, fmt.Errorf("result %s: %w", r.Object, err)
	}
	defer obj.Close()
	info, err := obj.Info()
	if err != nil {
		return nil, fmt.Errorf("result %s: %w", r.Object, err)
	}
	if int64(info.Size) != r.Size {
		return nil, fmt.Errorf("result %s: %d bytes, its record says %d", r.Object, info.Size, r.Size)
	}
	b := make([]byte, 0, r.Size)
	buf := bytes.NewBuffer(b)
	if _, err := io.Copy(buf, io.LimitReader(obj, r.Size+1)); err != nil {
		return nil, fmt.Errorf("result %s: %w", r.Object, err)
	}
	b = buf.Bytes()
	sum := sha256.Sum256(b)
	if int64(len(b)) != r.Size || hex.EncodeToString(sum[:]) != r.SHA256 {
		return nil, fmt.Errorf("result %s: bytes do not match the SHA-256 of its record", r.Object)
	}
	return b, nil
}
