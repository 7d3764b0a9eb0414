// A 2-D transpose of 4-byte elements in 8 x 8 register blocks, compiled per
// SIMD target (transpose_simd.cc) for strided_copy.h's tiled case.
#pragma once

#include <cstdint>

namespace gec::kernels::cpu::transpose_simd {

/// out[r * cols + c] = in[r + c * cs] for r < rows, c < cols: `rows` rows
/// of the transposed matrix, each `cols` elements long (dense), read from
/// columns of `in` whose rows are `cs` elements apart. Any 4-byte type (bit
/// copies: NaN payloads kept). On x86 targets with 256-bit vectors, 8 x 8
/// blocks are loaded as 8 vectors, transposed by shuffles and stored as 8,
/// the edges (under 8 rows or columns) element by element; other targets
/// copy element by element in 16 x 16 tiles.
void transpose32(const uint32_t* in, uint32_t* out, int64_t rows, int64_t cols, int64_t cs);

}  // namespace gec::kernels::cpu::transpose_simd
