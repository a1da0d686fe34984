// Issue 22: a splat constant is lowered to one scalar and a fill, not
// written out whole: dense<1.0> : tensor<1048576x1048576xf32> made the
// lowering allocate 4 TiB (an uncaught exception, abort) and any large splat
// made the plan file as large as the tensor. Now the plan holds one scalar,
// the fill allocates when it runs (a clear error naming the constant when
// that cannot be), and a tensor whose byte size passes int64 is a located
// error at lowering instead of a wrapped, too small allocation.
// RUN: rm -rf %t && mkdir -p %t && split-file %s %t
// RUN: ulimit -v 4194304
// RUN: autoshard compile %t/sum.mlir --lower-only -o %t/sum.asplan
// RUN: %python -c "import os, sys; n = os.path.getsize(sys.argv[1]); print('plan bytes', n); sys.exit(n > 65536)" %t/sum.asplan
// RUN: autoshard-run %t/sum.asplan --output-dir %t/sum --print-plan | FileCheck %s --check-prefix=PLAN
// PLAN: %[[S:[0-9]+]] = constant : f32[scalar]
// PLAN-NEXT: = fill %[[S]] : f32[4096x4096]
// RUN: %python %S/../Runtime/Inputs/write_f32_npy.py %t/ref.npy 6144 4096
// RUN: autoshard-run --compare %t/sum/output_0.npy %t/ref.npy --rtol 0 --atol 0 | FileCheck %s --check-prefix=MATCH
// MATCH: MATCH f32[4096]
// RUN: not autoshard-run %t/tib.mlir --output-dir %t/tib 2>&1 | FileCheck %s --check-prefix=TIB
// TIB: autoshard-run: error: out of memory allocating 4398046511104 bytes (at {{.*}}tib.mlir:2:8 arith.constant)
// RUN: not autoshard-run %t/wrap.mlir --output-dir %t/wrap 2>&1 | FileCheck %s --check-prefix=WRAP
// WRAP: wrap.mlir:2:8: error: autoshard-run: 'tensor<4611686018427387904xf32>' has more bytes than a buffer can hold (2^63)
// An input .npy declaring 2^62 elements (16 bytes of data) is refused when
// its header is read, before any buffer is sized from it.
// RUN: %python -c "import sys; h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }\"; h += ' ' * (117 - len(h)) + '\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00' + bytes([len(h), 0]) + h.encode() + bytes(16))" > %t/huge.npy
// RUN: not autoshard-run %t/arg.mlir --input arg0=%t/huge.npy --output-dir %t/arg 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: autoshard-run: error: '{{.*}}huge.npy' is not a valid .npy file: the element count of 'shape' is too large

//--- sum.mlir
func.func @main() -> tensor<4096xf32> {
  %c = arith.constant dense<1.5> : tensor<4096x4096xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.reduce ins(%c : tensor<4096x4096xf32>) outs(%i : tensor<4096xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4096xf32>
}
//--- tib.mlir
func.func @main() -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<1048576x1048576xf32>
  %s = tensor.extract_slice %c[0, 0] [1, 2] [1, 1] : tensor<1048576x1048576xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}
//--- wrap.mlir
func.func @main() -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<4611686018427387904xf32>
  %s = tensor.extract_slice %c[0] [2] [1] : tensor<4611686018427387904xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}
//--- arg.mlir
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
