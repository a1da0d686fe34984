//===- ScalarEval.h - Scalar semantics shared by CPU and CUDA ---*- C++ -*-===//
//
// One definition of what a GenericSpec body instruction computes on one
// element, used by the CPU interpreter (CpuGeneric.cpp, host C++) and the
// CUDA generic kernel (CUDA/CudaKernels.cu, device code), so the two
// backends cannot drift apart. Values are computed in double / int64 and
// rounded or wrapped to the instruction's type after every step; the callers
// own the loop structure (lane batches on the CPU, one thread per point on
// the GPU) and the error reporting (exceptions vs a device fault word).
//
// bf16 and f16 registers hold their values as doubles too: an op on them is
// computed in double and rounded once to the type (Half.h's doubleToBF16 /
// doubleToF16, which do not double-round). For + - * / and sqrt that is
// the correctly rounded IEEE bf16/f16 result, the same as computing in f32
// and rounding: f32 (and double) carry >= 2p + 2 bits for p = 8 (bf16) and
// 11 (f16), so the intermediate rounding is innocuous. arith.extf/truncf
// between them and f32/f64 are FCast, rounding to the result type.
//
// Everything here is header-only and marked AUTOSHARD_HD, which is
// `__host__ __device__` under nvcc and nothing for the host compiler.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_SCALAREVAL_H
#define AUTOSHARD_RUNTIME_LIB_SCALAREVAL_H

#include "autoshard/Runtime/Half.h"
#include "autoshard/Runtime/Program.h"

#include <cmath>
#include <cstdint>
#include <limits>

#ifdef __CUDACC__
#define AUTOSHARD_HD __host__ __device__
#else
#define AUTOSHARD_HD
#endif

namespace autoshard::rt::scalar {

/// A bytecode register: floats are held as double, integers as int64.
union Reg {
  double f;
  int64_t i;
};

AUTOSHARD_HD inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::BF16 ||
         t == DType::F16;
}

AUTOSHARD_HD inline bool isNaN(double x) {
#ifdef __CUDA_ARCH__
  return isnan(x);
#else
  return std::isnan(x);
#endif
}

