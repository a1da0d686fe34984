//===- HalfTest.cpp - bf16/f16 conversions --------------------------------===//
//
// Every bf16 and f16 bit pattern widens and narrows back to itself; every
// halfway point between neighbours rounds to the even one; NaN, infinity,
// overflow and subnormals are right. f16 is also checked against the
// compiler's own _Float16 conversions (libgcc's soft-float routines) where
// the compiler has them, an independent implementation.
//
//===----------------------------------------------------------------------===//

#include "autoshard/Runtime/Half.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace autoshard::rt;

namespace {
bool isNaNBits16(uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
}
float widen(uint16_t h, bool bf16) {
  return bf16 ? bf16ToFloat(h) : f16ToFloat(h);
}
uint16_t narrow(float f, bool bf16) {
  return bf16 ? floatToBF16(f) : floatToF16(f);
}
float nextToward(float from, float to) { return std::nextafter(from, to); }
} // namespace

TEST(HalfTest, EveryPatternRoundTrips) {
  for (bool bf16 : {true, false})
    for (uint32_t i = 0; i < 65536; ++i) {
      uint16_t h = static_cast<uint16_t>(i);
      float f = widen(h, bf16);
      uint16_t back = narrow(f, bf16);
      if (isNaNBits16(h, bf16)) {
        ASSERT_TRUE(std::isnan(f)) << std::hex << i;
        // Quiet, same sign, same payload otherwise.
        uint16_t quiet = bf16 ? 0x0040 : 0x0200;
        ASSERT_EQ(back, h | quiet) << std::hex << i << " bf16=" << bf16;
        continue;
      }
      ASSERT_FALSE(std::isnan(f)) << std::hex << i;
      ASSERT_EQ(back, h) << std::hex << i << " bf16=" << bf16;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0);
    }
}

TEST(HalfTest, WideningGivesTheValue) {
  // f16: sign * 2^(e-15) * 1.m, or 2^-14 * 0.m for subnormals.
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double sign = (h & 0x8000) ? -1 : 1;
    if (e == 0x1f) {
      EXPECT_TRUE(m ? std::isnan(f16ToFloat(h)) : std::isinf(f16ToFloat(h)));
      continue;
    }
    double want = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    ASSERT_EQ(static_cast<double>(f16ToFloat(h)), sign * want)
        << std::hex << i;
  }
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(bf16ToFloat(0x0001), std::ldexp(1.0f, -133)); // subnormal
  EXPECT_EQ(f16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(f16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(f16ToFloat(0x0001), std::ldexp(1.0f, -24));
}

// Between each pair of neighbouring finite values: the exact midpoint goes
// to the even pattern, the floats just either side go to their side.
TEST(HalfTest, TiesRoundToEven) {
  for (bool bf16 : {true, false}) {
    uint16_t maxFinite = bf16 ? 0x7f7f : 0x7bff;
    for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)})
      for (uint32_t i = 0; i < maxFinite; ++i) {
        uint16_t lo = static_cast<uint16_t>(i) | sign, hi = lo + 1;
        float a = widen(lo, bf16), b = widen(hi, bf16);
        float mid = static_cast<float>((double(a) + double(b)) / 2);
        ASSERT_EQ(double(mid), (double(a) + double(b)) / 2); // exact
        uint16_t even = (lo & 1) ? hi : lo;
        ASSERT_EQ(narrow(mid, bf16), even) << std::hex << lo << " " << bf16;
        ASSERT_EQ(narrow(nextToward(mid, a), bf16), lo) << std::hex << lo;
        ASSERT_EQ(narrow(nextToward(mid, b), bf16), hi) << std::hex << lo;
      }
  }
}

TEST(HalfTest, OverflowInfinityNaN) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(65519.996f), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00); // tie with an odd max: to inf
  EXPECT_EQ(floatToF16(-1e30f), 0xfc00);
  EXPECT_EQ(floatToF16(inf), 0x7c00);
  EXPECT_EQ(floatToF16(-inf), 0xfc00);
  EXPECT_EQ(floatToBF16(inf), 0x7f80);
  EXPECT_EQ(floatToBF16(-inf), 0xff80);
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBF16(3.3895313e38f), 0x7f7f); // bf16's largest finite
  // A NaN whose payload is only in the low bits stays a NaN (truncating
  // would make it an infinity), keeps its sign and is quiet.
  for (uint32_t bits : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7fa00000u}) {
    float nan = getFloatFromBits(bits);
    uint16_t b = floatToBF16(nan), h = floatToF16(nan);
    EXPECT_TRUE(isNaNBits16(b, true) && (b & 0x0040)) << std::hex << bits;
    EXPECT_TRUE(isNaNBits16(h, false) && (h & 0x0200)) << std::hex << bits;
    EXPECT_EQ(b >> 15, bits >> 31);
    EXPECT_EQ(h >> 15, bits >> 31);
  }
}

