-- An LSP client's methods on every Neovim the plugin supports: they take `self` from 0.11 on;
-- before, they were plain functions.
local M = {}

local method_call = vim.fn.has("nvim-0.11") == 1

function M.request(client, method, params, handler, bufnr)
  if method_call then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if method_call then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stopped(client)
  if method_call then
    return client:is_stopped()
  end
  return client.is_stopped()
end

return M
