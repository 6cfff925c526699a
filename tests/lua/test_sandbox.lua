-- The rigel run sandbox (this test runs without --allow-io): no process spawning, no C modules,
-- no binary chunks, files readable only under the paths named on the command line and --out,
-- writable only under --out; numbers are not paths; os.getenv and package.searchpath see nothing
-- outside. Also run with RIGEL_CONFINEMENT=none (the Lua checks alone).
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

  numbers_are_not_paths = function()
    -- Lua would turn 1337 into the file name "1337" in the working folder, past a string check.
    -- (Called through pcall, Lua names the function by its global name, 'io.open'.)
    t.raises("bad argument #1 to 'io.open' (string expected, got number)", "io.open(1337)", io.open,
      1337)
    t.raises("bad argument #1 to 'io.open' (string expected, got number)", "io.open(77, 'w')",
      io.open, 77, "w")
    t.raises("bad argument #1 to 'os.remove' (string expected, got number)", "os.remove(42)",
      os.remove, 42)
    t.raises("bad argument #1 to 'os.rename' (string expected, got number)", "os.rename(1337, 4242)",
      os.rename, 1337, 4242)
    t.raises("bad argument #2 to 'os.rename' (string expected, got number)", "os.rename(out, 4242)",
      os.rename, arg.out .. "/written.txt", 4242)
    t.raises("bad argument #1 to 'io.lines' (string expected, got number)", "io.lines(5)", io.lines, 5)
    t.raises("bad argument #1 to 'io.input' (string expected, got number)", "io.input(5)", io.input, 5)
    t.raises("bad argument #1 to 'io.output' (string expected, got number)", "io.output(5)",
      io.output, 5)
    t.raises("bad argument #1 to 'loadfile' (string expected, got number)", "loadfile(5)",
      loadfile, 5)
    t.raises("bad argument #1 to 'dofile' (string expected, got number)", "dofile(5)", dofile, 5)
    local clip = rigel.load(dir .. "/fixtures/chain.bvh"):clip()
    t.raises("bad argument #1 to 'rigel.load' (string expected, got number)", "rigel.load(1337)",
      rigel.load, 1337)
    t.raises("bad argument #1 to 'rigel.save' (string expected, got number)", "rigel.save(42, c)",
      rigel.save, 42, clip)
    t.raises("(string expected, got number)", "clip:save(7)", clip.save, clip, 7)
  end,

  named_paths_are_read_only = function()
    -- Paths named on the command line are inputs: readable, never written; --out is writable.
    local input = dir .. "/fixtures/chain.bvh"
    t.ok(io.open(input, "r"), "an input is readable")
    t.raises("writing '" .. input .. "' denied by the sandbox", "io.open(input, 'a')", io.open,
      input, "a")
    t.raises("denied by the sandbox", "io.open(input, 'r+')", io.open, input, "r+")
    -- The destructive calls name a file that does not exist, so that a regression fails the
    -- test without damaging the source tree.
    local victim = dir .. "/fixtures/no_such_victim.bvh"
    t.raises("denied by the sandbox", "io.output(named path)", io.output, victim)
    t.raises("denied by the sandbox", "os.remove(named path)", os.remove, victim)
    t.raises("denied by the sandbox", "os.rename(named path, out)", os.rename, victim,
      arg.out .. "/stolen.bvh")
    local skel = rigel.load(input).skeleton
    t.raises("denied by the sandbox", "clip:save over an input", rigel.clip(skel, 1).save,
      rigel.clip(skel, 1), dir .. "/fixtures/overwritten.bvh")
    t.raises("denied by the sandbox", "rigel.save over an input", rigel.save, input,
      rigel.clip(skel, 1))
  end,

  getenv_is_sandboxed = function()
    t.eq(os.getenv("PATH"), nil, "PATH is hidden")
    t.eq(os.getenv("HOME"), nil, "HOME is hidden")
    t.eq(os.getenv("RIGEL_TEST_VISIBLE"), "yes", "RIGEL_* variables are visible")
  end,

  searchpath_reveals_nothing_outside = function()
    -- /etc/passwd exists, /etc/no_such_file does not: the answers must look alike.
    local found, err = package.searchpath("passwd", "/etc/?")
    t.eq(found, nil, "a file outside the sandbox is not found")
    t.eq(err, "no file '/etc/passwd'", "reported like a missing file")
    local _, missing = package.searchpath("no_such_file", "/etc/?")
    t.eq(missing, "no file '/etc/no_such_file'", "a missing file")
    t.eq(package.searchpath("harness", dir .. "/?.lua"), dir .. "/harness.lua",
      "files under the allowed roots are found")
    t.eq(package.searchpath("fixtures.chain", dir .. "/?.bvh"), dir .. "/fixtures/chain.bvh",
      "dots become folder separators")
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
