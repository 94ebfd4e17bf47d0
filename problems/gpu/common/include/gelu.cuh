/* gelu(v) in fp32, as the PREC_GELU knob (defined by the including source) selects:
 *   PREC_GELU=erf   0.5 * v * (1 + erff(v / sqrt(2))): the definition.
 *   PREC_GELU=fast  erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), with one MUFU
 *                   reciprocal and one MUFU exp2; 1 + erf(z) is formed without cancellation
 *                   for z < 0, so the relative error of the result stays below ~3e-4.
 *   PREC_GELU=tanh  the tanh approximation 0.5 * v * (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
 *                   with tanh.approx: cheapest, but a different function, about 10% off the
 *                   erf form near v = -3. */
#pragma once

#ifndef PREC_GELU
#error "PREC_GELU must be defined: erf, fast or tanh"
#endif

#define ARC_GELU_erf 1
#define ARC_GELU_fast 2
#define ARC_GELU_tanh 3
#ifndef ARC_CAT
#define ARC_CAT_(a, b) a##b
#define ARC_CAT(a, b) ARC_CAT_(a, b)
#endif
#if ARC_CAT(ARC_GELU_, PREC_GELU) == 1
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
#elif ARC_CAT(ARC_GELU_, PREC_GELU) == 2
/* With z = |v| / sqrt(2) and t = 1 / (1 + 0.3275911 z): erfc(z) = t P(t) exp(-z^2) (A&S 7.1.26).
 * P's coefficients are halved and 1/sqrt(2) folded into the constants, so
 * h = v * t * P(t) * exp(-v^2 / 2) is 0.5 * v * erfc(|v| / sqrt(2)), and
 * gelu(v) = h for v < 0, v - h otherwise. */
__device__ __forceinline__ float gelu(float v) {
  float t, e;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(fmaf(0.23164189f, fabsf(v), 1.0f)));
  float p = fmaf(0.5307027145f, t, -0.7265760135f);
  p = fmaf(p, t, 0.7107068705f);
  p = fmaf(p, t, -0.142248368f);
  p = fmaf(p, t, 0.127414796f);
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(v * (v * -0.7213475204444817f)));
  const float h = v * (p * t * e);
  return v < 0.f ? h : v - h;
}
#elif ARC_CAT(ARC_GELU_, PREC_GELU) == 3
__device__ __forceinline__ float gelu(float v) {
  const float u = 0.7978845608028654f * fmaf(0.044715f * v, v * v, v);
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return 0.5f * v * (1.0f + t);
}
#else
#error "PREC_GELU must be erf, fast or tanh"
#endif
