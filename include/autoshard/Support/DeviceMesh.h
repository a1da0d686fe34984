//===- DeviceMesh.h - Logical device mesh with named axes -------*- C++ -*-===//
//
// The MLIR-free description of a logical device mesh. The compiler's
// `#dist.mesh` attribute converts to it, and the runtime uses it directly so
// it can be embedded without MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef AUTOSHARD_SUPPORT_DEVICEMESH_H
#define AUTOSHARD_SUPPORT_DEVICEMESH_H

#include "autoshard/Support/AxesRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autoshard {

/// One named mesh axis. Link figures of zero mean "use the cost model's
/// default for this axis".
struct MeshAxis {
  std::string name;
  int64_t size = 1;
  double bandwidthGBps = 0.0;
  double latencyUs = 0.0;
};

/// A row-major logical mesh: axis 0 is the most major. Position `p` in the
/// mesh is held by device `deviceIds[p]` (identity when no ids are given).
class DeviceMesh {
public:
  DeviceMesh() = default;
  explicit DeviceMesh(std::vector<MeshAxis> axes,
                      std::vector<int64_t> deviceIds = {});

  /// Parses a command-line mesh such as "dp=2,mp=4" (axis order = major to
  /// minor). Returns std::nullopt and sets `error` on malformed input.
  static std::optional<DeviceMesh> parse(std::string_view spec,
                                         std::string &error);

  int64_t getNumAxes() const { return static_cast<int64_t>(axes.size()); }
  const MeshAxis &getAxis(int64_t i) const { return axes[i]; }
  const std::vector<MeshAxis> &getAxes() const { return axes; }
  const std::vector<int64_t> &getDeviceIds() const { return deviceIds; }
  int64_t getAxisSize(int64_t i) const { return axes[i].size; }
  int64_t getNumDevices() const;
  std::optional<int64_t> getAxisIndex(std::string_view name) const;

  /// Mesh coordinate of linear position `pos` (row-major).
  std::vector<int64_t> getCoordinate(int64_t pos) const;
  /// Linear position of a mesh coordinate.
  int64_t getPosition(const std::vector<int64_t> &coord) const;
  /// Device id held at a mesh position.
  int64_t getDeviceId(int64_t pos) const;
  /// Mesh position of a device id, if the device is in the mesh.
  std::optional<int64_t> getPositionOfDevice(int64_t deviceId) const;

  /// Positions of the devices that share `pos`'s coordinate on every axis not
  /// in `groupAxes`, ordered by their coordinate on `groupAxes` (the first
  /// listed axis is the most major). This is the communicator of a collective
  /// over `groupAxes`.
  std::vector<int64_t> getGroup(int64_t pos, AxesRef groupAxes) const;
  /// Index of `pos` inside getGroup(pos, groupAxes).
  int64_t getIndexInGroup(int64_t pos, AxesRef groupAxes) const;
  /// Product of the sizes of `axisList`.
  int64_t getGroupSize(AxesRef axisList) const;

  /// Checks names are unique and non-empty, sizes positive, device ids a
  /// permutation-free list of the right length. Returns an error or "".
  std::string validate() const;

  bool operator==(const DeviceMesh &other) const;
  std::string str() const;

private:
  std::vector<MeshAxis> axes;
  std::vector<int64_t> deviceIds;
};

} // namespace autoshard

#endif // AUTOSHARD_SUPPORT_DEVICEMESH_H
