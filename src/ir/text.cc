// The textual IR (text.h): printer, then a small hand-written tokenizer and
// recursive-descent parser for the same grammar.
#include "ir/text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace gec::ir {
namespace {

// ---- printing ------------------------------------------------------------------

std::string float_str(double f, int digits) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", digits, f);
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Names written without quotes: what the lexer reads as one word (a letter
// or '_' first, not "_" alone, which means an omitted input).
bool plain_name(const std::string& s) {
  if (s.empty() || s == "_" || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-')) return false;
  return true;
}

std::string quoted(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') { r += "\\n"; continue; }
    r += c;
  }
  return r + "\"";
}

/// Element data of a constant as `[a, b, ...]`; empty when the dtype has no
/// text form here.
std::string data_str(const Tensor& t) {
  std::ostringstream o;
  o << "[";
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i) o << ", ";
    switch (t.dtype()) {
      case DType::kFloat32: o << float_str(t.as<float>()[i], 9); break;
      case DType::kFloat64: o << float_str(t.as<double>()[i], 17); break;
      case DType::kInt8: o << int{t.as<int8_t>()[i]}; break;
      case DType::kInt16: o << t.as<int16_t>()[i]; break;
      case DType::kInt32: o << t.as<int32_t>()[i]; break;
      case DType::kInt64: o << t.as<int64_t>()[i]; break;
      case DType::kUInt8: o << unsigned{t.as<uint8_t>()[i]}; break;
      case DType::kUInt16: o << t.as<uint16_t>()[i]; break;
      case DType::kUInt32: o << t.as<uint32_t>()[i]; break;
      case DType::kUInt64: o << t.as<uint64_t>()[i]; break;
      case DType::kBool: o << int{t.as<uint8_t>()[i] != 0}; break;
      default: return "";
    }
  }
  o << "]";
  return o.str();
}

struct Printer {
  const PrintOptions& opts;
  std::ostringstream out;
  std::unordered_map<const Value*, std::string> names;
  int next = 0;

  std::string define(const Value* v) {
    std::string n = opts.canonical ? std::to_string(next++) : v->name();
    names[v] = n;
    return ref(v);
  }
  std::string ref(const Value* v) const {
    auto it = names.find(v);
    const std::string n = it != names.end() ? it->second : v->name();
    return "%" + (plain_name(n) ? n : quoted(n));
  }

  std::string attr_value(const Attribute& a, int indent, std::vector<const Graph*>& subgraphs) {
    std::ostringstream o;
    auto list = [&o](const auto& xs, const char* empty, auto fmt) {
      if (xs.empty()) { o << empty; return; }
      o << "[";
      for (size_t i = 0; i < xs.size(); ++i) o << (i ? ", " : "") << fmt(xs[i]);
      o << "]";
    };
    switch (a.kind) {
      case Attribute::Kind::kInt: o << a.i; break;
      case Attribute::Kind::kFloat: o << float_str(a.f, 9); break;
      case Attribute::Kind::kString: o << quoted(a.s); break;
      case Attribute::Kind::kInts: list(a.ints, "ints[]", [](int64_t v) { return std::to_string(v); }); break;
      case Attribute::Kind::kFloats: list(a.floats, "floats[]", [](float v) { return float_str(v, 9); }); break;
      case Attribute::Kind::kStrings: list(a.strings, "strings[]", [](const std::string& v) { return quoted(v); }); break;
      case Attribute::Kind::kTensor: {
        const std::string d = a.t ? data_str(*a.t) : "";
        o << "tensor " << (a.t ? TensorType::of(a.t->dtype(), a.t->shape()).str() : "float32[*]") << " = "
          << (d.empty() || a.t->numel() > opts.max_elements ? "..." : d);
        break;
      }
      case Attribute::Kind::kGraph:
        o << "graph";
        subgraphs.push_back(a.g.get());
        break;
    }
    (void)indent;
    return o.str();
  }

  // Constants of `g` read by `g`'s nodes or its subgraphs', in order of first use.
  void collect_constants(const Graph& g, const Graph& owner, std::vector<const Value*>& r,
                         std::unordered_set<const Value*>& seen) {
    for (const auto& n : g.nodes()) {
      for (const Value* in : n->inputs())
        if (in && in->is_constant() && in->owner() == &owner && seen.insert(in).second) r.push_back(in);
      for (const auto& a : n->attrs)
        if (a.kind == Attribute::Kind::kGraph && a.g) collect_constants(*a.g, owner, r, seen);
    }
    for (const Value* v : g.outputs())
      if (v->is_constant() && v->owner() == &owner && seen.insert(v).second) r.push_back(v);
  }

