#pragma once
// One run at a time owns an output file and its checkpoint: the lock file OUTPUT.lock next to
// the output, taken before anything touches either and held until the run ends.

#include <string>

namespace lattica {

/// The lock file of an output file.
std::string lock_path(const std::string& output_path);

/// Holds the lock of one output file. The lock is an exclusive flock() on OUTPUT.lock, which
/// the kernel drops when its holder dies (kill -9, a node reboot), so a crashed run's lock never
/// blocks its resume. On a filesystem without flock() the file's existence is the lock
/// (O_EXCL); one left by a process of this host that no longer exists is taken over. The file
/// holds "PID HOST" of its holder and is removed when the lock is released.
class OutputLock {
 public:
  OutputLock() = default;
  /// Takes the lock of `output_path`. Throws InputError (exit 2) naming the holder when another
  /// live process holds it, std::runtime_error when the lock file cannot be made (e.g. the
  /// directory is missing or read-only).
  explicit OutputLock(const std::string& output_path);
  OutputLock(OutputLock&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
  OutputLock& operator=(OutputLock&& o) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock() { release(); }

  /// Removes the lock file and drops the lock (removed first, so that a process waiting on the
  /// old file notices it is gone); nothing when not held.
  void release();

 private:
  /// Writes "PID HOST" of this process into the lock file now held as fd.
  void take(int fd);
  std::string path_;
  int fd_ = -1;
};

}  // namespace lattica
