//===- CpuConv.cpp - 2-D convolution and pooling through oneDNN -----------===//
//
// The CPU backend's kernels for OpKind::Conv2D and Pool2D: oneDNN (Debian's
// libdnnl 2.6) primitives on NCHW f32 tensors, the input already padded by
// the program (tensor.pad), so every primitive here runs unpadded. A
// primitive is made once per shape and kept: a model runs the same layers
// every step. Without oneDNN (AUTOSHARD_HAVE_DNNL unset) the backend reports
// no window kernels and the executor runs the ops' loop nests.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#ifdef AUTOSHARD_HAVE_DNNL

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <map>
#include <mutex>

using namespace autoshard;
using namespace autoshard::rt;

namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
constexpr auto f32 = dnnl::memory::data_type::f32;

dnnl::engine &getEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dims toDims(const Shape &shape) { return dims(shape.begin(), shape.end()); }

void checkNCHW(const Tensor &t, const char *what, const char *op) {
  if (t.getDType() != DType::F32 || t.getShape().size() != 4)
    throw Error(std::string(op) + ": " + what + " must be a 4-D f32 tensor, not " +
                t.getTypeString());
}

/// oneDNN counts dilation from 0 (1 here means "every input row").
dims oneDnnDilations(const std::vector<int64_t> &dilations) {
  return {dilations[0] - 1, dilations[1] - 1};
}

/// A primitive with its memory descriptors, keyed by everything that shapes
/// it.
struct ConvEntry {
  dnnl::convolution_forward prim;
  dnnl::memory::desc src, wei, dst;
};
struct PoolEntry {
  dnnl::pooling_v2_forward prim;
  dnnl::memory::desc src, dst;
};

std::mutex cacheMutex;

} // namespace

void rt::cpu::conv2d(const Tensor &in, const Tensor &w, Tensor &out,
                     const std::vector<int64_t> &strides,
                     const std::vector<int64_t> &dilations) {
  checkNCHW(in, "input", "conv2d");
  checkNCHW(w, "weight", "conv2d");
  checkNCHW(out, "output", "conv2d");
  if (strides.size() != 2 || dilations.size() != 2)
    throw Error("conv2d: expects 2 strides and 2 dilations");
  if (w.getDim(1) < 1 || in.getDim(1) % w.getDim(1) ||
      out.getDim(1) % (in.getDim(1) / w.getDim(1)))
    throw Error("conv2d: a weight of " + w.getTypeString() +
                " does not group the channels of " + in.getTypeString() +
                " into " + out.getTypeString());
  std::vector<int64_t> key = in.getShape();
  key.insert(key.end(), w.getShape().begin(), w.getShape().end());
  key.insert(key.end(), out.getShape().begin(), out.getShape().end());
  key.insert(key.end(), strides.begin(), strides.end());
  key.insert(key.end(), dilations.begin(), dilations.end());
  static std::map<std::vector<int64_t>, ConvEntry> cache;
  ConvEntry *entry;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
      dnnl::memory::desc src(toDims(in.getShape()), f32, tag::nchw);
      // Grouped (ONNX's weight [F, C / groups, KH, KW]): oneDNN's goihw,
      // the same bytes with the group split off F.
      const Shape &ws = w.getShape();
      int64_t groups = in.getDim(1) / ws[1];
      dnnl::memory::desc wei =
          groups == 1
              ? dnnl::memory::desc(toDims(ws), f32, tag::oihw)
              : dnnl::memory::desc({groups, ws[0] / groups, ws[1], ws[2], ws[3]},
                                   f32, tag::goihw);
      dnnl::memory::desc dst(toDims(out.getShape()), f32, tag::nchw);
      dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::convolution_direct, src, wei, dst,
          dims(strides.begin(), strides.end()), oneDnnDilations(dilations),
          {0, 0}, {0, 0});
      // The op accumulates into its init: dst = conv + dst.
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      dnnl::primitive_attr attr;
      attr.set_post_ops(ops);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, getEngine());
      it = cache.emplace(key, ConvEntry{dnnl::convolution_forward(pd), src,
                                        wei, dst})
               .first;
    }
    entry = &it->second;
  }
  dnnl::engine &engine = getEngine();
  dnnl::stream stream(engine);
  dnnl::memory src(entry->src, engine, in.getRawData());
  dnnl::memory wei(entry->wei, engine, w.getRawData());
  dnnl::memory dst(entry->dst, engine, out.getRawData());
  entry->prim.execute(stream, {{DNNL_ARG_SRC, src},
                               {DNNL_ARG_WEIGHTS, wei},
                               {DNNL_ARG_DST, dst}});
  stream.wait();
}

