// Command-line overrides (--set, --backend, --output, --seed): each becomes a value in the
// parsed input, so that it is validated exactly like the same key in the file.

#include "sim/config/internal.hpp"

namespace lattica::config {

namespace {

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

}  // namespace

void apply_overrides(toml::table& root, const ConfigOverrides& overrides,
                     std::vector<std::string>& errors) {
  for (const auto& s : overrides.set) apply_override(root, s, "--set " + s, errors);
  if (overrides.backend)
    apply_override(root, "run.backend=" + toml_quote(*overrides.backend),
                   "--backend " + *overrides.backend, errors);
  if (overrides.output)
    apply_override(root, "output.path=" + toml_quote(*overrides.output),
                   "--output " + *overrides.output, errors);
  if (overrides.seed)
    apply_override(root, "run.seed=" + *overrides.seed, "--seed " + *overrides.seed, errors);
}

}  // namespace lattica::config