  void graph(const Graph& g, int indent) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    out << pad << "graph";
    if (!opts.canonical && !g.name.empty()) out << " " << (plain_name(g.name) ? g.name : quoted(g.name));
    out << " {\n";
    for (const Value* v : g.inputs()) out << pad << "  input " << define(v) << ": " << v->type.str() << "\n";
    std::vector<const Value*> consts;
    std::unordered_set<const Value*> seen;
    collect_constants(g, g, consts, seen);
    for (const Value* c : consts) {
      if (names.count(c)) continue;  // a constant that is also a graph input
      const Tensor& t = *c->constant;
      const std::string d = data_str(t);
      out << pad << "  const " << define(c) << ": " << TensorType::of(t.dtype(), t.shape()).str() << " = "
          << (d.empty() || t.numel() > opts.max_elements ? "..." : d) << "\n";
    }
    for (const auto& n : g.nodes()) node(*n, indent + 2);
    out << pad << "  output";
    for (size_t i = 0; i < g.outputs().size(); ++i) out << (i ? ", " : " ") << ref(g.outputs()[i]);
    out << "\n" << pad << "}\n";
  }

  void node(const Node& n, int indent) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    out << pad;
    for (size_t i = 0; i < n.outputs().size(); ++i) out << (i ? ", " : "") << define(n.output(i));
    if (!n.outputs().empty()) out << " = ";
    if (!n.domain.empty()) out << n.domain << "::";
    out << n.op_type << "(";
    for (size_t i = 0; i < n.inputs().size(); ++i) out << (i ? ", " : "") << (n.input(i) ? ref(n.input(i)) : "_");
    out << ")";
    std::vector<const Attribute*> attrs;
    for (const auto& a : n.attrs) attrs.push_back(&a);
    std::sort(attrs.begin(), attrs.end(), [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
    std::vector<const Graph*> subgraphs;
    if (!attrs.empty()) {
      out << " {";
      for (size_t i = 0; i < attrs.size(); ++i)
        out << (i ? ", " : "") << attrs[i]->name << " = " << attr_value(*attrs[i], indent, subgraphs);
      out << "}";
    }
    if (!n.outputs().empty()) {
      out << " :";
      for (size_t i = 0; i < n.outputs().size(); ++i) out << (i ? ", " : " ") << n.output(i)->type.str();
    }
    if (!opts.canonical && !n.name.empty()) out << " @" << (plain_name(n.name) ? n.name : quoted(n.name));
    out << "\n";
    for (const Graph* sg : subgraphs) graph(*sg, indent + 2);
  }
};

// ---- parsing --------------------------------------------------------------------

enum class Tok { kIdent, kValue, kString, kNumber, kPunct, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  int line = 0;
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  Token next() {
    skip_space();
    Token t;
    t.line = line_;
    if (i_ >= s_.size()) return t;
    const char c = s_[i_];
    if (c == '"') {
      t.kind = Tok::kString;
      t.text = string_body();
      return t;
    }
    if (c == '%') {
      ++i_;
      t.kind = Tok::kValue;
      if (i_ < s_.size() && s_[i_] == '"') t.text = string_body();
      else t.text = word();
      if (t.text.empty()) fail_at(line_, "a value name after '%'");
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        ((c == '-' || c == '+') && i_ + 1 < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) || s_[i_ + 1] == 'i'))) {
      t.kind = Tok::kNumber;
      size_t j = i_ + 1;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.' ||
                               ((s_[j] == '-' || s_[j] == '+') && (s_[j - 1] == 'e' || s_[j - 1] == 'E'))))
        ++j;
      t.text = s_.substr(i_, j - i_);
      i_ = j;
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.text = word();
      t.kind = t.text == "_" ? Tok::kPunct : Tok::kIdent;
      return t;
    }
    t.kind = Tok::kPunct;
    t.text = std::string(1, c);
    ++i_;
    return t;
  }

  [[noreturn]] static void fail_at(int line, const std::string& what) {
    fail(ErrorCode::kInvalidArgument, "line " + std::to_string(line) + ": expected " + what);
  }

 private:
  void skip_space() {
    while (i_ < s_.size()) {
      if (s_[i_] == '\n') ++line_;
      if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (!std::isspace(static_cast<unsigned char>(s_[i_]))) return;
      ++i_;
    }
  }
  // Letters, digits, '_', '.', '/', '-', and "::" between words (domain::Op).
  std::string word() {
    size_t j = i_;
    while (j < s_.size()) {
      const char c = s_[j];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
          (c == '-' && j > i_)) {
        ++j;
      } else if (c == ':' && j + 2 < s_.size() && s_[j + 1] == ':' && std::isalpha(static_cast<unsigned char>(s_[j + 2]))) {
        j += 2;
      } else {
        break;
      }
    }
    std::string w = s_.substr(i_, j - i_);
    i_ = j;
    return w;
  }
  std::string string_body() {
    const int start = line_;
    ++i_;  // opening quote
    std::string r;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\' && i_ < s_.size()) {
        c = s_[i_++];
        if (c == 'n') c = '\n';
      }
      r += c;
    }
    if (i_ >= s_.size()) fail_at(start, "a closing '\"'");
    ++i_;
    return r;
  }

  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1;
};

