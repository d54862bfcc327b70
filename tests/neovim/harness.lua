-- Headless Neovim drives ai-eval-lsp through the plugin in neovim/, as a user's config would, and
-- writes what a user would see to a JSON file that tests/test_neovim.py asserts on.
-- Env: AI_EVAL_PLUGIN (the plugin folder), AI_EVAL_SERVER (JSON list: the server command),
-- AI_EVAL_OUT (result JSON), AI_EVAL_MODE ("setup"/"enable"), AI_EVAL_PART: "workspace" (with
-- AI_EVAL_WORKSPACE, a project with a `.git`; AI_EVAL_PATHS, JSON {relative path: expects
-- diagnostics}; AI_EVAL_PROBES, JSON list of paths whose root is asked of the plugin) or "drupal"
-- (with AI_EVAL_SITE, a copy of the Drupal fixture site). AI_EVAL_SITE_DATABASE names the site
-- database of the workspace part, and AI_EVAL_SITE_INSERT (a JSON command) inserts a site's run
-- into it that regressed.
-- Every step is awaited on a definite event (a notification, diagnostics that appear or go);
-- a step that fails records why and the run goes on, so one failure does not hide the others.
local out = os.getenv("AI_EVAL_OUT")
local part = os.getenv("AI_EVAL_PART")
local workspace = os.getenv("AI_EVAL_WORKSPACE")
local site = os.getenv("AI_EVAL_SITE")
local server = vim.fn.json_decode(os.getenv("AI_EVAL_SERVER"))
local version = vim.version()
local result = {
  nvim = string.format("%d.%d.%d", version.major, version.minor, version.patch),
  notes = {}, role_events = {}, errors = {}, paths = {}, roots = {}, watch = {}, drupal = {},
}

local function finish(code)
  local file = assert(io.open(out, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd(code == 0 and "qall!" or ("cquit! " .. code))
end
vim.defer_fn(function() result.errors.watchdog = "the harness took too long"; finish(3) end, 100000)

local function step(name, fn)
  local ok, err = pcall(fn)
  if not ok then
    result.errors[name] = tostring(err)
  end
end

local function wait(ms, condition)
  return vim.wait(ms, condition, 20)
end

-- --- what the user sees: notifications, roles, diagnostics ----------------------------------------

vim.notify = function(message, level) table.insert(result.notes, { message = message, level = level }) end

local roles = {} -- bufnr -> last role the plugin announced ("null" for none)
vim.api.nvim_create_autocmd("User", {
  pattern = "AiEvalRole",
  callback = function()
    local bufnr = vim.api.nvim_get_current_buf()
    local role = vim.b[bufnr].ai_eval_role
    roles[bufnr] = role or "null"
    table.insert(result.role_events, { file = vim.api.nvim_buf_get_name(bufnr), role = role or vim.NIL })
  end,
})

-- How many times the server's diagnostics for a uri reached Neovim (pushed or pulled), so "no
-- error" can be read once the server has answered rather than after a sleep.
local arrivals = {}
for _, method in ipairs({ "textDocument/publishDiagnostics", "textDocument/diagnostic" }) do
  local original = vim.lsp.handlers[method]
  if original then
    vim.lsp.handlers[method] = function(err, res, ctx, config)
      local value = original(err, res, ctx, config)
      local uri = (type(res) == "table" and res.uri) or (ctx.params and ctx.params.textDocument and ctx.params.textDocument.uri)
      if uri then
        arrivals[uri] = (arrivals[uri] or 0) + 1
      end
      return value
    end
  end
end

local function diagnostics(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, { code = d.code, lnum = d.lnum, col = d.col, severity = d.severity, source = d.source, message = d.message })
  end
  return found
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function errors_on(bufnr, lnum)
  local found = 0
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.severity == vim.diagnostic.severity.ERROR and (lnum == nil or d.lnum == lnum) then
      found = found + 1
    end
  end
  return found
end

local function client_of(bufnr)
  local found = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(found) do return client end
end

-- Show a file; one already loaded is shown as it is (`:edit` would reload it from disk).
local function edit(path, command)
  local loaded = vim.fn.bufnr(vim.fn.fnamemodify(path, ":p"))
  if loaded ~= -1 and vim.api.nvim_buf_is_loaded(loaded) then
    vim.cmd((command == "split" and "sbuffer " or "buffer ") .. loaded)
  else
    vim.cmd((command or "edit") .. " " .. vim.fn.fnameescape(path))
  end
  return vim.api.nvim_get_current_buf()
end

local function line_of(bufnr, pattern)
  for index, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:match(pattern) then return index - 1 end
  end
  error("no line matches " .. pattern)
end

-- Replace the first line matching `pattern` with `text`; return the old line to put it back.
local function replace_line(bufnr, pattern, text)
  local lnum = line_of(bufnr, pattern)
  local old = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum + 1, false, text and { text } or {})
  return lnum, old
end

local function write(bufnr)
  vim.api.nvim_buf_call(bufnr, function() vim.cmd("write") end)
end

-- --- start the plugin as a user would ------------------------------------------------------------

vim.opt.runtimepath:prepend(os.getenv("AI_EVAL_PLUGIN"))
vim.cmd("cd " .. vim.fn.fnameescape(part == "drupal" and site or workspace))
vim.cmd("filetype on")

local ai_eval = require("ai_eval")
local settings = { aiEval = { runTimeoutSeconds = 5, rubricGlobs = { "evals/**/*.check.yml" }, runOnSave = "affected" } }
if os.getenv("AI_EVAL_SITE_DATABASE") then
  settings.aiEval.site = { database = os.getenv("AI_EVAL_SITE_DATABASE"), pollSeconds = 0.3 }
end
if os.getenv("AI_EVAL_MODE") == "enable" then
  vim.lsp.config("ai_eval_lsp", { cmd = server, settings = settings })
  vim.lsp.enable("ai_eval_lsp")
else
  ai_eval.setup({ cmd = server, settings = settings })
end

local function completion_labels(bufnr, line, character)
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/completion",
    { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = line, character = character } }, 10000)
  local labels = {}
  for _, response in pairs(responses or {}) do
    local items = response.result and (response.result.items or response.result) or {}
    for _, item in ipairs(items) do table.insert(labels, item.label) end
  end
  return labels
