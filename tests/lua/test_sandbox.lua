-- The rigel run sandbox (this test runs without --allow-io): no process spawning, no C modules,
-- no binary chunks, files only under the paths named on the command line and --out.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]

t.run({
  disabled_functions = function()
    t.raises("os.execute is disabled by the sandbox", "os.execute", os.execute, "true")
    t.raises("io.popen is disabled by the sandbox", "io.popen", io.popen, "ls")
    t.raises("package.loadlib is disabled by the sandbox", "package.loadlib", package.loadlib,
      "libc.so.6", "puts")
    t.raises("os.exit is disabled by the sandbox", "os.exit", os.exit, 0)
    t.eq(debug.getupvalue, nil, "debug library reduced to traceback")
    t.ok(type(debug.traceback) == "function", "debug.traceback kept")
  end,

  file_access = function()
    t.raises("access to '/etc/passwd' denied by the sandbox", "io.open outside", io.open,
      "/etc/passwd")
    t.raises("denied by the sandbox", "io.lines outside", io.lines, "/etc/passwd")
    t.raises("denied by the sandbox", "loadfile outside", loadfile, "/etc/passwd")
    t.raises("denied by the sandbox", "dofile outside", dofile, "/etc/passwd")
    t.raises("denied by the sandbox", "os.remove outside", os.remove, "/tmp/never")
    t.raises("denied by the sandbox", "rigel.load outside", rigel.load, "/etc/passwd")
    t.raises("denied by the sandbox", "escaping with ..", io.open, arg.out .. "/../../x", "w")
    local f = assert(io.open(arg.out .. "/written.txt", "w"))
    f:write("hello")
    f:close()
    t.eq(io.open(arg.out .. "/written.txt"):read("a"), "hello", "the output folder is writable")
    local skel = rigel.load(dir .. "/fixtures/chain.bvh").skeleton
    t.eq(skel.num_joints, 5, "files under a folder named on the command line are readable")
    t.raises("denied by the sandbox", "saving outside", rigel.clip(skel, 1).save,
      rigel.clip(skel, 1), "/tmp/rigel_sandbox_escape.bvh")
  end,

  chunks_and_modules = function()
    local ok = load(string.dump(function() return 1 end))
    t.eq(ok, nil, "binary chunks are refused")
    t.eq(load("return 1 + 1")(), 2, "text chunks load")
    t.raises("module 'lfs' not found", "no C modules", require, "lfs")
    t.eq(package.cpath, "", "cpath emptied")
    t.ok(require("harness") == t, "Lua modules next to the script load")
  end,
})
