#include "sim/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "sim/engine/engine.hpp"

namespace lattica {

namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

/// The "PID HOST" its holder wrote into the lock file; empty when there is none yet.
std::string read_holder(int fd) {
  char text[512] = {};
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  std::string holder = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder;
}

/// "process PID on HOST", or a plain description when the file names no holder.
std::string describe(const std::string& holder) {
  std::istringstream in(holder);
  long pid = 0;
  std::string host;
  if (!(in >> pid >> host)) return "another process";
  return "process " + std::to_string(pid) + " on " + host;
}

/// True only when the holder is surely gone: a process of this host that no longer exists.
bool holder_is_gone(const std::string& holder) {
  std::istringstream in(holder);
  long pid = 0;
  std::string host;
  if (!(in >> pid >> host) || pid <= 0 || host != this_host()) return false;
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

/// Whether fd is still the file at path (its holder may have removed it since we opened it).
bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/// flock() errors of a filesystem that has no locks (some Lustre and NFS mounts).
bool locks_unsupported(int error) {
  return error == ENOLCK || error == ENOSYS || error == EOPNOTSUPP || error == EINVAL;
}

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw std::runtime_error("cannot " + what + " the lock file " + path + ": " +
                           std::strerror(error));
}

}  // namespace

std::string lock_path(const std::string& output_path) { return output_path + ".lock"; }

OutputLock::OutputLock(const std::string& output_path) : path_(lock_path(output_path)) {
  // A few tries: each retry follows a lock file that another process removed meanwhile.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const bool created = fd >= 0;
    if (!created) {
      if (errno != EEXIST) fail("create", path_, errno);
      fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT) continue;
      if (fd < 0) fail("open", path_, errno);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // An existing file whose lock we got was left by a dead run: ours now.
      if (same_file(fd, path_)) {
        take(fd);
        return;
      }
      ::close(fd);
      continue;
    }
    const int error = errno;
    const std::string holder = read_holder(fd);
    if (error == EWOULDBLOCK) {
      ::close(fd);
      throw InputError("the output " + output_path + " is in use by " + describe(holder) +
                       " (it holds " + path_ + "); wait for it to finish or stop it first");
    }
    if (!locks_unsupported(error)) {
      ::close(fd);
      fail("lock", path_, error);
    }
    // No locks on this filesystem: whoever created the file holds the lock.
    if (created) {
      take(fd);
      return;
    }
    ::close(fd);
    if (!holder_is_gone(holder)) {
      throw InputError("the output " + output_path + " is in use by " + describe(holder) +
                       " (it holds " + path_ + ", on a filesystem without locks); if that run " +
                       "is gone, remove " + path_);
    }
    ::unlink(path_.c_str());  // left by a run of this host that no longer exists
  }
  throw std::runtime_error("cannot take the lock file " + path_ + ": it keeps changing");
}

OutputLock& OutputLock::operator=(OutputLock&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void OutputLock::take(int fd) {
  fd_ = fd;
  const std::string holder = std::to_string(getpid()) + " " + this_host() + "\n";
  // The holder's name is for messages only; failing to write it leaves the lock held.
  if (::ftruncate(fd, 0) == 0) {
    (void)!::pwrite(fd, holder.data(), holder.size(), 0);
  }
}

void OutputLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace lattica
