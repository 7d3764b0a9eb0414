// NumPy .npy file I/O for model inputs, outputs and reference data.
// Format: numpy's NEP 1 ("A Simple File Format for NumPy Arrays"): magic
// "\x93NUMPY", version byte pair, a little-endian header length (uint16 in
// 1.0, uint32 in 2.0/3.0), an ASCII Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces to a multiple of 64 bytes and ending in '\n', then the raw data.
#pragma once

#include <cstdint>
#include <string>

#include "gec/tensor.h"

namespace gec {

/// Reads a C-order .npy array with a little-endian (or byte-sized) dtype:
/// f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16. Versions 1.0, 2.0, 3.0.
/// Throws gec::Error(kIo) when the file cannot be opened or read, is not a
/// regular file (FIFO, device) or is larger than `max_bytes`, and
/// gec::Error(kInvalidArgument) naming the file for a bad magic, malformed
/// header, unsupported dtype (big-endian, object, strings...),
/// fortran_order True, or data shorter than the shape needs.
Tensor read_npy(const std::string& path, uint64_t max_bytes = UINT64_MAX);

/// Writes `t` as a C-order .npy (version 1.0, or 2.0 when the header does not
/// fit in 64 KiB). Throws gec::Error(kInvalidArgument) for dtypes numpy has no
/// code for here (string, bfloat16) and gec::Error(kIo) when writing fails.
void write_npy(const std::string& path, const TensorView& t);

}  // namespace gec
