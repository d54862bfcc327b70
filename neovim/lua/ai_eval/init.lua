-- ai-eval-lsp for Neovim: the language server on YAML buffers under a project root, the server's
-- word on which of them are rubric and cases files, user commands, file events the server cannot
-- watch by itself, `aiEval/runComplete` shown through vim.notify, a run's failed cases in the
-- quickfix list and as diagnostics on the cases file, and a target's history and diffs, and the
-- site's runs, in scratch buffers (ai_eval/results.lua). Works on Neovim 0.7 and
-- later; on 0.11+ `vim.lsp.enable("ai_eval_lsp")` with lsp/ai_eval_lsp.lua does the same without
-- setup().
local root = require("ai_eval.root")
local watch = require("ai_eval.watch")
local results = require("ai_eval.results")
local lsp_client = require("ai_eval.client")

local M = {}

M.name = "ai_eval_lsp"

M.defaults = {
  -- The server runs in the Python environment whose plugins it should see: the one where
  -- `pip install ai-eval-lsp` put the console script.
  cmd = { "ai-eval-lsp", "serve" },
  -- Every YAML buffer goes to the server, which decides what is a rubric or cases file (SPEC
  -- section 2 and the rubricGlobs/casesGlobs settings): one classification for every editor.
  -- `yaml.aieval` is still accepted for buffers a user marks so by hand.
  filetypes = { "yaml", "yaml.aieval" },
  -- Passed as they are: `aiEval` with rubricGlobs, casesGlobs, schemaFragments, resultsDatabase,
  -- exportEnvelopeOnComplete, runTimeoutSeconds, drupal = { root }, php = { command, run }.
  settings = { aiEval = {} },
}

M.root_markers = root.markers

--- The project root of a file (see ai_eval/root.lua), or nil for a file right in `/` or home.
function M.root_dir(path)
  return root.find(path)
end

-- Buffers the server can know: a file on disk, not a help page, terminal or `scheme://` buffer.
function M.is_file_buffer(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return vim.bo[bufnr].buftype == "" and name ~= "" and not name:match("^%a[%w+.-]*://")
end

local request, stopped = lsp_client.request, lsp_client.stopped

-- --- what the server tells --------------------------------------------------------------------

--- `aiEval/runComplete`: the server's line for the run. A run on save is shown only when a case
--- flipped, and its cases that now fail fill the quickfix list; a site's run is a warning when it
--- regressed.
function M.on_run_complete(params, ctx)
  local flipped = params.change ~= nil and params.change ~= vim.NIL and #params.change.flipped or 0
  if params.trigger == "site" then
    vim.notify("ai-eval: " .. params.summary, params.regressed == true and vim.log.levels.WARN or vim.log.levels.INFO)
    return
  end
  if params.trigger == "save" then
    if flipped > 0 then
      vim.notify("ai-eval: " .. params.summary, vim.log.levels.WARN)
      results.show_flips(vim.lsp.get_client_by_id(ctx.client_id), params)
    end
    return
  end
  vim.notify("ai-eval: " .. params.summary, params.passed_gate == 1 and vim.log.levels.INFO or vim.log.levels.WARN)
end

local function buffer_of(uri, client_id)
  for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(client_id)) do
    if vim.uri_from_bufnr(bufnr) == uri then
      return bufnr
    end
  end
end

-- `User AiEvalRole` runs with the buffer current (so `<abuf>`, `args.buf` and `vim.b` are its);
-- from 0.8 on its data is `{ buf, role }` too.
local function announce_role(bufnr, role)
  vim.api.nvim_buf_call(bufnr, function()
    local opts = { pattern = "AiEvalRole", modeline = false }
    if vim.fn.has("nvim-0.8") == 1 then
      opts.data = { buf = bufnr, role = role }
    end
    vim.api.nvim_exec_autocmds("User", opts)
  end)
end

--- `aiEval/documentRole` {uri, role}: the server's word on a buffer. `b:ai_eval_role` is
--- "rubric" or "cases", and unset for other YAML. The filetype stays `yaml` (see README).
function M.on_document_role(_, params, ctx)
  if type(params) ~= "table" then
    return
  end
  local bufnr = buffer_of(params.uri, ctx.client_id)
  if not bufnr then
    return
  end
  local role = (params.role == "rubric" or params.role == "cases") and params.role or nil
  vim.b[bufnr].ai_eval_role = role
  announce_role(bufnr, role)
