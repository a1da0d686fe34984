//===- DeviceMesh.cpp - Logical device mesh with named axes ---------------===//

#include "autoshard/Support/DeviceMesh.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

using namespace autoshard;

/// The most devices a mesh may have (all axes together, so also per axis).
static constexpr int64_t kMaxDevices = int64_t(1) << 20;

DeviceMesh::DeviceMesh(std::vector<MeshAxis> axes,
                       std::vector<int64_t> deviceIds)
    : axes(std::move(axes)), deviceIds(std::move(deviceIds)) {}

std::optional<DeviceMesh> DeviceMesh::parse(std::string_view spec,
                                           std::string &error) {
  std::vector<MeshAxis> axes;
  std::string_view rest = spec;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      error = "mesh axis '" + std::string(item) +
              "' must look like NAME=SIZE (e.g. dp=2,mp=4)";
      return std::nullopt;
    }
    MeshAxis axis;
    axis.name = std::string(item.substr(0, eq));
    std::string size(item.substr(eq + 1));
    char *end = nullptr;
    long long v = std::strtoll(size.c_str(), &end, 10);
    if (!end || *end != '\0') {
      error = "mesh axis '" + axis.name + "' has a non-integer size '" + size +
              "'";
      return std::nullopt;
    }
    axis.size = v;
    axes.push_back(axis);
  }
  if (axes.empty()) {
    error = "mesh is empty; expected e.g. dp=2,mp=4";
    return std::nullopt;
  }
  DeviceMesh mesh(std::move(axes));
  error = mesh.validate();
  if (!error.empty())
    return std::nullopt;
  return mesh;
}

int64_t DeviceMesh::getNumDevices() const {
  int64_t n = 1;
  for (const MeshAxis &a : axes)
    n *= a.size;
  return n;
}

std::optional<int64_t> DeviceMesh::getAxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return static_cast<int64_t>(i);
  return std::nullopt;
}

std::vector<int64_t> DeviceMesh::getCoordinate(int64_t pos) const {
  std::vector<int64_t> coord(axes.size());
  for (int64_t i = getNumAxes() - 1; i >= 0; --i) {
    coord[i] = pos % axes[i].size;
    pos /= axes[i].size;
  }
  return coord;
}

int64_t DeviceMesh::getPosition(const std::vector<int64_t> &coord) const {
  int64_t pos = 0;
  for (size_t i = 0; i < axes.size(); ++i)
    pos = pos * axes[i].size + coord[i];
  return pos;
}

int64_t DeviceMesh::getDeviceId(int64_t pos) const {
  return deviceIds.empty() ? pos : deviceIds[pos];
}

std::optional<int64_t> DeviceMesh::getPositionOfDevice(int64_t deviceId) const {
  if (deviceIds.empty()) {
    if (deviceId >= 0 && deviceId < getNumDevices())
      return deviceId;
    return std::nullopt;
  }
  auto it = std::find(deviceIds.begin(), deviceIds.end(), deviceId);
  if (it == deviceIds.end())
    return std::nullopt;
  return it - deviceIds.begin();
}

int64_t DeviceMesh::getGroupSize(AxesRef axisList) const {
  int64_t n = 1;
  for (int64_t a : axisList)
    n *= axes[a].size;
  return n;
}

std::vector<int64_t> DeviceMesh::getGroup(int64_t pos,
                                          AxesRef groupAxes) const {
  std::vector<int64_t> base = getCoordinate(pos);
  int64_t n = getGroupSize(groupAxes);
  std::vector<int64_t> group;
  group.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    // Decompose k row-major over groupAxes (first listed = most major).
    int64_t rest = k;
    std::vector<int64_t> coord = base;
    for (int64_t i = static_cast<int64_t>(groupAxes.size()) - 1; i >= 0; --i) {
      int64_t a = groupAxes[i];
      coord[a] = rest % axes[a].size;
      rest /= axes[a].size;
    }
    group.push_back(getPosition(coord));
  }
  return group;
}

int64_t DeviceMesh::getIndexInGroup(int64_t pos, AxesRef groupAxes) const {
  std::vector<int64_t> coord = getCoordinate(pos);
  int64_t idx = 0;
  for (int64_t a : groupAxes)
    idx = idx * axes[a].size + coord[a];
  return idx;
}

std::string DeviceMesh::validate() const {
  std::set<std::string> seen;
  for (const MeshAxis &a : axes) {
    if (a.name.empty())
      return "mesh axis name must not be empty";
    if (!seen.insert(a.name).second)
      return "mesh axis '" + a.name + "' is declared twice";
    if (a.size < 1)
      return "mesh axis '" + a.name + "' must have a positive size, got " +
             std::to_string(a.size);
    if (a.bandwidthGBps < 0 || a.latencyUs < 0)
      return "mesh axis '" + a.name + "' has a negative link figure";
  }
  // Bound the device count before anything multiplies sizes: a product past
  // int64 wraps (and divides by zero later), and the planners enumerate
  // groups of the mesh, so even an unused huge axis costs time and memory.
  int64_t devices = 1;
  for (const MeshAxis &a : axes) {
    if (a.size > kMaxDevices || devices > kMaxDevices / a.size)
      return "mesh " + str() + " has more than " + std::to_string(kMaxDevices) +
             " devices" +
             (a.size > kMaxDevices ? " on axis '" + a.name + "' alone" : "") +
             "; autoshard supports at most that many";
    devices *= a.size;
  }
  if (!deviceIds.empty()) {
    if (static_cast<int64_t>(deviceIds.size()) != getNumDevices())
      return "mesh has " + std::to_string(getNumDevices()) +
             " positions but " + std::to_string(deviceIds.size()) +
             " device ids";
    std::set<int64_t> ids(deviceIds.begin(), deviceIds.end());
    if (ids.size() != deviceIds.size())
      return "mesh device ids must be distinct";
    if (*ids.begin() < 0)
      return "mesh device ids must be non-negative";
  }
  return "";
}

bool DeviceMesh::operator==(const DeviceMesh &other) const {
  if (axes.size() != other.axes.size() || deviceIds != other.deviceIds)
    return false;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name != other.axes[i].name || axes[i].size != other.axes[i].size)
      return false;
  return true;
}

std::string DeviceMesh::str() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < axes.size(); ++i)
    os << (i ? ", " : "") << axes[i].name << "=" << axes[i].size;
  os << "]";
  return os.str();
}
