#include "importers/bone_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "core/euler.h"

namespace rigel {

namespace {

int LineOf(const std::string& text, std::ptrdiff_t offset) {
  if (offset < 0) return 0;
  const auto end =
      text.begin() + std::min<std::ptrdiff_t>(offset, static_cast<std::ptrdiff_t>(text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
}

}  // namespace

std::string EscapeMarkup(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// "origin:line" of an element, for messages.
std::string Where(const std::string& origin, const std::string& xml, const pugi::xml_node& n) {
  return fmt::format("{}:{}", origin, LineOf(xml, n.offset_debug()));
}

// The root element is <rigel-bone-map>, with known attributes and version 1.
void CheckMapRoot(const pugi::xml_node& root, const std::string& origin, const std::string& xml) {
  if (std::string(root.name()) != "rigel-bone-map") {
    throw ImportError(fmt::format("{}: expected the root element <rigel-bone-map>, found <{}>",
                                  Where(origin, xml, root), root.name()));
  }
  for (const pugi::xml_attribute a : root.attributes()) {
    const std::string name = a.name();
    if (name != "version" && name != "source" && name != "target") {
      throw ImportError(
          fmt::format("{}: unknown attribute '{}' on <rigel-bone-map> (expected "
                      "version, source, target)",
                      Where(origin, xml, root), name));
    }
  }
  if (const pugi::xml_attribute v = root.attribute("version"); v && std::string(v.value()) != "1") {
    throw ImportError(fmt::format("{}: unsupported bone-map version '{}' (expected 1)",
                                  Where(origin, xml, root), v.value()));
  }
}

// A role attribute's value; an unknown one lists the roles.
std::optional<retarget::Role> ParseRoleAttribute(const char* value, const std::string& where) {
  std::optional<retarget::Role> role = retarget::ParseRole(value);
  if (!role) {
    std::string roles;
    for (int r = 0; r < retarget::kRoleCount; ++r) {
      roles += (r ? ", " : "") + std::string(retarget::RoleName(static_cast<retarget::Role>(r)));
    }
    throw ImportError(
        fmt::format("{}: unknown role '{}' (expected one of: {})", where, value, roles));
  }
  return role;
}

// rotate="X Y Z" (degrees, in that Euler order) as a rotation.
Eigen::Quaterniond ParseRotate(const std::string& rotate, EulerOrder euler,
                               const std::string& where) {
  std::istringstream in(rotate);
  in.imbue(std::locale::classic());
  Eigen::Vector3d deg;
  std::string extra;
  if (!(in >> deg.x() >> deg.y() >> deg.z()) || (in >> extra) || !deg.allFinite()) {
    throw ImportError(fmt::format(
        "{}: expected rotate=\"X Y Z\" (three angles in degrees), found '{}'", where, rotate));
  }
  return EulerToQuaternion(euler, deg * kRadPerDeg);
}

// One <bone> element; its target must not be in `targets` yet (added here).
retarget::BoneMapEntry ParseBone(const pugi::xml_node& n, const std::string& origin,
                                 const std::string& xml, std::set<std::string>& targets) {
  retarget::BoneMapEntry e;
  e.line = LineOf(xml, n.offset_debug());
  std::string rotate;
  std::string order = "XYZ";
  bool has_order = false;
  for (const pugi::xml_attribute a : n.attributes()) {
    const std::string name = a.name();
    if (name == "source") {
      e.source = a.value();
    } else if (name == "target") {
      e.target = a.value();
    } else if (name == "rotate") {
      rotate = a.value();
    } else if (name == "order") {
      order = a.value();
      has_order = true;
    } else if (name == "role") {
      e.role = ParseRoleAttribute(a.value(), Where(origin, xml, n));
    } else {
      throw ImportError(fmt::format(
          "{}: unknown attribute '{}' on <bone> (expected source, target, role, rotate, order)",
          Where(origin, xml, n), name));
    }
  }
  if (e.source.empty()) {
    throw ImportError(
        fmt::format("{}: <bone> needs a non-empty source attribute", Where(origin, xml, n)));
  }
  if (e.target.empty()) {
    throw ImportError(
        fmt::format("{}: <bone> needs a non-empty target attribute", Where(origin, xml, n)));
  }
  if (!targets.insert(e.target).second) {
    throw ImportError(
        fmt::format("{}: target joint '{}' is mapped twice", Where(origin, xml, n), e.target));
  }
  const std::optional<EulerOrder> euler = ParseEulerOrder(order);
  if (!euler) {
    throw ImportError(fmt::format("{}: bad order '{}' (expected XYZ, XZY, YXZ, YZX, ZXY or ZYX)",
                                  Where(origin, xml, n), order));
  }
  if (has_order && rotate.empty()) {
    throw ImportError(fmt::format("{}: order given without rotate", Where(origin, xml, n)));
  }
  if (!rotate.empty()) e.offset = ParseRotate(rotate, *euler, Where(origin, xml, n));
  return e;
}

}  // namespace

retarget::BoneMap ParseBoneMap(const std::string& xml, const std::string& origin) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size());
  if (!parsed) {
    throw ImportError(fmt::format("{}:{}: malformed XML: {}", origin, LineOf(xml, parsed.offset),
                                  parsed.description()));
  }
  const pugi::xml_node root = doc.document_element();
  CheckMapRoot(root, origin, xml);
  retarget::BoneMap map;
  map.origin = origin;
  map.source_name = root.attribute("source").value();
  map.target_name = root.attribute("target").value();
  std::set<std::string> targets;
  for (const pugi::xml_node n : root.children()) {
    if (n.type() != pugi::node_element) continue;
    if (std::string(n.name()) != "bone") {
      throw ImportError(fmt::format("{}: unknown element <{}> (expected <bone>)",
                                    Where(origin, xml, n), n.name()));
    }
    map.entries.push_back(ParseBone(n, origin, xml, targets));
  }
  if (map.entries.empty()) {
    throw ImportError(fmt::format("{}: the map has no <bone> element", Where(origin, xml, root)));
  }
  return map;
}

retarget::BoneMap ReadBoneMap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path + ": cannot open bone map");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseBoneMap(text.str(), path);
}

