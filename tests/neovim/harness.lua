-- Headless Neovim drives ai-eval-lsp through the plugin in neovim/, as a user's config would.
-- Env: AI_EVAL_PLUGIN (the plugin folder), AI_EVAL_SERVER (JSON list: the server command),
-- AI_EVAL_WORKSPACE, AI_EVAL_OUT (result JSON), AI_EVAL_MODE ("setup" or "enable").
local out = os.getenv("AI_EVAL_OUT")
local workspace = os.getenv("AI_EVAL_WORKSPACE")
local server = vim.fn.json_decode(os.getenv("AI_EVAL_SERVER"))
local result = { nvim = string.format("%d.%d.%d", vim.version().major, vim.version().minor, vim.version().patch), notes = {} }

local function finish(code)
  local file = assert(io.open(out, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
  vim.cmd(code == 0 and "qall!" or ("cquit! " .. code))
end
vim.defer_fn(function() result.error = "watchdog: the harness took too long"; finish(3) end, 60000)

vim.notify = function(message, level) table.insert(result.notes, { message = message, level = level }) end
vim.opt.runtimepath:prepend(os.getenv("AI_EVAL_PLUGIN"))
vim.cmd("cd " .. vim.fn.fnameescape(workspace))
vim.cmd("filetype on")

local ai_eval = require("ai_eval")
local settings = { aiEval = { runTimeoutSeconds = 5 } }
if os.getenv("AI_EVAL_MODE") == "enable" then
  vim.lsp.config("ai_eval_lsp", { cmd = server, settings = settings })
  vim.lsp.enable("ai_eval_lsp")
else
  ai_eval.setup({ cmd = server, settings = settings })
end

local function client_of(bufnr)
  local found = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(found) do return client end
end

-- 1. diagnostics of a broken rubric
vim.cmd("edit broken.rubric.yaml")
local rubric = vim.api.nvim_get_current_buf()
result.filetype = vim.bo[rubric].filetype
if not vim.wait(20000, function() return #vim.diagnostic.get(rubric) > 0 end, 50) then
  result.error = "no diagnostics"; finish(4); return
end
result.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(rubric)) do
  table.insert(result.diagnostics, { code = d.code, lnum = d.lnum, col = d.col, source = d.source, message = d.message })
end

-- 2. completion on the empty line inside a check (0-based line 5 of completing.rubric.yaml)
vim.cmd("edit completing.rubric.yaml")
local completing = vim.api.nvim_get_current_buf()
vim.wait(20000, function() return client_of(completing) ~= nil end, 50)
local responses = vim.lsp.buf_request_sync(completing, "textDocument/completion",
  { textDocument = { uri = vim.uri_from_bufnr(completing) }, position = { line = 5, character = 4 } }, 10000)
result.completion = {}
for _, response in pairs(responses or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do table.insert(result.completion, item.label) end
end

-- 3. a code action run: "Run cases" on the cases file, executed as the plugin executes it
vim.cmd("edit tone.cases.yaml")
local cases = vim.api.nvim_get_current_buf()
vim.wait(20000, function() return client_of(cases) ~= nil and client_of(cases).initialized ~= false end, 50)
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
vim.wait(30000, function()
  for _, note in ipairs(result.notes) do
    if note.message:match("^ai%-eval: support_tone pass rate") then return true end
  end
  return false
end, 50)

-- 4. user commands exist
result.commands = {}
for _, name in ipairs({ "AiEvalRunCases", "AiEvalRunRubric", "AiEvalRunCheck", "AiEvalReloadPlugins", "AiEvalExportSchema" }) do
  result.commands[name] = vim.fn.exists(":" .. name) == 2
end
finish(0)
