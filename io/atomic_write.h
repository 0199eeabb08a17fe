// Output files written whole or not at all: an unnamed file in the target's directory
// (O_TMPFILE) that gets its name only at Commit, so a process killed mid-write (SIGKILL, the OOM
// killer) leaves nothing behind; where the file system has no unnamed files (NFS, older
// overlayfs) a temporary sibling "<path>.tmp-XXXXXX" created exclusively. Either is then linked
// at the target when there is none, else renamed over it. A reader never sees half a file, a full
// disk leaves the old file (or none) rather than a truncated one, and the temporary is a new file
// created with O_EXCL under an unpredictable name, so a symbolic link planted by another user who
// can write the directory is never followed (the rename replaces a link at the target itself, never
// what it points to). A target that exists and is not a regular file (a symbolic link, a device
// node such as /dev/null, a FIFO, a directory) is refused (FailedPrecondition naming it and its
// type), checked at Create and again just before the rename: an output never replaces one. Files
// get 0666 & ~umask, like any file the user creates.
//
// Thread-safety: no shared state. Cost: one write of the contents, one rename.
#ifndef ROASTCOFFEA_IO_ATOMIC_WRITE_H_
#define ROASTCOFFEA_IO_ATOMIC_WRITE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

struct AtomicWriteOptions {
  // fsync before the rename, so the new contents survive a crash of the machine. Off for
  // caches that are regenerated when damaged: the rename alone still keeps readers from ever
  // seeing half a file.
  bool sync = true;
  // Writes around the page cache (O_DIRECT, in aligned 1 MiB blocks; the tail buffered) on a
  // local ext4, XFS or Btrfs file system that allows it, else as usual (network and FUSE file
  // systems, overlayfs, tmpfs). For large files written once
  // and synced: the kernel's copy of a 10^6-chunk measurement into the page cache was over half
  // the CPU time of saving it. The file's contents are the same either way.
  bool direct = false;
};

// A file written in pieces and committed at the end. Destroying it without Commit removes the
// temporary and leaves the target as it was.
class AtomicFileWriter {
 public:
  // Creates the unnamed file (else "<path>.tmp-XXXXXX") next to `path`. Errors name `path` and
  // the OS's reason.
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Create(
      const std::string& path, const AtomicWriteOptions& options = {});
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Buffered; an error (disk full, ...) is reported here or by Commit.
  absl::Status Append(absl::string_view data);
  // From here on, writes around the page cache as AtomicWriteOptions::direct does (the bytes up
  // to the next 4 KiB boundary of the file still through it), where the file system allows:
  // for a file whose first part is read back soon and the rest seldom.
  absl::Status SwitchToDirect();
  // Flushes, closes and renames over the target. After an error nothing is left behind.
  absl::Status Commit();

 private:
  struct FreeAligned {
    void operator()(char* p) const;
  };
  AtomicFileWriter(int fd, std::string path, std::string temporary, bool sync);
  absl::Status Flush();
  absl::Status AppendDirect(absl::string_view data);
  absl::Status FlushDirect(bool last);
  void StartDirect();
  absl::Status WriteAll(const char* data, size_t size);
  // For Commit of an unnamed file: links it at path_ when path_ does not exist, else under a
  // fresh temporary_ (copied there where it cannot be linked). 0 or an errno.
  int NameTheUnnamedFile();
  int fd_;
  const std::string path_;
  std::string temporary_;  // "" while the file is unnamed (O_TMPFILE)
  const bool sync_;
  std::string buffer_;
  // O_DIRECT mode: its aligned buffer and the bytes in it; null when writing as usual.
  std::unique_ptr<char, FreeAligned> aligned_;
  size_t aligned_size_ = 0;
  // Bytes still to write through the page cache before the file offset is aligned and O_DIRECT
  // is turned on.
  size_t unaligned_left_ = 0;
  absl::Status error_;
};

namespace io_internal {
// The process's umask (what files the user creates get), read without changing it.
mode_t ProcessUmask();
// For tests of file systems where an unnamed file cannot be linked (no /proc, no
// CAP_DAC_READ_SEARCH): while set, Commit takes the path it takes there, a copy to a named
// temporary renamed over the target. Process-wide; not for production code.
void SetUnnamedFilesUnlinkableForTesting(bool unlinkable);
}  // namespace io_internal

// The whole of `contents` into `path`, atomically (above).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_ATOMIC_WRITE_H_
