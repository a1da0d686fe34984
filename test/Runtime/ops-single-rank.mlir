// One rank, no mesh: layer norm + GELU composed of linalg.reduce/generic
// (broadcast maps, erf), softmax, an embedding lookup (tensor.gather),
// transpose + pad, concat, batch_matmul (BLAS), a max reduction and integer
// arith on tensors; every output is checked against numpy.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/x.npy 4,8 float32 1
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/gamma.npy 8 float32 2
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/table.npy 10,8 float32 3
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/ids.npy 5 int64 4
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/a3.npy 2,4,8 float32 5
// RUN: %numpy_python %S/Inputs/npy_tool.py random %t/b3.npy 2,8,3 float32 6
// RUN: %numpy_python %S/Inputs/npy_tool.py ops %t
// RUN: autoshard-run %s --input x=%t/x.npy --input gamma=%t/gamma.npy --input table=%t/table.npy --input ids=%t/ids.npy --input a3=%t/a3.npy --input b3=%t/b3.npy --output-dir %t/out | FileCheck %s
// RUN: autoshard-run --compare %t/out/output_0.npy %t/expected_0.npy --rtol 1e-4 --atol 1e-5
// RUN: autoshard-run --compare %t/out/output_1.npy %t/expected_1.npy --rtol 1e-5
// RUN: autoshard-run --compare %t/out/output_2.npy %t/expected_2.npy --rtol 0 --atol 0
// RUN: autoshard-run --compare %t/out/output_3.npy %t/expected_3.npy --rtol 0 --atol 0
// RUN: autoshard-run --compare %t/out/output_4.npy %t/expected_4.npy --rtol 0 --atol 0
// RUN: autoshard-run --compare %t/out/output_5.npy %t/expected_5.npy --rtol 1e-5
// RUN: autoshard-run --compare %t/out/output_6.npy %t/expected_6.npy --rtol 0 --atol 0
// RUN: autoshard-run --compare %t/out/output_7.npy %t/expected_7.npy --rtol 0 --atol 0

// CHECK: output 0 'result0': f32[4x8]
// CHECK: output 1 'result1': f32[4x8]
// CHECK: output 2 'result2': f32[5x8]
// CHECK: output 3 'result3': f32[9x6]
// CHECK: output 4 'result4': f32[8x8]
// CHECK: output 5 'result5': f32[2x4x3]
// CHECK: output 6 'result6': f32[4]
// CHECK: output 7 'result7': i64[5]

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<4x8xf32> {dist.name = "x"},
                %gamma: tensor<8xf32> {dist.name = "gamma"},
                %table: tensor<10x8xf32> {dist.name = "table"},
                %ids: tensor<5xi64> {dist.name = "ids"},
                %a3: tensor<2x4x8xf32> {dist.name = "a3"},
                %b3: tensor<2x8x3xf32> {dist.name = "b3"})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<5x8xf32>, tensor<9x6xf32>,
        tensor<8x8xf32>, tensor<2x4x3xf32>, tensor<4xf32>, tensor<5xi64>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678118654752 : f32
  // Layer norm over the last dim.
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%z4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %e48 = tensor.empty() : tensor<4x8xf32>
  %centered = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %var = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%centered : tensor<4x8xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %sq = arith.mulf %c, %c : f32
    %d = arith.divf %sq, %n : f32
    %r = arith.addf %acc, %d : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ln = linalg.generic {indexing_maps = [#id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %var, %gamma : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%c: f32, %v: f32, %g: f32, %o: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %c, %r : f32
    %yg = arith.mulf %y, %g : f32
    %t = arith.mulf %yg, %rsqrt2 : f32
    %erf = math.erf %t : f32
    %p = arith.addf %erf, %one : f32
    %h = arith.mulf %yg, %half : f32
    %gelu = arith.mulf %h, %p : f32
    linalg.yield %gelu : f32
  } -> tensor<4x8xf32>
  %sm = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  // Embedding lookup.
  %idx = arith.index_cast %ids : tensor<5xi64> to tensor<5xindex>
  %idx2 = tensor.expand_shape %idx [[0, 1]] output_shape [5, 1] : tensor<5xindex> into tensor<5x1xindex>
  %rows = tensor.gather %table[%idx2] gather_dims([0]) : (tensor<10x8xf32>, tensor<5x1xindex>) -> tensor<5x1x8xf32>
  %emb = tensor.collapse_shape %rows [[0, 1], [2]] : tensor<5x1x8xf32> into tensor<5x8xf32>
  // Transpose + pad.
  %e84 = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e84 : tensor<8x4xf32>) permutation = [1, 0]
  %padded = tensor.pad %xt low[1, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %half : f32
  } : tensor<8x4xf32> to tensor<9x6xf32>
  // Concat with 2x.
  %x2 = arith.addf %x, %x : tensor<4x8xf32>
  %cat = tensor.concat dim(0) %x, %x2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // Batch matmul.
  %e243 = tensor.empty() : tensor<2x4x3xf32>
  %z243 = linalg.fill ins(%zero : f32) outs(%e243 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %bmm = linalg.batch_matmul ins(%a3, %b3 : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%z243 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  // Row max.
  %ninf = arith.constant 0xFF800000 : f32
  %m4 = linalg.fill ins(%ninf : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%m4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  // Integer arithmetic on tensors with a splat constant.
  %c3 = arith.constant dense<3> : tensor<5xi64>
  %c1 = arith.constant dense<1> : tensor<5xi64>
  %c5 = arith.constant dense<5> : tensor<5xi64>
  %i3 = arith.muli %ids, %c3 : tensor<5xi64>
  %i31 = arith.addi %i3, %c1 : tensor<5xi64>
  %imod = arith.remsi %i31, %c5 : tensor<5xi64>
  return %ln, %sm, %emb, %padded, %cat, %bmm, %mx, %imod
      : tensor<4x8xf32>, tensor<4x8xf32>, tensor<5x8xf32>, tensor<9x6xf32>,
        tensor<8x8xf32>, tensor<2x4x3xf32>, tensor<4xf32>, tensor<5xi64>
}
