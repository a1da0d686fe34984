//===- MpiGroups.h - MPI sub-communicators of mesh-axis groups --*- C++ -*-===//
//
// Shared by the MPI communicator (its collectives run on these) and the NCCL
// communicator (it broadcasts each group's ncclUniqueId over them), so both
// number a group's members the same way. Only for builds with MPI.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_LIB_MPIGROUPS_H
#define AUTOSHARD_RUNTIME_LIB_MPIGROUPS_H

#include "autoshard/Runtime/Communicator.h"

#include <mpi.h>

namespace autoshard::rt {

/// The communicator of the group over `axes` that holds mesh position `pos`
/// (collective over MPI_COMM_WORLD; the caller frees it). The colour is the
/// group's first position and the key the in-group index, so MPI rank k in
/// it is member k of DeviceMesh::getGroup.
inline MPI_Comm splitGroupComm(const DeviceMesh &mesh, int64_t pos,
                               const AxisList &axes) {
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(mesh.getGroup(pos, axes)[0]),
                 static_cast<int>(mesh.getIndexInGroup(pos, axes)), &comm);
  return comm;
}

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_LIB_MPIGROUPS_H
