//===- Common.cpp - Helpers shared by the CPU kernels ---------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"

#include <cmath>
#include <cstring>

using namespace traceir;

namespace {
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff,
           man = x & 0x7fffff;
  if (exp == 0xff)
    return sign | 0x7c00 | (man ? 0x200 : 0);
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10)
      return sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (e << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half; // round to nearest even; may carry into the exponent, as it should
  return half;
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  x += 0x7fff + ((x >> 16) & 1); // round to nearest even
  return x >> 16;
}

template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void store(char *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
} // namespace

bool cpu::isFloating(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

double cpu::loadDouble(const char *p, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::F16:
    return halfToFloat(load<uint16_t>(p));
  case DType::BF16:
    return bf16ToFloat(load<uint16_t>(p));
  case DType::I64:
    return static_cast<double>(load<int64_t>(p));
  case DType::I32:
    return load<int32_t>(p);
  case DType::I16:
    return load<int16_t>(p);
  case DType::I8:
    return load<int8_t>(p);
  case DType::U8:
    return load<uint8_t>(p);
  case DType::Bool:
    return load<uint8_t>(p) != 0;
  }
  return 0;
}

int64_t cpu::loadInt(const char *p, DType dtype) {
  switch (dtype) {
  case DType::I64:
    return load<int64_t>(p);
  case DType::I32:
    return load<int32_t>(p);
  case DType::I16:
    return load<int16_t>(p);
  case DType::I8:
    return load<int8_t>(p);
  case DType::U8:
    return load<uint8_t>(p);
  case DType::Bool:
    return load<uint8_t>(p) != 0;
  default:
    return static_cast<int64_t>(loadDouble(p, dtype));
  }
}

void cpu::storeDouble(char *p, DType dtype, double v) {
  switch (dtype) {
  case DType::F32:
    return store<float>(p, static_cast<float>(v));
  case DType::F64:
    return store<double>(p, v);
  case DType::F16:
    return store<uint16_t>(p, floatToHalf(static_cast<float>(v)));
  case DType::BF16:
    return store<uint16_t>(p, floatToBf16(static_cast<float>(v)));
  case DType::Bool:
    return store<uint8_t>(p, v != 0);
  default:
    return storeInt(p, dtype, static_cast<int64_t>(v));
  }
}

void cpu::storeInt(char *p, DType dtype, int64_t v) {
  switch (dtype) {
  case DType::I64:
    return store<int64_t>(p, v);
  case DType::I32:
    return store<int32_t>(p, static_cast<int32_t>(v));
  case DType::I16:
    return store<int16_t>(p, static_cast<int16_t>(v));
  case DType::I8:
    return store<int8_t>(p, static_cast<int8_t>(v));
  case DType::U8:
    return store<uint8_t>(p, static_cast<uint8_t>(v));
  case DType::Bool:
    return store<uint8_t>(p, v != 0);
  default:
    return storeDouble(p, dtype, static_cast<double>(v));
  }
}

int64_t cpu::wrapDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return dim < 0 ? dim + r : dim;
}

void cpu::copyTensor(const Tensor &src, Tensor &dst) {
  int64_t n = dst.numel();
  if (n == 0)
    return;
  size_t es = dtypeSize(src.dtype), ed = dtypeSize(dst.dtype);
  if (src.dtype == dst.dtype && src.isContiguous() && dst.isContiguous()) {
    std::memcpy(dst.bytes(), src.bytes(), n * es);
    return;
  }
  int64_t rank = dst.rank();
  Shape index(rank, 0);
  const char *sb = src.bytes();
  char *db = dst.bytes();
  bool floating = isFloating(src.dtype) || isFloating(dst.dtype);
  for (int64_t k = 0; k < n; ++k) {
    int64_t so = 0, dof = 0;
    for (int64_t d = 0; d < rank; ++d) {
      so += index[d] * src.strides[d];
      dof += index[d] * dst.strides[d];
    }
    if (src.dtype == dst.dtype)
      std::memcpy(db + dof * ed, sb + so * es, es);
    else if (floating)
      storeDouble(db + dof * ed, dst.dtype,
                  loadDouble(sb + so * es, src.dtype));
    else
      storeInt(db + dof * ed, dst.dtype, loadInt(sb + so * es, src.dtype));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dst.shape[d])
        break;
      index[d] = 0;
    }
  }
}

void cpu::copyStridedToContiguous(const Tensor &src, void *dst) {
  Storage host;
  host.data = dst;
  Tensor out;
  out.storage = &host;
  out.dtype = src.dtype;
  out.shape = src.shape;
  out.strides = Tensor::contiguousStrides(src.shape);
  copyTensor(src, out);
}

