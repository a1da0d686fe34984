// A fixed batch for training examples/gpt-train.mlir (the main job):
// token ids of 4 sequences of 8 and their next-token labels,
//   ids[b, s] = (7 b + 3 s + 1) mod 64,  labels[b, s] = ids[b, s + 1],
// computed here so that the main job needs no data files or numpy.
// autoshard-run --entry batch writes them as output_0.npy and output_1.npy.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @batch() -> (tensor<4x8xi64>, tensor<4x8xi64>) {
  %e = tensor.empty() : tensor<4x8xi64>
  %ids, %labels = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      outs(%e, %e : tensor<4x8xi64>, tensor<4x8xi64>) {
  ^bb0(%o0: i64, %o1: i64):
    %bi = linalg.index 0 : index
    %si = linalg.index 1 : index
    %b = arith.index_cast %bi : index to i64
    %s = arith.index_cast %si : index to i64
    %c1 = arith.constant 1 : i64
    %c3 = arith.constant 3 : i64
    %c7 = arith.constant 7 : i64
    %c64 = arith.constant 64 : i64
    %b7 = arith.muli %b, %c7 : i64
    %s3 = arith.muli %s, %c3 : i64
    %t0 = arith.addi %b7, %s3 : i64
    %t1 = arith.addi %t0, %c1 : i64
    %id = arith.remsi %t1, %c64 : i64
    %t2 = arith.addi %t1, %c3 : i64
    %next = arith.remsi %t2, %c64 : i64
    linalg.yield %id, %next : i64, i64
  } -> (tensor<4x8xi64>, tensor<4x8xi64>)
  return %ids, %labels : tensor<4x8xi64>, tensor<4x8xi64>
}
