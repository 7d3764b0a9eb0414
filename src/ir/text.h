// The IR as text: a printer and a parser, so that pass tests read as
// Before / Expected graphs and --dump-graph shows what a pass did line by line.
//
//   graph main {
//     input %x: float32[1,2,4,4]
//     const %W: float32[2,2,1,1] = [1, 2, 3, 4]
//     %c = Conv(%x, %W, _) {group = 1, pads = [0, 0, 0, 0]} : float32[1,2,4,4] @conv1
//     %y = com.graphengine::Gelu(%c) {approximate = "none"} : float32[1,2,4,4] @gelu
//     output %y
//   }
//
// One line per node: results, op (domain::op outside ai.onnx), operands (`_`
// for an omitted optional input), attributes in name order, result types, and
// the node name after `@`. Types are TensorType::str() ("float32[N,3,?,?]",
// "float32[*]" for unknown rank, "seq(float32[?])"). Attribute values: int
// `3`, float `0.5` (always with a '.', 'e', "inf" or "nan"), string `"s"`,
// lists `[1, 2]`, `[0.5, 1.0]`, `["a"]` (empty: `ints[]`, `floats[]`,
// `strings[]`), a tensor `tensor float32[2] = [1, 2]`, a subgraph
// `graph { ... }` on the following lines. Constants print their data when they
// have at most PrintOptions::max_elements elements and a dtype with a text
// form (float32/64, signed and unsigned integers, bool), else `= ...`: such
// text (float16, bfloat16 and string data, large weights) cannot be parsed
// back. A constant that is also a graph input prints as an input (its default
// data is not shown). Names that are not one word (a letter or '_' first,
// then letters, digits, '_', '.', '/', '-') are quoted: %"/conv1/Conv".
// `#` starts a comment.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"

namespace gec::ir {

struct PrintOptions {
  /// Names values %0, %1, ... in order of definition (inputs, constants in
  /// order of first use, node results) and leaves out node names, so that two
  /// graphs that compute the same way print the same whatever their names.
  bool canonical = false;
  /// Constants with more elements print `= ...`.
  int64_t max_elements = 64;
};

/// `g` (and its subgraphs) as text. Constants nobody reads are left out.
std::string print_graph(const Graph& g, const PrintOptions& opts = {});

/// Parses print_graph's text into a new graph (node order as written; value
/// and node names as written). Errors: gec::Error(kInvalidArgument)
/// "line N: ..." for a syntax error, an unknown dtype, a number out of its
/// dtype's range, a value used before it is defined or defined twice, a
/// constant whose data does not have its shape's element count, elided
/// constant data, or graphs nested deeper than 64.
std::unique_ptr<Graph> parse_graph(const std::string& text);

}  // namespace gec::ir
