-- Tell the server about files written or changed on disk (`workspace/didChangeWatchedFiles`).
--
-- The server asks to watch `**/*.yaml`, `**/*.yml` and `**/*.php` by dynamic registration, which
-- Neovim 0.7 does not support and 0.10+ does not advertise on Linux. Without these events the
-- server's view of closed files goes stale: a rubric written and closed, a Drupal
-- `*.services.yml`, `*.info.yml`, `core.extension.yml` or executor class edited (the schema must be
-- rebuilt). So the plugin reports what Neovim itself sees cheaply: every write of such a file
-- (Created when it did not exist before), and a file in a buffer changed or deleted outside
-- Neovim once Neovim notices (`:checktime`, focus, `autoread`). Only files under a client's
-- workspace folders are reported to it. A client that did accept the server's registration
-- watches by itself and gets nothing from here, so no change is reported twice.
local lsp_client = require("ai_eval.client")

local M = {}

local METHOD = "workspace/didChangeWatchedFiles"
local CREATED, CHANGED, DELETED = 1, 2, 3
M.patterns = { "*.yaml", "*.yml", "*.php" }
M.client_name = "ai_eval_lsp"

local existed = {} -- path -> whether it existed before this write
local pending = {} -- client id -> { uri -> FileChangeType }, flushed on the next loop turn
local flush_scheduled = false

local function clients()
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ name = M.client_name })
  end
  local found = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if client.name == M.client_name then
      table.insert(found, client)
    end
  end
  return found
end

--- Whether the client watches the server's globs itself: it advertised dynamic registration of
--- watched files and holds the server's registration (0.11: `registrations`; 0.10:
--- `dynamic_capabilities`). When it cannot be told, an advertised capability is trusted, since
--- the server registers whenever it is advertised.
function M.client_watches(client)
  -- what the client advertised: `client.capabilities` (0.10+, merged with Neovim's defaults),
  -- else the config's (0.7, where setup() passes the whole table)
  local advertised = client.capabilities or (client.config and client.config.capabilities) or {}
  local workspace = advertised.workspace
  local capability = workspace and workspace.didChangeWatchedFiles
  if not (capability and capability.dynamicRegistration) then
    return false
  end
  if type(client.registrations) == "table" then
    return client.registrations[METHOD] ~= nil and #client.registrations[METHOD] > 0
  end
  local dynamic = client.dynamic_capabilities
  if type(dynamic) == "table" and type(dynamic.capabilities) == "table" then
    return dynamic.capabilities[METHOD] ~= nil
  end
  return true
end

local function folders_of(client)
  local folders = {}
  for _, folder in ipairs(client.workspace_folders or {}) do
    table.insert(folders, vim.uri_to_fname(folder.uri))
  end
  if #folders == 0 and client.config and client.config.root_dir then
    table.insert(folders, client.config.root_dir)
  end
  return folders
end

function M.is_under(path, folder)
  folder = folder:gsub("/+$", "")
  return path == folder or path:sub(1, #folder + 1) == folder .. "/"
end

local function notify(client, params)
  return lsp_client.notify(client, METHOD, params)
end

local function flush()
  flush_scheduled = false
  local batches = pending
  pending = {}
  for id, changes in pairs(batches) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      local list = {}
      for uri, kind in pairs(changes) do
        table.insert(list, { uri = uri, type = kind })
      end
      notify(client, { changes = list })
    end
  end
end

--- Queue a change for every client whose folders hold the path. Changes made in one loop turn
--- (`:wall`) go in one notification, so the server rebuilds once.
function M.report(path, kind)
  local uri = vim.uri_from_fname(path)
  for _, client in ipairs(clients()) do
    if not M.client_watches(client) then
      for _, folder in ipairs(folders_of(client)) do
        if M.is_under(path, folder) then
          local changes = pending[client.id] or {}
          pending[client.id] = changes
          -- a file created and then written again in one turn is still new to the server
          if not (changes[uri] == CREATED and kind == CHANGED) then
            changes[uri] = kind
          end
          break
        end
      end
    end
  end
  if not flush_scheduled and next(pending) then
    flush_scheduled = true
    vim.schedule(flush)
  end
end

local function full_path(args)
  return vim.fn.fnamemodify(args.match ~= "" and args.match or args.file, ":p")
end

--- The autocommands, installed once (`setup()` and `lsp/ai_eval_lsp.lua` both call this).
function M.install()
  local group = vim.api.nvim_create_augroup("ai_eval_lsp_watch", { clear = true })
  vim.api.nvim_create_autocmd({ "BufWritePre", "FileWritePre", "FileAppendPre" }, {
    group = group,
    pattern = M.patterns,
    callback = function(args)
      local path = full_path(args)
      existed[path] = vim.loop.fs_stat(path) ~= nil
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWritePost", "FileWritePost", "FileAppendPost" }, {
    group = group,
    pattern = M.patterns,
    callback = function(args)
      local path = full_path(args)
      M.report(path, existed[path] == false and CREATED or CHANGED)
      existed[path] = nil
    end,
  })
  -- Neovim noticed that a buffer's file changed or vanished outside it.
  vim.api.nvim_create_autocmd("FileChangedShellPost", {
    group = group,
    pattern = M.patterns,
    callback = function(args)
      local path = full_path(args)
      M.report(path, vim.loop.fs_stat(path) and CHANGED or DELETED)
    end,
  })
end

return M
