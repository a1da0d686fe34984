//===- CudaBackend.h - CUDA/cuBLAS backend and NCCL communicator -*- C++ -*-===//
//
// The GPU side of the runtime. Everything here is declared whether or not
// the runtime was built with CUDA, so tools can offer `--backend cuda`
// unconditionally: without CUDA (or without a visible device) the factories
// throw an rt::Error saying why, and isCudaAvailable() is false.
//
// The CUDA backend keeps tensors in device memory (stream-ordered
// cudaMallocAsync) and queues every kernel and cuBLAS call on one compute
// stream per backend, so the executor never waits on the device except in
// download() and synchronize(); NCCL collectives run on a communication
// stream of their own, ordered with the compute stream by events, so the
// executor overlaps them with independent compute. Its kernels match the CPU
// backend (the reference) element for element; GEMMs go to cuBLASLt with
// FP32 accumulation (f32 in full FP32 unless the instruction asks for TF32;
// bf16/f16 inputs with an f32 result), so f32 results differ from OpenBLAS
// only by summation order.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_RUNTIME_CUDABACKEND_H
#define AUTOSHARD_RUNTIME_CUDABACKEND_H

#include "autoshard/Runtime/Backend.h"
#include "autoshard/Runtime/Communicator.h"

#include <memory>
#include <string>

namespace autoshard::rt {

/// True when the runtime was built with CUDA and at least one device is
/// visible to this process.
bool isCudaAvailable();
/// Why isCudaAvailable() is false ("" when it is true): built without CUDA,
/// no driver, or no device. For skip messages and errors.
std::string getCudaUnavailableReason();
/// Number of visible devices (0 without CUDA).
int getCudaDeviceCount();
/// The device a rank should use: its node-local rank (from the MPI
/// launcher's environment: OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
/// SLURM_LOCALID; else `rank`) modulo the number of visible devices.
int pickCudaDevice(int64_t rank);

/// The CUDA backend on `device` (throws when CUDA is unavailable or the
/// device does not exist).
std::unique_ptr<Backend> createCudaBackend(int device = 0);

/// Collectives through NCCL, one NCCL communicator per mesh-axis group
/// (plus one over the whole mesh for point-to-point), each bootstrapped by
/// broadcasting an ncclUniqueId over an MPI_Comm_split of the group. Buffers
/// are device pointers of `cudaBackend`, whose stream the collectives are
/// queued on; `cudaBackend` must be a CUDA backend and outlive the
/// communicator. Host-side services (gatherToRoot, barrier, abort) go over
/// MPI. In an MPI job (MPI initialised) the world size must equal the mesh
/// size, as for createMpiCommunicator, and the constructor is collective
/// over all ranks; a single process without MPI runs one-device meshes.
/// With `overlap` the collectives run on a communication stream of their
/// own and the communicator is asynchronous (Communicator::isAsynchronous:
/// callers outside the Executor wait with waitFor(*recordCompletion())
/// before reading a result); without, they queue on the backend's stream.
std::unique_ptr<Communicator> createNcclCommunicator(const DeviceMesh &mesh,
                                                     Backend &cudaBackend,
                                                     bool overlap);
/// The same with overlap on unless the environment sets
/// AUTOSHARD_NCCL_OVERLAP=0 (for comparisons).
std::unique_ptr<Communicator> createNcclCommunicator(const DeviceMesh &mesh,
                                                     Backend &cudaBackend);

} // namespace autoshard::rt

#endif // AUTOSHARD_RUNTIME_CUDABACKEND_H
