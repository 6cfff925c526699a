// rigel.BakeSummary: the solver statistics rig:bake returns (read-only fields, as in
// docs/lua/rigel.lua), rigel.bake_summary{...} for scripts that bake their own way, and
// ToBakeSummary, which reads either for `rigel bake`'s report.
#include <array>
#include <iterator>
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
const char* const kSummaryFields[] = {"frames",
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
const luaL_Reg kSummaryMethods[] = {{nullptr, nullptr}};
const luaL_Reg kSummaryMeta[] = {{"__tostring", w_Summary_tostring}, {nullptr, nullptr}};

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
  PushBox<BakeSummaryBox>(L, kBakeSummaryType, BakeSummaryBox{summary});
}

void OpenBakeSummary(lua_State* L) {
  RegisterType(L, {kBakeSummaryType, kSummaryMethods, kSummaryGetters.data(), kSummaryMeta, nullptr,
                   nullptr, nullptr});
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
