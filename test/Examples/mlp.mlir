// The Megatron MLP generator: dist annotations on the input and the weights
// only, one matmul -> gelu -> matmul chain per layer.
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 \
// RUN:   | autoshard-opt | FileCheck %s
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 3 --batch 8 --hidden 16 --ffn 64 --annotate none \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=NONE
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 1 --batch 8 --hidden 16 --ffn 64 --mesh x=2,y=2,z=2 --dp-axis z --mp-axis x \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=MESH

// CHECK: #mesh = #dist.mesh<[dp = 2, mp = 4]>
// CHECK: module attributes {dist.mesh = #mesh}
// CHECK: func.func @main(%[[X:[a-z0-9_]+]]: tensor<8x16xf32>, %[[W10:[a-z0-9_]+]]: tensor<16x64xf32>, %[[W20:[a-z0-9_]+]]: tensor<64x16xf32>, %[[W11:[a-z0-9_]+]]: tensor<16x64xf32>, %[[W21:[a-z0-9_]+]]: tensor<64x16xf32>) -> tensor<8x16xf32>
// CHECK-DAG: %[[AX:.*]] = dist.annotate %[[X]] : tensor<8x16xf32> as #dist.layout<#mesh, {{\[\[}}dp], []]>
// CHECK-DAG: %[[A10:.*]] = dist.annotate %[[W10]] : tensor<16x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: %[[A20:.*]] = dist.annotate %[[W20]] : tensor<64x16xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK-DAG: %[[A11:.*]] = dist.annotate %[[W11]] : tensor<16x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: %[[A21:.*]] = dist.annotate %[[W21]] : tensor<64x16xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK-NOT: dist.annotate
// CHECK: %[[H0:.*]] = linalg.matmul ins(%[[AX]], %[[A10]] : tensor<8x16xf32>, tensor<16x64xf32>)
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[H0]] : tensor<8x64xf32>)
// CHECK: math.tanh
// CHECK: %[[Y0:.*]] = linalg.matmul ins(%[[G0]], %[[A20]] : tensor<8x64xf32>, tensor<64x16xf32>)
// CHECK: %[[H1:.*]] = linalg.matmul ins(%[[Y0]], %[[A11]]
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} ins(%[[H1]]
// CHECK: math.tanh
// CHECK: %[[Y1:.*]] = linalg.matmul ins(%[[G1]], %[[A21]]
// CHECK-NOT: linalg.matmul
// CHECK: return %[[Y1]] : tensor<8x16xf32>

// NONE-NOT: dist.
// NONE: func.func @main(%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x64xf32>, %{{.*}}: tensor<64x16xf32>, %{{.*}}: tensor<16x64xf32>, %{{.*}}: tensor<64x16xf32>, %{{.*}}: tensor<16x64xf32>, %{{.*}}: tensor<64x16xf32>) -> tensor<8x16xf32>
// NONE-COUNT-6: linalg.matmul
// NONE-NOT: linalg.matmul
// NONE-NOT: dist.

// MESH: #mesh = #dist.mesh<[x = 2, y = 2, z = 2]>
// MESH: as #dist.layout<#mesh, {{\[\[}}z], []]>
// MESH: as #dist.layout<#mesh, {{\[\[}}], [x]]>
// MESH: as #dist.layout<#mesh, {{\[\[}}x], []]>