void rt::cpu::pool2d(const Tensor &in, Tensor &out,
                     const std::vector<int64_t> &kernel,
                     const std::vector<int64_t> &strides,
                     const std::vector<int64_t> &dilations,
                     ReductionKind kind) {
  checkNCHW(in, "input", "pool2d");
  checkNCHW(out, "output", "pool2d");
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2)
    throw Error("pool2d: expects 2 kernel sizes, strides and dilations");
  if (kind != ReductionKind::Max && kind != ReductionKind::Sum)
    throw Error("pool2d: only max and sum pooling");
  bool isMax = kind == ReductionKind::Max;
  std::vector<int64_t> key = in.getShape();
  key.insert(key.end(), out.getShape().begin(), out.getShape().end());
  for (const auto *v : {&kernel, &strides, &dilations})
    key.insert(key.end(), v->begin(), v->end());
  key.push_back(isMax);
  static std::map<std::vector<int64_t>, PoolEntry> cache;
  PoolEntry *entry;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
      dnnl::memory::desc src(toDims(in.getShape()), f32, tag::nchw);
      dnnl::memory::desc dst(toDims(out.getShape()), f32, tag::nchw);
      // A sum is the average over the (unpadded, so always full) window
      // times its size.
      dnnl::pooling_v2_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          isMax ? dnnl::algorithm::pooling_max
                : dnnl::algorithm::pooling_avg_include_padding,
          src, dst, dims(strides.begin(), strides.end()),
          dims(kernel.begin(), kernel.end()), oneDnnDilations(dilations),
          {0, 0}, {0, 0});
      dnnl::pooling_v2_forward::primitive_desc pd(desc, getEngine());
      it = cache.emplace(key, PoolEntry{dnnl::pooling_v2_forward(pd), src, dst})
               .first;
    }
    entry = &it->second;
  }
  // The op folds the window into its init (the identity, normally): pool
  // into a scratch tensor, then combine.
  std::vector<float> scratch(out.getNumElements());
  dnnl::engine &engine = getEngine();
  dnnl::stream stream(engine);
  dnnl::memory src(entry->src, engine, in.getRawData());
  dnnl::memory dst(entry->dst, engine, scratch.data());
  entry->prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  stream.wait();
  float *o = out.getData<float>();
  float scale = static_cast<float>(kernel[0] * kernel[1]);
  for (size_t i = 0; i < scratch.size(); ++i)
    o[i] = isMax ? std::max(o[i], scratch[i]) : o[i] + scratch[i] * scale;
}

bool rt::cpu::haveWindowKernels() { return true; }

#else

bool autoshard::rt::cpu::haveWindowKernels() { return false; }

void autoshard::rt::cpu::conv2d(const Tensor &, const Tensor &, Tensor &,
                                const std::vector<int64_t> &,
                                const std::vector<int64_t> &) {
  throw Error("conv2d: this runtime was built without oneDNN");
}

void autoshard::rt::cpu::pool2d(const Tensor &, Tensor &,
                                const std::vector<int64_t> &,
                                const std::vector<int64_t> &,
                                const std::vector<int64_t> &, ReductionKind) {
  throw Error("pool2d: this runtime was built without oneDNN");
}

#endif
