//===- NoCuda.cpp - Stand-ins when the runtime is built without CUDA ------===//

#include "autoshard/Runtime/CudaBackend.h"

using namespace autoshard;
using namespace autoshard::rt;

static const char *const kNoCuda =
    "this runtime was built without CUDA (AUTOSHARD_ENABLE_CUDA=OFF, or no "
    "toolkit at /usr/local/cuda when it was configured)";

bool autoshard::rt::isCudaAvailable() { return false; }
std::string autoshard::rt::getCudaUnavailableReason() { return kNoCuda; }
int autoshard::rt::getCudaDeviceCount() { return 0; }
int autoshard::rt::pickCudaDevice(int64_t) { return 0; }

std::unique_ptr<Backend> autoshard::rt::createCudaBackend(int) {
  throw Error(std::string("cannot use the CUDA backend: ") + kNoCuda);
}

std::unique_ptr<Communicator>
autoshard::rt::createNcclCommunicator(const DeviceMesh &, Backend &, bool) {
  throw Error(std::string("cannot use NCCL: ") + kNoCuda);
}

std::unique_ptr<Communicator>
autoshard::rt::createNcclCommunicator(const DeviceMesh &mesh,
                                      Backend &backend) {
  return createNcclCommunicator(mesh, backend, true);
}
