// The Megatron MLP (X [B,H] on dp, W1 [H,F] columns on mp, W2 [F,H] rows on
// mp; only the input and the weights annotated) costs exactly one all_reduce
// of the local [B/dp, H] activation per layer: 4x16 f32 = 256 B, all_reduce
// over mp=4 sends 2*3/4*256 = 384 B per device.
// RUN: for L in 1 2 4; do \
// RUN:   %python %autoshard_src/scripts/gen_models.py mlp --layers $L --batch 8 --hidden 16 --ffn 64 --mesh dp=2,mp=4 \
// RUN:   | autoshard-opt --dist-propagate=report=%t.$L.json > %t.$L.mlir || exit 1; done
// RUN: FileCheck %s --check-prefix=IR1 < %t.1.mlir
// RUN: FileCheck %s --check-prefix=IR4 < %t.4.mlir
// RUN: FileCheck %s --check-prefix=R1 < %t.1.json
// RUN: FileCheck %s --check-prefix=R2 < %t.2.json
// RUN: FileCheck %s --check-prefix=R4 < %t.4.json

// IR1: func.func @main(%{{.*}}: tensor<8x16xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp], []]>}, %{{.*}}: tensor<16x64xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>}, %{{.*}}: tensor<64x16xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}mp], []]>}) -> (tensor<8x16xf32> {dist.layout = #dist.layout<#mesh, {{\[\[}}dp], []]>})
// IR1: linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], []], {{\[\[}}], [mp]], {{\[\[}}dp], [mp]]], out = {{\[\[}}[dp], [mp]]]>}
// IR1: linalg.generic {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp]], {{\[\[}}dp], [mp]]], out = {{\[\[}}[dp], [mp]]]>
// IR1: %[[P:.*]] = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp]], {{\[\[}}mp], []], {{\[\[}}dp], []] partial sum [mp]], out = {{\[\[}}[dp], []] partial sum [mp]]>}
// IR1-NEXT: %[[R:.*]] = dist.reshard %[[P]] : tensor<8x16xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR1-NEXT: return {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], []]]>} %[[R]]

// IR4-COUNT-4: dist.reshard {{.*}} from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR4-NOT: dist.reshard

// R1: "collectives": {
// R1-NEXT: "all_reduce": 1
// R1-NEXT: },
// R1-NEXT: "comm_bytes_per_device": 384,
// R1: "reshards": 1,
// R1: "solver": "dp",

// R2: "collectives": {
// R2-NEXT: "all_reduce": 2
// R2-NEXT: },
// R2-NEXT: "comm_bytes_per_device": 768,
// R2: "reshards": 2,

// R4: "collectives": {
// R4-NEXT: "all_reduce": 4
// R4-NEXT: },
// R4-NEXT: "comm_bytes_per_device": 1536,
// R4: "optimal": true,
// R4: "reshards": 4,
