#include "sim/config/reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace lattica::config {

namespace {

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

/// Stores a value read for spec into its field of c; a row whose field cannot hold what its
/// type reads is a mistake in the table.
template <typename Value>
void store(const KeySpec& spec, Config& c, Value value) {
  std::visit(
      [&](auto member) {
        using Member = std::decay_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<Member, Value>) {
          c.*member = std::move(value);
        } else if constexpr (std::is_integral_v<Member> && std::is_same_v<Value, int64_t>) {
          c.*member = static_cast<Member>(value);
        } else if constexpr (std::is_same_v<Member, std::vector<std::string>> &&
                             std::is_same_v<Value, std::string>) {
          c.*member = {std::move(value)};  // one pass named by update.algorithm
        } else {
          throw std::logic_error("schema: the field of " + spec.name() + " has another type");
        }
      },
      spec.field);
}

/// The row's default of type T, or `otherwise` when it has none.
template <typename T>
T fallback_or(const KeySpec& spec, T otherwise) {
  if (const T* value = std::get_if<T>(&spec.fallback)) return *value;
  return otherwise;
}

std::string fallback_or(const KeySpec& spec, const std::string& otherwise) {
  if (const auto* value = std::get_if<const char*>(&spec.fallback)) return *value;
  return otherwise;
}

}  // namespace

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string shortest(double x) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
  std::string text(buffer, end);
  if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  return text;
}

