#include "sim/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/output/file_copy.hpp"

namespace lattica {

namespace {

constexpr char kMagic[8] = {'L', 'A', 'T', 'C', 'K', 'P', 'T', '1'};
constexpr uint32_t kVersion = 1;       // the configuration inside
constexpr uint32_t kPartsVersion = 2;  // a manifest: the parts first, then version 1's payload
constexpr uint32_t kMulticanonicalVersion = 5;   // a MulticanonicalCheckpoint (5: refinement)
constexpr uint32_t kMulticanonicalVersion4 = 4;  // read too: no refinement (3: integer series)
constexpr uint32_t kByteOrderMark = 0x01020304;  // refuses files from the other endianness

/// FNV-1a over the payload: detects a truncated or damaged file.
uint64_t checksum(const unsigned char* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return h;
}

class Writer {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const unsigned char*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  template <class T>
  void put(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
  std::vector<unsigned char> bytes;
};

class Reader {
 public:
  Reader(const unsigned char* data, size_t size, const std::string& path)
      : data_(data), size_(size), path_(path) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  std::string get_string() {
    const auto n = get<uint64_t>();
    const unsigned char* p = take(n);
    return std::string(p, p + n);
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<uint64_t>();
    if (n > size_ / sizeof(T) + 1) fail("a length beyond the file");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  bool done() const { return offset_ == size_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw CheckpointError("checkpoint " + path_ + ": " + why);
  }

 private:
  const unsigned char* take(size_t n) {
    if (n > size_ - offset_) fail("truncated");
    const unsigned char* p = data_ + offset_;
    offset_ += n;
    return p;
  }
  const unsigned char* data_;
  size_t size_, offset_ = 0;
  std::string path_;
};

/// The description of a decomposed checkpoint's parts.
void serialize_parts(Writer& w, const CheckpointParts& p) {
  w.put(p.generation);
  w.put(p.dims);
  w.put(p.grid);
  w.put(p.replicas);
  w.put(p.site_bytes);
}

void deserialize_parts(Reader& r, CheckpointParts& p) {
  p.generation = r.get_string();
  p.dims = r.get_vector<int64_t>();
  p.grid = r.get_vector<int>();
  p.replicas = r.get<int32_t>();
  p.site_bytes = r.get<uint64_t>();
  const bool fits = !p.generation.empty() && p.generation.find('/') == std::string::npos &&
                    p.generation != "." && p.generation != ".." && p.dims.size() == p.grid.size() &&
                    !p.dims.empty() && p.replicas > 0 && p.site_bytes > 0;
  if (!fits) r.fail("its description of the parts is damaged");
}

std::vector<unsigned char> serialize(const Checkpoint& c) {
  Writer w;
  if (!c.parts.generation.empty()) serialize_parts(w, c.parts);
  w.put(c.chain_config);
  w.put(c.sweep);
  w.put(c.last_snapshot);
  w.put(c.output);
  const EngineState& e = c.engine;
  w.put(e.configuration);
  w.put<uint64_t>(e.histograms.size());
  for (const ExactHistogram& h : e.histograms) {
    w.put(h.name);
    w.put(h.samples);
    std::vector<long long> values, counts;
    for (const auto& [value, count] : h.counts) {
      values.push_back(value);
      counts.push_back(count);
    }
    w.put(values);
    w.put(counts);
  }
  const StructureFactorSums& s = e.structure_factor;
  w.put(s.dims);
  w.put(s.components);
  w.put(s.samples);
  w.put(s.power_sum);
  w.put(s.power_squares);
  w.put(s.mean_field_sum);
  w.put(s.min_axes);
  w.put(e.measurements);
  w.put(e.tuning);
  w.put(e.langevin_shift_set);
  // Parallel tempering's permutation and statistics, only when tempered (untempered
  // checkpoints keep the layout they always had).
  const TemperingState& t = e.tempering;
  if (t.rungs > 0) {
    w.put<int32_t>(t.rungs);
    w.put(t.rung_of_slot);
    w.put(t.direction);
    w.put(t.bottom_sweep);
    w.put(t.attempts);
    w.put(t.accepts);
    w.put(t.round_trip_sweeps);
    w.put(t.up_visits);
    w.put(t.down_visits);
    // The feedback-optimised ladder, appended: checkpoints from before it still read.
    w.put(t.ladder);
    w.put(t.feedback_up_fraction);
    w.put(t.feedback_ladders);
  }
  return w.bytes;
}

/// Refuses contents no run writes, whatever its input: negative counts, a snapshot after the
/// checkpoint, histograms that do not add up, sums or steps that are not finite. (The checksum
/// only shows that the file is as written.)
void check_counts(const Checkpoint& c, const Reader& r) {
  auto number = [](auto x) { return std::to_string(x); };
  if (c.sweep < 0) r.fail("the sweep count " + number(c.sweep) + " is negative");
  if (c.last_snapshot < -1 || c.last_snapshot > c.sweep) {
    r.fail("the last snapshot, at sweep " + number(c.last_snapshot) +
           ", is not between -1 (none) and the checkpoint's sweep " + number(c.sweep));
  }
  const OutputLengths& o = c.output;
  const std::pair<const char*, int64_t> rows[] = {
      {"measurements", o.measurements},
      {"snapshots", o.snapshots},
      {"structure factor series", o.structure_factor_series},
      {"time slices", o.timeslices}};
  for (const auto& [what, n] : rows) {
    if (n < 0) r.fail("the output's rows of " + std::string(what) + " are " + number(n));
  }
  const EngineState& e = c.engine;
  if (e.measurements < 0)
    r.fail("the measurement count " + number(e.measurements) + " is negative");
  for (const ExactHistogram& h : e.histograms) {
    long long total = 0;
    for (const auto& [value, count] : h.counts) {
      if (count <= 0 || total > std::numeric_limits<long long>::max() - count)
        r.fail("histogram '" + h.name + "' has a count of " + number(count));
      total += count;
    }
    if (total != h.samples) {
      r.fail("histogram '" + h.name + "' records " + number(h.samples) +
             " samples but its counts add up to " + number(total));
    }
  }
  const StructureFactorSums& sf = e.structure_factor;
  auto all_finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (sf.samples < 0 || !all_finite(sf.power_sum) || !all_finite(sf.power_squares) ||
      !all_finite(sf.mean_field_sum))
    r.fail("the structure factor's sums are negative or not finite");
  const StepTuning& t = e.tuning;
  if (t.applies && !(std::isfinite(t.step) && t.step > 0))
    r.fail("the Metropolis step " + number(t.step) + " is not a finite number > 0");
  if (t.langevin &&
      !(std::isfinite(t.langevin_step) && t.langevin_step > 0 && std::isfinite(t.langevin_shift)))
    r.fail("the Langevin step or shift is not finite");
}

Checkpoint deserialize(Reader& r, bool parts) {
  Checkpoint c;
  if (parts) deserialize_parts(r, c.parts);
  c.chain_config = r.get_string();
  c.sweep = r.get<int64_t>();
  c.last_snapshot = r.get<int64_t>();
  c.output = r.get<OutputLengths>();
  EngineState& e = c.engine;
  e.configuration = r.get_vector<unsigned char>();
  const auto histograms = r.get<uint64_t>();
  for (uint64_t i = 0; i < histograms; ++i) {
    ExactHistogram h;
    h.name = r.get_string();
    h.samples = r.get<long long>();
    const auto values = r.get_vector<long long>();
    const auto counts = r.get_vector<long long>();
    if (values.size() != counts.size()) r.fail("a histogram's values and counts differ in length");
    for (size_t k = 0; k < values.size(); ++k) h.counts[values[k]] = counts[k];
    e.histograms.push_back(std::move(h));
  }
  StructureFactorSums& s = e.structure_factor;
  s.dims = r.get_vector<int64_t>();
  s.components = r.get<int>();
  s.samples = r.get<int64_t>();
  s.power_sum = r.get_vector<double>();
  s.power_squares = r.get_vector<double>();
  s.mean_field_sum = r.get_vector<double>();
  s.min_axes = r.get_vector<int>();
  e.measurements = r.get<int64_t>();
  e.tuning = r.get<StepTuning>();
  e.langevin_shift_set = r.get<bool>();
  if (!r.done()) {
    TemperingState& t = e.tempering;
    t.rungs = r.get<int32_t>();
    t.rung_of_slot = r.get_vector<int32_t>();
    t.direction = r.get_vector<int8_t>();
    t.bottom_sweep = r.get_vector<int64_t>();
    t.attempts = r.get_vector<int64_t>();
    t.accepts = r.get_vector<int64_t>();
    t.round_trip_sweeps = r.get_vector<int64_t>();
    t.up_visits = r.get_vector<int64_t>();
    t.down_visits = r.get_vector<int64_t>();
    if (!r.done()) {
      t.ladder = r.get_vector<double>();
      t.feedback_up_fraction = r.get_vector<double>();
      t.feedback_ladders = r.get_vector<double>();
    }
    if (t.rungs < 2) r.fail("a tempering ladder of " + std::to_string(t.rungs) + " rungs");
  }
  if (!r.done()) r.fail("unexpected data after the end");
  check_counts(c, r);
  return c;
}

[[noreturn]] void fail_io(const std::string& what, const std::string& path) {
  throw CheckpointError("cannot " + what + " checkpoint " + path + ": " + std::strerror(errno));
}

}  // namespace

std::string checkpoint_path(const std::string& output_path) { return output_path + ".checkpoint"; }

namespace {

/// Replaces the file at path atomically by the header (format `version`) and `payload`.
void write_checkpoint_file(const std::string& path, uint32_t version,
                           const std::vector<unsigned char>& payload) {
  Writer header;
  for (char m : kMagic) header.put(m);
  header.put(version);
  header.put(kByteOrderMark);
  header.put<uint64_t>(payload.size());
  header.put(checksum(payload.data(), payload.size()));
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_io("create", temporary);
  auto write_all = [&](const std::vector<unsigned char>& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : ENOSPC;
        ::close(fd);
        ::unlink(temporary.c_str());
        errno = error;
        fail_io("write", temporary);
      }
      done += static_cast<size_t>(n);
    }
  };
  write_all(header.bytes);
  write_all(payload);
  // The data reaches the disk before the rename makes it the checkpoint.
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    errno = error;
    fail_io("flush", temporary);
  }
  if (::close(fd) != 0) fail_io("close", temporary);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail_io("rename into place", path);
  sync_directory_of(path);  // and the rename reaches the disk
}

/// A checkpoint file's format version and payload, its header and checksum checked.
std::pair<uint32_t, std::vector<unsigned char>> read_checkpoint_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail_io("open", path);
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  const bool error = std::ferror(f);
  std::fclose(f);
  if (error) fail_io("read", path);
  Reader header(bytes.data(), bytes.size(), path);
  for (char m : kMagic) {
    if (header.get<char>() != m) header.fail("not a Lattica checkpoint");
  }
  const auto version = header.get<uint32_t>();
  if (version != kVersion && version != kPartsVersion && version != kMulticanonicalVersion &&
      version != kMulticanonicalVersion4)
    header.fail("written by another format version");
  if (header.get<uint32_t>() != kByteOrderMark)
    header.fail("written on a machine of other byte order");
  const auto size = header.get<uint64_t>();
  const auto sum = header.get<uint64_t>();
  const size_t start = sizeof kMagic + 2 * sizeof(uint32_t) + 2 * sizeof(uint64_t);
  if (bytes.size() - start != size) header.fail("truncated");
  if (checksum(bytes.data() + start, size) != sum) header.fail("checksum mismatch (damaged)");
  return {version, std::vector<unsigned char>(bytes.begin() + start, bytes.end())};
}

}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  write_checkpoint_file(path, c.parts.generation.empty() ? kVersion : kPartsVersion, serialize(c));
}

