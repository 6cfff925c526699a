// rigel.BakeSummary: the solver statistics rig:bake returns (read-only fields, as in
// docs/lua/rigel.lua), rigel.bake_summary{...} for scripts that bake their own way, and
// ToBakeSummary, which reads either for `rigel bake`'s report.
#include <array>
#include <iterator>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "bindings/lua/fields.h"
#include "bindings/lua/rig_box.h"
#include "bindings/lua/rigel_module.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

struct BakeSummaryBox {
  ik::BakeSummary summary;
  std::shared_ptr<const ik::BakeRecords> records;  // null for rigel.bake_summary{...}
  bool alive = true;                               // DestroyBox's flag
};

struct BakeRecordsBox {
  std::shared_ptr<const ik::BakeRecords> records;
};

const ik::BakeSummary& CheckSummary(lua_State* L, int arg) {
  return static_cast<BakeSummaryBox*>(CheckBox(L, arg, kBakeSummaryType))->summary;
}

int w_Summary_tostring(lua_State* L) {
  const ik::BakeSummary& s = CheckSummary(L, 1);
  lua_pushfstring(L, "BakeSummary: %d frame(s), %d converged, %d unreachable, residual max %f",
                  s.frames, s.converged, s.unreachable, s.residual_max);
  return 1;
}

// The fields of a rigel.BakeSummary (also the keys rigel.bake_summary{...} accepts) and the
// member behind each, in one order. max_position_error and frames_unreachable are the older names
// of residual_max and unreachable.
constexpr const char* kSummaryFields[] = {"frames",
                                          "converged",
                                          "not_converged",
                                          "unreachable",
                                          "frames_unreachable",
                                          "skipped",
                                          "iterations",
                                          "iterations_max",
                                          "iterations_mean",
                                          "residual_max",
                                          "max_position_error",
                                          "residual_mean",
                                          "max_angle_error",
                                          "worst_frame",
                                          "frames_with_limit_hits",
                                          nullptr};
using S = ik::BakeSummary;
constexpr auto kSummaryMembers = std::make_tuple(
    &S::frames, &S::converged, &S::not_converged, &S::unreachable, &S::unreachable, &S::skipped,
    &S::iterations, &S::iterations_max, &S::iterations_mean, &S::residual_max, &S::residual_max,
    &S::residual_mean, &S::max_angle_error, &S::worst_frame, &S::frames_with_limit_hits);
constexpr size_t kNumSummaryFields = std::tuple_size_v<decltype(kSummaryMembers)>;
static_assert(std::size(kSummaryFields) == kNumSummaryFields + 1);

// Whether two member pointers (of any types) are the same member.
template <auto kA, auto kB>
constexpr bool kSameMember = false;
template <auto kA>
constexpr bool kSameMember<kA, kA> = true;

// Field I of a rigel.BakeSummary as Lua sees it: max_angle_error in degrees, worst_frame 1-based
// (0 = none), counts as integers.
template <size_t I>
int GetSummaryField(lua_State* L) {
  constexpr auto kMember = std::get<I>(kSummaryMembers);
  const auto value = CheckSummary(L, 1).*kMember;
  if constexpr (kSameMember<kMember, &S::max_angle_error>) {
    lua_pushnumber(L, value * kDegPerRad);
  } else if constexpr (kSameMember<kMember, &S::worst_frame>) {
    lua_pushinteger(L, value + 1);
  } else if constexpr (std::is_integral_v<decltype(value)>) {
    lua_pushinteger(L, static_cast<lua_Integer>(value));
  } else {
    lua_pushnumber(L, value);
  }
  return 1;
}

// The getters as RegisterType takes them: {field, GetSummaryField<i>}, then {nullptr, nullptr}.
constexpr auto kSummaryGetters = []<size_t... I>(std::index_sequence<I...>) {
  return std::array<luaL_Reg, kNumSummaryFields + 1>{
      {{kSummaryFields[I], GetSummaryField<I>}..., {nullptr, nullptr}}};
}
(std::make_index_sequence<kNumSummaryFields>());

BakeRecordsBox* PushRecordsBox(lua_State* L);

int w_Summary_records(lua_State* L) {
  // summary:records() -> BakeRecords (nil for a summary made by rigel.bake_summary).
  CheckSummary(L, 1);
  const auto* box = static_cast<BakeSummaryBox*>(lua_touserdata(L, 1));
  if (!box->records) return 0;
  PushRecordsBox(L)->records = box->records;
  return 1;
}

