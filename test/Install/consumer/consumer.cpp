// Parses an annotated program with autoshard's dialects registered into a
// plain MLIRContext, and checks the pass registry knows autoshard's passes.
#include "autoshard/Dialect/Dist/IR/DistOps.h"
#include "autoshard/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  autoshard::registerAllDialects(registry);
  autoshard::registerAllPasses();
  mlir::MLIRContext ctx(registry);
  const char *src = R"mlir(
    #mesh = #dist.mesh<[dp = 2, mp = 4]>
    func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], [mp]]>
      return %0 : tensor<8x16xf32>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  if (!module)
    return 1;
  module->walk([](autoshard::dist::AnnotateOp op) {
    auto shape = op.getLayout().getLocalShape(
        op.getInput().getType().getShape(), /*pos=*/5);
    llvm::outs() << "local shape on position 5: " << shape[0] << "x"
                 << shape[1] << "\n";
  });
  llvm::outs() << "dist-propagate registered: "
               << (mlir::PassInfo::lookup("dist-propagate") ? "yes" : "no")
               << "\n";
  return 0;
}
