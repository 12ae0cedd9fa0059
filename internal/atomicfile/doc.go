// Package atomicfile writes every output file of the module under one set
// of rules, decided by what the destination path names when the write
// starts:
//
//   - A path that does not exist, or a regular file, is written atomically:
//     the data goes to a temporary file in the destination's directory,
//     named ".NAME.tmp-PID-RANDOM" (PID is the writing process), which is
//     synced to disk, renamed over the destination, after which the
//     directory is synced. Readers see the old file or the whole new one,
//     never a part. The new file keeps the permission bits of the regular
//     file it replaces, or gets 0644. On every error path (a failed write,
//     a full disk, a failed sync or rename, a panic or an early return
//     caught by a deferred Abort) the temporary file is removed and the
//     destination is left as it was.
//   - Temporary files for the same destination left by processes that no
//     longer run (their PID is not alive) are removed when a new write to
//     that destination starts. Temporaries of live processes, and names
//     not of this form, are left alone. A process lists a directory for
//     them once, at its first write there, so a temporary left by a
//     process that dies later is removed by the next run, not this one.
//   - A symbolic link is followed (through any chain of links) and its
//     final target is replaced atomically as above; the link stays.
//   - A character device (such as /dev/null or a terminal) and a FIFO are
//     written straight through: opened for writing, never truncated,
//     created or renamed over. So is the path "-" when the Stdout option
//     names standard output; without it "-" is an ordinary file name. A
//     path naming an open descriptor of the process, "/dev/fd/N" or
//     "/proc/self/fd/N" (where /dev/stdout and /dev/stderr lead), is written
//     through a duplicate of that descriptor, whatever it refers to: a
//     terminal, a pipe, or a file the shell opened with > or >>, which is
//     appended to or overwritten as the shell asked, not replaced.
//   - A directory, a block device, a socket or any other kind of file is
//     refused with an error wrapping ErrRefused.
//
// The options ReplaceOnly and NotSameAs refuse, also with ErrRefused, a
// destination that exists but is not something this output may replace
// (say, a cache path that holds a file that is not a cache) or that is
// one of the command's inputs. Check applies all the rules without
// writing anything, so that a command can check every output before it
// starts its work; Create applies them again when the write starts.
package atomicfile
