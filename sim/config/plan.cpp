// From input text to the runs it describes: one point, or the points of a parameter sweep.

#include <cmath>
#include <memory>
#include <set>
#include <sstream>

#include "sim/config/internal.hpp"

namespace lattica {

namespace {

constexpr int64_t kMaxSweepPoints = 100000;

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

/// Finds the swept keys (the schema's sweepable keys given a list of values, a list of arrays
/// for lattice.dims, or for numbers a table {start, stop, num}) and their values, in the
/// schema's order; generated values are owned by `generated`.
std::vector<SweptKey> find_sweeps(const toml::table& root, const std::string& source_name,
                                  std::vector<std::unique_ptr<toml::node>>& generated,
                                  std::vector<std::string>& errors) {
  std::vector<SweptKey> swept;
  for (const config::KeySpec& spec : config::key_specs()) {
    if (!spec.sweepable) continue;
    const toml::table* t = root[spec.section].as_table();
    const toml::node* node = t ? t->get(spec.key) : nullptr;
    if (!node) continue;
    const std::string name = spec.name();
    const std::string at =
        config::where(node->source(), source_name) + ": " + name + " = " + config::show(*node);
    const bool is_dims = spec.type == config::KeyType::dims;
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
    throw ConfigError({config::where(e.source(), source_name) +
                       ": invalid TOML: " + std::string(e.description())});
  }

  std::vector<std::string> errors;
  config::apply_overrides(root, overrides, errors);
  config::Reader(root, source_name, errors).reject_unknown();

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
    config::Substitutions substitutions;
    int64_t rest = index;
    for (auto k = swept.rbegin(); k != swept.rend(); ++k) {  // last key varies fastest
      const int64_t n = static_cast<int64_t>(k->values.size());
      substitutions[k->name] = k->values[static_cast<size_t>(rest % n)];
      rest /= n;
    }
    std::vector<std::string> errs;
    Config c = config::read_point(root, source_name, substitutions, errs);
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
    c.resolved_toml = config::resolved_text(c);
    c.chain_toml = config::chain_text(c);
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

Config load_config(const std::string& path, const ConfigOverrides& overrides) {
  return parse_config(config::read_input_file(path), path, overrides);
}

RunPlan load_plan(const std::string& path, const ConfigOverrides& overrides) {
  return parse_plan(config::read_input_file(path), path, overrides);
}

}  // namespace lattica