/// `s` as an integer in [lo, hi], or an error naming the line.
int64_t to_int(const std::string& s, int line, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    Lexer::fail_at(line, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + s + "'");
  return v;
}

uint64_t to_uint(const std::string& s, int line, uint64_t hi) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || s[0] == '-' || *end != '\0' || errno == ERANGE || v > hi)
    Lexer::fail_at(line, "an integer in [0, " + std::to_string(hi) + "], not '" + s + "'");
  return v;
}

/// `s` as a floating-point number ("inf", "nan" included); subnormal results
/// are fine, overflow is an error.
double to_double(const std::string& s, int line) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || (errno == ERANGE && std::isinf(v)))
    Lexer::fail_at(line, "a number, not '" + s + "'");
  return v;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : lex_(text) { advance(); }

  std::unique_ptr<Graph> parse() {
    auto g = std::make_unique<Graph>();
    graph(*g, nullptr);
    if (tok_.kind != Tok::kEnd) error("the end of the text after the graph");
    return g;
  }

 private:
  void advance() { tok_ = lex_.next(); }
  bool is(const char* p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }
  bool is_word(const char* w) const { return tok_.kind == Tok::kIdent && tok_.text == w; }
  [[noreturn]] void error(const std::string& what) const {
    Lexer::fail_at(tok_.line, what + (tok_.kind == Tok::kEnd ? " (got the end)" : " (got '" + tok_.text + "')"));
  }
  void expect(const char* p) {
    if (!is(p)) error(std::string("'") + p + "'");
    advance();
  }
  std::string ident() {
    if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kString) error("a name");
    std::string s = tok_.text;
    advance();
    return s;
  }
  std::string value_name() {
    if (tok_.kind != Tok::kValue) error("a value (%name)");
    std::string s = tok_.text;
    advance();
    return s;
  }

  // Scopes: a subgraph sees its own values and every enclosing graph's.
  Value* lookup(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    error("a value defined earlier: %" + name + " is not");
  }
  void bind(const std::string& name, Value* v) { scopes_.back().emplace(name, v); }
  // Called right after reading a defining name, so the error has its line.
  std::string new_name() {
    std::string n = value_name();
    if (scopes_.back().count(n)) Lexer::fail_at(tok_.line, "a new value name: %" + n + " is defined twice");
    return n;
  }

  TensorType type(int depth = 0) {
    const std::string head = ident();
    if (head == "seq" || head == "optional") {
      expect("(");
      if (depth >= 2) error("a tensor type (types nest at most as optional(seq(...)))");
      TensorType inner = type(depth + 1);
      expect(")");
      if (head == "seq" && inner.kind != ValueKind::kTensor) error("seq of a tensor type");
      if (head == "optional" && is_optional(inner.kind)) error("optional of a tensor or seq type");
      if (head == "seq") inner.kind = ValueKind::kSequence;
      else inner.kind = inner.kind == ValueKind::kSequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor;
      return inner;
    }
    TensorType t;
    t.dtype = dtype_from_name(head);
    if (t.dtype == DType::kUndefined && head != dtype_name(DType::kUndefined)) error("a dtype: '" + head + "' is not");
    expect("[");
    if (is("*")) {
      advance();
      expect("]");
      return t;
    }
    t.has_shape = true;
    while (!is("]")) {
      Dim d;
      if (tok_.kind == Tok::kNumber) d.value = to_int(tok_.text, tok_.line, 0);
      else if (tok_.kind == Tok::kIdent) d.param = tok_.text;
      else if (!is("?")) error("a dim (a size, a name or ?)");
      advance();
      t.dims.push_back(d);
      if (!is("]")) expect(",");
    }
    advance();
    return t;
  }

  // The items of a list whose '[' was just read, up to and past its ']':
  // strings, or numbers ("inf" and "nan" included).
  std::vector<std::string> list_items(bool strings) {
    std::vector<std::string> r;
    while (!is("]")) {
      if (strings ? tok_.kind != Tok::kString
                  : tok_.kind != Tok::kNumber && !is_word("inf") && !is_word("nan"))
        error(strings ? "a string" : "a number");
      r.push_back(tok_.text);
      advance();
      if (!is("]")) expect(",");
    }
    advance();
    return r;
  }

  std::vector<std::string> number_list() {
    expect("[");
    return list_items(false);
  }

  static bool is_float_text(const std::string& s) {
    return s.find_first_of(".eEin") != std::string::npos;  // '.', exponent, inf, nan
  }

  Tensor tensor_data(const TensorType& t) {
    if (!t.is_static()) error("a static shape for constant data");
    if (is("...") || is(".")) error("constant data (elided data '...' cannot be parsed)");
    const int line = tok_.line;
    const std::vector<std::string> xs = number_list();
    // Count before allocating: the shape may be anything the text says.
    int64_t n = 1;
    for (int64_t d : t.static_shape()) n = d != 0 && n > INT64_MAX / d ? -1 : (n < 0 ? -1 : n * d);
    if (n != static_cast<int64_t>(xs.size()))
      Lexer::fail_at(line, (n < 0 ? std::string("a shape whose size fits") : std::to_string(n)) + " elements, not " +
                               std::to_string(xs.size()));
    switch (t.dtype) {
      case DType::kFloat32: case DType::kFloat64: case DType::kInt8: case DType::kInt16: case DType::kInt32:
      case DType::kInt64: case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      case DType::kBool: break;
      default: Lexer::fail_at(line, std::string("a dtype with a text form, not ") + dtype_name(t.dtype));
    }
    Tensor r(t.dtype, t.static_shape());
    for (size_t i = 0; i < xs.size(); ++i) {
      const std::string& x = xs[i];
      switch (t.dtype) {
        case DType::kFloat32: r.as<float>()[i] = static_cast<float>(to_double(x, line)); break;
        case DType::kFloat64: r.as<double>()[i] = to_double(x, line); break;
        case DType::kInt8: r.as<int8_t>()[i] = static_cast<int8_t>(to_int(x, line, INT8_MIN, INT8_MAX)); break;
        case DType::kInt16: r.as<int16_t>()[i] = static_cast<int16_t>(to_int(x, line, INT16_MIN, INT16_MAX)); break;
        case DType::kInt32: r.as<int32_t>()[i] = static_cast<int32_t>(to_int(x, line, INT32_MIN, INT32_MAX)); break;
        case DType::kInt64: r.as<int64_t>()[i] = to_int(x, line); break;
        case DType::kUInt8: r.as<uint8_t>()[i] = static_cast<uint8_t>(to_uint(x, line, UINT8_MAX)); break;
        case DType::kUInt16: r.as<uint16_t>()[i] = static_cast<uint16_t>(to_uint(x, line, UINT16_MAX)); break;
        case DType::kUInt32: r.as<uint32_t>()[i] = static_cast<uint32_t>(to_uint(x, line, UINT32_MAX)); break;
        case DType::kUInt64: r.as<uint64_t>()[i] = to_uint(x, line, UINT64_MAX); break;
        case DType::kBool: r.as<uint8_t>()[i] = to_int(x, line, 0, 1) != 0; break;
        default: break;
      }
    }
    return r;
  }

  // One attribute value; a graph attribute is parsed after the node line.
  Attribute attribute(const std::string& name, bool& is_graph) {
    is_graph = false;
    if (tok_.kind == Tok::kString) {
      Attribute a = Attribute::String(name, tok_.text);
      advance();
      return a;
    }
    if (tok_.kind == Tok::kNumber || is_word("inf") || is_word("nan")) {
      const std::string x = tok_.text;
      const int line = tok_.line;
      advance();
      return is_float_text(x) ? Attribute::Float(name, static_cast<float>(to_double(x, line)))
                              : Attribute::Int(name, to_int(x, line));
    }
    if (is_word("ints") || is_word("floats") || is_word("strings")) {
      const std::string k = tok_.text;
      advance();
      expect("[");
      expect("]");
      if (k == "ints") return Attribute::Ints(name, {});
      if (k == "floats") return Attribute::Floats(name, {});
      return Attribute::Strings(name, {});
    }
    if (is_word("graph")) {
      advance();
      is_graph = true;
      Attribute a;
      a.name = name;
      a.kind = Attribute::Kind::kGraph;
      return a;
    }
    if (is_word("tensor")) {
      advance();
      const TensorType t = type();
      expect("=");
      return Attribute::TensorAttr(name, tensor_data(t));
    }
    if (is("[")) {
      const int line = tok_.line;
      advance();
      if (tok_.kind == Tok::kString) return Attribute::Strings(name, list_items(true));
      const std::vector<std::string> xs = list_items(false);
      if (std::any_of(xs.begin(), xs.end(), is_float_text)) {
        std::vector<float> f;
        for (const auto& x : xs) f.push_back(static_cast<float>(to_double(x, line)));
        return Attribute::Floats(name, f);
      }
      std::vector<int64_t> v;
      for (const auto& x : xs) v.push_back(to_int(x, line));
      return Attribute::Ints(name, v);
    }
    error("an attribute value");
  }

  void node(Graph& g) {
    std::vector<std::string> outs;
    if (tok_.kind == Tok::kValue) {
      outs.push_back(new_name());
      while (is(",")) {
        advance();
        outs.push_back(new_name());
      }
      expect("=");
    }
    std::string op = ident(), domain;
    if (auto p = op.rfind("::"); p != std::string::npos) {
      domain = op.substr(0, p);
      op = op.substr(p + 2);
    }
    expect("(");
    std::vector<Value*> ins;
    while (!is(")")) {
      if (is("_")) {
        ins.push_back(nullptr);
        advance();
      } else {
        ins.push_back(lookup(value_name()));
      }
      if (!is(")")) expect(",");
    }
    advance();
    std::vector<Attribute> attrs;
    std::vector<size_t> graph_attrs;
    if (is("{")) {
      advance();
      while (!is("}")) {
        const std::string name = ident();
        expect("=");
        bool is_graph = false;
        attrs.push_back(attribute(name, is_graph));
        if (is_graph) graph_attrs.push_back(attrs.size() - 1);
        if (!is("}")) expect(",");
      }
      advance();
    }
    std::vector<TensorType> types;
    if (is(":")) {
      advance();
      types.push_back(type());
      while (is(",")) {
        advance();
        types.push_back(type());
      }
    }
    std::string name;
    if (is("@")) {
      advance();
      name = ident();
    }
    if (!types.empty() && types.size() != outs.size())
      error(std::to_string(outs.size()) + " result types");
    Node* n = g.add_node(op, ins, outs, name, domain);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!types.empty()) n->output(i)->type = types[i];
      bind(outs[i], n->output(i));
    }
    for (size_t k : graph_attrs) {
      auto sg = std::make_shared<Graph>();
      sg->parent = &g;
      if (!is_word("graph")) error("the body of graph attribute '" + attrs[k].name + "'");
      graph(*sg, &g);
      attrs[k].g = sg;
    }
    for (auto& a : attrs) n->set_attr(std::move(a));
  }

  void graph(Graph& g, Graph* parent) {
    if (!is_word("graph")) error("'graph'");
    if (scopes_.size() >= 64) error("at most 64 nested graphs");
    advance();
    if (tok_.kind == Tok::kIdent || tok_.kind == Tok::kString) g.name = ident();
    g.parent = parent;
    expect("{");
    scopes_.emplace_back();
    while (!is("}")) {
      if (tok_.kind == Tok::kEnd) error("'}'");
      if (is_word("input")) {
        advance();
        const std::string name = new_name();
        expect(":");
        Value* v = g.add_value(name, type());
        g.inputs().push_back(v);
        bind(name, v);
      } else if (is_word("const")) {
        advance();
        const std::string name = new_name();
        expect(":");
        const TensorType t = type();
        expect("=");
        Value* v = g.add_constant(name, tensor_data(t));
        bind(name, v);
      } else if (is_word("output")) {
        advance();
        g.outputs().push_back(lookup(value_name()));
        while (is(",")) {
          advance();
          g.outputs().push_back(lookup(value_name()));
        }
      } else {
        node(g);
      }
    }
    advance();
    scopes_.pop_back();
  }

  Lexer lex_;
  Token tok_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
};

}  // namespace

std::string print_graph(const Graph& g, const PrintOptions& opts) {
  Printer p{opts, {}, {}, 0};
  p.graph(g, 0);
  return p.out.str();
}

std::unique_ptr<Graph> parse_graph(const std::string& text) { return Parser(text).parse(); }

}  // namespace gec::ir
