// What propagation predicts is what partitioning emits: the collective
// counts and per-device bytes of --dist-propagate's report equal those
// counted on the ops --dist-partition emits, on the Megatron MLP, the GPT
// (both forms) and a value whose one reshard is shared by three consumers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 \
// RUN:   | autoshard-opt --pass-pipeline='builtin.module(dist-propagate{report=%t/mlp.p.json},dist-partition{report=%t/mlp.q.json})' -o /dev/null
// RUN: %python %S/Inputs/compare_reports.py %t/mlp.p.json %t/mlp.q.json all_reduce=2 | FileCheck %s --check-prefix=MLP
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 \
// RUN:   | autoshard-opt --pass-pipeline='builtin.module(dist-propagate{report=%t/gpt.p.json},dist-partition{report=%t/gpt.q.json})' -o /dev/null
// RUN: %python %S/Inputs/compare_reports.py %t/gpt.p.json %t/gpt.q.json all_reduce=5 | FileCheck %s --check-prefix=GPT
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --form einsum \
// RUN:   | autoshard-opt --pass-pipeline='builtin.module(dist-propagate{report=%t/gpte.p.json},dist-partition{report=%t/gpte.q.json})' -o /dev/null
// RUN: %python %S/Inputs/compare_reports.py %t/gpte.p.json %t/gpte.q.json all_reduce=4 | FileCheck %s --check-prefix=GPTE
// RUN: autoshard-opt %s --pass-pipeline='builtin.module(dist-propagate{report=%t/shared.p.json},dist-partition{report=%t/shared.q.json})' -o /dev/null
// RUN: %python %S/Inputs/compare_reports.py %t/shared.p.json %t/shared.q.json all_gather=1 | FileCheck %s --check-prefix=SHARED

// MLP: agree: {'all_reduce': 2}, 768 bytes per device
// GPT: agree: {'all_reduce': 5}, 15360 bytes per device
// GPTE: agree: {'all_reduce': 4}, 12288 bytes per device
// SHARED: agree: {'all_gather': 1}, 1536 bytes per device

#mesh = #dist.mesh<[mp = 4]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<8x64xf32>, %w0: tensor<64x4xf32>, %w1: tensor<64x4xf32>, %w2: tensor<64x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %xs = dist.annotate %x : tensor<8x64xf32> as #dist.layout<#mesh, [[mp], []]> priority 1
    %w0s = dist.annotate %w0 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w1s = dist.annotate %w1 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %w2s = dist.annotate %w2 : tensor<64x4xf32> as #dist.layout<#mesh, [[], [mp]]>
    %e0 = tensor.empty() : tensor<8x4xf32>
    %y0 = linalg.matmul ins(%xs, %w0s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e1 = tensor.empty() : tensor<8x4xf32>
    %y1 = linalg.matmul ins(%xs, %w1s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %y2 = linalg.matmul ins(%xs, %w2s : tensor<8x64xf32>, tensor<64x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y0, %y1, %y2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}
