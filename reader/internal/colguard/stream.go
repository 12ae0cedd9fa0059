package colguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// StreamMessages reads the messages of an Arrow IPC stream for
// ipc.NewReaderFromMessageReader, as the library's own message reader
// does, but refuses a metadata or body length beyond the bytes left in the
// file and checks a schema's flatbuffer before the library decodes it.
type StreamMessages struct {
	r     io.Reader
	size  int64 // of the file
	left  int64 // bytes of the file not read yet
	limit int   // bound of one buffer's uncompressed length
	w     WindowReader
	msg   *ipc.Message
	refs  int64
}

// NewStreamMessages returns a StreamMessages reading the Arrow IPC stream
// file r of size bytes, whose compressed buffers may each declare at most
// limit bytes uncompressed. It holds one reference.
func NewStreamMessages(r io.Reader, size int64, limit int) *StreamMessages {
	return &StreamMessages{r: r, size: size, left: size, limit: limit, refs: 1}
}

func (s *StreamMessages) read(p []byte) error {
	n, err := io.ReadFull(s.r, p)
	s.left -= int64(n)
	return err
}

// ErrNoEOS is the end of an Arrow stream file without an end-of-stream
// marker. The format lets a writer end a stream by closing it, but every
// Arrow writer writes the marker on Close, so a file that ends between two
// messages without it was cut there: refusing it, rather than reading a
// shorter stream, is what keeps rows from being dropped silently.
var ErrNoEOS = errors.New("the stream ends without its end-of-stream marker (truncated between two messages)")

// Message returns the next message, valid until the next call; io.EOF at
// the end-of-stream marker, ErrNoEOS at the end of the file without it.
func (s *StreamMessages) Message() (*ipc.Message, error) {
	if s.msg != nil {
		s.msg.Release()
		s.msg = nil
	}
	var w [4]byte
	if err := s.read(w[:]); err != nil {
		if err == io.EOF {
			return nil, ErrNoEOS
		}
		return nil, fmt.Errorf("reading message length: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(w[:]))
	switch n {
	case 0:
		return nil, io.EOF
	case 0xffffffff:
		if err := s.read(w[:]); err != nil {
			return nil, fmt.Errorf("reading message length: %w", InMessage(err))
		}
		n = int64(int32(binary.LittleEndian.Uint32(w[:])))
		if n == 0 {
			return nil, io.EOF
		}
	default: // before Arrow 0.15, no continuation marker
		n = int64(int32(n))
	}
	if n < 0 || n > s.left {
		return nil, fmt.Errorf("message metadata of %d bytes with %d left in the file", n, s.left)
	}
	meta := make(FB, n)
	if err := s.read(meta); err != nil {
		return nil, fmt.Errorf("reading message metadata: %w", InMessage(err))
	}
	root, err := meta.Root()
	if err != nil {
		return nil, err
	}
	var bodyLen int64
	if p, err := meta.Field(root, 3); err != nil { // bodyLength
		return nil, err
	} else if p >= 0 {
		if p > int64(len(meta))-8 {
			return nil, ErrFlatbuffer
		}
		bodyLen = int64(binary.LittleEndian.Uint64(meta[p:]))
	}
	if bodyLen < 0 || bodyLen > s.left {
		return nil, fmt.Errorf("message body of %d bytes with %d left in the file", bodyLen, s.left)
	}
	ht, err := meta.Field(root, 1) // header_type
	if err != nil {
		return nil, err
	}
	if ht >= 0 && ht < int64(len(meta)) && meta[ht] == 1 { // Schema
		p, err := meta.Field(root, 2)
		if err != nil {
			return nil, err
		}
		if p >= 0 {
			sch, err := meta.Deref(p)
			if err != nil {
				return nil, err
			}
			if err := meta.CheckSchema(sch); err != nil {
				return nil, err
			}
		}
	}
	body := memory.NewResizableBuffer(bodyAlloc)
	defer body.Release()
	body.Resize(int(bodyLen))
	bodyOff := s.size - s.left
	if err := s.read(body.Bytes()); err != nil {
		return nil, fmt.Errorf("reading message body: %w", InMessage(err))
	}
	s.w.resetMem(body.Bytes(), bodyOff)
	if err := CheckIPCBody(meta, &s.w, bodyOff, bodyLen, s.limit); err != nil {
		return nil, err
	}
	s.msg = ipc.NewMessage(memory.NewBufferBytes(meta), body)
	return s.msg, nil
}

// bodyAlloc allocates the message bodies: Go memory, garbage collected, so
// that arrays aliasing a body stay valid while referenced, whatever
// memory.DefaultAllocator is.
var bodyAlloc = memory.NewGoAllocator()

// InMessage turns io.EOF inside a message into io.ErrUnexpectedEOF, which the
// Arrow library does not take for the end of the stream.
func InMessage(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (s *StreamMessages) Retain() { s.refs++ }

func (s *StreamMessages) Release() {
	if s.refs--; s.refs == 0 && s.msg != nil {
		s.msg.Release()
		s.msg = nil
	}
}
