#pragma once
// Seeded generators, the same on every machine and compiler (the C++ standard's distributions
// are implementation-defined): splitmix64 to mix and derive seeds, xoshiro256** to draw input
// values. Pure integer and IEEE double arithmetic.
#include <cstdint>

namespace arc {

inline constexpr uint64_t kSplitMixIncrement = 0x9e3779b97f4a7c15ULL;

// splitmix64's output function of the state x + increment: one step from state x, without
// keeping the new state.
constexpr uint64_t mix64(uint64_t x) {
  x += kSplitMixIncrement;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One step of the splitmix64 stream whose state is *state (advanced).
constexpr uint64_t splitmix64(uint64_t* state) {
  const uint64_t r = mix64(*state);
  *state += kSplitMixIncrement;
  return r;
}

// Uniform in [0, 1) from the top 53 bits of x.
constexpr double unit_double(uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }

// xoshiro256** seeded through splitmix64.
class Xoshiro256 {
 public:
  explicit constexpr Xoshiro256(uint64_t seed) {
    for (auto& s : s_) s = splitmix64(&seed);
  }
  constexpr uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 bits.
  constexpr double uniform() { return unit_double(next()); }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
};

}  // namespace arc