std::string show(const toml::node& node) {
  std::ostringstream os;
  if (const auto* f = node.as_floating_point()) return shortest(f->get());
  if (const auto* array = node.as_array()) {  // entries as show() writes them: 0.3, not 0.2999...
    os << "[";
    for (size_t i = 0; i < array->size(); ++i) os << (i ? ", " : "") << show(*array->get(i));
    os << "]";
  } else {
    node.visit([&](auto&& v) { os << v; });
  }
  std::string s = os.str();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string where(const toml::source_region& region, const std::string& fallback) {
  const std::string path = region.path ? *region.path : fallback;
  if (path.rfind("--", 0) == 0) return path;
  if (region.begin.line == 0) return path;
  return path + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

const toml::node* Reader::find(const char* section, const char* key) const {
  const auto s = substitutions_.find(std::string(section) + "." + key);
  if (s != substitutions_.end()) return s->second;
  const toml::table* t = root_[section].as_table();
  return t ? t->get(key) : nullptr;
}

void Reader::fail(const toml::node& node, const std::string& name, const std::string& reason) {
  errors_.push_back(where(node.source(), source_) + ": " + name + " = " + show(node) + ": " +
                    reason);
}

void Reader::missing(const std::string& name, const std::string& what) {
  errors_.push_back(source_ + ": " + name + " is missing; it is required (" + what + ")");
}

void Reader::read_keys(Config& c, const std::set<std::string>& skip) {
  for (const KeySpec& spec : key_specs()) {
    if (skip.count(spec.name()) == 0) read_key(spec, c);
  }
}

void Reader::read_key(const KeySpec& spec, Config& c) {
  const toml::node* node = find(spec.section, spec.key);
  if (!applies(spec, c)) {
    // A key that belongs to other models (or passes) is refused rather than ignored.
    if (node) fail(*node, spec.name(), refusal_reason(spec));
    return;
  }
  if (!node && spec.presence == Presence::optional) return;
  const std::string hint = std::string(" (") + spec.hint + ")";
  switch (spec.type) {
    case KeyType::integer:
      return store(spec, c, integer(spec, node));
    case KeyType::number:
      return store(spec, c, number(spec, node));
    case KeyType::boolean: {
      bool value = fallback_or(spec, false);
      if (const auto* b = node ? node->as_boolean() : nullptr) {
        value = b->get();
      } else if (node) {
        fail(*node, spec.name(), "expected true or false" + hint);
      }
      return store(spec, c, value);
    }
    case KeyType::string: {
      std::string value =
          spec.from_source ? spec.from_source(source_) : fallback_or(spec, std::string());
      if (const auto* s = node ? node->as_string() : nullptr; s && !s->get().empty()) {
        value = s->get();
      } else if (node) {
        fail(*node, spec.name(), "expected a non-empty string" + hint);
      }
      return store(spec, c, value);
    }
    case KeyType::choice:
      return store(spec, c, choice(spec, node, choices_for(spec, c)));
    case KeyType::choice_list:
      return store(spec, c, choice_list(spec, *node, choices_for(spec, c)));
    case KeyType::dims:
      return store(spec, c, dims(spec, node));
    case KeyType::grid:
      return store(spec, c, grid(spec, *node));
    case KeyType::duration:
      return store(spec, c, duration(spec, *node));
    case KeyType::ladder:
      return store(spec, c, ladder(spec, *node));
  }
}

/// An integer in [min_int, max_int]; on a problem, the least allowed value.
int64_t Reader::integer(const KeySpec& spec, const toml::node* node) {
  const std::string name = spec.name(), hint = std::string(" (") + spec.hint + ")";
  if (!node) {
    if (spec.presence == Presence::required) missing(name, spec.hint);
    return fallback_or(spec, spec.min_int);
  }
  const auto* v = node->as_integer();
  if (!v) {
    fail(*node, name, "expected an integer" + hint);
    return spec.min_int;
  }
  const int64_t x = v->get();
  if (x < spec.min_int || x > spec.max_int) {
    fail(*node, name,
         "must be between " + std::to_string(spec.min_int) + " and " +
             std::to_string(spec.max_int) + hint);
    return spec.min_int;
  }
  return x;
}

/// A finite number >= min, then inside the row's interval if it has one; on a problem, 0 (or
/// min when below it), which the interval then judges too.
double Reader::number(const KeySpec& spec, const toml::node* node) {
  const std::string name = spec.name(), hint = std::string(" (") + spec.hint + ")";
  double x = fallback_or(spec, 0.0);
  if (!node) {
    if (spec.presence == Presence::required) missing(name, spec.hint);
    return x;
  }
  std::optional<double> given;
  if (const auto* f = node->as_floating_point()) given = f->get();
  if (const auto* i = node->as_integer()) given = static_cast<double>(i->get());
  if (!given) {
    fail(*node, name, "expected a number" + hint);
    x = 0.0;
  } else if (!std::isfinite(*given)) {
    fail(*node, name, "must be a finite number" + hint);
    x = 0.0;
  } else if (*given < spec.min) {
    std::ostringstream os;
    os << "must be >= " << spec.min << hint;
    fail(*node, name, os.str());
    x = spec.min;
  } else {
    x = *given;
  }
  if (spec.bound_reason) {
    const bool above = spec.min_open ? x > spec.min : x >= spec.min;
    const bool below = spec.max_open ? x < spec.max : x <= spec.max;
    if (!(above && below)) fail(*node, name, spec.bound_reason);
  }
  return x;
}

/// One of `choices`; on a problem, the first of them.
std::string Reader::choice(const KeySpec& spec, const toml::node* node,
                           const std::vector<std::string>& choices) {
  const std::string name = spec.name();
  const std::string allowed = "one of \"" + join(choices, "\", \"") + "\"";
  const std::string first = choices.empty() ? "" : choices.front();
  if (!node) {
    if (spec.presence == Presence::required) missing(name, allowed);
    return fallback_or(spec, first);
  }
  const auto* s = node->as_string();
  if (!s) {
    fail(*node, name, "expected a string, " + allowed);
    return first;
  }
  for (const auto& c : choices) {
    if (s->get() == c) return c;
  }
  fail(*node, name, "must be " + allowed);
  return first;
}

/// An array of 1 to max_items strings, each one of `choices`; empty (with an error) when bad.
std::vector<std::string> Reader::choice_list(const KeySpec& spec, const toml::node& node,
                                             const std::vector<std::string>& choices) {
  const std::string name = spec.name();
  const std::string allowed = "each one of \"" + join(choices, "\", \"") + "\"";
  const toml::array* array = node.as_array();
  if (!array || array->empty() || array->size() > spec.max_items) {
    fail(node, name,
         "expected an array of 1 to " + std::to_string(spec.max_items) + " strings, " + allowed);
    return {};
  }
  std::vector<std::string> items;
  for (const toml::node& element : *array) {
    const auto* v = element.as_string();
    const bool known = v && std::find(choices.begin(), choices.end(), v->get()) != choices.end();
    if (!known) {
      fail(node, name, "entry " + show(element) + " is not allowed here: " + allowed);
      return {};
    }
    items.push_back(v->get());
  }
  return items;
}

/// A tempering ladder: min_int to max_int finite numbers >= min, strictly increasing or strictly
/// decreasing (so every rung is distinct and rung order is coupling order); empty when bad.
std::vector<double> Reader::ladder(const KeySpec& spec, const toml::node& node) {
  const std::string name = spec.name();
  const toml::array* array = node.as_array();
  if (!array || array->size() < static_cast<size_t>(spec.min_int) ||
      array->size() > static_cast<size_t>(spec.max_int)) {
    // A fixed count is a pair such as multicanonical.window; a range is a tempering ladder.
    fail(node, name,
         spec.min_int == spec.max_int
             ? "expected an array of " + std::to_string(spec.min_int) + " numbers"
             : "expected an array of " + std::to_string(spec.min_int) + " to " +
                   std::to_string(spec.max_int) + " numbers, one per rung of the ladder");
    return {};
  }
  std::vector<double> values;
  for (const toml::node& element : *array) {
    std::optional<double> x;
    if (const auto* f = element.as_floating_point()) x = f->get();
    if (const auto* i = element.as_integer()) x = static_cast<double>(i->get());
    if (!x || !std::isfinite(*x)) {
      fail(node, name, "entry " + show(element) + " is not a finite number");
      return {};
    }
    if (*x < spec.min) {
      fail(node, name, "entry " + show(element) + " must be >= " + shortest(spec.min));
      return {};
    }
    values.push_back(*x);
  }
  const bool rising = values[1] > values[0];
  for (size_t k = 1; k < values.size(); ++k) {
    if (rising ? values[k] > values[k - 1] : values[k] < values[k - 1]) continue;
    fail(node, name,
         "the ladder must be strictly increasing or strictly decreasing, but entry " +
             std::to_string(k) + " (" + shortest(values[k]) + ") follows " +
             shortest(values[k - 1]));
    return {};
  }
  return values;
}

void Reader::reject_unknown() {
  const std::vector<std::string> sections = section_names();
  for (auto&& [section_key, section_node] : root_) {
    const std::string section(section_key.str());
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      errors_.push_back(where_key(section_key, section_node, source_) + ": unknown section '" +
                        section + "' (known sections: " + join(sections, ", ") + ")");
      continue;
    }
    const toml::table* table = section_node.as_table();
    if (!table) {
      errors_.push_back(where_key(section_key, section_node, source_) + ": '" + section +
                        "' must be a table");
      continue;
    }
    std::vector<std::string> known;
    for (const KeySpec& spec : key_specs()) {
      if (section == spec.section) known.push_back(spec.key);
    }
    for (auto&& [key, value] : *table) {
      if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
        errors_.push_back(where_key(key, value, source_) + ": unknown key '" + section + "." +
                          std::string(key.str()) + "' (known keys in [" + section +
                          "]: " + join(known, ", ") + ")");
      }
    }
  }
}

}  // namespace lattica::config
