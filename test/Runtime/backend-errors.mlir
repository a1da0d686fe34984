// The backend flag: an unknown backend, or CUDA without a usable GPU, is one
// clear error line and exit 1.
// RUN: not autoshard-run %s --backend tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: autoshard-run: error: unknown --backend 'tpu' (expected cpu or cuda)
// RUN: autoshard-run %s --backend cpu --output-dir %t
// UNSUPPORTED: cuda-gpu
// RUN: not autoshard-run %s --backend cuda 2>&1 | FileCheck %s --check-prefix=NOGPU
// NOGPU: autoshard-run: error: cannot use the CUDA backend
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