end

M.handlers = {
  ["aiEval/runComplete"] = function(_, params, ctx)
    M.on_run_complete(params, ctx)
  end,
  ["aiEval/documentRole"] = function(...)
    M.on_document_role(...)
  end,
}

-- --- pulled diagnostics that go stale ------------------------------------------------------------
--
-- Neovim 0.10 and 0.11 pull diagnostics, but only when their own buffer changes: they do not
-- answer `workspace/diagnostic/refresh`. A rubric's diagnostics also change when another file
-- does (a composite's target, a Drupal services.yml or executor class), so the plugin answers the
-- refresh itself: visible buffers are pulled at once, hidden ones when next entered.

local DIAGNOSTIC = "textDocument/diagnostic"
local REFRESH = "workspace/diagnostic/refresh"

local function pull(client, bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    -- no handler: Neovim's own textDocument/diagnostic handler shows the answer
    request(client, DIAGNOSTIC, { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }, nil, bufnr)
  end
end

local function visible(bufnr)
  return vim.fn.bufwinid(bufnr) ~= -1
end

local stale_group

function M.on_diagnostic_refresh(_, _, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return vim.NIL
  end
  stale_group = stale_group or vim.api.nvim_create_augroup("ai_eval_lsp_stale", { clear = true })
  for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(client.id)) do
    if visible(bufnr) then
      pull(client, bufnr)
    else
      vim.api.nvim_clear_autocmds({ group = stale_group, buffer = bufnr })
      vim.api.nvim_create_autocmd("BufEnter", {
        group = stale_group,
        buffer = bufnr,
        once = true,
        callback = function()
          if not stopped(client) then
            pull(client, bufnr)
          end
        end,
      })
    end
  end
  return vim.NIL
end

--- Whether this Neovim pulls diagnostics but leaves `workspace/diagnostic/refresh` unanswered.
function M.needs_refresh_support()
  local text_document = vim.lsp.protocol.make_client_capabilities().textDocument or {}
  return text_document.diagnostic ~= nil and vim.lsp.handlers[REFRESH] == nil
end

-- --- settings ---------------------------------------------------------------------------------
--
-- The server asks for the `aiEval` section (`workspace/configuration`) per folder. Neovim 0.7
-- answers that request but does not advertise it, and sends no settings on its own; so the
-- capability is advertised, and the settings also go in `initializationOptions`, as they are.

-- `experimental.aiEval.runComplete`: this plugin shows each run itself, so the server sends no
-- message of its own for it (one notification per run, not two).
M.capabilities = { workspace = { configuration = true }, experimental = { aiEval = { runComplete = true } } }

if M.needs_refresh_support() then
  M.handlers[REFRESH] = function(...)
    return M.on_diagnostic_refresh(...)
  end
  M.capabilities.workspace.diagnostics = { refreshSupport = true }
end

function M.before_init(params, config)
  local settings = config.settings or {}
  params.initializationOptions = vim.tbl_extend("keep", params.initializationOptions or {}, { aiEval = settings.aiEval })
end

-- --- talking to the server ---------------------------------------------------------------------

local function clients(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
  end
  local found = {}
  for _, client in pairs(bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()) do
    if client.name == M.name then
      table.insert(found, client)
    end
  end
  return found
end

-- The client for a buffer: the one attached to it, else (a PHP or other file of the project,
-- for the workspace-wide commands) the one whose root holds it, else the only one there is.
local function client_for(bufnr)
  local attached = clients(bufnr)[1]
  if attached then
    return attached
  end
  local path = vim.api.nvim_buf_get_name(bufnr)
  local all = clients(nil)
  for _, client in ipairs(all) do
    if client.config.root_dir and watch.is_under(path, client.config.root_dir) then
      return client
    end
  end
  if #all == 1 then
    return all[1]
  end
end

local function no_client()
  vim.notify("ai-eval: no ai_eval_lsp server runs for this buffer", vim.log.levels.ERROR)
end

--- Run a server command, with the buffer's uri, through the buffer's ai_eval_lsp client.
function M.execute(command, argument, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then
    return no_client()
  end
  argument = argument or {}
  argument.uri = argument.uri or vim.uri_from_bufnr(bufnr)
  request(client, "workspace/executeCommand", { command = command, arguments = { argument } }, function(err, result)
    if err then
      vim.notify("ai-eval: " .. command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif command == "aiEval.runCases" and result then
      results.show_runs(client, { { uri = argument.uri, answer = result } })
    elseif command == "aiEval.runRubric" and result and result.runs then
      local runs = {}
      for _, run in ipairs(result.runs) do
        table.insert(runs, { uri = run.casesUri, answer = run })
      end
      results.show_runs(client, runs)
    elseif command == "aiEval.render" and result then
      results.open(argument, result.text)
    elseif command == "aiEval.siteRuns" and result then
      M.show_site_runs(argument, result)
    elseif command == "aiEval.runCheck" and result then
      vim.notify("ai-eval: " .. (result.text or vim.fn.json_encode(result)), vim.log.levels.INFO)
    elseif command == "aiEval.exportSchema" and result then
      local path = (client.config.root_dir or vim.fn.getcwd()) .. "/rubric.combined.json"
      vim.fn.writefile({ vim.fn.json_encode(result) }, path)
      vim.notify("ai-eval: combined schema written to " .. path, vim.log.levels.INFO)
    end
  end, bufnr)
end

--- The buffer's role as the server said it, or nil after telling the user why it will not do:
--- the run commands act on rubric and cases files only.
function M.require_role(bufnr, wanted)
  local role = vim.b[bufnr].ai_eval_role
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
  if name == "" then
    name = "this buffer"
  end
  if role == wanted then
    return role
  end
  if role == nil then
    vim.notify(
      string.format("ai-eval: %s is not a rubric or cases file (as the server reads it)", name),
      vim.log.levels.WARN
    )
  else
    vim.notify(string.format("ai-eval: %s is a %s file; this command needs a %s file", name, role, wanted),
      vim.log.levels.WARN)
  end
end

--- Run the check under the cursor: the server's "Run check" code action knows which it is.
function M.run_check_at_cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  if not M.require_role(bufnr, "rubric") then
    return
  end
  local client = clients(bufnr)[1]
  if not client then
    return no_client()
  end
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {}, only = { "source" } }
  request(client, "textDocument/codeAction", params, function(_, actions)
    for _, action in ipairs(actions or {}) do
      if action.command and action.command.command == "aiEval.runCheck" then
        M.execute("aiEval.runCheck", action.command.arguments[1], bufnr)
        return
      end
    end
    vim.notify("ai-eval: the cursor is not on a check", vim.log.levels.WARN)
  end, bufnr)
end

local function run_on(role, command)
  return function()
    local bufnr = vim.api.nvim_get_current_buf()
    if M.require_role(bufnr, role) then
      M.execute(command, nil, bufnr)
    end
  end
end

--- `:AiEvalHistory [TARGET]` and `:AiEvalDiff [BASE [HEAD]]`: the target is the current rubric's
--- id, or the rubric a cases file runs, unless named (a site's target lists the site's runs); a
--- diff with no target compares the runs of the target run last; runs are ids or names such as
--- `site:latest`.
-- Neovim 0.7 gives `nargs = "?"` with no argument as { "" }.
local function arguments(opts)
  return vim.tbl_filter(function(given) return given ~= "" end, opts.fargs)
end

function M.history(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local target = arguments(opts)[1] or results.target_of(bufnr)
  if not target then
    return vim.notify("ai-eval: name a target (:AiEvalHistory RUBRIC_ID), or open a rubric or cases file",
      vim.log.levels.WARN)
  end
  M.execute("aiEval.render", { what = "history", target = target, format = "text" }, bufnr)
end

function M.diff(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = { what = "diff", target = results.target_of(bufnr), format = "text" }
  local fargs = arguments(opts)
  for index, name in ipairs({ "base", "head" }) do
    local given = fargs[index]
    if given then
      -- a run id, or a name the server reads (latest, previous, site:412, site:latest)
      argument[name] = tonumber(given) or given
      argument.target = nil -- runs name their target
    end
  end
  M.execute("aiEval.render", argument, bufnr)
end

--- `:AiEvalSiteRuns [TARGET]`: the site's runs read now (`aiEval.siteRuns`, of the buffer's
--- project), of one site target or of every one, in a scratch buffer; or the server's note on why
--- there are none.
function M.site_runs(opts)
  local argument = { target = arguments(opts)[1], limit = results.site_runs_listed + 1 }
  M.execute("aiEval.siteRuns", argument, vim.api.nvim_get_current_buf())
end

function M.show_site_runs(argument, answer)
  local note = answer.note ~= nil and answer.note ~= vim.NIL and answer.note or nil
  if #answer.rows == 0 then
    vim.notify("ai-eval: " .. (note or "the site has no runs yet"), vim.log.levels.INFO)
    return
  end
  local lines = results.site_runs_lines(answer.rows)
  results.open({ what = "site-runs", target = argument.target or "all" }, table.concat(lines, "\n"))
  if note then
    vim.notify("ai-eval: " .. note, vim.log.levels.WARN)
  end
end

function M.create_commands()
  local commands = {
    AiEvalRunCases = { run_on("cases", "aiEval.runCases"), {} },
    AiEvalRunRubric = { run_on("rubric", "aiEval.runRubric"), {} },
    AiEvalRunCheck = { M.run_check_at_cursor, {} },
    AiEvalHistory = { M.history, { nargs = "?" } },
    AiEvalDiff = { M.diff, { nargs = "*" } },
    AiEvalSiteRuns = { M.site_runs, { nargs = "?" } },
    -- workspace-wide: from any buffer of the project (a services.yml, an executor class)
    AiEvalReloadPlugins = { function() M.execute("aiEval.reloadPlugins") end, {} },
    AiEvalExportSchema = { function() M.execute("aiEval.exportSchema") end, {} },
  }
  for name, command in pairs(commands) do
    vim.api.nvim_create_user_command(name, command[1], command[2])
  end
  -- The last-run lens names `aiEval.history`: run from a lens, it opens the history here.
  vim.lsp.commands["aiEval.history"] = function(command, ctx)
    local lens = command.arguments[1]
    M.execute("aiEval.render", { what = "history", target = lens.target, uri = lens.uri, format = "text" }, ctx.bufnr)
  end
end

--- Everything but starting the server, shared by setup() and lsp/ai_eval_lsp.lua.
function M.prepare()
  M.create_commands()
  watch.client_name = M.name
  watch.install()
end

-- --- Neovim 0.7 to 0.10 (also later): setup() -----------------------------------------------

M.client_ids = {} -- root (or "" for none) -> client id, Neovim 0.7 only

local function start(config, bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local start_config = {
    name = M.name,
    cmd = config.cmd,
    root_dir = M.root_dir(path),
    settings = config.settings,
    handlers = vim.tbl_extend("keep", config.handlers or {}, M.handlers),
    capabilities = vim.tbl_deep_extend(
      "force", vim.lsp.protocol.make_client_capabilities(), M.capabilities, config.capabilities or {}
    ),
    on_attach = config.on_attach,
    before_init = function(params, client_config)
      M.before_init(params, client_config)
      if config.before_init then
        config.before_init(params, client_config)
      end
    end,
  }
  if vim.lsp.start then -- 0.8+: reuses the client of the same name and root
    vim.lsp.start(start_config, { bufnr = bufnr })
    return
  end
  local key = start_config.root_dir or ""
  local id = M.client_ids[key]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(start_config)
    M.client_ids[key] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- Configure and start the server for YAML buffers under a project root.
function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend("force", M.defaults, opts)
  -- lists replace the defaults: deep-extending them would merge by index
  config.cmd = opts.cmd or M.defaults.cmd
  config.filetypes = opts.filetypes or M.defaults.filetypes
  M.prepare()
  local group = vim.api.nvim_create_augroup("ai_eval_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      if M.is_file_buffer(args.buf) then
        start(config, args.buf)
      end
    end,
  })
end

return M
