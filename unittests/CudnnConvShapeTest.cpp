//===- CudnnConvShapeTest.cpp - Convolutions in cuDNN's terms -------------===//
//
// The host half of the optimized CUDA tier's convolution (CuDNN.cpp): which
// calls go to cuDNN and with which descriptors. cuDNN itself runs only on
// a GPU; what it is handed is checked here, where there is none.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/ConvolutionPlan.h"

#include "gtest/gtest.h"

#include <climits>
#include <vector>

using namespace traceir;

namespace {

ConvGeometry geometry(int64_t N, int64_t C, int64_t H, int64_t W, int64_t O,
                      int64_t k, int64_t s, int64_t p, int64_t groups = 1,
                      int64_t dil = 1) {
  ConvGeometry g;
  g.N = N;
  g.C = C;
  g.H = H;
  g.W = W;
  g.O = O;
  g.Cg = C / groups;
  g.kH = g.kW = k;
  g.groups = groups;
  g.sH = g.sW = s;
  g.pT = g.pL = p;
  g.dH = g.dW = dil;
  g.OH = (H + 2 * p - dil * (k - 1) - 1) / s + 1;
  g.OW = (W + 2 * p - dil * (k - 1) - 1) / s + 1;
  return g;
}

std::vector<int> dims(const int *d, int n) {
  return std::vector<int>(d, d + n);
}

TEST(CudnnConvShapeTest, Conv2dIsFourDimensional) {
  // resnet's stem: 7x7, stride 2, padding 3.
  CudnnConvShape s;
  ASSERT_TRUE(cudnnConvShape(
      convolutionPlanOf(geometry(8, 3, 224, 224, 64, 7, 2, 3)), s));
  EXPECT_EQ(s.rank, 4);
  EXPECT_EQ(dims(s.x, 4), (std::vector<int>{8, 3, 224, 224}));
  EXPECT_EQ(dims(s.w, 4), (std::vector<int>{64, 3, 7, 7}));
  EXPECT_EQ(dims(s.y, 4), (std::vector<int>{8, 64, 112, 112}));
  EXPECT_EQ(dims(s.pad, 2), (std::vector<int>{3, 3}));
  EXPECT_EQ(dims(s.stride, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(dims(s.dil, 2), (std::vector<int>{1, 1}));
  EXPECT_EQ(s.groups, 1);
}

TEST(CudnnConvShapeTest, GroupsAndDilation) {
  // A depthwise 3x3 with dilation 2: the filter has C / groups channels.
  CudnnConvShape s;
  ASSERT_TRUE(cudnnConvShape(
      convolutionPlanOf(geometry(2, 96, 28, 28, 96, 3, 1, 2, 96, 2)), s));
  EXPECT_EQ(s.groups, 96);
  EXPECT_EQ(dims(s.w, 4), (std::vector<int>{96, 1, 3, 3}));
  EXPECT_EQ(dims(s.y, 4), (std::vector<int>{2, 96, 28, 28}));
  EXPECT_EQ(dims(s.dil, 2), (std::vector<int>{2, 2}));
}

TEST(CudnnConvShapeTest, OneAndThreeSpatialDims) {
  // conv1d: a 2-D convolution over a height of 1.
  ConvolutionPlan p;
  p.N = 4;
  p.C = 16;
  p.O = 32;
  p.spatial = 1;
  p.in[2] = 100;
  p.k[2] = 5;
  p.pad[2] = 2;
  p.stride[2] = 2;
  p.out3[2] = 50;
  CudnnConvShape s;
  ASSERT_TRUE(cudnnConvShape(p, s));
  EXPECT_EQ(s.rank, 4);
  EXPECT_EQ(dims(s.x, 4), (std::vector<int>{4, 16, 1, 100}));
  EXPECT_EQ(dims(s.w, 4), (std::vector<int>{32, 16, 1, 5}));
  EXPECT_EQ(dims(s.y, 4), (std::vector<int>{4, 32, 1, 50}));
  EXPECT_EQ(dims(s.pad, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(dims(s.stride, 2), (std::vector<int>{1, 2}));
  // conv3d: rank 5.
  p.spatial = 3;
  p.in[0] = 8;
  p.k[0] = 3;
  p.pad[0] = 1;
  p.out3[0] = 8;
  ASSERT_TRUE(cudnnConvShape(p, s));
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(dims(s.x, 5), (std::vector<int>{4, 16, 8, 1, 100}));
  EXPECT_EQ(dims(s.y, 5), (std::vector<int>{4, 32, 8, 1, 50}));
  EXPECT_EQ(dims(s.pad, 3), (std::vector<int>{1, 0, 2}));
}

TEST(CudnnConvShapeTest, DeclinesWhatItCannotState) {
  CudnnConvShape s;
  ConvGeometry odd = geometry(1, 4, 8, 8, 4, 3, 1, 1);
  EXPECT_TRUE(cudnnConvShape(convolutionPlanOf(odd), s));
  // padding='same' with an even kernel pads the bottom and right one more
  // than the top and left: not one padding per dim.
  ConvGeometry same = geometry(1, 4, 8, 8, 4, 2, 1, 0);
  same.OH = same.OW = 8;
  EXPECT_FALSE(cudnnConvShape(convolutionPlanOf(same), s));
  // Transposed convolutions are not forward ones.
  ConvolutionPlan t = convolutionPlanOf(odd);
  t.transposed = true;
  EXPECT_FALSE(cudnnConvShape(t, s));
  // Empty tensors stay with the portable kernels.
  EXPECT_FALSE(
      cudnnConvShape(convolutionPlanOf(geometry(0, 4, 8, 8, 4, 3, 1, 1)), s));
  EXPECT_FALSE(
      cudnnConvShape(convolutionPlanOf(geometry(1, 0, 8, 8, 4, 3, 1, 1)), s));
  // cuDNN's sizes are ints: a size, or a tensor's element count, past
  // INT_MAX does not go to it.
  EXPECT_FALSE(cudnnConvShape(
      convolutionPlanOf(geometry(int64_t(INT_MAX) + 1, 1, 1, 1, 1, 1, 1, 0)),
      s));
  EXPECT_FALSE(cudnnConvShape(
      convolutionPlanOf(geometry(64, 64, 1024, 1024, 8, 1, 1, 0)), s));
  EXPECT_TRUE(cudnnConvShape(
      convolutionPlanOf(geometry(1, 64, 1024, 1024, 8, 1, 1, 0)), s));
}

} // namespace
