//===- HostIO.h - .npy files, seeded inputs, shards -------------*- C++ -*-===//
//
// Host-side helpers around a run: numpy .npy files (C order; f16, f32, f64,
// i32, i64, bool; bf16, which numpy lacks, as f32), the seeded initialiser used when no file is given, and the
// mapping between global tensors and per-device shards given a layout.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_HOSTIO_H
#define AUTOSHARD_RUNTIME_HOSTIO_H

#include "autoshard/Runtime/Tensor.h"
#include "autoshard/Support/DeviceMesh.h"
#include "autoshard/Support/TensorLayout.h"

#include <string>

namespace autoshard::rt {

/// Reads a .npy file; throws rt::Error naming the file on any problem
/// (missing, not npy, Fortran order, unsupported dtype, truncated).
Tensor readNpy(const std::string &path);
/// Reads a .npy file for a value of type `as`: numpy has no bfloat16, so a
/// float32 file read as BF16 is rounded to nearest even; any other pair is
/// returned as the file has it (the caller checks the type).
Tensor readNpy(const std::string &path, DType as);
/// What a .npy header says.
struct NpyHeader {
  DType type = DType::F32;
  Shape shape;
};
/// Reads only the header of a .npy file (to check shapes before a job
/// starts without loading the data); throws like readNpy.
NpyHeader readNpyHeader(const std::string &path);
/// Writes a host tensor as .npy (little endian, C order); BF16 is written
/// as float32 (exactly: every bf16 is an f32).
void writeNpy(const std::string &path, const Tensor &tensor);

/// A deterministic tensor depending only on (seed, key, element index):
/// floats uniform in [-1, 1) (bf16/f16: the f32 values rounded to nearest
/// even, so a low-precision run sees its f32 reference's inputs rounded),
/// integers in [0, 8), bools 0/1. The same key yields the same global
/// values on every rank and for every mesh.
Tensor makeSeededTensor(DType type, const Shape &shape, uint64_t seed,
                        uint64_t key);

/// The shard of a global tensor held at mesh position `pos`: the slice given
/// by the layout, placed at the origin of a zero tensor of `localShape`
/// (which may exceed the slice when shards are padded). Partial axes follow
/// MakePartial semantics: sum keeps the value at group index 0 and zeros
/// elsewhere, product ones elsewhere, max/min everywhere.
Tensor cutShard(const Tensor &global, const DeviceMesh &mesh,
                const TensorLayout &layout, int64_t pos,
                const Shape &localShape);

/// Rebuilds the global tensor from every position's local tensor
/// (locals[pos]): split dims are placed by the layout, partial axes reduced.
Tensor assembleGlobal(const std::vector<Tensor> &locals, const DeviceMesh &mesh,
                      const TensorLayout &layout, const Shape &globalShape);

/// Compares two tensors elementwise: |a - b| <= atol + rtol * |b|. Returns
/// "" when they match, else a one-line description of the first mismatch
/// (or of a dtype/shape difference). `maxAbsErr` gets the largest error.
std::string compareTensors(const Tensor &a, const Tensor &b, double rtol,
                           double atol, double &maxAbsErr);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_HOSTIO_H
