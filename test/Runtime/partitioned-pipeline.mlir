// End to end with the partitioner: the partition tests' global programs go
// through --dist-partition and run on 8 ranks; every output must equal the
// global program run on one rank (annotations and reshards are identities
// there). Covers tensor-parallel MLP (all_reduce), attention, and the
// vocabulary-parallel embedding (masked local lookup + all_reduce or
// reduce_scatter).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-opt %S/../Partition/megatron-mlp.mlir --dist-partition -o %t/mlp.mlir
// RUN: autoshard-run %S/../Partition/megatron-mlp.mlir --output-dir %t/mlp-ref
// RUN: %mpirun -np 8 autoshard-run %t/mlp.mlir --output-dir %t/mlp
// RUN: autoshard-run --compare %t/mlp/output_0.npy %t/mlp-ref/output_0.npy --rtol 1e-4 --atol 1e-5 | FileCheck %s

// RUN: autoshard-opt %S/../Partition/attention.mlir --dist-partition -o %t/attn.mlir
// RUN: autoshard-run %S/../Partition/attention.mlir --output-dir %t/attn-ref
// RUN: %mpirun -np 8 autoshard-run %t/attn.mlir --output-dir %t/attn
// RUN: autoshard-run --compare %t/attn/output_0.npy %t/attn-ref/output_0.npy --rtol 1e-4 --atol 1e-5 | FileCheck %s

// RUN: autoshard-opt %S/../Partition/embedding.mlir --dist-partition -o %t/emb.mlir
// RUN: autoshard-run %S/../Partition/embedding.mlir --entry embed --output-dir %t/emb-ref
// RUN: %mpirun -np 8 autoshard-run %t/emb.mlir --entry embed --output-dir %t/emb
// RUN: autoshard-run --compare %t/emb/output_0.npy %t/emb-ref/output_0.npy | FileCheck %s
// RUN: autoshard-run %S/../Partition/embedding.mlir --entry embed_scatter --output-dir %t/embs-ref
// RUN: %mpirun -np 8 autoshard-run %t/emb.mlir --entry embed_scatter --output-dir %t/embs
// RUN: autoshard-run --compare %t/embs/output_0.npy %t/embs-ref/output_0.npy | FileCheck %s

// CHECK: MATCH

// Every reshard plan of the partition tests (permute for the axis swap,
// reduce_scatter, gathers over two axes, all_to_all with
// enable-alltoall, make_partial, max partials) on 4 ranks: the global
// program is the identity, so the assembled output must equal the input.
// RUN: autoshard-opt %S/../Partition/reshard.mlir --dist-partition -o %t/rs.mlir
// RUN: autoshard-opt %S/../Partition/reshard.mlir --dist-partition="enable-alltoall=true" -o %t/rs-a2a.mlir
// RUN: for e in axis_swap partial_to_split gather_minor two_axes_one_dim slice_two_axes move_axis make_partial max_reduce; do \
// RUN:   autoshard-run %S/../Partition/reshard.mlir --entry $e --output-dir %t/rs-ref-$e > /dev/null && \
// RUN:   %mpirun -np 4 autoshard-run %t/rs.mlir --entry $e --output-dir %t/rs-$e > /dev/null && \
// RUN:   %mpirun -np 4 autoshard-run %t/rs-a2a.mlir --entry $e --output-dir %t/rs-a2a-$e > /dev/null && \
// RUN:   autoshard-run --compare %t/rs-$e/output_0.npy %t/rs-ref-$e/output_0.npy --rtol 0 --atol 0 && \
// RUN:   autoshard-run --compare %t/rs-a2a-$e/output_0.npy %t/rs-ref-$e/output_0.npy --rtol 0 --atol 0 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=RESHARD
// RESHARD-COUNT-16: MATCH f32[8x8]
