// RUN: autoshard-opt %s -split-input-file -verify-diagnostics

// Unknown axis.
func.func @unknown_axis(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{unknown mesh axis 'tp'; the mesh has [dp=2, mp=4]}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[tp], []]>
  return
}

// -----

// Axis used twice, across dims.
func.func @axis_twice(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'dp' is used more than once}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[dp], [dp]]>
  return
}

// -----

// Axis used twice on one dim.
func.func @axis_twice_one_dim(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'mp' is used more than once}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[mp, mp], []]>
  return
}

// -----

// Split count not dividing the dim.
func.func @indivisible(%a: tensor<6x8xf32>) {
  // expected-error @+1 {{'dist.annotate' op the layout: dim 0 of size 6 is not divisible by its split count 4}}
  %0 = dist.annotate %a : tensor<6x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[mp], []]>
  return
}

// -----

// Uneven sizes must sum to the dim.
func.func @uneven_sum(%a: tensor<10x4xf32>) {
  // expected-error @+1 {{'dist.annotate' op the layout: uneven sizes of dim 0 sum to 9 but the dim has size 10}}
  %0 = dist.annotate %a : tensor<10x4xf32> as #dist.layout<#dist.mesh<[x = 3]>, [[x] sizes(2, 4, 3), []]>
  return
}

// -----

// Uneven sizes must give one size per shard.
func.func @uneven_count(%a: tensor<10x4xf32>) {
  // expected-error @+1 {{dim 0 has 2 uneven sizes but is split into 3 shards}}
  %0 = dist.annotate %a : tensor<10x4xf32> as #dist.layout<#dist.mesh<[x = 3]>, [[x] sizes(5, 5), []]>
  return
}

// -----

// Uneven sizes make a non-divisible dim legal.
func.func @uneven_ok(%a: tensor<10x4xf32>) {
  %0 = dist.annotate %a : tensor<10x4xf32> as #dist.layout<#dist.mesh<[x = 3]>, [[x] sizes(3, 3, 4), []]>
  return
}

// -----

// Rank mismatch.
func.func @rank(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.annotate' op the layout: layout has rank 3 but the tensor has rank 2}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[dp], [], []]>
  return
}

// -----

// A partial axis may not also split.
func.func @partial_and_split(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'dp' is both a partial axis and a split axis}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 4]>, [[dp], []] partial sum [dp]>
  return
}

// -----

func.func @bad_kind(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{unknown reduction kind 'mean'; expected sum, max, min or product}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2]>, [[dp], []] partial mean [dp]>
  return
}

// -----

// Strategy arity: operands.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @arity(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %e: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'linalg.matmul' op has a dist.strategy with 1 operand layouts but the op has 3 operands (2 inputs)}}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[2, 1]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Strategy arity: results.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @result_arity(%a: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'arith.negf' op has a dist.strategy with 2 result layouts but the op has 1 results}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp], []], [[dp], []]]>} : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Strategy layouts are checked against the operand shapes.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_shape(%a: tensor<6x32xf32>) -> tensor<6x32xf32> {
  // expected-error @+1 {{'arith.negf' op dist.strategy layout for operand #0: dim 0 of size 6 is not divisible by its split count 4}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []]]>} : tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_rank(%a: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'arith.negf' op dist.strategy layout for result #0: layout has rank 1 but the tensor has rank 2}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp]]]>} : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Split tuples that no axis set can form.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @impossible(%a: tensor<12x32xf32>) -> tensor<12x32xf32> {
  // expected-error @+1 {{tensor #0: split tuple (3, 1) cannot be formed from mesh [dp=2, mp=4]: no set of distinct axes has these sizes}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, splits = [[3, 1]]>} : tensor<12x32xf32>
  return %0 : tensor<12x32xf32>
}

// -----

