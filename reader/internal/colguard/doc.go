// Package colguard checks Arrow IPC and Parquet files for the ways
// github.com/apache/arrow-go/v18 fails on corrupt or hostile input that its
// own limits do not cover, before the library reads the bytes concerned:
//
//   - FB and CheckFooter walk the flatbuffers of an Arrow schema and file
//     footer, bounding every vector by the bytes that hold it and the
//     nesting of fields, since the library makes a slice of whatever length
//     they claim (a fatal out-of-memory) and follows offsets into cycles;
//   - StreamMessages is the message reader of an Arrow IPC stream that
//     refuses a metadata or body length beyond the bytes left in the file
//     and a stream that ends without its end-of-stream marker;
//   - CheckIPCBody and CheckFileMessage check that every buffer of a record
//     batch lies in its body and read the zstd frame headers of compressed
//     buffers before the library's streaming decoder allocates their
//     window;
//   - CheckPages walks the page headers of a Parquet column chunk to find
//     each compressed page, and CheckPageBody reads the snappy and zstd
//     size fields of its body before the codec allocates what they claim.
//
// Each check returns an error describing the damage; the caller wraps it
// as corrupt input. The comment of each guard names the test input that
// needs it. Bytes the library refuses on its own are left to it.
package colguard
