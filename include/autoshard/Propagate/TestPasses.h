//===- TestPasses.h - Passes that expose rules to lit tests -----*- C++ -*-===//
#ifndef AUTOSHARD_PROPAGATE_TESTPASSES_H
#define AUTOSHARD_PROPAGATE_TESTPASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace autoshard {

#define GEN_PASS_DECL
#include "autoshard/Propagate/TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "autoshard/Propagate/TestPasses.h.inc"

} // namespace autoshard

#endif // AUTOSHARD_PROPAGATE_TESTPASSES_H
