//===- GradientCheck.h - VJP rules against finite differences ---*- C++ -*-===//
//
// The harness of TrainTests: a forward model `func.func @main(...)` in MLIR
// text (f64 tensors, parameters marked with the unit arg attribute
// `dist.param`) goes through
//
//   1. `dist-training-step{loss=... optimizer=sgd lr=1}` on a clone, and one
//      run of the resulting @train_step on one process (CPU backend, local
//      communicator): with SGD and lr = 1 the gradient of parameter k is
//      g = p - p' (result k + 1);
//   2. the ORIGINAL @main, lowered too, evaluated at p ± h on every element
//      of every parameter, the loss computed here in C++ (mean squared error
//      or mean cross-entropy over the last dim): central differences fd;
//   3. |g - fd| <= atol + rtol |fd| per element, and @train_step's loss
//      (result 0) against the C++ loss of @main's output.
//
// Failures are GoogleTest failures that print the model, the parameter, the
// element and both values. Set AUTOSHARD_GRADCHECK_DUMP=1 to print every
// @train_step the pass builds.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_UNITTESTS_TRAIN_GRADIENTCHECK_H
#define AUTOSHARD_UNITTESTS_TRAIN_GRADIENTCHECK_H

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"
#include "autoshard/Runtime/Executor.h"
#include "autoshard/Runtime/Program.h"
#include "autoshard/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace autoshard::gradcheck {

/// A context with every dialect and interface model autoshard registers
/// (the VJP rules included), single-threaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses `source`; on failure returns null and the diagnostics in `diag`.
mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &ctx,
                                        const std::string &source,
                                        std::string &diag);

/// Runs `pipeline` (textual, e.g. "dist-training-step{loss=mse}") on
/// `module`; on failure returns false and the diagnostics in `diag`.
bool runPipeline(mlir::ModuleOp module, const std::string &pipeline,
                 std::string &diag);

/// One lowered function with its executor (CPU backend, local
/// communicator).
class Runner {
public:
  /// Lowers `entry` of `module`; null with the diagnostics in `diag` on
  /// failure (or the runtime's error when the executor rejects the plan).
  static std::unique_ptr<Runner> create(mlir::ModuleOp module,
                                        llvm::StringRef entry,
                                        std::string &diag);
  /// Throws rt::Error like the executor.
  std::vector<rt::Tensor> run(const std::vector<rt::Tensor> &inputs);
  const rt::Program &getProgram() const { return *program; }

private:
  std::unique_ptr<rt::Program> program;
  std::unique_ptr<rt::Backend> backend;
  std::unique_ptr<rt::Communicator> comm;
  std::unique_ptr<rt::Executor> executor;
};

/// Element type and shape of a ranked tensor type (f64, f32, i64, i32, i1).
rt::DType dtypeOf(mlir::Type type);
rt::Shape shapeOf(mlir::Type type);

/// Uniform floats in [lo, hi) / integers in [0, bound).
rt::Tensor randomFloats(rt::DType type, const rt::Shape &shape,
                        std::mt19937_64 &rng, double lo = -1.0,
                        double hi = 1.0);
rt::Tensor randomInts(rt::DType type, const rt::Shape &shape,
                      std::mt19937_64 &rng, int64_t bound);

/// The losses, computed here: mean((y - t)^2) over every element, and the
/// mean over positions (all dims but the last) of logsumexp(row) -
/// row[label].
double mseLoss(const rt::Tensor &y, const rt::Tensor &target);
double crossEntropyLoss(const rt::Tensor &logits, const rt::Tensor &labels);

struct CheckOptions {
  std::string loss = "mse"; // or "cross_entropy"
  uint64_t seed = 1;
  double h = 1e-6;
  double atol = 1e-6, rtol = 1e-5;
  /// Integer inputs (not labels) are drawn uniformly from [0, intBound).
  int64_t intBound = 8;
  /// Float inputs and parameters are drawn uniformly from [lo, hi).
  double lo = -1.0, hi = 1.0;
};

/// Steps 1-3 above on `source`, reporting through GoogleTest (one failure
/// per mismatching parameter, with the first mismatches listed). Returns
/// true when everything matched.
bool checkGradients(const std::string &source, const CheckOptions &options);

/// `tmpl` with every `${KEY}` replaced by its value.
std::string subst(std::string tmpl,
                  std::initializer_list<std::pair<std::string, std::string>>
                      values);
/// "4x3" for {4, 3}; "" for rank 0.
std::string dims(const std::vector<int64_t> &shape);
/// "tensor<4x3xf64>".
std::string f64Tensor(const std::vector<int64_t> &shape);
/// "affine_map<(d0, d1) -> (d1)>" for (2, {1}).
std::string affineMap(unsigned numDims, const std::vector<unsigned> &results);
/// "[\"parallel\", \"reduction\"]" from "pr".
std::string iterators(const std::string &kinds);

} // namespace autoshard::gradcheck

#endif // AUTOSHARD_UNITTESTS_TRAIN_GRADIENTCHECK_H