/// The sign bit (-0 included).
AUTOSHARD_HD inline bool isNegative(double x) {
#ifdef __CUDA_ARCH__
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

AUTOSHARD_HD inline double quietNaN() {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(0x7ff8000000000000LL);
#else
  return std::numeric_limits<double>::quiet_NaN();
#endif
}

AUTOSHARD_HD inline double roundTo(double v, DType t) {
  switch (t) {
  case DType::F32:
    return static_cast<double>(static_cast<float>(v));
  case DType::BF16:
    return bf16ToFloat(doubleToBF16(v));
  case DType::F16:
    return f16ToFloat(doubleToF16(v));
  default:
    return v;
  }
}

AUTOSHARD_HD inline int64_t wrapTo(int64_t v, DType t) {
  switch (t) {
  case DType::I32:
    return static_cast<int32_t>(v);
  case DType::I1:
    return v & 1;
  default:
    return v;
  }
}

AUTOSHARD_HD inline uint64_t asUnsigned(int64_t v, DType t) {
  switch (t) {
  case DType::I32:
    return static_cast<uint32_t>(v);
  case DType::I1:
    return static_cast<uint64_t>(v & 1);
  default:
    return static_cast<uint64_t>(v);
  }
}

/// A register's value as a signed integer of type `t`: i1 registers hold
/// 0/1, and a set i1 is -1 signed (arith.extsi, sitofp, cmpi slt, maxsi).
AUTOSHARD_HD inline int64_t asSigned(int64_t v, DType t) {
  return t == DType::I1 ? -(v & 1) : v;
}

/// arith.sitofp / uitofp from `src` to float type `t`, rounded once: an
/// int64 may need 64 bits, so f32 converts directly (through double it
/// could round twice); bf16/f16 round from the double (Half.h, as the
/// compiled kernels do).
AUTOSHARD_HD inline double intToFloat(int64_t v, bool isUnsigned, DType src,
                                      DType t) {
  if (isUnsigned) {
    uint64_t u = asUnsigned(v, src);
    return t == DType::F32 ? static_cast<double>(static_cast<float>(u))
                           : roundTo(static_cast<double>(u), t);
  }
  int64_t s = asSigned(v, src);
  return t == DType::F32 ? static_cast<double>(static_cast<float>(s))
                         : roundTo(static_cast<double>(s), t);
}

/// Element `offset` (in elements of `t`) of a buffer, widened to a register.
AUTOSHARD_HD inline Reg load(const void *base, int64_t offset, DType t) {
  Reg r;
  switch (t) {
  case DType::F32:
    r.f = static_cast<const float *>(base)[offset];
    break;
  case DType::F64:
    r.f = static_cast<const double *>(base)[offset];
    break;
  case DType::I32:
    r.i = static_cast<const int32_t *>(base)[offset];
    break;
  case DType::I64:
    r.i = static_cast<const int64_t *>(base)[offset];
    break;
  case DType::I1:
    r.i = static_cast<const uint8_t *>(base)[offset] != 0;
    break;
  case DType::BF16:
    r.f = bf16ToFloat(static_cast<const uint16_t *>(base)[offset]);
    break;
  case DType::F16:
    r.f = f16ToFloat(static_cast<const uint16_t *>(base)[offset]);
    break;
  }
  return r;
}

AUTOSHARD_HD inline void store(void *base, int64_t offset, DType t, Reg r) {
  switch (t) {
  case DType::F32:
    static_cast<float *>(base)[offset] = static_cast<float>(r.f);
    break;
  case DType::F64:
    static_cast<double *>(base)[offset] = r.f;
    break;
  case DType::I32:
    static_cast<int32_t *>(base)[offset] = static_cast<int32_t>(r.i);
    break;
  case DType::I64:
    static_cast<int64_t *>(base)[offset] = r.i;
    break;
  case DType::I1:
    static_cast<uint8_t *>(base)[offset] = (r.i & 1) != 0;
    break;
  case DType::BF16:
    static_cast<uint16_t *>(base)[offset] = doubleToBF16(r.f);
    break;
  case DType::F16:
    static_cast<uint16_t *>(base)[offset] = doubleToF16(r.f);
    break;
  }
}

/// arith.cmpf with the predicate's enum value (oeq = 1 ... uno = 14).
AUTOSHARD_HD inline bool cmpF(int64_t pred, double a, double b) {
  bool unordered = isNaN(a) || isNaN(b);
  switch (pred) {
  case 0:
    return false;
  case 1:
    return !unordered && a == b;
  case 2:
    return !unordered && a > b;
  case 3:
    return !unordered && a >= b;
  case 4:
    return !unordered && a < b;
  case 5:
    return !unordered && a <= b;
  case 6:
    return !unordered && a != b;
  case 7:
    return !unordered;
  case 8:
    return unordered || a == b;
  case 9:
    return unordered || a > b;
  case 10:
    return unordered || a >= b;
  case 11:
    return unordered || a < b;
  case 12:
    return unordered || a <= b;
  case 13:
    return unordered || a != b;
  case 14:
    return unordered;
  default:
    return true;
  }
}

/// arith.cmpi with the predicate's enum value (eq = 0 ... uge = 9); the
/// predicates read the operands at their source width, signed or unsigned.
AUTOSHARD_HD inline bool cmpI(int64_t pred, int64_t a, int64_t b, DType t) {
  uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
  a = asSigned(a, t);
  b = asSigned(b, t);
  switch (pred) {
  case 0:
    return a == b;
  case 1:
    return a != b;
  case 2:
    return a < b;
  case 3:
    return a <= b;
  case 4:
    return a > b;
  case 5:
    return a >= b;
  case 6:
    return ua < ub;
  case 7:
    return ua <= ub;
  case 8:
    return ua > ub;
  default:
    return ua >= ub;
  }
}

/// The float result of a binary/unary op before rounding to the result type
/// (unary ops ignore `y`). Instantiated per op so that callers looping over
/// lanes get a straight-line body.
template <ScalarOp Op> AUTOSHARD_HD inline double floatOp(double x, double y) {
  switch (Op) {
  case ScalarOp::Add:
    return x + y;
  case ScalarOp::Sub:
    return x - y;
  case ScalarOp::Mul:
    return x * y;
  case ScalarOp::Div:
    return x / y;
  case ScalarOp::Rem:
    return fmod(x, y);
  // arith.maximumf / minimumf: NaN propagates, -0 < +0.
  case ScalarOp::Max:
    return (isNaN(x) || isNaN(y)) ? quietNaN()
           : x == y               ? (isNegative(x) ? y : x)
                                  : (x < y ? y : x);
  case ScalarOp::Min:
    return (isNaN(x) || isNaN(y)) ? quietNaN()
           : x == y               ? (isNegative(x) ? x : y)
                                  : (y < x ? y : x);
  case ScalarOp::MaxNum:
    return fmax(x, y);
  case ScalarOp::MinNum:
    return fmin(x, y);
  case ScalarOp::Neg:
    return -x;
  case ScalarOp::Abs:
    return fabs(x);
  case ScalarOp::Rsqrt:
    return 1.0 / sqrt(x);
  case ScalarOp::Atan2:
    return atan2(x, y);
  case ScalarOp::Pow:
    return pow(x, y);
  default:
    return 0.0;
  }
}

/// The integer result of an op before wrapping to the result type; the
/// arithmetic is done on uint64 where signed overflow would be UB in C++.
template <ScalarOp Op> AUTOSHARD_HD inline int64_t intOp(int64_t x, int64_t y) {
  switch (Op) {
  case ScalarOp::Add:
    return static_cast<int64_t>(static_cast<uint64_t>(x) +
                                static_cast<uint64_t>(y));
  case ScalarOp::Sub:
    return static_cast<int64_t>(static_cast<uint64_t>(x) -
                                static_cast<uint64_t>(y));
  case ScalarOp::Mul:
    return static_cast<int64_t>(static_cast<uint64_t>(x) *
                                static_cast<uint64_t>(y));
  case ScalarOp::Max:
    return x < y ? y : x;
  case ScalarOp::Min:
    return y < x ? y : x;
  case ScalarOp::Neg:
    return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
  case ScalarOp::Abs:
    return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
  case ScalarOp::And:
    return x & y;
  case ScalarOp::Or:
    return x | y;
  case ScalarOp::Xor:
    return x ^ y;
  case ScalarOp::Shl:
    return static_cast<int64_t>(static_cast<uint64_t>(x) << (y & 63));
  case ScalarOp::ShrS:
    return x >> (y & 63);
  default:
    return 0;
  }
}

/// Signed Div/Rem for a nonzero divisor (the caller reports zero). INT64_MIN
/// / -1 overflows in C++; MLIR makes it poison, so it wraps here.
AUTOSHARD_HD inline int64_t divRemS(bool isDiv, int64_t a, int64_t b,
                                    DType t) {
  if (b == -1)
    return wrapTo(isDiv ? static_cast<int64_t>(0 - static_cast<uint64_t>(a))
                        : 0,
                  t);
  return wrapTo(isDiv ? a / b : a % b, t);
}

/// Unsigned Div/Rem at the operands' width for a nonzero divisor.
AUTOSHARD_HD inline int64_t divRemU(bool isDiv, uint64_t ua, uint64_t ub,
                                    DType t) {
  return wrapTo(static_cast<int64_t>(isDiv ? ua / ub : ua % ub), t);
}

/// arith.fptosi / fptoui: exact for every value either defines (fptoui
/// of [2^63, 2^64) included). Out-of-range conversions are poison in MLIR;
/// here they have fixed values without C++ undefined behaviour (NaN 0,
/// beyond the int64/uint64 range saturated, wrapped to the type), which
/// compiled kernels reproduce (KernelCompiler.cpp rewriteFloatToInt).
AUTOSHARD_HD inline int64_t floatToInt(double x, DType t) {
  int64_t v = isNaN(x)            ? 0
              : x >= 0x1p64       ? INT64_MAX
              : x >= 0x1p63       ? static_cast<int64_t>(static_cast<uint64_t>(x))
              : x < -0x1p63       ? INT64_MIN
                                  : static_cast<int64_t>(x);
  return wrapTo(v, t);
}

/// One step of a reduction or accumulation over numbers (booleans are
/// or/and and handled by the callers).
template <typename T>
AUTOSHARD_HD inline T combine(T a, T b, ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return a + b;
  case ReductionKind::Product:
    return a * b;
  case ReductionKind::Max:
    return a > b ? a : b;
  case ReductionKind::Min:
    return a < b ? a : b;
  }
  return a;
}

} // namespace autoshard::rt::scalar

/// The float unary ops that are one libm call, as X(op, function): both
/// backends expand their dispatch from this one table.
#define AUTOSHARD_SCALAR_UNARY_MATH(X)                                         \
  X(Exp, exp)                                                                  \
  X(Exp2, exp2)                                                                \
  X(Expm1, expm1)                                                              \
  X(Log, log)                                                                  \
  X(Log2, log2)                                                                \
  X(Log1p, log1p)                                                              \
  X(Sqrt, sqrt)                                                                \
  X(Tanh, tanh)                                                                \
  X(Sin, sin)                                                                  \
  X(Cos, cos)                                                                  \
  X(Tan, tan)                                                                  \
  X(Erf, erf)                                                                  \
  X(Atan, atan)                                                                \
  X(Floor, floor)                                                              \
  X(Ceil, ceil)                                                                \
  X(Round, round)                                                              \
  X(RoundEven, rint)                                                           \
  X(Trunc, trunc)

#endif // AUTOSHARD_RUNTIME_LIB_SCALAREVAL_H
