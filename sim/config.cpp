#include "sim/config.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace lattica {

namespace {

// The schema: every section and key a Lattica input may hold.
struct KeyRule {
  const char* section;
  const char* key;
};
constexpr KeyRule kSchema[] = {
    {"lattice", "dims"},
    {"model", "kind"},
    {"model", "q"},
    {"model", "n"},
    {"model", "beta"},
    {"model", "kappa"},
    {"model", "lambda"},
    {"model", "h"},
    {"model", "precision"},
    {"update", "algorithm"},
    {"update", "sequence"},
    {"update", "hits"},
    {"update", "step"},
    {"update", "tune"},
    {"update", "target_acceptance"},
    {"update", "langevin_step"},
    {"update", "multispin"},
    {"run", "thermalization"},
    {"run", "measurements"},
    {"run", "measure_every"},
    {"run", "seed"},
    {"run", "backend"},
    {"run", "start"},
    {"run", "threads"},
    {"run", "device"},
    {"run", "replicas"},
    {"run", "checkpoint_every"},
    {"run", "checkpoint_minutes"},
    {"run", "walltime"},
    {"measure", "structure_factor"},
    {"measure", "structure_factor_every"},
    {"measure", "timeslice"},
    {"measure", "timeslice_every"},
    {"measure", "timeslice_momenta"},
    {"output", "path"},
    {"output", "snapshot_every"},
    {"output", "snapshot_packing"},
    {"output", "flush_every"},
    {"parallel", "grid"},
};
// Keys a sweep may vary: a list of values (a list of arrays for lattice.dims) or, for numbers,
// a table {start, stop, num}. Points are the cartesian product, in this order of keys.
constexpr KeyRule kSweepable[] = {{"lattice", "dims"},
                                  {"model", "beta"},
                                  {"model", "kappa"},
                                  {"model", "lambda"},
                                  {"model", "h"}};
constexpr int64_t kMaxSweepPoints = 100000;
constexpr const char* kSections[] = {"lattice", "model", "update", "run",
                                     "measure", "output", "parallel"};

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

/// "file:line:column" for a node from the file; the override text for a node from --set.
std::string where(const toml::source_region& region, const std::string& fallback) {
  const std::string path = region.path ? *region.path : fallback;
  if (path.rfind("--", 0) == 0) return path;
  if (region.begin.line == 0) return path;
  return path + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

/// Where a key came from: its own position, or, for keys and sections that --set created (which
/// have none), the position of the value the override supplied.
std::string where_key(const toml::key& key, const toml::node& value, const std::string& fallback) {
  if (key.source().path) return where(key.source(), fallback);
  if (value.source().path) return where(value.source(), fallback);
  if (const toml::table* t = value.as_table()) {
    for (auto&& [k, v] : *t) return where_key(k, v, fallback);
  }
  return fallback;
}

/// The shortest text that reads back to the same double: 0.3, not 0.2999...; always reads as
/// a float (1.0, not 1).
std::string shortest(double x) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
  std::string text(buffer, end);
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

/// Seconds of a duration "[D-]HH:MM:SS" (Slurm's format), or nothing when malformed.
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

/// Whether an update sequence has a whole-lattice Langevin pass.
bool uses_langevin(const std::vector<std::string>& sequence) {
  return std::any_of(sequence.begin(), sequence.end(),
                     [](const std::string& a) { return a == "langevin" || a == "mala"; });
}

std::string show(const toml::node& node) {
  std::ostringstream os;
  if (const auto* f = node.as_floating_point()) return shortest(f->get());
  node.visit([&](auto&& v) { os << v; });
  std::string s = os.str();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

/// Typed, validated access to the keys of a parsed input; collects every problem.
/// Values that replace swept keys for one point of a sweep: "section.key" -> value.
using Substitutions = std::map<std::string, const toml::node*>;

class Reader {
 public:
  Reader(const toml::table& root, std::string source, std::vector<std::string>& errors,
         Substitutions substitutions = {})
      : root_(root),
        source_(std::move(source)),
        errors_(errors),
        substitutions_(std::move(substitutions)) {}

  const toml::node* find(const char* section, const char* key) const {
    const auto s = substitutions_.find(std::string(section) + "." + key);
    if (s != substitutions_.end()) return s->second;
    const toml::table* t = root_[section].as_table();
    return t ? t->get(key) : nullptr;
  }

  void fail(const toml::node& node, const std::string& name, const std::string& reason) {
    errors_.push_back(where(node.source(), source_) + ": " + name + " = " + show(node) + ": " +
                      reason);
  }

  void missing(const std::string& name, const std::string& what) {
    errors_.push_back(source_ + ": " + name + " is missing; it is required (" + what + ")");
  }

  /// An integer in [lo, hi]; `fallback` when absent (or required when there is none).
  int64_t integer(const char* section, const char* key, std::optional<int64_t> fallback, int64_t lo,
                  int64_t hi, const std::string& what) {
    const std::string name = std::string(section) + "." + key;
    const toml::node* node = find(section, key);
    if (!node) {
      if (!fallback) missing(name, what);
      return fallback.value_or(lo);
    }
    const auto* v = node->as_integer();
    if (!v) {
      fail(*node, name, "expected an integer (" + what + ")");
      return lo;
    }
    const int64_t x = v->get();
    if (x < lo || x > hi) {
      fail(*node, name,
           "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (" + what +
               ")");
      return lo;
    }
    return x;
  }

  /// A finite number (integer or float) >= lo; `fallback` when absent.
  double number(const char* section, const char* key, std::optional<double> fallback, double lo,
                const std::string& what) {
    const std::string name = std::string(section) + "." + key;
    const toml::node* node = find(section, key);
    if (!node) {
      if (!fallback) missing(name, what);
      return fallback.value_or(0.0);
    }
    std::optional<double> x;
    if (const auto* f = node->as_floating_point()) x = f->get();
    if (const auto* i = node->as_integer()) x = static_cast<double>(i->get());
    if (!x) {
      fail(*node, name, "expected a number (" + what + ")");
      return 0.0;
    }
    if (!std::isfinite(*x)) {
      fail(*node, name, "must be a finite number (" + what + ")");
      return 0.0;
    }
    if (*x < lo) {
      std::ostringstream os;
      os << "must be >= " << lo << " (" << what << ")";
      fail(*node, name, os.str());
      return lo;
    }
    return *x;
  }

  /// One of `choices`; `fallback` when absent.
  std::string choice(const char* section, const char* key, std::optional<std::string> fallback,
                     const std::vector<std::string>& choices) {
    const std::string name = std::string(section) + "." + key;
    const std::string allowed = "one of \"" + join(choices, "\", \"") + "\"";
    const toml::node* node = find(section, key);
    if (!node) {
      if (!fallback) missing(name, allowed);
      return fallback.value_or(choices.front());
    }
    const auto* s = node->as_string();
    if (!s) {
      fail(*node, name, "expected a string, " + allowed);
      return choices.front();
    }
    for (const auto& c : choices) {
      if (s->get() == c) return c;
    }
    fail(*node, name, "must be " + allowed);
    return choices.front();
  }

  /// true or false; `fallback` when absent.
  bool boolean(const char* section, const char* key, bool fallback, const std::string& what) {
    const toml::node* node = find(section, key);
    if (!node) return fallback;
    if (const auto* b = node->as_boolean()) return b->get();
    fail(*node, std::string(section) + "." + key, "expected true or false (" + what + ")");
    return fallback;
  }

  /// An array of 1 to max_items strings, each one of `choices`; empty (with an error) when bad.
  std::vector<std::string> choice_list(const char* section, const char* key,
                                       const std::vector<std::string>& choices, size_t max_items) {
    const std::string name = std::string(section) + "." + key;
    const std::string allowed = "each one of \"" + join(choices, "\", \"") + "\"";
    const toml::node* node = find(section, key);
    const toml::array* array = node ? node->as_array() : nullptr;
    if (!array || array->empty() || array->size() > max_items) {
      if (node)
        fail(*node, name,
             "expected an array of 1 to " + std::to_string(max_items) + " strings, " + allowed);
      return {};
    }
    std::vector<std::string> items;
    for (const toml::node& element : *array) {
      const auto* v = element.as_string();
      const bool known = v && std::find(choices.begin(), choices.end(), v->get()) != choices.end();
      if (!known) {
        fail(*node, name, "entry " + show(element) + " is not allowed here: " + allowed);
        return {};
      }
      items.push_back(v->get());
    }
    return items;
  }

  /// A non-empty string; `fallback` when absent.
  std::string string(const char* section, const char* key, const std::string& fallback,
                     const std::string& what) {
    const std::string name = std::string(section) + "." + key;
    const toml::node* node = find(section, key);
    if (!node) return fallback;
    const auto* s = node->as_string();
    if (!s || s->get().empty()) {
      fail(*node, name, "expected a non-empty string (" + what + ")");
      return fallback;
    }
    return s->get();
  }

  /// lattice.dims: 2 to 4 even sizes >= 2 whose volume fits the RNG site numbering and memory.
  std::vector<int64_t> dims() {
    const char* name = "lattice.dims";
    const std::string what = "an array of 1 to 4 even lattice sizes, e.g. [64, 64]";
    const toml::node* node = find("lattice", "dims");
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
        fail(
            *node, name,
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
    // One byte per site for the spins and one for the lexicographic copy written to the output.
    const long double needed = 2 * volume;
    const long double available = static_cast<long double>(sysconf(_SC_PHYS_PAGES)) *
                                  static_cast<long double>(sysconf(_SC_PAGE_SIZE));
    if (available > 0 && needed > available) {
      std::ostringstream os;
      os.precision(3);
      os << "the lattice needs " << static_cast<double>(needed / (1L << 30))
         << " GiB of host memory but this machine has "
         << static_cast<double>(available / (1L << 30)) << " GiB";
      fail(*node, name, os.str());
      return {};
    }
    return dims;
  }

  /// parallel.grid: boxes per axis, one entry per lattice axis (checked against the lattice
  /// and the ranks when the run starts, by Decomposition); empty when not given.
  std::vector<int> grid() {
    const char* name = "parallel.grid";
    const toml::node* node = find("parallel", "grid");
    if (!node) return {};
    const auto* array = node->as_array();
    std::vector<int> grid;
    if (array) {
      for (const toml::node& element : *array) {
        const auto* v = element.as_integer();
        if (!v || v->get() < 1 || v->get() > (1 << 20)) break;
        grid.push_back(static_cast<int>(v->get()));
      }
    }
    if (!array || array->size() < 1 || array->size() > 4 || grid.size() != array->size()) {
      fail(*node, name,
           "expected an array of 1 to 4 box counts >= 1, one per lattice axis, e.g. [2, 2, 1]");
      return {};
    }
    return grid;
  }

  /// Reports sections and keys the schema does not know.
  void reject_unknown() {
    for (auto&& [section_key, section_node] : root_) {
      const std::string section(section_key.str());
      bool known_section = false;
      for (const char* s : kSections) known_section |= section == s;
      if (!known_section) {
        errors_.push_back(
            where_key(section_key, section_node, source_) + ": unknown section '" + section +
            "' (known sections: " + join({std::begin(kSections), std::end(kSections)}, ", ") + ")");
        continue;
      }
      const toml::table* table = section_node.as_table();
      if (!table) {
        errors_.push_back(where_key(section_key, section_node, source_) + ": '" + section +
                          "' must be a table");
        continue;
      }
      std::vector<std::string> known;
      for (const KeyRule& rule : kSchema) {
        if (section == rule.section) known.push_back(rule.key);
      }
      for (auto&& [key, value] : *table) {
        bool ok = false;
        for (const auto& k : known) ok |= key.str() == k;
        if (!ok) {
          errors_.push_back(where_key(key, value, source_) + ": unknown key '" + section + "." +
                            std::string(key.str()) + "' (known keys in [" + section +
                            "]: " + join(known, ", ") + ")");
        }
      }
    }
  }

 private:
  const toml::table& root_;
  std::string source_;
  std::vector<std::string>& errors_;
  Substitutions substitutions_;
};

/// A TOML basic string holding s.
std::string toml_quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') q += '\\';
    q += ch;
  }
  return q + "\"";
}

/// Applies one "section.key=VALUE" override; VALUE is TOML, or else taken as a bare string.
void apply_override(toml::table& root, const std::string& assignment, const std::string& origin,
                    std::vector<std::string>& errors) {
  const size_t eq = assignment.find('=');
  const std::string path = eq == std::string::npos ? "" : assignment.substr(0, eq);
  const size_t dot = path.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == path.size() ||
      path.find('.', dot + 1) != std::string::npos) {
    errors.push_back(origin + ": expected SECTION.KEY=VALUE, e.g. --set model.beta=0.44");
    return;
  }
  const std::string section = path.substr(0, dot);
  const std::string key = path.substr(dot + 1);
  const std::string text = assignment.substr(eq + 1);
  toml::table parsed;
  try {
    parsed = toml::parse("value = " + text, origin);
  } catch (const toml::parse_error&) {
    try {
      parsed = toml::parse("value = " + toml_quote(text), origin);  // a bare word such as run.h5
    } catch (const toml::parse_error& e) {
      errors.push_back(origin + ": cannot read VALUE: " + std::string(e.description()));
      return;
    }
  }
  toml::table* target = root[section].as_table();
  if (!target) {
    if (root.contains(section)) {
      errors.push_back(origin + ": '" + section + "' in the input is not a table");
      return;
    }
    root.insert(section, toml::table{});
    target = root[section].as_table();
  }
  // Moving keeps the node's source region, so messages about it name the override.
  parsed.get("value")->visit([&](auto&& v) { target->insert_or_assign(key, std::move(v)); });
}

toml::table resolved_table(const Config& c) {
  toml::array dims;
  for (int64_t l : c.dims) dims.push_back(l);
  toml::table model{{"kind", c.model_kind}};
  if (c.model_kind == "potts") model.insert("q", c.q);
  if (c.model_kind == "on") model.insert("n", c.n);
  if (c.model_kind == "phi4") {
    model.insert("kappa", c.kappa);
    model.insert("lambda", c.lambda);
  } else {
    model.insert("beta", c.beta);
  }
  model.insert("h", c.field);
  if (!c.precision.empty()) model.insert("precision", c.precision);
  toml::array sequence;
  for (const std::string& a : c.sequence) sequence.push_back(a);
  toml::table update{{"sequence", sequence}};
  if (!c.precision.empty()) {
    update.insert("hits", c.hits);
    update.insert("step", c.step);
    update.insert("tune", c.tune_step);
    update.insert("target_acceptance", c.target_acceptance);
  }
  if (uses_langevin(c.sequence)) update.insert("langevin_step", c.langevin_step);
  if (c.model_kind == "ising") update.insert("multispin", c.multispin);
  toml::table t{
      {"lattice", toml::table{{"dims", dims}}},
      {"model", model},
      {"update", update},
      {"run", toml::table{{"thermalization", c.thermalization},
                          {"measurements", c.measurements},
                          {"measure_every", c.measure_every},
                          {"seed", static_cast<int64_t>(c.seed)},
                          {"backend", c.backend},
                          {"start", c.start},
                          {"threads", c.threads},
                          {"device", c.device},
                          {"replicas", c.replicas},
                          {"checkpoint_every", c.checkpoint_every},
                          {"checkpoint_minutes", c.checkpoint_minutes}}},
      {"measure", toml::table{{"structure_factor", c.structure_factor},
                              {"structure_factor_every", c.structure_factor_every},
                              {"timeslice", c.timeslice},
                              {"timeslice_every", c.timeslice_every},
                              {"timeslice_momenta", c.timeslice_momenta}}},
      {"output", toml::table{{"path", c.output_path},
                             {"snapshot_every", c.snapshot_every},
                             {"snapshot_packing", c.snapshot_packing},
                             {"flush_every", c.flush_every}}},
  };
  if (!c.walltime.empty()) t["run"].as_table()->insert("walltime", c.walltime);
  if (!c.parallel_grid.empty()) {
    toml::array grid;
    for (int g : c.parallel_grid) grid.push_back(g);
    t.insert("parallel", toml::table{{"grid", grid}});
  }
  return t;
}

std::string resolved_toml(const Config& c) {
  std::ostringstream os;
  os << resolved_table(c) << "\n";
  return os.str();
}

/// The resolved keys less those a resumed run may change.
std::string chain_toml(const Config& c) {
  toml::table t = resolved_table(c);
  t.erase("output");
  t.erase("parallel");  // a checkpoint resumes on any number of ranks
  // The snapshots' layout stays (bytes, the default, leaves no key, as before the key existed).
  if (c.snapshot_packing != "bytes")
    t.insert("output", toml::table{{"snapshot_packing", c.snapshot_packing}});
  t["update"].as_table()->erase("multispin");  // the same chain either way
  for (const char* key : {"measurements", "backend", "threads", "device", "checkpoint_every",
                          "checkpoint_minutes", "walltime"})
    t["run"].as_table()->erase(key);
  std::ostringstream os;
  os << t << "\n";
  return os.str();
}

std::string default_output_path(const std::string& source_name) {
  std::string stem = source_name;
  const size_t slash = stem.find_last_of('/');
  if (slash != std::string::npos) stem = stem.substr(slash + 1);
  const size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
  return (stem.empty() ? "lattica" : stem) + ".h5";
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> messages)
    : std::runtime_error(join(messages, "\n")), messages_(std::move(messages)) {}

int64_t Config::volume() const {
  int64_t v = 1;
  for (int64_t l : dims) v *= l;
  return v;
}

EngineSettings Config::engine_settings() const {
  EngineSettings s;
  s.dims = dims;
  s.beta = beta;
  s.kappa = kappa;
  s.lambda = lambda;
  s.field = field;
  s.sequence.clear();
  for (const std::string& a : sequence) {
    s.sequence.push_back(a == "heatbath"         ? UpdateAlgorithm::heatbath
                         : a == "overrelaxation" ? UpdateAlgorithm::overrelaxation
                         : a == "langevin"       ? UpdateAlgorithm::langevin
                         : a == "mala"           ? UpdateAlgorithm::mala
                                                 : UpdateAlgorithm::metropolis);
  }
  s.model = model_kind == "potts" ? ModelKind::potts
            : model_kind == "on"  ? ModelKind::on
            : model_kind == "phi4" ? ModelKind::phi4
                                   : ModelKind::ising;
  s.q = q;
  s.n = n;
  s.precision = precision == "float" ? Precision::float32 : Precision::float64;
  s.hits = hits;
  s.step = step;
  s.tune_step = tune_step;
  s.target_acceptance = target_acceptance;
  s.langevin_step = langevin_step;
  s.multispin = multispin;
  s.snapshots = snapshot_every > 0;
  s.snapshot_bits = snapshot_packing == "bits";
  s.seed = seed;
  s.start = start == "cold" ? InitialState::cold : InitialState::hot;
  s.cpu_threads = threads;
  s.cuda_device = device;
  s.parallel_grid = parallel_grid;
  s.replicas = replicas;
  // Measurements wait in the engine (on the GPU) until a batch is collected.
  s.measurement_capacity = std::min<int64_t>(flush_every, 4096);
  s.structure_factor_every = structure_factor ? structure_factor_every : 0;
  s.timeslice_every = timeslice ? timeslice_every : 0;
  s.timeslice_momenta_per_axis = timeslice_momenta;
  return s;
}

namespace {

/// A magnitude for messages: 3 significant digits.
std::string magnitude(long double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3Lg", x);
  return buffer;
}

/// Refuses couplings for which a number the run computes overflows its floating-point type:
/// the transition tables (beta times an energy change, tabulated on the host), the per-site
/// arithmetic of continuous models in their precision, and the energies summed in double.
/// Sizes are bounds derived from the model (long double holds them without overflowing), and
/// must stay below half the type's largest value, leaving room for rounding. Enormous
/// couplings whose numbers fit are allowed: beta = 1e300 is Ising at zero temperature. Only
/// the first overflow of a point is reported, blamed on the largest coupling involved.
void refuse_overflowing_couplings(const Config& c, Reader& r) {
  struct Product {
    std::string what;
    long double size;
    bool per_site;                  ///< in the continuous model's precision; else in double
    std::vector<const char*> keys;  ///< the couplings it grows with
  };
  const long double d = static_cast<long double>(c.dims.size());
  const long double volume = static_cast<long double>(c.volume());
  const long double beta = c.beta, h = std::fabs(c.field);
  const std::string sites = " (V = " + std::to_string(c.volume()) + " sites)";
  const std::string energy = "the energy, up to (d + |h|) V" + sites;
  std::vector<Product> products;
  auto add = [&](const std::string& what, long double size, bool per_site,
                 std::vector<const char*> keys) {
    products.push_back({what, size, per_site, std::move(keys)});
  };
  if (c.model_kind == "ising") {
    add("the largest |beta dE| of a spin flip, 2 beta (2d + |h|)", 2 * beta * (2 * d + h), false,
        {"beta", "h"});
    add(energy, (d + h) * volume, false, {"h"});
  } else if (c.model_kind == "potts") {
    // The tables hold equal-neighbour changes up to 8 whatever d, and heat-bath weights take
    // differences of two such exponents.
    add("the largest |beta dE| the tables hold, 2 beta (8 + |h|)", 2 * beta * (8 + h), false,
        {"beta", "h"});
    add(energy, (d + h) * volume, false, {"h"});
  } else if (c.model_kind == "on") {
    const long double field = 2 * d + h;  // the local field's largest length |F|
    add("the local field squared, up to (2d + |h|)^2", field * field, true, {"h"});
    add("the largest |beta dE| of a move, 2 beta (2d + |h|)", 2 * beta * field, true,
        {"beta", "h"});
    if (c.n == 2 && std::count(c.sequence.begin(), c.sequence.end(), "heatbath") > 0) {
      add("the heat bath's (2 beta |F|)^2, up to (2 beta (2d + |h|))^2",
          4 * beta * beta * field * field, true, {"beta", "h"});
    }
    add(energy, (d + h) * volume, false, {"h"});
    if (c.n == 2) {
      add("the helicity modulus's beta (sum_x sin)^2, up to beta V^2" + sites,
          beta * volume * volume, false, {"beta"});
    }
  } else {
    // phi^4: the field is not bounded; it settles where the uniform action's slope vanishes,
    // 4 lambda phi^3 + (2 - 4 d kappa - 4 lambda) phi = h, so |phi| is about phi0.
    const long double kappa = c.kappa, lambda = c.lambda;
    const long double phi0 =
        lambda > 0 ? std::sqrt(1 + std::max(0.0L, 4 * d * kappa - 2) / (4 * lambda)) +
                         std::cbrt(h / (4 * lambda))
                   : 1 + h / (2 - 4 * d * kappa);  // > 0: checked above for lambda = 0
    const long double phi2 = phi0 * phi0;
    const long double action =
        (4 * d * kappa + 1) * phi2 + lambda * (phi2 + 1) * (phi2 + 1) + h * phi0;
    const std::string scale = " at the field's scale |phi| ~ " + magnitude(phi0);
    add("the action of one site" + scale, action, true, {"kappa", "lambda", "h"});
    add("the action" + scale + ", V times that of one site" + sites, action * volume, false,
        {"kappa", "lambda", "h"});
    add("sum_x phi_x^4" + scale + sites, phi2 * phi2 * volume, false, {"kappa", "lambda", "h"});
  }
  const bool single = c.precision == "float";
  for (const Product& p : products) {
    const bool in_float = p.per_site && single;
    const long double largest =
        in_float ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    if (p.size <= largest / 2) continue;
    // Blame the coupling of largest magnitude among those the input gives; name the others.
    std::vector<std::pair<std::string, double>> given;
    for (const char* key : p.keys) {
      if (!r.find("model", key)) continue;
      const std::string k = key;
      given.emplace_back(k, k == "beta"     ? c.beta
                            : k == "kappa"  ? c.kappa
                            : k == "lambda" ? c.lambda
                                            : c.field);
    }
    if (given.empty()) return;  // defaults alone never overflow
    const auto blamed = std::max_element(given.begin(), given.end(), [](auto& a, auto& b) {
      return std::fabs(a.second) < std::fabs(b.second);
    });
    std::string others;
    for (const auto& [key, value] : given) {
      if (key != blamed->first)
        others += (others.empty() ? "with model." : ", model.") + key + " = " + shortest(value);
    }
    r.fail(*r.find("model", blamed->first.c_str()), "model." + blamed->first,
           others + (others.empty() ? "" : ", ") + p.what + " is " + magnitude(p.size) +
               ", which overflows a " + (in_float ? "float" : "double") + " (largest " +
               magnitude(largest) +
               "): probabilities and energies would be infinite or NaN; choose smaller couplings");
    return;
  }
}

/// Reads and validates one point (the whole input, or one point of a sweep).
Config read_point(const toml::table& root, const std::string& source_name,
                  const Substitutions& substitutions, std::vector<std::string>& errors) {
  Reader r(root, source_name, errors, substitutions);
  constexpr int64_t kMaxCount = int64_t(1) << 40;
  Config c;
  c.dims = r.dims();
  c.parallel_grid = r.grid();
  c.model_kind = r.choice("model", "kind", std::nullopt, {"ising", "potts", "on", "phi4"});
  const bool continuous = c.model_kind == "on" || c.model_kind == "phi4";
  // A key that belongs to other models is refused rather than ignored.
  auto only_for = [&](const char* section, const char* key, const std::string& who) {
    if (const toml::node* node = r.find(section, key))
      r.fail(*node, std::string(section) + "." + key, "only " + who + " take this key");
  };
  if (c.model_kind == "potts") {
    c.q = static_cast<int>(r.integer("model", "q", std::nullopt, 2, 256, "number of Potts states"));
  } else {
    only_for("model", "q", "Potts models (model.kind = \"potts\")");
  }
  if (c.model_kind == "on") {
    c.n = static_cast<int>(
        r.integer("model", "n", std::nullopt, 2, 4, "spin components: 2 XY, 3 Heisenberg, 4"));
  } else {
    only_for("model", "n", "O(n) models (model.kind = \"on\")");
  }
  if (c.model_kind == "phi4") {
    if (const toml::node* beta = r.find("model", "beta"))
      r.fail(*beta, "model.beta", "phi^4 has no inverse temperature; it uses model.kappa and model.lambda");
    c.kappa = r.number("model", "kappa", std::nullopt, 0.0, "hopping parameter, a number >= 0");
    c.lambda = r.number("model", "lambda", std::nullopt, 0.0, "quartic coupling, a number >= 0");
  } else {
    c.beta = r.number("model", "beta", std::nullopt, 0.0, "inverse temperature, a number >= 0");
    only_for("model", "kappa", "phi^4 models (model.kind = \"phi4\")");
    only_for("model", "lambda", "phi^4 models (model.kind = \"phi4\")");
  }
  c.field = r.number("model", "h", 0.0, -std::numeric_limits<double>::max(), "external field");
  if (continuous) {
    c.precision = r.choice("model", "precision", "double", {"double", "float"});
  } else {
    only_for("model", "precision", "continuous models (\"on\", \"phi4\")");
  }

  // The update sequence: update.algorithm names one pass, update.sequence several.
  std::vector<std::string> algorithms{"metropolis", "heatbath"};
  if (c.model_kind == "on") algorithms.push_back("overrelaxation");
  if (c.model_kind == "phi4") algorithms = {"metropolis", "overrelaxation", "langevin", "mala"};
  const toml::node* algorithm_node = r.find("update", "algorithm");
  const toml::node* sequence_node = r.find("update", "sequence");
  if (algorithm_node && sequence_node) {
    r.fail(*sequence_node, "update.sequence",
           "give either update.algorithm (one pass per sweep) or update.sequence, not both");
  } else if (sequence_node) {
    c.sequence = r.choice_list("update", "sequence", algorithms, kMaxUpdatePasses);
  } else {
    c.sequence = {r.choice("update", "algorithm", "metropolis", algorithms)};
  }
  if (!c.sequence.empty() &&
      std::all_of(c.sequence.begin(), c.sequence.end(),
                  [](const std::string& a) { return a == "overrelaxation"; })) {
    r.fail(*(sequence_node ? sequence_node : algorithm_node),
           sequence_node ? "update.sequence" : "update.algorithm",
           std::string("over-relaxation alone is not ergodic (it keeps the energy); ") +
               (sequence_node ? "add" : "use update.sequence to add") + " a \"metropolis\"" +
               (c.model_kind == "on" ? " or \"heatbath\"" : "") + " pass");
    c.sequence.clear();
  }
  c.algorithm = join(c.sequence, ", ");
  if (continuous) {
    c.hits = static_cast<int>(
        r.integer("update", "hits", 1, 1, 255, "Metropolis proposals per site and pass"));
    c.step = r.number("update", "step", 1.0, 0.0, "initial Metropolis step size, > 0");
    if (const toml::node* node = r.find("update", "step"); node && !(c.step > 0.0)) {
      r.fail(*node, "update.step", "must be > 0 (initial Metropolis step size)");
    }
    c.tune_step = r.boolean("update", "tune", true,
                            "tune the Metropolis (and MALA) step during thermalization, then "
                            "freeze it");
    c.target_acceptance = r.number("update", "target_acceptance", 0.5, 0.0,
                                   "Metropolis (and MALA) acceptance the tuning aims at, in (0, 1)");
    if (const toml::node* node = r.find("update", "target_acceptance");
        node && !(c.target_acceptance > 0.0 && c.target_acceptance < 1.0)) {
      r.fail(*node, "update.target_acceptance", "must be strictly between 0 and 1");
    }
  } else {
    for (const char* key : {"hits", "step", "tune", "target_acceptance"})
      only_for("update", key, "continuous models (\"on\", \"phi4\")");
  }
  if (c.model_kind == "ising") {
    c.multispin = r.boolean("update", "multispin", true,
                            "store 32 spins per word and update them together where the last "
                            "extent is a multiple of 64 (the chain is the same either way)");
  } else {
    only_for("update", "multispin", "the Ising model");
  }
  if (uses_langevin(c.sequence)) {
    c.langevin_step = r.number("update", "langevin_step", 0.1, 0.0,
                               "Langevin time step epsilon, > 0");
    if (const toml::node* node = r.find("update", "langevin_step");
        node && !(c.langevin_step > 0.0 && c.langevin_step <= 100.0)) {
      r.fail(*node, "update.langevin_step", "must be > 0 and <= 100 (Langevin time step)");
    }
  } else {
    only_for("update", "langevin_step", "\"langevin\" and \"mala\" passes");
  }
  // At lambda = 0 the action is Gaussian with M(0) = 2 - 4 d kappa: unbounded below (no
  // equilibrium) unless kappa < 1/(2d).
  if (c.model_kind == "phi4" && c.lambda == 0.0 &&
      !(2.0 - 4.0 * static_cast<double>(c.dims.size()) * c.kappa > 0.0) && !c.dims.empty()) {
    const toml::node* node = r.find("model", "kappa");
    if (node) {
      r.fail(*node, "model.kappa",
             "at model.lambda = 0 the action is unbounded below unless kappa < 1/(2d) = " +
                 shortest(1.0 / (2.0 * static_cast<double>(c.dims.size()))));
    }
  }
  c.thermalization =
      r.integer("run", "thermalization", std::nullopt, 0, kMaxCount, "sweeps before measuring");
  c.measurements =
      r.integer("run", "measurements", std::nullopt, 0, kMaxCount, "number of measurements");
  c.measure_every =
      r.integer("run", "measure_every", 1, 1, kMaxCount, "sweeps between measurements");
  c.seed = static_cast<uint64_t>(r.integer("run", "seed", std::nullopt, 0,
                                           std::numeric_limits<int64_t>::max(),
                                           "random seed, an integer >= 0"));
  c.backend = r.choice("run", "backend", "auto", {"auto", "cpu", "cuda"});
  c.start = r.choice("run", "start", "hot", {"hot", "cold"});
  c.checkpoint_every = r.integer("run", "checkpoint_every", 0, 0, kMaxCount,
                                 "sweeps between checkpoints, 0 = none");
  c.checkpoint_minutes = r.number("run", "checkpoint_minutes", 0.0, 0.0,
                                  "minutes between checkpoints, 0 = none");
  if (const toml::node* node = r.find("run", "walltime")) {
    // A string "[D-]HH:MM:SS", or the same unquoted (a TOML time of day).
    std::string text;
    if (const auto* s = node->as_string()) text = s->get();
    if (const auto* t = node->as_time()) {
      char buffer[16];
      std::snprintf(buffer, sizeof buffer, "%02d:%02d:%02d", t->get().hour, t->get().minute,
                    t->get().second);
      text = buffer;
    }
    const std::optional<double> seconds = parse_walltime(text);
    if (!seconds) {
      r.fail(*node, "run.walltime", "must be a duration \"[D-]HH:MM:SS\", e.g. \"23:50:00\"");
    } else if (*seconds <= kWalltimeMarginSeconds) {
      // The run stops once no more than the margin remains: it would stop after its first
      // sweeps, and a requeued job would advance a few sweeps per job.
      const std::string margin = std::to_string(static_cast<int>(kWalltimeMarginSeconds));
      r.fail(*node, "run.walltime",
             std::to_string(static_cast<long long>(*seconds)) + " s is within the " + margin +
                 " s safety margin the run keeps for its final checkpoint, so it would stop "
                 "after its first sweeps; give more than " +
                 margin + " s, or no walltime");
    } else {
      c.walltime = text;
      c.walltime_seconds = *seconds;
    }
  }
  c.threads = static_cast<int>(r.integer("run", "threads", 0, 0, 4096, "CPU threads, 0 = all"));
  c.device = static_cast<int>(r.integer("run", "device", 0, 0, 1023, "CUDA device index"));
  c.structure_factor = r.boolean("measure", "structure_factor", false,
                                 "structure factor and correlation function of the order parameter");
  c.structure_factor_every = r.integer("measure", "structure_factor_every", 1, 1, kMaxCount,
                                       "take the structure factor on every k-th measurement");
  c.timeslice = r.boolean("measure", "timeslice", false,
                          "momentum-projected time-slice correlators (the last axis is time)");
  c.timeslice_every = r.integer("measure", "timeslice_every", 1, 1, kMaxCount,
                                "take the time-slice correlators on every k-th measurement");
  c.timeslice_momenta = static_cast<int>(r.integer(
      "measure", "timeslice_momenta", 1, 1, 64,
      "momenta n 2 pi / L (n = 1 .. N) along each spatial axis, besides p = 0"));
  c.output_path = r.string("output", "path", default_output_path(source_name), "output HDF5 file");
  c.snapshot_every = r.integer("output", "snapshot_every", 0, 0, kMaxCount,
                               "sweeps between snapshots, 0 = final only");
  c.snapshot_packing = r.choice("output", "snapshot_packing", "bytes", {"bytes", "bits"});
  if (c.snapshot_packing == "bits") {
    const toml::node* node = r.find("output", "snapshot_packing");
    if (c.model_kind != "ising") {
      r.fail(*node, "output.snapshot_packing",
             "\"bits\" packs Ising spins, 8 per byte; model.kind is \"" + c.model_kind + "\"");
    } else if (!c.dims.empty() && c.dims.back() % 8 != 0) {
      r.fail(*node, "output.snapshot_packing",
             "\"bits\" packs 8 sites per byte along the last axis, so its extent (" +
                 std::to_string(c.dims.back()) + ") must be a multiple of 8");
    }
  }
  c.flush_every = r.integer("output", "flush_every", 1000, 1, kMaxCount,
                            "measurements between flushes to disk");
  c.replicas = static_cast<int>(r.integer("run", "replicas", 1, 1, kMaxReplicas,
                                          "independent replicas of the chain in one process"));
  if (!c.dims.empty() && !c.sequence.empty() && errors.empty()) refuse_overflowing_couplings(c, r);
  if (!c.dims.empty() && errors.empty()) {
    // The configuration's copies for output (one per snapshot slot in use) and checkpoints,
    // and the engine itself unless it is sure to run on the GPU (make_cuda_engine checks the
    // device's memory).
    const EngineSettings settings = c.engine_settings();
    const long double copies = c.snapshot_every > 0 ? Engine::kSnapshotSlots + 1 : 2;
    const long double frame = c.snapshot_packing == "bits" ? 0.125L : site_bytes(settings);
    const long double needed = (copies - 1) * c.replicas * c.volume() * frame +
                               c.replicas * c.volume() * site_bytes(settings) +
                               (c.backend == "cuda" ? 0.0L : engine_bytes(settings));
    const long double available = static_cast<long double>(sysconf(_SC_PHYS_PAGES)) *
                                  static_cast<long double>(sysconf(_SC_PAGE_SIZE));
    if (available > 0 && needed > available) {
      std::ostringstream os;
      os.precision(3);
      os << source_name << ": lattice.dims with run.replicas = " << c.replicas << ": the "
         << c.model_kind << " lattice needs " << static_cast<double>(needed / (1L << 30))
         << " GiB of host memory but this machine has "
         << static_cast<double>(available / (1L << 30)) << " GiB";
      errors.push_back(os.str());
    }
  }

  if (errors.empty() &&
      static_cast<long double>(c.measurements) * c.measure_every + c.thermalization >
          static_cast<long double>(kMaxSweeps)) {
    errors.push_back(source_name +
                     ": run.thermalization + run.measurements * run.measure_every is more than "
                     "2^44 sweeps, the most the random-number counter can name");
  }
  return c;
}

/// Seed of sweep point `index`: a SplitMix64 hash of (seed, index), so points are independent
/// chains and a point run alone (--task-id) gets the same seed as in the full sweep.
uint64_t point_seed(uint64_t seed, int64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// "run.h5" -> ("run", ".h5"); a path without an extension gets ".h5".
std::pair<std::string, std::string> split_extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1)
    return {path, ".h5"};
  return {path.substr(0, dot), path.substr(dot)};
}

struct SweptKey {
  std::string name;
  std::vector<const toml::node*> values;
};

/// Finds the swept keys and their values; generated values (from {start, stop, num}) are owned
/// by `generated`.
std::vector<SweptKey> find_sweeps(const toml::table& root, const std::string& source_name,
                                  std::vector<std::unique_ptr<toml::node>>& generated,
                                  std::vector<std::string>& errors) {
  std::vector<SweptKey> swept;
  for (const KeyRule& rule : kSweepable) {
    const toml::table* t = root[rule.section].as_table();
    const toml::node* node = t ? t->get(rule.key) : nullptr;
    if (!node) continue;
    const std::string name = std::string(rule.section) + "." + rule.key;
    const std::string at = where(node->source(), source_name) + ": " + name + " = " + show(*node);
    const bool is_dims = std::string(rule.key) == "dims";
    SweptKey key{name, {}};
    if (const toml::array* a = node->as_array()) {
      // lattice.dims is itself an array: it is a sweep only as an array of arrays.
      if (is_dims && (a->empty() || !(*a)[0].is_array())) continue;
      if (a->empty()) {
        errors.push_back(at + ": a sweep needs at least one value");
        continue;
      }
      for (const toml::node& v : *a) {
        if (is_dims && !v.is_array()) {
          errors.push_back(at + ": every entry of a lattice.dims sweep must be an array of sizes");
          break;
        }
        key.values.push_back(&v);
      }
    } else if (const toml::table* range = node->as_table(); range && !is_dims) {
      const auto start = (*range)["start"].value<double>();
      const auto stop = (*range)["stop"].value<double>();
      const auto num = (*range)["num"].value<int64_t>();
      if (range->size() != 3 || !start || !stop || !num || !(*range)["num"].is_integer() ||
          *num < 1 || *num > kMaxSweepPoints || !std::isfinite(*start) || !std::isfinite(*stop)) {
        errors.push_back(at +
                         ": a range must be { start = NUMBER, stop = NUMBER, num = INTEGER >= 1 }");
        continue;
      }
      for (int64_t i = 0; i < *num; ++i) {
        const double x = *num == 1 ? *start : *start + (*stop - *start) * i / (*num - 1);
        generated.push_back(std::make_unique<toml::value<double>>(x));
        key.values.push_back(generated.back().get());
      }
    } else {
      continue;  // a plain value: no sweep
    }
    if (!key.values.empty()) swept.push_back(std::move(key));
  }
  return swept;
}

}  // namespace