const luaL_Reg kSummaryMethods[] = {{"records", w_Summary_records}, {nullptr, nullptr}};
const luaL_Reg kSummaryMeta[] = {{"__tostring", w_Summary_tostring}, {nullptr, nullptr}};

const ik::BakeRecords& CheckRecords(lua_State* L, int arg) {
  return *static_cast<BakeRecordsBox*>(luaL_checkudata(L, arg, kBakeRecordsType))->records;
}

// #records: the solved frames.
int w_Records_len(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckRecords(L, 1).frames.size()));
  return 1;
}

// records[i] -> {frame = n (1-based clip frame), status = "converged"|..., iterations = n,
// restarts = n, effectors = {name = {position = error, angle = error (degrees), target = {x, y,
// z} as a Vec3, active = bool}}, on_limit = {"Joint.Channel", ...}, swivel_jump = degrees}; nil
// past the end. Built on each access (the records stay in C++).
int w_Records_index(lua_State* L) {
  const ik::BakeRecords& records = CheckRecords(L, 1);
  if (!lua_isinteger(L, 2)) return 0;
  const lua_Integer i = lua_tointeger(L, 2);
  if (i < 1 || i > static_cast<lua_Integer>(records.frames.size())) return 0;
  const ik::FrameRecord& r = records.frames[static_cast<size_t>(i - 1)];
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, r.frame + 1);
  lua_setfield(L, -2, "frame");
  lua_pushstring(L, ik::StatusName(r.status).data());
  lua_setfield(L, -2, "status");
  lua_pushinteger(L, r.iterations);
  lua_setfield(L, -2, "iterations");
  lua_pushinteger(L, r.restarts);
  lua_setfield(L, -2, "restarts");
  lua_createtable(L, 0, static_cast<int>(r.effectors.size()));
  for (const ik::EffectorResidual& e : r.effectors) {
    if (e.task < 0 || e.task >= static_cast<int>(records.effector_names.size())) continue;
    lua_createtable(L, 0, 4);
    lua_pushnumber(L, e.position_error);
    lua_setfield(L, -2, "position");
    lua_pushnumber(L, e.angle_error * kDegPerRad);
    lua_setfield(L, -2, "angle");
    PushVec3(L, e.target);
    lua_setfield(L, -2, "target");
    lua_pushboolean(L, e.active);
    lua_setfield(L, -2, "active");
    lua_setfield(L, -2, records.effector_names[e.task].c_str());
  }
  lua_setfield(L, -2, "effectors");
  lua_createtable(L, static_cast<int>(r.channels_on_limit.size()), 0);
  for (size_t k = 0; k < r.channels_on_limit.size(); ++k) {
    lua_pushinteger(L, r.channels_on_limit[k] + 1);
    lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
  }
  lua_setfield(L, -2, "on_limit");
  lua_pushnumber(L, r.SwivelJumpDegrees());
  lua_setfield(L, -2, "swivel_jump");
  return 1;
}

int w_Records_tostring(lua_State* L) {
  lua_pushfstring(L, "BakeRecords: %d solved frame(s)",
                  static_cast<int>(CheckRecords(L, 1).frames.size()));
  return 1;
}

int w_bake_summary(lua_State* L) {
  // rigel.bake_summary{frames = n, residual_max = r, ...} -> BakeSummary: solver statistics of a
  // bake a script did its own way (for `rigel bake`'s report). Absent fields are 0;
  // iterations_mean defaults to iterations over the solved frames (or over frames).
  CheckTable(L, 1);
  CheckMaxArgs(L, 1);
  CheckOptionKeys(L, 1, kSummaryFields);
  constexpr int kMax = 1 << 30;
  ik::BakeSummary s;
  s.frames = IntegerField(L, 1, "frames", 0, 0, kMax);
  s.converged = IntegerField(L, 1, "converged", 0, 0, kMax);
  s.not_converged = IntegerField(L, 1, "not_converged", 0, 0, kMax);
  s.unreachable = IntegerField(L, 1, "unreachable",
                               IntegerField(L, 1, "frames_unreachable", 0, 0, kMax), 0, kMax);
  s.skipped = IntegerField(L, 1, "skipped", 0, 0, kMax);
  s.iterations = IntegerField(L, 1, "iterations", 0, 0, kMax);
  s.iterations_max = IntegerField(L, 1, "iterations_max", 0, 0, kMax);
  const int per = s.solved() > 0 ? s.solved() : s.frames;
  s.iterations_mean =
      NumberField(L, 1, "iterations_mean", per > 0 ? static_cast<double>(s.iterations) / per : 0.0);
  s.residual_max = NumberField(L, 1, "residual_max", NumberField(L, 1, "max_position_error", 0.0));
  s.residual_mean = NumberField(L, 1, "residual_mean", 0.0);
  s.max_angle_error = NumberField(L, 1, "max_angle_error", 0.0) * kRadPerDeg;
  s.worst_frame = IntegerField(L, 1, "worst_frame", 0, 0, kMax) - 1;
  s.frames_with_limit_hits = IntegerField(L, 1, "frames_with_limit_hits", 0, 0, kMax);
  PushBakeSummary(L, s);
  return 1;
}

}  // namespace

