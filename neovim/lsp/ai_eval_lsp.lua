-- Neovim 0.11+: vim.lsp.enable("ai_eval_lsp") uses this configuration.
local ai_eval = require("ai_eval")
ai_eval.create_commands()
return {
  cmd = ai_eval.defaults.cmd,
  filetypes = { ai_eval.filetype },
  root_markers = ai_eval.defaults.root_markers,
  settings = ai_eval.defaults.settings,
  handlers = ai_eval.handlers,
}
