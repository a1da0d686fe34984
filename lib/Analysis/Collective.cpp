//===- Collective.cpp - One step of a redistribution ----------------------===//

#include "autoshard/Analysis/Collective.h"

#include <sstream>

using namespace autoshard;

std::string CollectiveStep::str(const DeviceMesh &mesh) const {
  std::ostringstream os;
  os << stringifyCollectiveKind(kind) << "(axes [";
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    os << (i ? ", " : "")
       << (a >= 0 && a < mesh.getNumAxes() ? mesh.getAxis(a).name
                                           : "?" + std::to_string(a));
  }
  os << "]";
  if (kind == CollectiveKind::AllToAll)
    os << ", dim " << srcDim << " -> " << dim;
  else if (dim >= 0)
    os << ", dim " << dim;
  if (kind == CollectiveKind::AllReduce ||
      kind == CollectiveKind::ReduceScatter ||
      kind == CollectiveKind::MakePartial)
    os << ", " << stringifyReductionKind(reduction);
  if (kind == CollectiveKind::Permute) {
    os << ", pairs [";
    for (size_t i = 0; i < pairs.size(); ++i)
      os << (i ? ", " : "") << pairs[i].first << "->" << pairs[i].second;
    os << "]";
  }
  os << "): " << before.str(mesh) << " -> " << after.str(mesh);
  return os.str();
}
