// rig:constraint's options: a Lua table read into a core constraint (core/constraints/stack.h).
#ifndef RIGEL_BINDINGS_LUA_WRAP_CONSTRAINT_H_
#define RIGEL_BINDINGS_LUA_WRAP_CONSTRAINT_H_

#include "bindings/lua/runtime.h"
#include "core/constraints/stack.h"

namespace rigel::lua {

// Reads the kind name at `kind_arg` and the options table at `opt_arg` (see docs/constraints.md)
// into a constraint on `skeleton` and appends it to `stack`; after_stage defaults to
// `default_after_stage`. Returns the new entry's 1-based index (the handle). Raises a Lua
// argument error on a wrong kind, an unknown option (listing the kind's options), a bad value, or
// a constraint that fails its core Validate (then `stack` is unchanged).
int AddConstraint(lua_State* L, int kind_arg, int opt_arg, const Skeleton& skeleton,
                  int default_after_stage, constraints::Stack* stack);

// AddConstraint of a twist (rig:twist): the options table at `opt_arg`.
int AddTwist(lua_State* L, int opt_arg, const Skeleton& skeleton, int default_after_stage,
             constraints::Stack* stack);

// AddConstraint of the kind at row `kind` of the kinds table (core/constraints/kinds.h).
int AddConstraintOfKind(lua_State* L, int kind, int opt_arg, const Skeleton& skeleton,
                        int default_after_stage, constraints::Stack* stack);

// Validates `entry` and appends it to `stack` (then `entry` is left empty); returns its 1-based
// index, or raises the Validate error as an argument error on `opt_arg` (`stack` unchanged).
int Append(lua_State* L, int opt_arg, const Skeleton& skeleton, constraints::Entry& entry,
           constraints::Stack* stack);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_WRAP_CONSTRAINT_H_