TEST(HalfTest, Subnormals) {
  float tiny = std::ldexp(1.0f, -24); // f16's smallest subnormal
  EXPECT_EQ(floatToF16(tiny), 0x0001);
  EXPECT_EQ(floatToF16(tiny / 2), 0x0000);     // tie to even 0
  EXPECT_EQ(floatToF16(-tiny / 2), 0x8000);    // signed zero
  EXPECT_EQ(floatToF16(tiny * 1.5f), 0x0002);  // tie to even 2
  EXPECT_EQ(floatToF16(tiny * 0.51f), 0x0001); // above the tie
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(floatToF16(std::numeric_limits<float>::denorm_min()), 0x0000);
  // The largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(floatToF16(std::ldexp(1023.75f, -24)), 0x0400);
  // f32 subnormals into bf16 round like any value.
  EXPECT_EQ(floatToBF16(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(floatToBF16(std::ldexp(1.0f, -134)), 0x0000);
  EXPECT_EQ(floatToBF16(std::ldexp(3.0f, -134)), 0x0002);
}

// Random floats against the nearest of the two neighbouring bf16 values
// found by distance in double (ties to the even one).
TEST(HalfTest, RandomFloatsToNearestBF16) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = rng();
    float f = getFloatFromBits(bits);
    if (std::isnan(f) || std::isinf(f))
      continue;
    uint16_t lo = static_cast<uint16_t>(bits >> 16);
    uint16_t hi = static_cast<uint16_t>(lo + 1);
    double dl = std::fabs(double(f) - bf16ToFloat(lo));
    double dh = (hi & 0x7fff) == 0x7f80 && std::fabs(f) >= std::ldexp(1.99609375, 127)
                    ? 0 // beyond bf16's max by half an ulp: infinity
                    : std::fabs(double(f) - bf16ToFloat(hi));
    uint16_t want = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    ASSERT_EQ(floatToBF16(f), want) << std::hex << bits;
  }
}

#ifdef __FLT16_MAX__
TEST(HalfTest, AgreesWithTheCompilersFloat16) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t r = rng();
    float f = getFloatFromBits(static_cast<uint32_t>(r));
    // Mostly values in f16's range, where the rounding is interesting.
    if (i % 2)
      f = std::ldexp(static_cast<float>(r >> 40) / (1 << 24), int(r % 48) - 30);
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    if (std::isnan(f)) {
      EXPECT_TRUE(isNaNBits16(floatToF16(f), false));
      continue;
    }
    ASSERT_EQ(floatToF16(f), refBits) << f;
    // From double straight to f16, as _Float16 does: no double rounding.
    double d = std::ldexp(static_cast<double>(r >> 11) / (1ull << 53),
                          int(r % 48) - 30);
    _Float16 refD = static_cast<_Float16>(d);
    std::memcpy(&refBits, &refD, 2);
    ASSERT_EQ(doubleToF16(d), refBits) << d;
  }
}
#endif

TEST(HalfTest, FromDoubleRoundsOnce) {
  // 1 + 2^-8 + 2^-30 rounds to f32 as 1 + 2^-8, a bf16 tie that would go
  // down to 1.0; the double is above the tie, so the answer is 1 + 2^-7.
  double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(floatToBF16(static_cast<float>(d)), 0x3f80);
  EXPECT_EQ(doubleToBF16(d), 0x3f81);
  EXPECT_EQ(doubleToBF16(-d), 0xbf81);
  EXPECT_EQ(doubleToF16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3c01);
  EXPECT_EQ(doubleToBF16(1e300), 0x7f80);
  EXPECT_EQ(doubleToF16(-1e300), 0xfc00);
  EXPECT_EQ(doubleToBF16(1e-300), 0x0000);
  EXPECT_EQ(doubleToBF16(0.1), floatToBF16(0.1f));
  EXPECT_TRUE(isNaNBits16(doubleToBF16(std::nan("")), true));
  EXPECT_EQ(doubleToBF16(2.5), 0x4020);
}
