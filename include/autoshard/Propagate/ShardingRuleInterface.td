//===- ShardingRuleInterface.td - Op sharding rules --------*- tablegen -*-===//
//
// The interface through which an op tells propagation how it may be split.
// autoshard attaches it as external models to upstream linalg, tensor, tosa,
// arith and math ops (lib/Propagate/Rules*.cpp); ops of other dialects may
// implement it directly.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_TD
#define AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_TD

include "mlir/IR/OpBase.td"

def ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::autoshard";
  let description = [{
    Returns the op's factor-based sharding rule (see
    autoshard/Propagate/ShardingRule.h): the factors of its iteration space,
    which factors make up each operand and result dim, and the kind of the
    pending reduction a split reduction factor leaves. Fails, with the reason
    in `why`, when the op cannot be described (dynamic shapes, memref
    semantics, unsupported attribute values); propagation then runs the op
    replicated and reports the reason.

    The rule must depend only on the op's structure (name, attributes,
    properties, operand/result types, regions), never on which values it
    reads: --dist-propagate computes it once per group of structurally equal
    ops (the layers of a model) and shares it.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"The sharding rule of this op, or failure with a reason.",
      /*retTy=*/"::mlir::FailureOr<::autoshard::ShardingRule>",
      /*methodName=*/"getShardingRule",
      /*args=*/(ins "std::string &":$why)>
  ];
}

#endif // AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_TD
