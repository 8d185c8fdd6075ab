#include "sim/output/file_copy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sim/output.hpp"

namespace lattica {

namespace {

/// The parts of an HDF5 superblock that say how long the file is.
struct Superblock {
  int version = 0;
  int64_t base = 0;  ///< base address
  int64_t end = 0;   ///< end-of-file address, relative to the base
  int end_at = 0;    ///< where the end-of-file address is in the file
};

/// Reads the superblock at the start of a file; false when it has none this reader knows.
bool read_superblock(const std::string& path, Superblock& s) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[64] = {};
  in.read(reinterpret_cast<char*>(b), sizeof b);
  const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (in.gcount() < 48 || std::memcmp(b, signature, 8) != 0) return false;
  s.version = b[8];
  // Superblock versions 0/1 keep the sizes at bytes 13/14 and the addresses after 24 (28 for
  // version 1) bytes; versions 2/3 keep them at 9/10 and after 12 bytes.
  const int offsets = s.version <= 1 ? b[13] : b[9];
  const int first_address = s.version == 0 ? 24 : s.version == 1 ? 28 : 12;
  if (offsets != 8 || s.version > 3) return false;
  auto address = [&](int at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];  // little-endian
    return static_cast<int64_t>(v);
  };
  s.base = address(first_address);
  s.end_at = first_address + 16;  // after the base and one more address
  s.end = address(s.end_at);
  return true;
}

/// Flushes a file's data to the disk (HDF5's flush leaves it to the operating system).
void sync_to_disk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw HdfError("cannot flush " + path + " to disk: " + why);
  }
  ::close(fd);
}

}  // namespace

std::string working_copy_path(const std::string& output_path) { return output_path + ".tmp"; }

int64_t recorded_length(const std::string& path) {
  Superblock s;
  return read_superblock(path, s) ? s.base + s.end : -1;
}

std::string match_recorded_length(const std::string& path) {
  Superblock s;
  if (!read_superblock(path, s)) return "";
  std::error_code ec;
  const auto actual = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw HdfError("cannot read the size of " + path + ": " + ec.message());
  const int64_t recorded = s.base + s.end;
  if (recorded < actual) {
    // Versions 2 and 3 protect the superblock with a checksum; sim writes version 0.
    if (s.version > 1) {
      throw HdfError(path + " is longer than its (version " + std::to_string(s.version) +
                     ") superblock records; it cannot be continued safely");
    }
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>((actual - s.base) >> (8 * i));
    std::fstream io(path, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(s.end_at);
    io.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
    io.flush();
    if (!io) throw HdfError("cannot write the superblock of " + path);
    return "raised the end of file its superblock records over " +
           std::to_string(actual - recorded) + " bytes written after it";
  }
  if (recorded > actual) {
    std::filesystem::resize_file(path, static_cast<uintmax_t>(recorded), ec);
    if (ec) {
      throw HdfError("cannot pad " + path + " to " + std::to_string(recorded) +
                     " bytes: " + ec.message());
    }
    return "padded the file to the length its superblock records";
  }
  return "";
}

void trim_to_recorded_length(const std::string& path) {
  const int64_t recorded = recorded_length(path);
  std::error_code ec;
  const auto actual = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (recorded < 0 || ec || actual <= recorded) return;
  std::filesystem::resize_file(path, static_cast<uintmax_t>(recorded), ec);
  if (ec) throw HdfError("cannot trim " + path + " to its recorded length: " + ec.message());
}

void copy_whole_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(to, ignored);
    throw HdfError("cannot copy " + from + " to " + to + ": " + ec.message());
  }
}

void replace_by(const std::string& working, const std::string& path) {
  sync_to_disk(working);
  if (std::rename(working.c_str(), path.c_str()) != 0)
    throw HdfError("cannot rename " + working + " to " + path + ": " + std::strerror(errno));
  sync_directory_of(path);
}

void sync_directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace lattica
