// Forms the VJP rules do not support give one located error on the op.
// RUN: autoshard-opt %s --split-input-file --verify-diagnostics --dist-training-step='loss=mse optimizer=sgd lr=1'

func.func @main(%a: tensor<2x4xf32> {dist.param}, %b: tensor<3x4xf32>, %c: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{VJP of linalg.matmul with non-default indexing_maps is not supported}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<2x4xf32>, tensor<3x4xf32>) outs(%c : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2x4xf16> {dist.param}, %b: tensor<4x3xf16>, %c: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{VJP of linalg.matmul with a cast is not supported}}
  %y = linalg.matmul ins(%a, %b : tensor<2x4xf16>, tensor<4x3xf16>) outs(%c : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2x4xf32> {dist.param}, %b: tensor<4x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{VJP of linalg.matmul with a cast is not supported}}
  %y = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<2x4xf32>, tensor<4x3xf32>) outs(%c : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<5x2x4xf32> {dist.param}, %b: tensor<5x3x4xf32>, %c: tensor<5x2x3xf32>) -> tensor<5x2x3xf32> {
  // expected-error @below {{VJP of linalg.batch_matmul with non-default indexing_maps is not supported}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<5x2x4xf32>, tensor<5x3x4xf32>) outs(%c : tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  return %y : tensor<5x2x3xf32>
}

// -----

func.func @main(%x: tensor<?x4xf32> {dist.param}) -> tensor<2x4xf32> {
  // expected-error @below {{VJP of 'tensor.extract_slice' needs static tensor shapes}}
  %y = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<?x4xf32> to tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @main(%x: tensor<8x5xf32> {dist.param}) -> tensor<4x5xf32> {
  // expected-error @below {{VJP of tensor.extract_slice with non-unit strides is not supported}}
  %y = tensor.extract_slice %x[0, 0] [4, 5] [2, 1] : tensor<8x5xf32> to tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

func.func @main(%x: tensor<8x5xf32> {dist.param}, %i: tensor<index>) -> tensor<4x5xf32> {
  %o = tensor.extract %i[] : tensor<index>
  // expected-error @below {{VJP of tensor.extract_slice with dynamic offsets, sizes or strides is not supported}}
  %y = tensor.extract_slice %x[%o, 0] [4, 5] [1, 1] : tensor<8x5xf32> to tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32> {dist.param}, %i: tensor<index>) -> tensor<4x3xf32> {
  %c = arith.constant 0.0 : f32
  %l = tensor.extract %i[] : tensor<index>
  // expected-error @below {{VJP of tensor.pad with dynamic low/high is not supported}}
  %y = tensor.pad %x low[%l, 0] high[0, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %c : f32
  } : tensor<2x3xf32> to tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32> {dist.param}) -> tensor<4x3xf32> {
  // expected-error @below {{VJP of tensor.pad with a non-constant pad value is not supported}}
  %y = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%a: index, %b: index):
    %i = arith.index_cast %a : index to i32
    %f = arith.sitofp %i : i32 to f32
    tensor.yield %f : f32
  } : tensor<2x3xf32> to tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @main(%t: tensor<10x4xf32> {dist.param}, %ids: tensor<3x2xindex>) -> tensor<3xf32> {
  // expected-error @below {{VJP of tensor.gather supports gathers along one dim only (an embedding lookup, ONNX Gather)}}
  %y = tensor.gather %t[%ids] gather_dims([0, 1]) : (tensor<10x4xf32>, tensor<3x2xindex>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
