//===- StableHash.cpp - Hashes of types and attributes, equal in every run ===//

#include "autoshard/Propagate/StableHash.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace autoshard {
namespace {

/// What kind of object a hash was computed from: equal parameters of
/// different kinds must not collide.
enum Tag : uint64_t {
  kPrinted = 1,
  kRankedTensor,
  kInteger,
  kFloat,
  kIndex,
  kNone,
  kArray,
  kDictionary,
  kString,
  kIntegerAttr,
  kFloatAttr,
  kDenseArray,
  kDenseElements,
  kAffineMap,
  kUnit,
  kTypeAttr,
  kAffineDim,
  kAffineSymbol,
  kAffineConstant,
  kAffineBinary,
};

uint64_t mix(uint64_t h, uint64_t x) {
  h = (h ^ x) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 32);
}

uint64_t mixBytes(uint64_t h, StringRef bytes) {
  // FNV-1a over the bytes, then mixed in with their count.
  uint64_t f = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    f ^= c;
    f *= 1099511628211ull;
  }
  return mix(mix(h, bytes.size()), f);
}

uint64_t mixAPInt(uint64_t h, const APInt &v) {
  h = mix(h, v.getBitWidth());
  for (unsigned i = 0, e = v.getNumWords(); i < e; ++i)
    h = mix(h, v.getRawData()[i]);
  return h;
}

} // namespace

template <typename T> uint64_t StableHasher::memoised(T object) {
  const void *key = object.getAsOpaquePointer();
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  // compute() may add to the memo: insert after it.
  uint64_t h = compute(object);
  memo[key] = h;
  return h;
}

uint64_t StableHasher::hash(Type type) { return memoised(type); }

uint64_t StableHasher::hash(Attribute attr) { return memoised(attr); }

uint64_t StableHasher::compute(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    uint64_t h = mix(kRankedTensor, tensor.getRank());
    for (int64_t d : tensor.getShape())
      h = mix(h, static_cast<uint64_t>(d));
    h = mix(h, hash(tensor.getElementType()));
    if (Attribute encoding = tensor.getEncoding())
      h = mix(h, hash(encoding));
    return h;
  }
  if (auto integer = dyn_cast<IntegerType>(type))
    return mix(mix(kInteger, integer.getWidth()), integer.getSignedness());
  if (auto fp = dyn_cast<FloatType>(type))
    return mix(kFloat, static_cast<uint64_t>(llvm::APFloatBase::SemanticsToEnum(
                           fp.getFloatSemantics())));
  if (isa<IndexType>(type))
    return kIndex;
  if (isa<NoneType>(type))
    return kNone;
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os, asmState);
  return mixBytes(kPrinted, text);
}

uint64_t StableHasher::hashAffineExpr(AffineExpr expr) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return mix(kAffineDim, dim.getPosition());
  if (auto sym = dyn_cast<AffineSymbolExpr>(expr))
    return mix(kAffineSymbol, sym.getPosition());
  if (auto cst = dyn_cast<AffineConstantExpr>(expr))
    return mix(kAffineConstant, static_cast<uint64_t>(cst.getValue()));
  auto bin = cast<AffineBinaryOpExpr>(expr);
  uint64_t h = mix(kAffineBinary, static_cast<uint64_t>(bin.getKind()));
  h = mix(h, hashAffineExpr(bin.getLHS()));
  return mix(h, hashAffineExpr(bin.getRHS()));
}

uint64_t StableHasher::compute(Attribute attr) {
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    uint64_t h = mix(kArray, array.size());
    for (Attribute a : array)
      h = mix(h, hash(a));
    return h;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    uint64_t h = mix(kDictionary, dict.size());
    for (NamedAttribute a : dict)
      h = mix(mix(h, hash(a.getName())), hash(a.getValue()));
    return h;
  }
  if (auto str = dyn_cast<StringAttr>(attr))
    return mix(mixBytes(kString, str.getValue()), hash(str.getType()));
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return mixAPInt(mix(kIntegerAttr, hash(integer.getType())),
                    integer.getValue());
  if (auto fp = dyn_cast<FloatAttr>(attr))
    return mixAPInt(mix(kFloatAttr, hash(fp.getType())),
                    fp.getValue().bitcastToAPInt());
  if (auto dense = dyn_cast<DenseArrayAttr>(attr))
    return mixBytes(
        mix(mix(kDenseArray, hash(dense.getElementType())), dense.getSize()),
        StringRef(dense.getRawData().data(), dense.getRawData().size()));
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr))
    return mixBytes(
        mix(mix(kDenseElements, hash(dense.getType())), dense.isSplat()),
        StringRef(dense.getRawData().data(), dense.getRawData().size()));
  if (auto map = dyn_cast<AffineMapAttr>(attr)) {
    AffineMap m = map.getValue();
    uint64_t h = mix(mix(kAffineMap, m.getNumDims()), m.getNumSymbols());
    h = mix(h, m.getNumResults());
    for (AffineExpr e : m.getResults())
      h = mix(h, hashAffineExpr(e));
    return h;
  }
  if (isa<UnitAttr>(attr))
    return kUnit;
  if (auto type = dyn_cast<TypeAttr>(attr))
    return mix(kTypeAttr, hash(type.getValue()));
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os, asmState);
  return mixBytes(kPrinted, text);
}

} // namespace autoshard
