// Operator domains: the one place that spells GraphEngine's private domain and
// normalizes ONNX's default domain. ONNX names its default operator set both
// "" and "ai.onnx" (ONNX IR spec, "Operator Sets"); the IR always stores "".
#pragma once

#include <string>
#include <string_view>

namespace gec::ops {

/// Domain of GraphEngine's own ops (FusedConv, Gelu, Reorder, ...): written
/// into .gom files and into ONNX exports of optimized graphs.
inline constexpr const char* kGecDomain = "com.graphengine";

/// "" for ONNX's default domain however it is spelled; other domains unchanged.
inline std::string canonical_domain(std::string_view d) {
  return d == "ai.onnx" ? std::string() : std::string(d);
}

/// The domain as people write it: "ai.onnx" for the default domain.
inline std::string domain_label(std::string_view d) { return d.empty() ? "ai.onnx" : std::string(d); }

}  // namespace gec::ops
