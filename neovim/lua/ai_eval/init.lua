-- ai-eval-lsp for Neovim: filetype detection, the language server, user commands and
-- `aiEval/runComplete` shown through vim.notify. Works on Neovim 0.7 and later; on 0.11+
-- `vim.lsp.enable("ai_eval_lsp")` with lsp/ai_eval_lsp.lua does the same without setup().
local M = {}

M.filetype = "yaml.aieval"

M.defaults = {
  -- The server runs in the Python environment whose plugins it should see: the one where
  -- `pip install ai-eval-lsp` put the console script.
  cmd = { "ai-eval-lsp", "serve" },
  root_markers = { "pyproject.toml", ".git" },
  settings = { aiEval = {} },
}

local function notify_run(row)
  local interval = "n/a"
  if row.pass_rate_ci_low ~= nil and row.pass_rate_ci_low ~= vim.NIL then
    interval = string.format("%.2f-%.2f", row.pass_rate_ci_low, row.pass_rate_ci_high)
  end
  vim.notify(
    string.format(
      "ai-eval: %s pass rate %.2f (95%% CI %s), average %.2f/5, gate %s, %d errors",
      row.target_id, row.pass_rate, interval, row.avg_score,
      row.passed_gate == 1 and "passed" or "FAILED", row.error_count
    ),
    row.passed_gate == 1 and vim.log.levels.INFO or vim.log.levels.WARN
  )
end

M.handlers = {
  ["aiEval/runComplete"] = function(_, row)
    notify_run(row)
  end,
}

local RUBRIC_MODELINE = "yaml%-language%-server:%s*%$schema=%S*rubric%.schema%.json"

--- Whether a buffer is a rubric or cases file by SPEC section 2 (name, folder or modeline).
function M.is_ai_eval_file(path, lines)
  if path:match("%.rubric%.ya?ml$") or path:match("%.cases%.ya?ml$") then
    return true
  end
  if not path:match("%.ya?ml$") then
    return false
  end
  if path:match("/rubrics/") then
    return true
  end
  for _, line in ipairs(lines or {}) do
    if not line:match("^%s*#") and line:match("%S") then
      return false
    end
    if line:match(RUBRIC_MODELINE) then
      return true
    end
  end
  return false
end

function M.detect(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, 20, false)
  if M.is_ai_eval_file(path, lines) then
    vim.bo[bufnr].filetype = M.filetype
  end
end

local function root_of(path, markers)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while dir and dir ~= "" do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function clients(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr, name = "ai_eval_lsp" })
  end
  local found = {}
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == "ai_eval_lsp" then
      table.insert(found, client)
    end
  end
  return found
end

-- Client methods take `self` from 0.11 on; before, they were plain functions.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Run a server command, with the buffer's uri, through the attached ai_eval_lsp client.
function M.execute(command, argument, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = clients(bufnr)[1]
  if not client then
    vim.notify("ai-eval: no ai_eval_lsp client is attached to this buffer", vim.log.levels.ERROR)
    return
  end
  argument = argument or {}
  argument.uri = argument.uri or vim.uri_from_bufnr(bufnr)
  request(client, "workspace/executeCommand", { command = command, arguments = { argument } }, function(err, result)
    if err then
      vim.notify("ai-eval: " .. command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif command == "aiEval.runCheck" and result then
      vim.notify("ai-eval: " .. vim.fn.json_encode(result), vim.log.levels.INFO)
    elseif command == "aiEval.exportSchema" and result then
      local path = vim.fn.getcwd() .. "/rubric.combined.json"
      vim.fn.writefile({ vim.fn.json_encode(result) }, path)
      vim.notify("ai-eval: combined schema written to " .. path, vim.log.levels.INFO)
    end
  end, bufnr)
end

--- Run the check under the cursor: the server's "Run check" code action knows which it is.
function M.run_check_at_cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = clients(bufnr)[1]
  if not client then
    vim.notify("ai-eval: no ai_eval_lsp client is attached to this buffer", vim.log.levels.ERROR)
    return
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

function M.create_commands()
  local commands = {
    AiEvalRunCases = function() M.execute("aiEval.runCases") end,
    AiEvalRunRubric = function() M.execute("aiEval.runRubric") end,
    AiEvalRunCheck = M.run_check_at_cursor,
    AiEvalReloadPlugins = function() M.execute("aiEval.reloadPlugins") end,
    AiEvalExportSchema = function() M.execute("aiEval.exportSchema") end,
  }
  for name, fn in pairs(commands) do
    vim.api.nvim_create_user_command(name, fn, {})
  end
end

--- Configure and start the server for rubric and cases buffers (Neovim 0.7 to 0.10, and later).
function M.setup(opts)
  local config = vim.tbl_deep_extend("force", M.defaults, opts or {})
  M.create_commands()
  local group = vim.api.nvim_create_augroup("ai_eval_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.filetype,
    callback = function(args)
      local path = vim.api.nvim_buf_get_name(args.buf)
      local start = {
        name = "ai_eval_lsp",
        cmd = config.cmd,
        root_dir = root_of(path, config.root_markers),
        settings = config.settings,
        handlers = M.handlers,
      }
      if vim.lsp.start then
        vim.lsp.start(start, { bufnr = args.buf })
      else -- Neovim 0.7
        M.client_ids = M.client_ids or {}
        local id = M.client_ids[start.root_dir]
        if not id or vim.lsp.client_is_stopped(id) then
          id = vim.lsp.start_client(start)
          M.client_ids[start.root_dir] = id
        end
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end,
  })
end

return M