RunPlan parse_plan(const std::string& text, const std::string& source_name,
                   const ConfigOverrides& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        {where(e.source(), source_name) + ": invalid TOML: " + std::string(e.description())});
  }

  std::vector<std::string> errors;
  for (const auto& s : overrides.set) apply_override(root, s, "--set " + s, errors);
  if (overrides.backend)
    apply_override(root, "run.backend=" + toml_quote(*overrides.backend),
                   "--backend " + *overrides.backend, errors);
  if (overrides.output)
    apply_override(root, "output.path=" + toml_quote(*overrides.output),
                   "--output " + *overrides.output, errors);
  if (overrides.seed)
    apply_override(root, "run.seed=" + *overrides.seed, "--seed " + *overrides.seed, errors);
  Reader(root, source_name, errors).reject_unknown();

  std::vector<std::unique_ptr<toml::node>> generated;
  const std::vector<SweptKey> swept = find_sweeps(root, source_name, generated, errors);
  long double points = 1;
  for (const SweptKey& k : swept) points *= k.values.size();
  if (points > kMaxSweepPoints) {
    throw ConfigError(
        {source_name + ": the sweep has more than " + std::to_string(kMaxSweepPoints) + " points"});
  }

  RunPlan plan;
  for (const SweptKey& k : swept) plan.swept.push_back(k.name);
  // Each point is validated on its own; a message that several points share is given once.
  std::vector<std::string> point_errors = errors;
  std::set<std::string> seen(errors.begin(), errors.end());
  for (int64_t index = 0; index < static_cast<int64_t>(points); ++index) {
    Substitutions substitutions;
    int64_t rest = index;
    for (auto k = swept.rbegin(); k != swept.rend(); ++k) {  // last key varies fastest
      const int64_t n = static_cast<int64_t>(k->values.size());
      substitutions[k->name] = k->values[static_cast<size_t>(rest % n)];
      rest /= n;
    }
    std::vector<std::string> errs;
    Config c = read_point(root, source_name, substitutions, errs);
    for (auto& e : errs) {
      if (seen.insert(e).second) point_errors.push_back(e);
    }
    if (!errs.empty()) continue;
    c.input_path = source_name;
    c.input_text = text;
    if (!swept.empty()) {
      c.point_index = index;
      c.seed = point_seed(c.seed, index);
      const auto [stem, extension] = split_extension(c.output_path);
      c.output_path = stem + "." + std::to_string(index) + extension;
      plan.index_path = stem + ".index.json";
      for (const SweptKey& k : swept) {
        std::ostringstream os;
        substitutions[k.name]->visit([&](auto&& v) { os << v; });
        c.swept_values.emplace_back(k.name, os.str());
      }
    }
    c.resolved_toml = resolved_toml(c);
    c.chain_toml = chain_toml(c);
    plan.points.push_back(std::move(c));
  }
  if (!point_errors.empty()) throw ConfigError(point_errors);
  return plan;
}

