//===- ShardingRuleInterface.h - Op sharding rules --------------*- C++ -*-===//
#ifndef AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_H
#define AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_H

#include "autoshard/Propagate/ShardingRule.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Support/LLVM.h"

#include <string>

#include "autoshard/Propagate/ShardingRuleInterface.h.inc"

#endif // AUTOSHARD_PROPAGATE_SHARDINGRULEINTERFACE_H
