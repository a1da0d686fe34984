// Differential audit of the scalar ops compiled loop nests accept: every
// arith/math op of the loop-nest interpreter on edge inputs (shift counts
// >= the width and negative, fptosi/fptoui of NaN, +-inf and out of range,
// i1 as a signed value, uitofp of the top bit, int64 -> f32 rounding,
// maximumf/minimumf/maxnumf/minnumf with NaN and +-0, cmpf with NaN, the
// math functions at their edges; f32, f64, bf16, f16, i1, i32, i64, index)
// compiled (one kernel per group of ops on the same inputs) and interpreted
// must agree bit for bit; NaNs count as equal (their sign and payload are
// unspecified, and no op the interpreter runs can observe them).
// Where MLIR defines the value both paths give it (-0 < +0 in maximumf,
// extsi/sitofp/cmpi slt of i1 true as -1, fptoui of [2^63, 2^64), sitofp
// of int64 rounded once); where it is poison (shifts by >= the width,
// fptosi/fptoui out of range) compiled kernels compute the interpreter's
// value (lib/Lower/InterpreterSemantics.cpp rewriteToInterpreterSemantics,
// runtime/lib/ScalarEval.h). Integer division is in kernel-division.mlir.
// Made by Inputs/kernel_edge_values.py from lists of edge values: binary
// ops run over every pair (a 2-D nest over x and y), unary ops over the
// list; its --subset output is KernelTests' ScalarEdgeValuesExact program
// (run on the GPU by scripts/gpu-check.sh). Both copies must be its output.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: autoshard-run %s --kernels=compiled --kernel-fusion=false --print-plan --output-dir %t/c | FileCheck %s
// RUN: autoshard-run %s --kernels=interpreted --output-dir %t/i > /dev/null
// RUN: %numpy_python -c "import numpy as n, glob, sys; fs = sorted(glob.glob(sys.argv[1] + '/c/*.npy')); eq = lambda a, b: a.shape == b.shape and a.dtype == b.dtype and bool(((a.view(n.uint8).reshape(a.size, -1) == b.view(n.uint8).reshape(b.size, -1)).all(1) | ((n.isnan(a) & n.isnan(b)).reshape(-1) if a.dtype.kind == 'f' else False)).all()); bad = [f.split('/')[-1] for f in fs if not eq(n.load(f), n.load(f.replace('/c/', '/i/')))]; print(len(fs), 'outputs,', len(bad), 'differ', bad)" %t | FileCheck %s --check-prefix=CMP
// RUN: grep -v '^//' %s > %t/program.mlir
// RUN: %numpy_python %S/Inputs/kernel_edge_values.py | diff - %t/program.mlir
// RUN: %numpy_python -c "import sys; s = open(sys.argv[1]).read(); i = s.index('R\"(', s.index('ScalarEdgeValuesExact')) + 4; sys.stdout.write(s[i:s.index(')\";', i)])" %S/../../unittests/Kernels/KernelCompilerTest.cpp > %t/subset.mlir
// RUN: %numpy_python %S/Inputs/kernel_edge_values.py --subset | diff - %t/subset.mlir
// CHECK-NOT: interpreted
// CHECK-COUNT-14: = generic {{.*}} compiled @autoshard_kernel_
// CHECK-NOT: interpreted
// CHECK: output 318 'result318'
// CMP: 319 outputs, 0 differ []
#x = affine_map<(i) -> (i)>
#i = affine_map<(i, j) -> (i)>
#j = affine_map<(i, j) -> (j)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @main() -> (tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<18xi32>, tensor<18xi64>, tensor<18xi64>, tensor<18xi1>, tensor<18xi64>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<18xbf16>, tensor<18xbf16>, tensor<18xf16>, tensor<18xf16>, tensor<19xi64>, tensor<19xi32>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<19xbf16>, tensor<19xbf16>, tensor<19xf16>, tensor<19xf16>, tensor<2xi32>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf64>, tensor<41xbf16>, tensor<41xf16>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xbf16>, tensor<41xf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>) {
  %c0 = arith.constant dense<[0, 1, -1, 2, 7, 31, 32, 33, 63, 64, 65, -31, -32, -33, 1000, 2147483647, -2147483648, 1431655765]> : tensor<18xi32>
  %c1 = arith.constant dense<[0, 1, -1, 31, 32, 63, 64, 65, -64, 9223372036854775807, -9223372036854775808, 4294967296, -4294967297, 9007199254740993, 4611686293305294849, -4611686293305294849, 9223371487098961919, -549755813889, 9223371487098961919]> : tensor<19xi64>
  %c2 = arith.constant dense<[0, 1]> : tensor<2xi1>
  %c3 = arith.constant dense<[0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3FC00000, 0x40200000, 0xC0200000, 0x3EFFFFFF, 0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 0x4F000000, 0xCF000000, 0x4F000000, 0x4F800000, 0x4F6E6B28, 0xCF6E6B28, 0x501502F9, 0xD01502F9, 0x5F000000, 0xDF000000, 0x5EFFA0FC, 0xDEFFA0FC, 0x5F800000, 0x5F79CCD9, 0x7149F2CA, 0xF149F2CA, 0x000116C2, 0x800116C2, 0x7F7FC99E, 0x7F800000, 0x00000000, 0x59800000, 0x42B16666, 0xC2CE0000, 0x44318000, 0x3F490FDB, 0x322BCC77]> : tensor<41xf32>
  %c4 = arith.constant dense<[0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000, 0xBFE0000000000000, 0x3FF8000000000000, 0x4004000000000000, 0xC004000000000000, 0x3FDFFFFFDFC9A9AD, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x41DFFFFFF0000000, 0x41F0000000000000, 0x41EDCD6500000000, 0xC1EDCD6500000000, 0x4202A05F20000000, 0xC202A05F20000000, 0x43E0000000000000, 0xC3E0000000000000, 0x43DFF41F8D035640, 0xC3DFF41F8D035640, 0x43F0000000000000, 0x43EF399B1438A100, 0x46293E5939A08CEA, 0xC6293E5939A08CEA, 0x37A16C262777579C, 0xB7A16C262777579C, 0x47EFF933C78CDFAD, 0x7E37E43C8800759C, 0x0000000000000001, 0x4330000000000001, 0x40562CCCCCCCCCCD, 0xC059C00000000000, 0x4086300000000000, 0x3FE921FB54442D18, 0x3E45798EE2308C3A]> : tensor<41xf64>
  %c5 = arith.constant dense<[0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0xBF00, 0x3FC0, 0x4020, 0xC020, 0x3F00, 0x7FC0, 0xFFC0, 0x7F80, 0xFF80, 0x4F00, 0xCF00, 0x4F00, 0x4F80, 0x4F6E, 0xCF6E, 0x5015, 0xD015, 0x5F00, 0xDF00, 0x5F00, 0xDF00, 0x5F80, 0x5F7A, 0x714A, 0xF14A, 0x0001, 0x8001, 0x7F80, 0x7F80, 0x0000, 0x5980, 0x42B1, 0xC2CE, 0x4432, 0x3F49, 0x322C]> : tensor<41xbf16>
  %c6 = arith.constant dense<[0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00, 0x4100, 0xC100, 0x3800, 0x7E00, 0xFE00, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7C00, 0x7C00, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7C00, 0x7C00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x7C00, 0x7C00, 0x0000, 0x7C00, 0x558B, 0xD670, 0x618C, 0x3A48, 0x0000]> : tensor<41xf16>
  // 0: addi i32
  // 1: subi i32
  // 2: muli i32
  // 3: maxsi i32
  // 4: minsi i32
  // 5: maxui i32
  // 6: minui i32
  // 7: andi i32
  // 8: ori i32
  // 9: xori i32
  // 10: shli i32
  // 11: shrsi i32
  // 12: shrui i32
  // 13: cmpi eq i32
  // 14: cmpi ne i32
  // 15: cmpi slt i32
  // 16: cmpi sle i32
  // 17: cmpi sgt i32
  // 18: cmpi sge i32
  // 19: cmpi ult i32
  // 20: cmpi ule i32
  // 21: cmpi ugt i32
  // 22: cmpi uge i32
  %e0_0 = tensor.empty() : tensor<18x18xi32>
  %e0_1 = tensor.empty() : tensor<18x18xi32>
  %e0_2 = tensor.empty() : tensor<18x18xi32>
  %e0_3 = tensor.empty() : tensor<18x18xi32>
  %e0_4 = tensor.empty() : tensor<18x18xi32>
  %e0_5 = tensor.empty() : tensor<18x18xi32>
  %e0_6 = tensor.empty() : tensor<18x18xi32>
  %e0_7 = tensor.empty() : tensor<18x18xi32>
  %e0_8 = tensor.empty() : tensor<18x18xi32>
  %e0_9 = tensor.empty() : tensor<18x18xi32>
  %e0_10 = tensor.empty() : tensor<18x18xi32>
  %e0_11 = tensor.empty() : tensor<18x18xi32>
  %e0_12 = tensor.empty() : tensor<18x18xi32>
  %e0_13 = tensor.empty() : tensor<18x18xi1>
  %e0_14 = tensor.empty() : tensor<18x18xi1>
  %e0_15 = tensor.empty() : tensor<18x18xi1>
  %e0_16 = tensor.empty() : tensor<18x18xi1>
  %e0_17 = tensor.empty() : tensor<18x18xi1>
  %e0_18 = tensor.empty() : tensor<18x18xi1>
  %e0_19 = tensor.empty() : tensor<18x18xi1>
  %e0_20 = tensor.empty() : tensor<18x18xi1>
  %e0_21 = tensor.empty() : tensor<18x18xi1>
  %e0_22 = tensor.empty() : tensor<18x18xi1>
  %r0:23 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c0, %c0 : tensor<18xi32>, tensor<18xi32>)
      outs(%e0_0, %e0_1, %e0_2, %e0_3, %e0_4, %e0_5, %e0_6, %e0_7, %e0_8, %e0_9, %e0_10, %e0_11, %e0_12, %e0_13, %e0_14, %e0_15, %e0_16, %e0_17, %e0_18, %e0_19, %e0_20, %e0_21, %e0_22 : tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>) {
  ^bb0(%x: i32, %y: i32, %o0: i32, %o1: i32, %o2: i32, %o3: i32, %o4: i32, %o5: i32, %o6: i32, %o7: i32, %o8: i32, %o9: i32, %o10: i32, %o11: i32, %o12: i32, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1):
    %v0 = arith.addi %x, %y : i32
    %v1 = arith.subi %x, %y : i32
    %v2 = arith.muli %x, %y : i32
    %v3 = arith.maxsi %x, %y : i32
    %v4 = arith.minsi %x, %y : i32
    %v5 = arith.maxui %x, %y : i32
    %v6 = arith.minui %x, %y : i32
    %v7 = arith.andi %x, %y : i32
    %v8 = arith.ori %x, %y : i32
    %v9 = arith.xori %x, %y : i32
    %v10 = arith.shli %x, %y : i32
    %v11 = arith.shrsi %x, %y : i32
    %v12 = arith.shrui %x, %y : i32
    %v13 = arith.cmpi eq, %x, %y : i32
    %v14 = arith.cmpi ne, %x, %y : i32
    %v15 = arith.cmpi slt, %x, %y : i32
    %v16 = arith.cmpi sle, %x, %y : i32
    %v17 = arith.cmpi sgt, %x, %y : i32
    %v18 = arith.cmpi sge, %x, %y : i32
    %v19 = arith.cmpi ult, %x, %y : i32
    %v20 = arith.cmpi ule, %x, %y : i32
    %v21 = arith.cmpi ugt, %x, %y : i32
    %v22 = arith.cmpi uge, %x, %y : i32
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
  } -> (tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>)
  // 23: addi i64
  // 24: subi i64
  // 25: muli i64
  // 26: maxsi i64
  // 27: minsi i64
  // 28: maxui i64
  // 29: minui i64
  // 30: andi i64
  // 31: ori i64
  // 32: xori i64
  // 33: shli i64
  // 34: shrsi i64
  // 35: shrui i64
  // 36: cmpi eq i64
  // 37: cmpi ne i64
  // 38: cmpi slt i64
  // 39: cmpi sle i64
  // 40: cmpi sgt i64
  // 41: cmpi sge i64
  // 42: cmpi ult i64
  // 43: cmpi ule i64
  // 44: cmpi ugt i64
  // 45: cmpi uge i64
  %e1_0 = tensor.empty() : tensor<19x19xi64>
  %e1_1 = tensor.empty() : tensor<19x19xi64>
  %e1_2 = tensor.empty() : tensor<19x19xi64>
  %e1_3 = tensor.empty() : tensor<19x19xi64>
  %e1_4 = tensor.empty() : tensor<19x19xi64>
  %e1_5 = tensor.empty() : tensor<19x19xi64>
  %e1_6 = tensor.empty() : tensor<19x19xi64>
  %e1_7 = tensor.empty() : tensor<19x19xi64>
  %e1_8 = tensor.empty() : tensor<19x19xi64>
  %e1_9 = tensor.empty() : tensor<19x19xi64>
  %e1_10 = tensor.empty() : tensor<19x19xi64>
  %e1_11 = tensor.empty() : tensor<19x19xi64>
  %e1_12 = tensor.empty() : tensor<19x19xi64>
  %e1_13 = tensor.empty() : tensor<19x19xi1>
  %e1_14 = tensor.empty() : tensor<19x19xi1>
  %e1_15 = tensor.empty() : tensor<19x19xi1>
  %e1_16 = tensor.empty() : tensor<19x19xi1>
  %e1_17 = tensor.empty() : tensor<19x19xi1>
  %e1_18 = tensor.empty() : tensor<19x19xi1>
  %e1_19 = tensor.empty() : tensor<19x19xi1>
  %e1_20 = tensor.empty() : tensor<19x19xi1>
  %e1_21 = tensor.empty() : tensor<19x19xi1>
  %e1_22 = tensor.empty() : tensor<19x19xi1>
  %r1:23 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c1, %c1 : tensor<19xi64>, tensor<19xi64>)
      outs(%e1_0, %e1_1, %e1_2, %e1_3, %e1_4, %e1_5, %e1_6, %e1_7, %e1_8, %e1_9, %e1_10, %e1_11, %e1_12, %e1_13, %e1_14, %e1_15, %e1_16, %e1_17, %e1_18, %e1_19, %e1_20, %e1_21, %e1_22 : tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>) {
  ^bb0(%x: i64, %y: i64, %o0: i64, %o1: i64, %o2: i64, %o3: i64, %o4: i64, %o5: i64, %o6: i64, %o7: i64, %o8: i64, %o9: i64, %o10: i64, %o11: i64, %o12: i64, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1):
    %v0 = arith.addi %x, %y : i64
    %v1 = arith.subi %x, %y : i64
    %v2 = arith.muli %x, %y : i64
    %v3 = arith.maxsi %x, %y : i64
    %v4 = arith.minsi %x, %y : i64
    %v5 = arith.maxui %x, %y : i64
    %v6 = arith.minui %x, %y : i64
    %v7 = arith.andi %x, %y : i64
    %v8 = arith.ori %x, %y : i64
    %v9 = arith.xori %x, %y : i64
    %v10 = arith.shli %x, %y : i64
    %v11 = arith.shrsi %x, %y : i64
    %v12 = arith.shrui %x, %y : i64
    %v13 = arith.cmpi eq, %x, %y : i64
    %v14 = arith.cmpi ne, %x, %y : i64
    %v15 = arith.cmpi slt, %x, %y : i64
    %v16 = arith.cmpi sle, %x, %y : i64
    %v17 = arith.cmpi sgt, %x, %y : i64
    %v18 = arith.cmpi sge, %x, %y : i64
    %v19 = arith.cmpi ult, %x, %y : i64
    %v20 = arith.cmpi ule, %x, %y : i64
    %v21 = arith.cmpi ugt, %x, %y : i64
    %v22 = arith.cmpi uge, %x, %y : i64
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22 : i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
  } -> (tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>)
  // 46: absi i32
  // 47: extsi i32->i64
  // 48: extui i32->i64
  // 49: trunci i32->i1
  // 50: index_cast i32
  // 51: index_castui i32
  // 52: sitofp i32->f32
  // 53: uitofp i32->f32
  // 54: sitofp i32->f64
  // 55: uitofp i32->f64
  // 56: sitofp i32->bf16
  // 57: uitofp i32->bf16
  // 58: sitofp i32->f16
  // 59: uitofp i32->f16
  %e2_0 = tensor.empty() : tensor<18xi32>
  %e2_1 = tensor.empty() : tensor<18xi64>
  %e2_2 = tensor.empty() : tensor<18xi64>
  %e2_3 = tensor.empty() : tensor<18xi1>
  %e2_4 = tensor.empty() : tensor<18xi64>
  %e2_5 = tensor.empty() : tensor<18xi64>
  %e2_6 = tensor.empty() : tensor<18xf32>
  %e2_7 = tensor.empty() : tensor<18xf32>
  %e2_8 = tensor.empty() : tensor<18xf64>
  %e2_9 = tensor.empty() : tensor<18xf64>
  %e2_10 = tensor.empty() : tensor<18xbf16>
  %e2_11 = tensor.empty() : tensor<18xbf16>
  %e2_12 = tensor.empty() : tensor<18xf16>
  %e2_13 = tensor.empty() : tensor<18xf16>
  %r2:14 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c0 : tensor<18xi32>)
      outs(%e2_0, %e2_1, %e2_2, %e2_3, %e2_4, %e2_5, %e2_6, %e2_7, %e2_8, %e2_9, %e2_10, %e2_11, %e2_12, %e2_13 : tensor<18xi32>, tensor<18xi64>, tensor<18xi64>, tensor<18xi1>, tensor<18xi64>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<18xbf16>, tensor<18xbf16>, tensor<18xf16>, tensor<18xf16>) {
  ^bb0(%x: i32, %o0: i32, %o1: i64, %o2: i64, %o3: i1, %o4: i64, %o5: i64, %o6: f32, %o7: f32, %o8: f64, %o9: f64, %o10: bf16, %o11: bf16, %o12: f16, %o13: f16):
    %v0 = math.absi %x : i32
    %v1 = arith.extsi %x : i32 to i64
    %v2 = arith.extui %x : i32 to i64
    %v3 = arith.trunci %x : i32 to i1
    %i4 = arith.index_cast %x : i32 to index
    %v4 = arith.index_cast %i4 : index to i64
    %i5 = arith.index_castui %x : i32 to index
    %v5 = arith.index_cast %i5 : index to i64
    %v6 = arith.sitofp %x : i32 to f32
    %v7 = arith.uitofp %x : i32 to f32
    %v8 = arith.sitofp %x : i32 to f64
    %v9 = arith.uitofp %x : i32 to f64
    %v10 = arith.sitofp %x : i32 to bf16
    %v11 = arith.uitofp %x : i32 to bf16
    %v12 = arith.sitofp %x : i32 to f16
    %v13 = arith.uitofp %x : i32 to f16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13 : i32, i64, i64, i1, i64, i64, f32, f32, f64, f64, bf16, bf16, f16, f16
  } -> (tensor<18xi32>, tensor<18xi64>, tensor<18xi64>, tensor<18xi1>, tensor<18xi64>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<18xbf16>, tensor<18xbf16>, tensor<18xf16>, tensor<18xf16>)
  // 60: absi i64
  // 61: trunci i64->i32
  // 62: sitofp i64->f32
  // 63: uitofp i64->f32
  // 64: sitofp i64->f64
  // 65: uitofp i64->f64
  // 66: sitofp i64->bf16
  // 67: uitofp i64->bf16
  // 68: sitofp i64->f16
  // 69: uitofp i64->f16
  %e3_0 = tensor.empty() : tensor<19xi64>
  %e3_1 = tensor.empty() : tensor<19xi32>
  %e3_2 = tensor.empty() : tensor<19xf32>
  %e3_3 = tensor.empty() : tensor<19xf32>
  %e3_4 = tensor.empty() : tensor<19xf64>
  %e3_5 = tensor.empty() : tensor<19xf64>
  %e3_6 = tensor.empty() : tensor<19xbf16>
  %e3_7 = tensor.empty() : tensor<19xbf16>
  %e3_8 = tensor.empty() : tensor<19xf16>
  %e3_9 = tensor.empty() : tensor<19xf16>
  %r3:10 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c1 : tensor<19xi64>)
      outs(%e3_0, %e3_1, %e3_2, %e3_3, %e3_4, %e3_5, %e3_6, %e3_7, %e3_8, %e3_9 : tensor<19xi64>, tensor<19xi32>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<19xbf16>, tensor<19xbf16>, tensor<19xf16>, tensor<19xf16>) {
  ^bb0(%x: i64, %o0: i64, %o1: i32, %o2: f32, %o3: f32, %o4: f64, %o5: f64, %o6: bf16, %o7: bf16, %o8: f16, %o9: f16):
    %v0 = math.absi %x : i64
    %v1 = arith.trunci %x : i64 to i32
    %v2 = arith.sitofp %x : i64 to f32
    %v3 = arith.uitofp %x : i64 to f32
    %v4 = arith.sitofp %x : i64 to f64
    %v5 = arith.uitofp %x : i64 to f64
    %v6 = arith.sitofp %x : i64 to bf16
    %v7 = arith.uitofp %x : i64 to bf16
    %v8 = arith.sitofp %x : i64 to f16
    %v9 = arith.uitofp %x : i64 to f16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9 : i64, i32, f32, f32, f64, f64, bf16, bf16, f16, f16
  } -> (tensor<19xi64>, tensor<19xi32>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<19xbf16>, tensor<19xbf16>, tensor<19xf16>, tensor<19xf16>)
  // 70: extsi i1->i32
  // 71: extui i1->i32
  // 72: sitofp i1->f32
  // 73: uitofp i1->f32
  %e4_0 = tensor.empty() : tensor<2xi32>
  %e4_1 = tensor.empty() : tensor<2xi32>
  %e4_2 = tensor.empty() : tensor<2xf32>
  %e4_3 = tensor.empty() : tensor<2xf32>
  %r4:4 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c2 : tensor<2xi1>)
      outs(%e4_0, %e4_1, %e4_2, %e4_3 : tensor<2xi32>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%x: i1, %o0: i32, %o1: i32, %o2: f32, %o3: f32):
    %v0 = arith.extsi %x : i1 to i32
    %v1 = arith.extui %x : i1 to i32
    %v2 = arith.sitofp %x : i1 to f32
    %v3 = arith.uitofp %x : i1 to f32
    linalg.yield %v0, %v1, %v2, %v3 : i32, i32, f32, f32
  } -> (tensor<2xi32>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>)
  // 74: addi i1
  // 75: subi i1
  // 76: muli i1
  // 77: maxsi i1
  // 78: minsi i1
  // 79: maxui i1
  // 80: minui i1
  // 81: andi i1
  // 82: ori i1
  // 83: xori i1
  // 84: shli i1
  // 85: shrsi i1
  // 86: shrui i1
  // 87: cmpi slt i1
  // 88: cmpi sle i1
  // 89: cmpi sgt i1
  // 90: cmpi sge i1
  // 91: cmpi ult i1
  // 92: cmpi ugt i1
  %e5_0 = tensor.empty() : tensor<2x2xi1>
  %e5_1 = tensor.empty() : tensor<2x2xi1>
  %e5_2 = tensor.empty() : tensor<2x2xi1>
  %e5_3 = tensor.empty() : tensor<2x2xi1>
  %e5_4 = tensor.empty() : tensor<2x2xi1>
  %e5_5 = tensor.empty() : tensor<2x2xi1>
  %e5_6 = tensor.empty() : tensor<2x2xi1>
  %e5_7 = tensor.empty() : tensor<2x2xi1>
  %e5_8 = tensor.empty() : tensor<2x2xi1>
  %e5_9 = tensor.empty() : tensor<2x2xi1>
  %e5_10 = tensor.empty() : tensor<2x2xi1>
  %e5_11 = tensor.empty() : tensor<2x2xi1>
  %e5_12 = tensor.empty() : tensor<2x2xi1>
  %e5_13 = tensor.empty() : tensor<2x2xi1>
  %e5_14 = tensor.empty() : tensor<2x2xi1>
  %e5_15 = tensor.empty() : tensor<2x2xi1>
  %e5_16 = tensor.empty() : tensor<2x2xi1>
  %e5_17 = tensor.empty() : tensor<2x2xi1>
  %e5_18 = tensor.empty() : tensor<2x2xi1>
  %r5:19 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %c2 : tensor<2xi1>, tensor<2xi1>)
      outs(%e5_0, %e5_1, %e5_2, %e5_3, %e5_4, %e5_5, %e5_6, %e5_7, %e5_8, %e5_9, %e5_10, %e5_11, %e5_12, %e5_13, %e5_14, %e5_15, %e5_16, %e5_17, %e5_18 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>) {
  ^bb0(%x: i1, %y: i1, %o0: i1, %o1: i1, %o2: i1, %o3: i1, %o4: i1, %o5: i1, %o6: i1, %o7: i1, %o8: i1, %o9: i1, %o10: i1, %o11: i1, %o12: i1, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1):
    %v0 = arith.addi %x, %y : i1
    %v1 = arith.subi %x, %y : i1
    %v2 = arith.muli %x, %y : i1
    %v3 = arith.maxsi %x, %y : i1
    %v4 = arith.minsi %x, %y : i1
    %v5 = arith.maxui %x, %y : i1
    %v6 = arith.minui %x, %y : i1
    %v7 = arith.andi %x, %y : i1
    %v8 = arith.ori %x, %y : i1
    %v9 = arith.xori %x, %y : i1
    %v10 = arith.shli %x, %y : i1
    %v11 = arith.shrsi %x, %y : i1
    %v12 = arith.shrui %x, %y : i1
    %v13 = arith.cmpi slt, %x, %y : i1
    %v14 = arith.cmpi sle, %x, %y : i1
    %v15 = arith.cmpi sgt, %x, %y : i1
    %v16 = arith.cmpi sge, %x, %y : i1
    %v17 = arith.cmpi ult, %x, %y : i1
    %v18 = arith.cmpi ugt, %x, %y : i1
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
  } -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>)
  // 93: addf f32
  // 94: subf f32
  // 95: mulf f32
  // 96: divf f32
  // 97: remf f32
  // 98: maximumf f32
  // 99: minimumf f32
  // 100: maxnumf f32
  // 101: minnumf f32
  // 102: atan2 f32
  // 103: powf f32
  // 104: fma f32
  // 105: cmpf false f32
  // 106: cmpf oeq f32
  // 107: cmpf ogt f32
  // 108: cmpf oge f32
  // 109: cmpf olt f32
  // 110: cmpf ole f32
  // 111: cmpf one f32
  // 112: cmpf ord f32
  // 113: cmpf ueq f32
  // 114: cmpf ugt f32
  // 115: cmpf uge f32
  // 116: cmpf ult f32
  // 117: cmpf ule f32
  // 118: cmpf une f32
  // 119: cmpf uno f32
  // 120: cmpf true f32
  // 121: select f32
  %e6_0 = tensor.empty() : tensor<41x41xf32>
  %e6_1 = tensor.empty() : tensor<41x41xf32>
  %e6_2 = tensor.empty() : tensor<41x41xf32>
  %e6_3 = tensor.empty() : tensor<41x41xf32>
  %e6_4 = tensor.empty() : tensor<41x41xf32>
  %e6_5 = tensor.empty() : tensor<41x41xf32>
  %e6_6 = tensor.empty() : tensor<41x41xf32>
  %e6_7 = tensor.empty() : tensor<41x41xf32>
  %e6_8 = tensor.empty() : tensor<41x41xf32>
  %e6_9 = tensor.empty() : tensor<41x41xf32>
  %e6_10 = tensor.empty() : tensor<41x41xf32>
  %e6_11 = tensor.empty() : tensor<41x41xf32>
  %e6_12 = tensor.empty() : tensor<41x41xi1>
  %e6_13 = tensor.empty() : tensor<41x41xi1>
  %e6_14 = tensor.empty() : tensor<41x41xi1>
  %e6_15 = tensor.empty() : tensor<41x41xi1>
  %e6_16 = tensor.empty() : tensor<41x41xi1>
  %e6_17 = tensor.empty() : tensor<41x41xi1>
  %e6_18 = tensor.empty() : tensor<41x41xi1>
  %e6_19 = tensor.empty() : tensor<41x41xi1>
  %e6_20 = tensor.empty() : tensor<41x41xi1>
  %e6_21 = tensor.empty() : tensor<41x41xi1>
  %e6_22 = tensor.empty() : tensor<41x41xi1>
  %e6_23 = tensor.empty() : tensor<41x41xi1>
  %e6_24 = tensor.empty() : tensor<41x41xi1>
  %e6_25 = tensor.empty() : tensor<41x41xi1>
  %e6_26 = tensor.empty() : tensor<41x41xi1>
  %e6_27 = tensor.empty() : tensor<41x41xi1>
  %e6_28 = tensor.empty() : tensor<41x41xf32>
  %r6:29 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c3, %c3 : tensor<41xf32>, tensor<41xf32>)
      outs(%e6_0, %e6_1, %e6_2, %e6_3, %e6_4, %e6_5, %e6_6, %e6_7, %e6_8, %e6_9, %e6_10, %e6_11, %e6_12, %e6_13, %e6_14, %e6_15, %e6_16, %e6_17, %e6_18, %e6_19, %e6_20, %e6_21, %e6_22, %e6_23, %e6_24, %e6_25, %e6_26, %e6_27, %e6_28 : tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf32>) {
  ^bb0(%x: f32, %y: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32, %o6: f32, %o7: f32, %o8: f32, %o9: f32, %o10: f32, %o11: f32, %o12: i1, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1, %o23: i1, %o24: i1, %o25: i1, %o26: i1, %o27: i1, %o28: f32):
    %v0 = arith.addf %x, %y : f32
    %v1 = arith.subf %x, %y : f32
    %v2 = arith.mulf %x, %y : f32
    %v3 = arith.divf %x, %y : f32
    %v4 = arith.remf %x, %y : f32
    %v5 = arith.maximumf %x, %y : f32
    %v6 = arith.minimumf %x, %y : f32
    %v7 = arith.maxnumf %x, %y : f32
    %v8 = arith.minnumf %x, %y : f32
    %v9 = math.atan2 %x, %y : f32
    %v10 = math.powf %x, %y : f32
    %v11 = math.fma %x, %y, %x : f32
    %v12 = arith.cmpf false, %x, %y : f32
    %v13 = arith.cmpf oeq, %x, %y : f32
    %v14 = arith.cmpf ogt, %x, %y : f32
    %v15 = arith.cmpf oge, %x, %y : f32
    %v16 = arith.cmpf olt, %x, %y : f32
    %v17 = arith.cmpf ole, %x, %y : f32
    %v18 = arith.cmpf one, %x, %y : f32
    %v19 = arith.cmpf ord, %x, %y : f32
    %v20 = arith.cmpf ueq, %x, %y : f32
    %v21 = arith.cmpf ugt, %x, %y : f32
    %v22 = arith.cmpf uge, %x, %y : f32
    %v23 = arith.cmpf ult, %x, %y : f32
    %v24 = arith.cmpf ule, %x, %y : f32
    %v25 = arith.cmpf une, %x, %y : f32
    %v26 = arith.cmpf uno, %x, %y : f32
    %v27 = arith.cmpf true, %x, %y : f32
    %c28 = arith.cmpf olt, %x, %y : f32
    %v28 = arith.select %c28, %x, %y : f32
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27, %v28 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, f32
  } -> (tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf32>)
  // 122: negf f32
  // 123: absf f32
  // 124: sqrt f32
  // 125: rsqrt f32
  // 126: exp f32
  // 127: exp2 f32
  // 128: expm1 f32
  // 129: log f32
  // 130: log2 f32
  // 131: log1p f32
  // 132: tanh f32
  // 133: sin f32
  // 134: cos f32
  // 135: tan f32
  // 136: erf f32
  // 137: atan f32
  // 138: floor f32
  // 139: ceil f32
  // 140: round f32
  // 141: roundeven f32
  // 142: trunc f32
  // 143: fptosi f32->i32
  // 144: fptoui f32->i32
  // 145: fptosi f32->i64
  // 146: fptoui f32->i64
  // 147: extf f32->f64
  // 148: truncf f32->bf16
  // 149: truncf f32->f16
  %e7_0 = tensor.empty() : tensor<41xf32>
  %e7_1 = tensor.empty() : tensor<41xf32>
  %e7_2 = tensor.empty() : tensor<41xf32>
  %e7_3 = tensor.empty() : tensor<41xf32>
  %e7_4 = tensor.empty() : tensor<41xf32>
  %e7_5 = tensor.empty() : tensor<41xf32>
  %e7_6 = tensor.empty() : tensor<41xf32>
  %e7_7 = tensor.empty() : tensor<41xf32>
  %e7_8 = tensor.empty() : tensor<41xf32>
  %e7_9 = tensor.empty() : tensor<41xf32>
  %e7_10 = tensor.empty() : tensor<41xf32>
  %e7_11 = tensor.empty() : tensor<41xf32>
  %e7_12 = tensor.empty() : tensor<41xf32>
  %e7_13 = tensor.empty() : tensor<41xf32>
  %e7_14 = tensor.empty() : tensor<41xf32>
  %e7_15 = tensor.empty() : tensor<41xf32>
  %e7_16 = tensor.empty() : tensor<41xf32>
  %e7_17 = tensor.empty() : tensor<41xf32>
  %e7_18 = tensor.empty() : tensor<41xf32>
  %e7_19 = tensor.empty() : tensor<41xf32>
  %e7_20 = tensor.empty() : tensor<41xf32>
  %e7_21 = tensor.empty() : tensor<41xi32>
  %e7_22 = tensor.empty() : tensor<41xi32>
  %e7_23 = tensor.empty() : tensor<41xi64>
  %e7_24 = tensor.empty() : tensor<41xi64>
  %e7_25 = tensor.empty() : tensor<41xf64>
  %e7_26 = tensor.empty() : tensor<41xbf16>
  %e7_27 = tensor.empty() : tensor<41xf16>
  %r7:28 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c3 : tensor<41xf32>)
      outs(%e7_0, %e7_1, %e7_2, %e7_3, %e7_4, %e7_5, %e7_6, %e7_7, %e7_8, %e7_9, %e7_10, %e7_11, %e7_12, %e7_13, %e7_14, %e7_15, %e7_16, %e7_17, %e7_18, %e7_19, %e7_20, %e7_21, %e7_22, %e7_23, %e7_24, %e7_25, %e7_26, %e7_27 : tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf64>, tensor<41xbf16>, tensor<41xf16>) {
  ^bb0(%x: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32, %o6: f32, %o7: f32, %o8: f32, %o9: f32, %o10: f32, %o11: f32, %o12: f32, %o13: f32, %o14: f32, %o15: f32, %o16: f32, %o17: f32, %o18: f32, %o19: f32, %o20: f32, %o21: i32, %o22: i32, %o23: i64, %o24: i64, %o25: f64, %o26: bf16, %o27: f16):
    %v0 = arith.negf %x : f32
    %v1 = math.absf %x : f32
    %v2 = math.sqrt %x : f32
    %v3 = math.rsqrt %x : f32
    %v4 = math.exp %x : f32
    %v5 = math.exp2 %x : f32
    %v6 = math.expm1 %x : f32
    %v7 = math.log %x : f32
    %v8 = math.log2 %x : f32
    %v9 = math.log1p %x : f32
    %v10 = math.tanh %x : f32
    %v11 = math.sin %x : f32
    %v12 = math.cos %x : f32
    %v13 = math.tan %x : f32
    %v14 = math.erf %x : f32
    %v15 = math.atan %x : f32
    %v16 = math.floor %x : f32
    %v17 = math.ceil %x : f32
    %v18 = math.round %x : f32
    %v19 = math.roundeven %x : f32
    %v20 = math.trunc %x : f32
    %v21 = arith.fptosi %x : f32 to i32
    %v22 = arith.fptoui %x : f32 to i32
    %v23 = arith.fptosi %x : f32 to i64
    %v24 = arith.fptoui %x : f32 to i64
    %v25 = arith.extf %x : f32 to f64
    %v26 = arith.truncf %x : f32 to bf16
    %v27 = arith.truncf %x : f32 to f16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i64, i64, f64, bf16, f16
  } -> (tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf64>, tensor<41xbf16>, tensor<41xf16>)
  // 150: addf f64
  // 151: subf f64
  // 152: mulf f64
  // 153: divf f64
  // 154: remf f64
  // 155: maximumf f64
  // 156: minimumf f64
  // 157: maxnumf f64
  // 158: minnumf f64
  // 159: atan2 f64
  // 160: powf f64
  // 161: fma f64
  // 162: cmpf false f64
  // 163: cmpf oeq f64
  // 164: cmpf ogt f64
  // 165: cmpf oge f64
  // 166: cmpf olt f64
  // 167: cmpf ole f64
  // 168: cmpf one f64
  // 169: cmpf ord f64
  // 170: cmpf ueq f64
  // 171: cmpf ugt f64
  // 172: cmpf uge f64
  // 173: cmpf ult f64
  // 174: cmpf ule f64
  // 175: cmpf une f64
  // 176: cmpf uno f64
  // 177: cmpf true f64
  // 178: select f64
  %e8_0 = tensor.empty() : tensor<41x41xf64>
  %e8_1 = tensor.empty() : tensor<41x41xf64>
  %e8_2 = tensor.empty() : tensor<41x41xf64>
  %e8_3 = tensor.empty() : tensor<41x41xf64>
  %e8_4 = tensor.empty() : tensor<41x41xf64>
  %e8_5 = tensor.empty() : tensor<41x41xf64>
  %e8_6 = tensor.empty() : tensor<41x41xf64>
  %e8_7 = tensor.empty() : tensor<41x41xf64>
  %e8_8 = tensor.empty() : tensor<41x41xf64>
  %e8_9 = tensor.empty() : tensor<41x41xf64>
  %e8_10 = tensor.empty() : tensor<41x41xf64>
  %e8_11 = tensor.empty() : tensor<41x41xf64>
  %e8_12 = tensor.empty() : tensor<41x41xi1>
  %e8_13 = tensor.empty() : tensor<41x41xi1>
  %e8_14 = tensor.empty() : tensor<41x41xi1>
  %e8_15 = tensor.empty() : tensor<41x41xi1>
  %e8_16 = tensor.empty() : tensor<41x41xi1>
  %e8_17 = tensor.empty() : tensor<41x41xi1>
  %e8_18 = tensor.empty() : tensor<41x41xi1>
  %e8_19 = tensor.empty() : tensor<41x41xi1>
  %e8_20 = tensor.empty() : tensor<41x41xi1>
  %e8_21 = tensor.empty() : tensor<41x41xi1>
  %e8_22 = tensor.empty() : tensor<41x41xi1>
  %e8_23 = tensor.empty() : tensor<41x41xi1>
  %e8_24 = tensor.empty() : tensor<41x41xi1>
  %e8_25 = tensor.empty() : tensor<41x41xi1>
  %e8_26 = tensor.empty() : tensor<41x41xi1>
  %e8_27 = tensor.empty() : tensor<41x41xi1>
  %e8_28 = tensor.empty() : tensor<41x41xf64>
  %r8:29 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c4, %c4 : tensor<41xf64>, tensor<41xf64>)
      outs(%e8_0, %e8_1, %e8_2, %e8_3, %e8_4, %e8_5, %e8_6, %e8_7, %e8_8, %e8_9, %e8_10, %e8_11, %e8_12, %e8_13, %e8_14, %e8_15, %e8_16, %e8_17, %e8_18, %e8_19, %e8_20, %e8_21, %e8_22, %e8_23, %e8_24, %e8_25, %e8_26, %e8_27, %e8_28 : tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf64>) {
  ^bb0(%x: f64, %y: f64, %o0: f64, %o1: f64, %o2: f64, %o3: f64, %o4: f64, %o5: f64, %o6: f64, %o7: f64, %o8: f64, %o9: f64, %o10: f64, %o11: f64, %o12: i1, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1, %o23: i1, %o24: i1, %o25: i1, %o26: i1, %o27: i1, %o28: f64):
    %v0 = arith.addf %x, %y : f64
    %v1 = arith.subf %x, %y : f64
    %v2 = arith.mulf %x, %y : f64
    %v3 = arith.divf %x, %y : f64
    %v4 = arith.remf %x, %y : f64
    %v5 = arith.maximumf %x, %y : f64
    %v6 = arith.minimumf %x, %y : f64
    %v7 = arith.maxnumf %x, %y : f64
    %v8 = arith.minnumf %x, %y : f64
    %v9 = math.atan2 %x, %y : f64
    %v10 = math.powf %x, %y : f64
    %v11 = math.fma %x, %y, %x : f64
    %v12 = arith.cmpf false, %x, %y : f64
    %v13 = arith.cmpf oeq, %x, %y : f64
    %v14 = arith.cmpf ogt, %x, %y : f64
    %v15 = arith.cmpf oge, %x, %y : f64
    %v16 = arith.cmpf olt, %x, %y : f64
    %v17 = arith.cmpf ole, %x, %y : f64
    %v18 = arith.cmpf one, %x, %y : f64
    %v19 = arith.cmpf ord, %x, %y : f64
    %v20 = arith.cmpf ueq, %x, %y : f64
    %v21 = arith.cmpf ugt, %x, %y : f64
    %v22 = arith.cmpf uge, %x, %y : f64
    %v23 = arith.cmpf ult, %x, %y : f64
    %v24 = arith.cmpf ule, %x, %y : f64
    %v25 = arith.cmpf une, %x, %y : f64
    %v26 = arith.cmpf uno, %x, %y : f64
    %v27 = arith.cmpf true, %x, %y : f64
    %c28 = arith.cmpf olt, %x, %y : f64
    %v28 = arith.select %c28, %x, %y : f64
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27, %v28 : f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, f64
  } -> (tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf64>)
  // 179: negf f64
  // 180: absf f64
  // 181: sqrt f64
  // 182: rsqrt f64
  // 183: exp f64
  // 184: exp2 f64
  // 185: expm1 f64
  // 186: log f64
  // 187: log2 f64
  // 188: log1p f64
  // 189: tanh f64
  // 190: sin f64
  // 191: cos f64
  // 192: tan f64
  // 193: erf f64
  // 194: atan f64
  // 195: floor f64
  // 196: ceil f64
  // 197: round f64
  // 198: roundeven f64
  // 199: trunc f64
  // 200: fptosi f64->i32
  // 201: fptoui f64->i32
  // 202: fptosi f64->i64
  // 203: fptoui f64->i64
  // 204: truncf f64->f32
  // 205: truncf f64->bf16
  // 206: truncf f64->f16
  %e9_0 = tensor.empty() : tensor<41xf64>
  %e9_1 = tensor.empty() : tensor<41xf64>
  %e9_2 = tensor.empty() : tensor<41xf64>
  %e9_3 = tensor.empty() : tensor<41xf64>
  %e9_4 = tensor.empty() : tensor<41xf64>
  %e9_5 = tensor.empty() : tensor<41xf64>
  %e9_6 = tensor.empty() : tensor<41xf64>
  %e9_7 = tensor.empty() : tensor<41xf64>
  %e9_8 = tensor.empty() : tensor<41xf64>
  %e9_9 = tensor.empty() : tensor<41xf64>
  %e9_10 = tensor.empty() : tensor<41xf64>
  %e9_11 = tensor.empty() : tensor<41xf64>
  %e9_12 = tensor.empty() : tensor<41xf64>
  %e9_13 = tensor.empty() : tensor<41xf64>
  %e9_14 = tensor.empty() : tensor<41xf64>
  %e9_15 = tensor.empty() : tensor<41xf64>
  %e9_16 = tensor.empty() : tensor<41xf64>
  %e9_17 = tensor.empty() : tensor<41xf64>
  %e9_18 = tensor.empty() : tensor<41xf64>
  %e9_19 = tensor.empty() : tensor<41xf64>
  %e9_20 = tensor.empty() : tensor<41xf64>
  %e9_21 = tensor.empty() : tensor<41xi32>
  %e9_22 = tensor.empty() : tensor<41xi32>
  %e9_23 = tensor.empty() : tensor<41xi64>
  %e9_24 = tensor.empty() : tensor<41xi64>
  %e9_25 = tensor.empty() : tensor<41xf32>
  %e9_26 = tensor.empty() : tensor<41xbf16>
  %e9_27 = tensor.empty() : tensor<41xf16>
  %r9:28 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c4 : tensor<41xf64>)
      outs(%e9_0, %e9_1, %e9_2, %e9_3, %e9_4, %e9_5, %e9_6, %e9_7, %e9_8, %e9_9, %e9_10, %e9_11, %e9_12, %e9_13, %e9_14, %e9_15, %e9_16, %e9_17, %e9_18, %e9_19, %e9_20, %e9_21, %e9_22, %e9_23, %e9_24, %e9_25, %e9_26, %e9_27 : tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xbf16>, tensor<41xf16>) {
  ^bb0(%x: f64, %o0: f64, %o1: f64, %o2: f64, %o3: f64, %o4: f64, %o5: f64, %o6: f64, %o7: f64, %o8: f64, %o9: f64, %o10: f64, %o11: f64, %o12: f64, %o13: f64, %o14: f64, %o15: f64, %o16: f64, %o17: f64, %o18: f64, %o19: f64, %o20: f64, %o21: i32, %o22: i32, %o23: i64, %o24: i64, %o25: f32, %o26: bf16, %o27: f16):
    %v0 = arith.negf %x : f64
    %v1 = math.absf %x : f64
    %v2 = math.sqrt %x : f64
    %v3 = math.rsqrt %x : f64
    %v4 = math.exp %x : f64
    %v5 = math.exp2 %x : f64
    %v6 = math.expm1 %x : f64
    %v7 = math.log %x : f64
    %v8 = math.log2 %x : f64
    %v9 = math.log1p %x : f64
    %v10 = math.tanh %x : f64
    %v11 = math.sin %x : f64
    %v12 = math.cos %x : f64
    %v13 = math.tan %x : f64
    %v14 = math.erf %x : f64
    %v15 = math.atan %x : f64
    %v16 = math.floor %x : f64
    %v17 = math.ceil %x : f64
    %v18 = math.round %x : f64
    %v19 = math.roundeven %x : f64
    %v20 = math.trunc %x : f64
    %v21 = arith.fptosi %x : f64 to i32
    %v22 = arith.fptoui %x : f64 to i32
    %v23 = arith.fptosi %x : f64 to i64
    %v24 = arith.fptoui %x : f64 to i64
    %v25 = arith.truncf %x : f64 to f32
    %v26 = arith.truncf %x : f64 to bf16
    %v27 = arith.truncf %x : f64 to f16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27 : f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, i32, i32, i64, i64, f32, bf16, f16
  } -> (tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xbf16>, tensor<41xf16>)
  // 207: addf bf16
  // 208: subf bf16
  // 209: mulf bf16
  // 210: divf bf16
  // 211: remf bf16
  // 212: maximumf bf16
  // 213: minimumf bf16
  // 214: maxnumf bf16
  // 215: minnumf bf16
  // 216: atan2 bf16
  // 217: powf bf16
  // 218: fma bf16
  // 219: cmpf false bf16
  // 220: cmpf oeq bf16
  // 221: cmpf ogt bf16
  // 222: cmpf oge bf16
  // 223: cmpf olt bf16
  // 224: cmpf ole bf16
  // 225: cmpf one bf16
  // 226: cmpf ord bf16
  // 227: cmpf ueq bf16
  // 228: cmpf ugt bf16
  // 229: cmpf uge bf16
  // 230: cmpf ult bf16
  // 231: cmpf ule bf16
  // 232: cmpf une bf16
  // 233: cmpf uno bf16
  // 234: cmpf true bf16
  // 235: select bf16
  %e10_0 = tensor.empty() : tensor<41x41xbf16>
  %e10_1 = tensor.empty() : tensor<41x41xbf16>
  %e10_2 = tensor.empty() : tensor<41x41xbf16>
  %e10_3 = tensor.empty() : tensor<41x41xbf16>
  %e10_4 = tensor.empty() : tensor<41x41xbf16>
  %e10_5 = tensor.empty() : tensor<41x41xbf16>
  %e10_6 = tensor.empty() : tensor<41x41xbf16>
  %e10_7 = tensor.empty() : tensor<41x41xbf16>
  %e10_8 = tensor.empty() : tensor<41x41xbf16>
  %e10_9 = tensor.empty() : tensor<41x41xbf16>
  %e10_10 = tensor.empty() : tensor<41x41xbf16>
  %e10_11 = tensor.empty() : tensor<41x41xbf16>
  %e10_12 = tensor.empty() : tensor<41x41xi1>
  %e10_13 = tensor.empty() : tensor<41x41xi1>
  %e10_14 = tensor.empty() : tensor<41x41xi1>
  %e10_15 = tensor.empty() : tensor<41x41xi1>
  %e10_16 = tensor.empty() : tensor<41x41xi1>
  %e10_17 = tensor.empty() : tensor<41x41xi1>
  %e10_18 = tensor.empty() : tensor<41x41xi1>
  %e10_19 = tensor.empty() : tensor<41x41xi1>
  %e10_20 = tensor.empty() : tensor<41x41xi1>
  %e10_21 = tensor.empty() : tensor<41x41xi1>
  %e10_22 = tensor.empty() : tensor<41x41xi1>
  %e10_23 = tensor.empty() : tensor<41x41xi1>
  %e10_24 = tensor.empty() : tensor<41x41xi1>
  %e10_25 = tensor.empty() : tensor<41x41xi1>
  %e10_26 = tensor.empty() : tensor<41x41xi1>
  %e10_27 = tensor.empty() : tensor<41x41xi1>
  %e10_28 = tensor.empty() : tensor<41x41xbf16>
  %r10:29 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c5, %c5 : tensor<41xbf16>, tensor<41xbf16>)
      outs(%e10_0, %e10_1, %e10_2, %e10_3, %e10_4, %e10_5, %e10_6, %e10_7, %e10_8, %e10_9, %e10_10, %e10_11, %e10_12, %e10_13, %e10_14, %e10_15, %e10_16, %e10_17, %e10_18, %e10_19, %e10_20, %e10_21, %e10_22, %e10_23, %e10_24, %e10_25, %e10_26, %e10_27, %e10_28 : tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o0: bf16, %o1: bf16, %o2: bf16, %o3: bf16, %o4: bf16, %o5: bf16, %o6: bf16, %o7: bf16, %o8: bf16, %o9: bf16, %o10: bf16, %o11: bf16, %o12: i1, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1, %o23: i1, %o24: i1, %o25: i1, %o26: i1, %o27: i1, %o28: bf16):
    %v0 = arith.addf %x, %y : bf16
    %v1 = arith.subf %x, %y : bf16
    %v2 = arith.mulf %x, %y : bf16
    %v3 = arith.divf %x, %y : bf16
    %v4 = arith.remf %x, %y : bf16
    %v5 = arith.maximumf %x, %y : bf16
    %v6 = arith.minimumf %x, %y : bf16
    %v7 = arith.maxnumf %x, %y : bf16
    %v8 = arith.minnumf %x, %y : bf16
    %v9 = math.atan2 %x, %y : bf16
    %v10 = math.powf %x, %y : bf16
    %v11 = math.fma %x, %y, %x : bf16
    %v12 = arith.cmpf false, %x, %y : bf16
    %v13 = arith.cmpf oeq, %x, %y : bf16
    %v14 = arith.cmpf ogt, %x, %y : bf16
    %v15 = arith.cmpf oge, %x, %y : bf16
    %v16 = arith.cmpf olt, %x, %y : bf16
    %v17 = arith.cmpf ole, %x, %y : bf16
    %v18 = arith.cmpf one, %x, %y : bf16
    %v19 = arith.cmpf ord, %x, %y : bf16
    %v20 = arith.cmpf ueq, %x, %y : bf16
    %v21 = arith.cmpf ugt, %x, %y : bf16
    %v22 = arith.cmpf uge, %x, %y : bf16
    %v23 = arith.cmpf ult, %x, %y : bf16
    %v24 = arith.cmpf ule, %x, %y : bf16
    %v25 = arith.cmpf une, %x, %y : bf16
    %v26 = arith.cmpf uno, %x, %y : bf16
    %v27 = arith.cmpf true, %x, %y : bf16
    %c28 = arith.cmpf olt, %x, %y : bf16
    %v28 = arith.select %c28, %x, %y : bf16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27, %v28 : bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, bf16
  } -> (tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xbf16>)
  // 236: negf bf16
  // 237: absf bf16
  // 238: sqrt bf16
  // 239: rsqrt bf16
  // 240: exp bf16
  // 241: exp2 bf16
  // 242: expm1 bf16
  // 243: log bf16
  // 244: log2 bf16
  // 245: log1p bf16
  // 246: tanh bf16
  // 247: sin bf16
  // 248: cos bf16
  // 249: tan bf16
  // 250: erf bf16
  // 251: atan bf16
  // 252: floor bf16
  // 253: ceil bf16
  // 254: round bf16
  // 255: roundeven bf16
  // 256: trunc bf16
  // 257: fptosi bf16->i32
  // 258: fptoui bf16->i32
  // 259: fptosi bf16->i64
  // 260: fptoui bf16->i64
  // 261: extf bf16->f32
  // 262: extf bf16->f64
  %e11_0 = tensor.empty() : tensor<41xbf16>
  %e11_1 = tensor.empty() : tensor<41xbf16>
  %e11_2 = tensor.empty() : tensor<41xbf16>
  %e11_3 = tensor.empty() : tensor<41xbf16>
  %e11_4 = tensor.empty() : tensor<41xbf16>
  %e11_5 = tensor.empty() : tensor<41xbf16>
  %e11_6 = tensor.empty() : tensor<41xbf16>
  %e11_7 = tensor.empty() : tensor<41xbf16>
  %e11_8 = tensor.empty() : tensor<41xbf16>
  %e11_9 = tensor.empty() : tensor<41xbf16>
  %e11_10 = tensor.empty() : tensor<41xbf16>
  %e11_11 = tensor.empty() : tensor<41xbf16>
  %e11_12 = tensor.empty() : tensor<41xbf16>
  %e11_13 = tensor.empty() : tensor<41xbf16>
  %e11_14 = tensor.empty() : tensor<41xbf16>
  %e11_15 = tensor.empty() : tensor<41xbf16>
  %e11_16 = tensor.empty() : tensor<41xbf16>
  %e11_17 = tensor.empty() : tensor<41xbf16>
  %e11_18 = tensor.empty() : tensor<41xbf16>
  %e11_19 = tensor.empty() : tensor<41xbf16>
  %e11_20 = tensor.empty() : tensor<41xbf16>
  %e11_21 = tensor.empty() : tensor<41xi32>
  %e11_22 = tensor.empty() : tensor<41xi32>
  %e11_23 = tensor.empty() : tensor<41xi64>
  %e11_24 = tensor.empty() : tensor<41xi64>
  %e11_25 = tensor.empty() : tensor<41xf32>
  %e11_26 = tensor.empty() : tensor<41xf64>
  %r11:27 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c5 : tensor<41xbf16>)
      outs(%e11_0, %e11_1, %e11_2, %e11_3, %e11_4, %e11_5, %e11_6, %e11_7, %e11_8, %e11_9, %e11_10, %e11_11, %e11_12, %e11_13, %e11_14, %e11_15, %e11_16, %e11_17, %e11_18, %e11_19, %e11_20, %e11_21, %e11_22, %e11_23, %e11_24, %e11_25, %e11_26 : tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>) {
  ^bb0(%x: bf16, %o0: bf16, %o1: bf16, %o2: bf16, %o3: bf16, %o4: bf16, %o5: bf16, %o6: bf16, %o7: bf16, %o8: bf16, %o9: bf16, %o10: bf16, %o11: bf16, %o12: bf16, %o13: bf16, %o14: bf16, %o15: bf16, %o16: bf16, %o17: bf16, %o18: bf16, %o19: bf16, %o20: bf16, %o21: i32, %o22: i32, %o23: i64, %o24: i64, %o25: f32, %o26: f64):
    %v0 = arith.negf %x : bf16
    %v1 = math.absf %x : bf16
    %v2 = math.sqrt %x : bf16
    %v3 = math.rsqrt %x : bf16
    %v4 = math.exp %x : bf16
    %v5 = math.exp2 %x : bf16
    %v6 = math.expm1 %x : bf16
    %v7 = math.log %x : bf16
    %v8 = math.log2 %x : bf16
    %v9 = math.log1p %x : bf16
    %v10 = math.tanh %x : bf16
    %v11 = math.sin %x : bf16
    %v12 = math.cos %x : bf16
    %v13 = math.tan %x : bf16
    %v14 = math.erf %x : bf16
    %v15 = math.atan %x : bf16
    %v16 = math.floor %x : bf16
    %v17 = math.ceil %x : bf16
    %v18 = math.round %x : bf16
    %v19 = math.roundeven %x : bf16
    %v20 = math.trunc %x : bf16
    %v21 = arith.fptosi %x : bf16 to i32
    %v22 = arith.fptoui %x : bf16 to i32
    %v23 = arith.fptosi %x : bf16 to i64
    %v24 = arith.fptoui %x : bf16 to i64
    %v25 = arith.extf %x : bf16 to f32
    %v26 = arith.extf %x : bf16 to f64
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26 : bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, i32, i32, i64, i64, f32, f64
  } -> (tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>)
  // 263: addf f16
  // 264: subf f16
  // 265: mulf f16
  // 266: divf f16
  // 267: remf f16
  // 268: maximumf f16
  // 269: minimumf f16
  // 270: maxnumf f16
  // 271: minnumf f16
  // 272: atan2 f16
  // 273: powf f16
  // 274: fma f16
  // 275: cmpf false f16
  // 276: cmpf oeq f16
  // 277: cmpf ogt f16
  // 278: cmpf oge f16
  // 279: cmpf olt f16
  // 280: cmpf ole f16
  // 281: cmpf one f16
  // 282: cmpf ord f16
  // 283: cmpf ueq f16
  // 284: cmpf ugt f16
  // 285: cmpf uge f16
  // 286: cmpf ult f16
  // 287: cmpf ule f16
  // 288: cmpf une f16
  // 289: cmpf uno f16
  // 290: cmpf true f16
  // 291: select f16
  %e12_0 = tensor.empty() : tensor<41x41xf16>
  %e12_1 = tensor.empty() : tensor<41x41xf16>
  %e12_2 = tensor.empty() : tensor<41x41xf16>
  %e12_3 = tensor.empty() : tensor<41x41xf16>
  %e12_4 = tensor.empty() : tensor<41x41xf16>
  %e12_5 = tensor.empty() : tensor<41x41xf16>
  %e12_6 = tensor.empty() : tensor<41x41xf16>
  %e12_7 = tensor.empty() : tensor<41x41xf16>
  %e12_8 = tensor.empty() : tensor<41x41xf16>
  %e12_9 = tensor.empty() : tensor<41x41xf16>
  %e12_10 = tensor.empty() : tensor<41x41xf16>
  %e12_11 = tensor.empty() : tensor<41x41xf16>
  %e12_12 = tensor.empty() : tensor<41x41xi1>
  %e12_13 = tensor.empty() : tensor<41x41xi1>
  %e12_14 = tensor.empty() : tensor<41x41xi1>
  %e12_15 = tensor.empty() : tensor<41x41xi1>
  %e12_16 = tensor.empty() : tensor<41x41xi1>
  %e12_17 = tensor.empty() : tensor<41x41xi1>
  %e12_18 = tensor.empty() : tensor<41x41xi1>
  %e12_19 = tensor.empty() : tensor<41x41xi1>
  %e12_20 = tensor.empty() : tensor<41x41xi1>
  %e12_21 = tensor.empty() : tensor<41x41xi1>
  %e12_22 = tensor.empty() : tensor<41x41xi1>
  %e12_23 = tensor.empty() : tensor<41x41xi1>
  %e12_24 = tensor.empty() : tensor<41x41xi1>
  %e12_25 = tensor.empty() : tensor<41x41xi1>
  %e12_26 = tensor.empty() : tensor<41x41xi1>
  %e12_27 = tensor.empty() : tensor<41x41xi1>
  %e12_28 = tensor.empty() : tensor<41x41xf16>
  %r12:29 = linalg.generic {indexing_maps = [#i, #j, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c6, %c6 : tensor<41xf16>, tensor<41xf16>)
      outs(%e12_0, %e12_1, %e12_2, %e12_3, %e12_4, %e12_5, %e12_6, %e12_7, %e12_8, %e12_9, %e12_10, %e12_11, %e12_12, %e12_13, %e12_14, %e12_15, %e12_16, %e12_17, %e12_18, %e12_19, %e12_20, %e12_21, %e12_22, %e12_23, %e12_24, %e12_25, %e12_26, %e12_27, %e12_28 : tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf16>) {
  ^bb0(%x: f16, %y: f16, %o0: f16, %o1: f16, %o2: f16, %o3: f16, %o4: f16, %o5: f16, %o6: f16, %o7: f16, %o8: f16, %o9: f16, %o10: f16, %o11: f16, %o12: i1, %o13: i1, %o14: i1, %o15: i1, %o16: i1, %o17: i1, %o18: i1, %o19: i1, %o20: i1, %o21: i1, %o22: i1, %o23: i1, %o24: i1, %o25: i1, %o26: i1, %o27: i1, %o28: f16):
    %v0 = arith.addf %x, %y : f16
    %v1 = arith.subf %x, %y : f16
    %v2 = arith.mulf %x, %y : f16
    %v3 = arith.divf %x, %y : f16
    %v4 = arith.remf %x, %y : f16
    %v5 = arith.maximumf %x, %y : f16
    %v6 = arith.minimumf %x, %y : f16
    %v7 = arith.maxnumf %x, %y : f16
    %v8 = arith.minnumf %x, %y : f16
    %v9 = math.atan2 %x, %y : f16
    %v10 = math.powf %x, %y : f16
    %v11 = math.fma %x, %y, %x : f16
    %v12 = arith.cmpf false, %x, %y : f16
    %v13 = arith.cmpf oeq, %x, %y : f16
    %v14 = arith.cmpf ogt, %x, %y : f16
    %v15 = arith.cmpf oge, %x, %y : f16
    %v16 = arith.cmpf olt, %x, %y : f16
    %v17 = arith.cmpf ole, %x, %y : f16
    %v18 = arith.cmpf one, %x, %y : f16
    %v19 = arith.cmpf ord, %x, %y : f16
    %v20 = arith.cmpf ueq, %x, %y : f16
    %v21 = arith.cmpf ugt, %x, %y : f16
    %v22 = arith.cmpf uge, %x, %y : f16
    %v23 = arith.cmpf ult, %x, %y : f16
    %v24 = arith.cmpf ule, %x, %y : f16
    %v25 = arith.cmpf une, %x, %y : f16
    %v26 = arith.cmpf uno, %x, %y : f16
    %v27 = arith.cmpf true, %x, %y : f16
    %c28 = arith.cmpf olt, %x, %y : f16
    %v28 = arith.select %c28, %x, %y : f16
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26, %v27, %v28 : f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, i1, f16
  } -> (tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf16>)
  // 292: negf f16
  // 293: absf f16
  // 294: sqrt f16
  // 295: rsqrt f16
  // 296: exp f16
  // 297: exp2 f16
  // 298: expm1 f16
  // 299: log f16
  // 300: log2 f16
  // 301: log1p f16
  // 302: tanh f16
  // 303: sin f16
  // 304: cos f16
  // 305: tan f16
  // 306: erf f16
  // 307: atan f16
  // 308: floor f16
  // 309: ceil f16
  // 310: round f16
  // 311: roundeven f16
  // 312: trunc f16
  // 313: fptosi f16->i32
  // 314: fptoui f16->i32
  // 315: fptosi f16->i64
  // 316: fptoui f16->i64
  // 317: extf f16->f32
  // 318: extf f16->f64
  %e13_0 = tensor.empty() : tensor<41xf16>
  %e13_1 = tensor.empty() : tensor<41xf16>
  %e13_2 = tensor.empty() : tensor<41xf16>
  %e13_3 = tensor.empty() : tensor<41xf16>
  %e13_4 = tensor.empty() : tensor<41xf16>
  %e13_5 = tensor.empty() : tensor<41xf16>
  %e13_6 = tensor.empty() : tensor<41xf16>
  %e13_7 = tensor.empty() : tensor<41xf16>
  %e13_8 = tensor.empty() : tensor<41xf16>
  %e13_9 = tensor.empty() : tensor<41xf16>
  %e13_10 = tensor.empty() : tensor<41xf16>
  %e13_11 = tensor.empty() : tensor<41xf16>
  %e13_12 = tensor.empty() : tensor<41xf16>
  %e13_13 = tensor.empty() : tensor<41xf16>
  %e13_14 = tensor.empty() : tensor<41xf16>
  %e13_15 = tensor.empty() : tensor<41xf16>
  %e13_16 = tensor.empty() : tensor<41xf16>
  %e13_17 = tensor.empty() : tensor<41xf16>
  %e13_18 = tensor.empty() : tensor<41xf16>
  %e13_19 = tensor.empty() : tensor<41xf16>
  %e13_20 = tensor.empty() : tensor<41xf16>
  %e13_21 = tensor.empty() : tensor<41xi32>
  %e13_22 = tensor.empty() : tensor<41xi32>
  %e13_23 = tensor.empty() : tensor<41xi64>
  %e13_24 = tensor.empty() : tensor<41xi64>
  %e13_25 = tensor.empty() : tensor<41xf32>
  %e13_26 = tensor.empty() : tensor<41xf64>
  %r13:27 = linalg.generic {indexing_maps = [#x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x, #x], iterator_types = ["parallel"]}
      ins(%c6 : tensor<41xf16>)
      outs(%e13_0, %e13_1, %e13_2, %e13_3, %e13_4, %e13_5, %e13_6, %e13_7, %e13_8, %e13_9, %e13_10, %e13_11, %e13_12, %e13_13, %e13_14, %e13_15, %e13_16, %e13_17, %e13_18, %e13_19, %e13_20, %e13_21, %e13_22, %e13_23, %e13_24, %e13_25, %e13_26 : tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>) {
  ^bb0(%x: f16, %o0: f16, %o1: f16, %o2: f16, %o3: f16, %o4: f16, %o5: f16, %o6: f16, %o7: f16, %o8: f16, %o9: f16, %o10: f16, %o11: f16, %o12: f16, %o13: f16, %o14: f16, %o15: f16, %o16: f16, %o17: f16, %o18: f16, %o19: f16, %o20: f16, %o21: i32, %o22: i32, %o23: i64, %o24: i64, %o25: f32, %o26: f64):
    %v0 = arith.negf %x : f16
    %v1 = math.absf %x : f16
    %v2 = math.sqrt %x : f16
    %v3 = math.rsqrt %x : f16
    %v4 = math.exp %x : f16
    %v5 = math.exp2 %x : f16
    %v6 = math.expm1 %x : f16
    %v7 = math.log %x : f16
    %v8 = math.log2 %x : f16
    %v9 = math.log1p %x : f16
    %v10 = math.tanh %x : f16
    %v11 = math.sin %x : f16
    %v12 = math.cos %x : f16
    %v13 = math.tan %x : f16
    %v14 = math.erf %x : f16
    %v15 = math.atan %x : f16
    %v16 = math.floor %x : f16
    %v17 = math.ceil %x : f16
    %v18 = math.round %x : f16
    %v19 = math.roundeven %x : f16
    %v20 = math.trunc %x : f16
    %v21 = arith.fptosi %x : f16 to i32
    %v22 = arith.fptoui %x : f16 to i32
    %v23 = arith.fptosi %x : f16 to i64
    %v24 = arith.fptoui %x : f16 to i64
    %v25 = arith.extf %x : f16 to f32
    %v26 = arith.extf %x : f16 to f64
    linalg.yield %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14, %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26 : f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, i32, i32, i64, i64, f32, f64
  } -> (tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>)
  return %r0#0, %r0#1, %r0#2, %r0#3, %r0#4, %r0#5, %r0#6, %r0#7, %r0#8, %r0#9, %r0#10, %r0#11, %r0#12, %r0#13, %r0#14, %r0#15, %r0#16, %r0#17, %r0#18, %r0#19, %r0#20, %r0#21, %r0#22, %r1#0, %r1#1, %r1#2, %r1#3, %r1#4, %r1#5, %r1#6, %r1#7, %r1#8, %r1#9, %r1#10, %r1#11, %r1#12, %r1#13, %r1#14, %r1#15, %r1#16, %r1#17, %r1#18, %r1#19, %r1#20, %r1#21, %r1#22, %r2#0, %r2#1, %r2#2, %r2#3, %r2#4, %r2#5, %r2#6, %r2#7, %r2#8, %r2#9, %r2#10, %r2#11, %r2#12, %r2#13, %r3#0, %r3#1, %r3#2, %r3#3, %r3#4, %r3#5, %r3#6, %r3#7, %r3#8, %r3#9, %r4#0, %r4#1, %r4#2, %r4#3, %r5#0, %r5#1, %r5#2, %r5#3, %r5#4, %r5#5, %r5#6, %r5#7, %r5#8, %r5#9, %r5#10, %r5#11, %r5#12, %r5#13, %r5#14, %r5#15, %r5#16, %r5#17, %r5#18, %r6#0, %r6#1, %r6#2, %r6#3, %r6#4, %r6#5, %r6#6, %r6#7, %r6#8, %r6#9, %r6#10, %r6#11, %r6#12, %r6#13, %r6#14, %r6#15, %r6#16, %r6#17, %r6#18, %r6#19, %r6#20, %r6#21, %r6#22, %r6#23, %r6#24, %r6#25, %r6#26, %r6#27, %r6#28, %r7#0, %r7#1, %r7#2, %r7#3, %r7#4, %r7#5, %r7#6, %r7#7, %r7#8, %r7#9, %r7#10, %r7#11, %r7#12, %r7#13, %r7#14, %r7#15, %r7#16, %r7#17, %r7#18, %r7#19, %r7#20, %r7#21, %r7#22, %r7#23, %r7#24, %r7#25, %r7#26, %r7#27, %r8#0, %r8#1, %r8#2, %r8#3, %r8#4, %r8#5, %r8#6, %r8#7, %r8#8, %r8#9, %r8#10, %r8#11, %r8#12, %r8#13, %r8#14, %r8#15, %r8#16, %r8#17, %r8#18, %r8#19, %r8#20, %r8#21, %r8#22, %r8#23, %r8#24, %r8#25, %r8#26, %r8#27, %r8#28, %r9#0, %r9#1, %r9#2, %r9#3, %r9#4, %r9#5, %r9#6, %r9#7, %r9#8, %r9#9, %r9#10, %r9#11, %r9#12, %r9#13, %r9#14, %r9#15, %r9#16, %r9#17, %r9#18, %r9#19, %r9#20, %r9#21, %r9#22, %r9#23, %r9#24, %r9#25, %r9#26, %r9#27, %r10#0, %r10#1, %r10#2, %r10#3, %r10#4, %r10#5, %r10#6, %r10#7, %r10#8, %r10#9, %r10#10, %r10#11, %r10#12, %r10#13, %r10#14, %r10#15, %r10#16, %r10#17, %r10#18, %r10#19, %r10#20, %r10#21, %r10#22, %r10#23, %r10#24, %r10#25, %r10#26, %r10#27, %r10#28, %r11#0, %r11#1, %r11#2, %r11#3, %r11#4, %r11#5, %r11#6, %r11#7, %r11#8, %r11#9, %r11#10, %r11#11, %r11#12, %r11#13, %r11#14, %r11#15, %r11#16, %r11#17, %r11#18, %r11#19, %r11#20, %r11#21, %r11#22, %r11#23, %r11#24, %r11#25, %r11#26, %r12#0, %r12#1, %r12#2, %r12#3, %r12#4, %r12#5, %r12#6, %r12#7, %r12#8, %r12#9, %r12#10, %r12#11, %r12#12, %r12#13, %r12#14, %r12#15, %r12#16, %r12#17, %r12#18, %r12#19, %r12#20, %r12#21, %r12#22, %r12#23, %r12#24, %r12#25, %r12#26, %r12#27, %r12#28, %r13#0, %r13#1, %r13#2, %r13#3, %r13#4, %r13#5, %r13#6, %r13#7, %r13#8, %r13#9, %r13#10, %r13#11, %r13#12, %r13#13, %r13#14, %r13#15, %r13#16, %r13#17, %r13#18, %r13#19, %r13#20, %r13#21, %r13#22, %r13#23, %r13#24, %r13#25, %r13#26
      : tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi32>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<18x18xi1>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi64>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<19x19xi1>, tensor<18xi32>, tensor<18xi64>, tensor<18xi64>, tensor<18xi1>, tensor<18xi64>, tensor<18xi64>, tensor<18xf32>, tensor<18xf32>, tensor<18xf64>, tensor<18xf64>, tensor<18xbf16>, tensor<18xbf16>, tensor<18xf16>, tensor<18xf16>, tensor<19xi64>, tensor<19xi32>, tensor<19xf32>, tensor<19xf32>, tensor<19xf64>, tensor<19xf64>, tensor<19xbf16>, tensor<19xbf16>, tensor<19xf16>, tensor<19xf16>, tensor<2xi32>, tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xf32>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xf32>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf64>, tensor<41xbf16>, tensor<41xf16>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xf64>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xf64>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xbf16>, tensor<41xf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xbf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xbf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xf16>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xi1>, tensor<41x41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xf16>, tensor<41xi32>, tensor<41xi32>, tensor<41xi64>, tensor<41xi64>, tensor<41xf32>, tensor<41xf64>
}
