// exact_decimal.h: every text parses back (std::from_chars, correctly rounded) to the same double
// bit for bit, directly and through the BVH reader's degrees-to-radians and OFFSET steps; in fixed
// range it is the shortest form, checked against std::to_chars' own shortest fixed form.
#include "io/exact_decimal.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "core/euler.h"

namespace rigel {
namespace {

double Parse(const std::string& text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_EQ(r.ec, std::errc()) << text;
  EXPECT_EQ(r.ptr, text.data() + text.size()) << "not all of '" << text << "' parsed";
  return v;
}

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

std::string Write(double v) {
  char buf[kMaxDecimalChars];
  return std::string(buf, WriteDecimal(buf, v));
}

// The text of a reader that multiplies by pi / 180 after parsing.
std::string WriteRadians(double radians) {
  char buf[kMaxDecimalChars];
  return std::string(buf, WriteDecimalFor(buf, radians, radians * kDegPerRad,
                                          [](double d) { return d * kRadPerDeg; }));
}

// `text` ("%.*f" output) without trailing fraction zeros, and without the point when none is
// left: what a shortest fixed form of the same number looks like.
std::string Trimmed(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  if (text == "-0") return "-0";
  return text;
}

TEST(ExactDecimal, ZerosAndSmallCases) {
  EXPECT_EQ(Write(0.0), "0");
  EXPECT_EQ(Write(-0.0), "-0");
  EXPECT_EQ(Bits(Parse(Write(-0.0))), Bits(-0.0));
  EXPECT_EQ(Write(1.0), "1");
  EXPECT_EQ(Write(-17.0), "-17");
  EXPECT_EQ(Write(0.5), "0.5");
  EXPECT_EQ(Write(-0.0625), "-0.0625");
  EXPECT_EQ(Write(12.3456), "12.3456");
  EXPECT_EQ(Write(0.0083333), "0.0083333");
  EXPECT_EQ(Write(9999.9999), "9999.9999");
  EXPECT_EQ(Write(10000.0), "10000");
  EXPECT_EQ(Write(123456.123456), "123456.123456");
  EXPECT_EQ(Write(0.1), "0.1");
  EXPECT_EQ(Write(0.30000000000000004), "0.30000000000000004");  // 17 digits: Ryu's form
  EXPECT_EQ(Write(1e-7), "0.0000001");                           // eight decimals or fewer: fixed
  EXPECT_EQ(Write(1.5e-9), "1.5e-09");
  EXPECT_EQ(Write(1e300), "1e+300");
  EXPECT_EQ(WriteRadians(-0.0), "-0");
  EXPECT_EQ(WriteRadians(0.0), "0");
}

TEST(ExactDecimal, ShortDecimalsAreExactAndShortest) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> decade(-5, 9), places(0, 12);
  char text[64];
  for (int i = 0; i < 300000; ++i) {
    const double magnitude = std::pow(10.0, decade(rng));
    std::snprintf(text, sizeof text, "%.*f", places(rng), mantissa(rng) * magnitude);
    const double v = Parse(text);
    const std::string written = Write(v);
    ASSERT_EQ(Bits(Parse(written)), Bits(v)) << text << " -> " << written;
    // In fixed range the text is the shortest fixed form, as std::to_chars (Ryu) gives it.
    if (std::abs(v) >= 1e-5 && std::abs(v) < 1e15) {
      char ryu[64];
      const auto r = std::to_chars(ryu, ryu + sizeof ryu, v, std::chars_format::fixed);
      ASSERT_EQ(written, std::string(ryu, r.ptr)) << text;
    }
  }
}

TEST(ExactDecimal, EveryDoubleRoundTrips) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300000; ++i) {
    const double v = std::bit_cast<double>(rng());
    if (!std::isfinite(v)) continue;
    const std::string written = Write(v);
    ASSERT_EQ(Bits(Parse(written)), Bits(v)) << written;
    // As short as std::to_chars' shortest form, but for fixed notation in [1e-5, 1e-3) where
    // Ryu's exponent form can be up to 2 characters shorter.
    char ryu[64];
    const auto r = std::to_chars(ryu, ryu + sizeof ryu, v);
    ASSERT_LE(written.size(), static_cast<size_t>(r.ptr - ryu) + 2) << written;
  }
  // Values a computation produces: 16-17 significant digits, in the usual range.
  std::uniform_real_distribution<double> u(-400, 400);
  for (int i = 0; i < 300000; ++i) {
    const double v = u(rng) / (i % 7 + 1);
    ASSERT_EQ(Bits(Parse(Write(v))), Bits(v));
  }
}

// A BVH file holds degrees; the reader stores text * (pi / 180). Every value it can store (any
// text, in particular mocap decimals and the 15-digit texts rigel wrote before) is written as a
// text that maps back to exactly it, and a decimal file gets its own digits back.
TEST(ExactDecimal, DegreesThroughTheReader) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> angle(-720, 720);
  std::uniform_int_distribution<int> places(0, 9);
  char text[64];
  for (int i = 0; i < 300000; ++i) {
    std::snprintf(text, sizeof text, "%.*f", places(rng), angle(rng) / (i % 3 == 0 ? 1000 : 1));
    const double radians = Parse(text) * kRadPerDeg;
    const std::string written = WriteRadians(radians);
    ASSERT_EQ(Bits(Parse(written) * kRadPerDeg), Bits(radians)) << text << " -> " << written;
    if (std::abs(Parse(text)) >= 1e-5) {
      ASSERT_EQ(written, Trimmed(text));
    }
    // The 15-significant-digit text rigel's writer produced before.
    char old[64];
    const auto r = std::to_chars(old, old + sizeof old, angle(rng) * std::exp(angle(rng) / 100),
                                 std::chars_format::general, 15);
    const double stored = Parse(std::string(old, r.ptr)) * kRadPerDeg;
    ASSERT_EQ(Bits(Parse(WriteRadians(stored)) * kRadPerDeg), Bits(stored)) << old;
  }
}

// Absolute translations: the reader stores text - OFFSET.
TEST(ExactDecimal, OffsetThroughTheReader) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-300, 300);
  std::uniform_int_distribution<int> places(0, 8);
  char text[64];
  for (int i = 0; i < 300000; ++i) {
    const double offset = std::round(u(rng) * 1e4) / 1e4;
    std::snprintf(text, sizeof text, "%.*f", places(rng), u(rng));
    const double stored = Parse(text) - offset;
    char buf[kMaxDecimalChars];
    const std::string written(buf, WriteDecimalFor(buf, stored, stored + offset,
                                                   [offset](double d) { return d - offset; }));
    ASSERT_EQ(Bits(Parse(written) - offset), Bits(stored)) << text << " -> " << written;
  }
}

}  // namespace
}  // namespace rigel
