// Memory plan drawing; see plan_svg.h.
#include "memory/plan_svg.h"

#include <algorithm>
#include <cstdio>

#include "memory/lifetimes.h"
#include "memory/planner.h"

namespace gec::memory {
namespace {

std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '&': r += "&amp;"; break;
      case '"': r += "&quot;"; break;
      default: r += c;
    }
  }
  return r;
}

std::string fmt(const char* f, double a, double b, double c, double d) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

}  // namespace

std::string plan_svg(const ir::Graph& g, const ir::ValueIndex& ids, const MemoryPlan& plan) {
  const int64_t arena_bytes = plan.arena_bytes;
  const std::vector<ArenaTensor> t = arena_tensors(g, ids, plan);
  const Lifetimes lt = compute_lifetimes(g);
  const double width = 1200, height = 800, margin = 40;
  const double steps = static_cast<double>(std::max<int64_t>(1, lt.end + 1));
  const double sx = width / steps, sy = height / static_cast<double>(std::max<int64_t>(1, arena_bytes));
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(int(width + 2 * margin)) +
                  "\" height=\"" + std::to_string(int(height + 2 * margin)) + "\" font-family=\"sans-serif\" "
                  "font-size=\"12\">\n";
  s += "<text x=\"" + std::to_string(int(margin)) + "\" y=\"20\">memory plan: " + std::to_string(t.size()) +
       " arena tensors, arena " + std::to_string(arena_bytes) + " bytes; x = execution step (0.." +
       std::to_string(lt.end) + "), y = offset</text>\n";
  s += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", margin,
           margin, width, height);
  for (const ArenaTensor& a : t) {
    const unsigned h = static_cast<unsigned>(std::hash<std::string>()(a.name));
    char color[16];
    std::snprintf(color, sizeof color, "#%02x%02x%02x", 64 + h % 160, 64 + (h >> 8) % 160, 64 + (h >> 16) % 160);
    s += fmt("<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", margin + a.first * sx,
             margin + a.offset * sy, std::max(1.0, (a.last - a.first + 1) * sx), std::max(1.0, a.bytes * sy));
    s += std::string(" fill=\"") + color + "\" fill-opacity=\"0.8\" stroke=\"#222\" stroke-width=\"0.3\">";
    s += "<title>" + xml_escape(a.name) + ": " + std::to_string(a.bytes) + " bytes at offset " +
         std::to_string(a.offset) + ", steps " + std::to_string(a.first) + ".." + std::to_string(a.last) +
         "</title></rect>\n";
  }
  return s + "</svg>\n";
}

}  // namespace gec::memory
