// --dump-graph: the graph as ONNX (for Netron, or re-import), as the textual
// IR (ir/text.h: one line per node, to diff what a pass did) and as Graphviz
// DOT (and SVG when the `dot` program is on PATH), written by the
// PassManager before the first pass and after each one. File names
// NN_<tag>.{onnx,gir,dot,svg} sort in pass order.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "frontend/onnx/exporter.h"
#include "ir/text.h"
#include "passes/pass.h"

namespace gec::passes {
namespace {

std::string escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

/// One DOT id per node / input, stable within a file.
std::string to_dot(const ir::Graph& g) {
  std::ostringstream o;
  o << "digraph \"" << escape(g.name) << "\" {\n  rankdir=TB;\n  node [fontsize=10];\n";
  std::map<const ir::Value*, std::string> src;
  int k = 0;
  for (const ir::Value* v : g.inputs()) {
    src[v] = "in" + std::to_string(k++);
    o << "  " << src[v] << " [shape=ellipse,label=\"" << escape(v->name()) << "\\n"
      << escape(v->type.str()) << "\"];\n";
  }
  k = 0;
  for (const auto& n : g.nodes()) {
    const std::string id = "n" + std::to_string(k++);
    size_t sub = 0;
    for (const auto& a : n->attrs)
      if (a.kind == ir::Attribute::Kind::kGraph && a.g) sub += a.g->count_nodes_recursive();
    o << "  " << id << " [shape=box,label=\"" << escape(n->op_type) << "\\n" << escape(n->name);
    if (sub) o << "\\n(+" << sub << " nodes in subgraphs)";
    o << "\"];\n";
    for (const ir::Value* out : n->outputs()) src[out] = id;
    for (const ir::Value* in : n->inputs()) {
      if (!in || in->is_constant()) continue;  // weights would drown the picture
      auto it = src.find(in);
      if (it == src.end()) continue;  // outer-scope value
      o << "  " << it->second << " -> " << id << " [label=\"" << escape(in->type.str()) << "\"];\n";
    }
  }
  k = 0;
  for (const ir::Value* v : g.outputs()) {
    const std::string id = "out" + std::to_string(k++);
    o << "  " << id << " [shape=ellipse,label=\"" << escape(v->name()) << "\"];\n";
    if (src.count(v)) o << "  " << src[v] << " -> " << id << ";\n";
  }
  o << "}\n";
  return o.str();
}

bool dot_on_path() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / "dot")) return true;
  return false;
}

}  // namespace

void dump_graph(const ir::Graph& g, const std::string& dir, int index, const std::string& tag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ErrorCode::kIo, "--dump-graph: cannot create '" + dir + "': " + ec.message());
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d_", index);
  const std::string base = (std::filesystem::path(dir) / (prefix + tag)).string();
  frontend::export_onnx_file(g, base + ".onnx");
  std::ofstream f(base + ".dot");
  f << to_dot(g);
  f.close();
  if (!f) fail(ErrorCode::kIo, "--dump-graph: cannot write '" + base + ".dot'");
  std::ofstream t(base + ".gir");
  t << ir::print_graph(g);
  t.close();
  if (!t) fail(ErrorCode::kIo, "--dump-graph: cannot write '" + base + ".gir'");
  if (dot_on_path()) {
    const std::string cmd = "dot -Tsvg '" + base + ".dot' -o '" + base + ".svg' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) {
      // An SVG is a convenience: a failing `dot` leaves the .dot file, no error.
    }
  }
}

}  // namespace gec::passes