Config parse_config(const std::string& text, const std::string& source_name,
                    const ConfigOverrides& overrides) {
  RunPlan plan = parse_plan(text, source_name, overrides);
  if (plan.points.size() != 1) {
    throw ConfigError({source_name + ": the input describes a sweep of " +
                       std::to_string(plan.points.size()) + " points, not a single run"});
  }
  return std::move(plan.points.front());
}

namespace {

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

}  // namespace

Config load_config(const std::string& path, const ConfigOverrides& overrides) {
  return parse_config(read_input_file(path), path, overrides);
}

RunPlan load_plan(const std::string& path, const ConfigOverrides& overrides) {
  return parse_plan(read_input_file(path), path, overrides);
}

std::vector<std::string> chain_differences(const std::string& before, const std::string& now) {
  std::vector<std::string> out;
  const toml::table a = toml::parse(before), b = toml::parse(now);
  auto text = [](const toml::node* n) {
    if (!n) return std::string("(absent)");
    std::ostringstream os;
    n->visit([&](auto&& v) { os << v; });
    return os.str();
  };
  for (const toml::table* side : {&a, &b}) {
    for (auto&& [section, keys] : *side) {
      if (!keys.is_table()) continue;
      for (auto&& [key, value] : *keys.as_table()) {
        const std::string name = std::string(section.str()) + "." + std::string(key.str());
        const std::string x = text(a.at_path(name).node()), y = text(b.at_path(name).node());
        const std::string line = name + ": " + x + " -> " + y;
        if (x != y && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
      }
    }
  }
  return out;
}

}  // namespace lattica
