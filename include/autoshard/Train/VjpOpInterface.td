//===- VjpOpInterface.td - Reverse-mode rules of ops -------*- tablegen -*-===//
//
// The interface through which an op tells --dist-training-step how to carry
// gradients from its results back to its operands (its vector-Jacobian
// product). autoshard attaches it as external models to upstream linalg,
// tensor, arith, math and dist ops, one rule per op kind in
// lib/Train/Vjp/*.cpp; ops of other dialects may implement it directly.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_TRAIN_VJPOPINTERFACE_TD
#define AUTOSHARD_TRAIN_VJPOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let cppNamespace = "::autoshard";
  let description = [{
    Builds, at the builder's insertion point, the ops that compute the
    gradients of the op's operands from the gradients of its results.

    `resultGrads` has one entry per result: the gradient of the loss with
    respect to that result (same type), or a null Value when no gradient
    reaches it (the result is unused by the loss). `wantGrads` has one entry
    per operand: whether the caller needs that operand's gradient (it is a
    float tensor that depends on a parameter). On success `operandGrads`
    holds one entry per operand: its gradient (same type as the operand), or
    a null Value when it was not wanted or the op does not depend on it
    (integer indices, destination inits that are overwritten). The rule may
    read the op's operands and results (the forward values are kept for the
    backward). On failure the rule has emitted a located error on the op.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Builds the operands' gradients from the results' gradients.",
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"buildVjp",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
                    "::mlir::ArrayRef<bool>":$wantGrads,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // AUTOSHARD_TRAIN_VJPOPINTERFACE_TD