void PushBakeSummary(lua_State* L, const ik::BakeSummary& summary) {
  PushBox<BakeSummaryBox>(L, kBakeSummaryType, BakeSummaryBox{summary, nullptr});
}

namespace {

// Pushes an empty rigel.BakeRecords box (records null) with its metatable: a box whose __gc may
// run at any point after this, whatever raises next.
BakeRecordsBox* PushRecordsBox(lua_State* L) {
  auto* box = static_cast<BakeRecordsBox*>(lua_newuserdatauv(L, sizeof(BakeRecordsBox), 0));
  new (box) BakeRecordsBox{};
  if (luaL_newmetatable(L, kBakeRecordsType)) {
    const luaL_Reg meta[] = {
        {"__len", w_Records_len},
        {"__index", w_Records_index},
        {"__tostring", w_Records_tostring},
        {"__gc",
         [](lua_State* state) {
           static_cast<BakeRecordsBox*>(lua_touserdata(state, 1))->~BakeRecordsBox();
           return 0;
         }},
        {nullptr, nullptr}};
    luaL_setfuncs(L, meta, 0);
  }
  lua_setmetatable(L, -2);
  return box;
}

}  // namespace

ik::BakeRecords* NewBakeRecords(lua_State* L) {
  BakeRecordsBox* box = PushRecordsBox(L);
  ik::BakeRecords* records = nullptr;
  catch_exceptions(L, [&] {
    auto made = std::make_shared<ik::BakeRecords>();
    records = made.get();
    box->records = std::move(made);
  });
  return records;
}

void ShareBakeRecords(lua_State* L, int summary, int records) {
  auto* s = static_cast<BakeSummaryBox*>(TestBox(L, summary, kBakeSummaryType));
  auto* r = static_cast<BakeRecordsBox*>(luaL_testudata(L, records, kBakeRecordsType));
  if (s != nullptr && r != nullptr) s->records = r->records;
}

std::shared_ptr<const ik::BakeRecords> ToBakeRecords(lua_State* L, int idx) {
  if (auto* box = static_cast<BakeSummaryBox*>(TestBox(L, idx, kBakeSummaryType))) {
    return box->records;
  }
  if (auto* box = static_cast<BakeRecordsBox*>(luaL_testudata(L, idx, kBakeRecordsType))) {
    return box->records;
  }
  return nullptr;
}

void OpenBakeSummary(lua_State* L) {
  // __gc: the box shares the bake's records (a shared_ptr) and must release them.
  RegisterType(L, {kBakeSummaryType, kSummaryMethods, kSummaryGetters.data(), kSummaryMeta,
                   DestroyBox<BakeSummaryBox>, nullptr, nullptr});
  lua_pushcfunction(L, w_bake_summary);
  lua_setfield(L, -2, "bake_summary");
}

bool ToBakeSummary(lua_State* L, int idx, ik::BakeSummary* summary, std::string* error) {
  idx = lua_absindex(L, idx);
  if (auto* box = static_cast<BakeSummaryBox*>(TestBox(L, idx, kBakeSummaryType))) {
    *summary = box->summary;
    return true;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    *error =
        std::string("solver statistics: BakeSummary or table expected, got ") + TypeName(L, idx);
    return false;
  }
  // A table: checked by rigel.bake_summary itself, in protected mode.
  lua_pushcfunction(L, w_bake_summary);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char* message = lua_tostring(L, -1);
    *error = std::string("solver statistics: ") + (message != nullptr ? message : "?");
    lua_pop(L, 1);
    return false;
  }
  *summary = static_cast<BakeSummaryBox*>(lua_touserdata(L, -1))->summary;
  lua_pop(L, 1);
  return true;
}

}  // namespace rigel::lua
