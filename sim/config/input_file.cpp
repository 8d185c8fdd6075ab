// Reading an input file: bounded in size, and safe on directories, FIFOs and endless files.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/config/internal.hpp"

namespace lattica::config {

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError({path + ": cannot read the input file: it is a directory"});
  // Non-blocking open: a FIFO without a writer reads as empty instead of waiting forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw ConfigError({path + ": cannot read the input file: " + std::strerror(errno)});
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // then wait for a slow writer
  // At most one byte past the cap: enough to tell that an input (or /dev/zero) is too large.
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= kMaxInputBytes) {
    const size_t want = std::min(sizeof buffer, kMaxInputBytes + 1 - text.size());
    const ssize_t n = ::read(fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw ConfigError({path + ": error while reading the input file: " + std::strerror(error)});
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (text.size() > kMaxInputBytes) {
    throw ConfigError({path + ": the input file is larger than " +
                       std::to_string(kMaxInputBytes >> 20) +
                       " MiB, the most an input may hold (is it the right file?)"});
  }
  return text;
}

}  // namespace lattica::config
