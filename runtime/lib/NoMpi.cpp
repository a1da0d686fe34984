//===- NoMpi.cpp - Stand-ins when the runtime is built without MPI --------===//

#include "autoshard/Runtime/Communicator.h"

using namespace autoshard;
using namespace autoshard::rt;

bool autoshard::rt::isMpiAvailable() { return false; }

std::unique_ptr<Communicator>
autoshard::rt::createMpiCommunicator(const DeviceMesh &mesh) {
  if (mesh.getNumDevices() == 1)
    return createLocalCommunicator(mesh);
  throw Error("this runtime was built without MPI (AUTOSHARD_ENABLE_MPI=OFF); "
              "it can only run one-device meshes");
}
