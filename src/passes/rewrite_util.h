// Small rewrite helpers shared by the passes: reading constants, checking the
// guards every fusion needs (single consumer, not a graph output), replacing a
// value while keeping graph output names, and a sweep that applies one node
// rewrite over a graph and its subgraphs (noop_elimination's; fusions and
// foldings are rule tables, rewrite_rules.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gec::passes {

/// True for a node of ai.onnx with this op type.
bool is_op(const ir::Node* n, const char* op_type);

/// Constant int64/int32 data of `v` as int64 values; nullopt when `v` is null,
/// not constant or not an integer tensor.
std::optional<std::vector<int64_t>> const_ints(const ir::Value* v);

/// Constant float32 data of `v`; nullopt otherwise.
std::optional<std::vector<float>> const_floats(const ir::Value* v);

/// The only (node, input index) reading `v`, when `v` has exactly one use, is
/// not a graph output, and is read by no subgraph; else {nullptr, -1}.
std::pair<ir::Node*, int> single_consumer(const ir::Graph& g, const ir::Value* v);

/// The producer of `v` when it is a one-output `op` node of `g` and `v` has
/// single_consumer(g, v): the link test of every chain pattern.
ir::Node* sole_producer(const ir::Graph& g, const ir::Value* v, const char* op);

/// The perm of Transpose node `t`: its `perm` attribute, or the reversal of
/// the input's dims that ONNX Transpose defaults to when that rank is known;
/// nullopt when there is none or it is not a permutation of 0 .. n-1 (of
/// the input's rank, where known).
std::optional<std::vector<int64_t>> transpose_perm(const ir::Node* t);

/// The one perm for Transpose(Transpose(x, a), b): c[i] = a[b[i]] (a and b
/// permutations of one rank).
std::vector<int64_t> compose_perms(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// True when `v` is a one-element float32 constant within `rel` (relative) of
/// `want`; rel 0 means exactly equal.
bool const_near(const ir::Value* v, double want, double rel = 0.0);

/// A new float32 constant of `g` named after `base`.
ir::Value* add_f32_constant(ir::Graph& g, const std::string& base, const Shape& shape,
                            const std::vector<float>& data);

/// A new node of `g` like one-output `op` (type, domain, attributes, output
/// type; fresh node and output names after op's) reading `inputs`: the
/// replacement a rule returns when it changes an op's inputs or attributes
/// (the driver then swaps it in for `op`).
ir::Node* copy_node(ir::Graph& g, const ir::Node* op, const std::vector<ir::Value*>& inputs);

/// Static shape of `v`, or nullopt.
std::optional<Shape> static_shape(const ir::Value* v);

/// Makes every reader of `from` read `to`. When `from` is a graph output of
/// `g`, `to` takes over its name (graph outputs keep their names); that needs
/// `to` to be a computed value of `g` that is not itself a graph input or
/// output: otherwise nothing changes and false is returned. `from`'s producer
/// is left for the caller (or dead-node elimination) to remove.
bool replace_value(ir::Graph& g, ir::Value* from, ir::Value* to);

/// replace_value, and `to` also takes `from`'s name when both belong to `g`
/// (`from` gets a fresh one): a fused node's output is the value the fused
/// nodes computed, so dumps and `gec compare` match it by name.
bool replace_value_keeping_name(ir::Graph& g, ir::Value* from, ir::Value* to);

/// Removes `n` when none of its outputs is used or a graph output.
void remove_if_dead(ir::Graph& g, ir::Node* n);

/// Applies `rewrite` to every node of `g` and its subgraphs (in order, nodes
/// added during the sweep are visited next sweep) until a sweep changes
/// nothing; returns the number of rewrites. `rewrite` returns true when it
/// changed the graph; it may remove the node it was given. Errors:
/// kInternal when a sweep still changes something after 100 sweeps.
int64_t rewrite_to_fixed_point(ir::Graph& g,
                               const std::function<bool(ir::Graph&, ir::Node*)>& rewrite);

}  // namespace gec::passes