Checkpoint read_checkpoint(const std::string& path) {
  const auto [version, payload] = read_checkpoint_file(path);
  Reader r(payload.data(), payload.size(), path);
  if (version == kMulticanonicalVersion || version == kMulticanonicalVersion4)
    r.fail("a multicanonical run's checkpoint ([multicanonical])");
  return deserialize(r, version == kPartsVersion);
}

void write_multicanonical_checkpoint(const std::string& path, const MulticanonicalCheckpoint& c) {
  Writer w;
  w.put(c.chain_config);
  w.put(c.sweep);
  w.put(c.phase);
  w.put(c.phase_done);
  w.put(c.wang_landau_sweeps);
  w.put(c.lnf);
  w.put(c.stages);
  w.put(c.log_g);
  w.put(c.stage_counts);
  w.put(c.visited);
  w.put(c.refine_iterations);
  w.put(c.refine_pair_weight);
  w.put(c.refine_pair_sum);
  w.put(c.log_weight);
  w.put(c.histogram);
  w.put(c.sweeps);
  w.put(c.energy_series);
  w.put(c.order_series);
  w.put(c.spins);
  write_checkpoint_file(path, kMulticanonicalVersion, w.bytes);
}

MulticanonicalCheckpoint read_multicanonical_checkpoint(const std::string& path) {
  const auto [version, payload] = read_checkpoint_file(path);
  Reader r(payload.data(), payload.size(), path);
  if (version != kMulticanonicalVersion && version != kMulticanonicalVersion4)
    r.fail("not a multicanonical run's checkpoint");
  MulticanonicalCheckpoint c;
  c.chain_config = r.get_string();
  c.sweep = r.get<uint64_t>();
  c.phase = r.get<int32_t>();
  c.phase_done = r.get<int64_t>();
  c.wang_landau_sweeps = r.get<int64_t>();
  c.lnf = r.get<double>();
  c.stages = r.get<int32_t>();
  c.log_g = r.get_vector<double>();
  c.stage_counts = r.get_vector<uint64_t>();
  c.visited = r.get_vector<uint8_t>();
  if (version != kMulticanonicalVersion4) {
    c.refine_iterations = r.get<int64_t>();
    c.refine_pair_weight = r.get_vector<double>();
    c.refine_pair_sum = r.get_vector<double>();
  }
  c.log_weight = r.get_vector<double>();
  c.histogram = r.get_vector<int64_t>();
  c.sweeps = r.get_vector<int64_t>();
  c.energy_series = r.get_vector<double>();
  c.order_series = r.get_vector<double>();
  c.spins = r.get_vector<uint8_t>();
  const size_t bins = c.log_g.size();
  const bool refined = !c.refine_pair_weight.empty();
  const bool fits =
      r.done() && c.phase >= 0 && c.phase <= 3 && c.phase_done >= 0 &&
      c.stage_counts.size() == bins && c.visited.size() == bins && c.refine_iterations >= 0 &&
      (refined || c.refine_iterations == 0) &&
      (!refined || (c.refine_pair_weight.size() == bins && c.refine_pair_sum.size() == bins)) &&
      (c.phase != 3 || refined) && (c.phase == 0 || c.log_weight.size() == bins) &&
      (c.phase != 2 ||
       (c.histogram.size() == bins && c.sweeps.size() == static_cast<size_t>(c.phase_done)));
  if (!fits) r.fail("holds what no multicanonical run writes");
  return c;
}

}  // namespace lattica
