//===- Half.h - bf16 and f16 conversions -------------------------*- C++ -*-===//
//
// The runtime stores bf16 and f16 tensors as their 16-bit patterns and
// computes in f32; these are the conversions between them, in integer
// arithmetic so host and device round the same way whatever the FPU mode:
//   - narrowing rounds to nearest, ties to even (IEEE 754's default, what
//     PyTorch, numpy and the CUDA intrinsics do), overflowing to +-inf;
//   - a NaN stays a NaN, made quiet, with its sign and top payload bits;
//   - infinities and subnormals (f16's, and f32's into bf16) convert exactly
//     or round like any other value;
//   - widening is exact.
// From double, the value is first rounded to f32 with round-to-odd, which
// f32's 24 bits (>= p + 2 for both formats) make free of double rounding.
//
// Every function is inline and, under nvcc, __host__ __device__, so CUDA
// kernels include this header as it is.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_HALF_H
#define AUTOSHARD_RUNTIME_HALF_H

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define AUTOSHARD_HOST_DEVICE __host__ __device__
#else
#define AUTOSHARD_HOST_DEVICE
#endif

namespace autoshard::rt {

AUTOSHARD_HOST_DEVICE inline uint32_t getFloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

AUTOSHARD_HOST_DEVICE inline float getFloatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

//===----------------------------------------------------------------------===//
// bf16: f32's sign and exponent, 7 stored mantissa bits
//===----------------------------------------------------------------------===//

AUTOSHARD_HOST_DEVICE inline float bf16ToFloat(uint16_t h) {
  return getFloatFromBits(static_cast<uint32_t>(h) << 16);
}

AUTOSHARD_HOST_DEVICE inline uint16_t floatToBF16(float f) {
  uint32_t u = getFloatBits(f);
  // NaN: keep the top of the payload and set the quiet bit, so a NaN whose
  // payload sits in the low 16 bits does not become an infinity.
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7fff rounds above-half up and below-half down; the low kept
  // bit breaks the tie towards even. A carry into the exponent is the
  // correct next binade (up to +-inf).
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

//===----------------------------------------------------------------------===//
// f16 (IEEE binary16): 5 exponent bits (bias 15), 10 mantissa bits
//===----------------------------------------------------------------------===//

AUTOSHARD_HOST_DEVICE inline float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) // inf / NaN, payload kept
    return getFloatFromBits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return getFloatFromBits(sign);
    // Subnormal m * 2^-24: normalise so the leading one is the hidden bit.
    uint32_t shift = 0;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      ++shift;
    }
    return getFloatFromBits(sign | ((113u - shift) << 23) |
                            ((mant & 0x3ffu) << 13));
  }
  return getFloatFromBits(sign | ((exp + 112u) << 23) | (mant << 13));
}

AUTOSHARD_HOST_DEVICE inline uint16_t floatToF16(float f) {
  uint32_t u = getFloatBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN: quiet bit set, top payload kept
    return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);
  // 65520 (0x477ff000) is halfway between f16's largest finite, 65504
  // (odd mantissa), and 2^16: the tie and everything above go to inf.
  if (a >= 0x477ff000u)
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // f16 normal (>= 2^-14): rebias 127 -> 15
    uint32_t r = a - (112u << 23);
    r += 0xfffu + ((r >> 13) & 1u);
    return sign | static_cast<uint16_t>(r >> 13);
  }
  // f16 subnormal or zero: the result is round(|f| * 2^24) with the
  // f32 mantissa (hidden bit included) shifted right by 126 - exp.
  uint32_t exp = a >> 23;
  uint32_t shift = 126u - exp; // >= 14
  if (exp == 0 || shift > 24)  // below 2^-25 (or f32 subnormal): 0
    return sign;
  uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  uint32_t m = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (m & 1u)))
    ++m; // may carry into 0x400, the smallest normal: still right
  return sign | static_cast<uint16_t>(m);
}

//===----------------------------------------------------------------------===//
// From double (arith.truncf f64 -> bf16/f16, seeded inputs)
//===----------------------------------------------------------------------===//

/// `d` rounded to f32 towards zero with the lowest mantissa bit set when
/// inexact (round-to-odd): a later RNE to fewer than 23 bits then gives the
/// correctly rounded result of `d`.
AUTOSHARD_HOST_DEVICE inline float doubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  double back = static_cast<double>(f);
  if (back == d || d != d)
    return f;
  uint32_t u = getFloatBits(f);
  if ((back < 0 ? -back : back) > (d < 0 ? -d : d))
    --u; // rounded away from zero (possibly to inf): step back
  return getFloatFromBits(u | 1u);
}

AUTOSHARD_HOST_DEVICE inline uint16_t doubleToBF16(double d) {
  return floatToBF16(doubleToFloatRoundToOdd(d));
}

AUTOSHARD_HOST_DEVICE inline uint16_t doubleToF16(double d) {
  return floatToF16(doubleToFloatRoundToOdd(d));
}

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_HALF_H
