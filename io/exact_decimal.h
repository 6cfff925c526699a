// Exact decimal text for doubles, fast: the shortest digits that read back as the same double.
//
// WriteDecimal(p, v) writes digits that any correctly rounding parser (std::from_chars,
// fast_float, strtod, rigel's BVH reader) reads back as exactly `v`. WriteDecimalFor() does the
// same through a transform the reader applies after parsing (degrees -> radians, subtracting an
// OFFSET): the text t it writes satisfies forward(parse(t)) == target whenever some double does.
//
// Fast paths, tried in turn, each checked exactly (the candidate's correctly rounded value, one
// division by an exact power of ten, goes through `forward` and must give `target`): 4 decimals
// (|x| < 1e4, digits from a table), 8 decimals (|x| < 1e7, SWAR digits), 15 significant digits
// (1e-5 <= |x| < 1e15). A decimal that passes, trailing zeros removed, is the shortest exact form
// ("0", "-12.3456", "0.0625"), in fixed notation; every mocap decimal and every 15-digit text
// passes. Otherwise std::to_chars' shortest round-trip form (Ryu) of the double nearest `guess`
// that maps to `target`. Digits are stored as whole 64-bit words, without branches; no
// allocation. The caller provides kMaxDecimalChars bytes at `p`; the text is at most 24 chars.
#ifndef RIGEL_IO_EXACT_DECIMAL_H_
#define RIGEL_IO_EXACT_DECIMAL_H_

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rigel {

// Bytes WriteDecimal/WriteDecimalFor may touch at `p` (the text itself is at most 24 chars).
inline constexpr int kMaxDecimalChars = 48;

namespace decimal_internal {

// 10^0 .. 10^22, all exact doubles.
inline constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Per binary exponent e of a double a in [1e-5, 1e15) (a in [2^e, 2^(e+1))): n = 14 - k with
// k = floor(e * log10(2)), and threshold = 10^(k+1) (rounded for k + 1 < 0). n - (a >= threshold)
// decimals bring a into [1e14, 1e15) (a rounded threshold can leave it a hair outside: the
// digits then number 14 or 16, and the exactness check still decides).
struct Decade {
  double threshold;
  int n;
};
inline constexpr int kMinExponent = -17;  // 2^-17 < 1e-5
inline constexpr int kMaxExponent = 49;   // 2^50 > 1e15
inline constexpr auto kDecades = [] {
  std::array<Decade, kMaxExponent - kMinExponent + 1> t{};
  for (int e = kMinExponent; e <= kMaxExponent; ++e) {
    const int k = (e * 78913) >> 18;  // 78913 / 2^18 ~ log10(2), exact floor on this range
    const double threshold = k + 1 >= 0 ? kPow10[k + 1] : 1.0 / kPow10[-(k + 1)];
    t[e - kMinExponent] = {threshold, 14 - k};
  }
  return t;
}();

// "00" "01" ... "99".
inline constexpr char kPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// `d` moved by `k` units in the last place (towards +infinity for k > 0); finite d only.
inline double StepUlps(double d, int64_t k) {
  const int64_t bits = std::bit_cast<int64_t>(d);
  const int64_t magnitude = bits & INT64_MAX;
  int64_t key = bits < 0 ? -magnitude : magnitude;  // ordered like the doubles
  key += k;
  return std::bit_cast<double>(key < 0 ? (-key | INT64_MIN) : key);
}

// A double d near `guess` with forward(d) == target (forward is non-decreasing), searching a
// few units in the last place each way; `guess` when there is none.
template <typename Forward>
double Preimage(double target, double guess, Forward forward) {
  double y = forward(guess);
  if (y == target || !std::isfinite(y)) return guess;
  const int64_t step = y < target ? 1 : -1;
  double d = guess;
  for (int i = 0; i < 8; ++i) {
    d = StepUlps(d, step);
    y = forward(d);
    if (y == target) return d;
    if (step > 0 ? y > target : y < target) break;  // stepped over: no double maps there
  }
  return guess;
}

// The four-digit numbers hi and lo (< 10^4) as eight digit bytes 0..9, most significant first in
// memory (little-endian), without branches (Khuong's and Lemire's SWAR division by 100 and 10).
inline uint64_t EightDigits(uint64_t hi, uint64_t lo) {
  const uint64_t merged = hi | (lo << 32);
  const uint64_t top = ((merged * 10486) >> 20) & ((0x7FULL << 32) | 0x7FULL);  // / 100
  const uint64_t bottom = merged - 100 * top;
  const uint64_t hundreds = (bottom << 16) + top;
  uint64_t tens = (hundreds * 103) >> 10;  // / 10
  tens &= (0xFULL << 48) | (0xFULL << 32) | (0xFULL << 16) | 0xFULL;
  return tens + ((hundreds - 10 * tens) << 8);
}

// "0000" .. "9999" as four digit bytes 0..9 (not ASCII), most significant first in memory
// (little-endian): 40 KB of constants.
inline constexpr auto kFourDigits = [] {
  std::array<uint32_t, 10000> t{};
  for (uint32_t i = 0; i < 10000; ++i) {
    t[i] = (i / 1000) | ((i / 100 % 10) << 8) | ((i / 10 % 10) << 16) | ((i % 10) << 24);
  }
  return t;
}();

// Writes m * 10^-4 (m < 10^8), with '-' when `negative`, in fixed notation without trailing
// zeros in the fraction; returns the end. The four integer and four fraction digits (two table
// loads) are one 64-bit word; no branch. Touches 16 bytes at p.
inline char* WriteFixed4(char* p, bool negative, uint64_t m) {
  constexpr uint64_t kZeros = 0x3030303030303030ULL;  // "00000000"
  // Leading zero digits of the integer part, at most 3 (bit 31 is never a digit bit); fraction
  // digits up to the last non-zero one: (highest set bit + 8) / 8, 0 when none.
  const uint64_t digits =
      kFourDigits[m / 10000] | (static_cast<uint64_t>(kFourDigits[m % 10000]) << 32);
  const int leading = std::countr_zero(digits | (1ULL << 31)) / 8;
  const uint64_t fraction = digits >> 32;
  const int fraction_chars = static_cast<int>(std::bit_width((fraction << 1) | 1) + 6) / 8;
  const uint64_t text = (digits | kZeros) >> (8 * leading);
  const uint64_t point_fraction = '.' | ((fraction | kZeros) << 8);
  char* w = p;
  *w = '-';
  w += negative;
  std::memcpy(w, &text, 8);
  w += 4 - leading;
  std::memcpy(w, &point_fraction, 8);
  return w + (fraction_chars ? fraction_chars + 1 : 0);
}

// Writes m * 10^-8 (m < 10^15), with '-' when `negative`, in fixed notation without trailing
// zeros in the fraction ("12.5", "0.0625", "3", "0"); returns the end. No branch and no load:
// the integer part and the eight fraction digits are one 64-bit word each, stored whole, each
// store overwriting the tail of the previous one. Touches 24 bytes at p.
inline char* WriteFixed8(char* p, bool negative, uint64_t m) {
  constexpr uint64_t kZeros = 0x3030303030303030ULL;  // "00000000"
  const uint64_t whole = m / 100000000;
  const uint64_t fraction = m % 100000000;
  const uint64_t w_digits = EightDigits(whole / 10000, whole % 10000);
  const uint64_t f_digits = EightDigits(fraction / 10000, fraction % 10000);
  // Leading zero digits of the integer part, at most 7 (it keeps one digit): bit 63 is never a
  // digit bit, so setting it caps the count without a branch.
  const int leading = std::countr_zero(w_digits | (1ULL << 63)) / 8;
  const uint64_t integer = (w_digits | kZeros) >> (8 * leading);
  // Fraction digits up to the last non-zero one: (highest set bit + 8) / 8, 0 when none.
  const int fraction_chars = static_cast<int>(std::bit_width((f_digits << 1) | 1) + 6) / 8;
  const uint64_t fraction_text = f_digits | kZeros;
  char* w = p;
  *w = '-';
  w += negative;
  std::memcpy(w, &integer, 8);
  w += 8 - leading;
  *w = '.';
  std::memcpy(w + 1, &fraction_text, 8);
  return w + (fraction_chars ? fraction_chars + 1 : 0);
}

// Writes m * 10^-n (0 < m < 10^16, 0 <= n <= 20), with '-' when `negative`, in fixed notation
// without trailing zeros in the fraction ("12.5", "0.0625", "3"); returns the end. No branch and
// no load: the digits are kept in a 128-bit register and stored in overlapping pieces, each
// piece overwriting the tail of the previous one. Touches kMaxDecimalChars at p.
inline char* WriteFixed(char* p, bool negative, uint64_t m, int n) {
  __extension__ typedef unsigned __int128 U128;
  constexpr uint64_t kZeros = 0x3030303030303030ULL;  // "00000000"
  const uint64_t high = m / 100000000;
  const uint64_t low = m % 100000000;
  const uint64_t h = EightDigits(high / 10000, high % 10000);  // digits 0..7 of 16
  const uint64_t l = EightDigits(low / 10000, low % 10000);    // digits 8..15
  const U128 digits = (static_cast<U128>(l | kZeros) << 64) | (h | kZeros);
  // Leading and trailing zero digits of the 16 (a zero digit is a zero byte before | '0').
  const int leading = h ? std::countr_zero(h) / 8 : 8 + std::countr_zero(l) / 8;
  const int trailing = l ? std::countl_zero(l) / 8 : 8 + std::countl_zero(h) / 8;
  const int point = 16 - n;  // index of the first fraction digit; < 0 when n > 16
  // Integer part: digits [leading, point), or "0".
  const bool whole = point > leading;
  const U128 integer = whole ? digits >> (8 * leading) : U128{'0'};
  const int integer_chars = whole ? point - leading : 1;
  // Fraction: max(-point, 0) zeros, then the digits from max(point, 0); n - trailing kept.
  const int fraction = n - std::min(trailing, n);
  // point == 16 (n == 0) leaves no fraction to write; the shift is clamped below 128 bits.
  const U128 fraction_digits = digits >> (8 * std::clamp(point, 0, 15));
  const U128 zeros = (static_cast<U128>(kZeros) << 64) | kZeros;
  char* w = p;
  *w = '-';
  w += negative;
  std::memcpy(w, &integer, 16);
  w += integer_chars;
  *w = '.';
  std::memcpy(w + 1, &zeros, 16);
  std::memcpy(w + 1 + std::max(-point, 0), &fraction_digits, 16);
  return w + (fraction ? fraction + 1 : 0);
}

}  // namespace decimal_internal

// Writes text that reads back (parse, then `forward`) as exactly `target`, starting from
// `guess`, the double forward maps nearest to target (e.g. target * 180 / pi for a reader that
// multiplies by pi / 180). forward must be non-decreasing; `target` and `guess` finite. When no
// double maps to target (a value the reader could not have produced), writes `guess` exactly,
// the nearest the format can do. Returns the end of the text; touches kMaxDecimalChars at p.
template <typename Forward>
inline char* WriteDecimalFor(char* p, double target, double guess, Forward forward) {
  using namespace decimal_internal;
  const double a = std::abs(guess);
  const bool negative = std::signbit(guess);
  if (a < 1e4) [[likely]] {
    // Four decimals, as the eight below (a * 10^4 < 10^8).
    const double sum = a * 1e4 + 0x1p52;
    const double rounded = sum - 0x1p52;
    const uint64_t m = std::bit_cast<uint64_t>(sum) - std::bit_cast<uint64_t>(0x1p52);
    if (forward(std::copysign(rounded / 1e4, guess)) == target) [[likely]] {
      return WriteFixed4(p, negative, m);
    }
  }
  if (a < 1e7) {
    // Eight decimals: m = a * 10^8 rounded to an integer by adding and removing 2^52
    // (a * 10^8 < 2^52); the integer is then in the low bits of the sum.
    const double sum = a * 1e8 + 0x1p52;
    const double rounded = sum - 0x1p52;
    const uint64_t m = std::bit_cast<uint64_t>(sum) - std::bit_cast<uint64_t>(0x1p52);
    // m < 2^53 and 10^8 exact: this division is the correctly rounded value of the text.
    if (forward(std::copysign(rounded / 1e8, guess)) == target) [[likely]] {
      return WriteFixed8(p, negative, m);
    }
  }
  if (a >= 1e-5 && a < 1e15) {
    // n decimals put a in [1e14, 1e15): the nearest decimal of 15 significant digits.
    const Decade& decade = kDecades[(std::bit_cast<uint64_t>(a) >> 52) - (1023 + kMinExponent)];
    const int n = decade.n - (a >= decade.threshold);
    const double sum = a * kPow10[n] + 0x1p52;  // < 2^53, rounded to an integer as above
    const double rounded = sum - 0x1p52;
    const uint64_t m = std::bit_cast<uint64_t>(sum) - std::bit_cast<uint64_t>(0x1p52);
    if (forward(std::copysign(rounded / kPow10[n], guess)) == target) {
      return WriteFixed(p, negative, m, n);
    }
  }
  const double d = Preimage(target, guess, forward);
  return std::to_chars(p, p + kMaxDecimalChars, d).ptr;
}

// Writes `v` (finite) so that it reads back as exactly `v`. Returns the end of the text;
// touches kMaxDecimalChars at p.
inline char* WriteDecimal(char* p, double v) {
  return WriteDecimalFor(p, v, v, [](double d) { return d; });
}

}  // namespace rigel

#endif  // RIGEL_IO_EXACT_DECIMAL_H_
