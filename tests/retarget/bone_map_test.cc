// Bone-map XML: parsing, every error with its file and line, and the printed form read back.
#include "importers/bone_map.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/euler.h"
#include "support/import_error_of.h"
#include "test_util.h"

namespace rigel {
namespace {

// The message of the error parsing `xml` (as "m.xml") raises.
std::string ErrorOf(const std::string& xml) {
  return testing::ImportErrorOf([&] { ParseBoneMap(xml, "m.xml"); });
}

TEST(BoneMap, Parses) {
  const retarget::BoneMap map = ParseBoneMap(
      "<?xml version=\"1.0\"?>\n"
      "<rigel-bone-map version=\"1\" source=\"a.bvh\" target=\"b.bvh\">\n"
      "  <!-- comment -->\n"
      "  <bone source=\"Hips\" target=\"root\" role=\"hips\"/>\n"
      "  <bone source=\"LeftArm\" target=\"upperarm01.L\" rotate=\"0 0 90\"/>\n"
      "</rigel-bone-map>\n",
      "m.xml");
  ASSERT_EQ(map.entries.size(), 2u);
  EXPECT_EQ(map.origin, "m.xml");
  EXPECT_EQ(map.source_name, "a.bvh");
  EXPECT_EQ(map.entries[0].target, "root");
  EXPECT_EQ(map.entries[0].role, retarget::Role::kHips);
  EXPECT_EQ(map.entries[0].line, 4);
  EXPECT_EQ(map.entries[1].line, 5);
  EXPECT_FALSE(map.entries[1].role);
  const Eigen::Quaterniond z90(Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitZ()));
  EXPECT_NEAR(map.entries[1].offset.angularDistance(z90), 0.0, 1e-12);
}

TEST(BoneMap, ErrorsNameFileAndLine) {
  const std::string head = "<rigel-bone-map version=\"1\">\n";
  EXPECT_EQ(ErrorOf("<rigel-bone-map>\n<bone source=\"a\" target=\"b\">\n</rigel-bone-map>"),
            "m.xml:3: malformed XML: Start-end tags mismatch");
  EXPECT_EQ(ErrorOf("<map/>"), "m.xml:1: expected the root element <rigel-bone-map>, found <map>");
  EXPECT_EQ(ErrorOf("<rigel-bone-map version=\"2\"/>"),
            "m.xml:1: unsupported bone-map version '2' (expected 1)");
  EXPECT_EQ(ErrorOf(head + "</rigel-bone-map>"), "m.xml:1: the map has no <bone> element");
  EXPECT_EQ(ErrorOf(head + "<joint source=\"a\" target=\"b\"/></rigel-bone-map>"),
            "m.xml:2: unknown element <joint> (expected <bone>)");
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\"/></rigel-bone-map>"),
            "m.xml:2: <bone> needs a non-empty target attribute");
  EXPECT_EQ(ErrorOf(head + "<bone target=\"b\"/></rigel-bone-map>"),
            "m.xml:2: <bone> needs a non-empty source attribute");
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\" target=\"b\" scale=\"2\"/></rigel-bone-map>"),
            "m.xml:2: unknown attribute 'scale' on <bone> (expected source, target, role, "
            "rotate, order)");
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\" target=\"b\" rotate=\"1 2\"/></rigel-bone-map>"),
            "m.xml:2: expected rotate=\"X Y Z\" (three angles in degrees), found '1 2'");
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\" target=\"b\" rotate=\"1,5 2 3\"/></rigel-bone-map>"),
            "m.xml:2: expected rotate=\"X Y Z\" (three angles in degrees), found '1,5 2 3'");
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\" target=\"b\" rotate=\"1 2 3\" order=\"XXY\"/>"
                           "</rigel-bone-map>"),
            "m.xml:2: bad order 'XXY' (expected XYZ, XZY, YXZ, YZX, ZXY or ZYX)");
  EXPECT_NE(ErrorOf(head + "<bone source=\"a\" target=\"b\" role=\"Tail\"/></rigel-bone-map>")
                .find("m.xml:2: unknown role 'Tail' (expected one of: Hips, Chest,"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(head + "<bone source=\"a\" target=\"b\"/>\n<bone source=\"c\" target=\"b\"/>"
                           "</rigel-bone-map>"),
            "m.xml:3: target joint 'b' is mapped twice");
}

TEST(BoneMap, MissingFile) {
  EXPECT_EQ(testing::ImportErrorOf([] { ReadBoneMap("/nonexistent/map.xml"); }),
            "/nonexistent/map.xml: cannot open bone map");
}

TEST(BoneMap, FormatReadsBack) {
  retarget::BoneMap map;
  map.source_name = "a&b.bvh";
  map.entries.push_back(
      {"Hips", "root", Eigen::Quaterniond::Identity(), retarget::Role::kHips, 0, "why -- here"});
  map.entries.push_back({"LeftArm", "upperarm01.L",
                         Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitX())),
                         std::nullopt, 0, ""});
  const std::string text = FormatBoneMap(map, {"note -- with dashes"});
  testing::TempDir dir;
  { std::ofstream(dir.file("m.xml")) << text; }
  const retarget::BoneMap back = ReadBoneMap(dir.file("m.xml"));
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.source_name, "a&b.bvh");
  EXPECT_EQ(back.entries[0].role, retarget::Role::kHips);
  EXPECT_EQ(back.entries[1].target, "upperarm01.L");
  EXPECT_NEAR(back.entries[1].offset.angularDistance(map.entries[1].offset), 0.0, 1e-6);
}

}  // namespace
}  // namespace rigel