// Split tuples with more than one reading.
#sq = #dist.mesh<[x = 2, y = 2]>
func.func @ambiguous(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{tensor #0: split tuple (2, 1) is ambiguous on mesh [x=2, y=2]: it could be [[x], []] or [[y], []]; name the axes instead}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#sq, splits = [[2, 1]]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_field(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{unknown strategy field 'inputs'; expected in, out, splits or out_splits}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, inputs = [[[dp], []]]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @strategy_twice(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{strategy field 'splits' repeats the operand layouts}}
  %0 = arith.negf %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], splits = [[2, 1]]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @not_a_strategy(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'arith.negf' op expects 'dist.strategy' to be a #dist.strategy attribute}}
  %0 = arith.negf %a {dist.strategy = [[2, 1]]} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @bad_priority(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'arith.negf' op expects 'dist.priority' to be an integer}}
  %0 = arith.negf %a {dist.priority = "high"} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// expected-error @+1 {{'builtin.module' op expects 'dist.mesh' to be a #dist.mesh attribute}}
module attributes {dist.mesh = 4 : i64} {
}

// -----

func.func @unknown_attr(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'arith.negf' op has unknown dist attribute 'dist.stratgy'}}
  %0 = arith.negf %a {dist.stratgy = 1 : i64} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Meshes: duplicate axis names.
func.func @dup_axis(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'dp' is declared twice}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, dp = 4]>, [[], []]>
  return
}

// -----

func.func @zero_axis(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'dp' must have a positive size, got 0}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 0]>, [[], []]>
  return
}

// -----

// Issue 22: a device count past int64 wrapped (SIGFPE in the planner).
func.func @huge_mesh(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh [dp=2, mp=2, a=4294967296, b=4294967296] has more than 1048576 devices on axis 'a' alone; autoshard supports at most that many}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[dp = 2, mp = 2, a = 4294967296, b = 4294967296]>, [[], []]>
  return
}

// -----

func.func @too_many_devices(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh [a=2048, b=1024] has more than 1048576 devices; autoshard supports at most that many}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[a = 2048, b = 1024]>, [[], []]>
  return
}

// -----

func.func @device_count(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh has 4 positions but 3 device ids}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2, y = 2], devices = [0, 1, 2]>, [[], []]>
  return
}

// -----

func.func @device_dup(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh device ids must be distinct}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], devices = [1, 1]>, [[], []]>
  return
}

// -----

func.func @link_count(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh bandwidth must list one value per axis (2), got 1}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2, y = 2], bandwidth = [1.0]>, [[], []]>
  return
}

// -----

func.func @negative_link(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'x' has a negative link figure}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], latency = [-1.0]>, [[], []]>
  return
}

// -----

func.func @mesh_field(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{unknown mesh field 'speed'; expected 'bandwidth', 'latency' or 'devices'}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<#dist.mesh<[x = 2], speed = [1.0]>, [[], []]>
  return
}

// -----

func.func @not_a_mesh(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{expected a #dist.mesh attribute}}
  %0 = dist.annotate %a : tensor<8x8xf32> as #dist.layout<[2, 4], [[], []]>
  return
}

// -----

// Reshard endpoints live on one mesh.
func.func @reshard_meshes(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'dist.reshard' op source and target layouts must be on the same mesh}}
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#dist.mesh<[x = 2]>, [[x], []]> to #dist.layout<#dist.mesh<[y = 2]>, [[y], []]>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @reshard_target(%a: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{'dist.reshard' op target layout: dim 1 of size 6 is not divisible by its split count 4}}
  %0 = dist.reshard %a : tensor<8x6xf32> from #dist.layout<#dist.mesh<[x = 4]>, [[x], []]> to #dist.layout<#dist.mesh<[x = 4]>, [[], [x]]>
  return %0 : tensor<8x6xf32>
}

// -----

// Strategies describe ranked tensors; a scalar takes the replicated `[]`.
#a = #dist.mesh<[x = 2]>
func.func @strategy_scalar(%v: f32, %t: tensor<4xf32>) -> f32 {
  %f = linalg.fill {dist.strategy = #dist.strategy<#a, in = [[], [[x]]]>} ins(%v : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'arith.negf' op has a dist.strategy layout for operand #0, which is not a ranked tensor; only a replicated rank-0 layout `[]` fits it}}
  %0 = arith.negf %v {dist.strategy = #dist.strategy<#a, in = [[] partial sum [x]]>} : f32
  return %0 : f32
}
