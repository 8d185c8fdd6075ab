#include "sim/sweep_index.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace lattica {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", ch);
      out += buffer;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void write_sweep_index(const RunPlan& plan) {
  std::string json = "{\n  \"schema\": \"lattica-index/1\",\n";
  json += "  \"input\": " + json_string(plan.points.front().input_path) + ",\n  \"swept\": [";
  for (size_t k = 0; k < plan.swept.size(); ++k)
    json += (k ? ", " : "") + json_string(plan.swept[k]);
  json += "],\n  \"points\": [\n";
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const Config& c = plan.points[i];
    json += "    {\"index\": " + std::to_string(c.point_index) +
            ", \"file\": " + json_string(file_name(c.output_path)) +
            ", \"seed\": " + std::to_string(c.seed) + ", \"parameters\": {";
    for (size_t k = 0; k < c.swept_values.size(); ++k) {
      // Swept values are TOML numbers or arrays of integers, which are valid JSON as written.
      json +=
          (k ? ", " : "") + json_string(c.swept_values[k].first) + ": " + c.swept_values[k].second;
    }
    json += i + 1 < plan.points.size() ? "}},\n" : "}}\n";
  }
  json += "  ]\n}\n";

  const std::string temporary = plan.index_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << json;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write the sweep index " + temporary);
    }
  }
  if (std::rename(temporary.c_str(), plan.index_path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + plan.index_path);
  }
}

}  // namespace lattica
