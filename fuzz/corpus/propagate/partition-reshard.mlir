#m22 = #dist.mesh<[dp = 2, mp = 2]>
#m24 = #dist.mesh<[dp = 2, mp = 4]>
#m3 = #dist.mesh<[x = 3]>

module attributes {dist.mesh = #m22} {
func.func @axis_swap(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp], [mp]]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], [dp]]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp], [mp]]> to #dist.layout<#m22, [[mp], [dp]]>
  return %0 : tensor<8x8xf32>
}

func.func @partial_to_split(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial sum [mp]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []] partial sum [mp]> to #dist.layout<#m22, [[mp], []]>
  return %0 : tensor<8x8xf32>
}


func.func @gather_minor(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp, mp], []]> to #dist.layout<#m22, [[dp], []]>
  return %0 : tensor<8x8xf32>
}
func.func @two_axes_one_dim(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[dp, mp], []]> to #dist.layout<#m22, [[], []]>
  return %0 : tensor<8x8xf32>
}

func.func @slice_two_axes(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[dp, mp], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []]> to #dist.layout<#m22, [[dp, mp], []]>
  return %0 : tensor<8x8xf32>
}

func.func @move_axis(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[mp], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], [mp]]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[mp], []]> to #dist.layout<#m22, [[], [mp]]>
  return %0 : tensor<8x8xf32>
}

func.func @make_partial(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial sum [dp]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []]> to #dist.layout<#m22, [[], []] partial sum [dp]>
  return %0 : tensor<8x8xf32>
}

func.func @max_reduce(%a: tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []] partial max [mp]>})
    -> (tensor<8x8xf32> {dist.layout = #dist.layout<#m22, [[], []]>}) {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#m22, [[], []] partial max [mp]> to #dist.layout<#m22, [[], []]>
  return %0 : tensor<8x8xf32>
}
}
