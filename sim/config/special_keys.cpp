// The keys whose values have checks of their own: lattice.dims, parallel.grid, run.walltime.

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "sim/config/reader.hpp"

namespace lattica::config {

std::optional<double> parse_walltime(const std::string& text) {
  int days = 0, hours = 0, minutes = 0, seconds = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d-%d:%d:%d%c", &days, &hours, &minutes, &seconds, &tail) == 4 ||
      (days = 0, std::sscanf(text.c_str(), "%d:%d:%d%c", &hours, &minutes, &seconds, &tail) == 3)) {
    if (days >= 0 && hours >= 0 && minutes >= 0 && minutes < 60 && seconds >= 0 && seconds < 60 &&
        (days + hours + minutes + seconds) > 0)
      return ((days * 24.0 + hours) * 60.0 + minutes) * 60.0 + seconds;
  }
  return std::nullopt;
}

/// lattice.dims: 1 to 4 even sizes >= 2 whose volume fits the RNG site numbering and memory.
std::vector<int64_t> Reader::dims(const KeySpec& spec, const toml::node* node) {
  const std::string name = spec.name(), what = spec.hint;
  if (!node) {
    missing(name, what);
    return {};
  }
  const auto* array = node->as_array();
  if (!array || array->size() < 1 || array->size() > 4) {
    fail(*node, name, "expected " + what);
    return {};
  }
  std::vector<int64_t> dims;
  for (const toml::node& element : *array) {
    const auto* v = element.as_integer();
    if (!v) {
      fail(*node, name, "every size must be an integer");
      return {};
    }
    dims.push_back(v->get());
  }
  for (int64_t l : dims) {
    if (l < 2) {
      fail(*node, name, "every size must be >= 2");
      return {};
    }
    if (l % 2 != 0) {
      fail(*node, name,
           "every size must be even (the checkerboard update needs a bipartite periodic lattice)");
      return {};
    }
  }
  // At most 2^40 sites: the Philox counter names sites with 40 bits.
  long double volume = 1;
  for (int64_t l : dims) volume *= static_cast<long double>(l);
  if (volume > static_cast<long double>(kMaxRngSites)) {
    fail(*node, name,
         "the lattice has more than 2^40 sites, the most the random-number counter can name");
    return {};
  }
  // Host memory is checked once the whole input is read (check_run_limits): it depends on the
  // model, the replicas and how many ranks share the lattice.
  return dims;
}

/// parallel.grid: boxes per axis, one entry per lattice axis (checked against the lattice and
/// the ranks when the run starts, by Decomposition).
std::vector<int> Reader::grid(const KeySpec& spec, const toml::node& node) {
  const auto* array = node.as_array();
  std::vector<int> grid;
  if (array) {
    for (const toml::node& element : *array) {
      const auto* v = element.as_integer();
      if (!v || v->get() < 1 || v->get() > (1 << 20)) break;
      grid.push_back(static_cast<int>(v->get()));
    }
  }
  if (!array || array->size() < 1 || array->size() > 4 || grid.size() != array->size()) {
    fail(node, spec.name(),
         "expected an array of 1 to 4 box counts >= 1, one per lattice axis, e.g. [2, 2, 1]");
    return {};
  }
  return grid;
}

/// run.walltime: a string "[D-]HH:MM:SS", or the same unquoted (a TOML time of day), longer
/// than the margin kept for the final checkpoint; empty (with an error) when not.
std::string Reader::duration(const KeySpec& spec, const toml::node& node) {
  std::string text;
  if (const auto* s = node.as_string()) text = s->get();
  if (const auto* t = node.as_time()) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%02d:%02d:%02d", t->get().hour, t->get().minute,
                  t->get().second);
    text = buffer;
  }
  const std::optional<double> seconds = parse_walltime(text);
  if (!seconds) {
    fail(node, spec.name(), "must be a duration \"[D-]HH:MM:SS\", e.g. \"23:50:00\"");
    return "";
  }
  if (*seconds <= kWalltimeMarginSeconds) {
    // The run stops once no more than the margin remains: it would stop after its first
    // sweeps, and a requeued job would advance a few sweeps per job.
    const std::string margin = std::to_string(static_cast<int>(kWalltimeMarginSeconds));
    fail(node, spec.name(),
         std::to_string(static_cast<long long>(*seconds)) + " s is within the " + margin +
             " s safety margin the run keeps for its final checkpoint, so it would stop after "
             "its first sweeps; give more than " +
             margin + " s, or no walltime");
    return "";
  }
  return text;
}

}  // namespace lattica::config
