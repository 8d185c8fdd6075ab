// The resolved configuration as TOML (stored in every output file), the part of it that fixes
// the chain (stored in checkpoints), and the comparison a resumed run makes between the two.

#include <algorithm>
#include <sstream>
#include <type_traits>

#include "sim/config/internal.hpp"

namespace lattica::config {

namespace {

/// Inserts spec's value in c into its section's table.
void insert_value(toml::table& section, const KeySpec& spec, const Config& c) {
  std::visit(
      [&](auto member) {
        const auto& value = c.*member;
        using Value = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, bool> || std::is_same_v<Value, double> ||
                      std::is_same_v<Value, std::string>) {
          section.insert(spec.key, value);
        } else if constexpr (std::is_integral_v<Value>) {
          section.insert(spec.key, static_cast<int64_t>(value));
        } else {
          toml::array array;
          for (const auto& item : value) array.push_back(item);
          section.insert(spec.key, std::move(array));
        }
      },
      spec.field);
}

/// Whether spec's field in c holds nothing (an optional key not given).
bool is_empty(const KeySpec& spec, const Config& c) {
  return std::visit(
      [&](auto member) {
        using Value = std::decay_t<decltype(c.*member)>;
        if constexpr (std::is_arithmetic_v<Value>) {
          return false;
        } else {
          return (c.*member).empty();
        }
      },
      spec.field);
}

/// Whether spec's field in c holds the row's default.
bool at_default(const KeySpec& spec, const Config& c) {
  return std::visit(
      [&](auto member) {
        const auto& value = c.*member;
        using Value = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, std::string>) {
          const auto* fallback = std::get_if<const char*>(&spec.fallback);
          return fallback && value == *fallback;
        } else if constexpr (std::is_same_v<Value, bool> || std::is_same_v<Value, double>) {
          const auto* fallback = std::get_if<Value>(&spec.fallback);
          return fallback && value == *fallback;
        } else if constexpr (std::is_integral_v<Value>) {
          const auto* fallback = std::get_if<int64_t>(&spec.fallback);
          return fallback && static_cast<int64_t>(value) == *fallback;
        } else {
          return false;
        }
      },
      spec.field);
}

/// The keys of c that the echo holds; with chain_only, those a resumed run must keep.
toml::table echo_table(const Config& c, bool chain_only) {
  toml::table t;
  for (const KeySpec& spec : key_specs()) {
    if (!spec.echo || !applies(spec, c) || replaced_by_ladder(spec, c)) continue;
    if (spec.presence == Presence::optional && is_empty(spec, c)) continue;
    if (chain_only && (spec.chain == ChainRole::no ||
                       (spec.chain == ChainRole::unless_default && at_default(spec, c))))
      continue;
    if (!t.contains(spec.section)) t.insert(spec.section, toml::table{});
    insert_value(*t[spec.section].as_table(), spec, c);
  }
  return t;
}

std::string text_of(const toml::table& t) {
  std::ostringstream os;
  os << t << "\n";
  return os.str();
}

}  // namespace

std::string resolved_text(const Config& c) { return text_of(echo_table(c, false)); }

std::string chain_text(const Config& c) { return text_of(echo_table(c, true)); }

}  // namespace lattica::config

namespace lattica {

std::vector<std::string> chain_differences(const std::string& before, const std::string& now) {
  const toml::table a = toml::parse(before), b = toml::parse(now);
  // The chain's keys in the schema's order, then any the schema does not know (written by
  // another version), which count too; keys it knows outside the chain do not.
  std::vector<std::string> names;
  for (const config::KeySpec& spec : config::key_specs()) {
    if (spec.chain != config::ChainRole::no) names.push_back(spec.name());
  }
  for (const toml::table* side : {&a, &b}) {
    for (auto&& [section, keys] : *side) {
      if (!keys.is_table()) continue;
      for (auto&& [key, value] : *keys.as_table()) {
        const std::string name = std::string(section.str()) + "." + std::string(key.str());
        if (!config::find_spec(std::string(section.str()), std::string(key.str())) &&
            std::find(names.begin(), names.end(), name) == names.end())
          names.push_back(name);
      }
    }
  }
  auto text = [](const toml::node* n) {
    if (!n) return std::string("(absent)");
    std::ostringstream os;
    n->visit([&](auto&& v) { os << v; });
    return os.str();
  };
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const std::string x = text(a.at_path(name).node()), y = text(b.at_path(name).node());
    if (x != y) out.push_back(name + ": " + x + " -> " + y);
  }
  return out;
}

}  // namespace lattica
