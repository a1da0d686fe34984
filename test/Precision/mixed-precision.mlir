// --dist-mixed-precision after --dist-training-step: every matmul-like
// contraction of the forward and the backward reads truncf'd inputs and keeps
// its f32 init/result (the body extends: FP32 accumulation); softmax, the
// LayerNorm-style reductions, their backward (batched dot products, no M/N
// loop), the loss and the optimizer stay f32.
// RUN: autoshard-opt %S/Inputs/tiny-attention.mlir --dist-training-step='loss=mse optimizer=adam lr=0.01' --dist-mixed-precision=precision=bf16 | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: autoshard-opt %S/Inputs/tiny-attention.mlir --dist-training-step='loss=mse optimizer=adam lr=0.01' --dist-mixed-precision=precision=fp16 | FileCheck %s --check-prefixes=CHECK,FP16
// RUN: autoshard-opt %S/Inputs/tiny-attention.mlir --dist-training-step='loss=mse optimizer=adam lr=0.01' --dist-mixed-precision=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: autoshard-opt %S/Inputs/tiny-attention.mlir --dist-training-step='loss=mse optimizer=adam lr=0.01' --dist-mixed-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: not autoshard-opt %S/Inputs/tiny-attention.mlir --dist-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD

// BF16: module attributes {dist.precision = "bf16"}
// FP16: module attributes {dist.precision = "fp16"}
// CHECK-LABEL: func.func @train_step(
// One cast per value, right after it is made: the parameters v and w and
// the input x.
// BF16-DAG: %[[V:.*]] = arith.truncf %arg1 : tensor<2x8x8xf32> to tensor<2x8x8xbf16>
// BF16-DAG: %[[W:.*]] = arith.truncf %arg0 : tensor<8x8xf32> to tensor<8x8xbf16>
// BF16-DAG: %[[X:.*]] = arith.truncf %arg7 : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// FP16-DAG: %[[V:.*]] = arith.truncf %arg1 : tensor<2x8x8xf32> to tensor<2x8x8xf16>
// FP16-DAG: %[[W:.*]] = arith.truncf %arg0 : tensor<8x8xf32> to tensor<8x8xf16>
// FP16-DAG: %[[X:.*]] = arith.truncf %arg7 : tensor<2x4x8xf32> to tensor<2x4x8xf16>
// Forward: the importer-style rank-3 contraction generic.
// BF16: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<2x4x8xbf16>, tensor<8x8xbf16>) outs(%{{.*}} : tensor<2x4x8xf32>)
// FP16: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<2x4x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<2x4x8xf32>)
// BF16-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// BF16-DAG: %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// BF16-DAG: %[[EA:.*]] = arith.extf %[[A]] : bf16 to f32
// BF16: %[[P:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// BF16-NEXT: arith.addf %[[C]], %[[P]] : f32
// Softmax and the normalisation: f32, no casts.
// CHECK: %[[SM:.*]] = linalg.softmax dimension(2) ins(%[[H]] : tensor<2x4x8xf32>)
// CHECK-NOT: truncf
// CHECK: math.rsqrt {{.*}} : f32
// BF16: %[[LNB:.*]] = arith.truncf %{{.*}} : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// BF16-NEXT: %[[Y:.*]] = linalg.batch_matmul ins(%[[LNB]], %[[V]] : tensor<2x4x8xbf16>, tensor<2x8x8xbf16>) outs(%{{.*}} : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// FP16: linalg.batch_matmul ins(%{{.*}}, %[[V]] : tensor<2x4x8xf16>, tensor<2x8x8xf16>) outs(%{{.*}} : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// The loss in f32; its gradient is cast where the backward GEMMs read it.
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %arg8 : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%{{.*}} : tensor<f32>) attrs = {dist.phase = "loss"}
// CHECK: %[[DY:.*]] = linalg.generic {{.*}}attrs = {dist.phase = "loss"}
// BF16: %[[DYB:.*]] = arith.truncf %[[DY]] {dist.phase = "loss"} : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// Backward GEMMs: d ln = dy v^T, dv = ln^T dy. The transposes take the
// casts the forward made (v cast once) and stay foldable into the GEMMs.
// BF16-NOT: truncf
// BF16: %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<2x8x8xbf16>) outs(%{{.*}} : tensor<2x8x8xbf16>) permutation = [0, 2, 1]  {dist.phase = "backward"}
// BF16: %[[DLN:.*]] = linalg.batch_matmul {dist.phase = "backward"} ins(%[[DYB]], %[[VT]] : tensor<2x4x8xbf16>, tensor<2x8x8xbf16>) outs(%{{.*}} : tensor<2x4x8xf32>)
// BF16-NOT: truncf
// BF16: %[[LNT:.*]] = linalg.transpose ins(%[[LNB]] : tensor<2x4x8xbf16>) outs(%{{.*}} : tensor<2x8x4xbf16>)
// BF16: linalg.batch_matmul {dist.phase = "backward"} ins(%[[LNT]], %[[DYB]] : tensor<2x8x4xbf16>, tensor<2x4x8xbf16>) outs(%{{.*}} : tensor<2x8x8xf32>)
// LayerNorm's and softmax's backward (sum(dy * y) over the row: a batched
// dot product) stay f32.
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[SM]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x4xf32>) attrs = {dist.phase = "backward"}
// CHECK: %[[DH:.*]] = linalg.generic {{.*}}ins(%[[SM]], {{.*}}: tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) outs(
// dw = x^T dh: the weight gradient generic reads the casts of x and dh.
// CHECK: %[[DHB:.*]] = arith.truncf %[[DH]] {dist.phase = "backward"} : tensor<2x4x8xf32> to tensor<2x4x8x[[T:b?f16]]>
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[X]], %[[DHB]] : tensor<2x4x8x[[T]]>, tensor<2x4x8x[[T]]>) outs(%{{.*}} : tensor<8x8xf32>) attrs = {dist.phase = "backward"}
// The optimizer: f32 master weights, no casts.
// CHECK-NOT: truncf
// CHECK: dist.phase = "optimizer"
// CHECK-NOT: truncf
// CHECK-NOT: bf16
// CHECK-NOT: f16
// CHECK: return

// TF32: module attributes {dist.precision = "tf32"}
// TF32-NOT: truncf
// TF32: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg7, %arg0 : {{.*}}) outs({{.*}}) attrs = {dist.tf32}
// TF32: linalg.softmax
// TF32-NOT: dist.tf32
// TF32: linalg.batch_matmul {dist.tf32} ins
// TF32: linalg.batch_matmul {dist.phase = "backward", dist.tf32} ins
// TF32: linalg.batch_matmul {dist.phase = "backward", dist.tf32} ins
// TF32: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
// TF32-NOT: dist.tf32
// TF32: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} {{.*}} attrs = {dist.phase = "backward", dist.tf32}
// TF32-NOT: dist.tf32

// FP32-NOT: dist.precision
// FP32-NOT: truncf
// FP32-NOT: dist.tf32

// BAD: error: dist-mixed-precision: unknown precision 'fp8' (expected fp32, tf32, bf16 or fp16)
