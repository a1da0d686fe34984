# -*- Python -*-
# lit configuration for autoshard's IR, tool and multi-rank tests.
import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "autoshard"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".onnx-test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Unit", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.autoshard_obj_root, "test")

path = [config.autoshard_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
config.environment["PATH"] = os.pathsep.join(path)
# OpenMPI refuses root and oversubscription unless told; tests run as root in CI.
for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
    config.environment[var] = "1"
config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
config.environment["PRTE_MCA_rmaps_default_mapping_policy"] = ":oversubscribe"
# Compiled kernels (autoshard-run --kernels) are cached inside the build tree,
# not in the user's ~/.cache; tests that need a fresh cache set their own.
config.environment["AUTOSHARD_KERNEL_CACHE"] = os.path.join(
    config.autoshard_obj_root, "test", "kernel-cache")
# AUTOSHARD_KERNELS=compiled (or AUTOSHARD_COMPILE_THRESHOLD=N) runs the
# suite with other defaults for autoshard-run --kernels / --compile-threshold.
# By default the suite compiles only loop nests of 4096 points or more (the
# tools compile every one): most tests run a program once, where compiling
# its small nests would cost more than interpreting them; test/Runtime/
# kernels.mlir, unittests/Kernels and AUTOSHARD_COMPILE_THRESHOLD=1 cover them.
config.environment["AUTOSHARD_COMPILE_THRESHOLD"] = "4096"
for var in ("AUTOSHARD_KERNELS", "AUTOSHARD_COMPILE_THRESHOLD"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%autoshard_src", config.autoshard_src_root))
config.substitutions.append(("%autoshard_bin", config.autoshard_tools_dir))
config.substitutions.append(("%autoshard_obj", config.autoshard_obj_root))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
# mpirun runs under scripts/mpirun_bounded.py: a bound on the whole job, and an
# end to Open MPI 4.1's mpirun when it deadlocks in its own shutdown after every
# rank has exited (ompi#3380; about 1 in 20 failing jobs on a loaded machine),
# reported as a plain exit status rather than a SIGKILL that lit's `not` would
# read as a crash.
config.substitutions.append(
    ("%mpirun", f"{sys.executable} {config.autoshard_src_root}/scripts/mpirun_bounded.py "
                "300 mpirun --allow-run-as-root --oversubscribe"))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))

if config.mpi_enabled and shutil.which("mpirun"):
    config.available_features.add("mpi")
if config.cuda_enabled:
    config.available_features.add("cuda")
    # GPU tests (test/Runtime/cuda): cuda-gpu when nvidia-smi lists a GPU,
    # cuda-gpus-N when it lists at least N (NCCL needs one GPU per rank).
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                 text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    gpus = sum(1 for line in listing.splitlines() if line.startswith("GPU "))
    if gpus:
        config.available_features.add("cuda-gpu")
    for n in (2, 4, 8):
        if gpus >= n:
            config.available_features.add("cuda-gpus-%d" % n)
if config.onnx_enabled:
    config.available_features.add("onnx")
# More than one CPU for this process (as LLVM's thread pool counts them): a
# pass that may use threads must then use them (test/Propagate/threads.test).
if len(os.sched_getaffinity(0)) > 1:
    config.available_features.add("multicore")
if shutil.which("mlir-opt", path=config.llvm_tools_dir):
    config.available_features.add("upstream-mlir-opt")
