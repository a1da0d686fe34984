
#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @priority
  // CHECK-SAME: dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>
  func.func @priority(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    // CHECK: %[[R:.*]] = dist.reshard %arg0 : tensor<8x16xf32> from #dist.layout<#mesh, {{\[\[}}], [mp]]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
    // CHECK: dist.annotate %[[R]] {{.*}}{{\[\[}}dp], []]>
    // CHECK: dist.annotate %arg0 {{.*}}{{\[\[}}], [mp]]> priority 2
    // expected-remark @below {{reshard [[], [mp]] -> [[dp], []] for operand #0 of 'dist.annotate': the consumer's user constraint requires it; all_slice}}
    %lo = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]> priority 1
    %hi = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]]> priority 2
    return %lo, %hi : tensor<8x16xf32>, tensor<8x16xf32>
  }
}


#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
  // CHECK-LABEL: func.func @norule
  func.func @norule(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %x = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
    // CHECK: dist.reshard {{.*}} to #dist.layout<#mesh, {{\[\[}}], []]>
    // CHECK: tensor.cast {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[\[}}], []]], out = {{\[\[\[}}], []]]>
    // expected-remark @+2 {{no sharding rule, running replicated}}
    // expected-remark @+1 {{reshard [[dp], []] -> [[], []] for operand #0 of 'tensor.cast'}}
    %y = tensor.cast %x : tensor<8x16xf32> to tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