namespace {

// Text that may sit inside an XML comment ("--" may not).
std::string SafeComment(std::string text) {
  for (size_t p = text.find("--"); p != std::string::npos; p = text.find("--")) {
    text.replace(p, 2, "- -");
  }
  return text;
}

}  // namespace

std::string FormatBoneMap(const retarget::BoneMap& map, const std::vector<std::string>& notes) {
  std::string out = "<?xml version=\"1.0\"?>\n";
  out +=
      "<!-- rigel bone map: source joint -> target joint (see docs/retarget.md).\n"
      "     rotate=\"X Y Z\" adds a rotation in degrees in the target joint's space. -->\n";
  for (const std::string& n : notes) out += "<!-- " + SafeComment(n) + " -->\n";
  out += fmt::format("<rigel-bone-map version=\"1\" source=\"{}\" target=\"{}\">\n",
                     EscapeMarkup(map.source_name), EscapeMarkup(map.target_name));
  for (const retarget::BoneMapEntry& e : map.entries) {
    out += fmt::format("  <bone source=\"{}\" target=\"{}\"", EscapeMarkup(e.source),
                       EscapeMarkup(e.target));
    if (e.role) out += fmt::format(" role=\"{}\"", retarget::RoleName(*e.role));
    if (!e.offset.isApprox(Eigen::Quaterniond::Identity(), 1e-12)) {
      const Eigen::Vector3d deg =
          MatrixToEuler(e.offset.toRotationMatrix(), EulerOrder::kXYZ) * kDegPerRad;
      out += fmt::format(" rotate=\"{:.6g} {:.6g} {:.6g}\"", deg.x(), deg.y(), deg.z());
    }
    out += "/>";
    if (!e.comment.empty()) out += "  <!-- " + SafeComment(e.comment) + " -->";
    out += "\n";
  }
  out += "</rigel-bone-map>\n";
  return out;
}

}  // namespace rigel
