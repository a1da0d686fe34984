//===- Train.h - autoshard train: training steps on MPI ranks ---*- C++ -*-===//
#ifndef AUTOSHARD_TOOLS_AUTOSHARD_TRAIN_H
#define AUTOSHARD_TOOLS_AUTOSHARD_TRAIN_H

#include "Compile.h"

#include <vector>

namespace autoshard::driver {

struct TrainOptions {
  CompileOptions compile;
  std::vector<std::string> inputs; // NAME=FILE.npy, global batches
  std::string labels;              // FILE.npy
  // The --dist-training-step options (defaults as the pass's).
  std::string loss = "cross_entropy";
  std::string optimizer = "sgd";
  double lr = 0.01, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.0;
  std::string dataAxis; // empty: `dp` if the mesh has it, else its first
                        // axis; "none": inputs stay as annotated
  std::string entry = "main";
  int64_t microBatches = 1;
  bool optimizerShard = false;
  int64_t optimizerShardThreshold = 65536;
  std::string recompute = "none";
  int steps = 1;
  int ranks = 0; // 0: the mesh size
  std::string backend = "cpu";
  unsigned seed = 1;
  std::string lossesOut, paramsOut, memoryOut, workDir;
  const char *argv0 = nullptr;
};

/// Builds the training step of the input's forward function
/// (--dist-training-step), partitions it like `compile`, and runs `steps`
/// steps on N ranks (mpirun + autoshard-run --steps). Inputs and labels are
/// global batches split on dim 0 over the data axis. Returns the exit code.
int runTrain(mlir::MLIRContext &ctx, const TrainOptions &options);

} // namespace autoshard::driver

#endif // AUTOSHARD_TOOLS_AUTOSHARD_TRAIN_H