end

local function workspace_part()
  -- --- 1. diagnostics, completion, a run ------------------------------------------------------------

  step("diagnostics", function()
    local rubric = edit("broken.rubric.yaml")
    if not wait(20000, function() return #vim.diagnostic.get(rubric) > 0 end) then
      error("no diagnostics")
    end
    result.filetype = vim.bo[rubric].filetype
    result.diagnostics = diagnostics(rubric)
    result.broken_role = vim.b[rubric].ai_eval_role
  end)

  step("completion", function()
    local completing = edit("completing.rubric.yaml")
    wait(20000, function() return client_of(completing) ~= nil end)
    result.completion = completion_labels(completing, 5, 4)
  end)

  step("run", function()
    local cases = edit("tone.cases.yaml")
    wait(20000, function() return client_of(cases) ~= nil and client_of(cases).initialized ~= false end)
    local params = { textDocument = { uri = vim.uri_from_bufnr(cases) },
      range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
      context = { diagnostics = {} } }
    local actions = vim.lsp.buf_request_sync(cases, "textDocument/codeAction", params, 10000)
    for _, response in pairs(actions or {}) do
      for _, action in ipairs(response.result or {}) do
        if action.command and action.command.command == "aiEval.runCases" then
          result.code_action = action.title
          ai_eval.execute(action.command.command, action.command.arguments[1], cases)
        end
      end
    end
    wait(30000, function()
      for _, note in ipairs(result.notes) do
        if note.message:match("^ai%-eval: support_tone: pass rate") then return true end
      end
      return false
    end)
  end)

  -- the run's failed cases: the quickfix list and the cases file's own diagnostics namespace;
  -- then a second run, the history and a diff in scratch buffers
  local function run_notes()
    local count = 0
    for _, note in ipairs(result.notes) do
      if note.message:match("support_tone") and note.message:match("pass rate") then count = count + 1 end
    end
    return count
  end
  step("results", function()
    local cases = vim.fn.bufnr("tone.cases.yaml")
    if not wait(10000, function() return #vim.fn.getqflist() > 0 end) then
      error("the quickfix list was never filled")
    end
    result.quickfix = { title = vim.fn.getqflist({ title = 1 }).title, items = {} }
    for _, item in ipairs(vim.fn.getqflist()) do
      table.insert(result.quickfix.items, { file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ":t"),
        lnum = item.lnum, text = item.text, type = item.type })
    end
    result.run_diagnostics = {}
    for _, d in ipairs(vim.diagnostic.get(cases, { namespace = vim.api.nvim_create_namespace("ai_eval_runs") })) do
      table.insert(result.run_diagnostics, { lnum = d.lnum, message = d.message, severity = d.severity })
    end
    result.run_notes = { first = run_notes() }
    vim.cmd("buffer " .. cases)
    vim.cmd("AiEvalRunCases")
    wait(30000, function() return run_notes() >= 2 end)
    result.run_notes.second = run_notes()
    vim.cmd("AiEvalHistory")
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://history/") ~= nil end)
    result.history = { name = vim.api.nvim_buf_get_name(0), lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) }
    vim.cmd("close")
    vim.cmd("buffer " .. cases)
    vim.cmd("AiEvalDiff")
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://diff/") ~= nil end)
    result.diff = { name = vim.api.nvim_buf_get_name(0), lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) }
    vim.cmd("close")

    -- the rubric's last-run lens, run as vim.lsp.codelens.run runs it: a client-side command
    local rubric = edit("tone.rubric.yaml")
    wait(20000, function() return client_of(rubric) ~= nil end)
    local lenses = vim.lsp.buf_request_sync(rubric, "textDocument/codeLens",
      { textDocument = { uri = vim.uri_from_bufnr(rubric) } }, 10000)
    for _, response in pairs(lenses or {}) do
      for _, lens in ipairs(response.result or {}) do
        if lens.command and lens.command.title:match("^last run") then
          result.lens = { title = lens.command.title, line = lens.range.start.line }
          vim.lsp.commands[lens.command.command](lens.command, { bufnr = rubric, client_id = client_of(rubric).id })
        end
      end
    end
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://history/") ~= nil end)
    result.lens_opened = vim.api.nvim_buf_get_name(0)
    vim.cmd("close")
  end)

  -- a save that makes a case fail: one notification, and the quickfix list holds that case alone;
  -- saved back, the case is fixed and nothing now fails
  step("on_save", function()
    local cases = edit("tone.cases.yaml")
    local _, old = replace_line(cases, "Sorry, your refund is on its way", '    response: "Your refund is on its way."')
    write(cases)
    local function quickfix_title() return vim.fn.getqflist({ title = 1 }).title end
    if not wait(30000, function() return quickfix_title():match("now fail") ~= nil end) then
      error("the quickfix list never showed what a save made fail")
    end
    result.on_save = { title = quickfix_title(), items = {}, notes = {} }
    for _, item in ipairs(vim.fn.getqflist()) do
      table.insert(result.on_save.items, { file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ":t"),
        lnum = item.lnum, text = item.text })
    end
    replace_line(cases, "Your refund is on its way", old)
    write(cases)
    wait(30000, function() return quickfix_title():match("fixed") ~= nil end)
    result.on_save.fixed_title = quickfix_title()
    result.on_save.fixed_items = #vim.fn.getqflist()
    for _, note in ipairs(result.notes) do
      if note.message:match("now fail") or note.message:match("fixed") then table.insert(result.on_save.notes, note.message) end
    end
  end)

  -- a run the site inserts: the server's line as a warning (it regressed); the site target's
  -- history holds it, marked as the site's
  step("site_run", function()
    local cases = edit("tone.cases.yaml")
    vim.fn.system(vim.fn.json_decode(os.getenv("AI_EVAL_SITE_INSERT")))
    local function site_note()
      for _, note in ipairs(result.notes) do
        if note.message:match("^ai%-eval: site run") then return note end
      end
    end
    if not wait(20000, function() return site_note() ~= nil end) then
      error("no site run was told")
    end
    result.site_run = { note = site_note() }
    vim.cmd("buffer " .. cases)
    vim.cmd("AiEvalHistory support_bot")
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://history/support_bot") ~= nil end)
    result.site_run.history = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    vim.cmd("close")
    vim.cmd("buffer " .. cases)
    vim.cmd("AiEvalDiff site:1 site:latest")
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://diff/") ~= nil end)
    result.site_run.diff = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    vim.cmd("close")
    vim.cmd("buffer " .. cases)
    vim.cmd("AiEvalSiteRuns")
    wait(10000, function() return vim.api.nvim_buf_get_name(0):match("ai%-eval://site%-runs/") ~= nil end)
    result.site_run.listed = { name = vim.api.nvim_buf_get_name(0), lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) }
    vim.cmd("close")
  end)

  result.commands = {}
  for _, name in ipairs({ "AiEvalRunCases", "AiEvalRunRubric", "AiEvalRunCheck", "AiEvalHistory", "AiEvalDiff", "AiEvalSiteRuns", "AiEvalReloadPlugins", "AiEvalExportSchema" }) do
    result.commands[name] = vim.fn.exists(":" .. name) == 2
  end

  -- --- 2. the server decides which YAML files are rubric and cases files -----------------------------

  local path_buffers = {}
  step("paths", function()
    for relative, expects_diagnostics in pairs(vim.fn.json_decode(os.getenv("AI_EVAL_PATHS"))) do
      local bufnr = edit(workspace .. "/" .. relative)
      path_buffers[relative] = bufnr
      local entry = { announced = wait(20000, function() return roles[bufnr] ~= nil end) }
      entry.role = vim.b[bufnr].ai_eval_role or vim.NIL
      entry.filetype = vim.bo[bufnr].filetype
      if expects_diagnostics then
        wait(10000, function() return #vim.diagnostic.get(bufnr) > 0 end)
      end
      entry.diagnostics = diagnostics(bufnr)
      if entry.role == vim.NIL then
        entry.completion = completion_labels(bufnr, 1, 0)
      end
      local client = client_of(bufnr)
      entry.client = client and client.id or vim.NIL
      entry.root_dir = client and client.config.root_dir or vim.NIL
      result.paths[relative] = entry
    end
  end)

  -- the run commands act on rubric and cases files only, and say so elsewhere
  step("gating", function()
    local before = #result.notes
    vim.cmd("buffer " .. path_buffers["config.yml"])
    vim.cmd("AiEvalRunRubric")
    vim.cmd("buffer " .. vim.fn.bufnr("broken.rubric.yaml"))
    vim.cmd("AiEvalRunCases")
    result.gating = {}
    for index = before + 1, #result.notes do
      table.insert(result.gating, result.notes[index].message)
    end
  end)

  step("roots", function()
    for _, path in ipairs(vim.fn.json_decode(os.getenv("AI_EVAL_PROBES"))) do
      result.roots[path] = ai_eval.root_dir(path) or vim.NIL
    end
  end)

  -- --- 3. files written (or changed outside Neovim) reach the server ---------------------------------
  -- Each scenario ends in a state the server can only know from a watched-file event: a buffer is
  -- closed with unsaved changes, so the server falls back to what it last heard of the file.

  -- The server answers a watched-file event in well under a second; a miss costs 8 s, not more.
  local function wait_code(bufnr, code, present)
    return wait(8000, function() return has_code(bufnr, code) == present end)
  end

  step("watch_changed", function()
    local composite = edit("composite.rubric.yaml")
    if not wait(20000, function() return #vim.diagnostic.get(composite) > 0 and not has_code(composite, "unresolved-rubric") end) then
      error("composite.rubric.yaml did not resolve support_tone to begin with")
    end
    local tone = edit("tone.rubric.yaml", "split")
    replace_line(tone, "^id:", "id: support_tone_renamed")
    write(tone)
    replace_line(tone, "^id:", "id: support_tone") -- back as it was, but not written
    vim.cmd("bwipeout! " .. tone)
    result.watch.changed = wait_code(composite, "unresolved-rubric", true)
  end)

  step("watch_created_deleted", function()
    local needs = edit("needs_later.rubric.yaml")
    if not wait_code(needs, "unresolved-rubric", true) then
      error("needs_later.rubric.yaml should start unresolved")
    end
    local later = edit("later.rubric.yaml", "split") -- a new file
    vim.api.nvim_buf_set_lines(later, 0, -1, false,
      { "id: later", 'version: "1.0"', "checks:", "  - id: a", "    kind: must_contain_any", "    values: [x]", "scoring: {combine: all_pass}" })
    write(later)
    result.watch.resolved_while_open = wait_code(needs, "unresolved-rubric", false)
    replace_line(later, "^id:", "id: later_draft")
    result.watch.unresolved_while_draft = wait_code(needs, "unresolved-rubric", true)
    vim.cmd("bwipeout! " .. later)
    result.watch.created = wait_code(needs, "unresolved-rubric", false)
    if not result.watch.created then
      return -- the deletion below could not be told from a creation never seen
    end

    -- deleted outside Neovim while shown: Neovim notices on :checktime
    later = edit("later.rubric.yaml", "split")
    os.remove(workspace .. "/later.rubric.yaml")
    pcall(vim.cmd, "checktime")
    vim.cmd("bwipeout! " .. later)
    result.watch.deleted = wait_code(needs, "unresolved-rubric", true)
  end)

  -- a rubric right in the home folder: served, with no workspace folder (nothing is indexed)
  step("home", function()
    local bufnr = edit(os.getenv("HOME") .. "/notes.rubric.yaml")
    result.home = { diagnosed = wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end) }
    local client = client_of(bufnr)
    result.home.attached = client ~= nil
    result.home.role = vim.b[bufnr].ai_eval_role or vim.NIL
    result.home.root_dir = client and client.config.root_dir or vim.NIL
    result.home.folders = client and client.workspace_folders or vim.NIL
  end)

  -- Other YAML got nothing all along, not just at first.
  result.late = {}
  for relative, bufnr in pairs(path_buffers) do
    result.late[relative] = #vim.diagnostic.get(bufnr)
  end
end

-- --- 4. a Drupal codebase: its root, its PHP kinds, its services and classes edited -------------------

local function drupal_part()
  local module = site .. "/web/modules/custom/my_eval_extras"
  step("drupal", function()
    vim.cmd("only")
    local rubric = edit(module .. "/rubrics/summary_shape.rubric.yaml")
    local uri = vim.uri_from_bufnr(rubric)
    if not wait(20000, function() return client_of(rubric) ~= nil end) then
      error("no client for the Drupal rubric")
    end
    local client = client_of(rubric)
    result.drupal.root_dir = client.config.root_dir or vim.NIL
    result.drupal.folders = {}
    for _, folder in ipairs(client.workspace_folders or {}) do
      table.insert(result.drupal.folders, vim.uri_to_fname(folder.uri))
    end
    result.drupal.announced = wait(20000, function() return roles[rubric] ~= nil end)
    result.drupal.role = vim.b[rubric].ai_eval_role or vim.NIL
    result.drupal.answered = wait(30000, function() return (arrivals[uri] or 0) > 0 end)
    result.drupal.seed = diagnostics(rubric)
    -- its settings.php names no database: the site's runs are none, and the server says why
    local before = #result.notes
    vim.cmd("AiEvalSiteRuns")
    wait(10000, function() return #result.notes > before end)
    result.drupal.site_runs_note = result.notes[before + 1] or vim.NIL
    if errors_on(rubric) > 0 then
      result.drupal.skipped = "the seed rubric has errors, so no edit can be seen to change them"
      return
    end
    local kind_line = line_of(rubric, "kind: word_count")
    local max_line = line_of(rubric, "^%s*max:")

    -- a services.yml edit: the executor's tag goes, so word_count is unknown; and back
    local services = edit(module .. "/my_eval_extras.services.yml", "split")
    local lnum, old = replace_line(services, "ai_eval%.check_executor", "      - { name: ai_eval.not_an_executor }")
    write(services)
    result.drupal.services_off = wait(10000, function() return errors_on(rubric, kind_line) > 0 end)
    result.drupal.services_off_diagnostics = diagnostics(rubric)
    vim.api.nvim_buf_set_lines(services, lnum, lnum + 1, false, { old })
    write(services)
    result.drupal.services_on = wait(20000, function() return errors_on(rubric) == 0 end)
    vim.cmd("bwipeout " .. services)

    -- an executor class edit: `max` leaves the kind's schema, so `max: 150` is refused; and back
    local class = edit(module .. "/src/CheckExecutor/WordCountExecutor.php", "split")
    lnum, old = replace_line(class, "'max' => %[", nil)
    write(class)
    result.drupal.php_off = wait(10000, function() return errors_on(rubric, max_line) > 0 end)
    result.drupal.php_off_diagnostics = diagnostics(rubric)
    vim.api.nvim_buf_set_lines(class, lnum, lnum, false, { old })
    write(class)
    result.drupal.php_on = wait(20000, function() return errors_on(rubric) == 0 end)
  end)
end

if part == "drupal" then drupal_part() else workspace_part() end
finish(0)
